//! Mutating ops (element_action, input: always with a receipt),
//! watch_user_input and set_accessibility.

use super::{deadline_of, resolve_frame, send_event, Ctx};
use crate::atspi::actions::{self, Dispatch, Fast, Want};
use crate::atspi::{self, within};
use crate::error::{Code, Error, Result};
use crate::wire::codec::to_value;
use crate::wire::messages::*;
use crate::x11::{input, watch::Watcher, X};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub async fn element_action(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let refuse = |e: &Error| Response::err(id, e, Some(Receipt::accessibility(Delivery::NotDispatched)));
    let a: ElementActionArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    let (d, _deadline) = deadline_of(deadline_ms);
    let dispatch = Dispatch::default();
    let work = async {
        // The window's facts (X11 or sway; `window::facts`); it must belong to `pid`.
        let window = || {
            super::window::facts(ctx, a.window_id).map(|t| t.info).and_then(|w| match w.pid {
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
        // The application accepted the action, then exited (the action's
        // own effect, or a crash it caused): not a plain success.
        Ok(Ok(_)) if process_gone(a.pid) => {
            let e = Error::new(Code::AppExited, format!("the application (pid {}) exited right after accepting the action", a.pid)).with("pid", a.pid);
            Response::err(id, &e, Some(Receipt::accessibility(Delivery::Submitted)))
        }
        Ok(Ok(o)) => Response::ok(
            id,
            to_value(&ElementActionResult { performed: true, verified: o.verified, verification: o.verification, native_action: o.native_action }),
            Some(Receipt::accessibility(Delivery::Submitted)),
        ),
        Ok(Err(e)) => {
            ctx.a11y_failed(&e);
            let e = if_exited(e, a.pid);
            let delivery = match (sent, e.code) {
                (false, _) => Delivery::NotDispatched,
                (true, Code::Timeout) => Delivery::Unknown,
                (true, _) => Delivery::Submitted,
            };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
        Err(_) => {
            let e = if_exited(Error::timeout(format!("element_action did not finish within {} ms", d.as_millis())), a.pid);
            let delivery = match (sent, e.code) {
                (false, _) => Delivery::NotDispatched,
                // The call was sent and its sender is gone: no answer can come.
                (true, Code::AppExited) => Delivery::Submitted,
                (true, _) => Delivery::Unknown,
            };
            Response::err(id, &e, Some(Receipt::accessibility(delivery)))
        }
    }
}

/// Whether the process is gone: no /proc entry, or a zombie (dead, not yet
/// reaped by its parent) or dead ('X').
pub fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => matches!(stat_state(&stat), Some('Z' | 'X' | 'x')),
    }
}

/// Field 3 of /proc/PID/stat (after the comm's last ')').
fn stat_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].split_whitespace().next()?.chars().next()
}

/// D-Bus errors after which the application is not there to act on.
fn bus_says_gone(e: &Error) -> bool {
    e.details.iter().any(|(k, v)| {
        k == "dbus_error"
            && matches!(v, crate::error::Detail::Str(n) if crate::error::peer_gone(n, &e.message) || n.ends_with(".Disconnected"))
    })
}

/// An error of an action whose application died (or left the bus) during
/// it is reported as APP_EXITED, whatever the failing call made of it (an
/// unresolvable element, a name mismatch, a refused action, a timeout):
/// checked when something failed, never on success.
pub fn if_exited(e: Error, pid: u32) -> Error {
    if e.code == Code::AppExited {
        return e.with("pid", pid);
    }
    if matches!(e.code, Code::InvalidArguments) {
        return e;
    }
    let gone = process_gone(pid);
    if !gone && !bus_says_gone(&e) {
        return e;
    }
    let what = if gone { "exited" } else { "left the accessibility bus" };
    let mut x = Error::new(Code::AppExited, format!("the application (pid {pid}) {what} during the action: {}", e.message));
    x.details = e.details;
    x.with("pid", pid).with("was", e.code.as_str())
}

pub fn input_receipt(delivery: Delivery, cleanup: Cleanup) -> Receipt {
    Receipt { delivery, route: Route::ForegroundInput, cleanup }
}

/// How long after the deadline we stop waiting for the input thread (it
/// honours the deadline itself; this only covers an X server that hangs).
/// Well inside the orchestrator's grace.
const INPUT_LATE: Duration = Duration::from_millis(150);

