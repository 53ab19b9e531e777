using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>
/// input: real pointer and keyboard input through SendInput (route
/// foreground_input), one op at a time. Every key and button pressed is
/// released before the answer whatever happened, the pointer is put back
/// when asked (GetCursorPos before, SetCursorPos after), keys go only to the
/// window the focus guard confirms, checked before every keyboard step, every
/// tap repeat and every chunk of at most 8 typed characters, and pointer
/// events only over the windows the pointer guard allows. Every injected
/// event carries <see cref="NativeInput.Signature"/> in dwExtraInfo.
/// UIPI: input aimed at an elevated window from a non-elevated helper is
/// dropped by Windows without an error; the permissions op says so.
/// </summary>
internal sealed class InputRun
{
    private readonly OpCall _call;
    private readonly List<HeldKey> _keys = new();
    private readonly List<(uint Up, uint Data)> _buttons = new();
    private readonly Focus? _focus;
    private bool _firstCheck = true;
    private bool _moved;
    private bool _sent;
    private int _steps;
    private int _chars;
    private nint? _focusWindow;

    private readonly record struct HeldKey(bool Unicode, ushort Code, bool Extended);

    private sealed record Focus(nint Window, uint Pid, bool Activate);

    private sealed record PointerGuard(uint Pid, HashSet<long> Windows);

    private readonly PointerGuard? _guard;

    private InputRun(OpCall call, Focus? focus, PointerGuard? guard)
    {
        _call = call;
        _focus = focus;
        _guard = guard;
    }

    public static OpOutcome Run(OpCall call)
    {
        var a = call.Args;
        IReadOnlyList<Args> steps;
        Focus? focus;
        PointerGuard? guard;
        bool restore;
        try
        {
            steps = a.Maps("steps");
            foreach (var step in steps) Validate(step);
            var f = a.Map("focus");
            focus = f is null ? null : new Focus((nint)f.Long("window_id"), (uint)f.Long("pid"), f.Bool("activate"));
            var g = a.Map("pointer_guard");
            guard = g is null ? null : new PointerGuard((uint)g.Long("pid"), g.Longs("windows").ToHashSet());
            restore = a.Bool("restore_pointer");
        }
        catch (HelperError e) when (e.Receipt is null)
        {
            throw e.WithReceipt(Receipt.Foreground(Delivery.NotDispatched));
        }
        return new InputRun(call, focus, guard).Execute(steps, restore);
    }

    private static void Validate(Args step)
    {
        try
        {
            string kind = step.String("kind");
            switch (kind)
            {
                case "move":
                    step.Long("x");
                    step.Long("y");
                    break;
                case "button":
                    Button(step.String("button"));
                    break;
                case "click":
                    step.Long("x");
                    step.Long("y");
                    Button(step.String("button"));
                    if (step.Int("count", 1) is < 1 or > 3) throw HelperError.Invalid("click count is 1 to 3");
                    foreach (var m in step.Strings("modifiers")) ResolveKey(m);
                    break;
                case "key":
                    ResolveKey(step.String("key"));
                    break;
                case "tap":
                    foreach (var k in step.Strings("keys")) ResolveKey(k);
                    if (step.Int("repeat", 1) is < 1 or > 100) throw HelperError.Invalid("tap repeat is 1 to 100");
                    break;
                case "type":
                    step.String("text");
                    break;
                case "scroll":
                    break;
                case "wait":
                    if (step.Long("ms") is < 0 or > 10_000) throw HelperError.Invalid("wait ms is 0 to 10000");
                    break;
                default:
                    throw HelperError.Invalid($"unknown step kind '{kind}'");
            }
        }
        catch (HelperError e)
        {
            throw e.WithReceipt(Receipt.Foreground(Delivery.NotDispatched));
        }
    }

    private static (uint Down, uint Up, uint Data) Button(string name) =>
        NativeInput.Button(name) ?? throw HelperError.Invalid($"unknown button '{name}'");

