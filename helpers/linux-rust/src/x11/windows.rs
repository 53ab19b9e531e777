//! Top-level windows: EWMH client list (stacking order) when a window manager
//! runs, else the root's mapped children; plus the apps' popups (mapped
//! override-redirect root children: open menus, combo box lists, tooltips),
//! which no window manager lists. All requests are pipelined: every cookie
//! is sent before the first reply is awaited.

use super::X;
use crate::error::{Code, Error, Result};
use crate::wire::messages::{Rect, WireWindow};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{self, AtomEnum, ConnectionExt as _, MapState, WindowClass};
use x11rb::rust_connection::RustConnection;
use std::collections::HashMap;

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

/// Every managed top-level window (optionally of one pid), with z_index 0 at
/// the bottom of the stacking order; no popups (for callers that look for an
/// app's main windows; the op is `list_windows_with_popups`).
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

/// Most override-redirect windows looked at as popups, the topmost ones: an
/// app with an open menu has a handful (menu, submenus, a tooltip); a
/// program mapping hundreds must not make every list_windows slow.
pub const MAX_POPUPS: usize = 32;

/// A mapped override-redirect window of an app with a managed top-level
/// window (open menu, combo box list, tooltip).
#[derive(Debug, Clone)]
pub struct Popup {
    /// Its facts; `pid` is its own _NET_WM_PID, else its owner window's.
    pub info: WinInfo,
    /// Index in `Stack::managed` of the app's window it was tied to.
    pub owner: usize,
    /// Position among the root's children (0 = bottom).
    pub root_pos: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    Managed(usize),
    Popup(usize),
}

/// The screen's windows: the managed top-levels and their apps' popups.
pub struct Stack {
    /// What `stacking_ids` lists, bottom first.
    pub managed: Vec<WinInfo>,
    /// Bottom first.
    pub popups: Vec<Popup>,
    /// Both together, bottom first.
    pub order: Vec<Entry>,
    /// The root's children when the stack was read, bottom first.
    pub root_children: Vec<u32>,
}

/// The X client a window belongs to: the base of its resource ids (every
/// window a connection creates carries the connection's base). GTK and Qt
/// menus often carry no _NET_WM_PID, but always their connection's base.
pub fn client_base(x: &X, w: u32) -> u32 {
    w & !x.conn.setup().resource_id_mask
}

impl Stack {
    /// Whether popup `p` belongs to the app of window `win` (whose pid is
    /// `pid`): same pid when both are known, else the same X client as the
    /// window the popup was tied to.
    pub fn same_app(&self, x: &X, p: &Popup, win: u32, pid: Option<u32>) -> bool {
        match (p.info.pid, pid) {
            (Some(a), Some(b)) => a == b,
            _ => client_base(x, self.managed[p.owner].id) == client_base(x, win),
        }
    }
}

/// The root child holding each window (its WM frame, or the window itself),
/// one pipelined QueryTree batch per level of nesting.
fn root_children_of(x: &X, ids: &[u32]) -> Result<Vec<Option<u32>>> {
    let mut cur: Vec<Option<u32>> = ids.iter().map(|&w| Some(w)).collect();
    let mut out = vec![None; ids.len()];
    for _ in 0..16 {
        let mut pending = Vec::new();
        for (i, w) in cur.iter().enumerate() {
            if let Some(w) = *w {
                pending.push((i, x.conn.query_tree(w)?));
            }
        }
        if pending.is_empty() {
            break;
        }
        for (i, c) in pending {
            match c.reply() {
                Ok(t) if t.parent == x.root || t.parent == 0 => {
                    out[i] = cur[i];
                    cur[i] = None;
                }
                Ok(t) => cur[i] = Some(t.parent),
                Err(_) => cur[i] = None,
            }
        }
    }
    Ok(out)
}

