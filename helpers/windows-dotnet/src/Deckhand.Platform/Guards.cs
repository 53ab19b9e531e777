namespace Deckhand.Platform;

/// <summary>
/// The decisions of input's two guards, apart from the Win32 calls that
/// gather their facts (Ops/Input.cs), so they are unit-tested.
/// </summary>
public static class Guards
{
    /// <summary>
    /// The pointer guard: may a pointer event go to the top-level window
    /// <paramref name="top"/> (0: no window at the point)? Yes when it is one
    /// of the guard's windows, or a popup (menu, combo list, tooltip) of the
    /// guard's process (<paramref name="appPid"/> is the app's pid, a UWP
    /// frame's CoreWindow's; <paramref name="ownerPid"/> the window's own).
    /// </summary>
    public static bool PointerAccepts(long top, bool popup, uint appPid, uint ownerPid, uint guardPid, IReadOnlySet<long> windows)
    {
        if (top == 0) return false;
        if (windows.Contains(top)) return true;
        return popup && (appPid == guardPid || ownerPid == guardPid);
    }

    /// <summary>
    /// The focus guard: is the foreground top-level window
    /// <paramref name="foreground"/> the target, or a window the target owns
    /// (a dialog, GW_OWNER: Windows' WM_TRANSIENT_FOR) in the same process?
    /// </summary>
    public static bool FocusAccepts(long foreground, uint foregroundPid, long owner, long target, uint targetPid)
    {
        if (foreground == 0) return false;
        if (foreground == target) return true;
        return foregroundPid == targetPid && owner == target;
    }
}
