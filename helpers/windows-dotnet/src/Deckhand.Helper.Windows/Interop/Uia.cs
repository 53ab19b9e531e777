using System.Runtime.InteropServices;
using System.Runtime.InteropServices.Marshalling;

namespace Deckhand.Helper.Windows.Interop;

// UI Automation's client COM interfaces (UIAutomationClient.h), declared for
// the COM source generator ([GeneratedComInterface], used through
// StrategyBasedComWrappers): no [ComImport], no runtime type library, and
// trimming/AOT safe. The generator builds the vtable from the declaration
// order, so every slot up to the last one called is declared in the order of
// uiautomationclient.idl (wine's copy was the reference); slots this helper
// never calls are named `SlotNN_Name` and take no arguments: they only hold
// their place and must never be called. [out, retval] becomes the return
// value, HRESULT failures become exceptions (COMException with the HRESULT).
// BSTRs are marshalled with BStrStringMarshaller, BOOL with MarshalAs(Bool).

internal static class UiaIds
{
    public const string CUIAutomation8 = "e22ad333-b25f-460c-83d0-0581107395c9";
    public const string IUIAutomation = "30cbe57d-d9d0-452a-ab13-7ac5ac4825ee";
    public const string IUIAutomation2 = "34723aff-0c9d-49d0-9896-7ab52df8cd8a";
    public const string IUIAutomationElement = "d22108aa-8ac5-49a5-837b-37bbb3d7591e";
    public const string IUIAutomationElementArray = "14314595-b4bc-4055-95f2-58f2e42c9855";
    public const string IUIAutomationCacheRequest = "b32a92b5-bc25-4078-9c08-d7ee95c48e03";
    public const string IUIAutomationCondition = "352ffba8-0973-437c-a61f-f64cafd81df9";
    public const string IUIAutomationTreeWalker = "4042c624-389c-4afc-a630-9df854a541fc";
    public const string IUIAutomationInvokePattern = "fb377fbe-8ea6-46d5-9c73-6499642d3059";
    public const string IUIAutomationExpandCollapsePattern = "619be086-1f4e-4ee4-bafa-210128738730";
    public const string IUIAutomationScrollItemPattern = "b488300f-d015-4f19-9c29-bb595e3645ef";
    public const string IUIAutomationSelectionItemPattern = "a8efa66a-0fda-421a-9194-38021f3578ea";
    public const string IUIAutomationTogglePattern = "94cf8058-9b8d-4ab9-8bfd-4cd0a33c8c70";
    public const string IUIAutomationValuePattern = "a94cd8b1-0844-4cd6-9d2d-640537ab39e9";
    public const string IUIAutomationTextRange = "a543cc6a-f4ae-494b-8239-c814481187a8";
    public const string IUIAutomationTextRangeArray = "ce4ae76a-e717-4c98-81ea-47371d028eb6";
    public const string IUIAutomationTextPattern = "32eba289-3583-42c9-9c59-3b6d9a1e9b6a";

    // Property ids (UIA_*PropertyId).
    public const int BoundingRectangle = 30001, ProcessId = 30002, ControlType = 30003, LocalizedControlType = 30004, Name = 30005,
        HasKeyboardFocus = 30008, IsKeyboardFocusable = 30009, IsEnabled = 30010, AutomationId = 30011, ClassName = 30012,
        HelpText = 30013, IsPassword = 30019, NativeWindowHandle = 30020, IsOffscreen = 30022, IsRequiredForForm = 30025,
        ValueIsReadOnly = 30046, ExpandCollapseState = 30070, WindowIsModal = 30077, SelectionItemIsSelected = 30079,
        ToggleState = 30086;

