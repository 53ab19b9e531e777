//! sway's IPC (sway-ipc(7)): the compositor's window list on Wayland.
//!
//! One request per connection to $SWAYSOCK: "i3-ipc", payload length and
//! message type (u32, native byte order), payload; the reply has the same
//! header and a JSON payload.
//!
//! Window ids: a view's **sway container id** (`id` in get_tree, stable for
//! the view's life, never reused while sway runs) is its `window_id` on the
//! wire. Screen bounds are the view's content: `rect` (the container on the
//! output, borders included, title bar excluded) moved by `window_rect` (the
//! view inside it).

use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

pub const RUN_COMMAND: u32 = 0;
pub const GET_OUTPUTS: u32 = 3;
pub const GET_TREE: u32 = 4;
pub const GET_VERSION: u32 = 7;

const MAGIC: &[u8; 6] = b"i3-ipc";
/// Longest one IPC exchange may take.
const IPC_TIMEOUT: Duration = Duration::from_millis(2000);
/// Largest reply read (a tree of hundreds of views is well below).
const MAX_REPLY: usize = 64 << 20;

/// One request, its JSON reply.
pub fn request(path: &str, kind: u32, payload: &str) -> Result<Value> {
    let io = |e: std::io::Error| Error::internal(format!("sway IPC {path}: {e}"));
    let mut s = UnixStream::connect(path).map_err(io)?;
    s.set_read_timeout(Some(IPC_TIMEOUT)).map_err(io)?;
    s.set_write_timeout(Some(IPC_TIMEOUT)).map_err(io)?;
    let mut msg = Vec::with_capacity(14 + payload.len());
    msg.extend_from_slice(MAGIC);
    msg.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    msg.extend_from_slice(&kind.to_ne_bytes());
    msg.extend_from_slice(payload.as_bytes());
    s.write_all(&msg).map_err(io)?;
    let mut head = [0u8; 14];
    s.read_exact(&mut head).map_err(io)?;
    if &head[..6] != MAGIC {
        return Err(Error::internal(format!("sway IPC {path}: not an i3-ipc reply")));
    }
    let len = u32::from_ne_bytes(head[6..10].try_into().expect("4 bytes")) as usize;
    if len > MAX_REPLY {
        return Err(Error::internal(format!("sway IPC {path}: reply of {len} bytes")));
    }
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).map_err(io)?;
    serde_json::from_slice(&body).map_err(|e| Error::internal(format!("sway IPC {path}: bad JSON: {e}")))
}

pub const SUBSCRIBE: u32 = 2;

/// One i3-ipc message: its type and JSON payload.
fn read_message(s: &mut UnixStream) -> std::io::Result<(u32, Value)> {
    let mut head = [0u8; 14];
    s.read_exact(&mut head)?;
    if &head[..6] != MAGIC {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "not an i3-ipc message"));
    }
    let len = u32::from_ne_bytes(head[6..10].try_into().expect("4 bytes")) as usize;
    let kind = u32::from_ne_bytes(head[10..14].try_into().expect("4 bytes"));
    if len > MAX_REPLY {
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "message too large"));
    }
    let mut body = vec![0u8; len];
    s.read_exact(&mut body)?;
    Ok((kind, serde_json::from_slice(&body).unwrap_or(Value::Null)))
}

/// Subscribes to sway's `input` events and calls `each(change, type)` for
/// each (e.g. "added"/"removed", "keyboard"/"pointer") until the
/// connection ends.
pub fn watch_inputs(path: &str, mut each: impl FnMut(&str, &str)) {
    let Ok(mut s) = UnixStream::connect(path) else { return };
    let payload = br#"["input"]"#;
    let mut msg = Vec::with_capacity(14 + payload.len());
    msg.extend_from_slice(MAGIC);
    msg.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    msg.extend_from_slice(&SUBSCRIBE.to_ne_bytes());
    msg.extend_from_slice(payload);
    if s.write_all(&msg).is_err() {
        return;
    }
    while let Ok((kind, v)) = read_message(&mut s) {
        // Events have the high bit set; the subscribe reply does not.
        if kind & 0x8000_0000 != 0 {
            each(v["change"].as_str().unwrap_or(""), v["input"]["type"].as_str().unwrap_or(""));
        }
    }
}

/// Whether $SWAYSOCK answers get_version as sway ("variant": "sway"; sway
/// 1.7 has no variant field, its human_readable is enough).
pub fn answers(path: &str) -> Option<String> {
    let v = request(path, GET_VERSION, "").ok()?;
    let human = v.get("human_readable").and_then(Value::as_str)?.to_string();
    match v.get("variant").and_then(Value::as_str) {
        Some(variant) if variant != "sway" => None,
        _ => Some(human),
    }
}

