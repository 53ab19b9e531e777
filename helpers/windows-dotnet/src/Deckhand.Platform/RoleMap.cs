namespace Deckhand.Platform;

/// <summary>UI Automation control type ids (UIA_*ControlTypeId, uiautomationclient.idl).</summary>
public static class ControlType
{
    public const int Button = 50000, Calendar = 50001, CheckBox = 50002, ComboBox = 50003, Edit = 50004, Hyperlink = 50005,
        Image = 50006, ListItem = 50007, List = 50008, Menu = 50009, MenuBar = 50010, MenuItem = 50011, ProgressBar = 50012,
        RadioButton = 50013, ScrollBar = 50014, Slider = 50015, Spinner = 50016, StatusBar = 50017, Tab = 50018, TabItem = 50019,
        Text = 50020, ToolBar = 50021, ToolTip = 50022, Tree = 50023, TreeItem = 50024, Custom = 50025, Group = 50026,
        Thumb = 50027, DataGrid = 50028, DataItem = 50029, Document = 50030, SplitButton = 50031, Window = 50032, Pane = 50033,
        Header = 50034, HeaderItem = 50035, Table = 50036, TitleBar = 50037, Separator = 50038, SemanticZoom = 50039, AppBar = 50040;

    private static readonly string[] Names =
    {
        "Button", "Calendar", "CheckBox", "ComboBox", "Edit", "Hyperlink", "Image", "ListItem", "List", "Menu", "MenuBar",
        "MenuItem", "ProgressBar", "RadioButton", "ScrollBar", "Slider", "Spinner", "StatusBar", "Tab", "TabItem", "Text",
        "ToolBar", "ToolTip", "Tree", "TreeItem", "Custom", "Group", "Thumb", "DataGrid", "DataItem", "Document",
        "SplitButton", "Window", "Pane", "Header", "HeaderItem", "Table", "TitleBar", "Separator", "SemanticZoom", "AppBar",
    };

    /// <summary>The control type's programmatic name (the node's native_role), never empty.</summary>
    public static string Name(int id) => id >= Button && id <= AppBar ? Names[id - Button] : $"ControlType{id}";
}

/// <summary>The one mapping from UIA's words to the neutral roles.</summary>
public static class RoleMap
{
    /// <summary>
    /// The neutral role of an element: its control type, refined by the facts
    /// UIA gives beside it: IsPassword makes an Edit a secure_text_field, a
    /// Button with the Toggle pattern is a toggle_button, a multi-line Edit
    /// (a Win32 edit or rich edit window with ES_MULTILINE, as classic
    /// Notepad's) is a text_area, a modal Window is a dialog.
    /// </summary>
    public static string Role(int controlType, bool isPassword = false, bool hasToggle = false, bool multiLine = false, bool modal = false)
    {
        if (isPassword)
        {
            return "secure_text_field";
        }
        return controlType switch
        {
            ControlType.Button => hasToggle ? "toggle_button" : "button",
            ControlType.SplitButton => "button",
            ControlType.CheckBox => "checkbox",
            ControlType.RadioButton => "radio",
            ControlType.Edit => multiLine ? "text_area" : "text_field",
            ControlType.ComboBox => "combo_box",
            ControlType.List or ControlType.SemanticZoom => "list",
            ControlType.ListItem => "list_item",
            ControlType.MenuBar => "menu_bar",
            ControlType.Menu => "menu",
            ControlType.MenuItem => "menu_item",
            ControlType.TabItem => "tab",
            ControlType.Tab => "tab_list",
            ControlType.Slider => "slider",
            ControlType.Spinner => "spin_button",
            ControlType.ScrollBar => "scroll_bar",
            ControlType.Hyperlink => "link",
            ControlType.Image => "image",
            ControlType.Table or ControlType.DataGrid or ControlType.Calendar => "table",
            ControlType.DataItem => "row",
            ControlType.HeaderItem => "column_header",
            ControlType.Header => "group",
            ControlType.Tree => "tree",
            ControlType.TreeItem => "tree_item",
            ControlType.Window => modal ? "dialog" : "window",
            ControlType.Group => "group",
            ControlType.ToolBar or ControlType.AppBar => "toolbar",
            ControlType.Text => "label",
            ControlType.Document => "document",
            ControlType.ProgressBar => "progress_bar",
            ControlType.Separator => "separator",
            ControlType.StatusBar => "status_bar",
            ControlType.Pane => "container",
            _ => "other", // Custom, Thumb, TitleBar, ToolTip and ids newer than this table
        };
    }
}

