//! point_click (protocol 2.3, capability `point_click`): a click at a screen
//! point decided and sent in one request, for the orchestrator's granted
//! coordinate click (which took five requests: two window listings, two hit
//! tests and a read of the window before the input).
//!
//! In order, nothing sent until the last step:
//! 1. The top-level window at the point, asked of the X server as the input
//!    pointer guard asks it (`pointer::hit_at`): one of `windows`, or an
//!    override-redirect popup of `pid`; else POLICY_DENIED
//!    "point-outside-target".
//! 2. The accessible node there and the chain of its ancestors, as hit_test
//!    finds them (the same pipelined descent, cached guesses checked live),
//!    with the ancestors' names read in the same batch.
//! 3. With `expect` (the second request after a confirmation), the chain
//!    must still be the one confirmed, level by level (path, native role,
//!    name): else it holds ("changed").
//! 4. The names of the node and of its ancestors below the window's root
//!    are checked against `hold_words` (`may_name`): a name that may contain
//!    one holds ("name"). No node at the point holds too ("unknown"):
//!    nothing could be judged (the orchestrator sends words only for an app
//!    with a tree, and reads the window itself then). Holding sends nothing and
//!    reports the chain with full nodes, for the orchestrator's own decision
//!    (the confirm hook), after which it asks again with `expect`.
//! 5. A left single click on a press-like node (`press`: its neutral role
//!    and first action) runs that node's press-like action through
//!    accessibility, as element_action click does; anything else is XTest
//!    input on the input thread under the pointer guard, with the pointer
//!    put back, as the input op does.

use super::act::{self, Ran};
use super::window::Target;
use super::{deadline_of, resolve_frame, Ctx};
use crate::atspi::actions::{self, AtFull, AtHit, AtWants, Dispatch, Prefetch};
use crate::atspi::{tree, A11y};
use crate::error::{Code, Error, Result};
use crate::wire::codec::to_value;
use crate::wire::messages::*;
use crate::x11::{pointer, windows};
use futures_util::future::join_all;
use serde::{Deserialize, Serialize};
use std::time::Instant;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct PressRule {
    /// Neutral roles whose nodes are pressed through accessibility.
    pub roles: Vec<String>,
    /// Neutral names of the first action that make it a press.
    pub actions: Vec<String>,
}