/// One view (a window) of sway's tree.
#[derive(Debug, Clone, PartialEq)]
pub struct View {
    /// The sway container id: the wire's window_id.
    pub con_id: u32,
    pub pid: Option<u32>,
    pub title: String,
    pub app_id: Option<String>,
    /// "xdg_shell" (native Wayland) or "xwayland".
    pub shell: String,
    /// An Xwayland view's X11 window id.
    pub x11_window: Option<u32>,
    /// The view's content on the screen: rect moved by window_rect.
    pub bounds: Rect,
    /// Everything sway draws for the view: rect (borders) with the title
    /// bar above it (deco_rect's height); what the pointer guard hit-tests.
    pub frame: Rect,
    pub focused: bool,
    /// On a shown workspace and not hidden behind a tab (sway's `visible`).
    pub visible: bool,
    /// In the scratchpad: hidden, reported as minimized.
    pub scratchpad: bool,
    pub floating: bool,
    pub fullscreen: bool,
}

fn rect_of(v: &Value, key: &str) -> Rect {
    let r = &v[key];
    let i = |k: &str| r.get(k).and_then(Value::as_i64).unwrap_or(0);
    Rect::new(i("x") as i32, i("y") as i32, i("width").max(0) as u32, i("height").max(0) as u32)
}

/// The views of a get_tree reply, bottom of the stacking order first.
///
/// sway has no global z-order: tiled views do not overlap, floating views
/// are drawn above the tiled ones in the order of their workspace's
/// `floating_nodes` (the last on top), a fullscreen view above everything
/// on its output. So: hidden views first (other workspaces, inactive tabs,
/// the scratchpad), then the shown tiled views in tree order, then the
/// shown floating views in their order, then fullscreen views.
///
/// Tiled views do not overlap, so among them "in front" means focused
/// most recently (sway's `focus` lists, most recent first, at every level
/// of the tree): the focused view is the top tiled one, and an app's
/// front-most window is the one the user (or deckhand) last focused, not
/// the one that happens to come last in the layout.
pub fn views(tree: &Value) -> Vec<View> {
    let mut all: Vec<(u8, Vec<usize>, View)> = Vec::new();
    walk(tree, false, false, &[], &mut all);
    // Stable sort: tree order within the other layers.
    // The focused view is the most recent (sway's own flag, also where a
    // tree carries no focus lists).
    all.sort_by(|(la, ra, va), (lb, rb, vb)| la.cmp(lb).then_with(|| if *la == 1 { va.focused.cmp(&vb.focused).then_with(|| rb.cmp(ra)) } else { std::cmp::Ordering::Equal }));
    all.into_iter().map(|(_, _, v)| v).collect()
}

/// Where a child stands in its parent's focus order (0: focused last); a
/// child sway does not list comes after every listed one.
fn focus_rank(parent: &Value, child: &Value) -> usize {
    let order = parent["focus"].as_array();
    let id = child["id"].as_u64();
    order.and_then(|o| o.iter().position(|x| x.as_u64().is_some() && x.as_u64() == id)).unwrap_or(usize::MAX)
}

fn walk(node: &Value, floating: bool, scratchpad: bool, recency: &[usize], out: &mut Vec<(u8, Vec<usize>, View)>) {
    let scratchpad = scratchpad || (node["type"] == "workspace" && node["name"] == "__i3_scratch");
    if node.get("pid").and_then(Value::as_u64).is_some() || node.get("app_id").is_some_and(|a| !a.is_null()) || node.get("window").and_then(Value::as_u64).is_some() {
        if let Some(view) = view_of(node, floating, scratchpad) {
            let layer = if !view.visible || view.scratchpad {
                0
            } else if view.fullscreen {
                3
            } else if view.floating {
                2
            } else {
                1
            };
            out.push((layer, recency.to_vec(), view));
        }
    }
    for child in node["nodes"].as_array().into_iter().flatten() {
        walk(child, floating, scratchpad, &[recency, &[focus_rank(node, child)]].concat(), out);
    }
    for child in node["floating_nodes"].as_array().into_iter().flatten() {
        walk(child, true, scratchpad, &[recency, &[focus_rank(node, child)]].concat(), out);
    }
}

