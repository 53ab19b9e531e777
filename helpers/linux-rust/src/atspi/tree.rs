//! Reading an application's accessibility tree for one window.
//!
//! Fast path: org.a11y.atspi.Cache.GetItems returns every item of the app
//! (path, parent, index, child count, interfaces, name, role, description,
//! states) in one round trip; bounds, actions, values and ids are then fetched
//! with pipelined concurrent calls on the same connection. Fallback: a
//! breadth-first walk, each level's calls pipelined.

use super::{within, A11y, ObjRef, CACHE_PATH, COORD_SCREEN, I_ACCESSIBLE, I_ACTION, I_CACHE, I_COMPONENT, I_PROPS, I_TEXT, I_VALUE, NULL_PATH, ROOT_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::messages::{Rect, WireNode};
use atspi::{Role, StateSet};
use futures_util::future::join_all;
use std::collections::HashMap;
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

pub const IF_ACTION: u32 = 1 << 1;
pub const IF_COMPONENT: u32 = 1 << 2;
pub const IF_TEXT: u32 = 1 << 3;
pub const IF_EDITABLE: u32 = 1 << 4;
pub const IF_VALUE: u32 = 1 << 5;
pub const IF_SELECTION: u32 = 1 << 6;

const STATE_SHOWING: u64 = 1 << 25;
const STATE_MANAGES_DESCENDANTS: u64 = 1 << 31;

/// Longest value text returned for one node (characters).
const MAX_VALUE_CHARS: usize = 32 * 1024;

pub fn iface_bits(names: &[String]) -> u32 {
    let mut b = 0;
    for n in names {
        b |= match n.as_str() {
            I_ACTION => IF_ACTION,
            I_COMPONENT => IF_COMPONENT,
            I_TEXT => IF_TEXT,
            "org.a11y.atspi.EditableText" => IF_EDITABLE,
            I_VALUE => IF_VALUE,
            "org.a11y.atspi.Selection" => IF_SELECTION,
            _ => 0,
        };
    }
    b
}

pub fn states_from_words(words: &[u32]) -> u64 {
    let lo = words.first().copied().unwrap_or(0) as u64;
    let hi = words.get(1).copied().unwrap_or(0) as u64;
    lo | (hi << 32)
}

pub fn state_names(bits: u64) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..64 {
        let bit = 1u64 << i;
        if bits & bit != 0 {
            if let Some(s) = StateSet::from_bits(bit).ok().and_then(|s| s.iter().next()) {
                out.push(s.to_static_str().to_string());
            }
        }
    }
    out
}

/// The role's AT-SPI name, as libatspi / ATK spell it (atspi-common says
/// "button" where AT-SPI says "push button").
pub fn role_name(role: u32) -> &'static str {
    match Role::try_from(role) {
        Ok(Role::Button) => "push button",
        Ok(r) => r.name(),
        Err(_) => "unknown",
    }
}

pub fn is_secure_role(role: u32) -> bool {
    Role::try_from(role).map(|r| r == Role::PasswordText).unwrap_or(false)
}

/// Roles whose Text interface content is a value (not just a label's name).
fn text_is_value(role: u32, ifaces: u32) -> bool {
    if ifaces & IF_EDITABLE != 0 {
        return true;
    }
    matches!(
        Role::try_from(role),
        Ok(Role::Text | Role::Entry | Role::Terminal | Role::DocumentText | Role::SpinButton | Role::Paragraph)
    )
}

/// One accessible, as the cache or the walk describes it.
#[derive(Debug, Clone, Default)]
pub struct Item {
    pub path: String,
    pub parent: String,
    pub index: i32,
    pub child_count: i32,
    pub ifaces: u32,
    pub name: String,
    pub role: u32,
    pub description: String,
    pub states: u64,
}

impl Item {
    pub fn showing(&self) -> bool {
        self.states & STATE_SHOWING != 0
    }
    pub fn secure(&self) -> bool {
        is_secure_role(self.role)
    }
}

/// All items known for one application, with ordered children.
pub struct Model {
    pub items: HashMap<String, Item>,
    pub kids: HashMap<String, Vec<String>>,
}

