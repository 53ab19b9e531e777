//! Acting on one element through AT-SPI: resolve the locator's path from the
//! window's frame, verify its identity (role, name, identifier), then call
//! exactly one interface method. Never coordinates, never a different element.

use super::vocabulary;
use super::tree::{self, Item, IF_ACTION, IF_COMPONENT, IF_EDITABLE, IF_TEXT, IF_VALUE};
use super::cache::FrameEntry;
use super::{A11y, ObjRef, COORD_SCREEN, I_ACCESSIBLE, I_ACTION, I_COMPONENT, I_EDITABLE_TEXT, I_PROPS, I_TEXT, I_VALUE, NULL_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::messages::{ElementActionArgs, ElementActionName, Rect, WireLocator, WireNode};
use futures_util::future::join_all;
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
    /// The platform action that ran (click: the advertised action's name).
    pub native_action: Option<String>,
}

/// Action names that mean "do what a primary click does" (compared without
/// case). Only these are run by `click`: an element's first action can be
/// anything (a GTK 4 frame's was an undo), and "open", "expand", "menu"...
/// do something else than a click.
const PRESS_LIKE: [&str; 5] = ["press", "click", "activate", "toggle", "jump"];

/// Roles whose click checks or selects them: browsers name that action by
/// its effect (Firefox and Chromium: "check" / "uncheck", Firefox radios:
/// "select"); the checked-state read-back verifies it.
pub const TOGGLE_ROLES: [&str; 5] = ["check box", "toggle button", "radio button", "check menu item", "radio menu item"];
const TOGGLE_ACTIONS: [&str; 3] = ["check", "uncheck", "select"];

/// Roles whose "activate" is Enter, not a click (a GTK entry's activate
/// signal submits the dialog's default).
pub const ENTRY_ROLES: [&str; 4] = ["text", "password text", "entry", "spin button"];

/// Index of the action `click` runs: the first advertised press-like one.
pub fn press_like(names: &[String], role: &str) -> Option<usize> {
    let toggle = TOGGLE_ROLES.contains(&role);
    let entry = ENTRY_ROLES.contains(&role);
    names.iter().position(|n| {
        let n = n.trim();
        PRESS_LIKE.iter().any(|p| n.eq_ignore_ascii_case(p) && !(entry && p == &"activate"))
            || toggle && TOGGLE_ACTIONS.iter().any(|p| n.eq_ignore_ascii_case(p))
    })
}

fn unresolvable(msg: impl Into<String>) -> Error {
    Error::new(Code::ElementUnresolvable, msg)
}

/// Walk child indices from the frame, starting after the already verified
/// prefix `known` (object paths of the path's first levels, checked live).
/// Returns the object paths of every level (the last is the element).
pub async fn resolve_path_from(a: &A11y, bus: &str, frame: &str, path: &[u32], known: &[String]) -> Result<Vec<String>> {
    let mut chain: Vec<String> = known.to_vec();
    for (depth, &i) in path.iter().enumerate().skip(known.len()) {
        let cur = if depth == 0 { frame } else { chain[depth - 1].as_str() };
        let r: Result<ObjRef> = a.call(bus, cur, I_ACCESSIBLE, "GetChildAtIndex", &(i as i32,)).await;
        let (_, p) = r.map_err(|e| {
            if matches!(e.code, Code::Timeout | Code::AppExited) {
                e
            } else {
                unresolvable(format!("no child {i} at depth {depth} of the locator path: {}", e.message))
            }
        })?;
        if p.as_str() == NULL_PATH || p.as_str().is_empty() {
            return Err(unresolvable(format!("no child {i} at depth {depth} of the locator path")).with("depth", depth as i64));
        }
        chain.push(p.to_string());
    }
    Ok(chain)
}

/// Reads made together with the identity check, before acting: only ones
/// that reveal no content (never a text), used once the identity matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Nothing,
    Actions,
    CaretAndSelections,
    Selections,
}