    // TreeScope, AutomationElementMode, TextPatternRangeEndpoint, TextUnit.
    public const int TreeScopeElement = 1, TreeScopeChildren = 2, TreeScopeSubtree = 7;
    public const int ElementModeNone = 0, ElementModeFull = 1;
    public const int EndpointStart = 0, EndpointEnd = 1;
    public const int TextUnitCharacter = 0;
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationCondition)]
internal partial interface IUIAutomationCondition
{
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationCacheRequest)]
internal partial interface IUIAutomationCacheRequest
{
    void AddProperty(int propertyId);

    void AddPattern(int patternId);

    IUIAutomationCacheRequest Clone();

    int get_TreeScope();

    void put_TreeScope(int scope);

    IUIAutomationCondition get_TreeFilter();

    void put_TreeFilter(IUIAutomationCondition filter);

    int get_AutomationElementMode();

    void put_AutomationElementMode(int mode);
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationTreeWalker)]
internal partial interface IUIAutomationTreeWalker
{
    IUIAutomationElement? GetParentElement(IUIAutomationElement element);

    IUIAutomationElement? GetFirstChildElement(IUIAutomationElement element);

    IUIAutomationElement? GetLastChildElement(IUIAutomationElement element);

    IUIAutomationElement? GetNextSiblingElement(IUIAutomationElement element);

    IUIAutomationElement? GetPreviousSiblingElement(IUIAutomationElement element);

    IUIAutomationElement? NormalizeElement(IUIAutomationElement element);

    IUIAutomationElement? GetParentElementBuildCache(IUIAutomationElement element, IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement? GetFirstChildElementBuildCache(IUIAutomationElement element, IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement? GetLastChildElementBuildCache(IUIAutomationElement element, IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement? GetNextSiblingElementBuildCache(IUIAutomationElement element, IUIAutomationCacheRequest cacheRequest);
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationElementArray)]
internal partial interface IUIAutomationElementArray
{
    int get_Length();

    IUIAutomationElement GetElement(int index);
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationElement)]
internal partial interface IUIAutomationElement
{
    void SetFocus();

    void Slot04_GetRuntimeId();

    void Slot05_FindFirst();

    void Slot06_FindAll();

    void Slot07_FindFirstBuildCache();

    void Slot08_FindAllBuildCache();

    IUIAutomationElement BuildUpdatedCache(IUIAutomationCacheRequest cacheRequest);

    void Slot10_GetCurrentPropertyValue();

    void Slot11_GetCurrentPropertyValueEx();

    void Slot12_GetCachedPropertyValue();

    void Slot13_GetCachedPropertyValueEx();

    void Slot14_GetCurrentPatternAs();

    void Slot15_GetCachedPatternAs();

    /// <summary>The pattern's IUnknown pointer (owned: release it), or 0 when the element lacks it.</summary>
    nint GetCurrentPattern(int patternId);

    /// <summary>As <see cref="GetCurrentPattern"/>, from the cache (the pattern must be in the cache request).</summary>
    nint GetCachedPattern(int patternId);

    IUIAutomationElement? GetCachedParent();

    IUIAutomationElementArray? GetCachedChildren();

    int get_CurrentProcessId();

    int get_CurrentControlType();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentLocalizedControlType();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentName();

    void Slot24_CurrentAcceleratorKey();

    void Slot25_CurrentAccessKey();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentHasKeyboardFocus();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsKeyboardFocusable();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsEnabled();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentAutomationId();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentClassName();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentHelpText();

    int get_CurrentCulture();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsControlElement();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsContentElement();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsPassword();

    nint get_CurrentNativeWindowHandle();

    void Slot37_CurrentItemType();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsOffscreen();

    void Slot39_CurrentOrientation();

    void Slot40_CurrentFrameworkId();

    void Slot41_CurrentIsRequiredForForm();

    void Slot42_CurrentItemStatus();

    RECT get_CurrentBoundingRectangle();

    void Slot44_CurrentLabeledBy();

    void Slot45_CurrentAriaRole();

    void Slot46_CurrentAriaProperties();

    void Slot47_CurrentIsDataValidForForm();

    void Slot48_CurrentControllerFor();

