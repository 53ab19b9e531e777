//! Typed frames and op payloads, mirroring src/wire/messages.ts (the contract).
//! Field names are exact (snake_case). Optional wire fields (`.optional()` in
//! the contract) are skipped when absent; nullable ones are written as nil.
//!
//! Decoding is tolerant: unknown fields are ignored everywhere (a newer minor
//! version of the protocol only adds optional fields), and fields added by a
//! minor version carry `#[serde(default)]` so older frames still decode. The
//! 2.0 vocabulary (roles, states, action names) is `super::vocabulary`: an
//! unknown role or action name reads as `other`, an unknown state is dropped.

use super::vocabulary::{decode_states, ActionName, Role, State};
use crate::error::{Detail, Error};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;

// ---- issue 15: click (2.3: point_click)
pub const PROTOCOL: [u32; 2] = [2, 3];
// ---- end click

pub const CAPABILITY_KEYS: &[&str] = &[
    "permissions",
    "list_apps",
    // ---- issue 13: app lifecycle
    "list_installed",
    "launch",
    "window_op",
    // ---- end lifecycle
    "list_windows",
    "get_tree",
    "get_tree.cache_bulk",
    "screenshot",
    "screenshot.occluded",
    "screenshot.redact_secure",
    "hit_test",
    "action.click",
    "action.set_value",
    "action.type_text",
    "action.select_text",
    "action.focus",
    "action.scroll_into_view",
    "action.secondary",
    "input.pointer",
    "input.keyboard",
    "input.focus_guard",
    "input.pointer_guard",
    "focused_element",
    "watch_user_input",
    "set_accessibility",
    "settle",
    "screenshot.popups",
    // 2.0: screenshot's region and max_width (crop and scale in the helper).
    "screenshot.scale",
    // ---- issue 14: screenshot options (2.2: screenshot's format and quality)
    "screenshot.formats",
    // ---- end screenshot options
    // ---- issue 13: clipboard
    "clipboard.get",
    "clipboard.set",
    "clipboard.paste",
    // ---- end clipboard
    // ---- issue 13: menus
    "menu_tree",
    "menu_close",
    // ---- end menus
    // ---- issue 15: click
    "point_click",
    // ---- end click
];

// ------------------------------------------------------------------ frames

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct Capability {
    pub supported: bool,
    /// "live" | "vectors" | "unverified"
    pub verified: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct HelperInfo {
    pub name: String,
    pub version: String,
    pub platform: String,
    pub backend: String,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Limits {
    pub max_frame_bytes: u64,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Hello {
    #[serde(rename = "type")]
    pub kind: String,
    pub protocol: [u32; 2],
    pub helper: HelperInfo,
    pub capabilities: BTreeMap<String, Capability>,
    pub limits: Limits,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    NotDispatched,
    Submitted,
    Partial,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Accessibility,
    Synthetic,
    ForegroundInput,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cleanup {
    pub keys_released: bool,
    pub buttons_released: bool,
    pub pointer_restored: Option<bool>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    pub delivery: Delivery,
    pub route: Route,
    pub cleanup: Cleanup,
}

impl Receipt {
    /// A receipt for an accessibility action: nothing held, pointer untouched.
    pub fn accessibility(delivery: Delivery) -> Self {
        Receipt {
            delivery,
            route: Route::Accessibility,
            cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None },
        }
    }
}

impl<'de> Deserialize<'de> for Detail {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Any {
            B(bool),
            I(i64),
            F(f64),
            S(String),
        }
        Ok(match Any::deserialize(d)? {
            Any::B(b) => Detail::Bool(b),
            Any::I(i) => Detail::Int(i),
            Any::F(f) => Detail::Int(f as i64),
            Any::S(s) => Detail::Str(s),
        })
    }
}

impl Serialize for Detail {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Detail::Str(v) => s.serialize_str(v),
            Detail::Int(v) => s.serialize_i64(*v),
            Detail::Bool(v) => s.serialize_bool(*v),
        }
    }
}

#[derive(Serialize, Deserialize, Debug)]
pub struct WireError {
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<BTreeMap<String, Detail>>,
}