    private static HeldKey ResolveKey(string name)
    {
        if (KeyNames.Lookup(name) is { } vk) return new HeldKey(false, vk.Vk, vk.Extended);
        if (KeyNames.CharacterOf(name) is { } c)
        {
            // The layout's key for the character when it needs no modifier; else the character itself (KEYEVENTF_UNICODE).
            short scan = Win32.VkKeyScanEx(c, Win32.GetKeyboardLayout(0));
            if (scan != -1 && (scan >> 8 & 0xFF) == 0) return new HeldKey(false, (ushort)(scan & 0xFF), false);
            return new HeldKey(true, c, false);
        }
        throw HelperError.Invalid($"unknown key name '{name}'").With("key", name);
    }

    private OpOutcome Execute(IReadOnlyList<Args> steps, bool restore)
    {
        Win32.GetCursorPos(out var origin);
        HelperError? failure = null;
        try
        {
            foreach (var step in steps)
            {
                Checkpoint();
                RunStep(step);
                _steps++;
            }
        }
        catch (HelperError e)
        {
            failure = e;
        }
        finally
        {
            ReleaseAll();
        }
        bool? restored = null;
        if (_moved)
        {
            restored = restore && Win32.SetCursorPos(origin.X, origin.Y);
        }
        var delivery = failure is null ? Delivery.Submitted : _sent ? Delivery.Partial : Delivery.NotDispatched;
        var receipt = new Receipt(delivery, Route.ForegroundInput, true, true, restored);
        if (failure is not null)
        {
            failure.With("steps_completed", (long)_steps).With("chars_sent", (long)_chars);
            throw failure.WithReceipt(receipt);
        }
        return new OpOutcome(new Dictionary<string, object?>
        {
            ["steps_completed"] = (long)_steps,
            ["chars_sent"] = (long)_chars,
            ["focus_window"] = _focusWindow is { } w ? (long)w : null,
        }, receipt);
    }

    /// <summary>Between steps and within waits: a cancel or the deadline stops the run.</summary>
    private void Checkpoint()
    {
        if (_call.Cancelled)
        {
            throw new HelperError(Protocol.Codes.ActionFailed, "cancelled").With("cancelled", true);
        }
        if (_call.Expired)
        {
            throw new HelperError(Protocol.Codes.Timeout, "the deadline passed between steps");
        }
    }

    private void Sleep(int ms)
    {
        var until = _call.Clock.Elapsed + TimeSpan.FromMilliseconds(ms);
        while (_call.Clock.Elapsed < until)
        {
            Checkpoint();
            Thread.Sleep(Math.Max(1, Math.Min(10, (int)(until - _call.Clock.Elapsed).TotalMilliseconds)));
        }
    }

    private void RunStep(Args step)
    {
        switch (step.String("kind"))
        {
            case "move":
                MoveTo((int)step.Long("x"), (int)step.Long("y"));
                break;
            case "button":
                {
                    var (down, up, data) = Button(step.String("button"));
                    CheckPointerHere();
                    if (step.Bool("down"))
                    {
                        Send(NativeInput.Mouse(0, 0, data, down));
                        _buttons.Add((up, data));
                    }
                    else
                    {
                        Send(NativeInput.Mouse(0, 0, data, up));
                        _buttons.Remove((up, data));
                    }
                    break;
                }
            case "click":
                Click(step);
                break;
            case "key":
                {
                    CheckFocus();
                    var key = ResolveKey(step.String("key"));
                    if (step.Bool("down"))
                    {
                        Press(key);
                    }
                    else
                    {
                        Release(key);
                    }
                    break;
                }
            case "tap":
                {
                    var keys = step.Strings("keys").Select(ResolveKey).ToList();
                    int repeat = step.Int("repeat", 1);
                    for (int i = 0; i < repeat; i++)
                    {
                        Checkpoint();
                        CheckFocus();
                        foreach (var k in keys) Press(k);
                        for (int j = keys.Count - 1; j >= 0; j--) Release(keys[j]);
                    }
                    break;
                }
            case "type":
                foreach (var chunk in NativeInput.Chunks(step.String("text"), 8))
                {
                    Checkpoint();
                    CheckFocus();
                    TypeChunk(chunk);
                    _chars += NativeInput.CountChars(chunk);
                }
                break;
            case "scroll":
                {
                    long? x = step.LongOrNull("x"), y = step.LongOrNull("y");
                    if (x is not null && y is not null) MoveTo((int)x, (int)y);
                    var wheel = NativeInput.Wheel(step.Int("dx", 0), step.Int("dy", 0));
                    if (wheel.Count > 0)
                    {
                        CheckPointerHere();
                        Send(wheel.ToArray());
                    }
                    break;
                }
            case "wait":
                Sleep((int)step.Long("ms"));
                break;
        }
    }