    void Slot49_CurrentDescribedBy();

    void Slot50_CurrentFlowsTo();

    void Slot51_CurrentProviderDescription();

    int get_CachedProcessId();

    int get_CachedControlType();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedLocalizedControlType();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedName();

    void Slot56_CachedAcceleratorKey();

    void Slot57_CachedAccessKey();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedHasKeyboardFocus();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsKeyboardFocusable();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsEnabled();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedAutomationId();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedClassName();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedHelpText();

    int get_CachedCulture();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsControlElement();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsContentElement();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsPassword();

    nint get_CachedNativeWindowHandle();

    void Slot69_CachedItemType();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsOffscreen();

    void Slot71_CachedOrientation();

    void Slot72_CachedFrameworkId();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsRequiredForForm();

    void Slot74_CachedItemStatus();

    RECT get_CachedBoundingRectangle();
}

/// <summary>
/// IUIAutomation: every one of its 55 methods holds a slot (IUIAutomation2
/// extends it, and its timeouts come after them all).
/// </summary>
[GeneratedComInterface]
[Guid(UiaIds.IUIAutomation)]
internal partial interface IUIAutomation
{
    [return: MarshalAs(UnmanagedType.Bool)]
    bool CompareElements(IUIAutomationElement el1, IUIAutomationElement el2);

    void Slot04_CompareRuntimeIds();

    IUIAutomationElement GetRootElement();

    IUIAutomationElement ElementFromHandle(nint hwnd);

    IUIAutomationElement ElementFromPoint(POINT pt);

    IUIAutomationElement GetFocusedElement();

    IUIAutomationElement GetRootElementBuildCache(IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement ElementFromHandleBuildCache(nint hwnd, IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement ElementFromPointBuildCache(POINT pt, IUIAutomationCacheRequest cacheRequest);

    IUIAutomationElement GetFocusedElementBuildCache(IUIAutomationCacheRequest cacheRequest);

    IUIAutomationTreeWalker CreateTreeWalker(IUIAutomationCondition condition);

    IUIAutomationTreeWalker get_ControlViewWalker();

    IUIAutomationTreeWalker get_ContentViewWalker();

    IUIAutomationTreeWalker get_RawViewWalker();

    IUIAutomationCondition get_RawViewCondition();

    IUIAutomationCondition get_ControlViewCondition();

    IUIAutomationCondition get_ContentViewCondition();

    IUIAutomationCacheRequest CreateCacheRequest();

    IUIAutomationCondition CreateTrueCondition();

    IUIAutomationCondition CreateFalseCondition();

    void Slot23_CreatePropertyCondition();

    void Slot24_CreatePropertyConditionEx();

    void Slot25_CreateAndCondition();

    void Slot26_CreateAndConditionFromArray();

    void Slot27_CreateAndConditionFromNativeArray();

    void Slot28_CreateOrCondition();

    void Slot29_CreateOrConditionFromArray();

    void Slot30_CreateOrConditionFromNativeArray();

    void Slot31_CreateNotCondition();

    void Slot32_AddAutomationEventHandler();

    void Slot33_RemoveAutomationEventHandler();

    void Slot34_AddPropertyChangedEventHandlerNativeArray();

    void Slot35_AddPropertyChangedEventHandler();

    void Slot36_RemovePropertyChangedEventHandler();

    void Slot37_AddStructureChangedEventHandler();

    void Slot38_RemoveStructureChangedEventHandler();

    void Slot39_AddFocusChangedEventHandler();

    void Slot40_RemoveFocusChangedEventHandler();

    void Slot41_RemoveAllEventHandlers();

    void Slot42_IntNativeArrayToSafeArray();

    void Slot43_IntSafeArrayToNativeArray();

    void Slot44_RectToVariant();

    void Slot45_VariantToRect();

    void Slot46_SafeArrayToRectNativeArray();

    void Slot47_CreateProxyFactoryEntry();

    void Slot48_ProxyFactoryMapping();

    void Slot49_GetPropertyProgrammaticName();

    void Slot50_GetPatternProgrammaticName();

    void Slot51_PollForPotentialSupportedPatterns();

    void Slot52_PollForPotentialSupportedProperties();

    void Slot53_CheckNotSupported();

    void Slot54_ReservedNotSupportedValue();

    void Slot55_ReservedMixedAttributeValue();

    void Slot56_ElementFromIAccessible();

    void Slot57_ElementFromIAccessibleBuildCache();
}

/// <summary>IUIAutomation2 (CUIAutomation8's default interface): the per-call timeouts.</summary>
[GeneratedComInterface]
[Guid(UiaIds.IUIAutomation2)]
internal partial interface IUIAutomation2 : IUIAutomation
{
    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_AutoSetFocus();

    void put_AutoSetFocus([MarshalAs(UnmanagedType.Bool)] bool value);

    uint get_ConnectionTimeout();

    void put_ConnectionTimeout(uint ms);

    uint get_TransactionTimeout();

    void put_TransactionTimeout(uint ms);
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationInvokePattern)]
internal partial interface IUIAutomationInvokePattern
{
    void Invoke();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationExpandCollapsePattern)]
internal partial interface IUIAutomationExpandCollapsePattern
{
    void Expand();