pub async fn input(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    // The deadline runs from here, before decoding the steps (a drag of
    // 100,000 points takes ~40 ms to decode): the orchestrator counts it
    // from sending.
    let (d, deadline) = deadline_of(deadline_ms);
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
    let total = a.steps.len() as u32;
    let o = match run_input(ctx, id, d, deadline, a.steps, a.restore_pointer, a.focus, a.pointer_guard).await {
        Ran::Done(o) => o,
        Ran::Failed(e, receipt) => return Response::err(id, &e, Some(receipt)),
    };
    let result = InputResult { steps_completed: o.steps_completed, chars_sent: o.chars_sent, focus_window: o.focus_window };
    answer_input(id, o, total, to_value(&result))
}

/// The answer to input steps that ran: `result` with a submitted receipt,
/// or the step's error with what was sent (nothing, part, all).
pub fn answer_input(id: u64, o: input::Outcome, total: u32, result: rmpv::Value) -> Response {
    match o.error {
        None => Response::ok(id, result, Some(input_receipt(Delivery::Submitted, o.cleanup))),
        Some(e) => {
            let delivery = if !o.anything_sent {
                Delivery::NotDispatched
            } else if o.steps_completed < total {
                Delivery::Partial
            } else {
                Delivery::Submitted
            };
            let e = e.with("steps_completed", o.steps_completed).with("chars_sent", o.chars_sent);
            Response::err(id, &e, Some(input_receipt(delivery, o.cleanup)))
        }
    }
}

/// What running input steps on the input thread gave.
pub enum Ran {
    /// They ran (each step's own outcome inside).
    Done(input::Outcome),
    /// The input thread could not run them, or did not answer in time: the
    /// error and the receipt to answer with.
    Failed(Error, Receipt),
}

/// Run validated input steps on the input thread (blocking X calls and
/// sleeps there do not hold up other requests), seeing the request's
/// cancel, the broken output, or our giving up on it (`abandon`).
#[allow(clippy::too_many_arguments)]
pub async fn run_input(
    ctx: &Ctx,
    id: u64,
    d: Duration,
    deadline: Instant,
    steps: Vec<InputStep>,
    restore_pointer: bool,
    focus: Option<FocusGuard>,
    pointer_guard: Option<PointerGuard>,
) -> Ran {
    let nothing = Cleanup { keys_released: true, buttons_released: true, pointer_restored: None };
    let cancelled = ctx.cancelled.clone();
    let abandon = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicBool::new(false));
    let (abandon_w, started_w) = (abandon.clone(), started.clone());
    let job = move |conn: &mut Option<X>| -> Result<input::Outcome> {
        let stop = || {
            abandon_w.load(Ordering::Relaxed)
                || super::OUTPUT_CLOSED.load(Ordering::Relaxed)
                || cancelled.lock().map(|s| s.contains(&id)).unwrap_or(false)
        };
        if stop() {
            // Cancelled or abandoned while queued behind another input.
            return Ok(input::Outcome::not_started(Error::new(Code::ActionFailed, "cancelled before step 0").with("cancelled", true)));
        }
        started_w.store(true, Ordering::Relaxed);
        // Marks the input thread busy until this job ends (also by a panic):
        // a helper whose stdout broke waits for that before exiting.
        struct Busy;
        impl Drop for Busy {
            fn drop(&mut self) {
                super::input_ended();
            }
        }
        super::INPUT_BUSY.store(true, Ordering::Relaxed);
        let _busy = Busy;
        // ---- issue 19: on sway, the helper's virtual keyboard and pointer
        // (they live on this thread); other Wayland compositors: refused.
        match crate::wayland::backend() {
            crate::wayland::Backend::Sway { socket } => return Ok(crate::wayland::input::run(socket, &steps, focus, pointer_guard, deadline, &stop)),
            crate::wayland::Backend::Wayland { missing } => {
                return Err(Error::new(Code::ActionUnsupported, format!("input on Wayland needs sway: {missing}")).with("reason", "wayland-backend"))
            }
            crate::wayland::Backend::X11 => {}
        }
        // ---- end Wayland
        if conn.is_none() {
            *conn = Some(X::connect()?);
        }
        let x = conn.as_mut().expect("connected above");
        let o = input::run(x, &steps, restore_pointer, focus, pointer_guard, deadline, &stop);
        if o.error.as_ref().is_some_and(|e| e.message.starts_with("X connection")) {
            *conn = None; // reconnect for the next input
        }
        Ok(o)
    };
    match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline + INPUT_LATE), ctx.input.run(job)).await {
        Ok(Ok(Ok(o))) => Ran::Done(o),
        // The input thread failed before sending anything (no X connection).
        Ok(Ok(Err(e))) => Ran::Failed(e, input_receipt(Delivery::NotDispatched, nothing)),
        // The job panicked (a bug). If it had started, events may have been
        // sent; the session's Drop released what it held, but nothing of that
        // can be reported as certain.
        Ok(Err(e)) if started.load(Ordering::Relaxed) => {
            let unknown = Cleanup { keys_released: false, buttons_released: false, pointer_restored: None };
            Ran::Failed(e, input_receipt(Delivery::Unknown, unknown))
        }
        Ok(Err(e)) => Ran::Failed(e, input_receipt(Delivery::NotDispatched, nothing)),
        Err(_) => {
            abandon.store(true, Ordering::Relaxed);
            let e = Error::timeout(format!("input did not finish within {} ms", d.as_millis()));
            if started.load(Ordering::Relaxed) {
                let unknown = Cleanup { keys_released: false, buttons_released: false, pointer_restored: None };
                Ran::Failed(e, input_receipt(Delivery::Unknown, unknown))
            } else {
                Ran::Failed(e, input_receipt(Delivery::NotDispatched, nothing))
            }
        }
    }
}

