//! Menus by path (issue 13): a window's menu bar (or any menu node's
//! subtree) read whether its menus are open or not, and closing a menu that
//! was opened through accessibility.
//!
//! get_tree prunes what is not SHOWING, so a closed menu's items are not in
//! it. Both toolkits checked keep them as accessibles anyway: GTK 3 lists a
//! closed menu's items as children of its "menu" node (the GtkMenu itself is
//! folded away), Qt 5 as children of a "popup menu" child of the "menu item"
//! that opens it. `menu_tree` walks those subtrees, and only those, bounded
//! by max_nodes, max_depth, a call budget and the request's deadline.
//!
//! Paths are child indices from the window's frame, as get_tree's are, so a
//! node's locator works with element_action (opening a submenu, activating
//! an item).

use super::window::{self, Target};
use super::{deadline_of, resolve_frame, Ctx};
use crate::atspi::actions::{self, Want};
use crate::atspi::cache::FrameEntry;
use crate::atspi::tree::{self, Details, Item, View, IF_ACTION, IF_COMPONENT, IF_SELECTION};
use crate::atspi::{collection, vocabulary, A11y, I_ACCESSIBLE, I_ACTION, NULL_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::codec::to_value;
use crate::wire::messages::{decode_args, Delivery, Receipt, Response, WireLocator, WireNode};
use crate::wire::vocabulary::ActionName;
use atspi::{Role, State};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Calls one menu read may make into the application.
const MENU_CALL_BUDGET: u32 = 20_000;
/// Most nodes looked at while searching the window for its menu bars.
const MAX_SEARCH_NODES: usize = 800;
/// How deep below the frame a menu bar is looked for.
const MAX_SEARCH_DEPTH: usize = 8;
/// How long menu_close waits for the menu to be gone from the screen.
const CLOSE_WAIT: Duration = Duration::from_millis(1000);
const CLOSE_POLL: Duration = Duration::from_millis(40);

#[derive(Deserialize, Debug)]
pub struct MenuTreeArgs {
    pub pid: u32,
    pub window_id: u32,
    /// None: the window's menu bar(s); Some: that node's subtree.
    pub root: Option<WireLocator>,
    pub max_nodes: u32,
    pub max_depth: u32,
}

/// One node below a menu root.
#[derive(Serialize, Debug)]
pub struct MenuItemOut {
    pub node: WireNode,
    /// 0: a child of a root.
    pub depth: u32,
    /// The item's shortcut in deckhand's key names ("ctrl+s"), null when it
    /// has none or the toolkit does not say (`vocabulary::shortcut`).
    pub shortcut: Option<String>,
    /// "item": activated by a press. "submenu": opens a menu (its items are
    /// its children, or its group's). "group": the menu a submenu item opens,
    /// as its own node (Qt 5's "popup menu"): its children are the submenu's.
    pub kind: &'static str,
    /// A check or radio item: its `checked` state is meaningful when absent.
    pub checkable: bool,
    /// On screen now (AT-SPI SHOWING; VISIBLE where the toolkit never sets
    /// SHOWING): the item's menu is open.
    pub showing: bool,
}

#[derive(Serialize, Debug)]
pub struct MenuTreeResult {
    /// The roots walked: the menu bars found (root null), or the root node.
    /// Empty: the window exposes no menu bar.
    pub roots: Vec<WireNode>,
    /// Every node below the roots, pre-order (separators left out).
    pub items: Vec<MenuItemOut>,
    pub truncated: bool,
    pub calls: u32,
}

#[derive(Deserialize, Debug)]
pub struct MenuCloseArgs {
    pub pid: u32,
    pub window_id: u32,
    /// The node whose menu was opened (a menu bar's item, a submenu item).
    pub opener: WireLocator,
}

#[derive(Serialize, Debug)]
pub struct MenuCloseResult {
    /// No item below the opener is on screen any more.
    pub closed: bool,
    /// What was called to close it, null when nothing was (it was not open,
    /// or no accessibility way exists: then `closed` is false).
    pub method: Option<String>,
}

/// AT-SPI roles (`Role as u32`).
fn role_of(it: &Item) -> Option<Role> {
    Role::try_from(it.role).ok()
}

fn is_menu_bar(it: &Item) -> bool {
    role_of(it) == Some(Role::MenuBar)
}

/// Nodes a menu walk descends into: menus, popup menus, and menu items that
/// have children (Qt 5: the item opening a submenu holds its popup menu).
fn descends(it: &Item) -> bool {
    match role_of(it) {
        Some(Role::Menu | Role::PopupMenu | Role::MenuBar) => true,
        Some(Role::MenuItem | Role::CheckMenuItem | Role::RadioMenuItem) => it.child_count > 0,
        _ => false,
    }
}

/// Left out of a menu listing: separators, tear-off handles and empty
/// unnamed fillers (nothing to name or activate).
fn skipped(it: &Item) -> bool {
    matches!(role_of(it), Some(Role::Separator | Role::TearoffMenuItem))
        || matches!(role_of(it), Some(Role::Panel | Role::Filler)) && it.child_count <= 0 && it.name.trim().is_empty()
}

/// A node that only wraps a menu's items, directly below a root or another
/// wrapper (`in_wrapper`): Chromium's context menu is a popup whose menu bar
/// holds a panel, a panel, then an unnamed "menu" with the items. Listed as a
/// "group" (its children are its parent's items) and descended. An unnamed
/// menu could never be named in a path as a submenu anyway.
fn is_wrapper(it: &Item, in_wrapper: bool) -> bool {
    in_wrapper
        && match role_of(it) {
            Some(Role::Panel | Role::Filler) => it.child_count > 0,
            Some(Role::Menu) => it.name.trim().is_empty(),
            _ => false,
        }
}

fn is_checkable(it: &Item) -> bool {
    matches!(role_of(it), Some(Role::CheckMenuItem | Role::RadioMenuItem)) || it.states & collection::state_bit(State::Checkable) != 0
}

/// The kind of a node (see `MenuItemOut::kind`); `has_menu_child`: one of its
/// children is a menu or popup menu.
fn kind_of(it: &Item, has_menu_child: bool) -> &'static str {
    match role_of(it) {
        Some(Role::Menu) => "submenu",
        Some(Role::PopupMenu) => "group",
        _ if has_menu_child => "submenu",
        _ => "item",
    }
}

