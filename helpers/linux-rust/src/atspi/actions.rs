//! Acting on one element through AT-SPI: resolve the locator's path from the
//! window's frame, verify its identity (role, name, identifier), then call
//! exactly one interface method. Never coordinates, never a different element.

use super::tree::{self, Item, IF_ACTION, IF_COMPONENT, IF_EDITABLE, IF_TEXT, IF_VALUE};
use super::{A11y, ObjRef, COORD_SCREEN, I_ACCESSIBLE, I_ACTION, I_COMPONENT, I_EDITABLE_TEXT, I_PROPS, I_TEXT, I_VALUE, NULL_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::messages::{ElementActionArgs, ElementActionName, WireLocator, WireNode};
use std::cell::Cell;
use zbus::zvariant::Value;

/// Set once the mutating D-Bus call has been handed to the bus: from then on
/// a timeout means "unknown", not "not dispatched".
#[derive(Default)]
pub struct Dispatch {
    pub sent: Cell<bool>,
}

pub struct Outcome {
    pub verified: Option<bool>,
    pub verification: Option<String>,
}

fn unresolvable(msg: impl Into<String>) -> Error {
    Error::new(Code::ElementUnresolvable, msg)
}

/// Walk child indices from the frame.
pub async fn resolve_path(a: &A11y, bus: &str, frame: &str, path: &[u32]) -> Result<(String, String, i32)> {
    let mut cur = frame.to_string();
    let mut parent = String::new();
    let mut index = 0;
    for (depth, &i) in path.iter().enumerate() {
        let r: Result<ObjRef> = a.call(bus, &cur, I_ACCESSIBLE, "GetChildAtIndex", &(i as i32,)).await;
        let (_, p) = r.map_err(|e| {
            if e.code == Code::Timeout {
                e
            } else {
                unresolvable(format!("no child {i} at depth {depth} of the locator path: {}", e.message))
            }
        })?;
        if p.as_str() == NULL_PATH || p.as_str().is_empty() {
            return Err(unresolvable(format!("no child {i} at depth {depth} of the locator path")).with("depth", depth as i64));
        }
        parent = cur;
        cur = p.to_string();
        index = i as i32;
    }
    Ok((cur, parent, index))
}

/// Resolve a locator and check the element is the same one.
pub async fn resolve(a: &A11y, bus: &str, frame: &str, loc: &WireLocator) -> Result<(Item, String)> {
    let (path, parent, index) = resolve_path(a, bus, frame, &loc.path).await?;
    let (item, identifier) = tokio::join!(tree::describe(a, bus, &path, &parent, index), tree::read_identifier(a, bus, &path));
    let item = item.map_err(|e| if e.code == Code::Timeout { e } else { unresolvable(format!("element vanished: {}", e.message)) })?;
    let role = tree::role_name(item.role);
    if role != loc.role {
        return Err(unresolvable("the element at the locator's path has another role")
            .with("expected", loc.role.clone())
            .with("found", role));
    }
    if item.name != loc.name {
        return Err(unresolvable("the element at the locator's path has another name")
            .with("expected_name_len", loc.name.chars().count() as i64)
            .with("found", if item.secure() { String::new() } else { item.name.clone() }));
    }
    if identifier != loc.identifier {
        return Err(unresolvable("the element at the locator's path has another identifier")
            .with("expected", loc.identifier.clone())
            .with("found", identifier));
    }
    Ok((item, identifier))
}

fn unsupported(msg: impl Into<String>) -> Error {
    Error::new(Code::ActionUnsupported, msg)
}

fn refused(what: &str) -> Error {
    Error::new(Code::ActionFailed, format!("the application refused {what}"))
}

async fn read_text(a: &A11y, bus: &str, path: &str) -> Result<String> {
    a.call(bus, path, I_TEXT, "GetText", &(0i32, -1i32)).await
}

async fn actions(a: &A11y, bus: &str, path: &str) -> Result<Vec<String>> {
    let v: Vec<(String, String, String)> = a.call(bus, path, I_ACTION, "GetActions", &()).await?;
    Ok(v.into_iter().map(|(n, _, _)| n).collect())
}

/// Perform the action on a resolved, verified element.
pub async fn perform(a: &A11y, bus: &str, it: &Item, args: &ElementActionArgs, d: &Dispatch) -> Result<Outcome> {
    let path = it.path.as_str();
    let secure = it.secure();
    let has = |bit: u32| it.ifaces & bit != 0;
    let fail = |e: Error| e.recode(Code::ActionFailed);
    match args.action {
        ElementActionName::Click => {
            if !has(IF_ACTION) {
                return Err(unsupported("the element has no actions"));
            }
            let names = actions(a, bus, path).await?;
            let Some(first) = names.first().cloned() else {
                return Err(unsupported("the element advertises no action"));
            };
            let checked_before = it.states & (1 << 4) != 0;
            d.sent.set(true);
            let ok: bool = a.call(bus, path, I_ACTION, "DoAction", &(0i32,)).await.map_err(fail)?;
            if !ok {
                return Err(refused(&format!("action {first:?}")));
            }
            // A predicate we can actually check: a toggle's checked state.
            if matches!(tree::role_name(it.role), "check box" | "toggle button" | "radio button" | "check menu item" | "radio menu item") {
                let after: Vec<u32> = a.call(bus, path, I_ACCESSIBLE, "GetState", &()).await.unwrap_or_default();
                let checked_after = tree::states_from_words(&after) & (1 << 4) != 0;
                let want_change = tree::role_name(it.role) != "radio button" || !checked_before;
                return Ok(Outcome {
                    verified: Some(if want_change { checked_after != checked_before } else { checked_after }),
                    verification: Some(format!("checked state {checked_before} -> {checked_after} after {first:?}")),
                });
            }
            Ok(Outcome { verified: None, verification: None })
        }
        ElementActionName::SetValue => {
            let text = args.text.clone().ok_or_else(|| Error::invalid("set_value needs text"))?;
            if has(IF_EDITABLE) {
                d.sent.set(true);
                let ok: bool = a.call(bus, path, I_EDITABLE_TEXT, "SetTextContents", &(text.as_str(),)).await.map_err(fail)?;
                if !ok {
                    return Err(refused("SetTextContents"));
                }
                if secure {
                    return Ok(Outcome { verified: None, verification: None });
                }
                let back = read_text(a, bus, path).await.ok();
                return Ok(Outcome {
                    verified: Some(back.as_deref() == Some(text.as_str())),
                    verification: Some("text read back equals the requested value".into()),
                });
            }
            if has(IF_VALUE) {
                let v: f64 = text.trim().parse().map_err(|_| Error::invalid(format!("{text:?} is not a number for a value element")))?;
                d.sent.set(true);
                a.call::<_, ()>(bus, path, I_PROPS, "Set", &(I_VALUE, "CurrentValue", Value::from(v))).await.map_err(fail)?;
                if secure {
                    return Ok(Outcome { verified: None, verification: None });
                }
                let back = a.prop(bus, path, I_VALUE, "CurrentValue").await.ok().and_then(|v| f64::try_from(v).ok());
                return Ok(Outcome {
                    verified: Some(back.is_some_and(|b| (b - v).abs() <= f64::EPSILON * v.abs().max(1.0))),
                    verification: Some(format!("current value read back: {}", back.map(|b| b.to_string()).unwrap_or_else(|| "unreadable".into()))),
                });
            }
            Err(unsupported("the element has neither EditableText nor Value"))
        }
        ElementActionName::TypeText => {
            let text = args.text.clone().ok_or_else(|| Error::invalid("type_text needs text"))?;
            if !has(IF_EDITABLE) || !has(IF_TEXT) {
                return Err(unsupported("the element has no editable text"));
            }
            let caret: i32 = a
                .prop(bus, path, I_TEXT, "CaretOffset")
                .await
                .ok()
                .and_then(|v| i32::try_from(v).ok())
                .unwrap_or(-1);
            let nsel: i32 = a.call(bus, path, I_TEXT, "GetNSelections", &()).await.unwrap_or(0);
            let mut at = caret;
            let mut deleted = false;
            if nsel > 0 {
                let (s, e): (i32, i32) = a.call(bus, path, I_TEXT, "GetSelection", &(0i32,)).await.unwrap_or((0, 0));
                if e > s {
                    d.sent.set(true);
                    let ok: bool = a.call(bus, path, I_EDITABLE_TEXT, "DeleteText", &(s, e)).await.map_err(fail)?;
                    if !ok {
                        return Err(refused("deleting the selection"));
                    }
                    deleted = true;
                    at = s;
                }
            }
            if at < 0 {
                // No caret known: append at the end.
                at = a.prop(bus, path, I_TEXT, "CharacterCount").await.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(0);
            }
            let before = if secure { None } else { read_text(a, bus, path).await.ok() };
            d.sent.set(true);
            let ok: bool = a
                .call(bus, path, I_EDITABLE_TEXT, "InsertText", &(at, text.as_str(), text.len() as i32))
                .await
                .map_err(fail)?;
            if !ok {
                return Err(refused("InsertText"));
            }
            if secure {
                return Ok(Outcome { verified: None, verification: None });
            }
            let after = read_text(a, bus, path).await.ok();
            let verified = match (before, after) {
                (Some(b), Some(af)) => {
                    let mut expect: Vec<char> = b.chars().collect();
                    let pos = (at as usize).min(expect.len());
                    expect.splice(pos..pos, text.chars());
                    Some(expect.into_iter().collect::<String>() == af)
                }
                _ => None,
            };
            Ok(Outcome {
                verified,
                verification: verified.map(|_| {
                    format!("text read back has the insertion at offset {at}{}", if deleted { " (selection deleted first)" } else { "" })
                }),
            })
        }
        ElementActionName::SelectText => {
            let (s, e) = match (args.start, args.end) {
                (Some(s), Some(e)) if s <= e => (s as i32, e as i32),
                _ => return Err(Error::invalid("select_text needs start <= end")),
            };
            if !has(IF_TEXT) {
                return Err(unsupported("the element has no text"));
            }
            let nsel: i32 = a.call(bus, path, I_TEXT, "GetNSelections", &()).await.unwrap_or(0);
            d.sent.set(true);
            let ok: bool = if nsel > 0 {
                a.call(bus, path, I_TEXT, "SetSelection", &(0i32, s, e)).await.map_err(fail)?
            } else {
                a.call(bus, path, I_TEXT, "AddSelection", &(s, e)).await.map_err(fail)?
            };
            if !ok {
                return Err(refused("the selection"));
            }
            let back: Option<(i32, i32)> = a.call(bus, path, I_TEXT, "GetSelection", &(0i32,)).await.ok();
            Ok(Outcome {
                verified: Some(back == Some((s, e))),
                verification: Some(format!("selection read back: {back:?}")),
            })
        }
        ElementActionName::Focus => {
            if !has(IF_COMPONENT) {
                return Err(unsupported("the element has no Component interface"));
            }
            d.sent.set(true);
            let ok: bool = a.call(bus, path, I_COMPONENT, "GrabFocus", &()).await.map_err(fail)?;
            if !ok {
                return Err(refused("focus"));
            }
            let after: Vec<u32> = a.call(bus, path, I_ACCESSIBLE, "GetState", &()).await.unwrap_or_default();
            let focused = tree::states_from_words(&after) & (1 << 12) != 0;
            Ok(Outcome { verified: Some(focused), verification: Some("element has the focused state".into()) })
        }
        ElementActionName::ScrollIntoView => {
            if !has(IF_COMPONENT) {
                return Err(unsupported("the element has no Component interface"));
            }
            d.sent.set(true);
            // ScrollType 6 = anywhere (the least movement that shows it).
            let ok: bool = a.call(bus, path, I_COMPONENT, "ScrollTo", &(6u32,)).await.map_err(fail)?;
            if !ok {
                return Err(refused("ScrollTo (the toolkit may not implement it)"));
            }
            Ok(Outcome { verified: None, verification: None })
        }
        ElementActionName::Secondary => {
            let name = args.action_name.clone().ok_or_else(|| Error::invalid("secondary needs action_name"))?;
            if !has(IF_ACTION) {
                return Err(unsupported("the element has no actions"));
            }
            let names = actions(a, bus, path).await?;
            let Some(idx) = names.iter().position(|n| *n == name) else {
                return Err(unsupported(format!("the element does not advertise action {name:?}")).with("available", names.join(",")));
            };
            d.sent.set(true);
            let ok: bool = a.call(bus, path, I_ACTION, "DoAction", &(idx as i32,)).await.map_err(fail)?;
            if !ok {
                return Err(refused(&format!("action {name:?}")));
            }
            Ok(Outcome { verified: None, verification: None })
        }
    }
}

/// The deepest accessible at a screen point under `frame`, with its path.
pub async fn accessible_at(a: &A11y, bus: &str, frame: &str, x: i32, y: i32) -> Result<Option<WireNode>> {
    let mut cur = frame.to_string();
    let mut found = false;
    for _ in 0..64 {
        let r: Result<ObjRef> = a.call(bus, &cur, I_COMPONENT, "GetAccessibleAtPoint", &(x, y, COORD_SCREEN)).await;
        match r {
            Ok((_, p)) if p.as_str() != NULL_PATH && !p.as_str().is_empty() && p.as_str() != cur => {
                cur = p.to_string();
                found = true;
            }
            _ => break,
        }
    }
    if !found {
        // The point may still be inside the frame itself.
        match tree::extents(a, bus, frame).await {
            Some(r) if r.contains(x, y) => {}
            _ => return Ok(None),
        }
    }
    // Path from the frame: climb the parents, then find each child's
    // position in its parent's GetChildren list (GetIndexInParent disagrees
    // with GetChildAtIndex in some GTK containers).
    let mut chain = vec![cur.clone()];
    while chain.last().map(|p| p != frame).unwrap_or(false) {
        if chain.len() > 256 {
            return Ok(None);
        }
        let node = chain.last().unwrap().clone();
        let parent = a.prop(bus, &node, I_ACCESSIBLE, "Parent").await.ok().and_then(tree::value_as_objref);
        match parent {
            Some((_, pp)) if pp.as_str() != NULL_PATH && pp.as_str() != super::ROOT_PATH => chain.push(pp.to_string()),
            _ => return Ok(None), // not below this frame
        }
    }
    chain.reverse(); // frame ... cur
    let lists = futures_util::future::join_all(chain[..chain.len() - 1].iter().map(|p| a.children(bus, p))).await;
    let mut path = Vec::new();
    for (i, l) in lists.into_iter().enumerate() {
        let l = l?;
        let Some(pos) = l.iter().position(|(_, p)| p.as_str() == chain[i + 1]) else { return Ok(None) };
        path.push(pos as u32);
    }
    let parent_path = if chain.len() >= 2 { chain[chain.len() - 2].clone() } else { String::new() };
    let my_index = path.last().copied().unwrap_or(0) as i32;
    let item = tree::describe(a, bus, &cur, &parent_path, my_index).await?;
    let mut nodes = tree::nodes_for(a, bus, vec![(path, &item)]).await;
    Ok(nodes.pop())
}