impl Model {
    pub fn from_items(list: Vec<Item>) -> Model {
        let mut kids: HashMap<String, Vec<(i32, usize, String)>> = HashMap::new();
        for (seq, it) in list.iter().enumerate() {
            // The application root lists the registry's root (same path) as
            // its parent: never make a node its own child.
            if it.path == it.parent {
                continue;
            }
            kids.entry(it.parent.clone()).or_default().push((it.index, seq, it.path.clone()));
        }
        let kids = kids
            .into_iter()
            .map(|(p, mut v)| {
                v.sort_by_key(|(i, seq, _)| (*i, *seq));
                (p, v.into_iter().map(|(_, _, c)| c).collect())
            })
            .collect();
        let items = list.into_iter().map(|i| (i.path.clone(), i)).collect();
        Model { items, kids }
    }
}

type CacheItemNew = (ObjRef, ObjRef, ObjRef, i32, i32, Vec<String>, String, u32, String, Vec<u32>);
type CacheItemLegacy = (ObjRef, ObjRef, ObjRef, Vec<ObjRef>, Vec<String>, String, u32, String, Vec<u32>);

/// Cache.GetItems. Err when the app has no cache (not a GTK app, or no event
/// listener registered yet).
pub async fn cache_items(a: &A11y, bus: &str) -> Result<Vec<Item>> {
    let msg = a.conn.call_method(Some(bus), CACHE_PATH, Some(I_CACHE), "GetItems", &()).await?;
    let body = msg.body();
    if let Ok(v) = body.deserialize::<Vec<CacheItemNew>>() {
        return Ok(v
            .into_iter()
            .map(|(obj, _app, parent, index, count, ifaces, name, role, desc, states)| Item {
                path: obj.1.to_string(),
                parent: parent.1.to_string(),
                index,
                child_count: count,
                ifaces: iface_bits(&ifaces),
                name,
                role,
                description: desc,
                states: states_from_words(&states),
            })
            .collect());
    }
    let v: Vec<CacheItemLegacy> = body.deserialize()?;
    let mut out = Vec::with_capacity(v.len());
    let mut index_of: HashMap<String, i32> = HashMap::new();
    for it in &v {
        for (i, c) in it.3.iter().enumerate() {
            index_of.insert(c.1.to_string(), i as i32);
        }
    }
    for (obj, _app, parent, children, ifaces, name, role, desc, states) in v {
        let path = obj.1.to_string();
        out.push(Item {
            index: index_of.get(&path).copied().unwrap_or(-1),
            path,
            parent: parent.1.to_string(),
            child_count: children.len() as i32,
            ifaces: iface_bits(&ifaces),
            name,
            role,
            description: desc,
            states: states_from_words(&states),
        });
    }
    Ok(out)
}

/// Describe one accessible with individual (concurrent) calls.
pub async fn describe(a: &A11y, bus: &str, path: &str, parent: &str, index: i32) -> Result<Item> {
    let (role, name, desc, states, ifaces, count) = tokio::join!(
        a.call::<_, u32>(bus, path, I_ACCESSIBLE, "GetRole", &()),
        a.prop_string(bus, path, I_ACCESSIBLE, "Name"),
        a.prop_string(bus, path, I_ACCESSIBLE, "Description"),
        a.call::<_, Vec<u32>>(bus, path, I_ACCESSIBLE, "GetState", &()),
        a.call::<_, Vec<String>>(bus, path, I_ACCESSIBLE, "GetInterfaces", &()),
        a.prop(bus, path, I_ACCESSIBLE, "ChildCount"),
    );
    Ok(Item {
        path: path.to_string(),
        parent: parent.to_string(),
        index,
        role: role?,
        name: name.unwrap_or_default(),
        description: desc.unwrap_or_default(),
        states: states_from_words(&states.unwrap_or_default()),
        ifaces: iface_bits(&ifaces.unwrap_or_default()),
        child_count: count.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(0),
    })
}

