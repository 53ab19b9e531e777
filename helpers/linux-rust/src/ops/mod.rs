//! Request dispatch: decode args, run the op under its deadline, answer.

pub mod act;
pub mod clipboard;
// ---- issue 14: screenshot options
pub mod image_format;
// ---- end screenshot options
pub mod lifecycle;
pub mod menus;
pub mod observe;
// ---- issue 15: click
pub mod point_click;
// ---- end click
// ---- issue 19: one window's facts on either backend
pub mod window;
// ---- end window
pub mod worker;

use crate::atspi::cache::{FrameEntry, ResolveCache};
use crate::atspi::{apps, tree, A11y};
use crate::x11::windows::WinInfo;
use crate::error::{Code, Error, Result};
use crate::wire::codec::{encode_frame, to_value, write_frame};
use crate::wire::messages::{decode_args, Event, Receipt, Response};
use crate::x11::X;
use serde::Serialize;
use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub type Out = Arc<Mutex<Box<dyn Write + Send>>>;

/// Set once stdout is broken (the orchestrator is gone): an input op in
/// flight stops at its next checkpoint, as on a cancel.
pub static OUTPUT_CLOSED: AtomicBool = AtomicBool::new(false);
/// Whether an input op is running on the input thread (it may hold keys).
pub static INPUT_BUSY: AtomicBool = AtomicBool::new(false);
/// When the last input op ended, in ms since INPUT_EPOCH (0: none yet):
/// the Wayland user-input watch takes input just after it as the helper's own.
static INPUT_ENDED_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static INPUT_EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// An input op ends (its Busy guard drops).
pub fn input_ended() {
    INPUT_BUSY.store(false, Ordering::Relaxed);
    let ms = INPUT_EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64;
    INPUT_ENDED_MS.store(ms.max(1), Ordering::Relaxed);
}

/// Whether this helper's own input runs now or ended within the watch's grace.
pub fn own_input_recent() -> bool {
    if INPUT_BUSY.load(Ordering::Relaxed) {
        return true;
    }
    let ended = INPUT_ENDED_MS.load(Ordering::Relaxed);
    ended != 0 && INPUT_EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64 <= ended + crate::wayland::idle_watch::OWN_GRACE.as_millis() as u64
}

/// The user-input watch of the backend running.
pub enum Watcher {
    X11(crate::x11::watch::Watcher),
    Sway(crate::wayland::idle_watch::Watcher),
}

impl Watcher {
    pub fn set(&self, on: bool) -> Result<()> {
        match self {
            Watcher::X11(w) => w.set(on),
            Watcher::Sway(w) => {
                w.set(on);
                Ok(())
            }
        }
    }
}

/// Longest the helper waits, once stdout broke, for an input op in flight to
/// release what it holds before exiting.
const EXIT_GRACE: Duration = Duration::from_millis(3000);

/// Write one frame; a broken stdout means the orchestrator is gone: exit,
/// but not under an input op that may hold keys or buttons (exiting does
/// not release XTest presses): that op is stopped (OUTPUT_CLOSED), cleans
/// up, then the helper exits (at most EXIT_GRACE later).
pub fn send_frame(out: &Out, bytes: &[u8]) {
    let mut w = match out.lock() {
        Ok(w) => w,
        Err(p) => p.into_inner(),
    };
    if OUTPUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    if let Err(e) = write_frame(&mut *w, bytes) {
        OUTPUT_CLOSED.store(true, Ordering::Relaxed);
        eprintln!("deckhand-helper-linux: cannot write to stdout ({e}); exiting once no input op holds keys");
        let t0 = Instant::now();
        let _ = std::thread::Builder::new().name("exit".into()).spawn(move || loop {
            if !INPUT_BUSY.load(Ordering::Relaxed) || t0.elapsed() > EXIT_GRACE {
                std::process::exit(0);
            }
            std::thread::sleep(Duration::from_millis(5));
        });
    }
}

pub fn send_event(out: &Out, event: &str, data: rmpv::Value) {
    let ev = Event { kind: "event".into(), event: event.into(), data };
    send_frame(out, &encode_frame(&ev));
}

