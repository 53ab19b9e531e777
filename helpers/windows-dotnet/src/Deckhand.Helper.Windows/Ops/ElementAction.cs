using System.Runtime.InteropServices;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Helper.Windows.Uia;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Ops;

/// <summary>
/// element_action: resolve the locator's path in the window's control view,
/// check the element is the one the locator names (native role, name,
/// AutomationId), check it again from a fresh cache immediately before the
/// pattern call and act on that fresh element, then read back what can be
/// read back. UIA has no transactions: between the last check and the call
/// there is one cross-process round trip in which the app could change the
/// element; nothing falls back to coordinates.
/// </summary>
internal static class ElementActionOps
{
    private const int UIA_E_ELEMENTNOTENABLED = unchecked((int)0x80040200);
    private const int UIA_E_ELEMENTNOTAVAILABLE = unchecked((int)0x80040201);
    private const int UIA_E_NOCLICKABLEPOINT = unchecked((int)0x80040202);
    private const int UIA_E_TIMEOUT = unchecked((int)0x80131505);

    private static HelperError NotDispatched(HelperError e) => e.WithReceipt(Receipt.Accessibility(Delivery.NotDispatched));

    public static OpOutcome Run(OpCall call)
    {
        var a = call.Args;
        long pid = a.Long("pid");
        long windowId = a.Long("window_id");
        string action = a.String("action");
        var loc = a.Map("locator") ?? throw NotDispatched(HelperError.Invalid("args.locator is required"));
        var locator = new Locator(
            loc.Longs("path").Select(i => (int)Math.Clamp(i, -1, int.MaxValue)).ToList(),
            loc.StringOrNull("role") ?? "",
            loc.StringOrNull("native_role") ?? "",
            loc.StringOrNull("name") ?? "",
            loc.StringOrNull("identifier") ?? "");

        TopWindow window;
        try
        {
            window = Desktop.Require(windowId, pid);
        }
        catch (HelperError e)
        {
            if (!ProcessAlive(pid)) throw NotDispatched(new HelperError(Protocol.Codes.AppExited, $"pid {pid} has exited").With("pid", pid));
            throw NotDispatched(e);
        }
        if (!Win32.Responds(window.Hwnd))
        {
            throw NotDispatched(new HelperError(Protocol.Codes.Timeout, $"window {windowId} is not responding (hung)").With("hung", true));
        }

        var uia = UiaContext.Get();
        var req = uia.NodeRequest();
        IUIAutomationElement element;
        Node node;
        try
        {
            var root = uia.WindowElement(window.Hwnd, req);
            element = Paths.Resolve(uia, root, locator.Path, req)
                ?? throw NotDispatched(new HelperError(Protocol.Codes.ElementUnresolvable, $"no element at path {Locator.PathText(locator.Path)}")
                    .With("path", Locator.PathText(locator.Path)));
            int calls = 0;
            node = NodeReader.Read(element, locator.Path, ref calls);
            Verify(locator, node);
            // Again, from a fresh cache, right before the call: the element acted on is this one.
            element = element.BuildUpdatedCache(req);
            node = NodeReader.Read(element, locator.Path, ref calls);
            Verify(locator, node);
        }
        catch (COMException e)
        {
            throw NotDispatched(new HelperError(
                e.HResult == UIA_E_TIMEOUT ? Protocol.Codes.Timeout : Protocol.Codes.ElementUnresolvable,
                $"the element could not be read: {e.Message}").With("hresult", (long)e.HResult));
        }

        try
        {
            return action switch
            {
                "click" => Click(element, node),
                "set_value" => SetValue(element, node, a.StringOrNull("text") ?? throw NotDispatched(HelperError.Invalid("set_value needs args.text"))),
                "type_text" => TypeText(element, node, a.StringOrNull("text") ?? throw NotDispatched(HelperError.Invalid("type_text needs args.text"))),
                "select_text" => SelectText(element, node, a.LongOrNull("start"), a.LongOrNull("end")),
                "focus" => Focus(element),
                "scroll_into_view" => ScrollIntoView(element),
                "secondary" => Secondary(element, node, a.StringOrNull("action_name") ?? ""),
                _ => throw NotDispatched(HelperError.Invalid($"unknown action '{action}'")),
            };
        }
        catch (COMException e)
        {
            // The call was made and answered with a failure HRESULT (or timed out in UIA).
            if (e.HResult == UIA_E_TIMEOUT)
            {
                throw new HelperError(Protocol.Codes.Timeout, $"{action}: the app did not answer within {UiaContext.TransactionTimeoutMs} ms")
                    .WithReceipt(Receipt.Accessibility(Delivery.Unknown));
            }
            string code = e.HResult == UIA_E_ELEMENTNOTAVAILABLE && !ProcessAlive(pid) ? Protocol.Codes.AppExited : Protocol.Codes.ActionFailed;
            throw new HelperError(code, $"{action} failed: {e.Message}")
                .With("hresult", (long)e.HResult)
                .With("not_enabled", e.HResult == UIA_E_ELEMENTNOTENABLED)
                .WithReceipt(Receipt.Accessibility(e.HResult == UIA_E_ELEMENTNOTAVAILABLE || e.HResult == UIA_E_NOCLICKABLEPOINT ? Delivery.Unknown : Delivery.Submitted));
        }
    }

