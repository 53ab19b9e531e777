//! org.a11y.atspi.Collection: one call that searches a whole subtree inside
//! the application (at-spi2-atk walks the ATK tree itself: every child,
//! showing or not), so neither the helper's showing-only tree walk nor a
//! round trip per node is involved. GTK 3 (at-spi2-atk) implements it on
//! every object, the application root included (checked live); toolkits
//! without it answer UnknownMethod / UnknownInterface, and callers fall back.
//!
//! The match rule is encoded by hand, as libatspi's
//! `_atspi_match_rule_marshal` does and at-spi2-atk's `read_mr` reads it:
//! states and roles are *bit sets* in arrays of int32 words (2 words of
//! states, 4 of roles: role r is bit r % 32 of word r / 32).

use super::tree;
use super::{A11y, CallError, ObjRef, COORD_SCREEN, I_ACCESSIBLE, I_COMPONENT, I_TEXT, NULL_PATH, ROOT_PATH};
use crate::wire::messages::Rect;
use crate::error::Result;
use atspi::{Role, State};
use futures_util::future::join_all;
use std::collections::HashMap;
use std::time::Instant;

pub const I_COLLECTION: &str = "org.a11y.atspi.Collection";

/// AtspiCollectionMatchType.
pub const MATCH_ALL: i32 = 1;
pub const MATCH_ANY: i32 = 2;
/// AtspiCollectionSortOrder CANONICAL (tree order).
pub const SORT_CANONICAL: u32 = 1;

/// (aiia{ss}iaiiasib): states, states match, attributes, attributes match,
/// roles, roles match, interfaces, interfaces match, invert.
pub type Rule = (Vec<i32>, i32, HashMap<String, String>, i32, Vec<i32>, i32, Vec<String>, i32, bool);

/// The bit of an AT-SPI state in a 64-bit state set (atspi's State is an
/// enumflags2 enum: each variant is its own bit).
pub fn state_bit(s: State) -> u64 {
    s as u64
}

pub fn state_words(states: u64) -> Vec<i32> {
    vec![states as u32 as i32, (states >> 32) as u32 as i32]
}

pub fn role_words(roles: &[u32]) -> Vec<i32> {
    let mut w = [0u32; 4];
    for &r in roles {
        if r < 128 {
            w[(r / 32) as usize] |= 1 << (r % 32);
        }
    }
    w.iter().map(|&x| x as i32).collect()
}

/// A rule on states and roles only (attributes and interfaces: anything).
pub fn rule(states: u64, states_match: i32, roles: &[u32], roles_match: i32) -> Rule {
    (state_words(states), states_match, HashMap::new(), MATCH_ALL, role_words(roles), roles_match, Vec::new(), MATCH_ALL, false)
}

/// Objects holding the keyboard focus.
pub fn focused_rule() -> Rule {
    rule(state_bit(State::Focused), MATCH_ALL, &[], MATCH_ALL)
}

/// Secure (password) text fields. AT-SPI has no "secure" state: the role is
/// what toolkits set (GTK 3: an entry with visibility off; Qt: echo mode
/// Password).
pub fn secure_rule() -> Rule {
    rule(0, MATCH_ALL, &[Role::PasswordText as u32], MATCH_ANY)
}

/// Menu items on the screen: an open menu.
pub fn showing_menu_item_rule() -> Rule {
    rule(state_bit(State::Showing), MATCH_ALL, &MENU_ITEM_ROLES.map(|r| r as u32), MATCH_ANY)
}

pub const MENU_ITEM_ROLES: [Role; 3] = [Role::MenuItem, Role::CheckMenuItem, Role::RadioMenuItem];

/// Most menu items whose states `menu_open` reads live.
const MAX_MENU_ITEMS: usize = 256;