pub struct Ctx {
    pub x: RefCell<Option<X>>,
    pub a11y: RefCell<Option<A11y>>,
    /// Serializes connecting, so concurrent requests share one connection.
    pub a11y_connecting: tokio::sync::Mutex<()>,
    // ---- issue 15: one session bus connection
    /// The session bus (org.a11y.Bus, org.a11y.Status), opened once: a new
    /// connection per permissions check cost its handshake (1-3 ms) each time.
    pub session: RefCell<Option<zbus::Connection>>,
    pub session_connecting: tokio::sync::Mutex<()>,
    // ---- end one session bus connection
    pub watcher: RefCell<Option<Watcher>>,
    /// Frames and object paths learned by earlier requests (guesses, always
    /// verified live before use; dropped with the a11y connection).
    pub resolved: RefCell<ResolveCache>,
    /// Runs `input` ops, one at a time, on a thread with its own X
    /// connection (None until first used, dropped when it broke).
    pub input: worker::Worker<Option<X>>,
    /// Ids of requests the orchestrator cancelled (filled by the stdin thread).
    pub cancelled: Arc<Mutex<HashSet<u64>>>,
    pub out: Out,
}

impl Ctx {
    pub fn new(out: Out, cancelled: Arc<Mutex<HashSet<u64>>>) -> Ctx {
        Ctx {
            x: RefCell::new(None),
            a11y: RefCell::new(None),
            a11y_connecting: tokio::sync::Mutex::new(()),
            session: RefCell::new(None),
            session_connecting: tokio::sync::Mutex::new(()),
            watcher: RefCell::new(None),
            resolved: RefCell::new(ResolveCache::default()),
            input: worker::Worker::new("input"),
            cancelled,
            out,
        }
    }

    /// Run synchronous X work on the (lazily opened) connection. A broken
    /// connection is dropped so the next request reconnects.
    pub fn with_x<T>(&self, f: impl FnOnce(&mut X) -> Result<T>) -> Result<T> {
        // ---- issue 19: the Wayland backend never opens DISPLAY (Xwayland's:
        // connecting would start it, and its windows are not the session's).
        if crate::wayland::backend().is_wayland() {
            return Err(Error::new(Code::ActionUnsupported, format!("X11 routes are not used on the Wayland backend ({})", crate::wayland::backend().name()))
                .with("reason", "wayland-backend"));
        }
        // ---- end Wayland
        let mut g = self.x.borrow_mut();
        if g.is_none() {
            *g = Some(X::connect()?);
        }
        let r = f(g.as_mut().expect("connected above"));
        if let Err(e) = &r {
            if e.message.starts_with("X connection") {
                *g = None;
            }
        }
        r
    }

    /// The accessibility bus connection (opened once, reopened if it broke).
    pub async fn a11y(&self) -> Result<A11y> {
        if let Some(a) = self.a11y.borrow().as_ref() {
            return Ok(a.clone());
        }
        let _guard = self.a11y_connecting.lock().await;
        if let Some(a) = self.a11y.borrow().as_ref() {
            return Ok(a.clone());
        }
        let a = A11y::connect_via(self.session().await.ok()).await?;
        *self.a11y.borrow_mut() = Some(a.clone());
        Ok(a)
    }

    /// The session bus connection (opened once, reopened after a failure on it).
    pub async fn session(&self) -> Result<zbus::Connection> {
        if let Some(s) = self.session.borrow().as_ref() {
            return Ok(s.clone());
        }
        let _guard = self.session_connecting.lock().await;
        if let Some(s) = self.session.borrow().as_ref() {
            return Ok(s.clone());
        }
        let s = crate::atspi::session_bus().await?;
        *self.session.borrow_mut() = Some(s.clone());
        Ok(s)
    }

    /// Drop the session bus connection after a failure on it (the next use reconnects).
    pub fn session_failed(&self) {
        *self.session.borrow_mut() = None;
    }

    /// Drop the a11y connection after an I/O failure on it.
    pub fn a11y_failed(&self, e: &Error) {
        if e.message.contains("accessibility bus I/O") {
            *self.a11y.borrow_mut() = None;
            self.resolved.borrow_mut().clear();
        }
    }
}

/// Find a window's frame accessible from scratch (the app by pid, its
/// top-level accessibles, the one matching the window) and remember it.
pub async fn resolve_frame(ctx: &Ctx, a: &A11y, pid: u32, w: &WinInfo) -> Result<FrameEntry> {
    let bus = apps::find_by_pid(a, pid).await?;
    // ---- issue 19: a popup on sway is its top-level accessible by place, checked still shown.
    if let Some((_, index)) = crate::wayland::popups::parse(w.id).filter(|_| crate::wayland::backend().is_wayland()) {
        let frame = crate::wayland::popups::frame(a, &bus, index).await?;
        let e = FrameEntry { bus, frame, by_name: false, name: String::new() };
        ctx.resolved.borrow_mut().set_frame(pid, w.id, e.clone());
        return Ok(e);
    }
    // ---- end Wayland
    let cands = tree::frame_candidates(a, &bus, None).await?;
    let (frame, by_name) = tree::match_frame_how(a, &bus, &cands, &w.title, w.bounds).await?;
    let name = cands.iter().find(|(p, _)| *p == frame).map(|(_, n)| n.clone()).unwrap_or_default();
    let e = FrameEntry { bus, frame, by_name, name };
    ctx.resolved.borrow_mut().set_frame(pid, w.id, e.clone());
    Ok(e)
}

