//! Reading an application's accessibility tree for one window.
//!
//! Fast path: org.a11y.atspi.Cache.GetItems returns every item of the app
//! (path, parent, index, child count, interfaces, name, role, description,
//! states) in one round trip; bounds, actions, values and ids are then fetched
//! with pipelined concurrent calls on the same connection. Fallback: a
//! breadth-first walk, each level's calls pipelined.

use super::{A11y, ObjRef, CACHE_PATH, COORD_SCREEN, I_ACCESSIBLE, I_ACTION, I_CACHE, I_COMPONENT, I_TEXT, I_VALUE, NULL_PATH, ROOT_PATH};
use crate::error::{Code, Error, Result};
use super::vocabulary;
use crate::wire::messages::{NodeAction, Rect, WireNode};
use crate::wire::vocabulary::Role as NeutralRole;
use atspi::{Role, StateSet};
use futures_util::future::{join_all, FutureExt, LocalBoxFuture, Shared};
use std::sync::Arc;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};

pub const IF_ACTION: u32 = 1 << 1;
pub const IF_COMPONENT: u32 = 1 << 2;
pub const IF_TEXT: u32 = 1 << 3;
pub const IF_EDITABLE: u32 = 1 << 4;
pub const IF_VALUE: u32 = 1 << 5;
pub const IF_SELECTION: u32 = 1 << 6;
pub const IF_TABLE: u32 = 1 << 7;

const I_TABLE: &str = "org.a11y.atspi.Table";
const I_APPLICATION: &str = "org.a11y.atspi.Application";

const STATE_EDITABLE: u64 = 1 << 7;
const STATE_FOCUSABLE: u64 = 1 << 11;
const STATE_MULTI_LINE: u64 = 1 << 17;
const STATE_SHOWING: u64 = 1 << 25;
const STATE_VISIBLE: u64 = 1 << 30;
const STATE_MANAGES_DESCENDANTS: u64 = 1 << 31;

/// A child count above this is not a real list of children to read (Calc's
/// sheet says 2147483647).
const ABSURD_CHILD_COUNT: i32 = 10_000;

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
            I_TABLE => IF_TABLE,
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
    /// On screen as far as the toolkit says: SHOWING, or, for a toolkit that
    /// never sets SHOWING below the frame (`visible_ok`, GTK 4.8), VISIBLE.
    pub fn open(&self, visible_ok: bool) -> bool {
        self.showing() || (visible_ok && self.states & STATE_VISIBLE != 0)
    }
    /// Children that must never be listed with GetChildren: the node manages
    /// its descendants (they are made on demand: LibreOffice Calc's sheet
    /// makes every cell it is asked for, and GetChildren asks for 2^31 of
    /// them: soffice spins at 100% CPU and grows to gigabytes), or claims
    /// more children than any list we would read.
    pub fn huge(&self, max_children: u32) -> bool {
        self.states & STATE_MANAGES_DESCENDANTS != 0 || self.child_count > ABSURD_CHILD_COUNT || self.child_count as i64 > 2 * max_children as i64
    }
    pub fn secure(&self) -> bool {
        is_secure_role(self.role)
    }
}

/// All items known for one application, with ordered children.
pub struct Model {
    pub items: HashMap<String, Item>,
    pub kids: HashMap<String, Vec<String>>,
    /// Parents whose children were listed live (GetChildren, or the visible
    /// part of a huge list): each child's `index` is its index in the parent
    /// (what GetChildAtIndex takes) and is its path component, whatever the
    /// list leaves out (a vanished child, the cells outside the visible
    /// range, a null entry) so that leaving a node out never renumbers its
    /// siblings. Other parents (the cache's lists): the position in `kids`.
    pub indexed: HashSet<String>,
    /// The toolkit never sets SHOWING below the frame: descend VISIBLE nodes.
    pub visible_ok: bool,
    /// Nodes whose extents are empty (GTK 4's hidden stack pages are VISIBLE
    /// with a 0x0 size): not descended into when `visible_ok`.
    pub empty: HashSet<String>,
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
        Model { items, kids, indexed: HashSet::new(), visible_ok: false, empty: HashSet::new() }
    }

    /// Whether `it`, at `depth` below the frame, is descended into.
    pub fn descends(&self, it: &Item, depth: u32) -> bool {
        depth == 0 || (it.open(self.visible_ok) && !(self.visible_ok && self.empty.contains(&it.path)))
    }
}

type CacheItemNew = (ObjRef, ObjRef, ObjRef, i32, i32, Vec<String>, String, u32, String, Vec<u32>);
type CacheItemLegacy = (ObjRef, ObjRef, ObjRef, Vec<ObjRef>, Vec<String>, String, u32, String, Vec<u32>);

