using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Uia;

/// <summary>A node as the wire carries it, with the identity a locator is compared against.</summary>
internal sealed record Node(Dictionary<string, object?> Wire, Locator Identity, PixelRect? Bounds, bool Secure, ElementFacts Facts);

/// <summary>Builds wire nodes from cached elements (UiaContext.NodeRequest).</summary>
internal static class NodeReader
{
    /// <summary>
    /// The node of a cached element. Reads only the cache, plus the live value
    /// of a non-password element with the Value pattern (one call, counted).
    /// A password field's value is never read: `value` is nil.
    /// </summary>
    public static Node Read(IUIAutomationElement e, IReadOnlyList<int> path, ref int calls)
    {
        int controlType = e.get_CachedControlType();
        string name = e.get_CachedName() ?? "";
        string id = e.get_CachedAutomationId() ?? "";
        string help = e.get_CachedHelpText() ?? "";
        bool password = e.get_CachedIsPassword();
        var rect = e.get_CachedBoundingRectangle();
        var bounds = rect.Right > rect.Left && rect.Bottom > rect.Top ? rect.ToPixelRect() : (PixelRect?)null;

        var toggle = UiaContext.CachedPattern<IUIAutomationTogglePattern>(e, PatternId.Toggle);
        var expand = UiaContext.CachedPattern<IUIAutomationExpandCollapsePattern>(e, PatternId.ExpandCollapse);
        var selection = UiaContext.CachedPattern<IUIAutomationSelectionItemPattern>(e, PatternId.SelectionItem);
        var valuePattern = UiaContext.CachedPattern<IUIAutomationValuePattern>(e, PatternId.Value);
        bool hasInvoke = HasCached(e, PatternId.Invoke);
        bool hasScrollItem = HasCached(e, PatternId.ScrollItem);
        bool hasText = HasCached(e, PatternId.Text);

        var facts = new ElementFacts
        {
            Enabled = e.get_CachedIsEnabled(),
            HasKeyboardFocus = e.get_CachedHasKeyboardFocus(),
            KeyboardFocusable = e.get_CachedIsKeyboardFocusable(),
            Offscreen = e.get_CachedIsOffscreen(),
            Password = password,
            RequiredForForm = e.get_CachedIsRequiredForForm(),
            ToggleState = toggle?.get_CachedToggleState(),
            ExpandCollapseState = expand?.get_CachedExpandCollapseState(),
            Selected = selection?.get_CachedIsSelected(),
            ValueReadOnly = valuePattern?.get_CachedIsReadOnly(),
            HasInvoke = hasInvoke,
            HasScrollItem = hasScrollItem,
            HasText = hasText,
        };

        string? value = null;
        if (!password && valuePattern is not null)
        {
            calls++;
            try
            {
                value = valuePattern.get_CurrentValue();
            }
            catch (COMException)
            {
                value = null; // the provider refused: no value, not a failed tree
            }
        }

        bool multiLine = controlType == ControlType.Edit && IsMultiLineEdit(e.get_CachedNativeWindowHandle(), e.get_CachedClassName() ?? "");
        string role = RoleMap.Role(controlType, password, toggle is not null, multiLine);
        string nativeRole = ControlType.Name(controlType);
        var states = StateMap.States(facts);
        if (multiLine) states.Add("multi_line");
        var actions = StateMap.Actions(facts)
            .Select(a => (object?)new Dictionary<string, object?> { ["name"] = a.Name, ["native"] = a.Native })
            .ToList();

        var wire = new Dictionary<string, object?>
        {
            ["path"] = path.Select(i => (object?)(long)i).ToList(),
            ["role"] = role,
            ["native_role"] = nativeRole,
            ["name"] = name,
            ["description"] = help,
            ["value"] = password ? null : value,
            ["states"] = states.Cast<object?>().ToList(),
            ["bounds"] = bounds?.ToWire(),
            ["actions"] = actions,
            ["identifier"] = id,
            ["secure"] = password,
            ["child_count"] = 0L,
        };
        return new Node(wire, new Locator(path.ToList(), role, nativeRole, name, id), bounds, password, facts);
    }

    private static bool HasCached(IUIAutomationElement e, int patternId)
    {
        nint p = e.GetCachedPattern(patternId);
        if (p == 0) return false;
        Marshal.Release(p);
        return true;
    }

    /// <summary>A Win32 edit or rich edit control with ES_MULTILINE (classic Notepad's text area).</summary>
    private static bool IsMultiLineEdit(nint hwnd, string className)
    {
        if (hwnd == 0) return false;
        if (!className.StartsWith("Edit", StringComparison.OrdinalIgnoreCase) && !className.StartsWith("RichEdit", StringComparison.OrdinalIgnoreCase)) return false;
        return (Win32.GetWindowLongPtr(hwnd, Win32.GWL_STYLE) & Win32.ES_MULTILINE) != 0;
    }
}