    private static void Verify(Locator locator, Node node)
    {
        var mismatch = locator.Compare(node.Identity);
        if (mismatch is not null)
        {
            throw NotDispatched(new HelperError(Protocol.Codes.ElementUnresolvable, mismatch.ToString())
                .With("field", mismatch.Field).With("expected", mismatch.Expected).With("found", mismatch.Found));
        }
    }

    private static bool ProcessAlive(long pid)
    {
        nint h = Win32.OpenProcess(Win32.PROCESS_QUERY_LIMITED_INFORMATION, false, (uint)pid);
        if (h == 0) return false;
        try
        {
            // Exit time zero: still running.
            return Win32.GetProcessTimes(h, out _, out var exit, out _, out _) && exit.Ticks == 0;
        }
        finally
        {
            Win32.CloseHandle(h);
        }
    }

    private static OpOutcome Done(bool? verified, string? verification, string nativeAction) =>
        new(new Dictionary<string, object?>
        {
            ["performed"] = true,
            ["verified"] = verified,
            ["verification"] = verification,
            ["native_action"] = nativeAction,
        }, Receipt.Accessibility(Delivery.Submitted));

    private static OpOutcome Click(IUIAutomationElement e, Node node)
    {
        var invoke = UiaContext.CachedPattern<IUIAutomationInvokePattern>(e, PatternId.Invoke);
        if (invoke is not null)
        {
            invoke.Invoke();
            return Done(null, null, NativeAction.Invoke);
        }
        var toggle = UiaContext.CachedPattern<IUIAutomationTogglePattern>(e, PatternId.Toggle);
        if (toggle is not null)
        {
            int before = toggle.get_CachedToggleState();
            toggle.Toggle();
            int after = toggle.get_CurrentToggleState();
            return Done(after != before, $"ToggleState {before} -> {after}", NativeAction.Toggle);
        }
        throw NotDispatched(HelperError.Unsupported($"the {node.Identity.NativeRole} has neither the Invoke nor the Toggle pattern: no press-like action")
            .With("reason", "no-press-action"));
    }

    private static OpOutcome SetValue(IUIAutomationElement e, Node node, string text)
    {
        var value = UiaContext.CachedPattern<IUIAutomationValuePattern>(e, PatternId.Value)
            ?? throw NotDispatched(HelperError.Unsupported("the element has no Value pattern").With("reason", "no-editable-text"));
        if (value.get_CachedIsReadOnly())
        {
            throw NotDispatched(HelperError.Unsupported("the element's value is read-only").With("reason", "no-editable-text"));
        }
        value.SetValue(text);
        if (node.Secure)
        {
            return Done(null, "secure field: not read back", "SetValue");
        }
        string? back = value.get_CurrentValue();
        if (back != text)
        {
            throw new HelperError(Protocol.Codes.VerificationFailed, "the value read back differs from the value set")
                .With("expected_length", (long)text.Length).With("found_length", (long)(back?.Length ?? -1))
                .WithReceipt(Receipt.Accessibility(Delivery.Submitted));
        }
        return Done(true, "Value.CurrentValue read back equals the text set", "SetValue");
    }