/// Set org.a11y.Status.IsEnabled on the session bus (the AT-SPI bus
/// launcher owns it). Toolkits that check it (Qt, Chromium, Firefox, some
/// GTK 4) only expose their trees when it is true, and most read it at
/// start-up only.
pub async fn set_accessibility(a: SetAccessibilityArgs, deadline: Instant) -> Result<SetAccessibilityResult> {
    let t = Duration::from_millis(2000).min(deadline.saturating_duration_since(Instant::now()));
    within(t, "org.a11y.Status on the session bus", async {
        let session = atspi::session_bus().await?;
        let previous = atspi::a11y_enabled(&session).await.ok();
        session
            .call_method(
                Some("org.a11y.Bus"),
                "/org/a11y/bus",
                Some(atspi::I_PROPS),
                "Set",
                &("org.a11y.Status", "IsEnabled", zbus::zvariant::Value::from(a.enabled)),
            )
            .await
            .map_err(|e| {
                let code = match &e {
                    zbus::Error::MethodError(n, _, _) if n.as_str().ends_with("ServiceUnknown") || n.as_str().ends_with("NameHasNoOwner") => {
                        Code::PermissionDenied
                    }
                    _ => Code::ActionFailed,
                };
                Error::new(code, format!("setting org.a11y.Status.IsEnabled failed (is at-spi-bus-launcher running?): {e}"))
            })?;
        // Read back: what the launcher now says (the request when unreadable).
        let enabled = atspi::a11y_enabled(&session).await.unwrap_or(a.enabled);
        Ok(SetAccessibilityResult { enabled, previous })
    })
    .await
}

pub async fn watch_user_input(ctx: &Ctx, a: WatchArgs) -> Result<WatchResult> {
    if a.enabled && ctx.watcher.borrow().is_none() {
        let out = ctx.out.clone();
        let sink: crate::x11::watch::Sink = Box::new(move |kind| {
            let data = rmpv::Value::Map(vec![(rmpv::Value::from("kind"), rmpv::Value::from(kind))]);
            send_event(&out, "user_input", data);
        });
        // ---- issue 19: on sway, the seat's idle notifications (wayland/idle_watch.rs).
        let w = match crate::wayland::backend() {
            crate::wayland::Backend::Sway { .. } => super::Watcher::Sway(crate::wayland::idle_watch::Watcher::start(sink, super::own_input_recent)?),
            crate::wayland::Backend::Wayland { missing } => {
                return Err(Error::new(Code::ActionUnsupported, format!("watching user input on Wayland needs sway: {missing}")).with("reason", "wayland-backend"))
            }
            crate::wayland::Backend::X11 => super::Watcher::X11(Watcher::start(sink)?),
        };
        *ctx.watcher.borrow_mut() = Some(w);
    }
    if let Some(w) = ctx.watcher.borrow().as_ref() {
        w.set(a.enabled)?;
    }
    Ok(WatchResult { watching: a.enabled })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_state_from_stat() {
        assert_eq!(stat_state("1234 (a (weird) name) Z 1 1234"), Some('Z'));
        assert_eq!(stat_state("1 (init) S 0 1"), Some('S'));
        assert!(!process_gone(std::process::id()));
        assert!(process_gone(u32::MAX - 1));
    }

    #[test]
    fn errors_of_a_dead_app_become_app_exited() {
        let e = if_exited(Error::new(Code::ElementUnresolvable, "name mismatch"), u32::MAX - 1);
        assert_eq!(e.code, Code::AppExited);
        let alive = std::process::id();
        assert_eq!(if_exited(Error::new(Code::ElementUnresolvable, "name mismatch"), alive).code, Code::ElementUnresolvable);
        let left = Error::new(Code::ActionFailed, "D-Bus org.freedesktop.DBus.Error.ServiceUnknown: gone")
            .with("dbus_error", "org.freedesktop.DBus.Error.ServiceUnknown");
        assert_eq!(if_exited(left, alive).code, Code::AppExited);
    }
}