/// Whether an X window is override-redirect (an open menu, a combo list: a
/// popup the window manager does not manage).
fn is_popup(ctx: &Ctx, w: &Target) -> bool {
    use x11rb::protocol::xproto::ConnectionExt as _;
    // sway's tree has no popups: a Wayland window id is a toplevel's.
    if w.content.is_some() {
        return false;
    }
    let window_id = w.info.id;
    ctx.with_x(|x| {
        let attrs = x.conn.get_window_attributes(window_id).map_err(|e| Error::internal(format!("X connection: {e}")))?;
        Ok(attrs.reply().map(|r| r.override_redirect).unwrap_or(false))
    })
    .unwrap_or(false)
}

/// The window's frame. A popup window (override-redirect: an open menu) or
/// a frame matched only because it is the app's one top-level accessible
/// must also be where the window is: an app's popup often carries its main
/// window's title (Qt 5) while its accessible, if any, is elsewhere. Else None.
async fn frame_of(ctx: &Ctx, a: &A11y, pid: u32, t: &Target) -> Result<Option<FrameEntry>> {
    let w = &t.info;
    let fe = match resolve_frame(ctx, a, pid, w).await {
        Ok(fe) => fe,
        Err(e) if e.code == Code::WindowNotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if fe.by_name && !is_popup(ctx, t) {
        return Ok(Some(fe));
    }
    let near = tree::extents(a, &fe.bus, &fe.frame).await.is_some_and(|r| t.frame_near(&r));
    if !near {
        // Not this window's: never leave it as the window's frame for later requests.
        ctx.resolved.borrow_mut().forget_frame(pid, w.id);
    }
    Ok(near.then_some(fe))
}

/// A node found while walking: its object path, locator path and description.
#[derive(Clone, Debug)]
struct Found {
    obj: String,
    path: Vec<u32>,
    item: Item,
    identifier: String,
    /// See `is_wrapper`: listed as a group.
    wrapper: bool,
}

/// The children of `parent` as (object path, index in parent), never of a
/// node whose children must not be listed (`Item::huge`).
async fn children_of(a: &A11y, bus: &str, parent: &Item) -> Vec<(String, i32)> {
    if parent.huge(1000) {
        return Vec::new();
    }
    match a.children(bus, &parent.path).await {
        Ok(l) => l.into_iter().enumerate().map(|(i, (_, p))| (p.to_string(), i as i32)).filter(|(p, _)| p != NULL_PATH && !p.is_empty()).collect(),
        Err(_) => Vec::new(),
    }
}

/// Role, states and child count of many objects (3 calls each, pipelined):
/// enough to search for menu bars.
async fn light(a: &A11y, bus: &str, objs: &[(String, Vec<u32>, String)]) -> Vec<Option<Item>> {
    join_all(objs.iter().map(|(obj, path, parent)| async move {
        let (role, states, count) = tokio::join!(
            a.call::<_, u32>(bus, obj, I_ACCESSIBLE, "GetRole", &()),
            a.call::<_, Vec<u32>>(bus, obj, I_ACCESSIBLE, "GetState", &()),
            a.prop(bus, obj, I_ACCESSIBLE, "ChildCount"),
        );
        Some(Item {
            path: obj.clone(),
            parent: parent.clone(),
            index: path.last().copied().unwrap_or(0) as i32,
            role: role.ok()?,
            states: tree::states_from_words(&states.ok()?),
            child_count: count.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(0),
            ..Default::default()
        })
    }))
    .await
}

/// The menu bars of a window: a breadth-first search of its on-screen nodes
/// (never below a menu bar, never into a huge node), bounded in depth and
/// count. The frame itself when it is a menu (a popup window's own menu).
async fn find_menu_bars(a: &A11y, bus: &str, frame: &str, view: View) -> Result<Vec<(String, Vec<u32>)>> {
    let root = light(a, bus, &[(frame.to_string(), Vec::new(), String::new())]).await.pop().flatten();
    let Some(root) = root else { return Err(Error::new(Code::ElementUnresolvable, "the window's frame did not answer")) };
    if matches!(role_of(&root), Some(Role::MenuBar | Role::Menu | Role::PopupMenu)) {
        return Ok(vec![(frame.to_string(), Vec::new())]);
    }
    let mut out = Vec::new();
    let mut level: Vec<(Item, Vec<u32>)> = vec![(root, Vec::new())];
    let mut seen = 1usize;
    for depth in 0..MAX_SEARCH_DEPTH {
        if level.is_empty() || seen >= MAX_SEARCH_NODES || a.exhausted() {
            break;
        }
        let parents: Vec<&(Item, Vec<u32>)> = level.iter().filter(|(it, _)| it.child_count > 0 && (depth == 0 || it.open(view.visible_ok))).collect();
        let lists = join_all(parents.iter().map(|(it, _)| children_of(a, bus, it))).await;
        let mut next: Vec<(String, Vec<u32>, String)> = Vec::new();
        for ((it, path), l) in parents.iter().zip(lists) {
            for (obj, idx) in l {
                let mut p = path.clone();
                p.push(idx as u32);
                next.push((obj, p, it.path.clone()));
            }
        }
        next.truncate(MAX_SEARCH_NODES.saturating_sub(seen));
        seen += next.len();
        let items = light(a, bus, &next).await;
        level = Vec::new();
        for ((obj, path, _), it) in next.into_iter().zip(items) {
            let Some(it) = it else { continue };
            if is_menu_bar(&it) {
                if it.open(view.visible_ok) {
                    out.push((obj, path));
                }
                continue;
            }
            // Menus outside a menu bar (a combo box's list, a closed
            // context menu) are not the window's menu bar: not searched.
            if matches!(role_of(&it), Some(Role::Menu | Role::PopupMenu | Role::MenuItem)) {
                continue;
            }
            level.push((it, path));
        }
    }
    // A menu bar with no area is not on screen whatever its states say:
    // LibreOffice (VCL gtk3) keeps its own menu bar's accessible, 0 px tall,
    // beside the native GTK menu bar it draws; listing both would show every
    // menu twice. Left out only when another bar remains.
    if out.len() > 1 {
        let ext = join_all(out.iter().map(|(obj, _)| tree::extents(a, bus, obj))).await;
        let drawn: Vec<bool> = ext.iter().map(|e| !matches!(e, Some(r) if r.width == 0 || r.height == 0)).collect();
        if drawn.iter().any(|d| *d) {
            out = out.into_iter().zip(drawn).filter(|(_, d)| *d).map(|(o, _)| o).collect();
        }
    }
    Ok(out)
}

/// Every node below `roots` (pre-order), as `menu_tree` returns them.
async fn walk(a: &A11y, bus: &str, roots: &[Found], max_nodes: u32, max_depth: u32, view: View) -> (Vec<(Found, u32, bool)>, bool) {
    let mut out: Vec<(Found, u32, bool)> = Vec::new();
    let mut truncated = false;
    // (node, depth below the root: -1 for the roots themselves)
    let mut level: Vec<(Found, i64)> = roots.iter().map(|r| (r.clone(), -1)).collect();
    while !level.is_empty() {
        if a.exhausted() {
            truncated = true;
            break;
        }
        let parents: Vec<&(Found, i64)> = level.iter().filter(|(f, d)| (*d < 0 || f.wrapper || descends(&f.item)) && f.item.child_count > 0).collect();
        let deep: Vec<&&(Found, i64)> = parents.iter().filter(|(_, d)| *d + 1 >= max_depth as i64).collect();
        if !deep.is_empty() {
            truncated = true;
        }
        let parents: Vec<&(Found, i64)> = parents.into_iter().filter(|(_, d)| *d + 1 < max_depth as i64).collect();
        let lists = join_all(parents.iter().map(|(f, _)| children_of(a, bus, &f.item))).await;
        // (object, path, parent object, depth, whether the parent is a root or a wrapper)
        let mut refs: Vec<(String, Vec<u32>, String, i64, bool)> = Vec::new();
        for ((f, d), l) in parents.iter().zip(lists) {
            for (obj, idx) in l {
                let mut p = f.path.clone();
                p.push(idx as u32);
                // A root holds wrappers only when it is a menu (bar) itself, never an element.
                let menu_root = *d < 0 && matches!(role_of(&f.item), Some(Role::MenuBar | Role::Menu | Role::PopupMenu));
                refs.push((obj, p, f.obj.clone(), d + 1, menu_root || f.wrapper));
            }
        }
        let room = (max_nodes as usize).saturating_sub(out.len());
        if refs.len() > room {
            refs.truncate(room);
            truncated = true;
        }
        let described = join_all(refs.iter().map(|(obj, p, parent, _, _)| tree::describe_with_id(a, bus, obj, parent, p.last().copied().unwrap_or(0) as i32))).await;
        level = Vec::new();
        for ((obj, path, _, d, in_wrapper), r) in refs.into_iter().zip(described) {
            let Ok((item, identifier)) = r else { continue };
            if skipped(&item) {
                continue;
            }
            let wrapper = is_wrapper(&item, in_wrapper);
            let f = Found { obj, path, item, identifier, wrapper };
            out.push((f.clone(), d as u32, false));
            level.push((f, d));
        }
        if out.len() >= max_nodes as usize && level.iter().any(|(f, _)| (f.wrapper || descends(&f.item)) && f.item.child_count > 0) {
            truncated = true;
            break;
        }
    }
    // Which nodes hold a menu (Qt 5's submenu items).
    let holders: std::collections::HashSet<Vec<u32>> = out
        .iter()
        .filter(|(f, _, _)| matches!(role_of(&f.item), Some(Role::Menu | Role::PopupMenu)))
        .filter_map(|(f, _, _)| f.path.split_last().map(|(_, p)| p.to_vec()))
        .collect();
    for o in out.iter_mut() {
        o.2 = holders.contains(&o.0.path);
    }
    out.sort_by(|x, y| x.0.path.cmp(&y.0.path));
    let _ = view;
    (out, truncated)
}

/// Each node's advertised action names (as get_tree reports them) and the
/// key binding of its press-like action (else its first), from one
/// Action.GetActions call. `exact` (a root: one node, whose actions decide
/// what may be run on it): every name not already a known untranslated one
/// is asked of GetName, as `actions::advertised` does (Firefox's localized
/// names are not its names).
async fn actions_and_binding(a: &A11y, bus: &str, it: &Item, exact: bool) -> (Vec<String>, Option<String>) {
    if it.ifaces & IF_ACTION == 0 {
        return (Vec::new(), None);
    }
    let Ok(v) = a.call::<_, Vec<(String, String, String)>>(bus, &it.path, I_ACTION, "GetActions", &()).await else {
        return (Vec::new(), None);
    };
    // Chromium leaves every localized name blank: its names come from
    // GetName (one call per action, only for those; a menu's nodes are few),
    // so its items' "select" and its elements' "showContextMenu" are seen.
    let names: Vec<String> = join_all(v.iter().enumerate().map(|(i, (l, _, _))| async move {
        let known = vocabulary::untranslated_action(l);
        if l.trim().is_empty() || exact && known.is_none() {
            let n = a.call::<_, String>(bus, &it.path, I_ACTION, "GetName", &(i as i32,)).await.unwrap_or_default();
            return if n.trim().is_empty() { l.clone() } else { n };
        }
        known.unwrap_or_else(|| l.clone())
    }))
    .await;
    let role = tree::role_name(it.role);
    let pick = actions::press_like(&names, role).unwrap_or(0);
    let mut binding = v.get(pick).map(|(_, _, k)| k.clone()).filter(|k| !k.is_empty());
    // Qt 5 leaves GetActions' binding empty; its GetKeyBinding falls back to
    // the item's shortcut text.
    if binding.is_none() && !v.is_empty() {
        binding = a.call::<_, String>(bus, &it.path, I_ACTION, "GetKeyBinding", &(pick as i32,)).await.ok().filter(|k| !k.is_empty());
    }
    let shortcut = binding.as_deref().and_then(vocabulary::shortcut);
    (names.into_iter().filter(|n| !n.trim().is_empty()).collect(), shortcut)
}

/// The wire node of a found node, with its details (bounds only when it is
/// on screen).
async fn wire_of(a: &A11y, bus: &str, f: &Found, view: View, exact: bool) -> (WireNode, Option<String>) {
    let it = &f.item;
    let bounds = async {
        if it.ifaces & IF_COMPONENT == 0 || !it.open(view.visible_ok) {
            return None;
        }
        let r = tree::extents(a, bus, &it.path).await?;
        Some(crate::wire::messages::Rect::new(r.x.saturating_add(view.offset.0), r.y.saturating_add(view.offset.1), r.width, r.height))
    };
    let ((names, shortcut), bounds) = tokio::join!(actions_and_binding(a, bus, it, exact), bounds);
    let d = Details { bounds, value: None, actions: names, identifier: f.identifier.clone() };
    (tree::wire_node(f.path.clone(), it, d), shortcut)
}

async fn resolve_root(a: &A11y, fe: &FrameEntry, loc: &WireLocator) -> Result<Found> {
    let r = actions::resolve_from(a, &fe.bus, &fe.frame, loc, &[], Want::Nothing).await?;
    let identifier = tree::read_identifier(a, &fe.bus, &r.item.path).await;
    let obj = r.item.path.clone();
    Ok(Found { obj, path: loc.path.clone(), item: r.item, identifier, wrapper: false })
}

pub async fn menu_tree(ctx: &Ctx, args: MenuTreeArgs) -> Result<MenuTreeResult> {
    if args.max_nodes == 0 || args.max_depth == 0 {
        return Err(Error::invalid("max_nodes and max_depth must be at least 1"));
    }
    let t0 = Instant::now();
    let w = window::of_pid(ctx, args.pid, args.window_id)?;
    let a = ctx.a11y().await?.budgeted(MENU_CALL_BUDGET);
    let Some(fe) = frame_of(ctx, &a, args.pid, &w).await? else {
        // The window has no accessible of its own (a popup the toolkit does
        // not list among its top-level accessibles).
        return Ok(MenuTreeResult { roots: Vec::new(), items: Vec::new(), truncated: false, calls: a.calls() });
    };
    let bus = fe.bus.clone();
    let view = w.view(&a, &bus, &fe.frame).await;
    let roots: Vec<Found> = match &args.root {
        Some(loc) => vec![resolve_root(&a, &fe, loc).await?],
        None => {
            let bars = find_menu_bars(&a, &bus, &fe.frame, view).await?;
            let (a, bus) = (&a, bus.as_str());
            let described = join_all(bars.iter().map(|(obj, path)| async move {
                tree::describe_with_id(a, bus, obj, "", path.last().copied().unwrap_or(0) as i32).await.map(|(item, identifier)| Found { obj: obj.clone(), path: path.clone(), item, identifier, wrapper: false })
            }))
            .await;
            described.into_iter().flatten().collect()
        }
    };
    let (found, truncated) = walk(&a, &bus, &roots, args.max_nodes, args.max_depth, view).await;
    let (root_nodes, item_nodes) = tokio::join!(
        join_all(roots.iter().map(|r| wire_of(&a, &bus, r, view, true))),
        join_all(found.iter().map(|(f, _, _)| wire_of(&a, &bus, f, view, false))),
    );
    let items: Vec<MenuItemOut> = found
        .iter()
        .zip(item_nodes)
        .map(|((f, depth, holds), (node, shortcut))| MenuItemOut {
            node,
            depth: *depth,
            shortcut,
            kind: if f.wrapper { "group" } else { kind_of(&f.item, *holds) },
            checkable: is_checkable(&f.item),
            showing: f.item.open(view.visible_ok),
        })
        .collect();
    if crate::debug() {
        eprintln!(
            "deckhand-helper-linux: menu_tree pid {} window {}: {} roots, {} items, {} calls in {:.1} ms",
            args.pid,
            args.window_id,
            roots.len(),
            items.len(),
            a.calls(),
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(MenuTreeResult { roots: root_nodes.into_iter().map(|(n, _)| n).collect(), items, truncated: truncated || a.exhausted(), calls: a.calls() })
}

/// Whether any node below `opener` (its menu, and a group's items) is on
/// screen.
async fn menu_showing(a: &A11y, bus: &str, opener: &Item, visible_ok: bool) -> bool {
    let kids = children_of(a, bus, opener).await;
    let refs: Vec<(String, Vec<u32>, String)> = kids.iter().map(|(o, i)| (o.clone(), vec![*i as u32], opener.path.clone())).collect();
    let items = light(a, bus, &refs).await;
    let mut groups = Vec::new();
    for it in items.into_iter().flatten() {
        if skipped(&it) {
            continue;
        }
        if it.open(visible_ok) {
            return true;
        }
        if role_of(&it) == Some(Role::PopupMenu) {
            groups.push(it);
        }
    }
    for g in groups {
        let kids = children_of(a, bus, &g).await;
        let refs: Vec<(String, Vec<u32>, String)> = kids.iter().take(64).map(|(o, i)| (o.clone(), vec![*i as u32], g.path.clone())).collect();
        if light(a, bus, &refs).await.into_iter().flatten().any(|it| !skipped(&it) && it.open(visible_ok)) {
            return true;
        }
    }
    false
}

/// Close the menu `opener` opened, through accessibility: a menu shell that
/// implements Selection (GTK 3's menu bar and menus) is cleared (its open
/// item deselected, which pops its menus down); else an opener whose
/// show-menu action toggles its menu (Qt 5: a second ShowMenu hides it) runs
/// it again. Then waits (bounded) for the items to leave the screen.
async fn close(ctx: &Ctx, a: &A11y, args: &MenuCloseArgs, sent: &std::cell::Cell<bool>) -> Result<MenuCloseResult> {
    let w = window::of_pid(ctx, args.pid, args.window_id)?;
    let Some(fe) = frame_of(ctx, a, args.pid, &w).await? else {
        return Err(Error::new(Code::WindowNotFound, "the window has no accessible frame"));
    };
    let bus = fe.bus.clone();
    let view = w.view(a, &bus, &fe.frame).await;
    let r = actions::resolve_from(a, &bus, &fe.frame, &args.opener, &[], Want::Actions).await?;
    let opener = r.item;
    if !menu_showing(a, &bus, &opener, view.visible_ok).await {
        return Ok(MenuCloseResult { closed: true, method: None });
    }
    let parent_path = if r.chain.len() >= 2 { r.chain[r.chain.len() - 2].clone() } else { fe.frame.clone() };
    let parent = tree::describe(a, &bus, &parent_path, "", 0).await.ok();
    let mut method = None;
    if let Some(p) = parent.filter(|p| p.ifaces & IF_SELECTION != 0 && matches!(role_of(p), Some(Role::MenuBar | Role::Menu | Role::PopupMenu))) {
        sent.set(true);
        let ok: bool = a.call(&bus, &p.path, "org.a11y.atspi.Selection", "ClearSelection", &()).await.map_err(|e| e.recode(Code::ActionFailed))?;
        method = Some(format!("Selection.ClearSelection on the {} holding the opener{}", tree::role_name(p.role), if ok { "" } else { " (answered false)" }));
    } else {
        let names: Vec<String> = r.pre.actions.clone().unwrap_or_default().into_iter().map(|n| n.name).collect();
        let role = tree::role_name(opener.role);
        if let Some(idx) = names.iter().position(|n| vocabulary::action(n, role) == ActionName::ShowMenu) {
            sent.set(true);
            let _: bool = a.call(&bus, &opener.path, I_ACTION, "DoAction", &(idx as i32,)).await.map_err(|e| e.recode(Code::ActionFailed))?;
            method = Some(format!("the opener's {:?} action (it toggles the menu)", names[idx]));
        }
    }
    if method.is_none() {
        return Ok(MenuCloseResult { closed: false, method: None });
    }
    let until = Instant::now() + CLOSE_WAIT;
    loop {
        tokio::time::sleep(CLOSE_POLL).await;
        let showing = menu_showing(a, &bus, &opener, view.visible_ok).await;
        if !showing {
            return Ok(MenuCloseResult { closed: true, method });
        }
        if Instant::now() >= until {
            return Ok(MenuCloseResult { closed: false, method });
        }
    }
}

/// menu_close: always answered with a receipt (route accessibility): not
/// dispatched when nothing was called.
pub async fn menu_close(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let a: MenuCloseArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return Response::err(id, &e, Some(Receipt::accessibility(Delivery::NotDispatched))),
    };
    let (d, _) = deadline_of(deadline_ms);
    let sent = std::cell::Cell::new(false);
    let r = async {
        let acc = ctx.a11y().await?.budgeted(MENU_CALL_BUDGET);
        close(ctx, &acc, &a, &sent).await
    };
    let r = tokio::time::timeout(d, r).await;
    let delivery = |ok_code: bool| match (sent.get(), ok_code) {
        (false, _) => Delivery::NotDispatched,
        (true, true) => Delivery::Submitted,
        (true, false) => Delivery::Unknown,
    };
    match r {
        Ok(Ok(res)) => Response::ok(id, to_value(&res), Some(Receipt::accessibility(delivery(true)))),
        Ok(Err(e)) => {
            ctx.a11y_failed(&e);
            let code_known = e.code != Code::Timeout;
            Response::err(id, &e, Some(Receipt::accessibility(delivery(code_known))))
        }
        Err(_) => Response::err(id, &Error::timeout(format!("menu_close did not finish within {} ms", d.as_millis())), Some(Receipt::accessibility(delivery(false)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(role: Role, child_count: i32, states: u64) -> Item {
        Item { role: role as u32, child_count, states, ..Default::default() }
    }

    #[test]
    fn kinds_and_descent() {
        // GTK 3: a submenu is a "menu" node whose children are its items.
        assert_eq!(kind_of(&it(Role::Menu, 4, 0), false), "submenu");
        assert!(descends(&it(Role::Menu, 4, 0)));
        // Qt 5: a "menu item" holding a "popup menu".
        assert_eq!(kind_of(&it(Role::MenuItem, 1, 0), true), "submenu");
        assert_eq!(kind_of(&it(Role::PopupMenu, 3, 0), false), "group");
        assert!(descends(&it(Role::MenuItem, 1, 0)));
        assert!(!descends(&it(Role::MenuItem, 0, 0)));
        assert_eq!(kind_of(&it(Role::CheckMenuItem, 0, 0), false), "item");
        // A push button inside a menu is listed, not descended.
        assert!(!descends(&it(Role::Button, 2, 0)));
        assert!(skipped(&it(Role::Separator, 0, 0)));
        assert!(!skipped(&it(Role::MenuItem, 0, 0)));
    }

    #[test]
    fn chromium_wrappers() {
        let named = |role: Role, cc: i32, name: &str| Item { role: role as u32, child_count: cc, name: name.into(), ..Default::default() };
        // Chromium's popup: menu bar > panel > panel > unnamed menu > items.
        assert!(is_wrapper(&named(Role::Panel, 3, ""), true));
        assert!(is_wrapper(&named(Role::Menu, 11, ""), true));
        // Not below a menu root or another wrapper: an element's own children stay items.
        assert!(!is_wrapper(&named(Role::Panel, 3, ""), false));
        // A named menu is a submenu (GTK 3's File), never folded away.
        assert!(!is_wrapper(&named(Role::Menu, 4, "File"), true));
        assert!(!is_wrapper(&named(Role::MenuItem, 0, ""), true));
        // Its empty panels are left out; a named or non-empty one is not.
        assert!(skipped(&named(Role::Panel, 0, "")));
        assert!(!skipped(&named(Role::Panel, 0, "Status")));
        assert!(!skipped(&named(Role::Panel, 2, "")));
    }

    #[test]
    fn checkable_items() {
        assert!(is_checkable(&it(Role::CheckMenuItem, 0, 0)));
        assert!(is_checkable(&it(Role::RadioMenuItem, 0, 0)));
        assert!(is_checkable(&it(Role::MenuItem, 0, collection::state_bit(State::Checkable))));
        assert!(!is_checkable(&it(Role::MenuItem, 0, collection::state_bit(State::Checked))), "checked alone does not say checkable");
    }
}
