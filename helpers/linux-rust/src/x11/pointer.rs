//! The pointer guard of foreground input (`input.pointer_guard`): before
//! every pointer event, which top-level window is at the event's point, and
//! whether it is one of the target's.
//!
//! The window at a point is asked of the X server itself:
//! `TranslateCoordinates(root, root, x, y)` answers the topmost *mapped*
//! child of the root containing the point, with the same test the server
//! uses to pick the window a pointer event goes to (border included,
//! bounding and input shapes honoured, override-redirect and InputOnly
//! windows included, since they receive pointer events too). One request,
//! no QueryTree of the whole root, and no disagreement with the server about
//! shaped windows. That root child is the window manager's frame (a click
//! on a title bar is a click on its window): its client is the descendant
//! with `WM_STATE` (as `focus::client_of` finds it); a root child with
//! `WM_STATE` (no reparenting WM) or without any client (no WM at all, a
//! WM's own window) is its own top level.
//!
//! Accepted: a client window listed in the guard, or an override-redirect
//! window (a menu, a tooltip, a combo box popup: never managed, so never in
//! a window list) whose `_NET_WM_PID` is the guard's pid. Anything else,
//! the root included (no window at the point, or a point off the screen),
//! is refused.
//!
//! Left open: the check and the event are two requests. A window mapped or
//! raised by another client in between (a few hundred microseconds) still
//! gets that one event; every following event is checked again.

use super::focus;
use super::X;
use crate::error::{Code, Error, Result};
use crate::wire::messages::PointerGuard;
use x11rb::cookie::Cookie;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, GetPropertyReply, GetWindowAttributesReply, QueryTreeReply};
use x11rb::rust_connection::RustConnection;

/// What is at a point, as far as the guard is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The root's child at the point (a WM frame, an unmanaged or
    /// override-redirect window); 0 = no window: the root itself.
    pub frame: u32,
    /// The top-level client window of `frame` (the frame itself when it
    /// has none); 0 with `frame` 0.
    pub client: u32,
    /// `frame` is override-redirect (menus, tooltips, popups: not managed).
    pub override_redirect: bool,
    /// `_NET_WM_PID` of `client`, when set.
    pub pid: Option<u32>,
}

impl Hit {
    pub const ROOT: Hit = Hit { frame: 0, client: 0, override_redirect: false, pid: None };

    /// The window to name in a refusal: the client, else the frame (0 = none).
    pub fn window(&self) -> u32 {
        if self.client != 0 {
            self.client
        } else {
            self.frame
        }
    }

    /// POLICY_DENIED for an event at (x, y) over this (steps_completed and
    /// chars_sent are added by the caller, which knows them).
    pub fn refusal(&self, x: i32, y: i32) -> Error {
        let over = match (self.window(), self.pid) {
            (0, _) => "no window (the root)".to_string(),
            (w, _) => format!("window {w}"),
        };
        Error::new(Code::PolicyDenied, format!("the point ({x}, {y}) is over {over}, not the target's"))
            .with("reason", "point-outside-target")
            .with("x", x as i64)
            .with("y", y as i64)
            .with("window_id", self.window())
            .with("pid", self.pid.map(i64::from).unwrap_or(-1))
    }
}

/// Whether the guard lets an event go to what is at its point.
pub fn accepts(h: &Hit, g: &PointerGuard) -> bool {
    if h.frame == 0 {
        return false; // the root: outside every window
    }
    if h.client != 0 && g.windows.contains(&h.client) {
        return true;
    }
    // A popup of the target (same process): menus and tooltips are
    // override-redirect windows, never managed, never in a window list.
    h.override_redirect && h.pid == Some(g.pid)
}

/// The client window of a frame whose children carry `WM_STATE` or not
/// (`has_state`, in QueryTree order: bottom to top): the topmost with it.
pub fn topmost_with_state(children: &[u32], has_state: &[bool]) -> Option<u32> {
    children.iter().zip(has_state).rev().find(|(_, &s)| s).map(|(&c, _)| c)
}

/// The last frame -> client mapping seen within one input op. Only a guess:
/// its facts are asked together with the hit test itself (one round trip)
/// and used only when the hit is that frame and they still hold (the
/// client still has `WM_STATE` and the frame is still its parent).
#[derive(Debug, Default, Clone, Copy)]
pub struct Cache {
    last: Option<(u32, u32)>,
}

fn gone(e: &ReplyError) -> bool {
    matches!(e, ReplyError::X11Error(_))
}

fn first_u32(r: std::result::Result<GetPropertyReply, ReplyError>) -> Option<u32> {
    r.ok().and_then(|r| r.value32().and_then(|mut v| v.next()))
}

fn clamp(v: i32) -> i16 {
    v.clamp(i16::MIN as i32, i16::MAX as i32) as i16
}