/// Describe one accessible and read its AccessibleId in four concurrent
/// calls: GetRole, GetState, GetInterfaces and Properties.GetAll (name,
/// description, child count and id in one reply). If GetAll fails (a toolkit
/// without it), the properties are read one by one, as `describe` does.
pub async fn describe_with_id(a: &A11y, bus: &str, path: &str, parent: &str, index: i32) -> Result<(Item, String)> {
    let (role, states, ifaces, all) = tokio::join!(
        a.call::<_, u32>(bus, path, I_ACCESSIBLE, "GetRole", &()),
        a.call::<_, Vec<u32>>(bus, path, I_ACCESSIBLE, "GetState", &()),
        a.call::<_, Vec<String>>(bus, path, I_ACCESSIBLE, "GetInterfaces", &()),
        a.call::<_, HashMap<String, OwnedValue>>(bus, path, I_PROPS, "GetAll", &(I_ACCESSIBLE,)),
    );
    let role = role?;
    let string = |m: &mut HashMap<String, OwnedValue>, k: &str| m.remove(k).and_then(|v| String::try_from(v).ok());
    let (name, description, count, identifier) = match all {
        Ok(mut m) => {
            let name = string(&mut m, "Name");
            let description = string(&mut m, "Description");
            let count = m.remove("ChildCount").and_then(|v| i32::try_from(v).ok());
            let identifier = string(&mut m, "AccessibleId");
            (name, description, count, identifier)
        }
        Err(_) => (None, None, None, None),
    };
    // Anything GetAll did not carry: asked for on its own.
    let (name, description, count, identifier) = tokio::join!(
        async {
            match name {
                Some(n) => n,
                None => a.prop_string(bus, path, I_ACCESSIBLE, "Name").await.unwrap_or_default(),
            }
        },
        async {
            match description {
                Some(d) => d,
                None => a.prop_string(bus, path, I_ACCESSIBLE, "Description").await.unwrap_or_default(),
            }
        },
        async {
            match count {
                Some(c) => c,
                None => a.prop(bus, path, I_ACCESSIBLE, "ChildCount").await.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(0),
            }
        },
        async {
            match identifier {
                Some(i) => i,
                None => read_identifier(a, bus, path).await,
            }
        },
    );
    let item = Item {
        path: path.to_string(),
        parent: parent.to_string(),
        index,
        role,
        name,
        description,
        states: states_from_words(&states.unwrap_or_default()),
        ifaces: iface_bits(&ifaces.unwrap_or_default()),
        child_count: count,
    };
    Ok((item, identifier))
}

/// The window's frame among the app's top-level accessibles: same name as
/// the X window's title; ties (and no-name-match) broken by extents.
pub async fn match_frame(a: &A11y, bus: &str, candidates: &[(String, String)], title: &str, bounds: Rect) -> Result<String> {
    Ok(match_frame_how(a, bus, candidates, title, bounds).await?.0)
}

/// `match_frame`, also saying whether the frame was the only one named like
/// the title (true) or chosen by its extents (false).
pub async fn match_frame_how(a: &A11y, bus: &str, candidates: &[(String, String)], title: &str, bounds: Rect) -> Result<(String, bool)> {
    if candidates.is_empty() {
        return Err(Error::new(Code::WindowNotFound, "the application exposes no top-level accessible"));
    }
    let named: Vec<&(String, String)> = candidates.iter().filter(|(_, n)| n.trim() == title.trim()).collect();
    if named.len() == 1 {
        return Ok((named[0].0.clone(), true));
    }
    let pool: Vec<&(String, String)> = if named.is_empty() { candidates.iter().collect() } else { named };
    let ext = join_all(pool.iter().map(|(p, _)| extents(a, bus, p))).await;
    let mut best: Option<(i64, &String)> = None;
    for ((p, _), e) in pool.iter().zip(ext) {
        if let Some(r) = e {
            let d = extents_distance(&r, &bounds);
            if best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, p));
            }
        }
    }
    match best {
        Some((d, p)) if d <= FRAME_SLACK || pool.len() == 1 => Ok((p.clone(), false)),
        _ if pool.len() == 1 => Ok((pool[0].0.clone(), false)),
        _ => Err(Error::new(Code::WindowNotFound, format!("no accessible frame matches the window titled {title:?}"))),
    }
}

