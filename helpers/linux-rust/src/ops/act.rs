//! Mutating ops (element_action, input: always with a receipt) and
//! watch_user_input.

use super::{deadline_of, resolve_frame, send_event, Ctx};
use crate::atspi::actions::{self, Dispatch, Fast, Want};
use crate::error::{Code, Error, Result};
use crate::wire::codec::to_value;
use crate::wire::messages::*;
use crate::x11::{input, watch::Watcher, windows};
use std::time::Instant;

pub async fn element_action(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let refuse = |e: &Error| Response::err(id, e, Some(Receipt::accessibility(Delivery::NotDispatched)));
    let a: ElementActionArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    let (d, _deadline) = deadline_of(deadline_ms);
    let dispatch = Dispatch::default();
    let work = async {
        // The X facts of the window; it must belong to `pid`.
        let window = || {
            ctx.with_x(|x| windows::window_info(x, a.window_id)).and_then(|w| match w.pid {
                Some(p) if p != a.pid => {
                    Err(Error::new(Code::WindowNotFound, format!("window {} belongs to pid {p}, not {}", a.window_id, a.pid)))
                }
                _ => Ok(w),
            })
        };
        let acc = ctx.a11y().await?;
        let want = Want::for_action(a.action);
        // Fast path: the frame and the path's objects as earlier requests
        // found them, every guess checked live before anything is done; the
        // X check of the window runs while the application answers.
        let cached = ctx.resolved.borrow().frame(a.pid, a.window_id);
        let mut w_known = None;
        let mut done = None;
        if let Some(fe) = cached {
            let guess = ctx.resolved.borrow().tree(&fe.bus, &fe.frame).map(|t| t.chain(&a.locator.path)).unwrap_or_default();
            let wslot = &mut w_known;
            let win = async move {
                let w = window()?;
                let tb = (w.title.clone(), w.bounds);
                *wslot = Some(w);
                Ok(tb)
            };
            match actions::resolve_cached(&acc, &fe, &a.locator, &guess, want, win).await? {
                Fast::FrameInvalid => ctx.resolved.borrow_mut().forget_frame(a.pid, a.window_id),
                Fast::Done(r) => done = Some((fe, r)),
            }
        }
        let (fe, r) = match done {
            Some(x) => x,
            None => {
                let w = match w_known {
                    Some(w) => w,
                    None => window()?,
                };
                let fe = resolve_frame(ctx, &acc, a.pid, &w).await?;
                let r = actions::resolve_from(&acc, &fe.bus, &fe.frame, &a.locator, &[], want).await;
                (fe, r)
            }
        };
        let r = r?;
        {
            let mut c = ctx.resolved.borrow_mut();
            let t = c.tree_mut(&fe.bus, &fe.frame);
            for (k, obj) in r.chain.iter().enumerate() {
                t.insert(a.locator.path[..=k].to_vec(), obj.clone(), None);
            }
        }
        actions::perform(&acc, &fe.bus, &r.item, &a, &dispatch, &r.pre).await
    };
    let r = tokio::time::timeout(d, work).await;
    let sent = dispatch.sent.get();
    match r {
        Ok(Ok(o)) => Response::ok(
            id,
            to_value(&ElementActionResult { performed: true, verified: o.verified, verification: o.verification }),
            Some(Receipt::accessibility(Delivery::Submitted)),
        ),
        Ok(Err(e)) => {
            ctx.a11y_failed(&e);
            let delivery = match (sent, e.code) {
                (false, _) => Delivery::NotDispatched,
                (true, Code::Timeout) => Delivery::Unknown,
                (true, _) => Delivery::Submitted,
            };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
        Err(_) => {
            let e = Error::timeout(format!("element_action did not finish within {} ms", d.as_millis()));
            let delivery = if sent { Delivery::Unknown } else { Delivery::NotDispatched };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
    }
}

fn input_receipt(delivery: Delivery, cleanup: Cleanup) -> Receipt {
    Receipt { delivery, route: Route::ForegroundInput, cleanup }
}

pub async fn input(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let nothing = Cleanup { keys_released: true, buttons_released: true, pointer_restored: None };
    let a: InputArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return Response::err(id, &e, Some(input_receipt(Delivery::NotDispatched, nothing))),
    };
    if a.steps.is_empty() {
        return Response::err(id, &Error::invalid("input needs at least one step"), Some(input_receipt(Delivery::NotDispatched, nothing)));
    }
    if let Err(e) = input::validate(&a.steps) {
        return Response::err(id, &e, Some(input_receipt(Delivery::NotDispatched, nothing)));
    }
    let (_, deadline) = deadline_of(deadline_ms);
    let outcome = ctx.with_x(|x| Ok(input::run(x, &a.steps, a.restore_pointer, deadline, &|| ctx.is_cancelled(id))));
    let o = match outcome {
        Ok(o) => o,
        Err(e) => return Response::err(id, &e, Some(input_receipt(Delivery::NotDispatched, nothing))),
    };
    let total = a.steps.len() as u32;
    match o.error {
        None => Response::ok(
            id,
            to_value(&InputResult { steps_completed: o.steps_completed }),
            Some(input_receipt(Delivery::Submitted, o.cleanup)),
        ),
        Some(e) => {
            let delivery = if !o.anything_sent {
                Delivery::NotDispatched
            } else if o.steps_completed < total {
                Delivery::Partial
            } else {
                Delivery::Submitted
            };
            let e = e.with("steps_completed", o.steps_completed);
            Response::err(id, &e, Some(input_receipt(delivery, o.cleanup)))
        }
    }
}

pub async fn watch_user_input(ctx: &Ctx, a: WatchArgs) -> Result<WatchResult> {
    if a.enabled && ctx.watcher.borrow().is_none() {
        let out = ctx.out.clone();
        let w = Watcher::start(Box::new(move |kind| {
            let data = rmpv::Value::Map(vec![(rmpv::Value::from("kind"), rmpv::Value::from(kind))]);
            send_event(&out, "user_input", data);
        }))?;
        *ctx.watcher.borrow_mut() = Some(w);
    }
    if let Some(w) = ctx.watcher.borrow().as_ref() {
        w.set(a.enabled)?;
    }
    let _ = Instant::now();
    Ok(WatchResult { watching: a.enabled })
}