/// What is at (px, py) now. Windows that vanish while we look make us look
/// again (three times at most; then the vanished window is reported, which
/// the guard refuses).
pub fn hit_at(x: &X, px: i32, py: i32, cache: &mut Cache) -> Result<Hit> {
    let mut last_frame = 0;
    for _ in 0..3 {
        match try_hit(x, px, py, cache)? {
            Ok(h) => return Ok(h),
            Err(frame) => last_frame = frame,
        }
    }
    Ok(Hit { frame: last_frame, client: last_frame, override_redirect: false, pid: None })
}

type PropCookie<'c> = Cookie<'c, RustConnection, GetPropertyReply>;

/// The requests about a frame (and a guessed client of it), sent together.
struct Facts<'c> {
    frame: u32,
    attrs: Cookie<'c, RustConnection, GetWindowAttributesReply>,
    state: PropCookie<'c>,
    pid: PropCookie<'c>,
    /// The guessed client: its WM_STATE, its parent, its pid.
    client: Option<(u32, PropCookie<'c>, Cookie<'c, RustConnection, QueryTreeReply>, PropCookie<'c>)>,
}

fn facts_send(x: &X, frame: u32, client: Option<u32>) -> Result<Facts<'_>> {
    let a = &x.atoms;
    let prop = |w: u32, atom: u32, ty: AtomEnum, len: u32| x.conn.get_property(false, w, atom, ty, 0, len);
    Ok(Facts {
        frame,
        attrs: x.conn.get_window_attributes(frame)?,
        state: prop(frame, a.WM_STATE, AtomEnum::ANY, 0)?,
        pid: prop(frame, a._NET_WM_PID, AtomEnum::CARDINAL, 1)?,
        client: match client.filter(|&c| c != frame) {
            Some(c) => Some((c, prop(c, a.WM_STATE, AtomEnum::ANY, 0)?, x.conn.query_tree(c)?, prop(c, a._NET_WM_PID, AtomEnum::CARDINAL, 1)?)),
            None => None,
        },
    })
}

/// The hit from a frame's facts; Ok(None) when the client must be searched
/// for below the frame; Err(frame) when the frame vanished.
fn facts_eval(f: Facts<'_>) -> Result<std::result::Result<Option<Hit>, u32>> {
    let frame = f.frame;
    let attrs = match f.attrs.reply() {
        Ok(r) => r,
        Err(e) if gone(&e) => return Ok(Err(frame)),
        Err(e) => return Err(e.into()),
    };
    let state = match f.state.reply() {
        Ok(r) => r.type_ != 0,
        Err(e) if gone(&e) => return Ok(Err(frame)),
        Err(e) => return Err(e.into()),
    };
    let fpid = first_u32(f.pid.reply()).filter(|&p| p > 0);
    let guess = f.client.and_then(|(c, state, tree, pid)| {
        let state = state.reply().map(|r| r.type_ != 0).unwrap_or(false);
        let parent = tree.reply().map(|t| t.parent).unwrap_or(0);
        let pid = first_u32(pid.reply()).filter(|&p| p > 0);
        (state && parent == frame).then_some((c, pid))
    });
    if attrs.override_redirect || state {
        // A popup, or a top level of its own (no reparenting WM).
        return Ok(Ok(Some(Hit { frame, client: frame, override_redirect: attrs.override_redirect, pid: fpid })));
    }
    Ok(Ok(guess.map(|(client, pid)| Hit { frame, client, override_redirect: false, pid })))
}

/// Ok(Err(frame)): `frame` vanished while we looked.
fn try_hit(x: &X, px: i32, py: i32, cache: &mut Cache) -> Result<std::result::Result<Hit, u32>> {
    // The hit test and, speculatively, the facts of the frame hit last time
    // (a drag stays over one window): one round trip when it is the same.
    let t = x.conn.translate_coordinates(x.root, x.root, clamp(px), clamp(py))?;
    let spec = match cache.last {
        Some((f, c)) => Some(facts_send(x, f, Some(c))?),
        None => None,
    };
    let frame = t.reply()?.child;
    if frame == 0 || frame == x.root {
        return Ok(Ok(Hit::ROOT));
    }
    let facts = match spec {
        Some(f) if f.frame == frame => f,
        _ => facts_send(x, frame, None)?, // (a stale speculation's replies are discarded)
    };
    let hit = match facts_eval(facts)? {
        Err(gone) => return Ok(Err(gone)),
        Ok(Some(h)) => h,
        Ok(None) => match focus::client_below(x, frame, 3)? {
            Some(client) => {
                let pid = x.conn.get_property(false, client, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, 0, 1)?.reply();
                Hit { frame, client, override_redirect: false, pid: first_u32(pid).filter(|&p| p > 0) }
            }
            // No client below: an unmanaged window (no WM runs) or the WM's own.
            None => {
                let pid = x.conn.get_property(false, frame, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, 0, 1)?.reply();
                Hit { frame, client: frame, override_redirect: false, pid: first_u32(pid).filter(|&p| p > 0) }
            }
        },
    };
    cache.last = Some((hit.frame, hit.client));
    Ok(Ok(hit))
}

