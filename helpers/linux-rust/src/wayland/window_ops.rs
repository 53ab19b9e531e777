//! window_op on sway (issue 19): activate, restore and close one native
//! Wayland view through sway's IPC commands, each read back from sway's
//! tree, as the X11 backend reads back the window manager's answer.
//!
//! - activate: `[con_id=N] focus` (sway switches to the view's workspace, and
//!   shows a scratchpad view), then the view holding sway's focus, read back.
//! - restore: a minimized view (in the scratchpad) is shown again with
//!   `[con_id=N] scratchpad show` (sway 1.7 puts it, floating, on the
//!   current workspace and focuses it), then `focus`; read back: shown, out
//!   of the scratchpad and focused. A view not minimized: nothing sent.
//! - close: `[con_id=N] kill`, which for a native view is xdg_toplevel.close
//!   (the app's own close, as its close button; never a signal), then the
//!   view's end awaited. An app that asks first (unsaved changes) keeps it:
//!   not done.
//!
//! An Xwayland view is closed by X11's own rule, not sway's kill (which
//! kills an X client that takes no WM_DELETE_WINDOW): the helper reads the
//! X window's WM_PROTOCOLS on Xwayland's display and sends WM_DELETE_WINDOW
//! itself; a window without it is refused (ACTION_UNSUPPORTED reason
//! xwayland-no-wm-delete), and so is one when no X display is reachable
//! (WINDOW_NOT_FOUND reason xwayland-window).

use super::sway::{self, View};
use crate::error::{Code, Error, Result};
use crate::x11::wm::Outcome;
use std::time::{Duration, Instant};

/// How often sway's tree is read while waiting.
const POLL: Duration = Duration::from_millis(25);

/// The view now (None: it is gone).
fn now(sock: &str, con_id: u32) -> Result<Option<View>> {
    Ok(sway::list(sock)?.into_iter().find(|v| v.con_id == con_id))
}

/// Poll sway's tree until `holds` (or `until`, or a cancel): the last state.
fn wait_for(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool, holds: impl Fn(Option<&View>) -> bool) -> Result<Option<View>> {
    loop {
        let v = now(sock, con_id)?;
        if holds(v.as_ref()) || Instant::now() >= until || cancelled() {
            return Ok(v);
        }
        std::thread::sleep(POLL);
    }
}

/// Who holds sway's focus, for a detail.
fn focus_holder(sock: &str) -> String {
    match sway::list(sock).ok().and_then(|vs| vs.into_iter().find(|v| v.focused)) {
        Some(f) => format!("view {} ({:?})", f.con_id, f.title),
        None => "no view".into(),
    }
}

/// Once a command was sent, a failure (sway's IPC not answering the
/// read-back) is an outcome that says so, never an error (which would say
/// nothing was sent).
fn sent_then(what: &str, r: Result<Outcome>) -> Result<Outcome> {
    Ok(r.unwrap_or_else(|e| Outcome { done: false, detail: format!("{what} sent; then: {}", e.message), sent: true }))
}

pub fn activate(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    sway::view(sock, con_id)?;
    sway::command(sock, &format!("[con_id={con_id}] focus"))?;
    sent_then("sway `focus`", activated(sock, con_id, until, cancelled))
}

fn activated(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let v = wait_for(sock, con_id, until, cancelled, |v| v.is_some_and(|v| v.focused))?;
    Ok(match v {
        Some(v) if v.focused => Outcome { done: true, detail: "sway `focus` sent; the view holds sway's focus (read back)".into(), sent: true },
        Some(_) => Outcome { done: false, detail: format!("sway `focus` sent; the focus is on {}", focus_holder(sock)), sent: true },
        None => Outcome { done: false, detail: "sway `focus` sent; the view is gone".into(), sent: true },
    })
}

pub fn restore(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let before = sway::view(sock, con_id)?;
    if !before.scratchpad {
        return Ok(Outcome { done: true, detail: "the window was not minimized (not in sway's scratchpad): nothing sent".into(), sent: false });
    }
    // With criteria, `scratchpad show` toggles that view: sent only while it is hidden there.
    sway::command(sock, &format!("[con_id={con_id}] scratchpad show"))?;
    sent_then("sway `scratchpad show`", restored(sock, con_id, until, cancelled))
}

fn restored(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let shown = |v: Option<&View>| v.is_some_and(|v| !v.scratchpad && v.visible);
    let v = wait_for(sock, con_id, until, cancelled, shown)?;
    if !shown(v.as_ref()) {
        return Ok(Outcome { done: false, detail: "sway `scratchpad show` sent; the view is still hidden".into(), sent: true });
    }
    sway::command(sock, &format!("[con_id={con_id}] focus"))?;
    let v = wait_for(sock, con_id, until, cancelled, |v| shown(v) && v.is_some_and(|v| v.focused))?;
    Ok(match v {
        Some(v) if v.focused && shown(Some(&v)) => {
            Outcome { done: true, detail: "sway `scratchpad show` (floating, on the current workspace) and `focus` sent; shown and focused, read back".into(), sent: true }
        }
        _ => Outcome { done: false, detail: format!("sway `scratchpad show` and `focus` sent; shown, but the focus is on {}", focus_holder(sock)), sent: true },
    })
}

pub fn close(sock: &str, con_id: u32, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Outcome> {
    let v = sway::view(sock, con_id)?;
    let how = if v.shell == "xwayland" {
        close_xwayland(&v)?
    } else {
        sway::command(sock, &format!("[con_id={con_id}] kill"))?;
        "sway `kill` sent (xdg_toplevel.close: the app's own close)"
    };
    let v = match wait_for(sock, con_id, until, cancelled, |v| v.is_none()) {
        Ok(v) => v,
        Err(e) => return Ok(Outcome { done: false, detail: format!("{how}; then: {}", e.message), sent: true }),
    };
    Ok(match v {
        None => Outcome { done: true, detail: format!("{how}; the window closed"), sent: true },
        Some(_) => Outcome { done: false, detail: format!("{how}; the window is still open (the app may be asking something first)"), sent: true },
    })
}

/// An Xwayland view's close: WM_DELETE_WINDOW to its X window on Xwayland's
/// display ($DISPLAY), as the X11 backend sends it; never sway's kill.
fn close_xwayland(v: &View) -> Result<&'static str> {
    let con_id = v.con_id;
    let unreachable = |why: String| {
        Error::new(Code::WindowNotFound, format!("window {con_id} is an Xwayland window, and its WM_PROTOCOLS cannot be read: {why} (sway's kill would kill an X client that takes no WM_DELETE_WINDOW)"))
            .with("reason", "xwayland-window")
    };
    let Some(xid) = v.x11_window else { return Err(unreachable("sway names no X window for it".into())) };
    let x = crate::x11::X::connect().map_err(|e| unreachable(e.message))?;
    if !crate::x11::wm::send_delete(&x, xid)? {
        return Err(Error::new(Code::ActionUnsupported, format!("window {con_id} (X window {xid}) takes no WM_DELETE_WINDOW: its app has no close of its own to ask, and sway's kill would kill its X client"))
            .with("reason", "xwayland-no-wm-delete"));
    }
    Ok("WM_DELETE_WINDOW sent to the Xwayland app (X11's close: the app's own)")
}
