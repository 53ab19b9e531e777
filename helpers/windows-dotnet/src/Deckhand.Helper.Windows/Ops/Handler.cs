using Deckhand.Helper.Windows.Capture;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>
/// The op table: every op of docs/protocol.md is known; the ones this helper
/// does not implement (capability supported: false in capabilities.json)
/// answer ACTION_UNSUPPORTED, never a stub that claims success.
/// </summary>
internal sealed class Handler : IOpHandler
{
    private readonly CapabilityFile _caps;

    private readonly Dictionary<string, (string? Capability, Func<OpCall, OpOutcome> Run)> _ops;

    /// <summary>Ops of the protocol this helper refuses (its capability says why).</summary>
    private static readonly Dictionary<string, string> NotImplemented = new(StringComparer.Ordinal)
    {
        ["set_accessibility"] = "set_accessibility",
        ["settle"] = "settle",
        ["list_installed"] = "list_installed",
        ["launch"] = "launch",
        ["launch_status"] = "launch",
        ["window_op"] = "window_op",
        ["clipboard_get"] = "clipboard.get",
        ["clipboard_set"] = "clipboard.set",
        ["paste"] = "clipboard.paste",
        ["menu_tree"] = "menu_tree",
        ["menu_close"] = "menu_close",
        ["point_click"] = "point_click",
    };

    public Handler(CapabilityFile caps)
    {
        _caps = caps;
        _ops = new(StringComparer.Ordinal)
        {
            ["permissions"] = ("permissions", PermissionOps.Run),
            ["list_apps"] = ("list_apps", DesktopOps.ListApps),
            ["list_windows"] = ("list_windows", DesktopOps.ListWindows),
            ["get_tree"] = ("get_tree", TreeOps.GetTree),
            ["screenshot"] = ("screenshot", ScreenshotOps.Run),
            ["hit_test"] = ("hit_test", TreeOps.HitTest),
            ["focused_element"] = ("focused_element", TreeOps.FocusedElement),
            ["element_action"] = (null, ElementAction),
            ["input"] = (null, InputRun.Run),
            ["watch_user_input"] = ("watch_user_input", Watcher.Run),
        };
    }

    public bool Knows(string op) => _ops.ContainsKey(op) || NotImplemented.ContainsKey(op);

    public bool Serialized(string op) => op is "input";

    public Route RouteOf(string op) => op is "input" or "paste" or "point_click" ? Route.ForegroundInput : Route.Accessibility;

    public Task<OpOutcome> HandleAsync(OpCall call)
    {
        // UIA and WinRT calls need a COM apartment: this thread joins the MTA
        // (S_FALSE when it already has; thread-pool threads stay in it).
        Win32.CoInitializeEx(0, Win32.COINIT_MULTITHREADED);
        if (NotImplemented.TryGetValue(call.Op, out var capability))
        {
            throw Refuse(call.Op, capability);
        }
        var (cap, run) = _ops[call.Op];
        if (cap is not null && !_caps.Supports(cap))
        {
            throw Refuse(call.Op, cap);
        }
        return Task.FromResult(run(call));
    }

    private HelperError Refuse(string op, string capability)
    {
        string why = _caps.Capabilities.TryGetValue(capability, out var c) && c.Note is not null ? c.Note : "not implemented";
        var e = HelperError.Unsupported($"{op} is not supported by this helper: {why}").With("op", op).With("capability", capability);
        if (Protocol.Mutates(op)) e.WithReceipt(new Receipt(Delivery.NotDispatched, RouteOf(op)));
        return e;
    }

    private OpOutcome ElementAction(OpCall call)
    {
        string action = call.Args.StringOrNull("action") ?? "";
        string capability = $"action.{action}";
        if (!_caps.Supports(capability))
        {
            throw Refuse("element_action", capability);
        }
        return ElementActionOps.Run(call);
    }
}