/// The pointer's position now (after everything we sent was processed:
/// QueryPointer is a round trip behind our fake events).
pub fn position(x: &X) -> Result<(i32, i32)> {
    let r = x.conn.query_pointer(x.root)?.reply()?;
    Ok((r.root_x as i32, r.root_y as i32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard() -> PointerGuard {
        PointerGuard { pid: 42, windows: vec![0x200001, 0x200008] }
    }

    #[test]
    fn the_root_is_outside() {
        assert!(!accepts(&Hit::ROOT, &guard()));
        let e = Hit::ROOT.refusal(-5, 3000);
        assert_eq!(e.code, Code::PolicyDenied);
        let d: std::collections::HashMap<_, _> = e.details.iter().cloned().collect();
        assert_eq!(d["reason"], "point-outside-target".into());
        assert_eq!(d["window_id"], 0i64.into());
        assert_eq!(d["pid"], (-1i64).into());
        assert_eq!((d["x"].clone(), d["y"].clone()), ((-5i64).into(), 3000i64.into()));
    }

    #[test]
    fn a_frame_counts_as_its_client() {
        // The point is on the title bar of the WM frame 0x600261 whose client
        // is the target's window.
        let title_bar = Hit { frame: 0x600261, client: 0x200001, override_redirect: false, pid: Some(42) };
        assert!(accepts(&title_bar, &guard()));
        let second = Hit { frame: 0x6002e3, client: 0x200008, override_redirect: false, pid: Some(42) };
        assert!(accepts(&second, &guard()));
    }

    #[test]
    fn other_windows_are_refused_even_of_the_same_pid() {
        let terminal = Hit { frame: 0x600300, client: 0x400001, override_redirect: false, pid: Some(777) };
        assert!(!accepts(&terminal, &guard()));
        let e = terminal.refusal(300, 120);
        let d: std::collections::HashMap<_, _> = e.details.iter().cloned().collect();
        assert_eq!(d["window_id"], 0x400001i64.into());
        assert_eq!(d["pid"], 777i64.into());
        // A managed window of the target's process that the orchestrator did
        // not list is not the target.
        let unlisted = Hit { frame: 0x600400, client: 0x200010, override_redirect: false, pid: Some(42) };
        assert!(!accepts(&unlisted, &guard()));
        // A WM frame without a client (the WM's own window): the frame is named.
        let wm_own = Hit { frame: 0x600256, client: 0x600256, override_redirect: false, pid: None };
        assert!(!accepts(&wm_own, &guard()));
        assert_eq!(wm_own.window(), 0x600256);
    }

    #[test]
    fn popups_of_the_target_are_accepted_others_not() {
        let menu = Hit { frame: 0x200050, client: 0x200050, override_redirect: true, pid: Some(42) };
        assert!(accepts(&menu, &guard()));
        let notification = Hit { frame: 0x800001, client: 0x800001, override_redirect: true, pid: Some(99) };
        assert!(!accepts(&notification, &guard()));
        let anonymous = Hit { frame: 0x800002, client: 0x800002, override_redirect: true, pid: None };
        assert!(!accepts(&anonymous, &guard()));
        // The pid exception is for override-redirect windows only.
        let managed_same_pid = Hit { override_redirect: false, ..menu };
        assert!(!accepts(&managed_same_pid, &guard()));
    }

    #[test]
    fn an_empty_window_list_accepts_only_popups_of_the_pid() {
        let g = PointerGuard { pid: 42, windows: vec![] };
        assert!(!accepts(&Hit { frame: 1, client: 1, override_redirect: false, pid: Some(42) }, &g));
        assert!(accepts(&Hit { frame: 1, client: 1, override_redirect: true, pid: Some(42) }, &g));
    }

    #[test]
    fn topmost_client_in_a_frame() {
        // QueryTree lists bottom to top: the topmost child with WM_STATE wins.
        assert_eq!(topmost_with_state(&[10, 11, 12], &[true, false, true]), Some(12));
        assert_eq!(topmost_with_state(&[10, 11, 12], &[true, false, false]), Some(10));
        assert_eq!(topmost_with_state(&[10, 11], &[false, false]), None);
        assert_eq!(topmost_with_state(&[], &[]), None);
    }

    #[test]
    fn coordinates_are_clamped_like_the_motion() {
        assert_eq!(clamp(40_000), i16::MAX);
        assert_eq!(clamp(-40_000), i16::MIN);
        assert_eq!(clamp(12), 12);
    }
}
