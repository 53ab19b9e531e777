//! AT-SPI (and this helper's X11 probes) -> the platform-neutral vocabulary
//! of protocol 2.0 (`wire::vocabulary`, mirroring src/wire/vocabulary.ts).
//!
//! The only place AT-SPI words become wire words. Everything else in the
//! helper (the press-like action choice of `click`, secure detection, noise
//! and huge-node rules, toolkit quirks, locator checks by native role) keeps
//! reasoning on AT-SPI's own role, state and action names; the wire carries
//! the neutral words plus the natives (`native_role`, `actions[].native`).

use crate::atspi::actions::{ENTRY_ROLES, TOGGLE_ROLES};
use crate::wire::vocabulary::{ActionName, Role, State};

/// The neutral role of an AT-SPI role name (as libatspi spells it: "push
/// button", "page tab list"...). `multi_line` / `editable`: the node's
/// MULTI_LINE / EDITABLE states (a text entry is a text area when multi-line;
/// a paragraph is a text area when editable, else a label).
pub fn role(native_role: &str, multi_line: bool, editable: bool) -> Role {
    match native_role {
        "push button" | "button" | "push button menu" => Role::Button,
        "toggle button" => Role::ToggleButton,
        "check box" => Role::Checkbox,
        "radio button" => Role::Radio,
        "menu item" | "check menu item" | "radio menu item" | "tearoff menu item" => Role::MenuItem,
        "text" | "entry" if multi_line => Role::TextArea,
        "text" | "entry" => Role::TextField,
        "password text" => Role::SecureTextField,
        "terminal" => Role::TextArea,
        "paragraph" if editable => Role::TextArea,
        "paragraph" => Role::Label,
        "page tab" => Role::Tab,
        "page tab list" => Role::TabList,
        "table cell" | "row header" | "table row header" => Role::Cell,
        "table row" => Role::Row,
        "column header" | "table column header" => Role::ColumnHeader,
        "frame" | "window" | "internal frame" => Role::Window,
        "dialog" | "alert" | "file chooser" => Role::Dialog,
        // Web content: Return in one of its fields submits its form (sensitive-action detection).
        "document web" | "document frame" => Role::WebDocument,
        "form" => Role::Form,
        "document text" | "document spreadsheet" | "document presentation" | "document email" => Role::Document,
        "heading" => Role::Heading,
        "status bar" => Role::StatusBar,
        "separator" => Role::Separator,
        "label" | "static" | "caption" | "accelerator label" => Role::Label,
        "icon" | "image" | "desktop icon" | "image map" => Role::Image,
        "filler" | "panel" | "scroll pane" | "viewport" | "layered pane" | "split pane" | "glass pane" | "root pane" | "html container" | "section"
        | "redundant object" | "unknown" | "invalid" => Role::Container,
        "combo box" | "autocomplete" => Role::ComboBox,
        "list box" | "list" => Role::List,
        "list item" => Role::ListItem,
        "tree" | "tree table" => Role::Tree,
        "tree item" => Role::TreeItem,
        "menu bar" => Role::MenuBar,
        "menu" | "popup menu" => Role::Menu,
        "slider" => Role::Slider,
        "spin button" => Role::SpinButton,
        "scroll bar" => Role::ScrollBar,
        "link" => Role::Link,
        "table" => Role::Table,
        "tool bar" => Role::Toolbar,
        "progress bar" | "level bar" => Role::ProgressBar,
        "grouping" | "landmark" | "article" | "block quote" | "header" | "footer" | "description list" | "page" | "info bar"
        | "option pane" => Role::Group,
        _ => Role::Other,
    }
}

/// The neutral states of a node from its AT-SPI state names ("read-only",
/// "is-default"...), in the contract's order, each once. GTK's "sensitive"
/// alone also counts as enabled; "showing" or "visible" is `visible`. A
/// secure node (`secure`: role password text) also gets `secure`. Every other
/// AT-SPI state is dropped.
pub fn states<'a>(native: impl IntoIterator<Item = &'a str>, secure: bool) -> Vec<State> {
    let mut out: Vec<State> = Vec::new();
    for n in native {
        let s = match n {
            "focused" => State::Focused,
            "focusable" => State::Focusable,
            "checked" => State::Checked,
            "indeterminate" => State::Mixed,
            "pressed" => State::Pressed,
            "enabled" | "sensitive" => State::Enabled,
            "editable" => State::Editable,
            "read-only" => State::ReadOnly,
            "multi-line" => State::MultiLine,
            "selected" => State::Selected,
            "selectable" => State::Selectable,
            "expandable" => State::Expandable,
            "expanded" => State::Expanded,
            "collapsed" => State::Collapsed,
            "showing" | "visible" => State::Visible,
            "is-default" => State::Default,
            "modal" => State::Modal,
            "required" => State::Required,
            "invalid-entry" => State::Invalid,
            "busy" => State::Busy,
            _ => continue,
        };
        out.push(s);
    }
    if secure {
        out.push(State::Secure);
    }
    out.sort();
    out.dedup();
    out
}