impl From<&Error> for WireError {
    fn from(e: &Error) -> Self {
        WireError {
            code: e.code.as_str().to_string(),
            message: e.message.clone(),
            details: if e.details.is_empty() { None } else { Some(e.details.iter().cloned().collect()) },
        }
    }
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Response {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: u64,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<rmpv::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<WireError>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub receipt: Option<Receipt>,
}

impl Response {
    pub fn ok(id: u64, result: rmpv::Value, receipt: Option<Receipt>) -> Self {
        Response { kind: "response".into(), id, ok: true, result: Some(result), error: None, receipt }
    }
    pub fn err(id: u64, e: &Error, receipt: Option<Receipt>) -> Self {
        Response { kind: "response".into(), id, ok: false, result: None, error: Some(WireError::from(e)), receipt }
    }
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Event {
    #[serde(rename = "type")]
    pub kind: String,
    /// "target_closed" | "capture_revoked" | "user_input" | "permission_changed"
    pub event: String,
    pub data: rmpv::Value,
}

/// A frame the orchestrator may send us.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request { id: u64, op: String, deadline_ms: u64, args: rmpv::Value },
    Cancel { id: u64 },
}

fn field<'a>(map: &'a [(rmpv::Value, rmpv::Value)], key: &str) -> Option<&'a rmpv::Value> {
    map.iter().find(|(k, _)| k.as_str() == Some(key)).map(|(_, v)| v)
}

/// Interpret a decoded frame body. An Err is a protocol breach (malformed frame).
pub fn parse_incoming(v: &rmpv::Value) -> Result<Incoming, String> {
    let map = v.as_map().ok_or("frame is not a map")?;
    let kind = field(map, "type").and_then(|t| t.as_str()).ok_or("frame has no string `type`")?;
    let id = || field(map, "id").and_then(|i| i.as_u64()).ok_or(format!("{kind} frame without a uint `id`"));
    match kind {
        "request" => {
            let id = id()?;
            let op = field(map, "op").and_then(|o| o.as_str()).ok_or("request without a string `op`")?;
            let deadline_ms = field(map, "deadline_ms")
                .and_then(|d| d.as_u64())
                .ok_or("request without a uint `deadline_ms`")?;
            let args = field(map, "args").cloned().ok_or("request without `args`")?;
            if !args.is_map() {
                return Err("request `args` is not a map".into());
            }
            // Other top-level fields are ignored: a newer minor version may add some.
            Ok(Incoming::Request { id, op: op.to_string(), deadline_ms, args })
        }
        "cancel" => Ok(Incoming::Cancel { id: id()? }),
        other => Err(format!("unexpected frame type {other:?} from the orchestrator")),
    }
}

// ------------------------------------------------------------------ payloads

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Rect { x, y, width, height }
    }
    pub fn contains(&self, px: i32, py: i32) -> bool {
        let (x0, y0) = (self.x as i64, self.y as i64);
        let (px, py) = (px as i64, py as i64);
        px >= x0 && py >= y0 && px < x0 + self.width as i64 && py < y0 + self.height as i64
    }
    /// Intersection with another rect, None if empty.
    pub fn intersect(&self, o: &Rect) -> Option<Rect> {
        let x0 = (self.x as i64).max(o.x as i64);
        let y0 = (self.y as i64).max(o.y as i64);
        let x1 = (self.x as i64 + self.width as i64).min(o.x as i64 + o.width as i64);
        let y1 = (self.y as i64 + self.height as i64).min(o.y as i64 + o.height as i64);
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        Some(Rect { x: x0 as i32, y: y0 as i32, width: (x1 - x0) as u32, height: (y1 - y0) as u32 })
    }
}

