//! Top-level windows: EWMH client list (stacking order) when a window manager
//! runs, else the root's mapped children. All requests are pipelined: every
//! cookie is sent before the first reply is awaited.

use super::X;
use crate::error::{Code, Error, Result};
use crate::wire::messages::{Rect, WireWindow};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{self, AtomEnum, ConnectionExt as _, MapState, WindowClass};
use x11rb::rust_connection::RustConnection;

/// Raw facts about one top-level window.
#[derive(Debug, Clone)]
pub struct WinInfo {
    pub id: u32,
    pub title: String,
    pub bounds: Rect,
    pub minimized: bool,
    pub viewable: bool,
    pub pid: Option<u32>,
}

fn prop_u32s(x: &X, win: u32, prop: u32, ty: u32, max_len: u32) -> Result<Vec<u32>> {
    let r = x.conn.get_property(false, win, prop, ty, 0, max_len)?.reply()?;
    Ok(r.value32().map(|v| v.collect()).unwrap_or_default())
}

/// Whether an EWMH window manager is running (its check window exists).
pub fn wm_running(x: &X) -> bool {
    let Ok(ids) = prop_u32s(x, x.root, x.atoms._NET_SUPPORTING_WM_CHECK, AtomEnum::WINDOW.into(), 1) else {
        return false;
    };
    match ids.first() {
        Some(&w) if w != 0 => x.conn.get_window_attributes(w).ok().and_then(|c| c.reply().ok()).is_some(),
        _ => false,
    }
}

/// Top-level window ids, bottom of the stacking order first.
pub fn stacking_ids(x: &X) -> Result<Vec<u32>> {
    if wm_running(x) {
        let ids = prop_u32s(x, x.root, x.atoms._NET_CLIENT_LIST_STACKING, AtomEnum::WINDOW.into(), 1 << 16)?;
        if !ids.is_empty() {
            return Ok(ids);
        }
        let ids = prop_u32s(x, x.root, x.atoms._NET_CLIENT_LIST, AtomEnum::WINDOW.into(), 1 << 16)?;
        if !ids.is_empty() {
            return Ok(ids);
        }
    }
    // No WM: the root's children are in stacking order (bottom first).
    let tree = x.conn.query_tree(x.root)?.reply()?;
    let cookies: Vec<_> = tree
        .children
        .iter()
        .map(|&w| x.conn.get_window_attributes(w))
        .collect::<std::result::Result<_, _>>()?;
    let mut out = Vec::new();
    for (w, c) in tree.children.iter().zip(cookies) {
        if let Ok(a) = c.reply() {
            if a.map_state == MapState::VIEWABLE && !a.override_redirect && a.class != WindowClass::INPUT_ONLY {
                out.push(*w);
            }
        }
    }
    Ok(out)
}

struct Pending<'c> {
    id: u32,
    net_name: Cookie<'c, RustConnection, xproto::GetPropertyReply>,
    wm_name: Cookie<'c, RustConnection, xproto::GetPropertyReply>,
    pid: Cookie<'c, RustConnection, xproto::GetPropertyReply>,
    state: Cookie<'c, RustConnection, xproto::GetPropertyReply>,
    geom: Cookie<'c, RustConnection, xproto::GetGeometryReply>,
    trans: Cookie<'c, RustConnection, xproto::TranslateCoordinatesReply>,
    attrs: Cookie<'c, RustConnection, xproto::GetWindowAttributesReply>,
}

/// Facts about many windows in one pipelined batch. Windows that vanished
/// meanwhile are left out.
pub fn describe(x: &X, ids: &[u32]) -> Result<Vec<WinInfo>> {
    let pending = describe_send(x, ids)?;
    describe_collect(x, pending)
}

/// Send the requests of `describe` without waiting for any reply.
fn describe_send<'c>(x: &'c X, ids: &[u32]) -> Result<Vec<Pending<'c>>> {
    let a = &x.atoms;
    let mut pending = Vec::with_capacity(ids.len());
    for &id in ids {
        pending.push(Pending {
            id,
            net_name: x.conn.get_property(false, id, a._NET_WM_NAME, a.UTF8_STRING, 0, 4096)?,
            wm_name: x.conn.get_property(false, id, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 4096)?,
            pid: x.conn.get_property(false, id, a._NET_WM_PID, AtomEnum::CARDINAL, 0, 1)?,
            state: x.conn.get_property(false, id, a._NET_WM_STATE, AtomEnum::ATOM, 0, 64)?,
            geom: x.conn.get_geometry(id)?,
            trans: x.conn.translate_coordinates(id, x.root, 0, 0)?,
            attrs: x.conn.get_window_attributes(id)?,
        });
    }
    Ok(pending)
}