/// The neutral name of an advertised AT-SPI action (its untranslated name,
/// Action.GetName; case, spaces, '-' and '_' do not matter) on a node of
/// role `native_role`. Anything not named here is `Other`: its native name
/// still lets a caller invoke it (`secondary`). An entry's "activate" is
/// Enter, not a press (`actions::ENTRY_ROLES`: `click` never runs it), and
/// "check" / "uncheck" are a press only on the roles `click` checks with them.
pub fn action(native: &str, native_role: &str) -> ActionName {
    let key: String = native.chars().filter(|c| !matches!(c, ' ' | '-' | '_')).flat_map(char::to_lowercase).collect();
    match key.as_str() {
        "activate" if ENTRY_ROLES.contains(&native_role) => ActionName::Other,
        "click" | "press" | "activate" | "jump" | "dodefault" => ActionName::Press,
        "toggle" => ActionName::Toggle,
        // Browsers name a check box's press by its effect (Firefox, Chromium).
        "check" | "uncheck" if TOGGLE_ROLES.contains(&native_role) => ActionName::Toggle,
        "expandorcontract" | "expandorcollapse" => ActionName::ExpandCollapse,
        "expand" => ActionName::Expand,
        "collapse" => ActionName::Collapse,
        "showcontextmenu" | "showmenu" | "menu" | "popup" => ActionName::ShowMenu,
        "increment" | "increase" => ActionName::Increment,
        "decrement" | "decrease" => ActionName::Decrement,
        "select" => ActionName::Select,
        "focus" | "setfocus" => ActionName::Focus,
        // Only an action that brings the node into view; "scroll left",
        // "scroll forward"... move a scrollable and are `Other`.
        "scrollintoview" | "scrolltovisible" => ActionName::ScrollIntoView,
        _ => ActionName::Other,
    }
}

/// A localized action name (Action.GetActions) that is, ignoring case, one of
/// the untranslated names toolkits use (exact spellings: a camelCase native
/// such as Chromium's "showContextMenu" is not lowercased): its lowercase form is the native name. None: ask GetName.
pub fn untranslated_action(localized: &str) -> Option<String> {
    const KNOWN: &[&str] = &[
        "click", "press", "activate", "toggle", "jump", "check", "uncheck", "expand or contract", "expand", "collapse",
        "show menu", "menu", "popup", "increment", "decrement", "select", "focus", "scroll into view", "customize",
    ];
    let lower = localized.trim().to_lowercase();
    KNOWN.contains(&lower.as_str()).then_some(lower)
}