fn view_of(n: &Value, floating: bool, scratchpad: bool) -> Option<View> {
    let con_id = u32::try_from(n["id"].as_u64()?).ok()?;
    let rect = rect_of(n, "rect");
    let wr = rect_of(n, "window_rect");
    let deco = rect_of(n, "deco_rect").height;
    Some(View {
        con_id,
        pid: n["pid"].as_u64().and_then(|p| u32::try_from(p).ok()).filter(|&p| p > 0),
        title: n["name"].as_str().unwrap_or_default().to_string(),
        app_id: n["app_id"].as_str().map(String::from),
        shell: n["shell"].as_str().unwrap_or_default().to_string(),
        x11_window: n["window"].as_u64().and_then(|w| u32::try_from(w).ok()),
        bounds: Rect::new(rect.x.saturating_add(wr.x), rect.y.saturating_add(wr.y), wr.width, wr.height),
        frame: Rect::new(rect.x, rect.y - deco as i32, rect.width, rect.height + deco),
        focused: n["focused"].as_bool().unwrap_or(false),
        visible: n["visible"].as_bool().unwrap_or(false),
        scratchpad,
        floating: floating || n["type"] == "floating_con",
        fullscreen: n["fullscreen_mode"].as_u64().unwrap_or(0) != 0,
    })
}

/// The views now, bottom first.
pub fn list(path: &str) -> Result<Vec<View>> {
    Ok(views(&request(path, GET_TREE, "")?))
}

/// The active outputs' rectangles (compositor coordinates).
pub fn outputs(path: &str) -> Result<Vec<Rect>> {
    let v = request(path, GET_OUTPUTS, "")?;
    Ok(v.as_array().into_iter().flatten().filter(|o| o["active"].as_bool().unwrap_or(false)).map(|o| rect_of(o, "rect")).collect())
}

/// The view with this container id, else WINDOW_NOT_FOUND.
pub fn view(path: &str, con_id: u32) -> Result<View> {
    list(path)?
        .into_iter()
        .find(|v| v.con_id == con_id)
        .ok_or_else(|| Error::new(Code::WindowNotFound, format!("sway has no view with container id {con_id}")).with("window_id", con_id))
}

/// Run one sway command (sway(5)); its reply's first entry must say
/// success, else ACTION_FAILED with sway's own error.
pub fn command(path: &str, cmd: &str) -> Result<()> {
    command_reply(&request(path, RUN_COMMAND, cmd)?, cmd)
}

