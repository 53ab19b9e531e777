using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>
/// watch_user_input: low-level keyboard and mouse hooks (WH_KEYBOARD_LL,
/// WH_MOUSE_LL) on a thread of their own with a message loop. Injected
/// events (LLKHF_INJECTED / LLMHF_INJECTED: this helper's SendInput and any
/// other software's) are ignored; what is left is real user input, reported
/// as `user_input` events at most every 100 ms per device, with no key codes
/// or positions (the kill switch needs to know that the user acted, not
/// what they typed). The hook procedures only note the event and return:
/// Windows drops a low-level hook that is slow (LowLevelHooksTimeout).
/// </summary>
internal static class Watcher
{
    private static readonly object Lock = new();
    private static Thread? _thread;
    private static uint _threadId;
    private static nint _mouseHook;
    private static nint _keyboardHook;
    private static Action<Dictionary<string, object?>>? _emit;
    private static long _lastKeyboardTicks;
    private static long _lastPointerTicks;
    private static long _ignoredInjected;

    private const long MinIntervalTicks = TimeSpan.TicksPerMillisecond * 100;

    public static OpOutcome Run(OpCall call)
    {
        bool enabled = call.Args.Bool("enabled");
        lock (Lock)
        {
            if (enabled) Start(call.Emit);
            else Stop();
            return new OpOutcome(new Dictionary<string, object?> { ["watching"] = _thread is not null });
        }
    }

    private static unsafe void Start(Action<Dictionary<string, object?>> emit)
    {
        _emit = emit;
        if (_thread is not null) return;
        // Not disposed: a hook thread that answers after the wait gave up must still find it.
        var ready = new ManualResetEventSlim();
        string? error = null;
        var thread = new Thread(() =>
        {
            _threadId = Win32.GetCurrentThreadId();
            nint module = Win32.GetModuleHandle(null);
            _mouseHook = Win32.SetWindowsHookEx(Win32.WH_MOUSE_LL, &MouseProc, module, 0);
            int mouseError = Marshal.GetLastPInvokeError();
            _keyboardHook = Win32.SetWindowsHookEx(Win32.WH_KEYBOARD_LL, &KeyboardProc, module, 0);
            if (_mouseHook == 0 || _keyboardHook == 0)
            {
                error = $"SetWindowsHookEx failed (mouse error {mouseError}, keyboard error {Marshal.GetLastPInvokeError()})";
                Unhook();
                ready.Set();
                return;
            }
            ready.Set();
            while (Win32.GetMessage(out var msg, 0, 0, 0) > 0)
            {
                // Low-level hooks are called from this loop; nothing else is dispatched.
            }
            Unhook();
        })
        {
            IsBackground = true,
            Name = "deckhand user input watcher",
        };
        thread.Start();
        ready.Wait(TimeSpan.FromSeconds(3));
        if (error is not null)
        {
            throw new HelperError(Protocol.Codes.PermissionDenied, error);
        }
        _thread = thread;
    }

    private static void Stop()
    {
        if (_thread is null) return;
        Win32.PostThreadMessage(_threadId, Win32.WM_QUIT, 0, 0);
        _thread.Join(TimeSpan.FromSeconds(2));
        _thread = null;
    }

    private static void Unhook()
    {
        if (_mouseHook != 0) Win32.UnhookWindowsHookEx(_mouseHook);
        if (_keyboardHook != 0) Win32.UnhookWindowsHookEx(_keyboardHook);
        _mouseHook = 0;
        _keyboardHook = 0;
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvStdcall) })]
    private static unsafe nint MouseProc(int code, nuint wParam, nint lParam)
    {
        if (code >= 0)
        {
            var info = (MSLLHOOKSTRUCT*)lParam;
            bool injected = (info->flags & (Win32.LLMHF_INJECTED | Win32.LLMHF_LOWER_IL_INJECTED)) != 0 || info->dwExtraInfo == NativeInput.Signature;
            if (injected) Interlocked.Increment(ref _ignoredInjected);
            else Note(ref _lastPointerTicks, "pointer", (uint)wParam);
        }
        return Win32.CallNextHookEx(0, code, wParam, lParam);
    }

    [UnmanagedCallersOnly(CallConvs = new[] { typeof(CallConvStdcall) })]
    private static unsafe nint KeyboardProc(int code, nuint wParam, nint lParam)
    {
        if (code >= 0)
        {
            var info = (KBDLLHOOKSTRUCT*)lParam;
            bool injected = (info->flags & (Win32.LLKHF_INJECTED | Win32.LLKHF_LOWER_IL_INJECTED)) != 0 || info->dwExtraInfo == NativeInput.Signature;
            if (injected) Interlocked.Increment(ref _ignoredInjected);
            else Note(ref _lastKeyboardTicks, "keyboard", (uint)wParam);
        }
        return Win32.CallNextHookEx(0, code, wParam, lParam);
    }

    private static void Note(ref long last, string device, uint message)
    {
        long now = DateTime.UtcNow.Ticks;
        long prev = Interlocked.Read(ref last);
        if (now - prev < MinIntervalTicks || Interlocked.CompareExchange(ref last, now, prev) != prev) return;
        var emit = _emit;
        if (emit is null) return;
        var data = new Dictionary<string, object?>
        {
            ["device"] = device,
            ["message"] = (long)message,
            ["ignored_injected"] = Interlocked.Read(ref _ignoredInjected),
        };
        // Off the hook thread: writing a frame may block on stdout.
        ThreadPool.QueueUserWorkItem(_ => emit(Frames.Event("user_input", data)));
    }
}