/// How far a frame's extents are from a window's client bounds (sum of the
/// four coordinate differences; a frame's extents include the decorations).
pub fn extents_distance(r: &Rect, bounds: &Rect) -> i64 {
    (r.x as i64 - bounds.x as i64).abs()
        + (r.y as i64 - bounds.y as i64).abs()
        + (r.width as i64 - bounds.width as i64).abs()
        + (r.height as i64 - bounds.height as i64).abs()
}

/// Largest `extents_distance` at which a frame matches a window.
pub const FRAME_SLACK: i64 = 64;

/// Component.GetExtents in screen coordinates; None when unknown or off-screen.
pub async fn extents(a: &A11y, bus: &str, path: &str) -> Option<Rect> {
    let (x, y, w, h): (i32, i32, i32, i32) = a.call(bus, path, I_COMPONENT, "GetExtents", &(COORD_SCREEN,)).await.ok()?;
    if x == i32::MIN || y == i32::MIN || w < 0 || h < 0 {
        return None;
    }
    Some(Rect::new(x, y, w as u32, h as u32))
}

/// Fetch the app's model: cache first, else `None` (caller walks).
pub async fn model_from_cache(a: &A11y, bus: &str) -> Option<Model> {
    // Debug/comparison switch: force the walk.
    if std::env::var("DECKHAND_NO_CACHE").is_ok_and(|v| v == "1") {
        return None;
    }
    match within(Duration::from_secs(5), "Cache.GetItems", cache_items(a, bus)).await {
        Ok(items) => Some(Model::from_items(items)),
        Err(e) => {
            eprintln!("deckhand-helper-linux: no bulk cache for {bus}: {}", e.message);
            None
        }
    }
}

/// Frame candidates: the cache's children of the app root, or GetChildren.
pub async fn frame_candidates(a: &A11y, bus: &str, model: Option<&Model>) -> Result<Vec<(String, String)>> {
    if let Some(m) = model {
        if let Some(k) = m.kids.get(ROOT_PATH) {
            return Ok(k.iter().filter(|p| p.as_str() != ROOT_PATH).map(|p| (p.clone(), m.items[p].name.clone())).collect());
        }
    }
    let kids = a.children(bus, ROOT_PATH).await?;
    let names = join_all(kids.iter().map(|(b, p)| a.prop_string(b, p.as_str(), I_ACCESSIBLE, "Name"))).await;
    Ok(kids
        .into_iter()
        .zip(names)
        .filter(|((_, p), _)| p.as_str() != ROOT_PATH && p.as_str() != NULL_PATH)
        .map(|((_, p), n)| (p.to_string(), n.unwrap_or_default()))
        .collect())
}

pub struct Limits {
    pub max_depth: u32,
    pub max_children: u32,
    pub max_nodes: u32,
}

/// Breadth-first walk below `frame`, every level's calls in flight together.
pub async fn walk(a: &A11y, bus: &str, frame: &str, lim: &Limits) -> Result<Model> {
    let root = describe(a, bus, frame, "", 0).await?;
    let mut all = vec![root];
    let mut level: Vec<(usize, u32)> = vec![(0, 0)]; // (index in all, depth)
    let cap = (lim.max_nodes as usize).saturating_mul(2).max(16);
    while !level.is_empty() && all.len() < cap {
        // Which nodes of this level we descend into.
        let parents: Vec<(usize, u32)> = level
            .iter()
            .copied()
            .filter(|&(i, d)| {
                let it = &all[i];
                d < lim.max_depth && it.child_count > 0 && (d == 0 || it.showing())
            })
            .collect();
        let lists = join_all(parents.iter().map(|&(i, _)| a.children(bus, &all[i].path))).await;
        let mut next_refs: Vec<(String, String, i32, u32)> = Vec::new();
        for (&(i, d), kids) in parents.iter().zip(lists) {
            let Ok(kids) = kids else { continue };
            for (idx, (_, p)) in kids.into_iter().enumerate().take(lim.max_children as usize) {
                if p.as_str() == NULL_PATH {
                    continue;
                }
                next_refs.push((p.to_string(), all[i].path.clone(), idx as i32, d + 1));
            }
        }
        next_refs.truncate(cap.saturating_sub(all.len()));
        let described = join_all(next_refs.iter().map(|(p, parent, idx, _)| describe(a, bus, p, parent, *idx))).await;
        level = Vec::new();
        for ((_, _, _, d), it) in next_refs.iter().zip(described) {
            if let Ok(it) = it {
                all.push(it);
                level.push((all.len() - 1, *d));
            }
        }
    }
    Ok(Model::from_items(all))
}

