//! Popups on sway (issue 19). A toolkit's popup surface (an xdg_popup:
//! Chromium's context menu) is no view in sway's tree, so the compositor
//! lists no window for it; the toolkit may still show it as a top-level
//! accessible of its own (Chromium on Wayland: a frame with no name, ACTIVE,
//! holding a menu bar that holds the menu; its extents are in its parent
//! window's surface coordinates). Such an accessible is listed as a popup
//! window of the app, with an id of its own that names its parent view and
//! its place among the app's top-level accessibles (`id`), so the element
//! routes (menu_tree, element_action) reach it as they reach an X11 popup
//! window. Only a menu is taken for a popup: a top-level accessible that is
//! shown and is a menu, or whose first child is one. GTK 3 and Qt 5 keep
//! their menus below the opener: they show none.

use crate::atspi::tree;
use crate::atspi::{A11y, ObjRef, I_ACCESSIBLE, NULL_PATH, ROOT_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use atspi::Role;

/// AT-SPI's SHOWING state bit.
const STATE_SHOWING: u64 = 1 << 25;

/// The bit no sway container id has (they count up from 1): a popup's id.
pub const POPUP_BIT: u32 = 0x8000_0000;
const INDEX_SHIFT: u32 = 24;
const MAX_INDEX: u32 = 0x7f;
const CON_MASK: u32 = 0x00ff_ffff;
/// Top-level accessibles of an app looked at, at most (a bound on calls).
const MAX_TOP_LEVEL: usize = 16;

/// The popup id of the app's top-level accessible `index` shown over the
/// view `con_id` (None: out of the id's range).
pub fn id(con_id: u32, index: u32) -> Option<u32> {
    (con_id <= CON_MASK && index <= MAX_INDEX).then_some(POPUP_BIT | (index << INDEX_SHIFT) | con_id)
}

/// (parent view's container id, index among the app's top-level accessibles).
pub fn parse(window_id: u32) -> Option<(u32, u32)> {
    (window_id & POPUP_BIT != 0).then_some((window_id & CON_MASK, (window_id >> INDEX_SHIFT) & MAX_INDEX))
}

fn is_menu(role: u32) -> bool {
    matches!(Role::try_from(role), Ok(Role::Menu | Role::MenuBar | Role::PopupMenu))
}

/// The accessible at `path` as a popup: shown, and a menu or a frame /
/// window whose first child is one; its extents (the parent surface's
/// coordinates). Few calls: its role and state, then its first child's role
/// (a main window's frame costs four).
pub async fn as_popup(a: &A11y, bus: &str, path: &str) -> Option<Option<Rect>> {
    let (role, states) = tokio::join!(a.call::<_, u32>(bus, path, I_ACCESSIBLE, "GetRole", &()), a.call::<_, Vec<u32>>(bus, path, I_ACCESSIBLE, "GetState", &()));
    let (role, states) = (role.ok()?, tree::states_from_words(&states.ok()?));
    if states & STATE_SHOWING == 0 {
        return None;
    }
    let menu = is_menu(role)
        || (matches!(Role::try_from(role), Ok(Role::Frame | Role::Window | Role::Dialog))
            // The first child only (GetChildAtIndex: never a whole list of children).
            && match a.call::<_, ObjRef>(bus, path, I_ACCESSIBLE, "GetChildAtIndex", &(0i32,)).await {
                Ok((b, p)) if p.as_str() != NULL_PATH => a.call::<_, u32>(&b, p.as_str(), I_ACCESSIBLE, "GetRole", &()).await.is_ok_and(is_menu),
                _ => false,
            });
    if !menu {
        return None;
    }
    Some(tree::extents(a, bus, path).await)
}

/// The app's popups now: (index among its top-level accessibles, path, extents).
pub async fn discover(a: &A11y, bus: &str) -> Result<Vec<(u32, String, Option<Rect>)>> {
    let kids = a.children(bus, ROOT_PATH).await?;
    let mut out = Vec::new();
    for (i, (b, p)) in kids.into_iter().enumerate().take(MAX_TOP_LEVEL) {
        if let Some(ext) = as_popup(a, &b, p.as_str()).await {
            out.push((i as u32, p.to_string(), ext));
        }
    }
    Ok(out)
}

/// The frame (object path) of the popup `index` of the app on `bus`, if it
/// is still a popup shown now.
pub async fn frame(a: &A11y, bus: &str, index: u32) -> Result<String> {
    let kids = a.children(bus, ROOT_PATH).await?;
    let gone = || Error::new(Code::WindowNotFound, format!("the popup (top-level accessible {index}) is no longer shown")).with("reason", "popup-gone");
    let (b, p) = kids.into_iter().nth(index as usize).ok_or_else(gone)?;
    as_popup(a, &b, p.as_str()).await.ok_or_else(gone)?;
    Ok(p.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_the_parent_and_the_index() {
        let p = id(42, 3).unwrap();
        assert!(p & POPUP_BIT != 0);
        assert_eq!(parse(p), Some((42, 3)));
        assert_eq!(parse(42), None, "a sway container id is no popup");
        assert_eq!(id(CON_MASK + 1, 0), None);
        assert_eq!(id(1, MAX_INDEX + 1), None);
        assert_eq!(parse(id(CON_MASK, MAX_INDEX).unwrap()), Some((CON_MASK, MAX_INDEX)));
    }
}
