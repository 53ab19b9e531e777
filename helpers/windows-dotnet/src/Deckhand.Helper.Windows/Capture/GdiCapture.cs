using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;

namespace Deckhand.Helper.Windows.Capture;

/// <summary>
/// GDI captures: PrintWindow with PW_RENDERFULLCONTENT (Windows 8.1+; without
/// it DirectComposition, Chromium and UWP windows come out black), the
/// fallback for a window when Windows.Graphics.Capture is unavailable or
/// gives no frame; and BitBlt of the screen DC for the whole screen.
/// </summary>
internal static unsafe class GdiCapture
{
    /// <summary>The window's full rectangle (GetWindowRect) rendered by PrintWindow; null when it fails.</summary>
    public static (BgraImage Image, PixelRect Rect)? PrintWindow(nint hwnd)
    {
        if (!Win32.GetWindowRect(hwnd, out var r)) return null;
        var rect = r.ToPixelRect();
        if (rect.IsEmpty) return null;
        var img = Render(rect.Width, rect.Height, dc => Win32.PrintWindow(hwnd, dc, Win32.PW_RENDERFULLCONTENT));
        return img is null ? null : (img, rect);
    }

    /// <summary>A rectangle of the screen as it is shown (what is on top), by BitBlt from the screen DC.</summary>
    public static BgraImage? Screen(PixelRect rect)
    {
        nint screen = Win32.GetDC(0);
        if (screen == 0) return null;
        try
        {
            return Render(rect.Width, rect.Height, dc => Win32.BitBlt(dc, 0, 0, rect.Width, rect.Height, screen, rect.X, rect.Y, Win32.SRCCOPY | Win32.CAPTUREBLT));
        }
        finally
        {
            Win32.ReleaseDC(0, screen);
        }
    }

    private static BgraImage? Render(int width, int height, Func<nint, bool> draw)
    {
        nint screen = Win32.GetDC(0);
        nint mem = Win32.CreateCompatibleDC(screen);
        var header = new BITMAPINFOHEADER
        {
            biSize = (uint)sizeof(BITMAPINFOHEADER),
            biWidth = width,
            biHeight = -height, // top-down rows
            biPlanes = 1,
            biBitCount = 32,
            biCompression = 0, // BI_RGB
        };
        nint bitmap = Win32.CreateDIBSection(screen, &header, 0, out nint bits, 0, 0);
        try
        {
            if (bitmap == 0 || bits == 0) return null;
            nint old = Win32.SelectObject(mem, bitmap);
            bool ok = draw(mem);
            Win32.SelectObject(mem, old);
            if (!ok) return null;
            var span = new ReadOnlySpan<byte>((void*)bits, checked(width * height * 4));
            var img = BgraImage.FromRows(span, width, height, width * 4);
            img.Opaque();
            return img;
        }
        finally
        {
            if (bitmap != 0) Win32.DeleteObject(bitmap);
            Win32.DeleteDC(mem);
            Win32.ReleaseDC(0, screen);
        }
    }
}