/// Cache.GetItems. Err when the app has no cache (not a GTK app, or no event
/// listener registered yet).
///
/// Callers hold a `worker::BulkRead` (see `bulk_read`) while it runs: never
/// while synthetic input is in flight.
pub async fn cache_items(a: &A11y, bus: &str) -> Result<Vec<Item>> {
    let msg = a.call_msg(bus, CACHE_PATH, I_CACHE, "GetItems", &(), CACHE_TIMEOUT).await?;
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

/// Describe one accessible and read its AccessibleId, all calls concurrent.
///
/// Every property is read with its own Properties.Get, never with
/// Properties.GetAll: Qt 5.15's AT-SPI bridge (qspiaccessiblebridge) crashes
/// the application on GetAll(org.a11y.atspi.Accessible) (reported with
/// featherpad), so the helper never sends GetAll to any application. The
/// extra round trips cost nothing noticeable: they are pipelined.
pub async fn describe_with_id(a: &A11y, bus: &str, path: &str, parent: &str, index: i32) -> Result<(Item, String)> {
    let (item, identifier) = tokio::join!(describe(a, bus, path, parent, index), read_identifier(a, bus, path));
    Ok((item?, identifier))
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

/// Longest a Cache.GetItems may take.
const CACHE_TIMEOUT: Duration = Duration::from_secs(5);

/// Cache.GetItems when it may be sent now: not disabled, and no synthetic
/// input in flight (Chromium crashed handling typed keys while it was
/// serialising its whole tree for a bulk read). None: read some other way.
pub async fn bulk_items(a: &A11y, bus: &str) -> Option<Result<Vec<Item>>> {
    // Debug/comparison switch: force the walk.
    if std::env::var("DECKHAND_NO_CACHE").is_ok_and(|v| v == "1") {
        return None;
    }
    let Some(_guard) = crate::ops::worker::BulkRead::begin() else {
        if crate::debug() {
            eprintln!("deckhand-helper-linux: input in flight: no bulk cache read of {bus}");
        }
        return None;
    };
    Some(cache_items(a, bus).await)
}

/// Fetch the app's model: cache first, else `None` (caller walks). The
/// Cache.GetItems sent is announced (`announced_items`): a secure-field
/// search of the same observation may take its answer.
pub async fn model_from_cache(a: &A11y, bus: &str) -> Option<Model> {
    model_of(bus, announced_items(a, bus).await?)
}

/// `model_from_cache`, taking the answer of a Cache.GetItems for `bus` sent
/// at most JOIN_WITHIN ago and still in flight (by a tree read running at the
/// same time: get-app-state asks for its tree and its screenshot together)
/// instead of sending another: the application serialises its whole cache
/// once, not twice (1.4 ms of a GTK 3 app's CPU for 261 items). That answer
/// is as fresh as one sent now: the application answers calls in order.
pub async fn model_from_cache_joined(a: &A11y, bus: &str) -> Option<Model> {
    let flight = FLIGHTS.with(|f| f.borrow().get(bus).filter(|(t, _)| t.elapsed() <= JOIN_WITHIN).map(|(_, s)| s.clone()));
    let items = match flight {
        Some(s) => {
            if crate::debug() {
                eprintln!("deckhand-helper-linux: joined the Cache.GetItems of {bus} in flight");
            }
            s.await?.map(|v| Arc::try_unwrap(v).unwrap_or_else(|v| (*v).clone()))
        }
        None => bulk_items(a, bus).await?,
    };
    model_of(bus, items)
}

fn model_of(bus: &str, items: Result<Vec<Item>>) -> Option<Model> {
    match items {
        Ok(items) => Some(Model::from_items(items)),
        Err(e) => {
            eprintln!("deckhand-helper-linux: no bulk cache for {bus}: {}", e.message);
            None
        }
    }
}

/// A Cache.GetItems in flight that other readers may join.
type ItemsFlight = Shared<LocalBoxFuture<'static, Option<std::result::Result<Arc<Vec<Item>>, Error>>>>;

thread_local! {
    /// Per bus name: the latest announced Cache.GetItems still in flight, and when it was sent.
    static FLIGHTS: std::cell::RefCell<HashMap<String, (std::time::Instant, ItemsFlight)>> = std::cell::RefCell::new(HashMap::new());
}

/// How recently a Cache.GetItems must have been sent for another reader to
/// take its answer.
const JOIN_WITHIN: Duration = Duration::from_millis(20);

/// `bulk_items`, announced in FLIGHTS while in flight.
async fn announced_items(a: &A11y, bus: &str) -> Option<Result<Vec<Item>>> {
    let (a2, bus2) = (a.clone(), bus.to_string());
    let shared = async move { bulk_items(&a2, &bus2).await.map(|r| r.map(Arc::new)) }.boxed_local().shared();
    FLIGHTS.with(|f| {
        let mut f = f.borrow_mut();
        f.retain(|_, (t, _)| t.elapsed() <= JOIN_WITHIN);
        f.insert(bus.to_string(), (std::time::Instant::now(), shared.clone()));
    });
    let r = shared.clone().await;
    FLIGHTS.with(|f| {
        let mut f = f.borrow_mut();
        if f.get(bus).is_some_and(|(_, s)| s.ptr_eq(&shared)) {
            f.remove(bus);
        }
    });
    drop(shared);
    r.map(|r| r.map(|v| Arc::try_unwrap(v).unwrap_or_else(|v| (*v).clone())))
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
    /// The window's screen rectangle: a huge table's visible range is looked
    /// for inside it (Calc's grid reports extents beyond the window).
    pub clip: Option<Rect>,
}

/// Calls `describe` makes per node.
const DESCRIBE_CALLS: u32 = 6;
/// Calls `fetch_details` makes per node, at most.
const DETAIL_CALLS: u32 = 5;

/// Breadth-first walk below `frame`, every level's calls in flight together.
/// `visible_ok`: descend VISIBLE nodes too (see `Model::visible_ok`).
pub async fn walk(a: &A11y, bus: &str, frame: &str, lim: &Limits, visible_ok: bool) -> Result<Model> {
    let root = describe(a, bus, frame, "", 0).await?;
    let mut m = Model::from_items(Vec::new());
    m.visible_ok = visible_ok;
    let mut all = vec![root];
    let mut kids: HashMap<String, Vec<String>> = HashMap::new();
    let mut level: Vec<(usize, u32)> = vec![(0, 0)]; // (index in all, depth)
    let cap = (lim.max_nodes as usize).saturating_mul(2).max(16);
    while !level.is_empty() && all.len() < cap && !a.exhausted() {
        // Which nodes of this level we descend into.
        let mut parents: Vec<(usize, u32)> = level
            .iter()
            .copied()
            .filter(|&(i, d)| {
                let it = &all[i];
                d < lim.max_depth && it.child_count > 0 && m.descends(it, d)
            })
            .collect();
        if visible_ok {
            let paths: Vec<String> = parents.iter().filter(|&&(_, d)| d > 0).map(|&(i, _)| all[i].path.clone()).collect();
            mark_empty(a, bus, &mut m, &paths).await;
            parents.retain(|&(i, d)| m.descends(&all[i], d));
        }
        let lists = join_all(parents.iter().map(|&(i, _)| list_children(a, bus, &all[i], lim))).await;
        let mut next_refs: Vec<(String, String, i32, u32)> = Vec::new();
        for (&(i, d), l) in parents.iter().zip(lists) {
            let Ok((l, _)) = l else { continue };
            let parent = all[i].path.clone();
            m.indexed.insert(parent.clone());
            let mut order = Vec::with_capacity(l.len());
            for (p, idx) in l.into_iter().take(lim.max_children as usize) {
                if p == NULL_PATH {
                    continue;
                }
                order.push(p.clone());
                next_refs.push((p, parent.clone(), idx, d + 1));
            }
            kids.insert(parent, order);
        }
        next_refs.truncate(cap.saturating_sub(all.len()));
        // What the budget still allows (the details of the returned nodes
        // need their share too).
        let afford = (a.remaining() / (DESCRIBE_CALLS + DETAIL_CALLS)) as usize;
        next_refs.truncate(afford);
        let described = join_all(next_refs.iter().map(|(p, parent, idx, _)| describe(a, bus, p, parent, *idx))).await;
        level = Vec::new();
        for ((_, _, _, d), it) in next_refs.iter().zip(described) {
            if let Ok(it) = it {
                all.push(it);
                level.push((all.len() - 1, *d));
            }
        }
    }
    let known: HashSet<String> = all.iter().map(|i| i.path.clone()).collect();
    let (indexed, empty) = (std::mem::take(&mut m.indexed), std::mem::take(&mut m.empty));
    let mut m = Model::from_items(all);
    // The structure is GetChildren's (or the visible range's), not the
    // items' index fields: keep it as read, minus nodes that vanished.
    for (p, mut l) in kids {
        l.retain(|c| known.contains(c));
        m.kids.insert(p, l);
    }
    m.indexed = indexed;
    m.empty = empty;
    m.visible_ok = visible_ok;
    Ok(m)
}

/// GTK 4 (`visible_ok`): which of `paths` have empty extents (a hidden stack
/// page's widgets are VISIBLE, 0x0); those are not descended into.
async fn mark_empty(a: &A11y, bus: &str, m: &mut Model, paths: &[String]) {
    let ext = join_all(paths.iter().map(|p| a.call::<_, (i32, i32, i32, i32)>(bus, p, I_COMPONENT, "GetExtents", &(COORD_SCREEN,)))).await;
    for (p, e) in paths.iter().zip(ext) {
        if let Ok((_, _, w, h)) = e {
            if w <= 0 || h <= 0 {
                m.empty.insert(p.clone());
            }
        }
    }
}

/// The children of `it` we read: (object path, index in parent). All of
/// them (GetChildren: the GetChildAtIndex order) for an ordinary node; for a
/// `huge` one never GetChildren, only the visible part (`visible_children`).
/// The bool says whether the list is such a subset.
async fn list_children(a: &A11y, bus: &str, it: &Item, lim: &Limits) -> Result<(Vec<(String, i32)>, bool)> {
    if it.huge(lim.max_children) {
        return Ok((visible_children(a, bus, it, lim).await, true));
    }
    let l = a.children(bus, &it.path).await?;
    Ok((l.into_iter().enumerate().map(|(i, (_, p))| (p.to_string(), i as i32)).collect(), false))
}

/// The on-screen children of a node whose children must not be listed
/// (`Item::huge`). A table: the cells between the ones at its top-left and
/// bottom-right inner corners (Component.GetAccessibleAtPoint; their
/// IndexInParent gives row and column), row by row, at most
/// min(max_children, max_nodes) cells. Anything else (or a table that
/// cannot be hit-tested): the first max_children indices, GetChildAtIndex
/// each. Every child's index is its own IndexInParent (or the index asked
/// for), the locator path component.
async fn visible_children(a: &A11y, bus: &str, it: &Item, lim: &Limits) -> Vec<(String, i32)> {
    let cap = lim.max_children.min(lim.max_nodes).min(MAX_HUGE_CHILDREN).max(1);
    if it.ifaces & IF_TABLE != 0 {
        if let Some(v) = visible_cells(a, bus, &it.path, cap, lim.clip).await {
            return v;
        }
    }
    // The count live: the cache says 0 for a node that manages its
    // descendants (at-spi2-atk does not look into it).
    let count = a.prop(bus, &it.path, I_ACCESSIBLE, "ChildCount").await.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(it.child_count);
    let n = if count > 0 { cap.min(count as u32) } else { 0 };
    let refs = join_all((0..n).map(|i| async move { a.call::<_, ObjRef>(bus, &it.path, I_ACCESSIBLE, "GetChildAtIndex", &(i as i32,)).await })).await;
    refs.into_iter()
        .enumerate()
        .filter_map(|(i, r)| r.ok().map(|(_, p)| (p.to_string(), i as i32)))
        .filter(|(p, _)| p != NULL_PATH && !p.is_empty())
        .collect()
}

/// Most children read from one huge node per observation. Each costs the
/// app about a dozen calls: a maximised Calc window shows ~1,200 cells, and
/// reading all of them cost soffice ~0.45 s of CPU per observation. 300
/// cells (the top-left of the visible range, row by row) keep it near 0.1 s.
const MAX_HUGE_CHILDREN: u32 = 300;

/// Row and column of the table cell at a screen point.
async fn cell_at(a: &A11y, bus: &str, table: &str, x: i32, y: i32) -> Option<(i32, i32)> {
    let (_, cell): ObjRef = a.call(bus, table, I_COMPONENT, "GetAccessibleAtPoint", &(x, y, COORD_SCREEN)).await.ok()?;
    if cell.as_str() == NULL_PATH || cell.as_str() == table {
        return None;
    }
    let idx: i32 = a.call(bus, cell.as_str(), I_ACCESSIBLE, "GetIndexInParent", &()).await.ok()?;
    let arg = (idx,);
    let (r, c) = tokio::join!(
        a.call::<_, i32>(bus, table, I_TABLE, "GetRowAtIndex", &arg),
        a.call::<_, i32>(bus, table, I_TABLE, "GetColumnAtIndex", &arg),
    );
    let (r, c) = (r.ok()?, c.ok()?);
    (r >= 0 && c >= 0).then_some((r, c))
}

/// The cells of a table's visible range (see `visible_children`).
async fn visible_cells(a: &A11y, bus: &str, table: &str, cap: u32, clip: Option<Rect>) -> Option<Vec<(String, i32)>> {
    let e = extents(a, bus, table).await?;
    let e = match clip {
        Some(w) => e.intersect(&w)?,
        None => e,
    };
    if e.width < 4 || e.height < 4 {
        return None;
    }
    let (x0, y0) = (e.x + 1, e.y + 1);
    let (x1, y1) = (e.x + e.width as i32 - 2, e.y + e.height as i32 - 2);
    let (tl, br) = tokio::join!(cell_at(a, bus, table, x0, y0), cell_at(a, bus, table, x1, y1));
    let (r0, c0) = tl?;
    let (r1, c1) = br.unwrap_or((r0, c0));
    let cells = visible_range(r0, c0, r1, c1, cap);
    let refs = join_all(cells.iter().map(|&(r, c)| async move {
        let (_, cell): ObjRef = a.call(bus, table, I_TABLE, "GetAccessibleAt", &(r, c)).await.ok()?;
        if cell.as_str() == NULL_PATH {
            return None;
        }
        let idx: i32 = a.call(bus, cell.as_str(), I_ACCESSIBLE, "GetIndexInParent", &()).await.ok()?;
        (idx >= 0).then(|| (cell.to_string(), idx))
    }))
    .await;
    let mut out: Vec<(String, i32)> = refs.into_iter().flatten().collect();
    // Merged cells answer for several (row, column) pairs.
    let mut seen = HashSet::new();
    out.retain(|(p, _)| seen.insert(p.clone()));
    Some(out)
}

/// The (row, column) pairs of the range spanned by two corner cells, row by
/// row, at most `cap`.
pub fn visible_range(r0: i32, c0: i32, r1: i32, c1: i32, cap: u32) -> Vec<(i32, i32)> {
    let (ra, rb) = (r0.min(r1), r0.max(r1));
    let (ca, cb) = (c0.min(c1), c0.max(c1));
    let mut out = Vec::new();
    for r in ra..=rb {
        for c in ca..=cb {
            if out.len() >= cap as usize {
                return out;
            }
            out.push((r, c));
        }
    }
    out
}

/// The cache gives every item's attributes in one call, but its structure
/// cannot be trusted for paths: it leaves out the children of objects that
/// manage their descendants (tables, tree views), and its index-in-parent
/// disagrees with GetChildAtIndex for some GTK containers (a window with a
/// header bar, scrolled windows). So every node we descend into is asked for
/// its children (`list_children`: GetChildren, or only the visible part of
/// a huge list, never taking the cache's list for one), all calls of a level
/// in flight together, and the missing ones are described.
async fn repair(a: &A11y, bus: &str, m: &mut Model, frame: &str, lim: &Limits) -> usize {
    // Each round waits on the one before: its calls go ahead of the
    // details already queued (issue 15: behind them, six rounds waited for
    // the whole flood of details, one after the other).
    let a = &a.urgent();
    let mut fixed: HashSet<String> = HashSet::new();
    let mut calls = 0;
    // A round reaches one level further down, and ends the repair when it
    // finds nothing new: as many rounds as the tree may be deep. (Six, as
    // before, left out everything below the sixth level whenever the cache
    // held almost nothing: Firefox ESR started while an assistive client
    // listened answered GetItems with 2 items, and its page, eight levels
    // down, never reached the tree; 2026-12-03.)
    for _round in 0..lim.max_depth.max(6) {
        if a.exhausted() {
            break;
        }
        let (chosen, _) = select(m, frame, lim);
        let mut bad: Vec<Item> = chosen
            .iter()
            .filter(|c| {
                let it = c.item;
                let depth = c.path.len() as u32;
                if fixed.contains(&it.path) || depth >= lim.max_depth || !m.descends(it, depth) {
                    return false;
                }
                // Every node we descend into: the cache's index-in-parent is
                // not always the GetChildAtIndex order (GTK windows with a
                // header bar, scrolled windows), and it omits the children of
                // objects that manage their descendants.
                let kids = m.kids.get(&it.path).map(|v| v.len()).unwrap_or(0);
                it.child_count > 0 || kids > 0 || it.states & STATE_MANAGES_DESCENDANTS != 0
            })
            .map(|c| c.item.clone())
            .collect();
        drop(chosen);
        if m.visible_ok {
            let paths: Vec<String> = bad.iter().filter(|it| it.path != frame).map(|it| it.path.clone()).collect();
            mark_empty(a, bus, m, &paths).await;
            calls += paths.len();
            for p in &paths {
                if m.empty.contains(p) {
                    fixed.insert(p.clone());
                }
            }
            bad.retain(|it| !m.empty.contains(&it.path));
        }
        if bad.is_empty() {
            break;
        }
        calls += bad.len();
        let lists = join_all(bad.iter().map(|it| list_children(a, bus, it, lim))).await;
        let mut missing: Vec<(String, String, i32)> = Vec::new();
        for (it, l) in bad.iter().zip(lists) {
            let p = &it.path;
            fixed.insert(p.clone());
            let Ok((l, sparse)) = l else { continue };
            m.indexed.insert(p.clone());
            if !sparse {
                if let Some(it) = m.items.get_mut(p) {
                    it.child_count = it.child_count.max(l.len() as i32);
                }
            }
            let mut order = Vec::with_capacity(l.len());
            for (c, idx) in l.into_iter() {
                if c == NULL_PATH {
                    continue;
                }
                match m.items.get_mut(&c) {
                    Some(ci) => {
                        ci.index = idx;
                        ci.parent = p.clone();
                    }
                    None => missing.push((c.clone(), p.clone(), idx)),
                }
                order.push(c);
            }
            m.kids.insert(p.clone(), order);
        }
        let afford = (a.remaining() / (DESCRIBE_CALLS + DETAIL_CALLS)) as usize;
        let unread = missing.split_off(afford.min(missing.len()));
        calls += missing.len();
        let described = join_all(missing.iter().map(|(c, p, i)| describe(a, bus, c, p, *i))).await;
        let mut gone: Vec<(String, String)> = unread.into_iter().map(|(c, p, _)| (c, p)).collect();
        for ((c, p, _), d) in missing.iter().zip(described) {
            match d {
                Ok(it) => {
                    m.items.insert(c.clone(), it);
                }
                Err(_) => gone.push((c.clone(), p.clone())),
            }
        }
        // Gone meanwhile (or left unread for want of budget): dropped from
        // its parent's list (the others keep their index: `indexed`).
        for (c, p) in gone {
            if let Some(k) = m.kids.get_mut(&p) {
                k.retain(|x| *x != c);
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
        let descend = m.descends(it, depth);
        if descend && !kids.is_empty() {
            if depth >= lim.max_depth {
                truncated = true;
            } else {
                if kids.len() > lim.max_children as usize {
                    truncated = true;
                }
                // The path component is the index among the parent's
                // children (what GetChildAtIndex takes): read live for
                // `indexed` parents, else the position in the cache's list.
                let live = m.indexed.contains(&it.path);
                for (pos, k) in kids.iter().enumerate().take(lim.max_children as usize).rev() {
                    if let Some(ki) = m.items.get(k) {
                        let component = if live && ki.index >= 0 { ki.index as u32 } else { pos as u32 };
                        let mut p = path.clone();
                        p.push(component);
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

/// Text without U+FFFC, the placeholder toolkits put where a child object
/// (a link, a field) sits in its parent's text: the child is a node of its
/// own, and a value of placeholders says nothing.
pub fn strip_embedded(s: String) -> String {
    if s.contains('\u{FFFC}') {
        s.replace('\u{FFFC}', "")
    } else {
        s
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
        // GetText(0, CharacterCount), never GetText(0, -1): Chromium crashes
        // on "-1 = to the end" for an entry whose text changes meanwhile
        // (checked live: typing into a web page's text field while reading
        // GetText(0, -1) in a loop killed it every time; with the count
        // read first it stayed up). The count also bounds what we pull.
        let count = a.prop(&bus, &it.path, I_TEXT, "CharacterCount").await.ok().and_then(|v| i32::try_from(v).ok())?;
        let end = count.clamp(0, MAX_VALUE_CHARS as i32);
        if end == 0 {
            return Some(String::new());
        }
        if let Ok(t) = a.call::<_, String>(bus, &it.path, I_TEXT, "GetText", &(0i32, end)).await {
            return Some(cap_chars(strip_embedded(t)));
        }
    }
    None
}

/// The native names of a node's advertised actions, in order: each one's
/// untranslated name (Action.GetName: "click", what the neutral name is
/// read from and what `secondary` takes), else the localized one from
/// GetActions (GTK's "Click"); actions with neither are left out.
pub async fn read_actions(a: &A11y, bus: &str, it: &Item) -> Vec<String> {
    if it.ifaces & IF_ACTION == 0 {
        return Vec::new();
    }
    match super::actions::advertised_for_tree(a, bus, &it.path).await {
        Ok(v) => native_action_names(v),
        Err(_) => Vec::new(),
    }
}

pub fn native_action_names(v: Vec<super::actions::ActionName>) -> Vec<String> {
    v.into_iter().map(|n| n.name).filter(|n| !n.trim().is_empty()).collect()
}

pub async fn read_identifier(a: &A11y, bus: &str, path: &str) -> String {
    match a.prop(bus, path, I_ACCESSIBLE, "AccessibleId").await {
        Ok(v) => String::try_from(v).unwrap_or_default(),
        Err(_) => String::new(),
    }
}

async fn read_bounds(a: &A11y, bus: &str, it: &Item, view: View) -> Option<Rect> {
    if it.ifaces & IF_COMPONENT == 0 || !it.open(view.visible_ok) {
        return None;
    }
    let r = extents(a, bus, &it.path).await?;
    Some(Rect::new(r.x.saturating_add(view.offset.0), r.y.saturating_add(view.offset.1), r.width, r.height))
}

/// What the cache does not carry: fetched per node, pipelined.
#[derive(Debug, Clone, Default)]
pub struct Details {
    pub bounds: Option<Rect>,
    pub value: Option<String>,
    /// Native (untranslated) action names (`read_actions`).
    pub actions: Vec<String>,
    pub identifier: String,
}

/// Bounds, values, actions and ids of many items, all calls in flight at once.
pub async fn fetch_details(a: &A11y, bus: &str, items: &[&Item]) -> Vec<Details> {
    fetch_details_in(a, bus, items, View::default()).await
}

/// `fetch_details`, reading the answers as `view` says.
pub async fn fetch_details_in(a: &A11y, bus: &str, items: &[&Item], view: View) -> Vec<Details> {
    let (bounds, values, actions, ids) = tokio::join!(
        join_all(items.iter().map(|it| read_bounds(a, bus, it, view))),
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

/// The neutral role of an item (`vocabulary::role` of its AT-SPI role and states).
pub fn neutral_role(it: &Item) -> NeutralRole {
    vocabulary::role(role_name(it.role), it.states & STATE_MULTI_LINE != 0, it.states & STATE_EDITABLE != 0)
}

/// The wire node of an item: neutral role, states and action names
/// (`atspi::vocabulary`) with the AT-SPI role and action names beside them.
/// A secure item (password text) is a secure_text_field with the `secure`
/// state and `secure: true`, and never a value.
pub fn wire_node(path: Vec<u32>, it: &Item, d: Details) -> WireNode {
    let native_role = role_name(it.role);
    let secure = it.secure();
    let native_states = state_names(it.states);
    WireNode {
        path,
        role: neutral_role(it),
        native_role: native_role.to_string(),
        name: it.name.clone(),
        description: it.description.clone(),
        value: if secure { None } else { d.value },
        states: vocabulary::states(native_states.iter().map(String::as_str), secure),
        bounds: d.bounds,
        actions: d.actions.into_iter().map(|n| NodeAction { name: vocabulary::action(&n, native_role), native: n }).collect(),
        identifier: d.identifier,
        secure,
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
    /// Calls made into the application (its budget's count).
    pub calls: u32,
    /// How the toolkit's answers were read.
    pub view: View,
}

/// How one application's answers are to be read (per toolkit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct View {
    /// The toolkit never sets SHOWING below the frame: VISIBLE counts.
    pub visible_ok: bool,
    /// Added to every extents the toolkit gives for COORD_SCREEN (GTK 4.8
    /// answers relative to its window): (0, 0) for toolkits that do it right.
    pub offset: (i32, i32),
}

/// Toolkits that never set SHOWING below the frame: GTK 4 (4.8 checked live:
/// the frame is SHOWING and VISIBLE, every descendant only VISIBLE).
pub fn visible_suffices(toolkit: &str, version: &str) -> bool {
    let major = version.split('.').next().and_then(|v| v.trim().parse::<u32>().ok()).unwrap_or(0);
    toolkit.eq_ignore_ascii_case("GTK") && major >= 4
}

/// The application's toolkit name and version (org.a11y.atspi.Application
/// properties, each read with Get: see `describe_with_id` on GetAll).
///
/// Read once per bus name: a process's toolkit does not change, and a bus
/// daemon never gives a unique name to another connection, so the answer
/// stays true for as long as the name exists (an answer with either part
/// missing is not kept: asked again next time).
pub async fn toolkit(a: &A11y, bus: &str) -> (String, String) {
    if let Some(tk) = toolkit_known(bus) {
        return tk;
    }
    let (n, v) = tokio::join!(
        a.prop_string(bus, ROOT_PATH, I_APPLICATION, "ToolkitName"),
        a.prop_string(bus, ROOT_PATH, I_APPLICATION, "Version"),
    );
    let tk = (n.unwrap_or_default(), v.unwrap_or_default());
    if !tk.0.is_empty() && !tk.1.is_empty() {
        remember_toolkit(bus, &tk);
    }
    tk
}

/// Toolkits read per bus name (`toolkit`), at most MAX_TOOLKITS.
static TOOLKITS: std::sync::Mutex<Option<HashMap<String, (String, String)>>> = std::sync::Mutex::new(None);
const MAX_TOOLKITS: usize = 256;

/// Forget the toolkits read (a new accessibility bus connection: bus names
/// start over with a new bus daemon).
pub fn forget_toolkits() {
    if let Some(m) = TOOLKITS.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
        m.clear();
    }
}

fn toolkit_known(bus: &str) -> Option<(String, String)> {
    TOOLKITS.lock().unwrap_or_else(|p| p.into_inner()).as_ref()?.get(bus).cloned()
}

fn remember_toolkit(bus: &str, tk: &(String, String)) {
    let mut g = TOOLKITS.lock().unwrap_or_else(|p| p.into_inner());
    let m = g.get_or_insert_with(HashMap::new);
    if m.len() >= MAX_TOOLKITS {
        m.clear();
    }
    m.insert(bus.to_string(), tk.clone());
}

/// What to add to a toolkit's "screen" extents: GTK 4.8 gives extents
/// relative to its window even for COORD_SCREEN, detected by the frame's
/// origin being (0, 0) while the X window is elsewhere. The frame sits
/// centred in the X window (the client-side decoration's margin, equal on
/// every side without a compositor: 5 px, checked live), so the offset is
/// the window's origin plus half the size difference.
pub fn window_relative_offset(frame: Option<Rect>, window: Rect) -> (i32, i32) {
    let Some(f) = frame else { return (0, 0) };
    let at_origin = f.x.abs() <= 1 && f.y.abs() <= 1;
    let window_elsewhere = window.x.abs() > 1 || window.y.abs() > 1;
    // A frame at (0, 0) larger than the client window is a decorated frame
    // really at the screen's origin (a maximised window below a title bar:
    // LibreOffice's frame is 1920x1080 for a 1920x1061 client at y 19).
    let inside = f.width <= window.width && f.height <= window.height;
    if !at_origin || !window_elsewhere || !inside {
        return (0, 0);
    }
    let mx = ((window.width as i64 - f.width as i64) / 2).clamp(0, 64) as i32;
    let my = ((window.height as i64 - f.height as i64) / 2).clamp(0, 64) as i32;
    (window.x - f.x + mx, window.y - f.y + my)
}

/// How to read `bus`'s answers for the window at `window` whose frame is
/// `frame` (3 calls).
pub async fn view_of(a: &A11y, bus: &str, frame: &str, window: Rect) -> View {
    view_placed(a, bus, frame, window, None).await
}

/// `view_of` for a window of either backend: `wayland_content` is a native
/// Wayland window's content on the screen (its extents are surface-relative:
/// the offset is the surface origin, `surface_offset`), None on X11.
pub async fn view_placed(a: &A11y, bus: &str, frame: &str, window: Rect, wayland_content: Option<Rect>) -> View {
    let ((tk, ver), fe) = tokio::join!(toolkit(a, bus), extents(a, bus, frame));
    let offset = match wayland_content {
        None => window_relative_offset(fe, window),
        Some(content) => surface_offset(a, bus, frame, fe, content).await,
    };
    View { visible_ok: visible_suffices(&tk, &ver), offset }
}

/// Where a native Wayland window's surface has its origin on the screen
/// (`wayland::surface_origin`), its shadow margins read from the frame's
/// extents (`frame_extents`) and its children's.
pub async fn surface_offset(a: &A11y, bus: &str, frame: &str, frame_extents: Option<Rect>, content: Rect) -> (i32, i32) {
    let kids = a.children(bus, frame).await.unwrap_or_default();
    let kid_extents: Vec<Option<Rect>> = join_all(kids.iter().map(|(b, p)| extents(a, b, p.as_str()))).await;
    let geometry = match frame_extents {
        Some(f) if f.width > content.width || f.height > content.height => geometry_box(a, &kids, &kid_extents, f, content).await,
        _ => None,
    };
    let shown: Vec<Rect> = kid_extents.into_iter().flatten().collect();
    crate::wayland::surface_origin(content, frame_extents, &shown, geometry)
}

/// Levels below the frame `geometry_box` looks through, and nodes per level.
const GEOMETRY_DEPTH: usize = 3;
const GEOMETRY_WIDTH: usize = 64;

/// The node that is the window's geometry inside a surface with shadow
/// margins: a node of exactly the content's size, found among the frame's
/// children or inside the full-surface wrappers below it (Chromium on
/// Wayland: frame 1936x1073 > panel 1936x1073 > panel 1936x1073 > panel at
/// (10, 10) 1916x1053, its window 1916x1053; the wrappers start at 0, so
/// the children's start alone said no margin and every bound was 10 px off).
/// Bounded: three levels, 64 nodes a level, only wrappers descended into.
async fn geometry_box(a: &A11y, kids: &[ObjRef], kid_extents: &[Option<Rect>], frame: Rect, content: Rect) -> Option<Rect> {
    let mut level: Vec<(ObjRef, Option<Rect>)> = kids.iter().cloned().zip(kid_extents.iter().copied()).take(GEOMETRY_WIDTH).collect();
    for depth in 0..GEOMETRY_DEPTH {
        if let Some(r) = level.iter().filter_map(|(_, r)| *r).find(|r| r.width == content.width && r.height == content.height) {
            return Some(r);
        }
        if depth + 1 == GEOMETRY_DEPTH {
            break;
        }
        let wrappers: Vec<&ObjRef> = level.iter().filter(|(_, r)| *r == Some(frame)).map(|(o, _)| o).collect();
        if wrappers.is_empty() {
            break;
        }
        let below: Vec<ObjRef> = join_all(wrappers.iter().map(|(b, p)| a.children(b, p.as_str()))).await.into_iter().flat_map(|r| r.unwrap_or_default()).take(GEOMETRY_WIDTH).collect();
        let ext = join_all(below.iter().map(|(b, p)| extents(a, b, p.as_str()))).await;
        level = below.into_iter().zip(ext).collect();
    }
    None
}

/// Nodes left out of a tree as noise, though read: a closed menu's items
/// (under a menu that is not open), unnamed leaf fillers and panels that do
/// nothing, empty table cells and rows. Never the frame, a secure field,
/// anything focusable, named, with a value or an action, or with children.
/// Leaving a node out never renumbers its siblings (paths are indices).
pub fn is_noise(it: &Item, parent: Option<&Item>, n: &WireNode, visible_ok: bool) -> bool {
    if n.path.is_empty() || it.secure() {
        return false;
    }
    // GTK 4 (no SHOWING; VISIBLE counts) hides what it does not lay out with
    // a 0x0 allocation (a notebook's unused scroll arrows, stack pages): not
    // on screen, nothing to see or point at.
    if visible_ok && n.bounds.is_some_and(|b| b.width == 0 && b.height == 0) {
        return true;
    }
    let role = Role::try_from(it.role).ok();
    // A closed menu's items (they have actions, but are not on screen: the
    // menu must be opened first, and its items are read then), and closed
    // popup menus themselves (Qt's under each menu bar item, Firefox's
    // context menus below its frame).
    let menuish = matches!(role, Some(Role::Menu | Role::MenuItem | Role::CheckMenuItem | Role::RadioMenuItem | Role::TearoffMenuItem | Role::Separator));
    let in_menu = parent.is_some_and(|p| Role::try_from(p.role).is_ok_and(|r| matches!(r, Role::Menu | Role::PopupMenu)));
    if !it.open(visible_ok) && ((menuish && in_menu) || matches!(role, Some(Role::PopupMenu)) || (role == Some(Role::Menu) && n.name.trim().is_empty())) {
        return true;
    }
    if it.states & STATE_FOCUSABLE != 0 || !n.actions.is_empty() {
        return false;
    }
    let empty = n.name.trim().is_empty() && n.description.trim().is_empty() && n.value.as_deref().is_none_or(|v| v.trim().is_empty());
    if !empty || it.child_count > 0 {
        return false;
    }
    matches!(role, Some(Role::Filler | Role::Panel | Role::Unknown | Role::RedundantObject | Role::TableCell | Role::TableRow))
}

/// Whether `is_noise` leaves `it` out whatever its details (bounds, value,
/// actions, id) turn out to be, so they need not be read (issue 15: a
/// GetExtents costs a GTK 3 app an X round trip, ~70 us of its CPU): it
/// has neither actions nor a value to read (no Action interface, no Value,
/// no text that is a value), so its details are known to be empty but for
/// its bounds, and bounds only ever make a node noise (GTK 4's 0x0 rule).
/// Judged without the parent (the closed-menu rule that needs it is left to
/// `is_noise`, with the details read): a parent only adds noise.
pub fn certain_noise(it: &Item, is_frame: bool, visible_ok: bool) -> bool {
    if is_frame || it.secure() {
        return false;
    }
    if it.ifaces & (IF_ACTION | IF_VALUE) != 0 || (it.ifaces & IF_TEXT != 0 && text_is_value(it.role, it.ifaces)) {
        return false;
    }
    is_noise(it, None, &wire_node(vec![0], it, Details::default()), visible_ok)
}

/// Locate the app's frame for an X window and read its subtree. Every call
/// goes through `a`'s budget: when it runs out, the tree read so far is
/// returned, truncated.
#[cfg(test)]
pub async fn read_tree(a: &A11y, bus: &str, title: &str, bounds: Rect, lim: &Limits) -> Result<Tree> {
    read_tree_placed(a, bus, title, bounds, lim, None).await
}

/// `read_tree` for a native Wayland window: `bounds` is the window in the
/// app's own (surface-relative) coordinates, used to match the frame;
/// `wayland_content` the window's content on the screen (from the
/// compositor). Extents are moved to the screen by the surface's origin
/// (`wayland::surface_origin`: the content origin less the client-side
/// shadow margins read from the frame and its children).
pub async fn read_tree_placed(a: &A11y, bus: &str, title: &str, bounds: Rect, lim: &Limits, wayland_content: Option<Rect>) -> Result<Tree> {
    let t0 = std::time::Instant::now();
    let cached = model_from_cache(a, bus).await;
    let t_cache = t0.elapsed();
    let cands = frame_candidates(a, bus, cached.as_ref()).await?;
    let (frame, frame_by_name) = match_frame_how(a, bus, &cands, title, bounds).await?;
    let frame_name = cands.iter().find(|(p, _)| *p == frame).map(|(_, n)| n.clone()).unwrap_or_default();
    // How the toolkit's answers are read (`view_of`): whether VISIBLE stands
    // for SHOWING is needed now (its name and version, read once per
    // application); the frame's extents (GTK 4.8's window-relative offset)
    // only for the bounds, so they are read along with the details and the
    // bounds moved afterwards: one round trip fewer before the details.
    let (tk, ver) = toolkit(a, bus).await;
    let visible_ok = visible_suffices(&tk, &ver);
    let raw = View { visible_ok, offset: (0, 0) };
    let frame_extents = extents(a, bus, &frame);
    let (mut model, source) = match cached {
        Some(mut m) if m.items.contains_key(&frame) => {
            m.visible_ok = visible_ok;
            (m, "cache")
        }
        _ => (walk(a, bus, &frame, lim, visible_ok).await?, "walk"),
    };
    // Structure repair (cache only) and the details of the nodes we already
    // know we will return run at the same time.
    let (pre, _) = select(&model, &frame, lim);
    let pre_items: Vec<Item> = pre.iter().filter(|c| !certain_noise(c.item, c.path.is_empty(), visible_ok)).map(|c| c.item.clone()).collect();
    drop(pre);
    let pre_refs: Vec<&Item> = pre_items.iter().collect();
    let phase = async {
        if source == "cache" {
            tokio::join!(repair(a, bus, &mut model, &frame, lim), fetch_details_in(a, bus, &pre_refs, raw))
        } else {
            (0, fetch_details_in(a, bus, &pre_refs, raw).await)
        }
    };
    let ((repaired, pre_details), frame_extents) = tokio::join!(phase, frame_extents);
    let offset = match wayland_content {
        None => window_relative_offset(frame_extents, bounds),
        Some(content) => surface_offset(a, bus, &frame, frame_extents, content).await,
    };
    let view = View { visible_ok, offset };
    let mut known: HashMap<&str, Details> = pre_items.iter().map(|i| i.path.as_str()).zip(pre_details).collect();
    let (mut chosen, mut truncated) = select(&model, &frame, lim);
    // The nodes whose details the budget still allows (a pre-order prefix:
    // every returned node's parent is returned).
    // Nodes left out as noise whatever their details say are not asked
    // for any (`certain_noise`: judged on the repaired structure).
    let left_out = |c: &Chosen| certain_noise(c.item, c.path.is_empty(), visible_ok);
    let afford = (a.remaining() / DETAIL_CALLS) as usize;
    let mut need = 0usize;
    if let Some(cut) = chosen.iter().position(|c| {
        if !known.contains_key(c.item.path.as_str()) && !left_out(c) {
            need += 1;
        }
        need > afford
    }) {
        chosen.truncate(cut);
        truncated = true;
    }
    let missing: Vec<&Item> = chosen.iter().filter(|c| !known.contains_key(c.item.path.as_str()) && !left_out(c)).map(|c| c.item).collect();
    let extra = fetch_details_in(a, bus, &missing, raw).await;
    let mut extra: HashMap<&str, Details> = missing.iter().map(|i| i.path.as_str()).zip(extra).collect();
    let n_items = model.items.len();
    let mut objects: Vec<String> = Vec::with_capacity(chosen.len());
    let mut nodes: Vec<WireNode> = Vec::with_capacity(chosen.len());
    let mut noise = 0usize;
    for c in chosen {
        if left_out(&c) {
            noise += 1;
            continue;
        }
        let mut d = known.remove(c.item.path.as_str()).or_else(|| extra.remove(c.item.path.as_str())).unwrap_or_default();
        // Read as the toolkit gives them (`raw`): moved to the screen now.
        d.bounds = d.bounds.map(|r| Rect::new(r.x.saturating_add(view.offset.0), r.y.saturating_add(view.offset.1), r.width, r.height));
        let n = wire_node(c.path, c.item, d);
        if is_noise(c.item, model.items.get(&c.item.parent), &n, view.visible_ok) {
            noise += 1;
            continue;
        }
        objects.push(c.item.path.clone());
        nodes.push(n);
    }
    if a.exhausted() {
        truncated = true;
    }
    if crate::debug() {
        eprintln!(
            "deckhand-helper-linux: get_tree {} nodes ({noise} noise left out; source {source}{}, {n_items} items, {repaired} repair calls, {} calls, cache {:.1} ms, {view:?}) in {:.1} ms",
            nodes.len(),
            if a.is_direct(bus) { " over a direct connection" } else { "" },
            a.calls(),
            t_cache.as_secs_f64() * 1e3,
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(Tree { nodes, truncated, source, frame, frame_by_name, frame_name, objects, calls: a.calls(), view })
}

/// Secure (password) fields showing in `frame` (matched to the window at
/// `bounds`): their screen bounds. `cached`: the application's cache as
/// already read (`model_from_cache`); None: none, then the frame is walked.
pub async fn secure_bounds_in(a: &A11y, bus: &str, cached: Option<Model>, frame: &str, bounds: Rect) -> Result<Vec<Rect>> {
    let lim = Limits { max_depth: 64, max_children: 5000, max_nodes: 20000, clip: None };
    let frame = frame.to_string();
    // Whether VISIBLE stands for SHOWING (the toolkit: read once per
    // application) decides the walk; the frame's extents (`view_of`'s
    // offset) only matter for fields found, so they are read only then.
    let (tk, ver) = toolkit(a, bus).await;
    let visible_ok = visible_suffices(&tk, &ver);
    let model = match cached {
        // No repair here: indices do not matter, and password fields do not
        // live inside tables/tree views (the only children the cache omits).
        Some(mut m) if m.items.contains_key(&frame) => {
            m.visible_ok = visible_ok;
            m
        }
        _ => walk(a, bus, &frame, &lim, visible_ok).await?,
    };
    let (chosen, _) = select(&model, &frame, &lim);
    let secure: Vec<&Item> = chosen.iter().map(|c| c.item).filter(|i| i.secure() && i.open(visible_ok)).collect();
    if secure.is_empty() {
        return Ok(Vec::new());
    }
    let view = view_of(a, bus, &frame, bounds).await;
    let rects = join_all(secure.iter().map(|it| read_bounds(a, bus, it, view))).await;
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
        let lim = Limits { max_depth: 64, max_children: 100, max_nodes: 100, clip: None };
        let (c, t) = select(&m, "/f", &lim);
        let got: Vec<(&str, Vec<u32>)> = c.iter().map(|c| (c.item.path.as_str(), c.path.clone())).collect();
        assert_eq!(
            got,
            vec![("/f", vec![]), ("/a", vec![0]), ("/a0", vec![0, 0]), ("/b", vec![1]), ("/hidden", vec![2])],
            "children of a non-showing node are not descended into"
        );
        assert!(!t);
        let (c, t) = select(&m, "/f", &Limits { max_depth: 1, max_children: 100, max_nodes: 100, clip: None });
        assert_eq!(c.len(), 4);
        assert!(t, "depth cut");
        let (c, t) = select(&m, "/f", &Limits { max_depth: 64, max_children: 1, max_nodes: 100, clip: None });
        assert_eq!(c.len(), 3);
        assert!(t, "children cut");
        let (c, t) = select(&m, "/f", &Limits { max_depth: 64, max_children: 100, max_nodes: 2, clip: None });
        assert_eq!(c.len(), 2);
        assert!(t, "node cut");
    }

    #[test]
    fn gtk4_descends_visible_but_not_empty_or_hidden() {
        let vis = |path: &str, parent: &str, index: i32| Item { states: STATE_VISIBLE, child_count: 1, ..item(path, parent, index, false) };
        let items = vec![
            Item { states: STATE_SHOWING | STATE_VISIBLE, ..item("/f", ROOT_PATH, 0, true) },
            vis("/page1", "/f", 0),
            vis("/b1", "/page1", 0),
            vis("/page2", "/f", 1),
            vis("/b2", "/page2", 0),
            item("/closed", "/f", 2, false),
            item("/c0", "/closed", 0, false),
        ];
        let mut m = Model::from_items(items.clone());
        let lim = Limits { max_depth: 64, max_children: 100, max_nodes: 100, clip: None };
        let paths = |m: &Model| select(m, "/f", &lim).0.iter().map(|c| c.item.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(&m), ["/f", "/page1", "/page2", "/closed"], "GTK 3 rule: only SHOWING nodes are descended");
        m.visible_ok = true;
        m.empty.insert("/page2".into());
        assert_eq!(paths(&m), ["/f", "/page1", "/b1", "/page2", "/closed"], "GTK 4: VISIBLE with a size; never a node without VISIBLE");
        // The same VISIBLE-only nodes under a toolkit that sets SHOWING: not descended.
        let m = Model::from_items(items);
        assert!(!m.descends(&m.items["/page1"], 1));
    }

    #[test]
    fn indexed_parents_keep_indices() {
        // A huge table whose visible cells are 16385 and 16386.
        let items = vec![
            Item { states: STATE_SHOWING | STATE_MANAGES_DESCENDANTS, child_count: i32::MAX, ..item("/f", ROOT_PATH, 0, true) },
            item("/b2", "/f", 16385, true),
            item("/c2", "/f", 16386, true),
        ];
        let mut m = Model::from_items(items);
        m.indexed.insert("/f".into());
        let lim = Limits { max_depth: 64, max_children: 100, max_nodes: 100, clip: None };
        let got: Vec<Vec<u32>> = select(&m, "/f", &lim).0.iter().map(|c| c.path.clone()).collect();
        assert_eq!(got, vec![vec![], vec![16385], vec![16386]]);
        assert!(m.items["/f"].huge(100));
        assert!(Item { child_count: 201, ..Default::default() }.huge(100));
        assert!(Item { child_count: 10_001, ..Default::default() }.huge(1_000_000));
        assert!(!Item { child_count: 200, ..Default::default() }.huge(100));
    }

    #[test]
    fn visible_cell_range() {
        assert_eq!(visible_range(0, 0, 1, 1, 100), vec![(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(visible_range(5, 2, 5, 2, 100), vec![(5, 2)]);
        assert_eq!(visible_range(3, 3, 2, 2, 100), vec![(2, 2), (2, 3), (3, 2), (3, 3)], "corners in any order");
        assert_eq!(visible_range(0, 0, 46, 22, 1000).len(), 1000, "capped");
    }

    #[test]
    fn toolkit_rules() {
        assert!(visible_suffices("GTK", "4.8.3"));
        assert!(!visible_suffices("GTK", "3.24.38"));
        assert!(!visible_suffices("Qt", "5.15.8"));
        assert!(!visible_suffices("Chromium", "120"));
        assert!(!visible_suffices("GTK", ""));
    }

    #[test]
    fn window_relative_extents() {
        // GTK 4.8: frame at (0, 0), 5 px CSD margin, window at (122, 101).
        let w = Rect::new(122, 101, 1676, 878);
        assert_eq!(window_relative_offset(Some(Rect::new(0, 0, 1666, 868)), w), (127, 106));
        // A toolkit giving screen coordinates: no offset.
        assert_eq!(window_relative_offset(Some(Rect::new(117, 78, 1686, 901)), w), (0, 0));
        // A decorated frame really at the origin (larger than its client).
        assert_eq!(window_relative_offset(Some(Rect::new(0, 0, 1920, 1080)), Rect::new(0, 19, 1920, 1061)), (0, 0));
        // Window at the origin: nothing to tell, nothing to add.
        assert_eq!(window_relative_offset(Some(Rect::new(0, 0, 800, 600)), Rect::new(0, 0, 800, 600)), (0, 0));
        assert_eq!(window_relative_offset(None, w), (0, 0));
    }

    #[test]
    fn noise() {
        let node = |path: Vec<u32>, name: &str, actions: &[&str]| WireNode {
            path,
            role: NeutralRole::Other,
            native_role: String::new(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: vec![],
            bounds: None,
            actions: actions.iter().map(|s| NodeAction { name: vocabulary::action(s, ""), native: s.to_string() }).collect(),
            identifier: String::new(),
            secure: false,
            child_count: 0,
        };
        let it = |role: Role, states: u64, child_count: i32| Item { role: role as u32, states, child_count, ..Default::default() };
        let menu = it(Role::Menu, STATE_SHOWING, 3);
        // A closed menu's item goes, even with an action; an open one stays.
        assert!(is_noise(&it(Role::MenuItem, 0, 0), Some(&menu), &node(vec![0, 1], "Open", &["click"]), false));
        assert!(!is_noise(&it(Role::MenuItem, STATE_SHOWING, 0), Some(&menu), &node(vec![0, 1], "Open", &["click"]), false));
        // An unnamed leaf filler/panel/cell goes; named, acting, parents stay.
        assert!(is_noise(&it(Role::Filler, STATE_SHOWING, 0), None, &node(vec![0], "", &[]), false));
        assert!(is_noise(&it(Role::TableCell, STATE_SHOWING, 0), None, &node(vec![0], "", &[]), false));
        assert!(!is_noise(&it(Role::Filler, STATE_SHOWING, 0), None, &node(vec![0], "Status", &[]), false));
        assert!(!is_noise(&it(Role::Panel, STATE_SHOWING, 0), None, &node(vec![0], "", &["click"]), false));
        assert!(!is_noise(&it(Role::Panel, STATE_SHOWING, 2), None, &node(vec![0], "", &[]), false));
        assert!(!is_noise(&it(Role::Panel, STATE_SHOWING | STATE_FOCUSABLE, 0), None, &node(vec![0], "", &[]), false));
        assert!(!is_noise(&it(Role::Button, STATE_SHOWING, 0), None, &node(vec![0], "", &[]), false));
        // Never the frame.
        assert!(!is_noise(&it(Role::Filler, STATE_SHOWING, 0), None, &node(vec![], "", &[]), false));
        // Closed popup menus and unnamed closed menus anywhere; a menu bar's
        // named menu stays (showing).
        assert!(is_noise(&it(Role::PopupMenu, 0, 3), None, &node(vec![0], "", &[]), false));
        assert!(is_noise(&it(Role::Menu, 0, 3), None, &node(vec![0], "", &[]), false));
        assert!(!is_noise(&menu, None, &node(vec![0], "File", &["click"]), false));
        // GTK 4: a visible button laid out at 0x0 is hidden; with a size it is kept.
        let mut zero = node(vec![0], "Previous tab", &["click"]);
        zero.bounds = Some(Rect::new(793, 291, 0, 0));
        assert!(is_noise(&it(Role::Button, 0, 0), None, &zero, true));
        assert!(!is_noise(&it(Role::Button, 0, 0), None, &zero, false), "only where VISIBLE stands for SHOWING");
        zero.bounds = Some(Rect::new(793, 291, 20, 20));
        assert!(!is_noise(&it(Role::Button, 0, 0), None, &zero, true));
        assert_eq!(strip_embedded("Name \u{FFFC}".into()), "Name ");
    }

    #[test]
    fn certain_noise_needs_no_details() {
        let it = |role: Role, states: u64, child_count: i32, ifaces: u32| Item { role: role as u32, states, child_count, ifaces, ..Default::default() };
        // An unnamed leaf filler without actions or a value: noise whatever its bounds.
        let filler = it(Role::Filler, STATE_SHOWING, 0, IF_COMPONENT);
        assert!(certain_noise(&filler, false, false));
        assert!(!certain_noise(&filler, true, false), "never the frame");
        // Details could keep it: an Action interface (its actions), a Value, a text value.
        assert!(!certain_noise(&it(Role::Filler, STATE_SHOWING, 0, IF_COMPONENT | IF_ACTION), false, false));
        assert!(!certain_noise(&it(Role::Panel, STATE_SHOWING, 0, IF_VALUE), false, false));
        assert!(!certain_noise(&it(Role::TableCell, STATE_SHOWING, 0, IF_TEXT | IF_EDITABLE), false, false));
        // Not noise anyway: named, with children, focusable, a button, secure.
        assert!(!certain_noise(&Item { name: "Status".into(), ..filler.clone() }, false, false));
        assert!(!certain_noise(&it(Role::Filler, STATE_SHOWING, 2, 0), false, false));
        assert!(!certain_noise(&it(Role::Panel, STATE_SHOWING | STATE_FOCUSABLE, 0, 0), false, false));
        assert!(!certain_noise(&it(Role::Button, STATE_SHOWING, 0, 0), false, false));
        assert!(!certain_noise(&it(Role::PasswordText, 0, 0, 0), false, false));
        // Closed popup menus go without their details; a closed menu item
        // depends on its parent (an open or closed menu): details are read.
        assert!(certain_noise(&it(Role::PopupMenu, 0, 3, 0), false, false));
        assert!(!certain_noise(&it(Role::MenuItem, 0, 0, IF_ACTION), false, false));
        // Whenever it says noise, is_noise agrees, whatever the parent and bounds.
        let menu = it(Role::Menu, STATE_SHOWING, 3, 0);
        for item in [&filler, &it(Role::PopupMenu, 0, 3, 0), &it(Role::TableRow, STATE_SHOWING, 0, 0)] {
            for parent in [None, Some(&menu)] {
                for bounds in [None, Some(Rect::new(0, 0, 0, 0)), Some(Rect::new(5, 5, 10, 10))] {
                    let n = wire_node(vec![1], item, Details { bounds, ..Default::default() });
                    assert!(is_noise(item, parent, &n, false) && is_noise(item, parent, &n, true));
                }
            }
        }
    }

    #[test]
    fn wire_nodes_speak_the_neutral_vocabulary() {
        use crate::wire::vocabulary::{ActionName, State};
        let bit = |st: ::atspi::State| StateSet::new(st).bits();
        assert_eq!((bit(::atspi::State::Editable), bit(::atspi::State::MultiLine)), (STATE_EDITABLE, STATE_MULTI_LINE));
        let details = |actions: &[&str]| Details { value: Some("hunter2".into()), actions: actions.iter().map(|s| s.to_string()).collect(), ..Default::default() };
        // A password field: secure_text_field + state secure + secure, never a value.
        let pw = Item { role: Role::PasswordText as u32, states: STATE_EDITABLE | STATE_SHOWING | bit(::atspi::State::Focused), ..Default::default() };
        let n = wire_node(vec![0, 1], &pw, details(&["activate"]));
        assert_eq!((n.role, n.native_role.as_str(), n.secure, n.value.as_deref()), (NeutralRole::SecureTextField, "password text", true, None));
        assert_eq!(n.states, [State::Focused, State::Editable, State::Visible, State::Secure]);
        assert_eq!(n.actions, [NodeAction { name: ActionName::Other, native: "activate".into() }], "an entry's activate is Enter");
        // A multi-line text view is a text area; its value is kept.
        let tv = Item { role: Role::Text as u32, states: STATE_EDITABLE | STATE_MULTI_LINE, ..Default::default() };
        let n = wire_node(vec![], &tv, details(&[]));
        assert_eq!((n.role, n.value.as_deref(), n.secure), (NeutralRole::TextArea, Some("hunter2"), false));
        assert_eq!(n.states, [State::Editable, State::MultiLine]);
        // A push button: press, with the native name kept.
        let b = Item { role: Role::Button as u32, states: bit(::atspi::State::Sensitive) | STATE_FOCUSABLE, ..Default::default() };
        let n = wire_node(vec![2], &b, Details { actions: vec!["click".into(), "showContextMenu".into()], ..Default::default() });
        assert_eq!((n.role, n.native_role.as_str()), (NeutralRole::Button, "push button"));
        assert_eq!(n.states, [State::Focusable, State::Enabled]);
        assert_eq!(n.actions.iter().map(|a| (a.name, a.native.as_str())).collect::<Vec<_>>(), [(ActionName::Press, "click"), (ActionName::ShowMenu, "showContextMenu")]);
        assert_eq!(neutral_role(&Item { role: Role::Paragraph as u32, states: STATE_EDITABLE, ..Default::default() }), NeutralRole::TextArea);
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
