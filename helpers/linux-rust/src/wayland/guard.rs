//! The guards of foreground input on sway, from its IPC (the X11 ones:
//! x11/focus.rs, x11/pointer.rs; same refusal codes and details).
//!
//! Focus guard: the focused view of sway's tree must be the target. Unlike
//! X11, a dialog of the target is not accepted: sway's IPC says nothing of
//! an xdg_toplevel's parent, and a same-pid window alone could be another
//! main window of the app. Activation: sway's `[con_id=N] focus`, then read
//! back until the tree says focused.
//!
//! Pointer guard: the topmost shown view whose frame (content, borders,
//! title bar) holds the point: fullscreen above floating (in sway's order)
//! above tiled, on visible workspaces (`sway::views` orders them so); a
//! point on no view is refused. Left open: popups (xdg_popup menus) and
//! layer-shell surfaces are not in sway's tree, so a point over one is
//! judged by the view below it.

use super::sway::{self, View};
use crate::error::Result;
use crate::wire::messages::{FocusGuard, PointerGuard, Rect};
use crate::x11::focus::Seen;
use crate::x11::input::sleep_until;
use crate::x11::pointer::Hit;
use std::time::{Duration, Instant};

fn contains(r: Rect, x: i32, y: i32) -> bool {
    x >= r.x && y >= r.y && (x as i64) < r.x as i64 + r.width as i64 && (y as i64) < r.y as i64 + r.height as i64
}

/// The topmost shown view at (x, y) of views listed bottom first.
pub fn topmost_at(views: &[View], x: i32, y: i32) -> Option<&View> {
    views.iter().rev().filter(|v| v.visible && !v.scratchpad).find(|v| contains(v.frame, x, y))
}

pub fn view_at(sock: &str, x: i32, y: i32) -> Result<Option<View>> {
    Ok(topmost_at(&sway::list(sock)?, x, y).cloned())
}

/// The pointer guard's verdict on an event at (x, y): Ok, or POLICY_DENIED
/// reason point-outside-target naming what is there (window_id 0: nothing).
pub fn judge(views: &[View], g: &PointerGuard, x: i32, y: i32) -> Result<()> {
    match topmost_at(views, x, y) {
        Some(v) if g.windows.contains(&v.con_id) => Ok(()),
        Some(v) => Err(Hit { frame: v.con_id, client: v.con_id, override_redirect: false, pid: v.pid }.refusal(x, y)),
        None => Err(Hit::ROOT.refusal(x, y)),
    }
}

pub fn check_point(sock: &str, g: &PointerGuard, x: i32, y: i32) -> Result<()> {
    judge(&sway::list(sock)?, g, x, y)
}

/// The bounding box of the active outputs (absolute pointer motion is a
/// fraction of it).
pub fn layout(sock: &str) -> Result<Rect> {
    let outs = sway::outputs(sock)?;
    let (mut x0, mut y0, mut x1, mut y1) = (i64::MAX, i64::MAX, i64::MIN, i64::MIN);
    for o in &outs {
        x0 = x0.min(o.x as i64);
        y0 = y0.min(o.y as i64);
        x1 = x1.max(o.x as i64 + o.width as i64);
        y1 = y1.max(o.y as i64 + o.height as i64);
    }
    if outs.is_empty() || x1 <= x0 || y1 <= y0 {
        return Err(crate::error::Error::new(crate::error::Code::ActionFailed, "sway has no active output to move the pointer on"));
    }
    Ok(Rect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32))
}

/// The focused view (None: a workspace or nothing has the focus).
pub fn focused(sock: &str) -> Result<Option<View>> {
    Ok(sway::list(sock)?.into_iter().find(|v| v.focused))
}

/// What the focus guard sees in a list of views.
pub fn seen(views: &[View], g: &FocusGuard) -> Seen {
    match views.iter().find(|v| v.focused) {
        Some(v) => Seen { window: v.con_id, pid: v.pid, accepted: v.con_id == g.window_id },
        None => Seen { window: 0, pid: None, accepted: false },
    }
}

pub fn observe_focus(sock: &str, g: &FocusGuard) -> Result<Seen> {
    Ok(seen(&sway::list(sock)?, g))
}

/// Ask sway to focus the target, then read back (every 10 ms) until the
/// guard accepts, `until` passes or `cancelled()`.
pub fn activate_and_wait(sock: &str, g: &FocusGuard, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Seen> {
    // A target that no longer exists: the command fails, the read says so.
    let _ = sway::command(sock, &format!("[con_id={}] focus", g.window_id));
    loop {
        let s = observe_focus(sock, g)?;
        if s.accepted || Instant::now() >= until {
            return Ok(s);
        }
        if !sleep_until((Instant::now() + Duration::from_millis(10)).min(until), cancelled) {
            return Ok(s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    fn view(con_id: u32, frame: Rect, floating: bool, visible: bool) -> View {
        View {
            con_id,
            pid: Some(100 + con_id),
            title: String::new(),
            app_id: None,
            shell: "xdg_shell".into(),
            x11_window: None,
            bounds: frame,
            frame,
            focused: false,
            visible,
            scratchpad: false,
            floating,
            fullscreen: false,
        }
    }

    #[test]
    fn the_topmost_shown_view_takes_the_point() {
        // Bottom first: a hidden view, two tiled halves, a floating view over the left one.
        let views = vec![
            view(9, Rect::new(0, 0, 1920, 1080), false, false),
            view(5, Rect::new(0, 0, 960, 1080), false, true),
            view(6, Rect::new(960, 0, 960, 1080), false, true),
            view(7, Rect::new(100, 100, 300, 200), true, true),
        ];
        assert_eq!(topmost_at(&views, 150, 150).map(|v| v.con_id), Some(7));
        assert_eq!(topmost_at(&views, 50, 50).map(|v| v.con_id), Some(5));
        assert_eq!(topmost_at(&views, 960, 50).map(|v| v.con_id), Some(6));
        assert_eq!(topmost_at(&views, 400, 150).map(|v| v.con_id), Some(5), "the right edge is outside");
        assert_eq!(topmost_at(&views, 2000, 50).map(|v| v.con_id), None);
        let g = PointerGuard { pid: 105, windows: vec![5] };
        assert!(judge(&views, &g, 50, 50).is_ok());
        let e = judge(&views, &g, 150, 150).unwrap_err();
        assert_eq!(e.code, Code::PolicyDenied);
        let d: std::collections::HashMap<_, _> = e.details.iter().cloned().collect();
        assert_eq!(d["reason"], "point-outside-target".into());
        assert_eq!(d["window_id"], 7i64.into());
        assert_eq!(d["pid"], 107i64.into());
        let off = judge(&views, &g, 5000, 5).unwrap_err();
        let d: std::collections::HashMap<_, _> = off.details.iter().cloned().collect();
        assert_eq!(d["window_id"], 0i64.into());
    }

    #[test]
    fn only_the_focused_target_is_accepted() {
        let mut views = vec![view(5, Rect::new(0, 0, 10, 10), false, true), view(6, Rect::new(10, 0, 10, 10), false, true)];
        let g = FocusGuard { window_id: 5, pid: 105, activate: false };
        assert_eq!(seen(&views, &g), Seen { window: 0, pid: None, accepted: false });
        views[1].focused = true;
        assert_eq!(seen(&views, &g), Seen { window: 6, pid: Some(106), accepted: false });
        assert_eq!(seen(&views, &g).mismatch(&g).code, Code::FocusMismatch);
        views[1].focused = false;
        views[0].focused = true;
        assert!(seen(&views, &g).accepted);
    }
}