    private void Click(Args step)
    {
        var modifiers = step.Strings("modifiers").Select(ResolveKey).ToList();
        var (down, up, data) = Button(step.String("button"));
        int count = step.Int("count", 1);
        MoveTo((int)step.Long("x"), (int)step.Long("y"));
        if (modifiers.Count > 0) CheckFocus();
        CheckPointerHere();
        foreach (var m in modifiers) Press(m);
        var events = new List<INPUT>();
        for (int i = 0; i < count; i++)
        {
            events.Add(NativeInput.Mouse(0, 0, data, down));
            events.Add(NativeInput.Mouse(0, 0, data, up));
        }
        Send(events.ToArray());
        for (int j = modifiers.Count - 1; j >= 0; j--) Release(modifiers[j]);
    }

    private void MoveTo(int x, int y)
    {
        CheckPointer(x, y);
        var (dx, dy) = Geometry.ToAbsolute(x, y, Win32.VirtualScreen());
        _moved = true;
        Send(NativeInput.MoveAbsolute(dx, dy));
    }

    private void TypeChunk(string chunk)
    {
        var events = new List<INPUT>();
        foreach (char c in chunk)
        {
            if (c == '\n' || c == '\r')
            {
                if (c == '\r') continue; // "\r\n" is one Return
                events.Add(NativeInput.Key(KeyNames.VkReturn, false, false));
                events.Add(NativeInput.Key(KeyNames.VkReturn, false, true));
            }
            else if (c == '\t')
            {
                events.Add(NativeInput.Key(KeyNames.VkTab, false, false));
                events.Add(NativeInput.Key(KeyNames.VkTab, false, true));
            }
            else
            {
                events.Add(NativeInput.Unicode(c, false));
                events.Add(NativeInput.Unicode(c, true));
            }
        }
        if (events.Count > 0) Send(events.ToArray());
    }

    private static INPUT KeyEvent(HeldKey k, bool up) => k.Unicode ? NativeInput.Unicode((char)k.Code, up) : NativeInput.Key(k.Code, k.Extended, up);

    private void Press(HeldKey k)
    {
        Send(KeyEvent(k, up: false));
        _keys.Add(k);
    }

    private void Release(HeldKey k)
    {
        Send(KeyEvent(k, up: true));
        _keys.Remove(k);
    }

    private void ReleaseAll()
    {
        for (int i = _keys.Count - 1; i >= 0; i--)
        {
            TrySend(KeyEvent(_keys[i], up: true));
        }
        _keys.Clear();
        for (int i = _buttons.Count - 1; i >= 0; i--)
        {
            TrySend(NativeInput.Mouse(0, 0, _buttons[i].Data, _buttons[i].Up));
        }
        _buttons.Clear();
    }