/// Whether the application has a menu open (a menu item on the screen).
/// The menu items its cache (Cache.GetItems) lists have their states read
/// live (GTK 3's cache keeps SHOWING on the items of closed menus); then,
/// where it is safe (`model_is_safe`: no node managing its descendants,
/// which Collection would visit one by one), Collection.GetMatches on the
/// root also finds items the cache does not list yet. None: it cannot be
/// told (too many items to read, or no cache and no Collection).
pub async fn menu_open(a: &A11y, bus: &str) -> Result<Option<bool>> {
    let showing = state_bit(State::Showing);
    let is_item = |role: u32| MENU_ITEM_ROLES.iter().any(|r| *r as u32 == role);
    let cached = tree::model_from_cache_joined(a, bus).await;
    let safe = model_is_safe(cached.as_ref());
    if let Some(m) = &cached {
        let items: Vec<&str> = m.items.values().filter(|i| is_item(i.role)).map(|i| i.path.as_str()).collect();
        if items.len() > MAX_MENU_ITEMS && !safe {
            return Ok(None);
        }
        if items.len() <= MAX_MENU_ITEMS {
            let states = join_all(items.iter().map(|p| a.call::<_, Vec<u32>>(bus, p, I_ACCESSIBLE, "GetState", &()))).await;
            if states.iter().any(|s| s.as_ref().is_ok_and(|w| tree::states_from_words(w) & showing != 0)) {
                return Ok(Some(true));
            }
            if !safe {
                return Ok(Some(false));
            }
        }
    }
    Ok(get_matches(a, bus, ROOT_PATH, &showing_menu_item_rule(), 1).await?.map(|v| !v.is_empty()))
}

/// D-Bus errors that mean "this object has no Collection".
fn unsupported(name: &str) -> bool {
    name.ends_with("UnknownMethod") || name.ends_with("UnknownInterface") || name.ends_with("NotSupported")
}

/// Longest one GetMatches may take (it searches a whole subtree).
const MATCHES_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(3000);

/// Collection.GetMatches on `path`, whole subtree (traverse), tree order, at
/// most `count` objects. Ok(None): the object has no Collection.
pub async fn get_matches(a: &A11y, bus: &str, path: &str, rule: &Rule, count: i32) -> Result<Option<Vec<ObjRef>>> {
    // Debug/comparison switch: behave as with a toolkit without Collection.
    if std::env::var("DECKHAND_NO_COLLECTION").is_ok_and(|v| v == "1") {
        return Ok(None);
    }
    match a.call_msg(bus, path, I_COLLECTION, "GetMatches", &(rule, SORT_CANONICAL, count, true), MATCHES_TIMEOUT).await {
        Ok(m) => {
            let v: Vec<ObjRef> = m.body().deserialize()?;
            Ok(Some(v.into_iter().filter(|(_, p)| p.as_str() != NULL_PATH && !p.as_str().is_empty()).collect()))
        }
        Err(CallError::Bus(zbus::Error::MethodError(name, _, _))) if unsupported(name.as_str()) => Ok(None),
        // Qt 5 answers UnknownObject for an interface it does not implement
        // (its adaptor declines the message), on objects that exist: if the
        // object still answers as an Accessible, it just has no Collection.
        Err(CallError::Bus(zbus::Error::MethodError(name, m, d))) if name.as_str().ends_with("UnknownObject") => {
            match a.call::<_, u32>(bus, path, I_ACCESSIBLE, "GetRole", &()).await {
                Ok(_) => Ok(None),
                Err(_) => Err(CallError::Bus(zbus::Error::MethodError(name, m, d)).into()),
            }
        }
        Err(e) => Err(e.into()),
    }
}

/// Whether Collection.GetMatches may be asked below the application's
/// objects, from its cache as read (`tree::model_from_cache`): not when it
/// shows a node that manages its descendants or claims a huge child count
/// (the toolkit would visit all of them: LibreOffice Calc's 2^31 cells).
/// Unknown (no cache, or input in flight): allowed.
pub fn model_is_safe(m: Option<&tree::Model>) -> bool {
    m.is_none_or(|m| !m.items.values().any(|i| i.huge(MAX_CHILDREN_FOR_HUGE)))
}

/// How the focused objects were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Collection,
    Cache,
    Walk,
}

/// Most candidates a focus query returns (toolkits keep one focused object,
/// but a stale state elsewhere must not hide the real one).
pub const MAX_FOCUSED: i32 = 8;
/// The child count above which (with max_children 1000) a node counts as huge.
const MAX_CHILDREN_FOR_HUGE: u32 = 1000;
/// Most objects the fallback walk looks at.
pub const WALK_BUDGET: usize = 4000;

