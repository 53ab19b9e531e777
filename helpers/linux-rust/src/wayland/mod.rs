//! The Wayland backend (issue 19, first slice): windows from the
//! compositor's IPC (sway only), trees from AT-SPI with window-relative
//! extents moved to the screen; capture by wlr-screencopy; input through a
//! virtual keyboard and pointer. The X11 routes of Xwayland windows are not
//! there yet: their capabilities say so.

pub mod clipboard;
pub mod data_control;
pub mod devices;
pub mod guard;
pub mod idle_watch;
pub mod input;
pub mod keymap;
pub mod popups;
pub mod screencopy;
pub mod sway;
pub mod window_ops;
pub mod wire;

use crate::wire::messages::Rect;

/// Which backend the helper runs, chosen once at start from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// "atspi+x11": an X display (DISPLAY), EWMH, XTest, Composite.
    X11,
    /// "atspi+sway": a Wayland session whose compositor is sway, reached at $SWAYSOCK.
    Sway { socket: String },
    /// "atspi+wayland": a Wayland session without a compositor IPC this
    /// helper speaks; `missing` says what was looked for.
    Wayland { missing: String },
}

impl Backend {
    /// The hello's `helper.backend`.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::X11 => "atspi+x11",
            Backend::Sway { .. } => "atspi+sway",
            Backend::Wayland { .. } => "atspi+wayland",
        }
    }

    pub fn is_wayland(&self) -> bool {
        !matches!(self, Backend::X11)
    }
}

/// The backend for an environment (`var` reads a variable; empty = unset):
/// DECKHAND_BACKEND=x11|wayland decides outright; otherwise Wayland when
/// WAYLAND_DISPLAY is set and DISPLAY is not (a session with both, e.g.
/// Xwayland's DISPLAY in a Wayland session, stays X11 unless told: every X11
/// path is unchanged when DISPLAY is set). On Wayland, sway when $SWAYSOCK
/// answers (`sway_answers`).
pub fn choose(var: impl Fn(&str) -> Option<String>, sway_answers: impl Fn(&str) -> bool) -> Backend {
    let set = |k: &str| var(k).filter(|v| !v.is_empty());
    let wayland = match set("DECKHAND_BACKEND").as_deref() {
        Some("wayland") => true,
        Some("x11") => false,
        _ => set("WAYLAND_DISPLAY").is_some() && set("DISPLAY").is_none(),
    };
    if !wayland {
        return Backend::X11;
    }
    match set("SWAYSOCK") {
        Some(socket) if sway_answers(&socket) => Backend::Sway { socket },
        Some(socket) => Backend::Wayland { missing: format!("SWAYSOCK={socket} does not answer sway IPC get_version") },
        None => Backend::Wayland {
            missing: "no compositor IPC: SWAYSOCK is unset (only sway's IPC is spoken; other compositors offer no window list this helper reads)".into(),
        },
    }
}

/// The backend of this process, chosen on first use.
pub fn backend() -> &'static Backend {
    static B: std::sync::OnceLock<Backend> = std::sync::OnceLock::new();
    B.get_or_init(|| choose(|k| std::env::var(k).ok(), |s| sway::answers(s).is_some()))
}

/// Where a native Wayland window's surface origin is on the screen: AT-SPI
/// extents of native Wayland apps are relative to their surface, whose
/// origin is the view's content origin (sway's rect + window_rect) minus the
/// client-side shadow margins. The margins: the frame's extents are the
/// whole surface (shadows included) and sway's bounds the window geometry
/// without them, so the surplus in size is the margins together; the left
/// and top ones are where the frame's shown children start (GTK 3: the
/// header bar at (26, 23) in a 1467x784 frame for a 1415x732 window),
/// clamped to the surplus; without a child, half the surplus. A node found
/// to be the window's geometry (`geometry`: the content's size, below
/// full-surface wrappers, tree::surface_offset) says the margins itself.
pub fn surface_origin(content: Rect, frame: Option<Rect>, children: &[Rect], geometry: Option<Rect>) -> (i32, i32) {
    let Some(f) = frame else { return (content.x, content.y) };
    let surplus_w = (f.width as i64 - content.width as i64).max(0);
    let surplus_h = (f.height as i64 - content.height as i64).max(0);
    if let Some(g) = geometry.filter(|g| g.width == content.width && g.height == content.height) {
        let left = (g.x as i64 - f.x as i64).clamp(0, surplus_w);
        let top = (g.y as i64 - f.y as i64).clamp(0, surplus_h);
        return ((content.x as i64 - left) as i32, (content.y as i64 - top) as i32);
    }
    let shown: Vec<&Rect> = children.iter().filter(|r| r.x != i32::MIN && r.y != i32::MIN && r.width > 1 && r.height > 1).collect();
    let margin = |surplus: i64, starts: Option<i64>| -> i64 {
        if surplus == 0 {
            return 0;
        }
        match starts {
            Some(s) => s.clamp(0, surplus),
            None => surplus / 2,
        }
    };
    let left = margin(surplus_w, shown.iter().map(|r| r.x as i64 - f.x as i64).min());
    let top = margin(surplus_h, shown.iter().map(|r| r.y as i64 - f.y as i64).min());
    ((content.x as i64 - left) as i32, (content.y as i64 - top) as i32)
}