#[derive(Serialize, Deserialize, Debug, Clone)]
pub struct PermissionCheck {
    /// (2.0) A neutral id (vocabulary.rs PERMISSION_IDS).
    pub id: String,
    /// (2.0) This platform's name for the same check (atspi_bus, x_display...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_id: Option<String>,
    /// "granted" | "denied" | "unknown"
    pub status: String,
    pub detail: String,
    pub remediation: String,
    /// (1.1) true: a "denied" that does not stop observation (a hint, not a
    /// blocker). Absent in 1.0 frames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advisory: Option<bool>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct WireApp {
    pub pid: u32,
    pub name: String,
    /// Canonical executable path; when the file was deleted or replaced since
    /// the process started, the path it had (without the kernel's " (deleted)").
    pub executable: Option<String>,
    /// (2.0) The executable was deleted or replaced on disk since the start.
    #[serde(default)]
    pub executable_deleted: bool,
    /// (2.0) /proc/PID/comm; nil when unreadable.
    #[serde(default)]
    pub process_name: Option<String>,
    /// (2.0) The Flatpak application id (/proc/PID/root/.flatpak-info); nil when none.
    #[serde(default)]
    pub bundle_id: Option<String>,
    pub desktop_id: Option<String>,
    pub accessible: bool,
    pub start_time: Option<u64>,
    pub window_count: u32,
    /// (1.2) UI toolkit recognised from the process's mapped libraries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolkit: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct WireWindow {
    pub window_id: u32,
    pub z_index: u32,
    pub title: String,
    pub bounds: Rect,
    pub minimized: bool,
    pub pid: Option<u32>,
    /// (1.2) An override-redirect window of the app (open menu, combo list,
    /// tooltip). Omitted when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub popup: bool,
}

