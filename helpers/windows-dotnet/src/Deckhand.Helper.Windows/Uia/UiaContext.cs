using System.Runtime.InteropServices;
using System.Runtime.InteropServices.Marshalling;
using Deckhand.Helper.Windows.Interop;
using Deckhand.Platform;
using Deckhand.Wire;

namespace Deckhand.Helper.Windows.Uia;

/// <summary>
/// The process's UI Automation client: CUIAutomation8 through
/// StrategyBasedComWrappers, with UIA's own per-call timeouts set (a provider
/// that does not answer fails the call instead of blocking it forever; the
/// dispatcher's deadline is the backstop), and the control-view walker that
/// every path is counted in. UIA clients run on MTA threads without windows
/// (thread-pool threads are MTA), which is where the ops call it from.
/// </summary>
internal sealed class UiaContext
{
    public static readonly StrategyBasedComWrappers Wrappers = new();

    /// <summary>How long UIA waits to connect to a provider, and for one call (property read, pattern call) to return.</summary>
    public const uint ConnectionTimeoutMs = 2000;
    public const uint TransactionTimeoutMs = 3000;

    private const int E_ACCESSDENIED = unchecked((int)0x80070005);

    private static readonly Lazy<UiaContext> Shared = new(Create, LazyThreadSafetyMode.ExecutionAndPublication);

    public IUIAutomation2 Automation { get; }

    public IUIAutomationTreeWalker Walker { get; }

    private UiaContext(IUIAutomation2 automation)
    {
        Automation = automation;
        Walker = automation.get_ControlViewWalker();
    }

    public static UiaContext Get()
    {
        try
        {
            return Shared.Value;
        }
        catch (Exception e) when (e is COMException or InvalidCastException)
        {
            throw new HelperError(Protocol.Codes.PermissionDenied, $"UI Automation is not available: {e.Message}").With("hresult", (long)e.HResult);
        }
    }

    private static UiaContext Create()
    {
        var clsid = new Guid(UiaIds.CUIAutomation8);
        var iid = new Guid(UiaIds.IUIAutomation2);
        int hr = Win32.CoCreateInstance(clsid, 0, Win32.CLSCTX_INPROC_SERVER, iid, out nint ptr);
        Marshal.ThrowExceptionForHR(hr);
        var automation = Wrap<IUIAutomation2>(ptr);
        automation.put_ConnectionTimeout(ConnectionTimeoutMs);
        automation.put_TransactionTimeout(TransactionTimeoutMs);
        return new UiaContext(automation);
    }

    /// <summary>A COM pointer we own as the given interface (QueryInterface through the wrapper); the pointer is released.</summary>
    public static T Wrap<T>(nint ptr) where T : class
    {
        try
        {
            return (T)Wrappers.GetOrCreateObjectForComInstance(ptr, CreateObjectFlags.None);
        }
        finally
        {
            Marshal.Release(ptr);
        }
    }

    /// <summary>A cached pattern as its interface, or null when the element does not support it.</summary>
    public static T? CachedPattern<T>(IUIAutomationElement e, int patternId) where T : class
    {
        nint p = e.GetCachedPattern(patternId);
        return p == 0 ? null : Wrap<T>(p);
    }

    /// <summary>A live pattern (read now, not from the cache), or null.</summary>
    public static T? CurrentPattern<T>(IUIAutomationElement e, int patternId) where T : class
    {
        nint p = e.GetCurrentPattern(patternId);
        return p == 0 ? null : Wrap<T>(p);
    }

    /// <summary>
    /// The one cache request of a walk: every property and pattern a node is
    /// built from, so each element costs one cross-process round trip.
    /// ValueValue is deliberately absent: a value is read live, and only from
    /// an element the cache says is not a password field.
    /// </summary>
    public IUIAutomationCacheRequest NodeRequest()
    {
        var req = Automation.CreateCacheRequest();
        foreach (int prop in new[]
        {
            UiaIds.BoundingRectangle, UiaIds.ProcessId, UiaIds.ControlType, UiaIds.Name, UiaIds.HasKeyboardFocus,
            UiaIds.IsKeyboardFocusable, UiaIds.IsEnabled, UiaIds.AutomationId, UiaIds.ClassName, UiaIds.HelpText,
            UiaIds.IsPassword, UiaIds.NativeWindowHandle, UiaIds.IsOffscreen, UiaIds.IsRequiredForForm,
            UiaIds.ValueIsReadOnly, UiaIds.ExpandCollapseState, UiaIds.SelectionItemIsSelected, UiaIds.ToggleState,
        })
        {
            req.AddProperty(prop);
        }
        foreach (int pattern in new[]
        {
            PatternId.Invoke, PatternId.Value, PatternId.ExpandCollapse, PatternId.SelectionItem,
            PatternId.Text, PatternId.Toggle, PatternId.ScrollItem,
        })
        {
            req.AddPattern(pattern);
        }
        req.put_TreeScope(UiaIds.TreeScopeElement);
        req.put_AutomationElementMode(UiaIds.ElementModeFull);
        return req;
    }

    /// <summary>A small cache request for finding secure fields (screenshot redaction).</summary>
    public IUIAutomationCacheRequest SecureRequest()
    {
        var req = Automation.CreateCacheRequest();
        req.AddProperty(UiaIds.IsPassword);
        req.AddProperty(UiaIds.BoundingRectangle);
        req.AddProperty(UiaIds.IsOffscreen);
        req.put_TreeScope(UiaIds.TreeScopeElement);
        return req;
    }

    /// <summary>The element of a top-level window, with its cache built; WINDOW_NOT_FOUND when UIA cannot reach it.</summary>
    public IUIAutomationElement WindowElement(nint hwnd, IUIAutomationCacheRequest req)
    {
        try
        {
            return Automation.ElementFromHandleBuildCache(hwnd, req);
        }
        catch (COMException e) when (e.HResult == E_ACCESSDENIED)
        {
            // UIPI: a window of a higher integrity level (an elevated app) than this helper.
            throw new HelperError(Protocol.Codes.PermissionDenied, $"window {hwnd} belongs to a process of a higher integrity level (elevated): UI Automation is denied")
                .With("window_id", (long)hwnd).With("hresult", (long)e.HResult)
                .With("remediation", "run deckhand (and so the helper) elevated to drive elevated apps");
        }
        catch (COMException e)
        {
            throw new HelperError(Protocol.Codes.WindowNotFound, $"UI Automation cannot reach window {hwnd}: {e.Message}")
                .With("window_id", (long)hwnd).With("hresult", (long)e.HResult);
        }
    }
}