/// Children of one object, authoritative order (index = GetChildAtIndex).
/// Very large child lists are read index by index up to `max`.
async fn children_capped(a: &A11y, bus: &str, path: &str, count: i32, max: u32) -> Result<Vec<String>> {
    let list: Vec<String> = if count > 0 && count as i64 > 2 * max as i64 {
        let n = max.min(count as u32);
        let refs = join_all((0..n).map(|i| async move { a.call::<_, ObjRef>(bus, path, I_ACCESSIBLE, "GetChildAtIndex", &(i as i32,)).await })).await;
        refs.into_iter().map(|r| r.map(|(_, p)| p.to_string()).unwrap_or_else(|_| NULL_PATH.to_string())).collect()
    } else {
        a.children(bus, path).await?.into_iter().map(|(_, p)| p.to_string()).collect()
    };
    Ok(list)
}

/// The cache gives every item's attributes in one call, but its structure
/// cannot be trusted for paths: it leaves out the children of objects that
/// manage their descendants (tables, tree views), and its index-in-parent
/// disagrees with GetChildAtIndex for some GTK containers (a window with a
/// header bar, scrolled windows). So every node we descend into is asked for
/// its children (GetChildren: the GetChildAtIndex order), all calls of a
/// level in flight together, and the missing ones are described.
async fn repair(a: &A11y, bus: &str, m: &mut Model, frame: &str, lim: &Limits) -> usize {
    let mut fixed: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut calls = 0;
    for _round in 0..6 {
        let (chosen, _) = select(m, frame, lim);
        let bad: Vec<(String, i32)> = chosen
            .iter()
            .filter(|c| {
                let it = c.item;
                let depth = c.path.len() as u32;
                if fixed.contains(&it.path) || depth >= lim.max_depth || !(depth == 0 || it.showing()) {
                    return false;
                }
                // Every node we descend into: the cache's index-in-parent is
                // not always the GetChildAtIndex order (GTK windows with a
                // header bar, scrolled windows), and it omits the children of
                // objects that manage their descendants.
                let kids = m.kids.get(&it.path).map(|v| v.len()).unwrap_or(0);
                it.child_count > 0 || kids > 0 || it.states & STATE_MANAGES_DESCENDANTS != 0
            })
            .map(|c| (c.item.path.clone(), c.item.child_count))
            .collect();
        if bad.is_empty() {
            break;
        }
        calls += bad.len();
        let lists = join_all(bad.iter().map(|(p, n)| children_capped(a, bus, p, *n, lim.max_children))).await;
        let mut missing: Vec<(String, String, i32)> = Vec::new();
        for ((p, _), l) in bad.iter().zip(lists) {
            fixed.insert(p.clone());
            let Ok(l) = l else { continue };
            if let Some(it) = m.items.get_mut(p) {
                it.child_count = it.child_count.max(l.len() as i32);
            }
            let mut order = Vec::with_capacity(l.len());
            for (pos, c) in l.into_iter().enumerate() {
                if c == NULL_PATH {
                    continue;
                }
                match m.items.get_mut(&c) {
                    Some(ci) => {
                        ci.index = pos as i32;
                        ci.parent = p.clone();
                    }
                    None => missing.push((c.clone(), p.clone(), pos as i32)),
                }
                order.push(c);
            }
            m.kids.insert(p.clone(), order);
        }
        calls += missing.len();
        let described = join_all(missing.iter().map(|(c, p, i)| describe(a, bus, c, p, *i))).await;
        for ((c, p, _), d) in missing.iter().zip(described) {
            match d {
                Ok(it) => {
                    m.items.insert(c.clone(), it);
                }
                Err(_) => {
                    // Gone meanwhile: drop it from its parent's list.
                    if let Some(k) = m.kids.get_mut(p) {
                        k.retain(|x| x != c);
                    }
                }
            }
        }
    }
    calls
}

