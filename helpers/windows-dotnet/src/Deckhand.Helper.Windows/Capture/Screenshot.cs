using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Helper.Windows.Ops;
using Deckhand.Helper.Windows.Uia;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Capture;

/// <summary>
/// screenshot: a window by Windows.Graphics.Capture (its own pixels, covered
/// or not), else PrintWindow(PW_RENDERFULLCONTENT); the whole screen
/// (window_id 0) by BitBlt of the screen DC. Then, in this order: secure
/// fields and the given rectangles blacked out (screen rectangles), the crop
/// to `region`, the box-filter scale to `max_width`, the PNG, written to a
/// temporary file beside `path` and renamed over it.
/// With redact_secure, every password field (UIA IsPassword) of the window
/// (for the whole screen: of every window with a known pid) is found by a
/// bounded walk first; a walk that cannot finish fails the screenshot rather
/// than return pixels that might show one.
/// </summary>
internal static class ScreenshotOps
{
    public const int SecureWalkMaxNodes = 20_000;

    public static OpOutcome Run(OpCall call)
    {
        var a = call.Args;
        long windowId = a.Long("window_id");
        string path = a.String("path");
        if (!Path.IsPathFullyQualified(path)) throw HelperError.Invalid($"path must be absolute: {path}");
        string? format = a.StringOrNull("format");
        if (format is not null && format != "png")
        {
            throw HelperError.Unsupported($"format {format} is not supported by this helper: PNG only").With("capability", "screenshot.formats");
        }
        int? maxWidth = a.LongOrNull("max_width") is long mw ? (int)Math.Min(mw, int.MaxValue) : null;
        if (maxWidth is < 16) throw HelperError.Invalid("max_width is at least 16");
        var regionArgs = a.Map("region");
        PixelRect? region = regionArgs is null ? null : RectOf(regionArgs);
        bool redactSecure = a.Bool("redact_secure", true);
        var extra = a.Maps("redact").Select(RectOf).ToList();

        BgraImage image;
        PixelRect screenRect; // what the image shows, in screen pixels, at scale 1
        string method;
        List<PixelRect> secure = new();
        if (windowId == 0)
        {
            screenRect = Win32.VirtualScreen();
            if (redactSecure) secure = SecureFieldsOfScreen(call);
            image = GdiCapture.Screen(screenRect) ?? throw Failed("BitBlt of the screen failed");
            method = "gdi-bitblt";
        }
        else
        {
            var window = Desktop.Require(windowId, null);
            if (window.Minimized) throw Failed($"window {windowId} is minimized: it has no pixels to capture").With("minimized", true);
            if (redactSecure) secure = SecureFieldsOf(call, window.Hwnd, SecureWalkMaxNodes);
            (image, screenRect, method) = CaptureWindow(window, call);
        }

        // Redaction, in screen rectangles mapped to the captured image.
        int redacted = 0;
        foreach (var r in secure.Concat(extra))
        {
            var inImage = Geometry.ScreenToImage(r, screenRect.X, screenRect.Y, image.Width, image.Height);
            if (inImage is { } ir && image.FillBlack(ir)) redacted++;
        }

        // Crop to the region (screen pixels), then scale.
        int originX = screenRect.X, originY = screenRect.Y;
        if (region is { } reg)
        {
            var overlap = reg.Intersect(new PixelRect(screenRect.X, screenRect.Y, image.Width, image.Height))
                ?? throw HelperError.Invalid("region does not overlap the captured window or screen");
            image = image.Crop(new PixelRect(overlap.X - screenRect.X, overlap.Y - screenRect.Y, overlap.Width, overlap.Height));
            originX = overlap.X;
            originY = overlap.Y;
        }
        var (w, h, scale) = Geometry.FitWidth(image.Width, image.Height, maxWidth);
        if (w != image.Width) image = image.ScaleDown(w, h);

        WriteAtomically(path, Png.Encode(image));
        return new OpOutcome(new Dictionary<string, object?>
        {
            ["path"] = path,
            ["width"] = (long)image.Width,
            ["height"] = (long)image.Height,
            ["origin"] = new Dictionary<string, object?> { ["x"] = (long)originX, ["y"] = (long)originY },
            ["scale"] = scale,
            ["method"] = method,
            ["redacted"] = (long)redacted,
            ["popups"] = 0L,
            ["format"] = "png",
        });
    }

    private static PixelRect RectOf(Args r) => new((int)r.Long("x"), (int)r.Long("y"), (int)r.Long("width"), (int)r.Long("height"));

    private static HelperError Failed(string message) => new(Protocol.Codes.ScreenshotFailed, message);