impl Want {
    pub fn for_action(a: ElementActionName) -> Want {
        match a {
            ElementActionName::Click | ElementActionName::Secondary => Want::Actions,
            ElementActionName::TypeText => Want::CaretAndSelections,
            ElementActionName::SelectText => Want::Selections,
            _ => Want::Nothing,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Prefetch {
    pub actions: Option<Vec<ActionName>>,
    pub caret: Option<i32>,
    pub nsel: Option<i32>,
}

async fn prefetch(a: &A11y, bus: &str, path: &str, want: Want) -> Prefetch {
    let caret = async {
        a.prop(bus, path, I_TEXT, "CaretOffset").await.ok().and_then(|v| i32::try_from(v).ok())
    };
    let nsel = async { a.call::<_, i32>(bus, path, I_TEXT, "GetNSelections", &()).await.ok() };
    match want {
        Want::Nothing => Prefetch::default(),
        Want::Actions => Prefetch { actions: advertised(a, bus, path).await.ok(), ..Default::default() },
        Want::CaretAndSelections => {
            let (caret, nsel) = tokio::join!(caret, nsel);
            Prefetch { caret, nsel, ..Default::default() }
        }
        Want::Selections => Prefetch { nsel: nsel.await, ..Default::default() },
    }
}

/// A resolved, identity-checked element.
pub struct Resolved {
    pub item: Item,
    /// Object paths of the locator path's levels (last = the element).
    pub chain: Vec<String>,
    pub pre: Prefetch,
}

/// Role, name and identifier of the element must all be the locator's. The
/// role compared is the native (AT-SPI) one when the locator carries it (a
/// neutral role is coarser: a check box and a check menu item differ
/// natively), else the neutral one.
fn check_identity(item: &Item, identifier: &str, loc: &WireLocator) -> Result<()> {
    let (expected, found) = if loc.native_role.is_empty() {
        (loc.role.as_str(), tree::neutral_role(item).as_str())
    } else {
        (loc.native_role.as_str(), tree::role_name(item.role))
    };
    if expected != found {
        return Err(unresolvable("the element at the locator's path has another role")
            .with("expected", expected)
            .with("found", found)
            .with("compared", if loc.native_role.is_empty() { "role" } else { "native_role" }));
    }
    if item.name != loc.name {
        return Err(unresolvable("the element at the locator's path has another name")
            .with("expected_name_len", loc.name.chars().count() as i64)
            .with("found", if item.secure() { String::new() } else { item.name.clone() }));
    }
    if identifier != loc.identifier {
        return Err(unresolvable("the element at the locator's path has another identifier")
            .with("expected", loc.identifier.clone())
            .with("found", identifier.to_string()));
    }
    Ok(())
}

/// Describe the element at the end of `chain` (identity + prefetch, in one
/// pipelined batch).
async fn describe_target(a: &A11y, bus: &str, frame: &str, loc: &WireLocator, chain: &[String], want: Want) -> (Result<(Item, String)>, Prefetch) {
    let n = chain.len();
    let (path, parent) = match n {
        0 => (frame, ""),
        1 => (chain[0].as_str(), frame),
        _ => (chain[n - 1].as_str(), chain[n - 2].as_str()),
    };
    let index = loc.path.last().copied().unwrap_or(0) as i32;
    tokio::join!(tree::describe_with_id(a, bus, path, parent, index), prefetch(a, bus, path, want))
}

/// Resolve a locator from the frame (after the verified prefix `known`) and
/// check the element is the same one.
pub async fn resolve_from(a: &A11y, bus: &str, frame: &str, loc: &WireLocator, known: &[String], want: Want) -> Result<Resolved> {
    let chain = resolve_path_from(a, bus, frame, &loc.path, known).await?;
    let (described, pre) = describe_target(a, bus, frame, loc, &chain, want).await;
    let (item, identifier) = described.map_err(|e| if matches!(e.code, Code::Timeout | Code::AppExited) { e } else { unresolvable(format!("element vanished: {}", e.message)) })?;
    check_identity(&item, &identifier, loc)?;
    Ok(Resolved { item, chain, pre })
}

/// What is needed to tell whether a cached frame is still the window's.
pub struct FrameFacts {
    name: Option<String>,
    extents: Option<Rect>,
}

pub async fn frame_facts(a: &A11y, fe: &FrameEntry) -> FrameFacts {
    let name = async { a.prop_string(&fe.bus, &fe.frame, I_ACCESSIBLE, "Name").await.ok() };
    if fe.by_name {
        return FrameFacts { name: name.await, extents: None };
    }
    let (name, extents) = tokio::join!(name, tree::extents(a, &fe.bus, &fe.frame));
    FrameFacts { name, extents }
}

/// Whether a cached frame is still the window's: the same test that chose it
/// (its name is the window's title; or, chosen by extents, its name is
/// unchanged and its extents still match the window's bounds).
pub fn frame_matches(fe: &FrameEntry, f: &FrameFacts, title: &str, bounds: Rect) -> bool {
    if fe.by_name {
        return f.name.as_deref().is_some_and(|n| n.trim() == title.trim());
    }
    f.name.as_deref() == Some(fe.name.as_str()) && f.extents.is_some_and(|r| tree::extents_distance(&r, &bounds) <= tree::FRAME_SLACK)
}

pub async fn frame_still_valid(a: &A11y, fe: &FrameEntry, title: &str, bounds: Rect) -> bool {
    frame_matches(fe, &frame_facts(a, fe).await, title, bounds)
}

/// What a resolution through cached guesses gave.
pub enum Fast {
    /// The cached frame is no longer the window's: resolve it again.
    FrameInvalid,
    /// The answer, exactly what `resolve_from` from the frame would give.
    Done(Result<Resolved>),
}

/// Resolve a locator through a cached frame and cached object paths of the
/// locator path's levels (`guess`, possibly shorter than the path), all
/// checked live in one pipelined batch: the frame still is the window's, and
/// GetChildAtIndex of each level's parent still answers the guessed object.
/// The element's role, name and identifier are read in the same batch (and
/// compared only if every level matched). From the first level that does not
/// match, the walk goes on one level at a time, as `resolve_from` does.
///
/// `window` gives the window's (title, bounds), or fails (then nothing else
/// counts). It is polled after the batch has been sent, so its synchronous
/// X round trip overlaps the application's work.
pub async fn resolve_cached(
    a: &A11y,
    fe: &FrameEntry,
    loc: &WireLocator,
    guess: &[String],
    want: Want,
    window: impl std::future::Future<Output = Result<(String, Rect)>>,
) -> Result<Fast> {
    let (bus, frame) = (fe.bus.as_str(), fe.frame.as_str());
    let n = loc.path.len();
    let m = guess.len().min(n);
    let guess = &guess[..m];
    let parent_at = |k: usize| if k == 0 { frame } else { guess[k - 1].as_str() };
    let links = join_all((0..m).map(|k| async move {
        a.call::<_, ObjRef>(bus, parent_at(k), I_ACCESSIBLE, "GetChildAtIndex", &(loc.path[k] as i32,)).await
    }));
    let target = async {
        if m == n {
            Some(describe_target(a, bus, frame, loc, guess, want).await)
        } else {
            None
        }
    };
    // tokio::join! polls in order on the first poll: every D-Bus call is on
    // its way before the X work (last) blocks.
    let (facts, links, target, window) = tokio::join!(frame_facts(a, fe), links, target, window);
    let (title, bounds) = window?;
    if !frame_matches(fe, &facts, &title, bounds) {
        return Ok(Fast::FrameInvalid);
    }
    let verified = links.iter().zip(guess).take_while(|(r, g)| matches!(r, Ok((_, p)) if p.as_str() == g.as_str())).count();
    if verified == n {
        if let Some((Ok((item, identifier)), pre)) = target {
            return Ok(Fast::Done(check_identity(&item, &identifier, loc).map(|_| Resolved { item, chain: guess.to_vec(), pre })));
        }
    }
    Ok(Fast::Done(resolve_from(a, bus, frame, loc, &guess[..verified], want).await))
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

/// An advertised action: its (untranslated) name and the localized name.
#[derive(Debug, Clone, Default)]
pub struct ActionName {
    /// Action.GetName: what press-like actions are chosen by. Chromium's
    /// GetActions list has empty names; GTK's has translated ones.
    pub name: String,
    pub localized: String,
}

/// Every advertised action, exactly: GetActions (one call), then GetName
/// (the untranslated name) only for the actions whose localized name is not
/// already a known untranslated one ignoring case (GTK's "Click" is "click").
/// Used where an action is about to run (one node): precision over calls.
pub async fn advertised(a: &A11y, bus: &str, path: &str) -> Result<Vec<ActionName>> {
    let v: Vec<(String, String, String)> = a.call(bus, path, I_ACTION, "GetActions", &()).await?;
    let known: Vec<Option<String>> = v.iter().map(|(localized, _, _)| vocabulary::untranslated_action(localized)).collect();
    let names = join_all(known.iter().enumerate().map(|(i, k)| async move {
        match k {
            Some(n) => Ok(n.clone()),
            None => a.call::<_, String>(bus, path, I_ACTION, "GetName", &(i as i32,)).await,
        }
    }))
    .await;
    let mut out = Vec::with_capacity(v.len());
    for ((localized, _, _), name) in v.into_iter().zip(names) {
        let name = match name {
            Ok(n) if !n.is_empty() => n,
            Err(e) if e.code == Code::AppExited => return Err(e),
            _ => localized.clone(),
        };
        out.push(ActionName { name, localized });
    }
    Ok(out)
}

/// Advertised actions for an observation (every node of a tree): GetActions
/// alone, one call per node. A known name is reported untranslated; any other
/// localized name as it is; an action without a localized name is left out
/// (LibreOffice leaves ~700 of them blank: asking GetName for each cost
/// soffice a third more CPU per observation). Press routing does not depend
/// on it (roles decide), and `click` reads the exact names with `advertised`.
pub async fn advertised_for_tree(a: &A11y, bus: &str, path: &str) -> Result<Vec<ActionName>> {
    let v: Vec<(String, String, String)> = a.call(bus, path, I_ACTION, "GetActions", &()).await?;
    Ok(v
        .into_iter()
        .filter(|(localized, _, _)| !localized.trim().is_empty())
        .map(|(localized, _, _)| ActionName { name: vocabulary::untranslated_action(&localized).unwrap_or_else(|| localized.clone()), localized })
        .collect())
}

/// Perform the action on a resolved, verified element.
pub async fn perform(a: &A11y, bus: &str, it: &Item, args: &ElementActionArgs, d: &Dispatch, pre: &Prefetch) -> Result<Outcome> {
    let path = it.path.as_str();
    let secure = it.secure();
    let has = |bit: u32| it.ifaces & bit != 0;
    let fail = |e: Error| e.recode(Code::ActionFailed);
    let done = |verified: Option<bool>, verification: Option<String>, native: &str| Outcome {
        verified,
        verification,
        native_action: Some(native.to_string()),
    };
    match args.action {
        ElementActionName::Click => {
            if !has(IF_ACTION) {
                return Err(unsupported("the element has no actions").with("reason", "no-press-like-action").with("available", ""));
            }
            let names = match &pre.actions {
                Some(n) => n.clone(),
                None => advertised(a, bus, path).await?,
            };
            let role = tree::role_name(it.role);
            let plain: Vec<String> = names.iter().map(|n| n.name.clone()).collect();
            let Some(idx) = press_like(&plain, role) else {
                return Err(unsupported(format!("the element advertises no press-like action (press, click, activate but not on a text entry, toggle, jump): {plain:?}"))
                    .with("reason", "no-press-like-action")
                    .with("available", plain.join(",")));
            };
            let name = plain[idx].clone();
            let checked_before = it.states & (1 << 4) != 0;
            d.sent.set(true);
            let ok: bool = a.call(bus, path, I_ACTION, "DoAction", &(idx as i32,)).await.map_err(fail)?;
            if !ok {
                return Err(refused(&format!("action {name:?}")));
            }
            // A predicate we can actually check: a toggle's checked state.
            if TOGGLE_ROLES.contains(&role) {
                let want_change = !matches!(role, "radio button" | "radio menu item") || !checked_before;
                let holds = |checked_after: bool| if want_change { checked_after != checked_before } else { checked_after };
                // Browsers apply it from their main loop, after answering.
                let mut checked_after = checked_before;
                for pause in std::iter::once(0).chain(READ_BACK_RETRY_MS) {
                    if pause > 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                    }
                    checked_after = match a.call::<_, Vec<u32>>(bus, path, I_ACCESSIBLE, "GetState", &()).await {
                        Ok(s) => tree::states_from_words(&s) & (1 << 4) != 0,
                        // Sent, then the application went away: not a success.
                        Err(e) if e.code == Code::AppExited => return Err(e),
                        Err(_) => return Ok(done(None, Some(format!("the state could not be read back after {name:?}")), &name)),
                    };
                    if holds(checked_after) {
                        break;
                    }
                }
                return Ok(done(
                    Some(holds(checked_after)),
                    Some(format!("checked state {checked_before} -> {checked_after} after {name:?}")),
                    &name,
                ));
            }
            Ok(done(None, None, &name))
        }
        ElementActionName::SetValue => {
            let text = args.text.clone().ok_or_else(|| Error::invalid("set_value needs text"))?;
            if has(IF_EDITABLE) {
                d.sent.set(true);
                let ok: bool = a.call(bus, path, I_EDITABLE_TEXT, "SetTextContents", &(text.as_str(),)).await.map_err(fail)?;
                if !ok {
                    return Err(refused("SetTextContents"));
                }
                const NATIVE: &str = "EditableText.SetTextContents";
                if secure {
                    return Ok(done(None, None, NATIVE));
                }
                return match read_back(a, bus, path, |b| b == text).await? {
                    Some((true, _)) => Ok(done(Some(true), Some("text read back equals the requested value".into()), NATIVE)),
                    Some((false, got)) => Err(mismatch("SetTextContents", text.chars().count(), got)),
                    None => Ok(done(None, Some("the text could not be read back".into()), NATIVE)),
                };
            }
            if has(IF_VALUE) {
                let Ok(v) = text.trim().parse::<f64>() else {
                    // A cell that shows text (Calc: a formula, a word) takes
                    // only numbers through Value: like a field without
                    // editable text, it can be typed into instead.
                    if has(IF_TEXT) {
                        return Err(unsupported("the element takes only numbers through accessibility (Value), and the text is not one").with("reason", "no-editable-text"));
                    }
                    return Err(Error::invalid("the text is not a number for a value element"));
                };
                d.sent.set(true);
                a.call::<_, ()>(bus, path, I_PROPS, "Set", &(I_VALUE, "CurrentValue", Value::from(v))).await.map_err(fail)?;
                const NATIVE: &str = "Value.CurrentValue";
                if secure {
                    return Ok(done(None, None, NATIVE));
                }
                let read = || async {
                    match a.prop(bus, path, I_VALUE, "CurrentValue").await {
                        Ok(v) => Ok(f64::try_from(v).ok()),
                        Err(e) if e.code == Code::AppExited => Err(e),
                        Err(_) => Ok(None),
                    }
                };
                let mut back = read().await?;
                for pause in READ_BACK_RETRY_MS {
                    if back.is_some_and(|b| same_number(b, v)) {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                    back = read().await?.or(back);
                }
                return match back {
                    Some(b) if same_number(b, v) => Ok(done(Some(true), Some("current value read back equals the requested value".into()), NATIVE)),
                    // The toolkit may clamp or round it (a slider's range,
                    // a spin button's step).
                    Some(_) => Err(Error::new(Code::VerificationFailed, "Value.CurrentValue was set but the value read back differs (clamped or rounded by the application?)")
                        .with("reason", "read-back-differs")),
                    None => Ok(done(None, Some("the current value could not be read back".into()), NATIVE)),
                };
            }
            // Chromium's text boxes have neither: the orchestrator can type.
            Err(unsupported("the element has neither EditableText nor Value").with("reason", "no-editable-text"))
        }
        ElementActionName::TypeText => {
            let text = args.text.clone().ok_or_else(|| Error::invalid("type_text needs text"))?;
            if !has(IF_EDITABLE) || !has(IF_TEXT) {
                return Err(unsupported("the element has no editable text").with("reason", "no-editable-text"));
            }
            let (caret, nsel) = match (pre.caret, pre.nsel) {
                (Some(c), Some(n)) => (c, n),
                _ => tokio::join!(
                    async { a.prop(bus, path, I_TEXT, "CaretOffset").await.ok().and_then(|v| i32::try_from(v).ok()).unwrap_or(-1) },
                    async { a.call::<_, i32>(bus, path, I_TEXT, "GetNSelections", &()).await.unwrap_or(0) },
                ),
            };
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
            const NATIVE: &str = "EditableText.InsertText";
            let Some(b) = before else {
                return Ok(done(None, None, NATIVE));
            };
            let mut expect: Vec<char> = b.chars().collect();
            let pos = (at as usize).min(expect.len());
            expect.splice(pos..pos, text.chars());
            let expect: String = expect.into_iter().collect();
            match read_back(a, bus, path, |af| af == expect).await? {
                Some((true, _)) => Ok(done(
                    Some(true),
                    Some(format!("text read back has the insertion at offset {at}{}", if deleted { " (selection deleted first)" } else { "" })),
                    NATIVE,
                )),
                Some((false, got)) => Err(mismatch("InsertText", expect.chars().count(), got)),
                None => Ok(done(None, Some("the text could not be read back".into()), NATIVE)),
            }
        }
        ElementActionName::SelectText => {
            let (s, e) = match (args.start, args.end) {
                (Some(s), Some(e)) if s <= e => (s as i32, e as i32),
                _ => return Err(Error::invalid("select_text needs start <= end")),
            };
            if !has(IF_TEXT) {
                return Err(unsupported("the element has no text"));
            }
            let nsel: i32 = match pre.nsel {
                Some(n) => n,
                None => a.call(bus, path, I_TEXT, "GetNSelections", &()).await.unwrap_or(0),
            };
            d.sent.set(true);
            let (ok, native): (bool, &str) = if nsel > 0 {
                (a.call(bus, path, I_TEXT, "SetSelection", &(0i32, s, e)).await.map_err(fail)?, "Text.SetSelection")
            } else {
                (a.call(bus, path, I_TEXT, "AddSelection", &(s, e)).await.map_err(fail)?, "Text.AddSelection")
            };
            if !ok {
                return Err(refused("the selection"));
            }
            let back: Option<(i32, i32)> = a.call(bus, path, I_TEXT, "GetSelection", &(0i32,)).await.ok();
            Ok(done(Some(back == Some((s, e))), Some(format!("selection read back: {back:?}")), native))
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
            // GTK 3 on Wayland sets the state from its main loop, after
            // answering: read back again a few times before saying no.
            let mut focused = false;
            for pause in std::iter::once(0).chain(READ_BACK_RETRY_MS) {
                if pause > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
                }
                let after: Vec<u32> = a.call(bus, path, I_ACCESSIBLE, "GetState", &()).await.unwrap_or_default();
                focused = tree::states_from_words(&after) & (1 << 12) != 0;
                if focused {
                    break;
                }
            }
            Ok(done(Some(focused), Some("element has the focused state".into()), "Component.GrabFocus"))
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
            Ok(done(None, None, "Component.ScrollTo"))
        }
        ElementActionName::Secondary => {
            let name = args.action_name.clone().ok_or_else(|| Error::invalid("secondary needs action_name"))?;
            if !has(IF_ACTION) {
                return Err(unsupported("the element has no actions"));
            }
            let names = match &pre.actions {
                Some(n) => n.clone(),
                None => advertised(a, bus, path).await?,
            };
            // By the native name observation showed (the untranslated one,
            // actions[].native), else a localized one (GetActions: what 1.x
            // trees showed).
            let Some(idx) = names.iter().position(|n| n.name == name).or_else(|| names.iter().position(|n| n.localized == name)) else {
                let available: Vec<&str> = names.iter().map(|n| if n.name.is_empty() { n.localized.as_str() } else { n.name.as_str() }).collect();
                return Err(unsupported(format!("the element does not advertise action {name:?}")).with("available", available.join(",")));
            };
            d.sent.set(true);
            let ok: bool = a.call(bus, path, I_ACTION, "DoAction", &(idx as i32,)).await.map_err(fail)?;
            if !ok {
                return Err(refused(&format!("action {name:?}")));
            }
            Ok(done(None, None, &name))
        }
    }
}

fn same_number(b: f64, v: f64) -> bool {
    (b - v).abs() <= f64::EPSILON * v.abs().max(1.0)
}

/// A mutation was sent but the text read back is not what it should have
/// made. Lengths only: the text may be a secret the role does not reveal.
fn mismatch(what: &str, expected_len: usize, got: Option<String>) -> Error {
    let e = Error::new(Code::VerificationFailed, format!("{what} was sent but the text read back differs from the expected text"))
        .with("reason", "read-back-differs")
        .with("expected_len", expected_len as i64);
    match got {
        Some(g) => e.with("read_back_len", g.chars().count() as i64),
        None => e,
    }
}

/// Pauses before reading the text back again when it is not yet what the
/// mutation should give: some toolkits (browsers) apply it from their main
/// loop, after answering the call.
const READ_BACK_RETRY_MS: [u64; 3] = [20, 60, 120];

/// Read the text back until `ok` accepts it or the retries are spent:
/// Some((accepted, last text read)), None when it could never be read. An
/// application that left the bus meanwhile is an error (APP_EXITED).
async fn read_back(a: &A11y, bus: &str, path: &str, ok: impl Fn(&str) -> bool) -> Result<Option<(bool, Option<String>)>> {
    let read = || async {
        match read_text(a, bus, path).await {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.code == Code::AppExited => Err(e),
            Err(_) => Ok(None),
        }
    };
    let mut last = read().await?;
    for pause in READ_BACK_RETRY_MS {
        if last.as_deref().is_some_and(&ok) {
            return Ok(Some((true, last)));
        }
        tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        if let Some(t) = read().await? {
            last = Some(t);
        }
    }
    let accepted = last.as_deref().is_some_and(&ok);
    Ok(last.is_some().then_some((accepted, last)))
}

/// What `accessible_at_chain` reads besides the node itself.
#[derive(Debug, Clone, Copy)]
pub struct AtWants {
    /// The names of the levels between the frame and the node (point_click's
    /// check), read in the same batch as the node when the guess holds.
    pub names: bool,
    /// The node's value (a text or number read after the batch).
    pub value: bool,
}

/// A hit test's answer with what acting on it needs.
#[derive(Debug, Default)]
pub struct AtHit {
    pub node: Option<WireNode>,
    /// The node as described (what `perform` takes), with its advertised actions.
    pub item: Option<Item>,
    pub actions: Option<Vec<ActionName>>,
    /// Object paths from the frame (first) down to the node (last).
    pub chain: Vec<String>,
    /// With `AtWants::names`: the name of each level between the frame and
    /// the node (chain[1..len-1]), None where it could not be read.
    pub names: Vec<Option<String>>,
}

/// What `accessible_at_chain` gave.
pub enum AtFull {
    /// The cached frame is no longer the window's.
    FrameInvalid,
    /// The answer and what was learned on the way: (path, object, extents)
    /// of every level below the frame.
    Done(Box<Result<AtHit>>, Vec<(Vec<u32>, String, Option<Rect>)>),
}

fn real_child(p: &str, cur: &str) -> bool {
    p != NULL_PATH && !p.is_empty() && p != cur
}

/// `accessible_at`, faster when earlier requests left guesses:
/// - `check`: (title, bounds) of the window when `fe` came from the cache;
///   the frame is re-checked in the first batch.
/// - `guess`: the chain of objects GetAccessibleAtPoint is expected to
///   descend through (with their paths). Every level's GetAccessibleAtPoint
///   is sent at once, each to the guessed object of the level above; the
///   answers are taken up to the first level that differs from the guess,
///   whose answer (live, from a verified object) continues the descent one
///   call at a time. The result is the same chain the sequential descent
///   finds.
/// - `path_of`: locator paths known for objects; used to check the path
///   with one GetChildAtIndex per level instead of reading whole child
///   lists. Parent of every level is read in the same batch and must be the
///   level above (else the parents are climbed one at a time, as before).
///
/// Gives the node's item, actions and chain of objects, and (`wants.names`)
/// the names of the levels above it.
#[allow(clippy::too_many_arguments)]
pub async fn accessible_at_chain(
    a: &A11y,
    fe: &FrameEntry,
    check: Option<(&str, Rect)>,
    x: i32,
    y: i32,
    guess: &[(Vec<u32>, String)],
    path_of: &dyn Fn(&str) -> Option<Vec<u32>>,
    wants: AtWants,
) -> AtFull {
    let none = || AtFull::Done(Box::new(Ok(AtHit::default())), Vec::new());
    let (bus, frame) = (fe.bus.as_str(), fe.frame.as_str());
    let at_point = |obj: String| async move { a.call::<_, ObjRef>(bus, &obj, I_COMPONENT, "GetAccessibleAtPoint", &(x, y, COORD_SCREEN)).await };
    // Descent: the guessed levels all at once.
    let asked: Vec<String> = std::iter::once(frame.to_string()).chain(guess.iter().map(|(_, o)| o.clone())).collect();
    let valid = async {
        match check {
            Some((title, bounds)) => frame_still_valid(a, fe, title, bounds).await,
            None => true,
        }
    };
    // If the guess is the whole chain, everything else the answer needs,
    // read in the same batch (used only if the descent confirms the guess).
    let guessed_chain: Vec<String> = asked.clone();
    let guessed_path: Option<Vec<u32>> = guess.last().map(|(p, _)| p.clone()).filter(|p| {
        p.len() == guess.len() && guess.iter().enumerate().all(|(k, (q, _))| q.len() == k + 1 && q[..] == p[..k + 1])
    });
    let speculative = async {
        match &guessed_path {
            // The guessed levels' extents are known already (they made the guess).
            Some(gp) if !guess.is_empty() => Some(finish_batch(a, bus, &guessed_chain, gp, &vec![true; guessed_chain.len()], wants.names).await),
            _ => None,
        }
    };
    let (valid, answers, speculative) = tokio::join!(valid, join_all(asked.iter().cloned().map(at_point)), speculative);
    if !valid {
        return AtFull::FrameInvalid;
    }
    let mut chain: Vec<String> = vec![frame.to_string()];
    let mut next: Option<String> = None;
    for (k, r) in answers.into_iter().enumerate() {
        let cur = chain.last().expect("non-empty").clone();
        let ans = match r {
            Ok((_, p)) if real_child(p.as_str(), &cur) => Some(p.to_string()),
            _ => None,
        };
        match (ans, guess.get(k)) {
            (Some(p), Some((_, g))) if p == *g => chain.push(p),
            (ans, _) => {
                next = ans;
                break;
            }
        }
    }
    // The rest of the descent, one level at a time (64 levels at most, as
    // before).
    while let Some(p) = next.take() {
        if chain.len() > 64 {
            break;
        }
        chain.push(p);
        let cur = chain.last().expect("non-empty").clone();
        if let Ok((_, p)) = at_point(cur.clone()).await {
            if real_child(p.as_str(), &cur) {
                next = Some(p.to_string());
            }
        }
    }
    if chain.len() == 1 {
        // The point may still be inside the frame itself.
        match tree::extents(a, bus, frame).await {
            Some(r) if r.contains(x, y) => {}
            _ => return none(),
        }
    }
    let fin = match speculative {
        Some(f) if chain == guessed_chain && matches!(f.path, Ok(Some(_))) => f,
        _ => {
            // Paths the cache knows for the levels, if consistent.
            let mut p: Vec<u32> = Vec::new();
            let mut ok = true;
            for (k, obj) in chain.iter().enumerate().skip(1) {
                match path_of(obj) {
                    Some(q) if q.len() == k && q[..k - 1] == p[..] => p = q,
                    _ => {
                        ok = false;
                        break;
                    }
                }
            }
            let known: Vec<bool> = chain.iter().enumerate().map(|(k, o)| k == 0 || guess.iter().any(|(_, g)| g == o)).collect();
            let mut f = finish_batch(a, bus, &chain, if ok { &p } else { &[] }, &known, wants.names).await;
            if ok && matches!(f.path, Ok(None)) {
                // The cached paths were wrong: read the child lists.
                f.path = positions_in_children(a, bus, &chain).await;
            }
            f
        }
    };
    let Finish { path, described, actions: acts, mut extents, mut names } = fin;
    let path = match path {
        Err(e) => return AtFull::Done(Box::new(Err(e)), Vec::new()),
        Ok(Some(p)) => p,
        Ok(None) => {
            // Some level is not a child of the one above (the descent skipped
            // levels): climb the parents, as the one-call-at-a-time code does.
            match climb_path(a, bus, frame, chain.last().expect("non-empty")).await {
                Ok(Some((c, p))) => {
                    chain = c;
                    extents.clear(); // they were the descent's levels
                    names.clear(); // and so were these
                    p
                }
                Ok(None) => return none(),
                Err(e) => return AtFull::Done(Box::new(Err(e)), Vec::new()),
            }
        }
    };
    let learned: Vec<(Vec<u32>, String, Option<Rect>)> = if extents.len() == chain.len() {
        (1..chain.len()).map(|k| (path[..k].to_vec(), chain[k].clone(), extents[k])).collect()
    } else {
        (1..chain.len()).map(|k| (path[..k].to_vec(), chain[k].clone(), None)).collect()
    };
    let (mut item, identifier) = match described {
        Ok(d) => d,
        Err(e) => return AtFull::Done(Box::new(Err(e)), learned),
    };
    item.parent = if chain.len() >= 2 { chain[chain.len() - 2].clone() } else { String::new() };
    item.index = path.last().copied().unwrap_or(0) as i32;
    let cur = chain.last().expect("non-empty");
    let bounds = if item.ifaces & IF_COMPONENT != 0 && item.showing() {
        match extents.last() {
            Some(e) if item.path == *cur && extents.len() == chain.len() => *e,
            _ => tree::extents(a, bus, cur).await,
        }
    } else {
        None
    };
    let advertised_actions = if item.ifaces & IF_ACTION != 0 { acts.ok() } else { Some(Vec::new()) };
    let actions = advertised_actions.clone().map(tree::native_action_names).unwrap_or_default();
    // Read after the role is known: never the text of a secure field.
    let value = if wants.value { tree::read_value(a, bus, &item).await } else { None };
    let names = if !wants.names {
        Vec::new()
    } else if names.len() + 2 == chain.len() {
        names
    } else {
        // Not read with the batch (the chain was not the guess it read them for).
        level_names(a, bus, &chain).await
    };
    let node = tree::wire_node(path, &item, tree::Details { bounds, value, actions, identifier });
    AtFull::Done(Box::new(Ok(AtHit { node: Some(node), item: Some(item), actions: advertised_actions, chain, names })), learned)
}

/// The names of the levels between the frame (chain[0]) and the node
/// (last), all asked at once; None where a read failed.
async fn level_names(a: &A11y, bus: &str, chain: &[String]) -> Vec<Option<String>> {
    if chain.len() < 3 {
        return Vec::new();
    }
    join_all(chain[1..chain.len() - 1].iter().map(|o| async move { a.prop_string(bus, o, I_ACCESSIBLE, "Name").await.ok() })).await
}

/// What the answer of a hit test needs once the chain is known.
struct Finish {
    /// The locator path, when every level is the child of the one above at
    /// that index (None: not shown so).
    path: Result<Option<Vec<u32>>>,
    described: Result<(Item, String)>,
    actions: Result<Vec<ActionName>>,
    /// Extents of every level of the chain (frame first); levels marked known
    /// are not asked again (None).
    extents: Vec<Option<Rect>>,
    /// Names of the levels between the frame and the node, when asked for.
    names: Vec<Option<String>>,
}

/// One pipelined batch: GetChildAtIndex of each level at the guessed index
/// (`path`; without one, each level's GetChildren list), the element's
/// description, id and actions, and the extents of the chain's levels.
async fn finish_batch(a: &A11y, bus: &str, chain: &[String], path: &[u32], known: &[bool], names: bool) -> Finish {
    let levels = chain.len() - 1;
    let cur = chain[levels].as_str();
    let positions = async {
        if path.len() == levels {
            let r = join_all((0..levels).map(|k| {
                let (parent, i) = (chain[k].as_str(), path[k]);
                async move { a.call::<_, ObjRef>(bus, parent, I_ACCESSIBLE, "GetChildAtIndex", &(i as i32,)).await }
            }))
            .await;
            let all = r.iter().enumerate().all(|(k, r)| matches!(r, Ok((_, p)) if p.as_str() == chain[k + 1]));
            Ok(all.then(|| path.to_vec()))
        } else {
            positions_in_children(a, bus, chain).await
        }
    };
    let extents = join_all(chain.iter().enumerate().map(|(k, o)| async move {
        if known.get(k).copied().unwrap_or(false) && k != levels {
            None
        } else {
            tree::extents(a, bus, o).await
        }
    }));
    let parent = if levels >= 1 { chain[levels - 1].as_str() } else { "" };
    let level_names = async {
        if names {
            level_names(a, bus, chain).await
        } else {
            Vec::new()
        }
    };
    let (positions, extents, described, actions, names) = tokio::join!(
        positions,
        extents,
        tree::describe_with_id(a, bus, cur, parent, path.last().copied().unwrap_or(0) as i32),
        advertised(a, bus, cur),
        level_names,
    );
    Finish { path: positions, described, actions, extents, names }
}

/// Chain of objects from the frame down to `cur` by climbing Parent, and the
/// path from each one's position in its parent's GetChildren list
/// (GetIndexInParent disagrees with GetChildAtIndex in some GTK containers).
async fn climb_path(a: &A11y, bus: &str, frame: &str, cur: &str) -> Result<Option<(Vec<String>, Vec<u32>)>> {
    let mut chain = vec![cur.to_string()];
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
    Ok(positions_in_children(a, bus, &chain).await?.map(|p| (chain, p)))
}

/// Each level's position in its parent's GetChildren list, all lists read
/// at once.
pub async fn positions_in_children(a: &A11y, bus: &str, chain: &[String]) -> Result<Option<Vec<u32>>> {
    let lists = join_all(chain[..chain.len() - 1].iter().map(|p| a.children(bus, p))).await;
    let mut path = Vec::new();
    for (i, l) in lists.into_iter().enumerate() {
        let l = l?;
        let Some(pos) = l.iter().position(|(_, p)| p.as_str() == chain[i + 1]) else { return Ok(None) };
        path.push(pos as u32);
    }
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn click_runs_only_a_press_like_action_by_name() {
        // A GTK 4 frame: its first action is not a click.
        assert_eq!(press_like(&names(&["undo", "redo"]), "frame"), None);
        assert_eq!(press_like(&names(&["SetFocus", "Press"]), "push button"), Some(1));
        assert_eq!(press_like(&names(&["click"]), "push button"), Some(0));
        assert_eq!(press_like(&names(&["showContextMenu", "jump"]), "link"), Some(1));
        assert_eq!(press_like(&names(&["open"]), "combo box"), None);
        assert_eq!(press_like(&names(&["click ancestor"]), "text"), None);
        assert_eq!(press_like(&names(&[]), "push button"), None);
        // Browsers name a check box's click by its effect.
        assert_eq!(press_like(&names(&["uncheck"]), "check box"), Some(0));
        assert_eq!(press_like(&names(&["select"]), "radio button"), Some(0));
        assert_eq!(press_like(&names(&["select"]), "list item"), None);
        assert_eq!(press_like(&names(&["check"]), "push button"), None);
        // A GTK entry's activate is Enter.
        assert_eq!(press_like(&names(&["activate"]), "text"), None);
        assert_eq!(press_like(&names(&["activate"]), "push button"), Some(0));
    }
}