/// The overlap of two rectangles (None: they do not overlap).
pub fn intersect(a: Rect, b: Rect) -> Option<Rect> {
    let x0 = a.x.max(b.x) as i64;
    let y0 = a.y.max(b.y) as i64;
    let x1 = (a.x as i64 + a.width as i64).min(b.x as i64 + b.width as i64);
    let y1 = (a.y as i64 + a.height as i64).min(b.y as i64 + b.height as i64);
    (x1 > x0 && y1 > y0).then(|| Rect::new(x0 as i32, y0 as i32, (x1 - x0) as u32, (y1 - y0) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rectangles_intersect() {
        assert_eq!(intersect(Rect::new(0, 0, 1280, 800), Rect::new(300, 200, 1415, 732)), Some(Rect::new(300, 200, 980, 600)));
        assert_eq!(intersect(Rect::new(0, 0, 10, 10), Rect::new(10, 0, 5, 5)), None);
    }

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn backend_follows_the_session() {
        let yes = |_: &str| true;
        let no = |_: &str| false;
        assert_eq!(choose(env(&[("DISPLAY", ":1")]), yes), Backend::X11);
        // Both set: X11 unless told (every X11 path unchanged when DISPLAY is set).
        assert_eq!(choose(env(&[("DISPLAY", ":1"), ("WAYLAND_DISPLAY", "wayland-1"), ("SWAYSOCK", "/s")]), yes), Backend::X11);
        assert_eq!(
            choose(env(&[("DISPLAY", ":1"), ("WAYLAND_DISPLAY", "wayland-1"), ("SWAYSOCK", "/s"), ("DECKHAND_BACKEND", "wayland")]), yes),
            Backend::Sway { socket: "/s".into() }
        );
        assert_eq!(choose(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("SWAYSOCK", "/s")]), yes), Backend::Sway { socket: "/s".into() });
        assert_eq!(choose(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("SWAYSOCK", "/s"), ("DECKHAND_BACKEND", "x11")]), yes), Backend::X11);
        assert_eq!(choose(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("DISPLAY", "")]), yes).name(), "atspi+wayland");
        match choose(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("SWAYSOCK", "/gone")]), no) {
            Backend::Wayland { missing } => assert!(missing.contains("/gone"), "{missing}"),
            b => panic!("{b:?}"),
        }
        match choose(env(&[("WAYLAND_DISPLAY", "wayland-1")]), yes) {
            Backend::Wayland { missing } => assert!(missing.contains("SWAYSOCK is unset"), "{missing}"),
            b => panic!("{b:?}"),
        }
        assert_eq!(choose(env(&[]), yes), Backend::X11);
    }

    /// Figures read on sway 1.7 with GTK 3.24 (gtk3-widget-factory floating at
    /// 100,150, client-side decorations; gtk3-demo tiled, no shadow).
    #[test]
    fn surface_origin_takes_off_the_shadow_margins() {
        let content = Rect::new(100, 150, 1415, 732);
        let frame = Rect::new(0, 0, 1467, 784);
        let children = [Rect::new(26, 23, 1415, 47), Rect::new(26, 70, 1415, 685), Rect::new(i32::MIN, i32::MIN, 1, 1)];
        assert_eq!(surface_origin(content, Some(frame), &children, None), (74, 127));
        // The check box at window (36, 528) is then at screen (110, 655).
        // No surplus (tiled, no shadow): the content origin itself.
        let tiled = Rect::new(2, 25, 1276, 773);
        assert_eq!(surface_origin(tiled, Some(Rect::new(0, 0, 1276, 773)), &[Rect::new(0, 0, 1276, 47)], None), (2, 25));
        // No children known: half the surplus.
        assert_eq!(surface_origin(content, Some(frame), &[], None), (74, 124));
        // A child starting beyond the surplus is clamped to it.
        assert_eq!(surface_origin(content, Some(frame), &[Rect::new(90, 90, 10, 10)], None), (48, 98));
        // No frame extents: the content origin.
        assert_eq!(surface_origin(content, None, &children, None), (100, 150));
    }

    #[test]
    fn a_node_of_the_window_s_size_gives_the_margins() {
        // Chromium on sway (2026-12-03): frame 1936x1073, its children full-surface wrappers at 0, the window's
        // geometry a panel at (10, 10) 1916x1053; the content at (2, 25) on the screen.
        let content = Rect::new(2, 25, 1916, 1053);
        let frame = Rect::new(0, 0, 1936, 1073);
        let wrappers = [Rect::new(0, 0, 1936, 1073)];
        assert_eq!(surface_origin(content, Some(frame), &wrappers, None), (2, 25), "the wrappers alone say no margin");
        assert_eq!(surface_origin(content, Some(frame), &wrappers, Some(Rect::new(10, 10, 1916, 1053))), (-8, 15));
        // Only a node of exactly the content's size counts; margins stay within the surplus.
        assert_eq!(surface_origin(content, Some(frame), &wrappers, Some(Rect::new(10, 10, 1900, 1053))), (2, 25));
        assert_eq!(surface_origin(content, Some(frame), &wrappers, Some(Rect::new(40, 10, 1916, 1053))), (-18, 15));
    }
}