/// The answer to a request whose frame was above the size limit (skipped
/// unread): INVALID_ARGUMENTS, with a receipt for the mutating ops (nothing
/// was dispatched).
pub fn refuse_oversized(id: u64, op: &str, len: usize) -> Response {
    use crate::wire::messages::{Cleanup, Delivery, Route};
    let max = crate::wire::codec::MAX_FRAME_BYTES;
    let e = Error::invalid(format!("the request frame of {len} bytes exceeds max_frame_bytes ({max}): not read"))
        .with("frame_bytes", len as i64)
        .with("max_frame_bytes", max as i64);
    let receipt = match op {
        "element_action" => Some(Receipt::accessibility(Delivery::NotDispatched)),
        "input" | "point_click" => Some(Receipt {
            delivery: Delivery::NotDispatched,
            route: Route::ForegroundInput,
            cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None },
        }),
        _ => None,
    };
    Response::err(id, &e, receipt)
}

/// Deadline of a request (0 means "none given": 10 s).
pub fn deadline_of(deadline_ms: u64) -> (Duration, Instant) {
    let d = Duration::from_millis(if deadline_ms == 0 { 10_000 } else { deadline_ms });
    (d, Instant::now() + d)
}

async fn read_op<A, R, F, Fut>(ctx: &Ctx, id: u64, op: &str, deadline_ms: u64, args: &rmpv::Value, f: F) -> Response
where
    A: serde::de::DeserializeOwned,
    R: Serialize,
    F: FnOnce(A, Instant) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    let a: A = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return Response::err(id, &e, None),
    };
    let (d, deadline) = deadline_of(deadline_ms);
    match tokio::time::timeout(d, f(a, deadline)).await {
        Ok(Ok(r)) => Response::ok(id, to_value(&r), None),
        Ok(Err(e)) => {
            ctx.a11y_failed(&e);
            Response::err(id, &e, None)
        }
        Err(_) => Response::err(id, &Error::timeout(format!("{op} did not finish within {} ms", d.as_millis())), None),
    }
}