    void Collapse();

    int get_CurrentExpandCollapseState();

    int get_CachedExpandCollapseState();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationScrollItemPattern)]
internal partial interface IUIAutomationScrollItemPattern
{
    void ScrollIntoView();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationSelectionItemPattern)]
internal partial interface IUIAutomationSelectionItemPattern
{
    void Select();

    void AddToSelection();

    void RemoveFromSelection();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsSelected();

    IUIAutomationElement? get_CurrentSelectionContainer();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsSelected();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationTogglePattern)]
internal partial interface IUIAutomationTogglePattern
{
    void Toggle();

    int get_CurrentToggleState();

    int get_CachedToggleState();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationValuePattern)]
internal partial interface IUIAutomationValuePattern
{
    void SetValue([MarshalUsing(typeof(BStrStringMarshaller))] string value);

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CurrentValue();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CurrentIsReadOnly();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? get_CachedValue();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool get_CachedIsReadOnly();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationTextRange)]
internal partial interface IUIAutomationTextRange
{
    IUIAutomationTextRange Clone();

    [return: MarshalAs(UnmanagedType.Bool)]
    bool Compare(IUIAutomationTextRange range);

    int CompareEndpoints(int srcEndPoint, IUIAutomationTextRange range, int targetEndPoint);

    void ExpandToEnclosingUnit(int textUnit);

    void Slot07_FindAttribute();

    void Slot08_FindText();

    void Slot09_GetAttributeValue();

    void Slot10_GetBoundingRectangles();

    IUIAutomationElement? GetEnclosingElement();

    [return: MarshalUsing(typeof(BStrStringMarshaller))]
    string? GetText(int maxLength);

    int Move(int unit, int count);

    int MoveEndpointByUnit(int endpoint, int unit, int count);

    void MoveEndpointByRange(int srcEndPoint, IUIAutomationTextRange range, int targetEndPoint);

    void Select();
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationTextRangeArray)]
internal partial interface IUIAutomationTextRangeArray
{
    int get_Length();

    IUIAutomationTextRange GetElement(int index);
}

[GeneratedComInterface]
[Guid(UiaIds.IUIAutomationTextPattern)]
internal partial interface IUIAutomationTextPattern
{
    IUIAutomationTextRange RangeFromPoint(POINT pt);

    IUIAutomationTextRange RangeFromChild(IUIAutomationElement child);

    IUIAutomationTextRangeArray GetSelection();

    IUIAutomationTextRangeArray GetVisibleRanges();

    IUIAutomationTextRange get_DocumentRange();
}