/// A node chosen for output, before its details are fetched.
struct Chosen<'m> {
    path: Vec<u32>,
    item: &'m Item,
}

/// Pre-order selection under the limits. Returns (nodes, truncated).
fn select<'m>(m: &'m Model, frame: &str, lim: &Limits) -> (Vec<Chosen<'m>>, bool) {
    let mut out = Vec::new();
    let mut truncated = false;
    let Some(root) = m.items.get(frame) else { return (out, false) };
    let mut stack: Vec<(Vec<u32>, &Item)> = vec![(Vec::new(), root)];
    while let Some((path, it)) = stack.pop() {
        if out.len() >= lim.max_nodes as usize {
            truncated = true;
            break;
        }
        let depth = path.len() as u32;
        let kids = m.kids.get(&it.path).map(|v| v.as_slice()).unwrap_or(&[]);
        let descend = depth == 0 || it.showing();
        if descend && !kids.is_empty() {
            if depth >= lim.max_depth {
                truncated = true;
            } else {
                if kids.len() > lim.max_children as usize {
                    truncated = true;
                }
                // The path component is the position among the parent's
                // children (what GetChildAtIndex takes); `repair` makes the
                // list complete and ordered.
                for (pos, k) in kids.iter().enumerate().take(lim.max_children as usize).rev() {
                    if let Some(ki) = m.items.get(k) {
                        let mut p = path.clone();
                        p.push(pos as u32);
                        stack.push((p, ki));
                    }
                }
            }
        }
        out.push(Chosen { path, item: it });
    }
    (out, truncated)
}

