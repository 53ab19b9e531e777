//! The focus guard of keyboard input: which top-level window holds the X
//! input focus, whether that is the window the input is meant for, and
//! asking the window manager to activate it (EWMH `_NET_ACTIVE_WINDOW`).
//!
//! "Top-level window" is what `list_windows` reports: the managed client
//! window (the one with `WM_STATE`) under the window manager's frame, or a
//! child of the root when no window manager reparents.

use super::X;
use crate::error::{Code, Error, Result};
use crate::wire::messages::FocusGuard;
use std::os::unix::io::AsRawFd;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{AtomEnum, ChangeWindowAttributesAux, ClientMessageEvent, ConnectionExt as _, EventMask, InputFocus};

/// What a focus check saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The focused top-level window; 0 when nothing has the focus.
    pub window: u32,
    /// Its `_NET_WM_PID`, when known.
    pub pid: Option<u32>,
    /// The guard accepts it: the target itself, or a transient (dialog) of
    /// the target owned by the same pid.
    pub accepted: bool,
}

impl Seen {
    /// FOCUS_MISMATCH for this observation (steps_completed / chars_sent are
    /// added by the caller, which knows them).
    pub fn mismatch(&self, g: &FocusGuard) -> Error {
        let what = match (self.window, self.pid) {
            (0, _) => "no window has the keyboard focus".to_string(),
            (w, Some(p)) => format!("the keyboard focus is on window {w} (pid {p})"),
            (w, None) => format!("the keyboard focus is on window {w} (pid unknown)"),
        };
        Error::new(Code::FocusMismatch, format!("{what}, not on window {} (pid {}): no keys sent from here on", g.window_id, g.pid))
            .with("expected_window", g.window_id)
            .with("focus_window", self.window)
            .with("focus_pid", self.pid.map(i64::from).unwrap_or(-1))
    }
}

/// A vanished window (BadWindow and friends) is not a failure of the check:
/// the focus simply is not there any more.
fn gone(e: &ReplyError) -> bool {
    matches!(e, ReplyError::X11Error(_))
}

/// The top-level client window containing `win` (see the module comment).
/// 0 when `win` is 0 or vanished while we looked.
pub fn client_of(x: &X, win: u32) -> Result<u32> {
    if win == 0 || win == x.root {
        return Ok(0);
    }
    // Walk up; one round trip per level (WM_STATE and the parent together).
    let mut w = win;
    let mut root_child = None;
    for _ in 0..64 {
        let state = x.conn.get_property(false, w, x.atoms.WM_STATE, AtomEnum::ANY, 0, 0)?;
        let tree = x.conn.query_tree(w)?;
        let (state, tree) = match (state.reply(), tree.reply()) {
            (Ok(s), Ok(t)) => (s, t),
            (Err(e), _) | (_, Err(e)) if gone(&e) => return Ok(0),
            (Err(e), _) | (_, Err(e)) => return Err(e.into()),
        };
        if state.type_ != 0 {
            return Ok(w);
        }
        if tree.parent == x.root || tree.parent == 0 {
            root_child = Some(w);
            break;
        }
        w = tree.parent;
    }
    let Some(frame) = root_child else { return Err(Error::internal("window hierarchy deeper than 64")) };
    // The focus is on the WM frame itself (or on a window without WM_STATE):
    // the client is the descendant with WM_STATE (as XmuClientWindow finds
    // it); an unmanaged root child is its own top level.
    Ok(client_below(x, frame, 3)?.unwrap_or(frame))
}