/// One level of a chain, as `expect` names it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq)]
pub struct Level {
    pub path: Vec<u32>,
    pub native_role: String,
    pub name: String,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct PointClickArgs {
    pub x: i32,
    pub y: i32,
    pub pid: u32,
    pub button: Button,
    pub count: u8,
    pub windows: Vec<u32>,
    pub press: Option<PressRule>,
    pub hold_words: Vec<String>,
    pub expect: Option<Vec<Level>>,
    pub restore_pointer: bool,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ClickOutcome {
    Pressed,
    Clicked,
    Held,
}

#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Held {
    Name,
    Changed,
    Unknown,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct PointClickResult {
    pub outcome: ClickOutcome,
    pub held: Option<Held>,
    pub window_id: u32,
    pub node: Option<WireNode>,
    pub ancestors: Vec<WireNode>,
    pub native_action: Option<String>,
    pub verified: Option<bool>,
    pub verification: Option<String>,
}

/// Whether a control's name may contain one of `words` (lowercase ASCII):
/// an ASCII case-insensitive substring match, and any name with a character
/// outside ASCII counts as may. Wider than the orchestrator's own test
/// (whole words after NFKC and case folding, src/policy/sensitive.ts): on an
/// ASCII name, a whole word is a substring, and nothing outside ASCII folds
/// into ASCII unseen here; a wider test only holds more often (the
/// orchestrator then decides), never lets a click it would confirm through.
pub fn may_name(name: &str, words: &[String]) -> bool {
    if words.is_empty() {
        return false;
    }
    if !name.is_ascii() {
        return true;
    }
    let lower = name.to_ascii_lowercase();
    words.iter().any(|w| !w.is_empty() && lower.contains(w.as_str()))
}

/// The levels `expect` is compared with: the ancestors below the root, then
/// the node.
pub fn levels(node: Option<&WireNode>, ancestors: &[WireNode]) -> Vec<Level> {
    ancestors
        .iter()
        .chain(node)
        .map(|n| Level { path: n.path.clone(), native_role: n.native_role.clone(), name: n.name.clone() })
        .collect()
}

/// Whether a node takes the press route: its neutral role is one of the
/// rule's and its first advertised action's neutral name is one of the rule's.
pub fn press_like(n: &WireNode, rule: &PressRule) -> bool {
    let role_ok = rule.roles.iter().any(|r| r == n.role.as_str());
    let first_ok = n.actions.first().is_some_and(|a| rule.actions.iter().any(|x| x == a.name.as_str()));
    role_ok && first_ok
}

/// What the hit test found, with what the click needs.
pub(crate) struct Found {
    /// The app's bus name and the window's frame accessible.
    pub bus: String,
    pub hit: AtHit,
}

fn receipt(route: Route, delivery: Delivery) -> Receipt {
    match route {
        Route::Accessibility => Receipt::accessibility(delivery),
        _ => act::input_receipt(delivery, Cleanup { keys_released: true, buttons_released: true, pointer_restored: None }),
    }
}

pub async fn point_click(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let (d, deadline) = deadline_of(deadline_ms);
    let t0 = Instant::now();
    let phase = |what: &str| {
        if crate::debug() {
            eprintln!("deckhand-helper-linux: point_click #{id}: {what} at {:.2} ms", t0.elapsed().as_secs_f64() * 1e3);
        }
    };
    let refuse = |e: &Error| Response::err(id, e, Some(receipt(Route::ForegroundInput, Delivery::NotDispatched)));
    let mut a: PointClickArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    if !(1..=3).contains(&a.count) {
        return refuse(&Error::invalid("point_click count must be 1-3"));
    }
    for w in a.hold_words.iter_mut() {
        w.make_ascii_lowercase();
    }
    // 1. The window at the point: the guard's own test, before anything else.
    let guard = PointerGuard { pid: a.pid, windows: a.windows.clone() };
    let looked = match super::window::sway_socket() {
        Err(e) => Err(e),
        Ok(None) => ctx.with_x(|x| {
            let hit = pointer::hit_at(x, a.x, a.y, &mut pointer::Cache::default())?;
            let info = if hit.client != 0 { windows::window_info(x, hit.client).ok() } else { None };
            Ok((hit, info.map(|info| Target { info, content: None, popup: None })))
        }),
        // Wayland: the input pointer guard's own verdict from sway's tree
        // (the topmost shown view's frame), then that view as a target.
        Ok(Some(sock)) => crate::wayland::sway::list(&sock).and_then(|views| {
            crate::wayland::guard::judge(&views, &guard, a.x, a.y)?;
            let v = crate::wayland::guard::topmost_at(&views, a.x, a.y).expect("the guard found a view there");
            let target = super::window::of_view(v);
            Ok((pointer::Hit { frame: v.con_id, client: v.con_id, override_redirect: false, pid: v.pid }, Some(target)))
        }),
    };
    let (hit, info) = match looked {
        Ok(h) => h,
        Err(e) => return refuse(&e),
    };
    if !pointer::accepts(&hit, &guard) || hit.pid.is_some_and(|p| p != a.pid) {
        return refuse(&hit.refusal(a.x, a.y));
    }
    let window_id = hit.client;
    phase("window");
    let held = |why: Held, node: Option<WireNode>, ancestors: Vec<WireNode>, route: Route| {
        let r = PointClickResult { outcome: ClickOutcome::Held, held: Some(why), window_id, node, ancestors, native_action: None, verified: None, verification: None };
        Response::ok(id, to_value(&r), Some(receipt(route, Delivery::NotDispatched)))
    };
    // 2. The node and its chain.
    let found = match info {
        // An open menu on Wayland (an xdg_popup sway does not list) may lie
        // over the point: no node then, as hit_test says (never the node beneath).
        Some(w) if w.content.is_some() && super::observe::wayland_menu_open(ctx, a.pid).await.ok() != Some(Some(false)) => None,
        Some(w) => match tokio::time::timeout(d, chain_at(ctx, a.pid, &w, a.x, a.y, AtWants { names: true, value: false })).await {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => {
                ctx.a11y_failed(&e);
                return refuse(&act::if_exited(e, a.pid));
            }
            Err(_) => return refuse(&Error::timeout(format!("point_click's hit test did not finish within {} ms", d.as_millis()))),
        },
        None => None,
    };
    phase("hit test");
    let node = found.as_ref().and_then(|f| f.hit.node.clone());
    let single_left = a.button == Button::Left && a.count == 1;
    let press = match (&a.press, &node) {
        (Some(rule), Some(n)) if single_left && press_like(n, rule) => true,
        _ => false,
    };
    let route = if press { Route::Accessibility } else { Route::ForegroundInput };
    // 3.-4. The orchestrator's decision, where it needs the chain.
    let names_may = || {
        let Some(f) = &found else { return false };
        let ancestors_may = f.hit.names.iter().any(|n| n.as_deref().is_none_or(|n| may_name(n, &a.hold_words)));
        ancestors_may || node.as_ref().is_some_and(|n| may_name(&n.name, &a.hold_words))
    };
    let full_ancestors = || async {
        match &found {
            Some(f) => describe_levels(&ctx.a11y().await?, &f.bus, &f.hit).await,
            None => Ok(Vec::new()),
        }
    };
    if let Some(expected) = &a.expect {
        let ancestors = match full_ancestors().await {
            Ok(v) => v,
            Err(e) => return refuse(&e),
        };
        if levels(node.as_ref(), &ancestors) != *expected {
            return held(Held::Changed, node, ancestors, route);
        }
    } else if !a.hold_words.is_empty() && node.is_none() {
        // Nothing to judge the click by (the orchestrator sends words only
        // for an app with a tree): it reads the window itself.
        return held(Held::Unknown, None, Vec::new(), route);
    } else if names_may() {
        let ancestors = match full_ancestors().await {
            Ok(v) => v,
            Err(e) => return refuse(&e),
        };
        return held(Held::Name, node, ancestors, route);
    }
    // 5. The click.
    if press {
        let f = found.expect("a press-like node was found");
        return press_node(ctx, id, &a, window_id, f, deadline).await;
    }
    let step = InputStep::Click { x: a.x, y: a.y, button: a.button, count: a.count, modifiers: Vec::new() };
    match act::run_input(ctx, id, d, deadline, vec![step], a.restore_pointer, None, Some(guard)).await {
        Ran::Done(o) => {
            let r = PointClickResult { outcome: ClickOutcome::Clicked, held: None, window_id, node, ancestors: Vec::new(), native_action: None, verified: None, verification: None };
            act::answer_input(id, o, 1, to_value(&r))
        }
        Ran::Failed(e, r) => Response::err(id, &e, Some(r)),
    }
}

/// The node at the point in window `w` and its chain (None when the app has
/// no accessible there): point_click's and observe's hit_test's one descent.
pub(crate) async fn chain_at(ctx: &Ctx, pid: u32, target: &Target, x: i32, y: i32, wants: AtWants) -> Result<Option<Found>> {
    let w = &target.info;
    let a = ctx.a11y().await?;
    let r: Result<Found> = async {
        let cached = ctx.resolved.borrow().frame(pid, w.id);
        let (mut fe, mut check) = match cached {
            Some(fe) => (fe, true),
            None => (resolve_frame(ctx, &a, pid, w).await?, false),
        };
        loop {
            // GTK 4.8 takes and gives window-relative coordinates for
            // COORD_SCREEN (tree::View): ask relative to the window, move
            // the answer's bounds back to the screen.
            // A Wayland surface's origin is read afresh (sway moves windows
            // without the app knowing): never the cached view.
            let cached_view = if target.content.is_some() { None } else { ctx.resolved.borrow().view(&fe.bus, &fe.frame) };
            let view = match cached_view {
                Some(v) => v,
                None => {
                    let v = target.view(&a, &fe.bus, &fe.frame).await;
                    ctx.resolved.borrow_mut().set_view(&fe.bus, &fe.frame, v);
                    v
                }
            };
            let (qx, qy) = (x - view.offset.0, y - view.offset.1);
            let guess = ctx.resolved.borrow().tree(&fe.bus, &fe.frame).map(|t| t.predict_at(x, y)).unwrap_or_default();
            let (bus, frame) = (fe.bus.clone(), fe.frame.clone());
            let path_of = |o: &str| ctx.resolved.borrow().tree(&bus, &frame).and_then(|t| t.paths.get(o).cloned());
            let chk = if check { Some((w.title.as_str(), w.bounds)) } else { None };
            match actions::accessible_at_chain(&a, &fe, chk, qx, qy, &guess, &path_of, wants).await {
                AtFull::FrameInvalid => {
                    ctx.resolved.borrow_mut().forget_frame(pid, w.id);
                    fe = resolve_frame(ctx, &a, pid, w).await?;
                    check = false;
                }
                AtFull::Done(r, learned) => {
                    let shifted = view.offset != (0, 0);
                    {
                        let mut c = ctx.resolved.borrow_mut();
                        let t = c.tree_mut(&fe.bus, &fe.frame);
                        for (p, o, b) in learned {
                            t.insert(p, o, if shifted { None } else { b });
                        }
                    }
                    let mut hit = (*r)?;
                    if let Some(n) = &mut hit.node {
                        if shifted || view.visible_ok {
                            let obj = hit.chain.last().cloned();
                            let raw = match obj {
                                Some(o) if n.path.is_empty() || n.bounds.is_none() => tree::extents(&a, &fe.bus, &o).await,
                                _ => n.bounds,
                            };
                            n.bounds = raw.map(|b| Rect::new(b.x.saturating_add(view.offset.0), b.y.saturating_add(view.offset.1), b.width, b.height));
                        }
                    }
                    return Ok(Found { bus: fe.bus.clone(), hit });
                }
            }
        }
    }
    .await;
    match r {
        Ok(f) => Ok(Some(f)),
        Err(e) if matches!(e.code, Code::AppNotFound | Code::WindowNotFound | Code::ElementUnresolvable) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Full nodes of the levels between the frame and the node (outermost
/// first), all read at once: what the confirm decision reads of them.
async fn describe_levels(a: &A11y, bus: &str, hit: &AtHit) -> Result<Vec<WireNode>> {
    let Some(node) = &hit.node else { return Ok(Vec::new()) };
    let chain = &hit.chain;
    if chain.len() < 3 || node.path.len() + 1 != chain.len() {
        return Ok(Vec::new());
    }
    let levels = join_all((1..chain.len() - 1).map(|k| {
        let (obj, parent) = (chain[k].as_str(), chain[k - 1].as_str());
        let index = node.path[k - 1] as i32;
        let path = node.path[..k].to_vec();
        async move {
            let (described, acts, bounds) =
                tokio::join!(tree::describe_with_id(a, bus, obj, parent, index), actions::advertised_for_tree(a, bus, obj), tree::extents(a, bus, obj));
            let (item, identifier) = described?;
            let acts = if item.ifaces & tree::IF_ACTION != 0 { acts.map(tree::native_action_names).unwrap_or_default() } else { Vec::new() };
            Ok(tree::wire_node(path, &item, tree::Details { bounds, value: None, actions: acts, identifier }))
        }
    }))
    .await;
    levels.into_iter().collect()
}

/// The press route: the node's press-like action through accessibility,
/// answered as element_action answers a click (its read-back, APP_EXITED
/// for an app that died on it, what was sent on a failure).
async fn press_node(ctx: &Ctx, id: u64, a: &PointClickArgs, window_id: u32, f: Found, deadline: Instant) -> Response {
    let node = f.hit.node.clone().expect("pressed nodes are found");
    let item = f.hit.item.clone().expect("a found node has its item");
    let dispatch = Dispatch::default();
    let locator = WireLocator { path: node.path.clone(), role: node.role, native_role: node.native_role.clone(), name: node.name.clone(), identifier: node.identifier.clone() };
    let args = ElementActionArgs { pid: a.pid, window_id, locator, action: ElementActionName::Click, text: None, start: None, end: None, action_name: None };
    let pre = Prefetch { actions: f.hit.actions.clone(), ..Default::default() };
    let left = deadline.saturating_duration_since(Instant::now());
    let r = match ctx.a11y().await {
        Ok(acc) => tokio::time::timeout(left, actions::perform(&acc, &f.bus, &item, &args, &dispatch, &pre)).await,
        Err(e) => Ok(Err(e)),
    };
    let sent = dispatch.sent.get();
    let answered = |o: actions::Outcome| PointClickResult {
        outcome: ClickOutcome::Pressed,
        held: None,
        window_id,
        node: Some(node.clone()),
        ancestors: Vec::new(),
        native_action: o.native_action,
        verified: o.verified,
        verification: o.verification,
    };
    match r {
        Ok(Ok(_)) if act::process_gone(a.pid) => {
            let e = Error::new(Code::AppExited, format!("the application (pid {}) exited right after accepting the action", a.pid)).with("pid", a.pid);
            Response::err(id, &e, Some(Receipt::accessibility(Delivery::Submitted)))
        }
        Ok(Ok(o)) => Response::ok(id, to_value(&answered(o)), Some(Receipt::accessibility(Delivery::Submitted))),
        Ok(Err(e)) => {
            ctx.a11y_failed(&e);
            let e = act::if_exited(e, a.pid);
            let delivery = match (sent, e.code) {
                (false, _) => Delivery::NotDispatched,
                (true, Code::Timeout) => Delivery::Unknown,
                (true, _) => Delivery::Submitted,
            };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
        Err(_) => {
            let e = act::if_exited(Error::timeout("point_click's press did not finish within its deadline"), a.pid);
            let delivery = match (sent, e.code) {
                (false, _) => Delivery::NotDispatched,
                (true, Code::AppExited) => Delivery::Submitted,
                (true, _) => Delivery::Unknown,
            };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::vocabulary::{ActionName, Role};

    fn words() -> Vec<String> {
        ["delete", "erase", "pay", "purchase", "send", "submit", "transfer", "quit"].iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn names_that_may_hold_a_word_hold() {
        let w = words();
        for held in ["Delete", "DELETE ALL", "Send & archive", "delete_row", "Pay now", "Quit", "xSUBMITx", "Undelete", "Sender", "PayPal"] {
            assert!(may_name(held, &w), "{held:?} must hold");
        }
        // Outside ASCII: folding, compatibility forms and invisible characters
        // are the orchestrator's to judge, so any of them holds.
        for held in ["ſend", "ｄｅｌｅｔｅ", "De\u{00ad}lete", "Sen\u{200b}d", "Löschen", "送信"] {
            assert!(may_name(held, &w), "{held:?} must hold");
        }
        for clear in ["", "OK", "Canvas", "Save", "Row 2", "Name", "Open file"] {
            assert!(!may_name(clear, &w), "{clear:?} must not hold");
        }
        // No words: nothing holds (a right click confirms nothing).
        assert!(!may_name("Delete", &[]));
        assert!(!may_name("Löschen", &[]));
    }

    fn node(path: &[u32], role: Role, native: &str, name: &str, actions: &[ActionName]) -> WireNode {
        WireNode {
            path: path.to_vec(),
            role,
            native_role: native.into(),
            name: name.into(),
            description: String::new(),
            value: None,
            states: Vec::new(),
            bounds: None,
            actions: actions.iter().map(|&a| NodeAction { name: a, native: a.as_str().into() }).collect(),
            identifier: String::new(),
            secure: false,
            child_count: 0,
        }
    }

    #[test]
    fn the_press_route_is_the_rule_s_roles_and_first_action() {
        let rule = PressRule { roles: vec!["button".into(), "checkbox".into()], actions: vec!["press".into(), "toggle".into()] };
        assert!(press_like(&node(&[0], Role::Button, "push button", "OK", &[ActionName::Press]), &rule));
        assert!(press_like(&node(&[0], Role::Checkbox, "check box", "Subscribe", &[ActionName::Toggle]), &rule));
        // A canvas, a node without actions, a press that is not the first action.
        assert!(!press_like(&node(&[0], Role::Other, "drawing area", "Canvas", &[]), &rule));
        assert!(!press_like(&node(&[0], Role::Button, "push button", "OK", &[]), &rule));
        assert!(!press_like(&node(&[0], Role::Button, "push button", "OK", &[ActionName::Other, ActionName::Press]), &rule));
        assert!(!press_like(&node(&[0], Role::TextField, "text", "Name", &[ActionName::Press]), &rule));
    }

    #[test]
    fn levels_are_the_ancestors_then_the_node() {
        let anc = vec![node(&[0], Role::Container, "filler", "", &[]), node(&[0, 1], Role::Container, "panel", "Tools", &[])];
        let n = node(&[0, 1, 2], Role::Button, "push button", "Delete", &[ActionName::Press]);
        let l = levels(Some(&n), &anc);
        assert_eq!(l.len(), 3);
        assert_eq!(l[2], Level { path: vec![0, 1, 2], native_role: "push button".into(), name: "Delete".into() });
        assert_eq!(l[1].name, "Tools");
        assert!(levels(None, &[]).is_empty(), "no node: the empty chain");
        // A renamed node is another chain.
        let renamed = node(&[0, 1, 2], Role::Button, "push button", "Delete all", &[ActionName::Press]);
        assert_ne!(levels(Some(&renamed), &anc), l);
    }

    #[test]
    fn args_decode_with_and_without_expect() {
        let v = to_value(&PointClickArgs {
            x: 10,
            y: 20,
            pid: 42,
            button: Button::Left,
            count: 1,
            windows: vec![7],
            press: Some(PressRule { roles: vec!["button".into()], actions: vec!["press".into()] }),
            hold_words: words(),
            expect: None,
            restore_pointer: true,
        });
        let a: PointClickArgs = decode_args(&v).unwrap();
        assert_eq!((a.x, a.y, a.pid, a.count, a.windows.clone()), (10, 20, 42, 1, vec![7]));
        assert!(a.expect.is_none());
        let r = PointClickResult { outcome: ClickOutcome::Held, held: Some(Held::Name), window_id: 7, node: None, ancestors: vec![], native_action: None, verified: None, verification: None };
        let back: PointClickResult = decode_args(&to_value(&r)).unwrap();
        assert_eq!((back.outcome, back.held), (ClickOutcome::Held, Some(Held::Name)));
    }
}
