//! Requests to the window manager and to an app about one of its top-level
//! windows, as its title bar's buttons would make them: un-minimize it
//! (ICCCM: map it; EWMH `_NET_ACTIVE_WINDOW` if that did not do it) and
//! close it (ICCCM `WM_DELETE_WINDOW` when the window takes part in that
//! protocol, else EWMH `_NET_CLOSE_WINDOW`, which the window manager turns
//! into the same request or a polite close of its own). Never
//! `XKillClient`, never a signal: the app decides (and may ask to save).
//! Each wait is bounded and polls the server (no events selected: this
//! may run on any connection).

use super::X;
use crate::error::{Code, Error, Result};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ClientMessageEvent, ConnectionExt as _, EventMask, MapState};

/// Between two reads while waiting.
const POLL: Duration = Duration::from_millis(20);

fn atom(x: &X, name: &str) -> Result<u32> {
    Ok(x.conn.intern_atom(false, name.as_bytes())?.reply()?.atom)
}

/// What the server says of a window now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The window still exists.
    pub exists: bool,
    /// Mapped and all its ancestors mapped.
    pub viewable: bool,
    /// ICCCM WM_STATE: 1 normal, 3 iconic, 0 withdrawn; None when not set.
    pub wm_state: Option<u32>,
    /// EWMH `_NET_WM_STATE_HIDDEN` (minimized).
    pub hidden: bool,
}

impl Shown {
    pub fn minimized(&self) -> bool {
        self.exists && (self.hidden || self.wm_state == Some(3) || !self.viewable)
    }
    /// Gone for the user: destroyed, or withdrawn (unmapped, no longer managed).
    pub fn closed(&self) -> bool {
        !self.exists || (!self.viewable && matches!(self.wm_state, None | Some(0)))
    }
}

pub fn shown(x: &X, w: u32) -> Result<Shown> {
    let attrs = x.conn.get_window_attributes(w)?;
    let state = x.conn.get_property(false, w, x.atoms.WM_STATE, x.atoms.WM_STATE, 0, 2)?;
    let net = x.conn.get_property(false, w, x.atoms._NET_WM_STATE, AtomEnum::ATOM, 0, 64)?;
    let attrs = match attrs.reply() {
        Ok(a) => a,
        Err(x11rb::errors::ReplyError::X11Error(_)) => return Ok(Shown { exists: false, viewable: false, wm_state: None, hidden: false }),
        Err(e) => return Err(e.into()),
    };
    let wm_state = state.reply().ok().and_then(|r| r.value32().and_then(|mut v| v.next()));
    let hidden = net
        .reply()
        .ok()
        .and_then(|r| r.value32().map(|v| v.collect::<Vec<_>>()))
        .is_some_and(|v| v.contains(&x.atoms._NET_WM_STATE_HIDDEN));
    Ok(Shown { exists: true, viewable: attrs.map_state == MapState::VIEWABLE, wm_state, hidden })
}