/// <summary>Bounds of one read of the tree.</summary>
internal sealed record TreeLimits(int MaxDepth, int MaxChildren, int MaxNodes, int MaxCalls);

/// <summary>
/// get_tree: a pre-order walk of the window's control view, one cache
/// request for the whole walk, each element fetched with its cache
/// (GetFirstChildElementBuildCache / GetNextSiblingElementBuildCache: one
/// round trip per element). Bounded by depth, children per node, nodes,
/// calls and time; `truncated` says a bound cut it.
/// </summary>
internal sealed class TreeReader
{
    private readonly UiaContext _uia;
    private readonly IUIAutomationCacheRequest _req;
    private readonly TreeLimits _limits;
    private readonly Func<bool> _outOfTime;

    public List<Dictionary<string, object?>> Nodes { get; } = new();

    public List<Node> Raw { get; } = new();

    public bool Truncated { get; private set; }

    public int Calls;

    public TreeReader(UiaContext uia, IUIAutomationCacheRequest req, TreeLimits limits, Func<bool> outOfTime)
    {
        _uia = uia;
        _req = req;
        _limits = limits;
        _outOfTime = outOfTime;
    }

    public void Walk(IUIAutomationElement root)
    {
        Visit(root, new List<int>(), 0);
    }

    private bool Stop()
    {
        if (Nodes.Count >= _limits.MaxNodes || Calls >= _limits.MaxCalls || _outOfTime())
        {
            Truncated = true;
            return true;
        }
        return false;
    }

    private void Visit(IUIAutomationElement e, List<int> path, int depth)
    {
        var node = NodeReader.Read(e, path, ref Calls);
        Nodes.Add(node.Wire);
        Raw.Add(node);
        int children = 0;
        if (depth >= _limits.MaxDepth)
        {
            // Not descended: say whether there was anything below (one call).
            if (!Stop() && Next(e, first: true) is not null)
            {
                children = 1;
                Truncated = true;
            }
            node.Wire["child_count"] = (long)children;
            return;
        }
        IUIAutomationElement? child = Stop() ? null : Next(e, first: true);
        while (child is not null)
        {
            if (children >= _limits.MaxChildren)
            {
                Truncated = true;
                break;
            }
            var childPath = new List<int>(path) { children };
            children++;
            Visit(child, childPath, depth + 1);
            if (Stop()) break;
            child = Next(child, first: false);
        }
        node.Wire["child_count"] = (long)children;
    }

    private IUIAutomationElement? Next(IUIAutomationElement e, bool first)
    {
        Calls++;
        try
        {
            return first ? _uia.Walker.GetFirstChildElementBuildCache(e, _req) : _uia.Walker.GetNextSiblingElementBuildCache(e, _req);
        }
        catch (COMException)
        {
            // A provider that fails (or times out, UIA_E_TIMEOUT) ends this branch, not the read.
            Truncated = true;
            return null;
        }
    }
}

/// <summary>Paths: from a locator to an element, and from an element back to its path.</summary>
internal static class Paths
{
    public const int MaxSiblingsScanned = 10_000;

    /// <summary>The element at a path under the window root, with its cache; null when an index is out of range.</summary>
    public static IUIAutomationElement? Resolve(UiaContext uia, IUIAutomationElement root, IReadOnlyList<int> path, IUIAutomationCacheRequest req)
    {
        var e = root;
        foreach (int index in path)
        {
            if (index < 0 || index >= MaxSiblingsScanned) return null;
            var child = uia.Walker.GetFirstChildElementBuildCache(e, req);
            for (int i = 0; i < index && child is not null; i++)
            {
                child = uia.Walker.GetNextSiblingElementBuildCache(child, req);
            }
            if (child is null) return null;
            e = child;
        }
        return e;
    }

    /// <summary>
    /// The path of <paramref name="element"/> under the window root, or null
    /// when the element is not inside that window (or deeper than 64).
    /// </summary>
    public static List<int>? PathOf(UiaContext uia, IUIAutomationElement root, IUIAutomationElement element)
    {
        var up = new List<int>();
        var e = element;
        for (int depth = 0; depth < 64; depth++)
        {
            if (uia.Automation.CompareElements(e, root))
            {
                return PathBuilder.FromAncestry(up);
            }
            var parent = uia.Walker.GetParentElement(e);
            if (parent is null) return null;
            int index = IndexIn(uia, parent, e);
            if (index < 0) return null;
            up.Add(index);
            e = parent;
        }
        return null;
    }

    private static int IndexIn(UiaContext uia, IUIAutomationElement parent, IUIAutomationElement e)
    {
        var child = uia.Walker.GetFirstChildElement(parent);
        for (int i = 0; child is not null && i < MaxSiblingsScanned; i++)
        {
            if (uia.Automation.CompareElements(child, e)) return i;
            child = uia.Walker.GetNextSiblingElement(child);
        }
        return -1;
    }
}