/// Objects of the application `bus` in the FOCUSED state, in tree order:
/// Cache.GetItems (every item's states in one call, each candidate checked
/// live); else Collection.GetMatches on the application root, unless the
/// cache showed a node that manages its descendants; without either, a
/// breadth-first walk (GetChildren + GetState, each level pipelined) over at
/// most WALK_BUDGET objects or until `until`. None of these prunes
/// non-showing subtrees. The walk never lists the children of a node that
/// manages its descendants or claims absurdly many (`Item::huge`): reading
/// those can hang the app (LibreOffice Calc); a focused cell there is found
/// by Collection, or not at all.
pub async fn focused_objects(a: &A11y, bus: &str, until: Instant) -> Result<(Vec<String>, Source)> {
    let focused = state_bit(State::Focused);
    // The cache first (Cache.GetItems only when no synthetic input is in
    // flight: `tree::bulk_items`). Collection.GetMatches on the application
    // root makes the toolkit visit every object below it: in LibreOffice Calc
    // that is a sheet of 2^31 cells (seconds of CPU, 150 MB more, its bus
    // blocked). So an app whose cache shows a node that manages its
    // descendants is never asked through Collection; its focused cell is in
    // the cache (the toolkit registered it when focus moved there).
    let mut manages_descendants = false;
    if let Some(Ok(items)) = tree::bulk_items(a, bus).await {
        manages_descendants = items.iter().any(|i| i.huge(MAX_CHILDREN_FOR_HUGE));
        let cands: Vec<String> = items.into_iter().filter(|i| i.states & focused != 0 && i.path != ROOT_PATH).map(|i| i.path).take(MAX_FOCUSED as usize).collect();
        // The cache's states may lag behind: keep only what is focused now.
        let states = join_all(cands.iter().map(|p| a.call::<_, Vec<u32>>(bus, p, I_ACCESSIBLE, "GetState", &()))).await;
        let live: Vec<String> = cands.into_iter().zip(states).filter(|(_, s)| s.as_ref().is_ok_and(|w| tree::states_from_words(w) & focused != 0)).map(|(p, _)| p).collect();
        if !live.is_empty() || manages_descendants {
            return Ok((live, Source::Cache));
        }
    }
    if !manages_descendants {
        if let Some(v) = get_matches(a, bus, ROOT_PATH, &focused_rule(), MAX_FOCUSED).await? {
            return Ok((v.into_iter().map(|(_, p)| p.to_string()).collect(), Source::Collection));
        }
    }
    let mut level = vec![ROOT_PATH.to_string()];
    let mut seen = 0usize;
    let mut found = Vec::new();
    while !level.is_empty() && seen < WALK_BUDGET && Instant::now() < until {
        let lists = join_all(level.iter().map(|p| a.children(bus, p))).await;
        let next: Vec<String> = lists
            .into_iter()
            .filter_map(|l| l.ok())
            .flatten()
            .map(|(_, p)| p.to_string())
            .filter(|p| p != NULL_PATH && p != ROOT_PATH)
            .take(WALK_BUDGET - seen)
            .collect();
        seen += next.len();
        let states = join_all(next.iter().map(|p| a.call::<_, Vec<u32>>(bus, p, I_ACCESSIBLE, "GetState", &()))).await;
        let manages = state_bit(State::ManagesDescendants);
        let mut descend = Vec::with_capacity(next.len());
        for (p, s) in next.into_iter().zip(states) {
            let bits = s.map(|w| tree::states_from_words(&w)).unwrap_or(0);
            if bits & focused != 0 {
                found.push(p.clone());
            }
            if bits & manages == 0 {
                descend.push(p);
            }
        }
        if !found.is_empty() {
            break;
        }
        level = descend;
    }
    Ok((found, Source::Walk))
}

/// The chain from the object's top-level accessible (the window's frame, a
/// child of the application root) down to `obj`, by climbing Parent. None
/// when it does not lead to the application root within 256 levels.
pub async fn chain_to_frame(a: &A11y, bus: &str, obj: &str) -> Option<Vec<String>> {
    let mut chain = vec![obj.to_string()];
    loop {
        if chain.len() > 256 {
            return None;
        }
        let cur = chain.last()?.clone();
        let parent = a.prop(bus, &cur, I_ACCESSIBLE, "Parent").await.ok().and_then(tree::value_as_objref)?;
        let p = parent.1.as_str();
        if p == ROOT_PATH {
            chain.reverse();
            return Some(chain);
        }
        if p == NULL_PATH || p.is_empty() || chain.iter().any(|c| c == p) {
            return None;
        }
        chain.push(p.to_string());
    }
}

/// Component.GetExtents as the toolkit answers it: GTK 3 gives the size
/// but x = y = G_MININT for a widget it believes off screen (its
/// `on_screen` test compares allocations in the wrong coordinate space for
/// a GtkViewport itself and for anything inside a windowed container, e.g.
/// a GtkEventBox, in a viewport: such widgets are visible but get no
/// position and no SHOWING state).
async fn raw_extents(a: &A11y, bus: &str, path: &str) -> Option<(i32, i32, i32, i32)> {
    a.call::<_, (i32, i32, i32, i32)>(bus, path, I_COMPONENT, "GetExtents", &(COORD_SCREEN,)).await.ok()
}