    private unsafe void Send(params INPUT[] events)
    {
        uint n;
        fixed (INPUT* p = events)
        {
            n = Win32.SendInput((uint)events.Length, p, sizeof(INPUT));
        }
        if (n > 0) _sent = true;
        if (n != events.Length)
        {
            throw new HelperError(Protocol.Codes.ActionFailed,
                    $"SendInput inserted {n} of {events.Length} events (error {System.Runtime.InteropServices.Marshal.GetLastPInvokeError()}): input is blocked (another desktop, a secure screen, or BlockInput)")
                .With("inserted", (long)n);
        }
    }

    private unsafe void TrySend(INPUT e)
    {
        Win32.SendInput(1, &e, sizeof(INPUT));
    }

    // ---- the pointer guard (input.pointer_guard)

    /// <summary>The guard at the pointer's position now (a button or wheel event without a point of its own).</summary>
    private void CheckPointerHere()
    {
        if (_guard is null) return;
        Win32.GetCursorPos(out var p);
        CheckPointer(p.X, p.Y);
    }

    /// <summary>
    /// Before a pointer event at (x, y): the top-level window there
    /// (WindowFromPoint, then GA_ROOT: a title bar counts as its window) must
    /// be one of the guard's windows, or a popup (menu, combo list, tooltip)
    /// of the guard's pid. Anything else, no window included, is
    /// POLICY_DENIED "point-outside-target"; the caller releases what is held.
    /// The check and the event are two calls: a window raised in between
    /// still gets that one event.
    /// </summary>
    private void CheckPointer(int x, int y)
    {
        if (_guard is null) return;
        nint hit = Win32.WindowFromPoint(new POINT { X = x, Y = y });
        nint top = hit == 0 ? 0 : Win32.GetAncestor(hit, Win32.GA_ROOT);
        uint pid = top == 0 ? 0 : Win32.AppProcessOf(top);
        bool popup = top != 0 && Desktop.IsPopup(top);
        if (Guards.PointerAccepts(top, popup, pid, top == 0 ? 0 : Win32.ProcessOf(top), _guard.Pid, _guard.Windows))
        {
            return;
        }
        throw new HelperError(Protocol.Codes.PolicyDenied, $"the point ({x}, {y}) is over {(top == 0 ? "no window" : $"window {(long)top}")}, not the target's")
            .With("reason", "point-outside-target")
            .With("x", (long)x)
            .With("y", (long)y)
            .With("window_id", (long)top)
            .With("pid", top == 0 ? -1L : (long)pid);
    }

    // ---- the focus guard (input.focus)

    private (nint Window, uint Pid) Foreground()
    {
        nint fg = Win32.GetForegroundWindow();
        nint root = fg == 0 ? 0 : Win32.GetAncestor(fg, Win32.GA_ROOT);
        return (root, root == 0 ? 0 : Win32.AppProcessOf(root));
    }

    private bool Accepts(nint window, uint pid) =>
        _focus is not null && window != 0
        && Guards.FocusAccepts(window, pid, Win32.GetWindow(window, Win32.GW_OWNER), _focus.Window, _focus.Pid);

    private void CheckFocus()
    {
        if (_focus is null) return;
        var (window, pid) = Foreground();
        if (!Accepts(window, pid) && _firstCheck && _focus.Activate)
        {
            Win32.SetForegroundWindow(_focus.Window);
            var until = _call.Clock.Elapsed + TimeSpan.FromSeconds(1);
            while (_call.Clock.Elapsed < until && !_call.Expired)
            {
                Checkpoint();
                Thread.Sleep(10);
                (window, pid) = Foreground();
                if (Accepts(window, pid)) break;
            }
        }
        _firstCheck = false;
        if (!Accepts(window, pid))
        {
            throw new HelperError(Protocol.Codes.FocusMismatch, $"the focus is on window {window}, not on {(long)_focus.Window}: no keys were sent to it")
                .With("expected_window", (long)_focus.Window)
                .With("focus_window", (long)window)
                .With("focus_pid", window == 0 ? -1L : (long)pid);
        }
        _focusWindow = window;
    }
}