/// <summary>UIA pattern ids (UIA_*PatternId).</summary>
public static class PatternId
{
    public const int Invoke = 10000, Value = 10002, ExpandCollapse = 10005, SelectionItem = 10010, Text = 10014, Toggle = 10015, ScrollItem = 10017;
}

/// <summary>What the cache of one element says, for states and actions.</summary>
public sealed record ElementFacts
{
    public bool Enabled { get; init; }
    public bool HasKeyboardFocus { get; init; }
    public bool KeyboardFocusable { get; init; }
    public bool Offscreen { get; init; }
    public bool Password { get; init; }
    public bool RequiredForForm { get; init; }
    public bool Modal { get; init; }
    /// <summary>ToggleState: 0 off, 1 on, 2 indeterminate; null without the Toggle pattern.</summary>
    public int? ToggleState { get; init; }
    /// <summary>ExpandCollapseState: 0 collapsed, 1 expanded, 2 partially expanded, 3 leaf; null without the pattern.</summary>
    public int? ExpandCollapseState { get; init; }
    /// <summary>SelectionItem.IsSelected; null without the pattern.</summary>
    public bool? Selected { get; init; }
    /// <summary>Value.IsReadOnly; null without the Value pattern.</summary>
    public bool? ValueReadOnly { get; init; }
    public bool HasInvoke { get; init; }
    public bool HasScrollItem { get; init; }
    public bool HasText { get; init; }
}

public static class StateMap
{
    /// <summary>The neutral states of an element, in the vocabulary's order.</summary>
    public static List<string> States(ElementFacts f)
    {
        var s = new List<string>();
        if (f.HasKeyboardFocus) s.Add("focused");
        if (f.KeyboardFocusable) s.Add("focusable");
        if (f.ToggleState == 1) s.Add("checked");
        if (f.ToggleState == 2) s.Add("mixed");
        if (f.Enabled) s.Add("enabled");
        if (f.ValueReadOnly == false) s.Add("editable");
        if (f.ValueReadOnly == true) s.Add("read_only");
        if (f.Selected == true) s.Add("selected");
        if (f.Selected is not null) s.Add("selectable");
        if (f.ExpandCollapseState is 0 or 1 or 2) s.Add("expandable");
        if (f.ExpandCollapseState is 1 or 2) s.Add("expanded");
        if (f.ExpandCollapseState == 0) s.Add("collapsed");
        s.Add(f.Offscreen ? "offscreen" : "visible");
        if (f.Password) s.Add("secure");
        if (f.Modal) s.Add("modal");
        if (f.RequiredForForm) s.Add("required");
        return s;
    }

    /// <summary>
    /// The element's actions as {name, native}: the native name is what
    /// element_action's `secondary` takes (<see cref="NativeAction"/>).
    /// </summary>
    public static List<(string Name, string Native)> Actions(ElementFacts f)
    {
        var a = new List<(string, string)>();
        if (f.HasInvoke) a.Add(("press", NativeAction.Invoke));
        if (f.ToggleState is not null) a.Add(("toggle", NativeAction.Toggle));
        if (f.ExpandCollapseState is 0 or 1 or 2)
        {
            a.Add(("expand", NativeAction.Expand));
            a.Add(("collapse", NativeAction.Collapse));
        }
        if (f.Selected is not null) a.Add(("select", NativeAction.Select));
        if (f.HasScrollItem) a.Add(("scroll_into_view", NativeAction.ScrollIntoView));
        if (f.KeyboardFocusable) a.Add(("focus", NativeAction.SetFocus));
        return a;
    }
}

/// <summary>The UIA methods element_action runs, by the names nodes advertise.</summary>
public static class NativeAction
{
    public const string Invoke = "Invoke";
    public const string Toggle = "Toggle";
    public const string Expand = "Expand";
    public const string Collapse = "Collapse";
    public const string Select = "Select";
    public const string ScrollIntoView = "ScrollIntoView";
    public const string SetFocus = "SetFocus";

    public static readonly IReadOnlyList<string> All = new[] { Invoke, Toggle, Expand, Collapse, Select, ScrollIntoView, SetFocus };
}
