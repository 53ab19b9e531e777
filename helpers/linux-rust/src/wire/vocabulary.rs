//! The platform-neutral vocabulary of protocol 2.0, mirroring
//! src/wire/vocabulary.ts (ROLES, STATES, ACTIONS, PERMISSION_IDS): the words
//! the wire carries. How AT-SPI's words map to them is `atspi::vocabulary`.
//!
//! Decoding is tolerant, as the contract's parsers are: an unknown role or
//! action name (a newer helper's word) reads as `Other`; an unknown state is
//! dropped from a node's states (`decode_states`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An enum of wire words: `as_str`, `parse` (None when unknown), `ALL`, and
/// serde as the word itself.
macro_rules! vocabulary {
    ($(#[$m:meta])* $name:ident { $($variant:ident = $word:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            /// Every word, in the contract's order.
            #[allow(dead_code)]
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }

            /// The word's value; None when this helper does not know it.
            pub fn parse(s: &str) -> Option<$name> {
                match s {
                    $($word => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

vocabulary!(
    /// A node's role (vocabulary.ts ROLES).
    Role {
        Button = "button",
        ToggleButton = "toggle_button",
        Checkbox = "checkbox",
        Radio = "radio",
        TextField = "text_field",
        SecureTextField = "secure_text_field",
        TextArea = "text_area",
        ComboBox = "combo_box",
        List = "list",
        ListItem = "list_item",
        MenuBar = "menu_bar",
        Menu = "menu",
        MenuItem = "menu_item",
        Tab = "tab",
        TabList = "tab_list",
        Slider = "slider",
        SpinButton = "spin_button",
        ScrollBar = "scroll_bar",
        Link = "link",
        Image = "image",
        Table = "table",
        Row = "row",
        Cell = "cell",
        ColumnHeader = "column_header",
        Tree = "tree",
        TreeItem = "tree_item",
        Window = "window",
        Dialog = "dialog",
        Group = "group",
        Toolbar = "toolbar",
        Label = "label",
        Heading = "heading",
        Document = "document",
        WebDocument = "web_document",
        Form = "form",
        ProgressBar = "progress_bar",
        Separator = "separator",
        StatusBar = "status_bar",
        Container = "container",
        Other = "other",
    }
);

vocabulary!(
    /// A node's state (vocabulary.ts STATES).
    State {
        Focused = "focused",
        Focusable = "focusable",
        Checked = "checked",
        Mixed = "mixed",
        Pressed = "pressed",
        Enabled = "enabled",
        Editable = "editable",
        ReadOnly = "read_only",
        MultiLine = "multi_line",
        Selected = "selected",
        Selectable = "selectable",
        Expandable = "expandable",
        Expanded = "expanded",
        Collapsed = "collapsed",
        Visible = "visible",
        Offscreen = "offscreen",
        Secure = "secure",
        Modal = "modal",
        Default = "default",
        Required = "required",
        Invalid = "invalid",
        Busy = "busy",
    }
);

vocabulary!(
    /// What an advertised action does (vocabulary.ts ACTIONS).
    ActionName {
        Press = "press",
        Toggle = "toggle",
        Expand = "expand",
        Collapse = "collapse",
        ExpandCollapse = "expand_collapse",
        Select = "select",
        ShowMenu = "show_menu",
        Increment = "increment",
        Decrement = "decrement",
        Focus = "focus",
        ScrollIntoView = "scroll_into_view",
        Other = "other",
    }
);

/// Neutral permission check ids (vocabulary.ts PERMISSION_IDS).
#[allow(dead_code)]
pub const PERMISSION_IDS: &[&str] = &[
    "display",
    "accessibility",
    "accessibility_enabled",
    "input_injection",
    "screen_capture",
    "screen_capture_occluded",
    "screen_capture_fast",
    "input_monitoring",
];

/// An unknown role reads as `Other` (a newer helper's word).
impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Role::parse(&String::deserialize(d)?).unwrap_or(Role::Other))
    }
}

/// An unknown action name reads as `Other` (its native name still says which).
impl<'de> Deserialize<'de> for ActionName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ActionName::parse(&String::deserialize(d)?).unwrap_or(ActionName::Other))
    }
}

/// A lone state must be a known one; in a node's list unknown ones are
/// dropped instead (`decode_states`).
impl<'de> Deserialize<'de> for State {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        State::parse(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown state {s:?}")))
    }
}

/// `deserialize_with` for a node's states: unknown words are dropped, not refused.
pub fn decode_states<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<State>, D::Error> {
    let words: Vec<String> = Vec::deserialize(d)?;
    Ok(words.iter().filter_map(|w| State::parse(w)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The generated schema's vocabulary (from vocabulary.ts) is exactly ours.
    #[test]
    fn same_words_as_the_contract() {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../protocol/schema.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            eprintln!("SKIPPED: no {} (generate it with the orchestrator's gen-protocol script)", path.display());
            return;
        };
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let voc = &schema["vocabulary"];
        let words = |key: &str| -> Vec<String> {
            voc[key].as_array().unwrap_or_else(|| panic!("schema.json has no vocabulary.{key}")).iter().map(|v| v.as_str().unwrap().to_string()).collect()
        };
        assert_eq!(words("roles"), Role::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>());
        assert_eq!(words("states"), State::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>());
        assert_eq!(words("actions"), ActionName::ALL.iter().map(|r| r.as_str()).collect::<Vec<_>>());
        assert_eq!(words("permission_ids"), PERMISSION_IDS);
    }

    #[test]
    fn unknown_words_are_tolerated() {
        let role: Role = rmp_serde::from_slice(&rmp_serde::to_vec("fancy_widget").unwrap()).unwrap();
        assert_eq!(role, Role::Other);
        let role: Role = rmp_serde::from_slice(&rmp_serde::to_vec("toggle_button").unwrap()).unwrap();
        assert_eq!(role, Role::ToggleButton);
        let act: ActionName = rmp_serde::from_slice(&rmp_serde::to_vec("teleport").unwrap()).unwrap();
        assert_eq!(act, ActionName::Other);
        assert!(rmp_serde::from_slice::<State>(&rmp_serde::to_vec("blinking").unwrap()).is_err());
        #[derive(Deserialize)]
        struct N {
            #[serde(deserialize_with = "decode_states")]
            states: Vec<State>,
        }
        let n: N = rmp_serde::from_slice(&rmp_serde::to_vec_named(&serde_json::json!({"states": ["focused", "blinking", "read_only"]})).unwrap()).unwrap();
        assert_eq!(n.states, [State::Focused, State::ReadOnly]);
        assert_eq!(rmpv::ext::to_value(Role::SecureTextField).unwrap().as_str(), Some("secure_text_field"));
    }
}