/// A RUN_COMMAND reply (an array, one entry per command) as a result.
fn command_reply(v: &Value, cmd: &str) -> Result<()> {
    let first = v.as_array().and_then(|a| a.first()).cloned().unwrap_or(Value::Null);
    if first["success"].as_bool() == Some(true) {
        return Ok(());
    }
    let why = first["error"].as_str().unwrap_or("no reply").to_string();
    Err(Error::new(Code::ActionFailed, format!("sway refused {cmd:?}: {why}")).with("sway_error", why))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake sway: takes the subscription, answers it, sends two input events, hangs up.
    #[test]
    fn input_events_are_passed_on_until_the_connection_ends() {
        let dir = std::env::temp_dir().join(format!("deckhand-sway-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("ipc.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let frame = |kind: u32, body: &str| {
            let mut m = MAGIC.to_vec();
            m.extend_from_slice(&(body.len() as u32).to_ne_bytes());
            m.extend_from_slice(&kind.to_ne_bytes());
            m.extend_from_slice(body.as_bytes());
            m
        };
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let (kind, payload) = read_message(&mut c).unwrap();
            assert_eq!((kind, payload), (SUBSCRIBE, serde_json::json!(["input"])));
            c.write_all(&frame(SUBSCRIBE, r#"{"success": true}"#)).unwrap();
            c.write_all(&frame(0x8000_0015, r#"{"change": "added", "input": {"type": "pointer"}}"#)).unwrap();
            c.write_all(&frame(0x8000_0015, r#"{"change": "removed", "input": {"type": "keyboard"}}"#)).unwrap();
        });
        let mut seen = Vec::new();
        watch_inputs(path.to_str().unwrap(), |change, kind| seen.push(format!("{change} {kind}")));
        server.join().unwrap();
        assert_eq!(seen, ["added pointer", "removed keyboard"], "the subscribe reply is not an event");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Recorded from sway 1.7 (headless, `deckhand desktop start --wayland
    /// --size 1280x800`): gtk3-demo tiled with a title bar, and
    /// gtk3-widget-factory floating (client-side decorations), trimmed to
    /// the fields read.
    const TREE: &str = r#"{"id":1,"type":"root","name":"root","rect":{"x":0,"y":0,"width":1280,"height":800},"nodes":[
      {"id":2147483647,"type":"output","name":"__i3","nodes":[
        {"id":2147483646,"type":"workspace","name":"__i3_scratch","nodes":[],"floating_nodes":[
          {"id":9,"type":"floating_con","name":"hidden","pid":4444,"app_id":"mousepad","shell":"xdg_shell","visible":false,"focused":false,"fullscreen_mode":0,
           "rect":{"x":10,"y":10,"width":300,"height":200},"window_rect":{"x":0,"y":0,"width":300,"height":200},"nodes":[],"floating_nodes":[]}]}],"floating_nodes":[]},
      {"id":3,"type":"output","name":"HEADLESS-1","rect":{"x":0,"y":0,"width":1280,"height":800},"nodes":[
        {"id":4,"type":"workspace","name":"1","nodes":[
          {"id":5,"type":"con","name":"Application Class","pid":21191,"app_id":"gtk3-demo","shell":"xdg_shell","visible":true,"focused":false,"fullscreen_mode":0,
           "rect":{"x":0,"y":25,"width":1280,"height":775},"window_rect":{"x":2,"y":0,"width":1276,"height":773},"deco_rect":{"x":0,"y":0,"width":1280,"height":25},"nodes":[],"floating_nodes":[]}],
         "floating_nodes":[
          {"id":6,"type":"floating_con","name":"gtk3-widget-factory","pid":21190,"app_id":"gtk3-widget-factory","shell":"xdg_shell","visible":true,"focused":true,"fullscreen_mode":0,
           "rect":{"x":100,"y":150,"width":1415,"height":732},"window_rect":{"x":0,"y":0,"width":1415,"height":732},"nodes":[],"floating_nodes":[]},
          {"id":7,"type":"floating_con","name":"xterm","pid":5555,"app_id":null,"window":2097166,"shell":"xwayland","visible":true,"focused":false,"fullscreen_mode":0,
           "rect":{"x":300,"y":300,"width":484,"height":316},"window_rect":{"x":2,"y":2,"width":480,"height":312},"nodes":[],"floating_nodes":[]}]},
        {"id":8,"type":"workspace","name":"2","nodes":[
          {"id":10,"type":"con","name":"elsewhere","pid":6666,"app_id":"foot","shell":"xdg_shell","visible":false,"focused":false,"fullscreen_mode":0,
           "rect":{"x":0,"y":0,"width":1280,"height":800},"window_rect":{"x":0,"y":0,"width":1280,"height":800},"nodes":[],"floating_nodes":[]}],"floating_nodes":[]}]}],
      "floating_nodes":[]}"#;

    fn tree() -> Value {
        serde_json::from_str(TREE).unwrap()
    }

    #[test]
    fn views_are_bottom_first_hidden_tiled_floating() {
        let ids: Vec<u32> = views(&tree()).iter().map(|v| v.con_id).collect();
        // hidden (scratchpad 9, workspace 2's 10) first, then tiled 5, then floating 6, 7 in their order.
        assert_eq!(ids, vec![9, 10, 5, 6, 7]);
    }

    #[test]
    fn the_focused_tiled_view_is_on_top_of_the_tiled_ones() {
        // Two tiled windows of one app side by side, the first focused: it is the front-most tiled view.
        let tree: Value = serde_json::from_str(r#"{"id":1,"type":"root","nodes":[{"id":3,"type":"output","name":"HEADLESS-1","nodes":[
          {"id":4,"type":"workspace","name":"1","nodes":[
            {"id":5,"type":"con","name":"main","pid":100,"app_id":"a","visible":true,"focused":true,"fullscreen_mode":0,
             "rect":{"x":0,"y":0,"width":640,"height":800},"window_rect":{"x":0,"y":0,"width":640,"height":800},"nodes":[],"floating_nodes":[]},
            {"id":6,"type":"con","name":"second","pid":100,"app_id":"a","visible":true,"focused":false,"fullscreen_mode":0,
             "rect":{"x":640,"y":0,"width":640,"height":800},"window_rect":{"x":0,"y":0,"width":640,"height":800},"nodes":[],"floating_nodes":[]}],
           "floating_nodes":[
            {"id":7,"type":"floating_con","name":"float","pid":200,"app_id":"b","visible":true,"focused":false,"fullscreen_mode":0,
             "rect":{"x":10,"y":10,"width":100,"height":100},"window_rect":{"x":0,"y":0,"width":100,"height":100},"nodes":[],"floating_nodes":[]}]}],
          "floating_nodes":[]}],"floating_nodes":[]}"#).unwrap();
        let ids: Vec<u32> = views(&tree).iter().map(|v| v.con_id).collect();
        // Still below every floating view.
        assert_eq!(ids, vec![6, 5, 7]);
    }

    #[test]
    fn bounds_are_rect_moved_by_window_rect() {
        let v = views(&tree());
        let demo = v.iter().find(|v| v.con_id == 5).unwrap();
        // Title bar above rect; a 2-pixel border on the left: content at (2, 25).
        assert_eq!(demo.bounds, Rect::new(2, 25, 1276, 773));
        // The frame the pointer guard hit-tests: the title bar (deco_rect's 25 pixels) above rect.
        assert_eq!(demo.frame, Rect::new(0, 0, 1280, 800));
        assert_eq!((demo.pid, demo.title.as_str(), demo.app_id.as_deref(), demo.shell.as_str()), (Some(21191), "Application Class", Some("gtk3-demo"), "xdg_shell"));
        let wf = v.iter().find(|v| v.con_id == 6).unwrap();
        assert_eq!(wf.bounds, Rect::new(100, 150, 1415, 732));
        assert!(wf.focused && wf.floating && wf.visible && !wf.scratchpad);
        let xterm = v.iter().find(|v| v.con_id == 7).unwrap();
        assert_eq!((xterm.x11_window, xterm.shell.as_str(), xterm.bounds), (Some(2097166), "xwayland", Rect::new(302, 302, 480, 312)));
    }

    /// Two tiled views side by side (as the GTK3 fixture's two windows):
    /// the one focused last is the top tiled view whatever the layout's
    /// order, recorded shape of sway 1.7's `focus` lists.
    #[test]
    fn tiled_views_stack_by_focus_recency() {
        let tiled = |focus: &str| -> Vec<u32> {
            let t: Value = serde_json::from_str(&format!(
                r#"{{"id":1,"type":"root","focus":[3],"nodes":[{{"id":3,"type":"output","name":"HEADLESS-1","focus":[4],"nodes":[
                  {{"id":4,"type":"workspace","name":"1","focus":{focus},"nodes":[
                    {{"id":11,"type":"con","name":"main","pid":7,"app_id":"fx","shell":"xdg_shell","visible":true,"focused":false,"fullscreen_mode":0,"rect":{{"x":0,"y":0,"width":960,"height":1080}},"window_rect":{{"x":0,"y":0,"width":960,"height":1080}},"nodes":[],"floating_nodes":[]}},
                    {{"id":12,"type":"con","name":"second","pid":7,"app_id":"fx","shell":"xdg_shell","visible":true,"focused":false,"fullscreen_mode":0,"rect":{{"x":960,"y":0,"width":960,"height":1080}},"window_rect":{{"x":0,"y":0,"width":960,"height":1080}},"nodes":[],"floating_nodes":[]}}],
                   "floating_nodes":[]}}],"floating_nodes":[]}}],"floating_nodes":[]}}"#
            ))
            .unwrap();
            views(&t).iter().map(|v| v.con_id).collect()
        };
        // Bottom first: the view focused last is last.
        assert_eq!(tiled("[11,12]"), vec![12, 11]);
        assert_eq!(tiled("[12,11]"), vec![11, 12]);
        // No focus list (never focused): tree order.
        assert_eq!(tiled("[]"), vec![11, 12]);
    }

    #[test]
    fn scratchpad_views_are_hidden() {
        let v = views(&tree());
        let hidden = v.iter().find(|v| v.con_id == 9).unwrap();
        assert!(hidden.scratchpad && !hidden.visible);
        let other_ws = v.iter().find(|v| v.con_id == 10).unwrap();
        assert!(!other_ws.scratchpad && !other_ws.visible);
    }

    /// RUN_COMMAND replies as sway-ipc(7) gives them: one object per command.
    #[test]
    fn command_replies() {
        assert!(command_reply(&serde_json::json!([{"success": true}]), "[con_id=5] focus").is_ok());
        let e = command_reply(&serde_json::json!([{"success": false, "parse_error": false, "error": "No matching node."}]), "[con_id=99] kill").unwrap_err();
        assert_eq!(e.code, Code::ActionFailed);
        assert!(e.message.contains("No matching node.") && e.message.contains("[con_id=99] kill"), "{}", e.message);
        assert!(command_reply(&serde_json::json!([]), "focus").is_err());
    }

    #[test]
    fn an_empty_desktop_has_no_views() {
        let empty: Value = serde_json::from_str(r#"{"id":1,"type":"root","nodes":[{"id":3,"type":"output","name":"HEADLESS-1","nodes":[{"id":4,"type":"workspace","name":"1","nodes":[],"floating_nodes":[]}],"floating_nodes":[]}],"floating_nodes":[]}"#).unwrap();
        assert!(views(&empty).is_empty());
    }
}
