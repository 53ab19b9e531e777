using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>A top-level window as list_windows reports it.</summary>
internal sealed record TopWindow(nint Hwnd, uint Pid, string Title, string ClassName, PixelRect Bounds, bool Minimized, bool Popup);

/// <summary>
/// Top-level windows in z-order. EnumWindows documents no order, so the
/// stack is walked from GetTopWindow(NULL) down with GW_HWNDNEXT (top to
/// bottom), then reversed: the wire's z_index 0 is the bottom. Skipped:
/// invisible windows, cloaked ones (DWMWA_CLOAKED: UWP frames of suspended
/// apps, windows on other virtual desktops), the desktop itself
/// (Progman/WorkerW), tool windows that are not popups, empty ones.
/// </summary>
internal static class Desktop
{
    private static readonly HashSet<string> PopupClasses = new(StringComparer.Ordinal)
    {
        "#32768", // a menu
        "ComboLBox", // a combo box's list
        "tooltips_class32",
        "Xaml_WindowedPopupClass",
    };

    private static readonly HashSet<string> DesktopClasses = new(StringComparer.Ordinal) { "Progman", "WorkerW" };

    public const int MaxWindows = 4096;

    /// <summary>A menu, a combo box's list, a tooltip: a popup of its app, never a window of its own.</summary>
    public static bool IsPopup(nint hwnd) => PopupClasses.Contains(Win32.ClassName(hwnd));

    public static List<TopWindow> TopLevel()
    {
        var topToBottom = new List<TopWindow>();
        nint h = Win32.GetTopWindow(0);
        for (int i = 0; h != 0 && i < 65536 && topToBottom.Count < MaxWindows; i++, h = Win32.GetWindow(h, Win32.GW_HWNDNEXT))
        {
            if (!Win32.IsWindowVisible(h) || Win32.Cloaked(h)) continue;
            string cls = Win32.ClassName(h);
            if (DesktopClasses.Contains(cls)) continue;
            long ex = Win32.GetWindowLongPtr(h, Win32.GWL_EXSTYLE);
            bool popup = PopupClasses.Contains(cls);
            if (!popup && (ex & Win32.WS_EX_TOOLWINDOW) != 0 && (ex & Win32.WS_EX_APPWINDOW) == 0 && Win32.WindowText(h).Length == 0) continue;
            bool minimized = Win32.IsIconic(h);
            var bounds = Win32.FrameBounds(h);
            if (!minimized && bounds.IsEmpty) continue;
            topToBottom.Add(new TopWindow(h, Win32.AppProcessOf(h), Win32.WindowText(h), cls, bounds, minimized, popup));
        }
        topToBottom.Reverse();
        return topToBottom;
    }

    public static Dictionary<string, object?> ToWire(TopWindow w, int z) => new()
    {
        ["window_id"] = (long)w.Hwnd,
        ["z_index"] = (long)z,
        ["title"] = w.Title,
        ["bounds"] = w.Bounds.ToWire(),
        ["minimized"] = w.Minimized,
        ["pid"] = w.Pid == 0 ? null : (long)w.Pid,
        ["popup"] = w.Popup,
    };

    /// <summary>The top-level window of an id, checked to belong to pid; WINDOW_NOT_FOUND otherwise.</summary>
    public static TopWindow Require(long windowId, long? pid)
    {
        if (windowId == 0) throw HelperError.Invalid("window_id 0 is the root: it has no tree");
        nint h = (nint)windowId;
        if (!Win32.IsWindow(h) || Win32.GetAncestor(h, Win32.GA_ROOT) != h)
        {
            throw new HelperError(Protocol.Codes.WindowNotFound, $"window {windowId} is not a top-level window").With("window_id", windowId);
        }
        uint owner = Win32.AppProcessOf(h);
        uint raw = Win32.ProcessOf(h);
        if (pid is not null && owner != pid && raw != pid)
        {
            throw new HelperError(Protocol.Codes.WindowNotFound, $"window {windowId} belongs to pid {owner}, not {pid}")
                .With("window_id", windowId).With("owner_pid", (long)owner);
        }
        return new TopWindow(h, owner, Win32.WindowText(h), Win32.ClassName(h), Win32.FrameBounds(h), Win32.IsIconic(h), false);
    }
}