    private static (BgraImage, PixelRect, string) CaptureWindow(TopWindow window, OpCall call)
    {
        string? wgcError = null;
        try
        {
            if (WgcCapture.IsSupported())
            {
                var timeout = TimeSpan.FromMilliseconds(Math.Min(2000, call.Remaining.TotalMilliseconds / 2));
                var img = WgcCapture.Capture(window.Hwnd, timeout);
                if (img is not null)
                {
                    // The capture shows the window's visible frame: DWM's extended frame bounds.
                    var frame = Win32.FrameBounds(window.Hwnd);
                    if (img.Width != frame.Width || img.Height != frame.Height)
                    {
                        Console.Error.WriteLine($"deckhand-helper-windows: screenshot: capture {img.Width}x{img.Height} differs from the frame bounds {frame.Width}x{frame.Height}");
                    }
                    return (img, new PixelRect(frame.X, frame.Y, img.Width, img.Height), "graphics-capture");
                }
                wgcError = "no frame arrived";
            }
            else
            {
                wgcError = "GraphicsCaptureSession.IsSupported() is false";
            }
        }
        catch (Exception e) when (e is COMException or InvalidOperationException or UnauthorizedAccessException or ArgumentException or DllNotFoundException or EntryPointNotFoundException)
        {
            wgcError = e.Message;
        }
        Console.Error.WriteLine($"deckhand-helper-windows: screenshot: Windows.Graphics.Capture unavailable ({wgcError}); PrintWindow fallback");
        var printed = GdiCapture.PrintWindow(window.Hwnd) ?? throw Failed($"Windows.Graphics.Capture failed ({wgcError}) and PrintWindow failed");
        // PrintWindow renders the whole window rectangle (invisible resize borders included): keep the visible frame.
        var visible = Win32.FrameBounds(window.Hwnd);
        var inImage = Geometry.ScreenToImage(visible, printed.Rect.X, printed.Rect.Y, printed.Image.Width, printed.Image.Height);
        if (inImage is { } r && (r.Width != printed.Image.Width || r.Height != printed.Image.Height))
        {
            return (printed.Image.Crop(r), new PixelRect(printed.Rect.X + r.X, printed.Rect.Y + r.Y, r.Width, r.Height), "printwindow");
        }
        return (printed.Image, printed.Rect, "printwindow");
    }

    /// <summary>Bounds of every password field of a window; SCREENSHOT_FAILED when they cannot all be found.</summary>
    private static List<PixelRect> SecureFieldsOf(OpCall call, nint hwnd, int maxNodes)
    {
        if (!Win32.Responds(hwnd))
        {
            throw Failed($"window {hwnd} is not responding: its secure fields cannot be found, so it is not captured").With("reason", "secure-fields-unknown");
        }
        var uia = UiaContext.Get();
        var req = uia.SecureRequest();
        var found = new List<PixelRect>();
        int nodes = 0;
        try
        {
            var root = uia.WindowElement(hwnd, req);
            var stack = new Stack<IUIAutomationElement>();
            stack.Push(root);
            while (stack.Count > 0)
            {
                if (++nodes > maxNodes || call.Token.IsCancellationRequested || call.Clock.Elapsed > call.Budget * 0.6)
                {
                    throw Failed($"the search for secure fields of window {hwnd} did not finish ({nodes} elements): not captured").With("reason", "secure-fields-unknown");
                }
                var e = stack.Pop();
                if (e.get_CachedIsPassword())
                {
                    var rc = e.get_CachedBoundingRectangle();
                    var rect = rc.ToPixelRect();
                    if (!rect.IsEmpty) found.Add(rect);
                    continue; // nothing below a password field needs looking at
                }
                var children = new List<IUIAutomationElement>();
                for (var c = uia.Walker.GetFirstChildElementBuildCache(e, req); c is not null; c = uia.Walker.GetNextSiblingElementBuildCache(c, req))
                {
                    children.Add(c);
                    if (children.Count > 10_000) throw Failed("an element with more than 10000 children: secure fields unknown").With("reason", "secure-fields-unknown");
                }
                for (int i = children.Count - 1; i >= 0; i--) stack.Push(children[i]);
            }
        }
        catch (COMException e)
        {
            throw Failed($"UI Automation failed while looking for secure fields: {e.Message}").With("reason", "secure-fields-unknown").With("hresult", (long)e.HResult);
        }
        return found;
    }

    private static List<PixelRect> SecureFieldsOfScreen(OpCall call)
    {
        var all = new List<PixelRect>();
        int budget = SecureWalkMaxNodes * 2;
        foreach (var w in Desktop.TopLevel())
        {
            if (w.Pid == 0 || w.Minimized) continue;
            var rects = SecureFieldsOf(call, w.Hwnd, Math.Max(1, budget));
            all.AddRange(rects);
        }
        return all;
    }

    private static void WriteAtomically(string path, byte[] bytes)
    {
        string dir = Path.GetDirectoryName(path) ?? throw HelperError.Invalid($"path has no directory: {path}");
        string tmp = Path.Combine(dir, $".{Path.GetFileName(path)}.{Environment.ProcessId}.{Guid.NewGuid():N}.tmp");
        try
        {
            File.WriteAllBytes(tmp, bytes);
            File.Move(tmp, path, overwrite: true);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            try
            {
                File.Delete(tmp);
            }
            catch (IOException)
            {
            }
            throw Failed($"cannot write {path}: {e.Message}");
        }
    }
}