    /// <summary>
    /// Inserts at the caret: the caret (or the selection it replaces) from the
    /// Text pattern, the new value set through the Value pattern, read back.
    /// A secure field cannot be read, so it is refused (deckhand may type).
    /// </summary>
    private static OpOutcome TypeText(IUIAutomationElement e, Node node, string text)
    {
        if (node.Secure)
        {
            throw NotDispatched(HelperError.Unsupported("a secure field's text cannot be read to insert at its caret").With("reason", "secure-field"));
        }
        var value = UiaContext.CachedPattern<IUIAutomationValuePattern>(e, PatternId.Value);
        var textPattern = UiaContext.CachedPattern<IUIAutomationTextPattern>(e, PatternId.Text);
        if (value is null || value.get_CachedIsReadOnly())
        {
            throw NotDispatched(HelperError.Unsupported("the element has no writable Value pattern").With("reason", "no-editable-text"));
        }
        if (textPattern is null)
        {
            throw NotDispatched(HelperError.Unsupported("the element has no Text pattern: its caret is unknown").With("reason", "no-caret"));
        }
        var selection = textPattern.GetSelection();
        if (selection.get_Length() < 1)
        {
            throw NotDispatched(HelperError.Unsupported("the element reports no caret").With("reason", "no-caret"));
        }
        var caret = selection.GetElement(0);
        var doc = textPattern.get_DocumentRange();
        string current = value.get_CurrentValue() ?? "";
        string docText = doc.GetText(-1) ?? "";
        if (docText != current)
        {
            throw NotDispatched(HelperError.Unsupported("the Text and Value patterns disagree on the text: the caret offset cannot be mapped").With("reason", "no-caret"));
        }
        var before = doc.Clone();
        before.MoveEndpointByRange(UiaIds.EndpointEnd, caret, UiaIds.EndpointStart);
        int start = (before.GetText(-1) ?? "").Length;
        int selected = (caret.GetText(-1) ?? "").Length;
        if (start > current.Length || start + selected > current.Length)
        {
            throw NotDispatched(HelperError.Unsupported("the caret is outside the value").With("reason", "no-caret"));
        }
        string updated = current[..start] + text + current[(start + selected)..];
        value.SetValue(updated);
        string? back = value.get_CurrentValue();
        if (back != updated)
        {
            throw new HelperError(Protocol.Codes.VerificationFailed, "the value read back differs from the text with the insertion")
                .With("caret", (long)start)
                .WithReceipt(Receipt.Accessibility(Delivery.Submitted));
        }
        TrySelect(textPattern, start + text.Length, start + text.Length);
        return Done(true, $"Value read back equals the text with the insertion at offset {start}", "SetValue");
    }

    private static OpOutcome SelectText(IUIAutomationElement e, Node node, long? start, long? end)
    {
        if (start is null || end is null || start < 0 || end < start)
        {
            throw NotDispatched(HelperError.Invalid("select_text needs 0 <= start <= end"));
        }
        var textPattern = UiaContext.CachedPattern<IUIAutomationTextPattern>(e, PatternId.Text)
            ?? throw NotDispatched(HelperError.Unsupported("the element has no Text pattern").With("reason", "no-editable-text"));
        if (!node.Secure)
        {
            int length = (textPattern.get_DocumentRange().GetText(-1) ?? "").Length;
            if (end > length)
            {
                throw NotDispatched(HelperError.Invalid($"end {end} is past the text's {length} characters"));
            }
        }
        if (!TrySelect(textPattern, (int)start, (int)end))
        {
            throw new HelperError(Protocol.Codes.ActionFailed, "the range could not be selected").WithReceipt(Receipt.Accessibility(Delivery.Submitted));
        }
        if (node.Secure)
        {
            return Done(null, "secure field: not read back", "Select");
        }
        var (s, en) = SelectionOffsets(textPattern);
        bool ok = s == start && en == end;
        return Done(ok, $"the selection read back is {s}..{en}", "Select");
    }