/// Answer one request.
pub async fn handle(ctx: &Ctx, id: u64, op: &str, deadline_ms: u64, args: rmpv::Value) -> Response {
    let t0 = Instant::now();
    let resp = match op {
        "permissions" => read_op(ctx, id, op, deadline_ms, &args, |a, dl| observe::permissions(ctx, a, dl)).await,
        "list_apps" => read_op(ctx, id, op, deadline_ms, &args, |a, dl| observe::list_apps(ctx, a, dl)).await,
        "list_windows" => read_op(ctx, id, op, deadline_ms, &args, |a, _| observe::list_windows(ctx, a)).await,
        "get_tree" => read_op(ctx, id, op, deadline_ms, &args, |a, _| observe::get_tree(ctx, a)).await,
        "screenshot" => read_op(ctx, id, op, deadline_ms, &args, |a, dl| observe::screenshot(ctx, a, dl)).await,
        "hit_test" => read_op(ctx, id, op, deadline_ms, &args, |a, _| observe::hit_test(ctx, a)).await,
        "watch_user_input" => read_op(ctx, id, op, deadline_ms, &args, |a, _| act::watch_user_input(ctx, a)).await,
        "element_action" => act::element_action(ctx, id, deadline_ms, &args).await,
        "input" => act::input(ctx, id, deadline_ms, &args).await,
        "set_accessibility" => read_op(ctx, id, op, deadline_ms, &args, |a, dl| act::set_accessibility(a, dl)).await,
        "focused_element" => read_op(ctx, id, op, deadline_ms, &args, |a, dl| observe::focused_element(ctx, a, dl)).await,
        "settle" => {
            read_op(ctx, id, op, deadline_ms, &args, |a, dl| async move { crate::atspi::settle::settle(&ctx.a11y().await?, &a, dl).await }).await
        }
        // ---- issue 13: app lifecycle
        "list_installed" => read_op(ctx, id, op, deadline_ms, &args, |a, _| lifecycle::list_installed(a)).await,
        "launch" => lifecycle::launch(id, deadline_ms, &args).await,
        "launch_status" => read_op(ctx, id, op, deadline_ms, &args, |a, _| lifecycle::launch_status(a)).await,
        "window_op" => lifecycle::window_op(ctx, id, deadline_ms, &args).await,
        // ---- end lifecycle

        // ---- issue 13: clipboard
        "clipboard_get" => read_op(ctx, id, op, deadline_ms, &args, clipboard::get_op).await,
        "clipboard_set" => read_op(ctx, id, op, deadline_ms, &args, clipboard::set).await,
        "paste" => clipboard::paste(ctx, id, deadline_ms, &args).await,
        // ---- end clipboard

        // ---- issue 13: menus
        "menu_tree" => read_op(ctx, id, op, deadline_ms, &args, |a, _| menus::menu_tree(ctx, a)).await,
        "menu_close" => menus::menu_close(ctx, id, deadline_ms, &args).await,
        // ---- end menus

        // ---- issue 15: click
        "point_click" => point_click::point_click(ctx, id, deadline_ms, &args).await,
        // ---- end click
        other => Response::err(
            id,
            &Error::new(Code::InvalidArguments, format!("unknown op {other:?}")).with("op", other),
            None::<Receipt>,
        ),
    };
    if !resp.ok || crate::debug() {
        eprintln!(
            "deckhand-helper-linux: {op} #{id} -> {} in {:.2} ms",
            if resp.ok { "ok".to_string() } else { resp.error.as_ref().map(|e| e.code.clone()).unwrap_or_default() },
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::codec::decode_body;
    use crate::wire::messages::{parse_incoming, Incoming};
    use rmpv::Value;

    fn map(entries: Vec<(&str, Value)>) -> Value {
        Value::Map(entries.into_iter().map(|(k, v)| (Value::from(k), v)).collect())
    }

    fn answer(frame: Value) -> Response {
        let mut bytes = Vec::new();
        rmpv::encode::write_value(&mut bytes, &frame).unwrap();
        let Incoming::Request { id, op, deadline_ms, args } = parse_incoming(&decode_body(&bytes).unwrap()).unwrap() else {
            panic!("not a request")
        };
        let out: Out = Arc::new(Mutex::new(Box::new(std::io::sink())));
        let ctx = Ctx::new(out, Arc::new(Mutex::new(HashSet::new())));
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        tokio::task::LocalSet::new().block_on(&rt, handle(&ctx, id, &op, deadline_ms, args))
    }

    /// A request of a newer minor version (an extra top-level field, an extra
    /// args field) is decoded and answered. watch_user_input {enabled:false}
    /// needs no display.
    #[test]
    fn request_with_extra_fields_is_answered() {
        let r = answer(map(vec![
            ("type", "request".into()),
            ("id", 41.into()),
            ("op", "watch_user_input".into()),
            ("deadline_ms", 1000.into()),
            ("priority", "high".into()),
            ("args", map(vec![("enabled", false.into()), ("kinds", Value::Array(vec!["key".into()]))])),
        ]));
        assert!(r.ok, "{:?}", r.error);
        assert_eq!(r.id, 41);
        let result = r.result.unwrap();
        assert_eq!(result.as_map().unwrap()[0], (Value::from("watching"), Value::Boolean(false)));
    }

    #[test]
    fn oversized_requests_are_refused_with_a_receipt_when_mutating() {
        let r = refuse_oversized(5, "input", 20 << 20);
        assert!(!r.ok);
        let e = r.error.as_ref().unwrap();
        assert_eq!(e.code, "INVALID_ARGUMENTS");
        assert_eq!(e.details.as_ref().unwrap()["frame_bytes"], crate::error::Detail::Int(20 << 20));
        let rc = r.receipt.unwrap();
        assert_eq!((rc.delivery, rc.route), (crate::wire::messages::Delivery::NotDispatched, crate::wire::messages::Route::ForegroundInput));
        assert_eq!(refuse_oversized(6, "element_action", 1).receipt.unwrap().route, crate::wire::messages::Route::Accessibility);
        assert!(refuse_oversized(7, "get_tree", 1).receipt.is_none());
    }

    #[test]
    fn unknown_op_is_an_error_response() {
        let r = answer(map(vec![
            ("type", "request".into()),
            ("id", 42.into()),
            ("op", "teleport".into()),
            ("deadline_ms", 0.into()),
            ("args", map(vec![])),
        ]));
        assert!(!r.ok);
        assert_eq!(r.error.unwrap().code, "INVALID_ARGUMENTS");
    }
}