/// (2.0) An advertised action: what it does, neutrally, and the platform's
/// own name for it (what `secondary`'s `action_name` takes).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct NodeAction {
    pub name: ActionName,
    pub native: String,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct WireNode {
    pub path: Vec<u32>,
    /// (2.0) Neutral role; an unknown one reads as `Other`.
    pub role: Role,
    /// (2.0) The AT-SPI role name ("push button").
    #[serde(default)]
    pub native_role: String,
    pub name: String,
    pub description: String,
    pub value: Option<String>,
    /// (2.0) Neutral states; unknown ones are dropped when decoding.
    #[serde(deserialize_with = "decode_states")]
    pub states: Vec<State>,
    pub bounds: Option<Rect>,
    /// (2.0) Neutral name + native name, in the platform's order.
    pub actions: Vec<NodeAction>,
    pub identifier: String,
    pub secure: bool,
    pub child_count: u32,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct WireLocator {
    pub path: Vec<u32>,
    /// (2.0) Neutral role the element had when observed.
    pub role: Role,
    /// (2.0) Its AT-SPI role name: compared instead of `role` when non-empty.
    #[serde(default)]
    pub native_role: String,
    pub name: String,
    pub identifier: String,
}

// ---- op args

#[derive(Serialize, Deserialize, Debug)]
pub struct NoArgs {}

#[derive(Serialize, Deserialize, Debug)]
pub struct ListWindowsArgs {
    pub pid: Option<u32>,
    /// Also the app's popups where they cost calls into the app (sway).
    #[serde(default)]
    pub popups: bool,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct GetTreeArgs {
    pub pid: u32,
    pub window_id: u32,
    pub max_depth: u32,
    pub max_children: u32,
    pub max_nodes: u32,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ScreenshotArgs {
    pub window_id: u32,
    pub path: String,
    pub redact_secure: bool,
    pub redact: Vec<Rect>,
    /// (2.0) Crop to this screen rectangle (clipped to the window); nil: all of it.
    #[serde(default)]
    pub region: Option<Rect>,
    /// (2.0) Scale down (never up, aspect kept) to at most this many pixels
    /// wide; nil: native size.
    #[serde(default)]
    pub max_width: Option<u32>,
    // ---- issue 14: screenshot options
    /// (2.2) The file's format; nil: PNG.
    #[serde(default)]
    pub format: Option<ImageFormat>,
    /// (2.2) JPEG / WebP quality 1-100; nil: 80. Ignored for PNG.
    #[serde(default)]
    pub quality: Option<u32>,
    // ---- end screenshot options
}

// ---- issue 14: screenshot options
/// (2.2) A screenshot file's format (capability screenshot.formats).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Jpeg,
    Webp,
}
// ---- end screenshot options

#[derive(Serialize, Deserialize, Debug)]
pub struct HitTestArgs {
    pub x: i32,
    pub y: i32,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ElementActionName {
    Click,
    SetValue,
    TypeText,
    SelectText,
    Focus,
    ScrollIntoView,
    Secondary,
}


#[derive(Serialize, Deserialize, Debug)]
pub struct ElementActionArgs {
    pub pid: u32,
    pub window_id: u32,
    pub locator: WireLocator,
    pub action: ElementActionName,
    pub text: Option<String>,
    pub start: Option<u32>,
    pub end: Option<u32>,
    pub action_name: Option<String>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    Left,
    Right,
    Middle,
    Back,
    Forward,
}

impl Button {
    /// The X core button number.
    pub fn x_button(self) -> u8 {
        match self {
            Button::Left => 1,
            Button::Middle => 2,
            Button::Right => 3,
            Button::Back => 8,
            Button::Forward => 9,
        }
    }
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InputStep {
    Move { x: i32, y: i32 },
    Button { button: Button, down: bool },
    Click { x: i32, y: i32, button: Button, count: u8, modifiers: Vec<String> },
    Key { key: String, down: bool },
    Tap { keys: Vec<String>, repeat: u32 },
    Type { text: String },
    Scroll { x: Option<i32>, y: Option<i32>, dx: i32, dy: i32 },
    Wait { ms: u32 },
}


#[derive(Serialize, Deserialize, Debug)]
pub struct InputArgs {
    pub steps: Vec<InputStep>,
    pub restore_pointer: bool,
    /// (1.1) Keyboard steps are sent only while this window (or a transient
    /// dialog of it, same pid) holds the X input focus. Absent/nil: no guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<FocusGuard>,
    /// (1.1) Every pointer event is sent only while the topmost window at its
    /// point (a window manager frame counting as its client) is one of
    /// `windows`, or an override-redirect window (menu, tooltip) of `pid`.
    /// Absent/nil: no guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pointer_guard: Option<PointerGuard>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PointerGuard {
    pub pid: u32,
    /// Top-level client window ids (what list_windows reports).
    pub windows: Vec<u32>,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct FocusGuard {
    pub window_id: u32,
    pub pid: u32,
    /// Ask the window manager to activate the window (_NET_ACTIVE_WINDOW)
    /// when it is not focused at the first check.
    pub activate: bool,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct FocusedElementArgs {
    pub pid: u32,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct SetAccessibilityArgs {
    pub enabled: bool,
}

/// (1.2) Wait until the app's accessibility events quiesce.
#[derive(Serialize, Deserialize, Debug)]
pub struct SettleArgs {
    pub pid: u32,
    pub quiet_ms: u32,
    pub max_ms: u32,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct SettleResult {
    pub waited_ms: u32,
    pub events: u32,
    pub settled: bool,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct WatchArgs {
    pub enabled: bool,
}

// ---- op results

#[derive(Serialize, Deserialize, Debug)]
pub struct PermissionsResult {
    pub checks: Vec<PermissionCheck>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ListAppsResult {
    pub apps: Vec<WireApp>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ListWindowsResult {
    pub windows: Vec<WireWindow>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct GetTreeResult {
    pub nodes: Vec<WireNode>,
    pub truncated: bool,
    /// "cache" | "walk"
    pub source: String,
    /// (1.2) Accessibility calls this read made into the app.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u32>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ScreenshotResult {
    pub path: String,
    pub width: u32,
    pub height: u32,
    /// Screen position of the image's top-left pixel.
    pub origin: Point,
    /// Image pixels per screen pixel: image pixel (ix, iy) shows screen
    /// point origin + (ix, iy) / scale.
    pub scale: f64,
    pub method: String,
    pub redacted: u32,
    /// (1.2) Popup windows of the app composited over the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popups: Option<u32>,
    // ---- issue 14: screenshot options
    /// (2.2) The format of the file written (absent from older helpers: PNG).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ImageFormat>,
    // ---- end screenshot options
}

#[derive(Serialize, Deserialize, Debug)]
pub struct HitTestResult {
    pub pid: Option<u32>,
    pub window_id: Option<u32>,
    pub node: Option<WireNode>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct ElementActionResult {
    pub performed: bool,
    pub verified: Option<bool>,
    pub verification: Option<String>,
    /// (1.2) The platform action that ran (click: the press-like one chosen by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_action: Option<String>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct InputResult {
    pub steps_completed: u32,
    /// (1.1) Characters typed by `type` steps.
    #[serde(default)]
    pub chars_sent: u32,
    /// (1.1) The top-level window the focus guard accepted last; nil when no
    /// guard ran.
    #[serde(default)]
    pub focus_window: Option<u32>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct FocusedElementResult {
    /// The X window of the focused node's frame; nil when unknown.
    pub window_id: Option<u32>,
    /// The accessible holding the keyboard focus; nil when the app has none.
    pub node: Option<WireNode>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct SetAccessibilityResult {
    /// org.a11y.Status.IsEnabled after the change (read back).
    pub enabled: bool,
    /// IsEnabled before the change; nil when it could not be read.
    pub previous: Option<bool>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct WatchResult {
    pub watching: bool,
}

/// Decode op args (a msgpack map) into a typed struct; errors are INVALID_ARGUMENTS.
pub fn decode_args<T: serde::de::DeserializeOwned>(args: &rmpv::Value) -> Result<T, Error> {
    // Through bytes: rmp-serde maps strings to unit enum variants, rmpv's
    // value deserializer does not.
    let mut bytes = Vec::new();
    rmpv::encode::write_value(&mut bytes, args).map_err(|e| Error::invalid(format!("bad arguments: {e}")))?;
    rmp_serde::from_slice(&bytes).map_err(|e| Error::invalid(format!("bad arguments: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::codec::{decode_body, encode_body, to_value};
    use rmpv::Value;

    fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (Value::from(k), v)).collect())
    }

    #[test]
    fn request_parses_and_args_decode() {
        let req = map(vec![
            ("type", "request".into()),
            ("id", 7.into()),
            ("op", "list_windows".into()),
            ("deadline_ms", 1000.into()),
            ("args", map(vec![("pid", Value::Nil)])),
        ]);
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &req).unwrap();
        let v = decode_body(&bytes).unwrap();
        match parse_incoming(&v).unwrap() {
            Incoming::Request { id, op, deadline_ms, args } => {
                assert_eq!((id, op.as_str(), deadline_ms), (7, "list_windows", 1000));
                let a: ListWindowsArgs = decode_args(&args).unwrap();
                assert_eq!(a.pid, None);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cancel_and_bad_frames() {
        let c = map(vec![("type", "cancel".into()), ("id", 3.into())]);
        assert_eq!(parse_incoming(&c).unwrap(), Incoming::Cancel { id: 3 });
        assert!(parse_incoming(&map(vec![("type", "hello".into())])).is_err());
        assert!(parse_incoming(&map(vec![("id", 1.into())])).is_err());
        let no_args = map(vec![("type", "request".into()), ("id", 1.into()), ("op", "x".into()), ("deadline_ms", 1.into())]);
        assert!(parse_incoming(&no_args).is_err());
    }

    #[test]
    fn unknown_fields_are_ignored_wrong_types_are_not() {
        let a = map(vec![("pid", 1.into()), ("bogus", true.into())]);
        assert_eq!(decode_args::<ListWindowsArgs>(&a).unwrap().pid, Some(1));
        let wrong_type = map(vec![("x", "1".into()), ("y", 2.into())]);
        let e = decode_args::<HitTestArgs>(&wrong_type).unwrap_err();
        assert_eq!(e.code, crate::error::Code::InvalidArguments);
        let missing = map(vec![("x", 1.into())]);
        assert!(decode_args::<HitTestArgs>(&missing).is_err());
    }

    #[test]
    fn request_with_extra_fields_parses() {
        // A 1.2 orchestrator may add a top-level field and an args field.
        let req = map(vec![
            ("type", "request".into()),
            ("id", 9.into()),
            ("op", "input".into()),
            ("deadline_ms", 500.into()),
            ("trace", map(vec![("span", "abc".into())])),
            (
                "args",
                map(vec![
                    ("steps", Value::Array(vec![map(vec![("kind", "type".into()), ("text", "hi".into()), ("speed", 3.into())])])),
                    ("restore_pointer", false.into()),
                    ("focus", map(vec![("window_id", 77.into()), ("pid", 12.into()), ("activate", true.into()), ("later", Value::Nil)])),
                    ("future_option", "x".into()),
                ]),
            ),
        ]);
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &req).unwrap();
        let Incoming::Request { id, op, args, .. } = parse_incoming(&decode_body(&bytes).unwrap()).unwrap() else { panic!("not a request") };
        assert_eq!((id, op.as_str()), (9, "input"));
        let a: InputArgs = decode_args(&args).unwrap();
        assert_eq!(a.steps, vec![InputStep::Type { text: "hi".into() }]);
        assert_eq!(a.focus, Some(FocusGuard { window_id: 77, pid: 12, activate: true }));
        // A cancel frame with an extra field too.
        let c = map(vec![("type", "cancel".into()), ("id", 9.into()), ("reason", "user".into())]);
        assert_eq!(parse_incoming(&c).unwrap(), Incoming::Cancel { id: 9 });
    }

    #[test]
    fn input_focus_is_optional_and_nullable() {
        let steps = Value::Array(vec![map(vec![("kind", "wait".into()), ("ms", 1.into())])]);
        let absent: InputArgs = decode_args(&map(vec![("steps", steps.clone()), ("restore_pointer", true.into())])).unwrap();
        assert_eq!(absent.focus, None);
        let nil: InputArgs = decode_args(&map(vec![("steps", steps.clone()), ("restore_pointer", true.into()), ("focus", Value::Nil)])).unwrap();
        assert_eq!(nil.focus, None);
        let bad = map(vec![("steps", steps), ("restore_pointer", true.into()), ("focus", map(vec![("window_id", 1.into())]))]);
        assert!(decode_args::<InputArgs>(&bad).is_err(), "a focus map needs window_id, pid and activate");
        // The 1.1 result fields are always written.
        let r = to_value(&InputResult { steps_completed: 1, chars_sent: 0, focus_window: None });
        let keys: Vec<_> = r.as_map().unwrap().iter().map(|(k, _)| k.as_str().unwrap().to_string()).collect();
        assert_eq!(keys, ["steps_completed", "chars_sent", "focus_window"]);
    }

    #[test]
    fn input_pointer_guard_is_optional_and_nullable() {
        let steps = Value::Array(vec![map(vec![("kind", "move".into()), ("x", 1.into()), ("y", 2.into())])]);
        let base = |extra: Vec<(&str, Value)>| {
            let mut e = vec![("steps", steps.clone()), ("restore_pointer", true.into())];
            e.extend(extra);
            map(e)
        };
        assert_eq!(decode_args::<InputArgs>(&base(vec![])).unwrap().pointer_guard, None);
        assert_eq!(decode_args::<InputArgs>(&base(vec![("pointer_guard", Value::Nil)])).unwrap().pointer_guard, None);
        let g = map(vec![("pid", 4242.into()), ("windows", Value::Array(vec![2097153.into(), 2097160.into()])), ("later", true.into())]);
        let a = decode_args::<InputArgs>(&base(vec![("pointer_guard", g)])).unwrap();
        assert_eq!(a.pointer_guard, Some(PointerGuard { pid: 4242, windows: vec![2097153, 2097160] }));
        let empty = map(vec![("pid", 1.into()), ("windows", Value::Array(vec![]))]);
        assert_eq!(decode_args::<InputArgs>(&base(vec![("pointer_guard", empty)])).unwrap().pointer_guard.unwrap().windows, Vec::<u32>::new());
        let missing = map(vec![("pid", 1.into())]);
        assert!(decode_args::<InputArgs>(&base(vec![("pointer_guard", missing)])).is_err(), "a guard needs its window list");
        let negative = map(vec![("pid", 1.into()), ("windows", Value::Array(vec![(-1).into()]))]);
        assert!(decode_args::<InputArgs>(&base(vec![("pointer_guard", negative)])).is_err());
    }

    #[test]
    fn focused_element_shapes() {
        let a: FocusedElementArgs = decode_args(&map(vec![("pid", 7.into())])).unwrap();
        assert_eq!(a.pid, 7);
        assert!(decode_args::<FocusedElementArgs>(&map(vec![])).is_err());
        // No focused node: both fields are written, as nil.
        let r = to_value(&FocusedElementResult { window_id: None, node: None });
        assert_eq!(r.as_map().unwrap().as_slice(), [(Value::from("window_id"), Value::Nil), (Value::from("node"), Value::Nil)]);
    }

    #[test]
    fn input_steps_decode_by_kind() {
        let steps = Value::Array(vec![
            map(vec![("kind", "move".into()), ("x", 1.into()), ("y", (-2).into())]),
            map(vec![
                ("kind", "click".into()),
                ("x", 1.into()),
                ("y", 2.into()),
                ("button", "right".into()),
                ("count", 2.into()),
                ("modifiers", Value::Array(vec!["ctrl".into()])),
            ]),
            map(vec![("kind", "scroll".into()), ("x", Value::Nil), ("y", Value::Nil), ("dx", 0.into()), ("dy", 3.into())]),
            map(vec![("kind", "tap".into()), ("keys", Value::Array(vec!["ctrl".into(), "a".into()])), ("repeat", 1.into())]),
        ]);
        let a: InputArgs = decode_args(&map(vec![("steps", steps), ("restore_pointer", true.into())])).unwrap();
        assert_eq!(a.steps[0], InputStep::Move { x: 1, y: -2 });
        assert!(matches!(a.steps[1], InputStep::Click { button: Button::Right, count: 2, .. }));
        assert_eq!(a.steps[2], InputStep::Scroll { x: None, y: None, dx: 0, dy: 3 });
        let extra = Value::Array(vec![map(vec![("kind", "move".into()), ("x", 1.into()), ("y", 2.into()), ("z", 3.into())])]);
        let a: InputArgs = decode_args(&map(vec![("steps", extra), ("restore_pointer", true.into())])).unwrap();
        assert_eq!(a.steps[0], InputStep::Move { x: 1, y: 2 }, "unknown step fields are ignored");
        let unknown = Value::Array(vec![map(vec![("kind", "teleport".into())])]);
        assert!(decode_args::<InputArgs>(&map(vec![("steps", unknown), ("restore_pointer", true.into())])).is_err());
    }

    #[test]
    fn response_shapes() {
        let ok = to_value(&Response::ok(1, to_value(&WatchResult { watching: true }), None));
        let m = ok.as_map().unwrap();
        let keys: Vec<_> = m.iter().map(|(k, _)| k.as_str().unwrap()).collect();
        assert_eq!(keys, ["type", "id", "ok", "result"], "absent optional fields are skipped, not nil");
        let e = Error::new(crate::error::Code::ElementUnresolvable, "gone").with("reason", "role");
        let err = to_value(&Response::err(2, &e, Some(Receipt::accessibility(Delivery::NotDispatched))));
        let m = err.as_map().unwrap();
        let get = |k: &str| m.iter().find(|(kk, _)| kk.as_str() == Some(k)).map(|(_, v)| v.clone()).unwrap();
        assert_eq!(get("ok"), Value::Boolean(false));
        let receipt = get("receipt");
        let r = receipt.as_map().unwrap();
        assert_eq!(r[0].1.as_str(), Some("not_dispatched"));
        assert_eq!(r[1].1.as_str(), Some("accessibility"));
        let cleanup = r[2].1.as_map().unwrap();
        assert_eq!(cleanup[2], (Value::from("pointer_restored"), Value::Nil));
        let error = get("error");
        assert_eq!(error.as_map().unwrap()[0].1.as_str(), Some("ELEMENT_UNRESOLVABLE"));
        let _ = encode_body(&err);
    }

    #[test]
    fn rect_math() {
        let a = Rect::new(0, 0, 10, 10);
        assert_eq!(a.intersect(&Rect::new(5, 5, 10, 10)), Some(Rect::new(5, 5, 5, 5)));
        assert_eq!(a.intersect(&Rect::new(10, 0, 5, 5)), None);
        assert_eq!(a.intersect(&Rect::new(-5, -5, 7, 7)), Some(Rect::new(0, 0, 2, 2)));
        assert!(a.contains(0, 0) && a.contains(9, 9) && !a.contains(10, 9));
    }
}