/// <summary>list_windows and list_apps.</summary>
internal static class DesktopOps
{
    public static OpOutcome ListWindows(OpCall call)
    {
        long? pid = call.Args.LongOrNull("pid");
        var all = Desktop.TopLevel();
        var windows = new List<object?>();
        for (int z = 0; z < all.Count; z++)
        {
            if (pid is null || all[z].Pid == pid) windows.Add(Desktop.ToWire(all[z], z));
        }
        return new OpOutcome(new Dictionary<string, object?> { ["windows"] = windows });
    }

    public static OpOutcome ListApps(OpCall call)
    {
        var byPid = Desktop.TopLevel().Where(w => w.Pid != 0 && !w.Popup).GroupBy(w => w.Pid);
        var apps = new List<object?>();
        foreach (var group in byPid)
        {
            call.Token.ThrowIfCancellationRequested();
            var p = ProcessInfo.Read(group.Key);
            apps.Add(new Dictionary<string, object?>
            {
                ["pid"] = (long)group.Key,
                ["name"] = p.Name,
                ["executable"] = p.Executable,
                ["process_name"] = p.ProcessName,
                ["bundle_id"] = p.PackageFamily,
                ["desktop_id"] = p.Aumid,
                // Every window is on UIA (MSAA and Win32 proxies cover the
                // ones without a native provider).
                ["accessible"] = true,
                ["start_time"] = p.StartTime,
                ["window_count"] = (long)group.Count(),
                ["toolkit"] = Toolkit(group.Select(w => w.ClassName)),
            });
        }
        return new OpOutcome(new Dictionary<string, object?> { ["apps"] = apps });
    }

    /// <summary>The UI toolkit a window class names, when it is one deckhand knows.</summary>
    public static string? Toolkit(IEnumerable<string> classes)
    {
        foreach (var c in classes)
        {
            if (c.StartsWith("Chrome_WidgetWin_", StringComparison.Ordinal)) return "chromium";
            if (c == "MozillaWindowClass") return "firefox";
            if (c.StartsWith("Qt5", StringComparison.Ordinal)) return "qt5";
            if (c.StartsWith("Qt6", StringComparison.Ordinal)) return "qt6";
            if (c.StartsWith("SAL", StringComparison.Ordinal)) return "libreoffice";
        }
        return null;
    }
}

/// <summary>Process identity: image path, start time, package identity.</summary>
internal sealed record ProcessInfo(string Name, string? Executable, string? ProcessName, long? StartTime, string? PackageFamily, string? Aumid)
{
    public static unsafe ProcessInfo Read(uint pid)
    {
        nint h = Win32.OpenProcess(Win32.PROCESS_QUERY_LIMITED_INFORMATION, false, pid);
        if (h == 0)
        {
            // Another user's or a protected process: identity unreadable, said so with nulls.
            return new ProcessInfo($"pid {pid}", null, null, null, null, null);
        }
        try
        {
            string? exe = null;
            char* buf = stackalloc char[1024];
            uint len = 1024;
            if (Win32.QueryFullProcessImageName(h, 0, buf, ref len)) exe = new string(buf, 0, (int)len);
            long? start = Win32.GetProcessTimes(h, out var created, out _, out _, out _) ? created.Ticks : null;
            string? family = ReadString(h, static (nint p, ref uint l, char* b) => Win32.GetPackageFamilyName(p, ref l, b));
            string? aumid = ReadString(h, static (nint p, ref uint l, char* b) => Win32.GetApplicationUserModelId(p, ref l, b));
            string? image = exe is null ? null : Path.GetFileName(exe);
            string name = exe is null ? $"pid {pid}" : Path.GetFileNameWithoutExtension(exe);
            return new ProcessInfo(name, exe, image, start, family, aumid);
        }
        finally
        {
            Win32.CloseHandle(h);
        }
    }

    private unsafe delegate int StringGetter(nint process, ref uint length, char* buffer);

    /// <summary>An appmodel string (package family, AUMID); null when the process has no package or app identity.</summary>
    private static unsafe string? ReadString(nint process, StringGetter get)
    {
        uint len = 0;
        int rc = get(process, ref len, null);
        if (rc != Win32.ERROR_INSUFFICIENT_BUFFER || len == 0 || len > 4096) return null;
        char* buf = stackalloc char[(int)len];
        rc = get(process, ref len, buf);
        if (rc != 0) return null;
        return new string(buf, 0, (int)Math.Max(0, len - 1));
    }
}