    private static bool TrySelect(IUIAutomationTextPattern textPattern, int start, int end)
    {
        try
        {
            var range = textPattern.get_DocumentRange().Clone();
            range.MoveEndpointByRange(UiaIds.EndpointEnd, range, UiaIds.EndpointStart);
            range.MoveEndpointByUnit(UiaIds.EndpointEnd, UiaIds.TextUnitCharacter, end);
            range.MoveEndpointByUnit(UiaIds.EndpointStart, UiaIds.TextUnitCharacter, start);
            range.Select();
            return true;
        }
        catch (COMException)
        {
            return false;
        }
    }

    private static (int Start, int End) SelectionOffsets(IUIAutomationTextPattern textPattern)
    {
        var selection = textPattern.GetSelection();
        if (selection.get_Length() < 1) return (-1, -1);
        var range = selection.GetElement(0);
        var before = textPattern.get_DocumentRange().Clone();
        before.MoveEndpointByRange(UiaIds.EndpointEnd, range, UiaIds.EndpointStart);
        int s = (before.GetText(-1) ?? "").Length;
        return (s, s + (range.GetText(-1) ?? "").Length);
    }

    private static OpOutcome Focus(IUIAutomationElement e)
    {
        e.SetFocus();
        bool focused = e.get_CurrentHasKeyboardFocus();
        return Done(focused, focused ? "HasKeyboardFocus read back true" : "HasKeyboardFocus read back false", NativeAction.SetFocus);
    }

    private static OpOutcome ScrollIntoView(IUIAutomationElement e)
    {
        var scroll = UiaContext.CachedPattern<IUIAutomationScrollItemPattern>(e, PatternId.ScrollItem)
            ?? throw NotDispatched(HelperError.Unsupported("the element has no ScrollItem pattern").With("reason", "no-scroll-item"));
        scroll.ScrollIntoView();
        bool onScreen = !e.get_CurrentIsOffscreen();
        return Done(onScreen, onScreen ? "IsOffscreen read back false" : "IsOffscreen read back true", NativeAction.ScrollIntoView);
    }

    private static OpOutcome Secondary(IUIAutomationElement e, Node node, string actionName)
    {
        bool advertised = StateMap.Actions(node.Facts).Any(x => x.Native == actionName);
        if (!advertised)
        {
            throw NotDispatched(HelperError.Unsupported($"the element does not advertise the action '{actionName}'").With("action_name", actionName));
        }
        switch (actionName)
        {
            case NativeAction.Invoke:
                return Click(e, node);
            case NativeAction.Toggle:
                UiaContext.CachedPattern<IUIAutomationTogglePattern>(e, PatternId.Toggle)!.Toggle();
                return Done(null, null, actionName);
            case NativeAction.Expand:
                {
                    var p = UiaContext.CachedPattern<IUIAutomationExpandCollapsePattern>(e, PatternId.ExpandCollapse)!;
                    p.Expand();
                    int state = p.get_CurrentExpandCollapseState();
                    return Done(state is 1 or 2, $"ExpandCollapseState read back {state}", actionName);
                }
            case NativeAction.Collapse:
                {
                    var p = UiaContext.CachedPattern<IUIAutomationExpandCollapsePattern>(e, PatternId.ExpandCollapse)!;
                    p.Collapse();
                    int state = p.get_CurrentExpandCollapseState();
                    return Done(state == 0, $"ExpandCollapseState read back {state}", actionName);
                }
            case NativeAction.Select:
                {
                    var p = UiaContext.CachedPattern<IUIAutomationSelectionItemPattern>(e, PatternId.SelectionItem)!;
                    p.Select();
                    bool selected = p.get_CurrentIsSelected();
                    return Done(selected, $"IsSelected read back {selected}", actionName);
                }
            case NativeAction.ScrollIntoView:
                return ScrollIntoView(e);
            case NativeAction.SetFocus:
                return Focus(e);
            default:
                throw NotDispatched(HelperError.Unsupported($"unknown action '{actionName}'"));
        }
    }
}
