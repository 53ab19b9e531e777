//! X11: one connection (opened lazily) for observation, another one owned by
//! the input worker thread; EWMH windows, capture, XTest input.

pub mod capture;
pub mod focus;
pub mod input;
pub mod keys;
pub mod pointer;
pub mod selection;
pub mod watch;
pub mod windows;
pub mod wm;

use crate::error::{Code, Error, Result};
use std::collections::HashSet;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::rust_connection::RustConnection;

x11rb::atom_manager! {
    pub Atoms: AtomsCookie {
        _NET_CLIENT_LIST,
        _NET_CLIENT_LIST_STACKING,
        _NET_SUPPORTING_WM_CHECK,
        _NET_ACTIVE_WINDOW,
        _NET_WM_PID,
        _NET_WM_NAME,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        UTF8_STRING,
        WM_STATE,
        WM_CLIENT_LEADER,
        AT_SPI_BUS,
    }
}

/// Which extensions the server has (queried once per connection).
#[derive(Debug, Clone, Copy, Default)]
pub struct Extensions {
    pub composite: Option<(u32, u32)>,
    pub shm: Option<(u16, u16)>,
    pub xtest: Option<(u8, u16)>,
    pub xinput: Option<(u16, u16)>,
}

pub struct Shm {
    pub addr: *mut u8,
    pub size: usize,
    pub seg: u32,
}

pub struct X {
    pub conn: RustConnection,
    pub screen: usize,
    pub root: xproto::Window,
    pub root_depth: u8,
    pub atoms: Atoms,
    pub ext: Extensions,
    /// Top-level frames we have redirected with Composite (kept for the
    /// connection's lifetime so their pixels stay available).
    pub redirected: HashSet<xproto::Window>,
    pub shm_seg: Option<Shm>,
    pub shm_broken: bool,
}

impl Drop for X {
    fn drop(&mut self) {
        if let Some(seg) = self.shm_seg.take() {
            capture::free_shm(self, seg);
        }
    }
}

impl X {
    pub fn connect() -> Result<X> {
        let display = std::env::var("DISPLAY").unwrap_or_default();
        if display.is_empty() {
            return Err(Error::new(Code::PermissionDenied, "DISPLAY is not set: no X display to talk to"));
        }
        let (conn, screen) = x11rb::connect(None)?;
        let root = conn.setup().roots[screen].root;
        let root_depth = conn.setup().roots[screen].root_depth;
        let atoms = Atoms::new(&conn)?.reply()?;
        let ext = query_extensions(&conn);
        Ok(X {
            conn,
            screen,
            root,
            root_depth,
            atoms,
            ext,
            redirected: HashSet::new(),
            shm_seg: None,
            shm_broken: false,
        })
    }

    pub fn screen_size(&self) -> (u16, u16) {
        let s = &self.conn.setup().roots[self.screen];
        (s.width_in_pixels, s.height_in_pixels)
    }

    pub fn sync(&self) -> Result<()> {
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }
}

fn query_extensions(conn: &RustConnection) -> Extensions {
    use x11rb::protocol::composite::ConnectionExt as _;
    use x11rb::protocol::shm::ConnectionExt as _;
    use x11rb::protocol::xinput::ConnectionExt as _;
    use x11rb::protocol::xtest::ConnectionExt as _;
    let mut ext = Extensions::default();
    let present = |name: &'static str| {
        conn.extension_information(name).ok().flatten().is_some()
    };
    if present(x11rb::protocol::composite::X11_EXTENSION_NAME) {
        if let Ok(Ok(r)) = conn.composite_query_version(0, 4).map(|c| c.reply()) {
            ext.composite = Some((r.major_version, r.minor_version));
        }
    }
    if present(x11rb::protocol::shm::X11_EXTENSION_NAME) {
        if let Ok(Ok(r)) = conn.shm_query_version().map(|c| c.reply()) {
            ext.shm = Some((r.major_version, r.minor_version));
        }
    }
    if present(x11rb::protocol::xtest::X11_EXTENSION_NAME) {
        if let Ok(Ok(r)) = conn.xtest_get_version(2, 2).map(|c| c.reply()) {
            ext.xtest = Some((r.major_version, r.minor_version));
        }
    }
    if present(x11rb::protocol::xinput::X11_EXTENSION_NAME) {
        if let Ok(Ok(r)) = conn.xinput_xi_query_version(2, 2).map(|c| c.reply()) {
            ext.xinput = Some((r.major_version, r.minor_version));
        }
    }
    ext
}