/// Where a window is on the screen now (None when it is gone).
fn position(x: &X, w: u32) -> Result<Option<(i16, i16)>> {
    match x.conn.translate_coordinates(w, x.root, 0, 0)?.reply() {
        Ok(r) => Ok(Some((r.dst_x, r.dst_y))),
        Err(x11rb::errors::ReplyError::X11Error(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Wait (bounded) until a shown window stops moving: window managers
/// animate a de-iconify (openbox slides it in over ~150 ms).
fn wait_still(x: &X, w: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<()> {
    let mut last = position(x, w)?;
    while Instant::now() < until && !cancelled() {
        std::thread::sleep(Duration::from_millis(30).min(until.saturating_duration_since(Instant::now())));
        let now = position(x, w)?;
        if now == last {
            return Ok(());
        }
        last = now;
    }
    Ok(())
}

/// Poll until `done` holds, `until` passes or `cancelled()`; the last reading.
fn wait_for(x: &X, w: u32, until: Instant, cancelled: &dyn Fn() -> bool, done: impl Fn(&Shown) -> bool) -> Result<Shown> {
    loop {
        let s = shown(x, w)?;
        if done(&s) || Instant::now() >= until || cancelled() {
            return Ok(s);
        }
        std::thread::sleep(POLL.min(until.saturating_duration_since(Instant::now())));
    }
}

/// The window manager's EWMH activation request (source: a pager, i.e. the
/// user asked for it, so focus-stealing prevention does not apply).
fn send_active_window(x: &X, w: u32) -> Result<()> {
    let ev = ClientMessageEvent::new(32, w, x.atoms._NET_ACTIVE_WINDOW, [2u32, 0, 0, 0, 0]);
    x.conn.send_event(false, x.root, EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY, ev)?;
    x.conn.flush()?;
    Ok(())
}

/// The outcome of a request: whether it took effect (read back), what was
/// done, and whether anything was sent at all.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub done: bool,
    pub detail: String,
    pub sent: bool,
}

/// Un-minimize a window: map it (ICCCM's iconic -> normal transition, which
/// the window manager performs), and if it is still minimized after a
/// while, ask the window manager to activate it. Done: viewable and not hidden.
pub fn restore(x: &X, w: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let before = shown(x, w)?;
    if !before.exists {
        return Err(Error::new(Code::WindowNotFound, format!("no X window {w}")).with("window_id", w));
    }
    if !before.minimized() {
        return Ok(Outcome { done: true, detail: "the window was not minimized: nothing sent".into(), sent: false });
    }
    x.conn.map_window(w)?;
    x.conn.flush()?;
    let first = (Instant::now() + Duration::from_millis(700)).min(until);
    let s = wait_for(x, w, first, cancelled, |s| !s.minimized())?;
    if !s.minimized() {
        wait_still(x, w, until, cancelled)?;
        return Ok(Outcome { done: true, detail: "mapped (iconic -> normal); shown, not hidden and still, read back".into(), sent: true });
    }
    if cancelled() {
        return Ok(Outcome { done: false, detail: "mapped; cancelled while waiting".into(), sent: true });
    }
    send_active_window(x, w)?;
    let s = wait_for(x, w, until, cancelled, |s| !s.minimized())?;
    let done = !s.minimized();
    if done {
        wait_still(x, w, until, cancelled)?;
    }
    let detail = if done {
        "mapping did not restore it; _NET_ACTIVE_WINDOW did (shown and not hidden, read back)".to_string()
    } else {
        format!("still minimized after mapping and _NET_ACTIVE_WINDOW (viewable {}, hidden {}, WM_STATE {:?})", s.viewable, s.hidden, s.wm_state)
    };
    Ok(Outcome { done, detail, sent: true })
}

/// ICCCM 4.2.8.1: a WM_PROTOCOLS ClientMessage WM_DELETE_WINDOW to the client
/// window itself, if it lists WM_DELETE_WINDOW in its WM_PROTOCOLS (its own
/// close, as its close button); false, nothing sent, if it does not.
pub fn send_delete(x: &X, w: u32) -> Result<bool> {
    let wm_protocols = atom(x, "WM_PROTOCOLS")?;
    let wm_delete = atom(x, "WM_DELETE_WINDOW")?;
    let protocols = x.conn.get_property(false, w, wm_protocols, AtomEnum::ATOM, 0, 64)?.reply()?;
    if !protocols.value32().is_some_and(|mut v| v.any(|a| a == wm_delete)) {
        return Ok(false);
    }
    let ev = ClientMessageEvent::new(32, w, wm_protocols, [wm_delete, 0 /* CurrentTime */, 0, 0, 0]);
    x.conn.send_event(false, w, EventMask::NO_EVENT, ev)?;
    x.conn.flush()?;
    Ok(true)
}

/// Ask for a window to be closed, the way its close button does, and wait
/// (bounded) for it to go. Done: the window was destroyed or withdrawn. An
/// app may keep it and ask first (unsaved changes): not done, and nothing
/// more is done about it here.
pub fn close(x: &X, w: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let before = shown(x, w)?;
    if !before.exists {
        return Err(Error::new(Code::WindowNotFound, format!("no X window {w}")).with("window_id", w));
    }
    let how = if send_delete(x, w)? {
        "WM_DELETE_WINDOW sent to the app"
    } else {
        // EWMH _NET_CLOSE_WINDOW: the window manager closes it its own way.
        let net_close = atom(x, "_NET_CLOSE_WINDOW")?;
        let ev = ClientMessageEvent::new(32, w, net_close, [0u32, 2, 0, 0, 0]);
        x.conn.send_event(false, x.root, EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY, ev)?;
        "the window takes no WM_DELETE_WINDOW: _NET_CLOSE_WINDOW sent to the window manager"
    };
    x.conn.flush()?;
    let s = wait_for(x, w, until, cancelled, |s| s.closed())?;
    let done = s.closed();
    let detail = if done { format!("{how}; the window closed") } else { format!("{how}; the window is still open (the app may be asking something first)") };
    Ok(Outcome { done, detail, sent: true })
}
