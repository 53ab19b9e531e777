namespace Deckhand.Platform;

/// <summary>
/// The neutral words of the wire (src/wire/vocabulary.ts; `vocabulary` in
/// helpers/protocol/schema.json). deckhand decides on these only; the UIA
/// words (ControlType and pattern method names) travel beside them.
/// </summary>
public static class Vocabulary
{
    public static readonly IReadOnlyList<string> Roles = new[]
    {
        "button", "toggle_button", "checkbox", "radio", "text_field", "secure_text_field", "text_area", "combo_box",
        "list", "list_item", "menu_bar", "menu", "menu_item", "tab", "tab_list", "slider", "spin_button", "scroll_bar",
        "link", "image", "table", "row", "cell", "column_header", "tree", "tree_item", "window", "dialog", "group",
        "toolbar", "label", "heading", "document", "web_document", "form", "progress_bar", "separator", "status_bar",
        "container", "other",
    };

    public static readonly IReadOnlyList<string> States = new[]
    {
        "focused", "focusable", "checked", "mixed", "pressed", "enabled", "editable", "read_only", "multi_line",
        "selected", "selectable", "expandable", "expanded", "collapsed", "visible", "offscreen", "secure", "modal",
        "default", "required", "invalid", "busy",
    };

    public static readonly IReadOnlyList<string> Actions = new[]
    {
        "press", "toggle", "expand", "collapse", "expand_collapse", "select", "show_menu", "increment", "decrement",
        "focus", "scroll_into_view", "other",
    };

    public static readonly IReadOnlyList<string> PermissionIds = new[]
    {
        "display", "accessibility", "accessibility_enabled", "input_injection", "screen_capture",
        "screen_capture_occluded", "screen_capture_fast", "input_monitoring",
    };
}
