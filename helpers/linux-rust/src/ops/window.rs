//! A window's facts for the element routes (element_action, hit_test,
//! focused_element, menus), whichever backend runs: X11 from the X server,
//! a native Wayland window from sway's tree. The routes match the window's
//! frame accessible against `info` and move the app's coordinates to the
//! screen with `view`, so they run unchanged on both.

use super::Ctx;
use crate::atspi::tree::{self, View};
use crate::atspi::A11y;
use crate::error::{Code, Error, Result};
use crate::wayland::{self, sway, Backend};
use crate::wire::messages::Rect;
use crate::x11::windows::{self, WinInfo};

/// One top-level window.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its id, title, pid, and its bounds in the app's own coordinates
    /// (what the frame's extents are compared with): the screen bounds on
    /// X11; (0, 0, width, height) for a native Wayland window, whose
    /// accessible extents are relative to its surface.
    pub info: WinInfo,
    /// A native Wayland window's content on the screen (sway's view); None
    /// on X11, where the app's coordinates are the screen's.
    pub content: Option<Rect>,
    /// A popup on sway (wayland/popups.rs): its index among the app's
    /// top-level accessibles and its parent view's title; `content` is the
    /// parent's, whose surface coordinates the popup's extents are in.
    pub popup: Option<(u32, String)>,
}

impl Target {
    /// Whether a frame accessible whose extents are `r` is where this window
    /// is. On Wayland the frame is the whole surface, client-side shadows
    /// included (GTK 3: 26 px a side), so its size may exceed the window's by
    /// up to twice the slack; on X11 `tree::extents_distance`'s slack.
    pub fn frame_near(&self, r: &Rect) -> bool {
        if self.popup.is_some() {
            // Found by its place among the app's top-level accessibles, checked shown and a menu.
            return true;
        }
        match self.content {
            None => tree::extents_distance(r, &self.info.bounds) <= tree::FRAME_SLACK,
            Some(c) => {
                let (sw, sh) = (r.width as i64 - c.width as i64, r.height as i64 - c.height as i64);
                r.x.abs() <= 1 && r.y.abs() <= 1 && (0..=2 * tree::FRAME_SLACK).contains(&sw) && (0..=2 * tree::FRAME_SLACK).contains(&sh)
            }
        }
    }

    /// How to read the app's answers for this window (its frame `frame`):
    /// on Wayland the offset is the surface origin, read afresh (sway moves
    /// windows without the app knowing); on X11 `tree::view_of`.
    pub async fn view(&self, a: &A11y, bus: &str, frame: &str) -> View {
        if let (Some((_, parent_title)), Some(content)) = (&self.popup, self.content) {
            // A popup's extents are in its parent's surface coordinates: the parent's surface origin.
            let local = Rect::new(0, 0, content.width, content.height);
            let parent = match tree::frame_candidates(a, bus, None).await {
                Ok(c) => tree::match_frame(a, bus, &c, parent_title, local).await.ok(),
                Err(_) => None,
            };
            let placed = match &parent {
                Some(pf) => tree::view_placed(a, bus, pf, local, Some(content)).await,
                None => tree::view_placed(a, bus, frame, local, None).await,
            };
            return View { offset: if parent.is_some() { placed.offset } else { (content.x, content.y) }, ..placed };
        }
        tree::view_placed(a, bus, frame, self.info.bounds, self.content).await
    }
}

/// The sway socket when the Wayland backend runs (None: X11); a Wayland
/// session without sway: the refusal naming what is missing.
pub fn sway_socket() -> Result<Option<String>> {
    match wayland::backend() {
        Backend::X11 => Ok(None),
        Backend::Sway { socket } => Ok(Some(socket.clone())),
        Backend::Wayland { missing } => Err(Error::new(Code::ActionUnsupported, format!("no window list on this Wayland session: {missing}")).with("reason", "no-compositor-ipc")),
    }
}

/// A sway view as a target. A native Wayland window's accessible extents are
/// relative to its surface (`content`: where that is on the screen). An
/// Xwayland window's are X root coordinates, which are sway's layout
/// coordinates (deckhand's sway desktop runs its output at scale 1, where
/// Xwayland's root and the layout coincide): the X11 rules apply to it
/// as they are, its bounds the view's content on the screen.
pub fn of_view(v: &sway::View) -> Target {
    let xwayland = v.shell == "xwayland";
    let info = WinInfo {
        id: v.con_id,
        title: v.title.clone(),
        bounds: if xwayland { v.bounds } else { Rect::new(0, 0, v.bounds.width, v.bounds.height) },
        minimized: v.scratchpad,
        viewable: v.visible && !v.scratchpad,
        pid: v.pid,
    };
    Target { info, content: (!xwayland).then_some(v.bounds), popup: None }
}

/// A popup shown over the view `v` (wayland/popups.rs): the index of its
/// accessible among the app's top-level ones.
pub fn of_popup(window_id: u32, v: &sway::View, index: u32) -> Target {
    let info = WinInfo { id: window_id, title: String::new(), bounds: Rect::new(0, 0, v.bounds.width, v.bounds.height), minimized: false, viewable: v.visible && !v.scratchpad, pid: v.pid };
    Target { info, content: Some(v.bounds), popup: Some((index, v.title.clone())) }
}