/// The client window (with `WM_STATE`) below a WM frame, searching `depth`
/// levels: the topmost child with it, else the first found deeper.
pub fn client_below(x: &X, win: u32, depth: u32) -> Result<Option<u32>> {
    if depth == 0 {
        return Ok(None);
    }
    let children = match x.conn.query_tree(win)?.reply() {
        Ok(t) => t.children,
        Err(e) if gone(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let cookies = children
        .iter()
        .map(|&c| x.conn.get_property(false, c, x.atoms.WM_STATE, AtomEnum::ANY, 0, 0))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let with_state: Vec<bool> = cookies.into_iter().map(|c| c.reply().map(|r| r.type_ != 0).unwrap_or(false)).collect();
    // Top-most child first (query_tree lists bottom to top).
    if let Some(c) = super::pointer::topmost_with_state(&children, &with_state) {
        return Ok(Some(c));
    }
    for &c in children.iter().rev() {
        if let Some(found) = client_below(x, c, depth - 1)? {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// The top-level window that receives key events now. Focus None counts as
/// no window; PointerRoot (or the root itself) means the keys go to the
/// window under the pointer.
pub fn focused_toplevel(x: &X) -> Result<u32> {
    let focus = x.conn.get_input_focus()?.reply()?.focus;
    if focus == u32::from(InputFocus::NONE) {
        return Ok(0);
    }
    if focus == u32::from(InputFocus::POINTER_ROOT) || focus == x.root {
        let child = x.conn.query_pointer(x.root)?.reply()?.child;
        return client_of(x, child);
    }
    client_of(x, focus)
}

/// One check of the guard: GetInputFocus, then the focused top level's pid
/// and WM_TRANSIENT_FOR when it is not the target itself.
pub fn observe(x: &X, g: &FocusGuard) -> Result<Seen> {
    let window = focused_toplevel(x)?;
    if window == 0 {
        return Ok(Seen { window, pid: None, accepted: false });
    }
    let pid = x.conn.get_property(false, window, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, 0, 1)?;
    let transient = x.conn.get_property(false, window, AtomEnum::WM_TRANSIENT_FOR, AtomEnum::WINDOW, 0, 1)?;
    let first = |r: std::result::Result<x11rb::protocol::xproto::GetPropertyReply, ReplyError>| {
        r.ok().and_then(|r| r.value32().and_then(|mut v| v.next()))
    };
    let pid = first(pid.reply()).filter(|&p| p > 0);
    let transient = first(transient.reply());
    let accepted = window == g.window_id || (pid == Some(g.pid) && transient == Some(g.window_id));
    Ok(Seen { window, pid, accepted })
}

/// Ask the window manager to activate `target` and wait until the guard
/// accepts the focus, `until` passes or `cancelled()` says so. Waits on X
/// events (FocusIn on the target, `_NET_ACTIVE_WINDOW` changes on the root),
/// re-checking on each and at least every 10 ms; no fixed sleep.
pub fn activate_and_wait(x: &X, g: &FocusGuard, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Seen> {
    // Select the events first so none is missed. This connection is the
    // input worker's own: nothing else selects events on it. Checked: a
    // target that no longer exists fails here, without waiting for a focus
    // change that cannot come.
    let select = x.conn.change_window_attributes(g.window_id, &ChangeWindowAttributesAux::new().event_mask(EventMask::FOCUS_CHANGE))?;
    if let Err(e) = select.check() {
        return match e {
            ReplyError::X11Error(_) => observe(x, g),
            other => Err(other.into()),
        };
    }
    let _ = x.conn.change_window_attributes(x.root, &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE))?;
    // EWMH: source indication 2 (a pager: the user asked for it, so no
    // focus-stealing prevention), timestamp CurrentTime, no active window.
    let ev = ClientMessageEvent::new(32, g.window_id, x.atoms._NET_ACTIVE_WINDOW, [2u32, 0, 0, 0, 0]);
    x.conn.send_event(false, x.root, EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY, ev)?;
    x.conn.flush()?;
    let result = (|| loop {
        let seen = observe(x, g)?;
        if seen.accepted || Instant::now() >= until || cancelled() {
            return Ok(seen);
        }
        wait_for_event(x, (until - Instant::now()).min(Duration::from_millis(10)))?;
    })();
    // Deselect and drop whatever arrived (also a BadWindow for a vanished target).
    let _ = x.conn.change_window_attributes(g.window_id, &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT));
    let _ = x.conn.change_window_attributes(x.root, &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT));
    let _ = x.sync();
    while let Ok(Some(_)) = x.conn.poll_for_event() {}
    result
}

/// Block until an event is queued on the connection or `max` passes.
fn wait_for_event(x: &X, max: Duration) -> Result<()> {
    // Events may already sit in x11rb's queue (read while waiting for a
    // reply): those count, and poll(2) would not see them.
    let mut got = false;
    while x.conn.poll_for_event()?.is_some() {
        got = true;
    }
    if got {
        return Ok(());
    }
    let mut fds = [libc::pollfd { fd: x.conn.stream().as_raw_fd(), events: libc::POLLIN, revents: 0 }];
    let ms = max.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for the duration of the call.
    let _ = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
    while x.conn.poll_for_event()?.is_some() {}
    Ok(())
}