/// Read the managed windows and the popups of their apps in stacking order.
pub fn stack(x: &X) -> Result<Stack> {
    let ids = stacking_ids(x)?;
    let managed = describe(x, &ids)?;
    let tree = x.conn.query_tree(x.root)?.reply()?;
    let attrs: Vec<_> = tree
        .children
        .iter()
        .map(|&w| x.conn.get_window_attributes(w))
        .collect::<std::result::Result<_, _>>()?;
    let mut cands: Vec<(usize, u32)> = Vec::new();
    for (pos, (&w, c)) in tree.children.iter().zip(attrs).enumerate() {
        if let Ok(a) = c.reply() {
            if a.override_redirect && a.map_state == MapState::VIEWABLE && a.class != WindowClass::INPUT_ONLY {
                cands.push((pos, w));
            }
        }
    }
    if cands.len() > MAX_POPUPS {
        cands.drain(..cands.len() - MAX_POPUPS);
    }
    let popups = if cands.is_empty() || managed.is_empty() { Vec::new() } else { resolve_popups(x, &managed, &cands)? };

    // Interleave: a popup goes below the first managed window whose frame
    // is above it among the root's children.
    let frames = root_children_of(x, &managed.iter().map(|w| w.id).collect::<Vec<_>>())?;
    let pos_of: HashMap<u32, usize> = tree.children.iter().enumerate().map(|(i, &w)| (w, i)).collect();
    let mut order = Vec::with_capacity(managed.len() + popups.len());
    let mut next = 0;
    for (i, f) in frames.iter().enumerate() {
        if let Some(fp) = f.and_then(|f| pos_of.get(&f).copied()) {
            while next < popups.len() && popups[next].root_pos < fp {
                order.push(Entry::Popup(next));
                next += 1;
            }
        }
        order.push(Entry::Managed(i));
    }
    order.extend((next..popups.len()).map(Entry::Popup));
    Ok(Stack { managed, popups, order, root_children: tree.children })
}

/// Facts and owner of each candidate (position among the root's children,
/// id), bottom first. Kept: those on the screen that belong to an app with
/// a managed window: by their own _NET_WM_PID; else WM_TRANSIENT_FOR or
/// WM_CLIENT_LEADER naming one of its windows; else the same X client (of
/// the popup, its leader or its transient-for window) as one of them.
fn resolve_popups(x: &X, managed: &[WinInfo], cands: &[(usize, u32)]) -> Result<Vec<Popup>> {
    let ids: Vec<u32> = cands.iter().map(|c| c.1).collect();
    let pending = describe_send(x, &ids)?;
    let mut links = Vec::with_capacity(ids.len());
    for &w in &ids {
        links.push((
            x.conn.get_property(false, w, x.atoms.WM_CLIENT_LEADER, AtomEnum::WINDOW, 0, 1)?,
            x.conn.get_property(false, w, AtomEnum::WM_TRANSIENT_FOR, AtomEnum::WINDOW, 0, 1)?,
        ));
    }
    let infos = describe_collect(x, pending)?;
    let first = |r: std::result::Result<xproto::GetPropertyReply, _>| -> Option<u32> {
        r.ok().and_then(|r| r.value32().and_then(|mut v| v.next())).filter(|&w| w != 0)
    };
    let links: HashMap<u32, (Option<u32>, Option<u32>)> =
        ids.iter().zip(links).map(|(&w, (l, t))| (w, (first(l.reply()), first(t.reply())))).collect();
    let (sw, sh) = x.screen_size();
    let screen = Rect::new(0, 0, sw as u32, sh as u32);
    let mut out = Vec::new();
    for info in infos {
        // GTK keeps 1x1 override-redirect helper windows mapped off screen.
        if info.bounds.intersect(&screen).is_none() {
            continue;
        }
        let (leader, transient) = links.get(&info.id).copied().unwrap_or((None, None));
        let by_pid = info.pid.and_then(|p| managed.iter().rposition(|m| m.pid == Some(p)));
        let by_link = || [transient, leader].into_iter().flatten().find_map(|l| managed.iter().position(|m| m.id == l));
        let by_client = || {
            [Some(info.id), transient, leader].into_iter().flatten().find_map(|w| {
                let base = client_base(x, w);
                managed.iter().rposition(|m| client_base(x, m.id) == base)
            })
        };
        let Some(owner) = by_pid.or_else(by_link).or_else(by_client) else { continue };
        let root_pos = cands.iter().find(|c| c.1 == info.id).map(|c| c.0).unwrap_or(0);
        let pid = info.pid.or(managed[owner].pid);
        out.push(Popup { info: WinInfo { pid, minimized: false, ..info }, owner, root_pos });
    }
    Ok(out)
}

/// The list_windows op: every top-level window and every popup of an app
/// (optionally of one pid), z_index 0 at the bottom of the stacking order.
pub fn list_windows_with_popups(x: &X, pid: Option<u32>) -> Result<Vec<WireWindow>> {
    let st = stack(x)?;
    let mut out = Vec::new();
    for (z, e) in st.order.iter().enumerate() {
        let (w, popup) = match *e {
            Entry::Managed(i) => (&st.managed[i], false),
            Entry::Popup(i) => (&st.popups[i].info, true),
        };
        if pid.is_some() && w.pid != pid {
            continue;
        }
        out.push(WireWindow {
            window_id: w.id,
            z_index: z as u32,
            title: w.title.clone(),
            bounds: w.bounds,
            minimized: w.minimized,
            pid: w.pid,
            popup,
        });
    }
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