/// The window with this id: the X window, or sway's view (container id).
pub fn facts(ctx: &Ctx, window_id: u32) -> Result<Target> {
    match sway_socket()? {
        None => Ok(Target { info: ctx.with_x(|x| windows::window_info(x, window_id))?, content: None, popup: None }),
        Some(sock) => match wayland::popups::parse(window_id) {
            Some((con_id, index)) => Ok(of_popup(window_id, &sway::view(&sock, con_id)?, index)),
            None => Ok(of_view(&sway::view(&sock, window_id)?)),
        },
    }
}

/// `facts` of a window that must belong to `pid` (window_id 0, the root,
/// has no accessibility tree).
pub fn of_pid(ctx: &Ctx, pid: u32, window_id: u32) -> Result<Target> {
    if window_id == 0 {
        return Err(Error::invalid("window_id 0 is the root window, which has no accessibility tree"));
    }
    let t = facts(ctx, window_id)?;
    match t.info.pid {
        Some(p) if p != pid => Err(Error::new(Code::WindowNotFound, format!("window {window_id} belongs to pid {p}, not {pid}")).with("window_pid", p).with("pid", pid)),
        _ => Ok(t),
    }
}

/// The windows of `pid` (X11: its managed windows; sway: its native views).
pub fn of_app(ctx: &Ctx, pid: u32) -> Result<Vec<Target>> {
    match sway_socket()? {
        None => Ok(ctx
            .with_x(|x| windows::list_windows(x, Some(pid)))?
            .into_iter()
            .map(|w| Target {
                info: WinInfo { id: w.window_id, title: w.title, bounds: w.bounds, minimized: w.minimized, viewable: !w.minimized, pid: w.pid },
                content: None,
                popup: None,
            })
            .collect()),
        Some(sock) => Ok(sway::list(&sock)?.iter().filter(|v| v.pid == Some(pid)).map(of_view).collect()),
    }
}

/// What is at a screen point.
pub enum At {
    /// No window (the X11 root, or no sway view).
    Nothing,
    /// A window the element routes reach.
    Window(Target),
}

/// The shown top-level window at a screen point, the topmost: X11's own
/// hit test, or the topmost shown sway view whose frame holds the point (the
/// pointer guard's own test, `wayland::guard::topmost_at`: sway's title bar
/// and borders are its view's).
pub fn at_point(ctx: &Ctx, x: i32, y: i32) -> Result<At> {
    match sway_socket()? {
        None => Ok(ctx.with_x(|c| windows::window_at(c, x, y))?.map_or(At::Nothing, |info| At::Window(Target { info, content: None, popup: None }))),
        Some(sock) => {
            let views = sway::list(&sock)?;
            Ok(match crate::wayland::guard::topmost_at(&views, x, y) {
                None => At::Nothing,
                Some(v) => At::Window(of_view(v)),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(con_id: u32, bounds: Rect, floating: bool, shell: &str) -> sway::View {
        sway::View {
            con_id,
            pid: Some(100 + con_id),
            title: format!("w{con_id}"),
            app_id: None,
            shell: shell.into(),
            x11_window: None,
            bounds,
            frame: bounds,
            focused: false,
            visible: true,
            scratchpad: false,
            floating,
            fullscreen: false,
        }
    }

    #[test]
    fn the_topmost_shown_view_holds_the_point() {
        let mut hidden = view(1, Rect::new(0, 0, 1280, 800), false, "xdg_shell");
        hidden.visible = false;
        let tiled = view(2, Rect::new(2, 25, 1276, 773), false, "xdg_shell");
        let floating = view(3, Rect::new(100, 150, 400, 300), true, "xdg_shell");
        let views = [hidden, tiled, floating];
        assert_eq!(crate::wayland::guard::topmost_at(&views, 150, 200).map(|v| v.con_id), Some(3));
        assert_eq!(crate::wayland::guard::topmost_at(&views, 50, 50).map(|v| v.con_id), Some(2));
        // sway's title bar above the tiled view's content: no view.
        assert_eq!(crate::wayland::guard::topmost_at(&views, 50, 10).map(|v| v.con_id), None);
        // The right and bottom edges are outside.
        assert_eq!(crate::wayland::guard::topmost_at(&views, 500, 200).map(|v| v.con_id), Some(2));
    }

    #[test]
    fn a_wayland_target_is_matched_in_surface_coordinates() {
        let t = of_view(&view(6, Rect::new(100, 150, 1415, 732), true, "xdg_shell"));
        assert_eq!((t.info.id, t.info.bounds, t.content), (6, Rect::new(0, 0, 1415, 732), Some(Rect::new(100, 150, 1415, 732))));
        // GTK 3's frame: the surface with its 26/23 px shadows.
        assert!(t.frame_near(&Rect::new(0, 0, 1467, 784)));
        assert!(t.frame_near(&Rect::new(0, 0, 1415, 732)));
        assert!(!t.frame_near(&Rect::new(0, 0, 700, 732)), "another, smaller window's frame");
        assert!(!t.frame_near(&Rect::new(300, 0, 1415, 732)), "not at the surface origin");
        // An Xwayland window: X11's rules, in screen (= X root) coordinates.
        let x = of_view(&view(7, Rect::new(302, 302, 480, 312), true, "xwayland"));
        assert_eq!((x.info.bounds, x.content), (Rect::new(302, 302, 480, 312), None));
        assert!(x.frame_near(&Rect::new(302, 302, 480, 312)));
        assert!(!x.frame_near(&Rect::new(0, 0, 480, 312)), "X11 extents are on the screen");
    }
}