fn placed(e: (i32, i32, i32, i32)) -> Option<Rect> {
    let (x, y, w, h) = e;
    (x != i32::MIN && y != i32::MIN && w > 0 && h > 0).then(|| Rect::new(x, y, w as u32, h as u32))
}

/// A box sure to contain a field of size (w, h) one of whose characters
/// is at `chars` (screen rects): each character lies inside the field, so
/// the field's origin is at most one field size up / left of it.
pub fn box_around(chars: &[Rect], w: u32, h: u32) -> Option<Rect> {
    let x0 = chars.iter().map(|r| r.x as i64).min()?;
    let y0 = chars.iter().map(|r| r.y as i64).min()?;
    let x1 = chars.iter().map(|r| r.x as i64 + r.width as i64).max()?;
    let y1 = chars.iter().map(|r| r.y as i64 + r.height as i64).max()?;
    let (w, h) = (w.max(1) as i64, h.max(1) as i64);
    let (x, y) = ((x0 - w).max(i32::MIN as i64 + 1), (y0 - h).max(i32::MIN as i64 + 1));
    let (r, b) = ((x1 + w).min(i32::MAX as i64), (y1 + h).min(i32::MAX as i64));
    Some(Rect::new(x as i32, y as i32, (r - x) as u32, (b - y) as u32))
}

/// Where a secure field is on the screen, to black it out. Its extents when
/// the toolkit gives them. Else (GTK 3's "no position", see `raw_extents`)
/// its text's geometry, which GTK computes without that test: the
/// character extents of offset 0 and of the caret (positions only, never
/// text; the caret is kept in view by the entry) give a conservative box
/// (`box_around`), clipped to the nearest scroll pane above it, so a field
/// really scrolled out of view is not redacted where it is not shown.
/// Without text geometry: the nearest ancestor's extents (over-redaction
/// rather than none). None: nothing of it can be on the screen, or nothing
/// is known.
pub async fn locate_secure(a: &A11y, bus: &str, path: &str, raw: Option<(i32, i32, i32, i32)>) -> Option<Rect> {
    let raw = match raw {
        Some(r) => r,
        None => raw_extents(a, bus, path).await?,
    };
    if let Some(r) = placed(raw) {
        return Some(r);
    }
    let caret = a.prop(bus, path, I_TEXT, "CaretOffset").await.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(0).max(0);
    let offsets: Vec<i32> = if caret > 0 { vec![0, caret] } else { vec![0] };
    let chars: Vec<Rect> = join_all(offsets.iter().map(|&o| async move {
        a.call::<_, (i32, i32, i32, i32)>(bus, path, I_TEXT, "GetCharacterExtents", &(o, COORD_SCREEN)).await
    }))
        .await
        .into_iter()
        .filter_map(|r| r.ok())
        .filter(|&(x, y, w, h)| x != i32::MIN && y != i32::MIN && w >= 0 && h >= 0)
        .map(|(x, y, w, h)| Rect::new(x, y, w as u32, h as u32))
        .collect();
    let fallback_box = box_around(&chars, raw.2.max(0) as u32, raw.3.max(0) as u32);
    // Climb: the nearest scroll pane (to clip the box), or, without a box,
    // the nearest ancestor with extents.
    let scroll_pane = Role::ScrollPane as u32;
    let mut cur = path.to_string();
    for _ in 0..64 {
        let Some((_, parent)) = a.prop(bus, &cur, I_ACCESSIBLE, "Parent").await.ok().and_then(tree::value_as_objref) else { break };
        let p = parent.as_str();
        if p == NULL_PATH || p == ROOT_PATH || p.is_empty() {
            break;
        }
        let (role, ext) = tokio::join!(a.call::<_, u32>(bus, p, I_ACCESSIBLE, "GetRole", &()), raw_extents(a, bus, p));
        let ext = ext.and_then(placed);
        match (&fallback_box, ext) {
            (Some(b), Some(e)) if role.as_ref().is_ok_and(|&r| r == scroll_pane) => return b.intersect(&e),
            (None, Some(e)) => return Some(e),
            _ => {}
        }
        cur = p.to_string();
    }
    fallback_box
}

