using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Helper.Windows.Uia;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>get_tree, hit_test and focused_element.</summary>
internal static class TreeOps
{
    /// <summary>The share of the deadline a tree read may use before it stops with truncated: true (the rest is for the answer).</summary>
    private const double ReadShare = 0.8;

    public static OpOutcome GetTree(OpCall call)
    {
        var a = call.Args;
        long pid = a.Long("pid");
        long windowId = a.Long("window_id");
        var window = Desktop.Require(windowId, pid);
        if (!Win32.Responds(window.Hwnd))
        {
            throw new HelperError(Protocol.Codes.Timeout, $"window {windowId} is not responding (hung): its tree is not read")
                .With("window_id", windowId).With("hung", true);
        }
        int maxNodes = Math.Clamp(a.Int("max_nodes", 2000), 1, 100_000);
        var limits = new TreeLimits(
            MaxDepth: Math.Clamp(a.Int("max_depth", 64), 0, 256),
            MaxChildren: Math.Clamp(a.Int("max_children", 500), 1, 100_000),
            MaxNodes: maxNodes,
            MaxCalls: maxNodes * 3 + 100);
        var uia = UiaContext.Get();
        var req = uia.NodeRequest();
        var budget = call.Budget * ReadShare;
        var reader = new TreeReader(uia, req, limits, () => call.Token.IsCancellationRequested || call.Clock.Elapsed > budget);
        var root = uia.WindowElement(window.Hwnd, req);
        reader.Calls++;
        reader.Walk(root);
        return new OpOutcome(new Dictionary<string, object?>
        {
            ["nodes"] = reader.Nodes.Cast<object?>().ToList(),
            ["truncated"] = reader.Truncated,
            ["source"] = "cache",
            ["calls"] = (long)reader.Calls,
        });
    }

    public static OpOutcome HitTest(OpCall call)
    {
        int x = (int)call.Args.Long("x");
        int y = (int)call.Args.Long("y");
        nint child = Win32.WindowFromPoint(new POINT { X = x, Y = y });
        nint top = child == 0 ? 0 : Win32.GetAncestor(child, Win32.GA_ROOT);
        if (top == 0 || Win32.ClassName(top) is "Progman" or "WorkerW")
        {
            return new OpOutcome(new Dictionary<string, object?> { ["pid"] = null, ["window_id"] = null, ["node"] = null });
        }
        uint pid = Win32.AppProcessOf(top);
        object? node = null;
        if (Win32.Responds(top))
        {
            var uia = UiaContext.Get();
            var req = uia.NodeRequest();
            try
            {
                var element = uia.Automation.ElementFromPointBuildCache(new POINT { X = x, Y = y }, req);
                node = NodeUnder(uia, top, element, req);
            }
            catch (COMException e)
            {
                Console.Error.WriteLine($"deckhand-helper-windows: hit_test ({x}, {y}): UIA failed: {e.Message}");
            }
        }
        return new OpOutcome(new Dictionary<string, object?>
        {
            ["pid"] = pid == 0 ? null : (long)pid,
            ["window_id"] = (long)top,
            ["node"] = node,
        });
    }

    public static OpOutcome FocusedElement(OpCall call)
    {
        long pid = call.Args.Long("pid");
        nint fg = Win32.GetForegroundWindow();
        nint top = fg == 0 ? 0 : Win32.GetAncestor(fg, Win32.GA_ROOT);
        if (top == 0 || (Win32.AppProcessOf(top) != pid && Win32.ProcessOf(top) != pid))
        {
            // The app does not have the focus: nothing of it is focused.
            return new OpOutcome(new Dictionary<string, object?> { ["window_id"] = null, ["node"] = null });
        }
        var uia = UiaContext.Get();
        var req = uia.NodeRequest();
        object? node = null;
        try
        {
            var element = uia.Automation.GetFocusedElementBuildCache(req);
            node = NodeUnder(uia, top, element, req);
        }
        catch (COMException e)
        {
            Console.Error.WriteLine($"deckhand-helper-windows: focused_element: UIA failed: {e.Message}");
        }
        return new OpOutcome(new Dictionary<string, object?> { ["window_id"] = (long)top, ["node"] = node });
    }

    /// <summary>The node of an element with its path under the window's root, or null when it is not inside that window.</summary>
    private static Dictionary<string, object?>? NodeUnder(UiaContext uia, nint top, IUIAutomationElement element, IUIAutomationCacheRequest req)
    {
        var root = uia.Automation.ElementFromHandle(top);
        // The element UIA found may be outside the control view (paths are
        // counted in it): its nearest control-view ancestor-or-self stands for it.
        var target = uia.Walker.NormalizeElement(element);
        if (target is null) return null;
        var path = Paths.PathOf(uia, root, target);
        if (path is null) return null;
        int calls = 0;
        return NodeReader.Read(target.BuildUpdatedCache(req), path, ref calls).Wire;
    }
}