fn describe_collect(x: &X, pending: Vec<Pending<'_>>) -> Result<Vec<WinInfo>> {
    let a = &x.atoms;
    let mut out = Vec::with_capacity(pending.len());
    for p in pending {
        let net_name = p.net_name.reply().ok();
        let wm_name = p.wm_name.reply().ok();
        let pid = p.pid.reply().ok();
        let state = p.state.reply().ok();
        let geom = p.geom.reply();
        let trans = p.trans.reply();
        let attrs = p.attrs.reply();
        let (Ok(geom), Ok(trans), Ok(attrs)) = (geom, trans, attrs) else {
            continue; // destroyed while we asked
        };
        let title = match net_name {
            Some(r) if !r.value.is_empty() => String::from_utf8_lossy(&r.value).into_owned(),
            _ => wm_name.map(|r| latin1(&r.value)).unwrap_or_default(),
        };
        let hidden = state
            .and_then(|r| r.value32().map(|v| v.collect::<Vec<_>>()))
            .map(|v| v.contains(&a._NET_WM_STATE_HIDDEN))
            .unwrap_or(false);
        let viewable = attrs.map_state == MapState::VIEWABLE;
        out.push(WinInfo {
            id: p.id,
            title,
            bounds: Rect::new(trans.dst_x as i32, trans.dst_y as i32, geom.width as u32, geom.height as u32),
            minimized: hidden || !viewable,
            viewable,
            pid: pid.and_then(|r| r.value32().and_then(|mut v| v.next())).filter(|&p| p > 0),
        });
    }
    Ok(out)
}

fn latin1(b: &[u8]) -> String {
    b.iter().map(|&c| c as char).collect()
}

/// list_windows: every top-level window (optionally of one pid), with z_index
/// 0 at the bottom of the stacking order.
pub fn list_windows(x: &X, pid: Option<u32>) -> Result<Vec<WireWindow>> {
    let ids = stacking_ids(x)?;
    let infos = describe(x, &ids)?;
    let mut out = Vec::new();
    for (z, w) in infos.into_iter().enumerate() {
        if let Some(p) = pid {
            if w.pid != Some(p) {
                continue;
            }
        }
        out.push(WireWindow {
            window_id: w.id,
            z_index: z as u32,
            title: w.title,
            bounds: w.bounds,
            minimized: w.minimized,
            pid: w.pid,
            popup: false,
        });
    }
    x.conn.flush()?;
    Ok(out)
}

/// Facts about one window; WINDOW_NOT_FOUND if it does not exist.
pub fn window_info(x: &X, id: u32) -> Result<WinInfo> {
    describe(x, &[id])?
        .pop()
        .ok_or_else(|| Error::new(Code::WindowNotFound, format!("no X window {id}")).with("window_id", id))
}

/// The ancestor of `win` that is a direct child of the root (the WM frame,
/// or the window itself when unmanaged).
pub fn toplevel_frame(x: &X, win: u32) -> Result<u32> {
    let mut w = win;
    for _ in 0..64 {
        let t = x.conn.query_tree(w)?.reply()?;
        if t.parent == x.root || t.parent == 0 {
            return Ok(w);
        }
        w = t.parent;
    }
    Err(Error::internal("window hierarchy deeper than 64"))
}

/// The top-most non-minimized top-level window containing a screen point.
/// Two round trips when an EWMH window manager runs: the WM check window and
/// both client lists together, then the WM check window's existence and the
/// facts of every listed window together (what `stacking_ids` + `describe`
/// do one after the other).
pub fn window_at(x: &X, px: i32, py: i32) -> Result<Option<WinInfo>> {
    let a = &x.atoms;
    let check = x.conn.get_property(false, x.root, a._NET_SUPPORTING_WM_CHECK, AtomEnum::WINDOW, 0, 1)?;
    let stacking = x.conn.get_property(false, x.root, a._NET_CLIENT_LIST_STACKING, AtomEnum::WINDOW, 0, 1 << 16)?;
    let list = x.conn.get_property(false, x.root, a._NET_CLIENT_LIST, AtomEnum::WINDOW, 0, 1 << 16)?;
    let u32s = |r: xproto::GetPropertyReply| r.value32().map(|v| v.collect::<Vec<u32>>()).unwrap_or_default();
    let check = check.reply().ok().map(u32s).and_then(|v| v.first().copied()).filter(|&w| w != 0);
    let stacking = u32s(stacking.reply()?);
    let list = u32s(list.reply()?);
    let ids = if !stacking.is_empty() { stacking } else { list };
    let infos = match check {
        Some(wm) if !ids.is_empty() => {
            let alive = x.conn.get_window_attributes(wm)?;
            let pending = describe_send(x, &ids)?;
            if alive.reply().is_ok() {
                describe_collect(x, pending)?
            } else {
                drop(pending); // replies discarded
                describe(x, &stacking_ids(x)?)?
            }
        }
        _ => describe(x, &stacking_ids(x)?)?,
    };
    Ok(infos.into_iter().rev().find(|w| !w.minimized && w.bounds.contains(px, py)))
}