/// Screen rectangles of every secure field below `frame` (a window's frame
/// accessible), shown or not, found with one Collection.GetMatches (at most
/// `max`). Ok(None): no Collection there. The second value is how many
/// fields were found (== `max`: there may be more).
pub async fn secure_rects(a: &A11y, bus: &str, frame: &str, max: i32) -> Result<Option<(Vec<Rect>, usize)>> {
    let Some(objs) = get_matches(a, bus, frame, &secure_rule(), max).await? else { return Ok(None) };
    let rects = join_all(objs.iter().map(|(b, p)| locate_secure(a, b, p.as_str(), None))).await;
    Ok(Some((rects.into_iter().flatten().collect(), objs.len())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zbus::zvariant::Type;

    #[test]
    fn rule_signature_is_the_collection_one() {
        assert_eq!(Rule::SIGNATURE.to_string(), "(aiia{ss}iaiiasib)");
    }

    #[test]
    fn states_are_a_two_word_bit_set() {
        // FOCUSED is state 12, ACTIVE 1, SHOWING 25 (AtspiStateType).
        assert_eq!(state_bit(State::Focused), 1 << 12);
        assert_eq!(state_bit(State::Active), 1 << 1);
        assert_eq!(state_bit(State::Showing), 1 << 25);
        assert_eq!(tree::state_names(state_bit(State::Focused)), ["focused"]);
        assert_eq!(state_words(1 << 12), [1 << 12, 0]);
        assert_eq!(state_words((1u64 << 40) | 1), [1, 1 << 8]);
        assert_eq!(state_words(1u64 << 63), [0, i32::MIN], "the top bit survives as a negative int32");
    }

    #[test]
    fn roles_are_a_four_word_bit_set() {
        // PASSWORD_TEXT is role 40: word 1, bit 8.
        assert_eq!(Role::PasswordText as u32, 40);
        assert_eq!(role_words(&[40]), [0, 1 << 8, 0, 0]);
        assert_eq!(role_words(&[0, 31, 32, 127]), [1 | i32::MIN, 1, 0, i32::MIN]);
        assert_eq!(role_words(&[500]), [0, 0, 0, 0], "out of range roles are dropped");
    }

    #[test]
    fn the_two_rules() {
        let f = focused_rule();
        assert_eq!((f.0.clone(), f.1), (vec![1 << 12, 0], MATCH_ALL));
        assert_eq!(f.4, [0, 0, 0, 0]);
        assert!(!f.8, "not inverted");
        let s = secure_rule();
        assert_eq!((s.0.clone(), s.4.clone(), s.5), (vec![0, 0], vec![0, 1 << 8, 0, 0], MATCH_ANY));
        assert!(s.2.is_empty() && s.6.is_empty());
    }

    #[test]
    fn a_box_sure_to_hold_the_field() {
        // A 200x30 entry whose first character is at (110, 208, 0x16).
        let b = box_around(&[Rect::new(110, 208, 0, 16)], 200, 30).unwrap();
        assert_eq!(b, Rect::new(-90, 178, 400, 76));
        // Whatever the entry's padding, an entry at (100..300, 200..230)
        // holding that character is inside.
        assert_eq!(b.intersect(&Rect::new(100, 200, 200, 30)), Some(Rect::new(100, 200, 200, 30)));
        // Two characters (offset 0 and the caret): the union, grown.
        let b = box_around(&[Rect::new(110, 208, 8, 16), Rect::new(150, 208, 0, 16)], 200, 30).unwrap();
        assert_eq!(b, Rect::new(-90, 178, 440, 76));
        assert_eq!(box_around(&[], 200, 30), None);
        // Extreme coordinates do not overflow.
        let b = box_around(&[Rect::new(i32::MAX - 5, i32::MIN + 10, 4, 4)], 1000, 1000).unwrap();
        assert!(b.width > 0 && b.height > 0);
    }

    #[test]
    fn placed_extents() {
        assert_eq!(placed((10, 20, 30, 40)), Some(Rect::new(10, 20, 30, 40)));
        assert_eq!(placed((i32::MIN, i32::MIN, 420, 34)), None, "GTK 3: size without a position");
        assert_eq!(placed((10, 20, 0, 40)), None);
    }

    #[test]
    fn unsupported_errors() {
        assert!(unsupported("org.freedesktop.DBus.Error.UnknownMethod"));
        assert!(unsupported("org.freedesktop.DBus.Error.UnknownInterface"));
        assert!(!unsupported("org.freedesktop.DBus.Error.UnknownObject"));
        assert!(!unsupported("org.freedesktop.DBus.Error.NoReply"));
    }
}