fn format_number(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

pub fn cap_chars(s: String) -> String {
    if s.chars().count() > MAX_VALUE_CHARS {
        s.chars().take(MAX_VALUE_CHARS).collect()
    } else {
        s
    }
}

/// Read a node's value: Value.CurrentValue, else the Text content for
/// text-like roles. Never for a secure field.
pub async fn read_value(a: &A11y, bus: &str, it: &Item) -> Option<String> {
    if it.secure() {
        return None;
    }
    if it.ifaces & IF_VALUE != 0 {
        if let Ok(v) = a.prop(bus, &it.path, I_VALUE, "CurrentValue").await {
            if let Ok(f) = f64::try_from(v) {
                return Some(format_number(f));
            }
        }
    }
    if it.ifaces & IF_TEXT != 0 && text_is_value(it.role, it.ifaces) {
        if let Ok(t) = a.call::<_, String>(bus, &it.path, I_TEXT, "GetText", &(0i32, -1i32)).await {
            return Some(cap_chars(t));
        }
    }
    None
}

pub async fn read_actions(a: &A11y, bus: &str, it: &Item) -> Vec<String> {
    if it.ifaces & IF_ACTION == 0 {
        return Vec::new();
    }
    match a.call::<_, Vec<(String, String, String)>>(bus, &it.path, I_ACTION, "GetActions", &()).await {
        Ok(v) => v.into_iter().map(|(n, _, _)| n).filter(|n| !n.is_empty()).collect(),
        Err(_) => Vec::new(),
    }
}

pub async fn read_identifier(a: &A11y, bus: &str, path: &str) -> String {
    match a.prop(bus, path, I_ACCESSIBLE, "AccessibleId").await {
        Ok(v) => String::try_from(v).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

async fn read_bounds(a: &A11y, bus: &str, it: &Item) -> Option<Rect> {
    if it.ifaces & IF_COMPONENT == 0 || !it.showing() {
        return None;
    }
    extents(a, bus, &it.path).await
}

/// What the cache does not carry: fetched per node, pipelined.
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub bounds: Option<Rect>,
    pub value: Option<String>,
    pub actions: Vec<String>,
    pub identifier: String,
}

/// Bounds, values, actions and ids of many items, all calls in flight at once.
pub async fn fetch_details(a: &A11y, bus: &str, items: &[&Item]) -> Vec<Details> {
    let (bounds, values, actions, ids) = tokio::join!(
        join_all(items.iter().map(|it| read_bounds(a, bus, it))),
        join_all(items.iter().map(|it| read_value(a, bus, it))),
        join_all(items.iter().map(|it| read_actions(a, bus, it))),
        join_all(items.iter().map(|it| read_identifier(a, bus, &it.path))),
    );
    bounds
        .into_iter()
        .zip(values)
        .zip(actions)
        .zip(ids)
        .map(|(((bounds, value), actions), identifier)| Details { bounds, value, actions, identifier })
        .collect()
}

pub fn wire_node(path: Vec<u32>, it: &Item, d: Details) -> WireNode {
    WireNode {
        path,
        role: role_name(it.role).to_string(),
        name: it.name.clone(),
        description: it.description.clone(),
        value: if it.secure() { None } else { d.value },
        states: state_names(it.states),
        bounds: d.bounds,
        actions: d.actions,
        identifier: d.identifier,
        secure: it.secure(),
        child_count: it.child_count.max(0) as u32,
    }
}

pub struct Tree {
    pub nodes: Vec<WireNode>,
    pub truncated: bool,
    pub source: &'static str,
    /// The frame the tree was read from, and how it was matched.
    pub frame: String,
    pub frame_by_name: bool,
    pub frame_name: String,
    /// Object path of each returned node, in `nodes` order.
    pub objects: Vec<String>,
}

/// Locate the app's frame for an X window and read its subtree.
pub async fn read_tree(a: &A11y, bus: &str, title: &str, bounds: Rect, lim: &Limits) -> Result<Tree> {
    let t0 = std::time::Instant::now();
    let cached = model_from_cache(a, bus).await;
    let t_cache = t0.elapsed();
    let cands = frame_candidates(a, bus, cached.as_ref()).await?;
    let (frame, frame_by_name) = match_frame_how(a, bus, &cands, title, bounds).await?;
    let frame_name = cands.iter().find(|(p, _)| *p == frame).map(|(_, n)| n.clone()).unwrap_or_default();
    let (mut model, source) = match cached {
        Some(m) if m.items.contains_key(&frame) => (m, "cache"),
        _ => (walk(a, bus, &frame, lim).await?, "walk"),
    };
    // Structure repair (cache only) and the details of the nodes we already
    // know we will return run at the same time.
    let (pre, _) = select(&model, &frame, lim);
    let pre_items: Vec<Item> = pre.iter().map(|c| c.item.clone()).collect();
    drop(pre);
    let pre_refs: Vec<&Item> = pre_items.iter().collect();
    let (repaired, pre_details) = if source == "cache" {
        tokio::join!(repair(a, bus, &mut model, &frame, lim), fetch_details(a, bus, &pre_refs))
    } else {
        (0, fetch_details(a, bus, &pre_refs).await)
    };
    let mut known: HashMap<&str, Details> = pre_items.iter().map(|i| i.path.as_str()).zip(pre_details).collect();
    let (chosen, truncated) = select(&model, &frame, lim);
    let missing: Vec<&Item> = chosen.iter().filter(|c| !known.contains_key(c.item.path.as_str())).map(|c| c.item).collect();
    let extra = fetch_details(a, bus, &missing).await;
    let mut extra: HashMap<&str, Details> = missing.iter().map(|i| i.path.as_str()).zip(extra).collect();
    let n_items = model.items.len();
    let objects: Vec<String> = chosen.iter().map(|c| c.item.path.clone()).collect();
    let nodes: Vec<WireNode> = chosen
        .into_iter()
        .map(|c| {
            let d = known.remove(c.item.path.as_str()).or_else(|| extra.remove(c.item.path.as_str())).unwrap_or_default();
            wire_node(c.path, c.item, d)
        })
        .collect();
    if crate::debug() {
        eprintln!(
            "deckhand-helper-linux: get_tree {} nodes (source {source}, {n_items} items, {repaired} repair calls, cache {:.1} ms) in {:.1} ms",
            nodes.len(),
            t_cache.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(Tree { nodes, truncated, source, frame, frame_by_name, frame_name, objects })
}

/// Secure (password) fields showing in the frame: their screen bounds.
pub async fn secure_bounds(a: &A11y, bus: &str, title: &str, bounds: Rect) -> Result<Vec<Rect>> {
    let lim = Limits { max_depth: 64, max_children: 5000, max_nodes: 20000 };
    let cached = model_from_cache(a, bus).await;
    let cands = frame_candidates(a, bus, cached.as_ref()).await?;
    let frame = match_frame(a, bus, &cands, title, bounds).await?;
    let model = match cached {
        // No repair here: indices do not matter, and password fields do not
        // live inside tables/tree views (the only children the cache omits).
        Some(m) if m.items.contains_key(&frame) => m,
        _ => walk(a, bus, &frame, &lim).await?,
    };
    let (chosen, _) = select(&model, &frame, &lim);
    let secure: Vec<&Item> = chosen.iter().map(|c| c.item).filter(|i| i.secure() && i.showing()).collect();
    let rects = join_all(secure.iter().map(|it| extents(a, bus, &it.path))).await;
    Ok(rects.into_iter().flatten().collect())
}

/// Values we need from a property variant.
pub fn value_as_objref(v: OwnedValue) -> Option<ObjRef> {
    let s: zbus::zvariant::Structure = v.try_into().ok()?;
    let f = s.into_fields();
    let mut it = f.into_iter();
    let name: String = it.next()?.try_into().ok()?;
    let path: OwnedObjectPath = it.next()?.try_into().ok()?;
    Some((name, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(path: &str, parent: &str, index: i32, showing: bool) -> Item {
        Item {
            path: path.into(),
            parent: parent.into(),
            index,
            child_count: 0,
            states: if showing { STATE_SHOWING } else { 0 },
            ..Default::default()
        }
    }

    #[test]
    fn preorder_paths_and_limits() {
        let items = vec![
            item("/f", ROOT_PATH, 0, true),
            item("/b", "/f", 1, true),
            item("/a", "/f", 0, true),
            item("/a0", "/a", 0, true),
            item("/hidden", "/f", 2, false),
            item("/h0", "/hidden", 0, true),
        ];
        let m = Model::from_items(items);
        let lim = Limits { max_depth: 64, max_children: 100, max_nodes: 100 };
        let (c, t) = select(&m, "/f", &lim);
        let got: Vec<(&str, Vec<u32>)> = c.iter().map(|c| (c.item.path.as_str(), c.path.clone())).collect();
        assert_eq!(
            got,
            vec![("/f", vec![]), ("/a", vec![0]), ("/a0", vec![0, 0]), ("/b", vec![1]), ("/hidden", vec![2])],
            "children of a non-showing node are not descended into"
        );
        assert!(!t);
        let (c, t) = select(&m, "/f", &Limits { max_depth: 1, max_children: 100, max_nodes: 100 });
        assert_eq!(c.len(), 4);
        assert!(t, "depth cut");
        let (c, t) = select(&m, "/f", &Limits { max_depth: 64, max_children: 1, max_nodes: 100 });
        assert_eq!(c.len(), 3);
        assert!(t, "children cut");
        let (c, t) = select(&m, "/f", &Limits { max_depth: 64, max_children: 100, max_nodes: 2 });
        assert_eq!(c.len(), 2);
        assert!(t, "node cut");
    }

    #[test]
    fn names() {
        assert_eq!(role_name(Role::Button as u32), "push button");
        assert_eq!(role_name(Role::CheckBox as u32), "check box");
        assert_eq!(role_name(9999), "unknown");
        assert_eq!(role_name(Role::PasswordText as u32), "password text");
        assert!(is_secure_role(Role::PasswordText as u32));
        assert_eq!(state_names(STATE_SHOWING), vec!["showing".to_string()]);
        assert_eq!(states_from_words(&[1, 2]), 1 | (2u64 << 32));
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(0.5), "0.5");
    }
}