/// The neutral shortcut of a menu item, from its AT-SPI key binding
/// (Action.GetKeyBinding, also the third string of each GetActions entry).
///
/// ATK (GTK 3, at-spi2-atk) gives three fields, "mnemonic;mnemonic from the
/// menu bar;accelerator" ("s;<Alt>f:s;<Primary>s"): the third, in GTK's
/// accelerator syntax, is the shortcut (empty: none). Qt 5 gives one field:
/// the item's mnemonic ("Alt+F") when its label has one, else its shortcut
/// ("Ctrl+Shift+S", "Ctrl++", "Ctrl+K, Ctrl+C"): a lone alt + letter or
/// digit in that form is the mnemonic, not a shortcut (None), and the
/// shortcut of an item with a mnemonic cannot be read at all.
///
/// The result uses deckhand's key names (src/protocol/keys.ts, what hotkey
/// takes): modifiers ctrl, alt, shift, super in that order, then the key (a
/// lower-case letter, or a name: "Delete", "Page_Up", "F11", "plus"), joined
/// by "+": "ctrl+shift+s". A sequence of chords is space-separated. None:
/// no shortcut, or one this mapping cannot read.
pub fn shortcut(binding: &str) -> Option<String> {
    let fields: Vec<&str> = binding.split(';').collect();
    if fields.len() >= 3 {
        return gtk_accelerator(fields[2].trim());
    }
    let text = fields[0].trim();
    if text.is_empty() {
        return None;
    }
    let chords: Vec<&str> = text.split(", ").map(str::trim).filter(|c| !c.is_empty()).collect();
    let mut out = Vec::new();
    for c in &chords {
        let (mods, key) = qt_chord(c)?;
        // Qt's form of a mnemonic: the label's underlined character with alt.
        if chords.len() == 1 && mods == ["alt"] && key.chars().count() == 1 && key.chars().all(char::is_alphanumeric) {
            return None;
        }
        out.push(join_chord(&mods, &key));
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// Modifier names of both syntaxes -> deckhand's.
fn modifier(name: &str) -> Option<&'static str> {
    match name.to_ascii_lowercase().as_str() {
        "primary" | "control" | "ctrl" | "ctl" => Some("ctrl"),
        "shift" | "shft" => Some("shift"),
        "alt" | "mod1" => Some("alt"),
        "super" | "meta" | "hyper" | "mod4" => Some("super"),
        _ => None,
    }
}

/// A key name of either syntax -> deckhand's (X keysym names, as keys.ts
/// spells them; one letter lower-case).
fn key_name(raw: &str) -> Option<String> {
    let k = raw.trim();
    if k.is_empty() {
        return None;
    }
    if k.chars().count() == 1 {
        let c = k.chars().next()?;
        return Some(match c {
            '+' => "plus".into(),
            ' ' => "space".into(),
            c if c.is_ascii_alphabetic() => c.to_ascii_lowercase().to_string(),
            c => c.to_string(),
        });
    }
    let named = match k.to_ascii_lowercase().as_str() {
        "pgup" | "page up" | "page_up" | "prior" => "Page_Up",
        "pgdown" | "pgdn" | "page down" | "page_down" | "next" => "Page_Down",
        "del" | "delete" => "Delete",
        "ins" | "insert" => "Insert",
        "esc" | "escape" => "Escape",
        "backspace" => "BackSpace",
        "return" | "enter" => "Return",
        "space" => "space",
        "tab" => "Tab",
        "backtab" | "iso_left_tab" => "ISO_Left_Tab",
        "home" => "Home",
        "end" => "End",
        "left" => "Left",
        "right" => "Right",
        "up" => "Up",
        "down" => "Down",
        "print" => "Print",
        "menu" => "Menu",
        _ => "",
    };
    if !named.is_empty() {
        return Some(named.into());
    }
    // F1..F35 in any case; any other keysym name as it is (GTK gives X
    // keysym names: "plus", "minus", "KP_Add").
    if let Some(n) = k.strip_prefix(['F', 'f']).filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())) {
        return Some(format!("F{}", n.trim_start_matches('0')));
    }
    k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_').then(|| k.to_string())
}

