namespace Deckhand.Platform;

/// <summary>A rectangle in screen pixels (the wire's Rect: x, y, width, height).</summary>
public readonly record struct PixelRect(int X, int Y, int Width, int Height)
{
    public int Right => X + Width;

    public int Bottom => Y + Height;

    public bool IsEmpty => Width <= 0 || Height <= 0;

    public static PixelRect FromLtrb(int left, int top, int right, int bottom) => new(left, top, Math.Max(0, right - left), Math.Max(0, bottom - top));

    /// <summary>
    /// UIA's BoundingRectangle (left, top, width, height as doubles, physical
    /// pixels for a per-monitor-aware client): rounded outward so the rect
    /// covers every pixel the element touches (redaction must not leave a
    /// sliver). An empty UIA rect (0,0,0,0: no bounds) is null.
    /// </summary>
    public static PixelRect? FromUia(double left, double top, double width, double height)
    {
        if (double.IsNaN(left) || double.IsNaN(top) || double.IsInfinity(width) || width <= 0 || height <= 0)
        {
            return null;
        }
        int l = (int)Math.Floor(left), t = (int)Math.Floor(top);
        int r = (int)Math.Ceiling(left + width), b = (int)Math.Ceiling(top + height);
        return FromLtrb(l, t, r, b);
    }

    public PixelRect? Intersect(PixelRect o)
    {
        int l = Math.Max(X, o.X), t = Math.Max(Y, o.Y), r = Math.Min(Right, o.Right), b = Math.Min(Bottom, o.Bottom);
        return r > l && b > t ? FromLtrb(l, t, r, b) : null;
    }

    public bool Contains(int x, int y) => x >= X && y >= Y && x < Right && y < Bottom;

    public Dictionary<string, object?> ToWire() => new() { ["x"] = (long)X, ["y"] = (long)Y, ["width"] = (long)Width, ["height"] = (long)Height };
}

/// <summary>Coordinate arithmetic the helper needs: DPI scaling, SendInput's absolute space, screenshot scaling.</summary>
public static class Geometry
{
    public const int DefaultDpi = 96;

    /// <summary>
    /// A logical (DPI-unaware, 96-dpi) length at <paramref name="dpi"/> in
    /// physical pixels. The helper declares itself per-monitor DPI aware (v2),
    /// so UIA, DWM and GetCursorPos all answer physical pixels; this is for
    /// values that come from a DPI-unaware source (GetWindowRect of a
    /// virtualised window, GetDpiForWindow-scaled metrics).
    /// </summary>
    public static int LogicalToPhysical(int logical, int dpi) => (int)Math.Round(logical * (double)dpi / DefaultDpi, MidpointRounding.AwayFromZero);

    public static int PhysicalToLogical(int physical, int dpi) => (int)Math.Round(physical * (double)DefaultDpi / dpi, MidpointRounding.AwayFromZero);

    public static PixelRect LogicalToPhysical(PixelRect r, int dpi) => new(LogicalToPhysical(r.X, dpi), LogicalToPhysical(r.Y, dpi), LogicalToPhysical(r.Width, dpi), LogicalToPhysical(r.Height, dpi));

    /// <summary>
    /// SendInput's MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK coordinates
    /// of a screen pixel: 0..65535 across the virtual desktop
    /// (SM_XVIRTUALSCREEN.. origin, SM_CXVIRTUALSCREEN size). Pixel p maps to
    /// the value whose inverse (v * (size - 1) / 65535) rounds back to p.
    /// </summary>
    public static (int Dx, int Dy) ToAbsolute(int x, int y, PixelRect virtualScreen)
    {
        static int Axis(int p, int origin, int size)
        {
            if (size <= 1) return 0;
            int rel = Math.Clamp(p - origin, 0, size - 1);
            return (int)Math.Round(rel * 65535.0 / (size - 1), MidpointRounding.AwayFromZero);
        }
        return (Axis(x, virtualScreen.X, virtualScreen.Width), Axis(y, virtualScreen.Y, virtualScreen.Height));
    }

    /// <summary>The inverse of <see cref="ToAbsolute"/> (for tests and diagnostics).</summary>
    public static (int X, int Y) FromAbsolute(int dx, int dy, PixelRect virtualScreen)
    {
        static int Axis(int v, int origin, int size) => size <= 1 ? origin : origin + (int)Math.Round(v * (size - 1) / 65535.0, MidpointRounding.AwayFromZero);
        return (Axis(dx, virtualScreen.X, virtualScreen.Width), Axis(dy, virtualScreen.Y, virtualScreen.Height));
    }

    /// <summary>
    /// The size of an image <paramref name="width"/> wide scaled down (never
    /// up, aspect kept) to at most <paramref name="maxWidth"/>, and the scale
    /// (image pixels per screen pixel) the result reports.
    /// </summary>
    public static (int Width, int Height, double Scale) FitWidth(int width, int height, int? maxWidth)
    {
        if (maxWidth is null || width <= maxWidth.Value)
        {
            return (width, height, 1.0);
        }
        double scale = maxWidth.Value / (double)width;
        int h = Math.Max(1, (int)Math.Round(height * scale, MidpointRounding.AwayFromZero));
        return (maxWidth.Value, h, scale);
    }

    /// <summary>A screen rectangle in the pixels of an image whose top-left pixel shows <paramref name="origin"/> at scale 1.</summary>
    public static PixelRect? ScreenToImage(PixelRect screen, int originX, int originY, int imageWidth, int imageHeight)
    {
        var moved = new PixelRect(screen.X - originX, screen.Y - originY, screen.Width, screen.Height);
        return moved.Intersect(new PixelRect(0, 0, imageWidth, imageHeight));
    }
}
