using Deckhand.Helper.Windows.Capture;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Helper.Windows.Uia;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>
/// permissions: what this process can do on this desktop. Windows has no
/// accessibility or capture consent for desktop apps; what limits a helper
/// is where it runs (an interactive session, the input desktop rather than
/// the secure desktop or a locked screen) and its integrity level: UIPI
/// stops a non-elevated process from driving, hooking or reading elevated
/// windows, silently for SendInput.
/// </summary>
internal static class PermissionOps
{
    public static OpOutcome Run(OpCall call)
    {
        var checks = new List<object?>
        {
            Display(),
            Accessibility(),
            Elevation(out bool elevated, out bool uiAccess),
            InputInjection(elevated, uiAccess),
            ScreenCapture("screen_capture", "graphics_capture"),
            ScreenCapture("screen_capture_occluded", "graphics_capture_window"),
            InputMonitoring(),
        };
        return new OpOutcome(new Dictionary<string, object?> { ["checks"] = checks });
    }

    private static Dictionary<string, object?> Check(string id, string nativeId, string status, string detail, string remediation, bool? advisory = null)
    {
        var m = new Dictionary<string, object?>
        {
            ["id"] = id,
            ["native_id"] = nativeId,
            ["status"] = status,
            ["detail"] = detail,
            ["remediation"] = remediation,
        };
        if (advisory is not null) m["advisory"] = advisory;
        return m;
    }

    private static unsafe Dictionary<string, object?> Display()
    {
        Win32.ProcessIdToSessionId((uint)Environment.ProcessId, out uint session);
        nint desk = Win32.OpenInputDesktop(0, false, Win32.DESKTOP_READOBJECTS);
        if (desk == 0)
        {
            return Check("display", "input_desktop", "denied",
                $"session {session} cannot open the input desktop (error {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}): it is not interactive, the screen is locked, or the secure desktop (UAC, Ctrl+Alt+Del) is showing",
                "run the helper in the logged-on user's interactive session (not a service, not session 0) with the screen unlocked");
        }
        try
        {
            char* name = stackalloc char[64];
            string desktop = Win32.GetUserObjectInformation(desk, Win32.UOI_NAME, name, 128, out _) ? new string(name) : "?";
            bool isDefault = string.Equals(desktop, "Default", StringComparison.OrdinalIgnoreCase);
            return Check("display", "input_desktop", isDefault ? "granted" : "denied",
                $"session {session}, input desktop '{desktop}'",
                isDefault ? "" : "the input desktop is not the user's (Winlogon or a secure desktop is showing): unlock the screen or dismiss the prompt");
        }
        finally
        {
            Win32.CloseDesktop(desk);
        }
    }

    private static Dictionary<string, object?> Accessibility()
    {
        try
        {
            var uia = UiaContext.Get();
            var root = uia.Automation.GetRootElement();
            _ = root.get_CurrentControlType();
            return Check("accessibility", "uia_client", "granted",
                $"CUIAutomation8 answers (connection timeout {UiaContext.ConnectionTimeoutMs} ms, transaction timeout {UiaContext.TransactionTimeoutMs} ms)", "");
        }
        catch (Exception e)
        {
            return Check("accessibility", "uia_client", "denied", $"UI Automation is not usable: {e.Message}",
                "UI Automation is part of Windows: make sure UIAutomationCore.dll is present and the helper runs on the interactive desktop");
        }
    }

    private static unsafe Dictionary<string, object?> Elevation(out bool elevated, out bool uiAccess)
    {
        elevated = false;
        uiAccess = false;
        if (!Win32.OpenProcessToken(Win32.GetCurrentProcess(), Win32.TOKEN_QUERY, out nint token))
        {
            return Check("elevation", "token_elevation", "unknown", "the process token cannot be opened", "");
        }
        try
        {
            uint e = 0, u = 0;
            elevated = Win32.GetTokenInformation(token, Win32.TokenElevation, &e, sizeof(uint), out _) && e != 0;
            uiAccess = Win32.GetTokenInformation(token, Win32.TokenUIAccess, &u, sizeof(uint), out _) && u != 0;
        }
        finally
        {
            Win32.CloseHandle(token);
        }
        return Check("elevation", "token_elevation", elevated || uiAccess ? "granted" : "denied",
            elevated ? "the helper runs elevated (high integrity): it can drive elevated and non-elevated windows"
                : uiAccess ? "the helper has UIAccess: it can drive windows of any integrity"
                : "the helper runs at medium integrity: it cannot read, capture input from or send input to elevated windows (UIPI); SendInput to them is dropped silently",
            elevated || uiAccess ? "" : "to drive an elevated app, run deckhand (and so the helper) elevated, or install a signed UIAccess build under Program Files",
            advisory: true);
    }

    private static Dictionary<string, object?> InputInjection(bool elevated, bool uiAccess)
    {
        return Check("input_injection", "sendinput", "granted",
            elevated || uiAccess ? "SendInput reaches every window of the desktop"
                : "SendInput reaches windows of the same or lower integrity; elevated windows drop it without an error",
            elevated || uiAccess ? "" : "for elevated targets, run the helper elevated (see elevation)");
    }

    private static Dictionary<string, object?> ScreenCapture(string id, string nativeId)
    {
        bool supported;
        try
        {
            supported = WgcCapture.IsSupported();
        }
        catch (Exception)
        {
            supported = false;
        }
        return supported
            ? Check(id, nativeId, "granted", "Windows.Graphics.Capture is supported (a window's own pixels, covered or not; the capture border may show)", "")
            : Check(id, nativeId, id == "screen_capture" ? "granted" : "unknown",
                "Windows.Graphics.Capture is not supported here: screenshots fall back to PrintWindow(PW_RENDERFULLCONTENT) and GDI",
                "Windows 10 1903 or later with a GPU or WARP device gives Windows.Graphics.Capture");
    }

    private static Dictionary<string, object?> InputMonitoring()
    {
        return Check("input_monitoring", "low_level_hooks", "granted",
            "low-level keyboard and mouse hooks need no grant; they do not see input to elevated windows from a non-elevated helper",
            "");
    }
}