fn join_chord(mods: &[&'static str], key: &str) -> String {
    let mut parts: Vec<&str> = ["ctrl", "alt", "shift", "super"].into_iter().filter(|m| mods.contains(m)).collect();
    parts.push(key);
    parts.join("+")
}

/// GTK's accelerator syntax: "<Primary><Shift>s", "Delete", "F11". None for
/// an empty one or a modifier this mapping does not know.
fn gtk_accelerator(accel: &str) -> Option<String> {
    let mut rest = accel;
    let mut mods: Vec<&'static str> = Vec::new();
    while let Some(r) = rest.strip_prefix('<') {
        let end = r.find('>')?;
        let name = &r[..end];
        if !name.eq_ignore_ascii_case("release") {
            mods.push(modifier(name)?);
        }
        rest = &r[end + 1..];
    }
    let key = key_name(rest)?;
    Some(join_chord(&mods, &key))
}

/// One Qt chord ("Ctrl+Shift+S", "Ctrl++", "Alt+Right"): modifiers, key.
fn qt_chord(chord: &str) -> Option<(Vec<&'static str>, String)> {
    let mut rest = chord;
    let mut mods: Vec<&'static str> = Vec::new();
    loop {
        let Some(plus) = rest.find('+') else { break };
        // "Ctrl++": the key is "+" itself.
        if plus == 0 {
            break;
        }
        let Some(m) = modifier(&rest[..plus]) else { break };
        mods.push(m);
        rest = &rest[plus + 1..];
    }
    let key = key_name(rest)?;
    Some((mods, key))
}

/// The neutral id of one of this helper's permission checks (its own,
/// platform id goes to `native_id`).
pub fn permission_id(native_id: &str) -> &str {
    match native_id {
        "atspi_bus" => "accessibility",
        "x_display" => "display",
        // ---- issue 19: the Wayland backend's checks
        "wayland_compositor" => "display",
        "wayland_input" => "input_injection",
        "wayland_capture" => "screen_capture_occluded",
        // ---- end Wayland
        "accessibility_enabled" => "accessibility_enabled",
        "xtest" => "input_injection",
        "composite" => "screen_capture_occluded",
        "mit_shm" => "screen_capture_fast",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn localized_names_known_ignoring_case_skip_getname() {
        assert_eq!(super::untranslated_action("Click").as_deref(), Some("click"));
        assert_eq!(super::untranslated_action("Expand or Contract").as_deref(), Some("expand or contract"));
        // A translated name, or a mixed-case native one, is asked for by GetName.
        assert_eq!(super::untranslated_action("Klicken"), None);
        assert_eq!(super::untranslated_action("showContextMenu"), None);
    }

    use super::*;
    use crate::wire::vocabulary::PERMISSION_IDS;

    #[test]
    fn roles() {
        let r = |n: &str| role(n, false, false);
        for (native, want) in [
            ("push button", Role::Button),
            ("button", Role::Button),
            ("toggle button", Role::ToggleButton),
            ("check box", Role::Checkbox),
            ("radio button", Role::Radio),
            ("check menu item", Role::MenuItem),
            ("radio menu item", Role::MenuItem),
            ("menu item", Role::MenuItem),
            ("text", Role::TextField),
            ("entry", Role::TextField),
            ("password text", Role::SecureTextField),
            ("page tab", Role::Tab),
            ("page tab list", Role::TabList),
            ("table cell", Role::Cell),
            ("table row", Role::Row),
            ("column header", Role::ColumnHeader),
            ("table column header", Role::ColumnHeader),
            ("frame", Role::Window),
            ("window", Role::Window),
            ("dialog", Role::Dialog),
            ("alert", Role::Dialog),
            ("file chooser", Role::Dialog),
            ("terminal", Role::TextArea),
            ("document web", Role::WebDocument),
            ("document frame", Role::WebDocument),
            ("document text", Role::Document),
            ("document spreadsheet", Role::Document),
            ("document presentation", Role::Document),
            ("document email", Role::Document),
            ("paragraph", Role::Label),
            ("heading", Role::Heading),
            ("status bar", Role::StatusBar),
            ("separator", Role::Separator),
            ("label", Role::Label),
            ("static", Role::Label),
            ("caption", Role::Label),
            ("icon", Role::Image),
            ("image", Role::Image),
            ("filler", Role::Container),
            ("panel", Role::Container),
            ("scroll pane", Role::Container),
            ("viewport", Role::Container),
            ("layered pane", Role::Container),
            ("split pane", Role::Container),
            ("section", Role::Container),
            ("redundant object", Role::Container),
            ("unknown", Role::Container),
            ("invalid", Role::Container),
            ("combo box", Role::ComboBox),
            ("list box", Role::List),
            ("list", Role::List),
            ("list item", Role::ListItem),
            ("tree", Role::Tree),
            ("tree table", Role::Tree),
            ("tree item", Role::TreeItem),
            ("menu bar", Role::MenuBar),
            ("menu", Role::Menu),
            ("popup menu", Role::Menu),
            ("slider", Role::Slider),
            ("spin button", Role::SpinButton),
            ("scroll bar", Role::ScrollBar),
            ("link", Role::Link),
            ("table", Role::Table),
            ("tool bar", Role::Toolbar),
            ("progress bar", Role::ProgressBar),
            ("grouping", Role::Group),
            ("form", Role::Form),
            ("landmark", Role::Group),
            ("article", Role::Group),
            ("calendar", Role::Other),
            ("tool tip", Role::Other),
            ("application", Role::Other),
            ("some future role", Role::Other),
            ("", Role::Other),
        ] {
            assert_eq!(r(native), want, "{native:?}");
        }
        // Multi-line entries are text areas; an editable paragraph too.
        assert_eq!(role("text", true, true), Role::TextArea);
        assert_eq!(role("entry", true, false), Role::TextArea);
        assert_eq!(role("text", false, true), Role::TextField);
        assert_eq!(role("paragraph", true, true), Role::TextArea);
        assert_eq!(role("paragraph", true, false), Role::Label);
        // Neither state changes a password field or a terminal.
        assert_eq!(role("password text", true, true), Role::SecureTextField);
        assert_eq!(role("terminal", false, false), Role::TextArea);
        // Most role names libatspi knows have a word of their own; the rest
        // (calendar, canvas, chart, math, tool tip, title bar...) are other.
        let known = (0..=130u32).filter_map(|n| ::atspi::Role::try_from(n).ok()).map(|r| crate::atspi::tree::role_name(r as u32)).collect::<Vec<_>>();
        let other: Vec<&str> = known.iter().copied().filter(|n| r(n) == Role::Other).collect();
        assert!(known.len() > 120, "{}", known.len());
        assert!(other.len() < 45, "left as other: {other:?}");
    }

    #[test]
    fn states_are_neutral_ordered_and_deduplicated() {
        let s = |v: &[&str], secure: bool| states(v.iter().copied(), secure);
        assert_eq!(
            s(&["visible", "showing", "sensitive", "enabled", "focused", "focusable", "active", "resizable", "single-line"], false),
            [State::Focused, State::Focusable, State::Enabled, State::Visible]
        );
        // GTK's "sensitive" alone is enabled.
        assert_eq!(s(&["sensitive"], false), [State::Enabled]);
        assert_eq!(s(&["checked", "indeterminate", "pressed"], false), [State::Checked, State::Mixed, State::Pressed]);
        assert_eq!(s(&["read-only", "multi-line", "editable"], false), [State::Editable, State::ReadOnly, State::MultiLine]);
        assert_eq!(
            s(&["selected", "selectable", "expandable", "expanded", "collapsed"], false),
            [State::Selected, State::Selectable, State::Expandable, State::Expanded, State::Collapsed]
        );
        assert_eq!(
            s(&["is-default", "modal", "required", "invalid-entry", "busy"], false),
            [State::Modal, State::Default, State::Required, State::Invalid, State::Busy]
        );
        // Dropped: AT-SPI states with no neutral word.
        assert!(s(&["armed", "defunct", "horizontal", "vertical", "manages-descendants", "transient", "stale", "has-popup", "checkable"], false).is_empty());
        // A secure node says so.
        assert_eq!(s(&["editable", "focused"], true), [State::Focused, State::Editable, State::Secure]);
        // Every name the state helper produces is either mapped or deliberately dropped.
        let all = crate::atspi::tree::state_names(u64::MAX);
        assert!(all.iter().any(|n| n == "read-only") && all.iter().any(|n| n == "is-default") && all.iter().any(|n| n == "invalid-entry"), "{all:?}");
        assert_eq!(states(all.iter().map(String::as_str), false).len(), 20, "every neutral state but offscreen and secure");
    }

    #[test]
    fn actions() {
        for (native, role_, want) in [
            ("click", "push button", ActionName::Press),
            ("Click", "push button", ActionName::Press),
            ("press", "combo box", ActionName::Press),
            ("activate", "menu item", ActionName::Press),
            ("jump", "link", ActionName::Press),
            ("doDefault", "push button", ActionName::Press),
            ("toggle", "toggle button", ActionName::Toggle),
            ("check", "check box", ActionName::Toggle),
            ("uncheck", "check box", ActionName::Toggle),
            ("check", "push button", ActionName::Other),
            ("expand or contract", "tree item", ActionName::ExpandCollapse),
            ("expand", "tree item", ActionName::Expand),
            ("collapse", "tree item", ActionName::Collapse),
            ("showContextMenu", "link", ActionName::ShowMenu),
            ("menu", "push button", ActionName::ShowMenu),
            ("popup", "combo box", ActionName::ShowMenu),
            ("ShowMenu", "push button", ActionName::ShowMenu),
            ("increment", "spin button", ActionName::Increment),
            ("decrement", "spin button", ActionName::Decrement),
            ("Increase", "slider", ActionName::Increment),
            ("select", "radio button", ActionName::Select),
            ("focus", "text", ActionName::Focus),
            ("SetFocus", "push button", ActionName::Focus),
            ("scrollIntoView", "list item", ActionName::ScrollIntoView),
            ("scroll_into_view", "list item", ActionName::ScrollIntoView),
            // Scrolls something, not into view.
            ("Scroll Left", "scroll bar", ActionName::Other),
            ("scroll forward", "list", ActionName::Other),
            // An entry's activate is Enter (see actions::ENTRY_ROLES).
            ("activate", "text", ActionName::Other),
            ("activate", "password text", ActionName::Other),
            ("activate", "spin button", ActionName::Other),
            ("click ancestor", "text", ActionName::Other),
            ("clickAncestor", "paragraph", ActionName::Other),
            ("open", "combo box", ActionName::Other),
            ("undo", "frame", ActionName::Other),
            ("", "push button", ActionName::Other),
        ] {
            assert_eq!(action(native, role_), want, "{native:?} on {role_:?}");
        }
    }

    /// Every action `click` would run is one the wire calls a press or a
    /// toggle (the orchestrator's PRESS_ACTIONS), and the reverse.
    #[test]
    fn press_agrees_with_click() {
        use crate::atspi::actions::press_like;
        for role_ in ["push button", "check box", "radio button", "text", "link", "menu item", "combo box"] {
            for name in ["click", "press", "activate", "toggle", "jump", "check", "uncheck", "open", "menu", "expand", "Click"] {
                let clicks = press_like(&[name.to_string()], role_).is_some();
                let pressy = matches!(action(name, role_), ActionName::Press | ActionName::Toggle);
                assert_eq!(clicks, pressy, "{name:?} on {role_:?}");
            }
        }
    }

    /// Key bindings as GTK 3 (ATK's three fields) and Qt 5 (one field) give
    /// them, read live from mousepad, featherpad and the fixtures.
    #[test]
    fn shortcuts() {
        for (binding, want) in [
            // GTK 3: the third field is the accelerator.
            ("s;<Alt>f:s;<Primary>s", Some("ctrl+s")),
            ("a;<Alt>f:a;<Primary><Shift>s", Some("ctrl+shift+s")),
            ("d;<Alt>e:d;Delete", Some("Delete")),
            ("f;<Alt>v:f;F11", Some("F11")),
            ("u;<Alt>e:m:u;<Alt>Up", Some("alt+Up")),
            ("o;<Alt>e:r:o;<Primary><Alt>u", Some("ctrl+alt+u")),
            ("t;<Alt>f:t;<Control>w", Some("ctrl+w")),
            ("x;<Alt>v:x;<Shift><Primary>Page_Up", Some("ctrl+shift+Page_Up")),
            ("z;<Alt>v:z;<Primary>plus", Some("ctrl+plus")),
            ("p;<Alt>f:p;<Super>p", Some("super+p")),
            // No accelerator: a menu bar's item, an item with a mnemonic only.
            ("<Alt>f;<Alt>f;", None),
            ("w;<Alt>d:w;", None),
            ("", None),
            (";;", None),
            // An unknown modifier is not guessed.
            ("q;;<Wobble>q", None),
            // Qt 5: one field, the shortcut...
            ("Ctrl+N", Some("ctrl+n")),
            ("Ctrl+Shift+S", Some("ctrl+shift+s")),
            ("Ctrl+Alt+P", Some("ctrl+alt+p")),
            ("Alt+Right", Some("alt+Right")),
            ("Ctrl++", Some("ctrl+plus")),
            ("Ctrl+PgUp", Some("ctrl+Page_Up")),
            ("Del", Some("Delete")),
            ("F2", Some("F2")),
            ("Meta+E", Some("super+e")),
            ("Shift+Alt+Q", Some("alt+shift+q")),
            ("Ctrl+K, Ctrl+C", Some("ctrl+k ctrl+c")),
            // ...or the label's mnemonic, which is not a shortcut.
            ("Alt+F", None),
            ("Alt+p", None),
            ("Alt+1", None),
        ] {
            assert_eq!(shortcut(binding).as_deref(), want, "{binding:?}");
        }
    }

    #[test]
    fn permission_ids() {
        for (native, neutral) in [
            ("atspi_bus", "accessibility"),
            ("x_display", "display"),
            ("accessibility_enabled", "accessibility_enabled"),
            ("xtest", "input_injection"),
            ("composite", "screen_capture_occluded"),
            ("mit_shm", "screen_capture_fast"),
        ] {
            assert_eq!(permission_id(native), neutral);
            assert!(PERMISSION_IDS.contains(&neutral));
        }
        assert_eq!(permission_id("something_new"), "something_new");
    }
}
