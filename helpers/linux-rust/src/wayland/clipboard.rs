//! The clipboard ops on sway (issue 19): get, set (a detached owner) and
//! paste, as ops/clipboard.rs does them on X11, through wlr-data-control
//! (data_control.rs). Same wire, same rules; what differs:
//! - no owner is known (Wayland names none): owner_window is the number of
//!   the selection this helper's device saw (data_control::GENERATION), so
//!   the orchestrator's "unchanged since checked" test still holds; owner_pid
//!   is null;
//! - the focus is sway's focused view (its container id and pid);
//! - the text travels through a pipe (no INCR, no size limit of the protocol).

use super::data_control::{self, Device, SourceEvent, SECRET_HINT};
use super::guard;
use crate::error::{Code, Error, Result};
use crate::ops::clipboard::{GetArgs, GetResult, SetArgs, SetResult};
use crate::wire::messages::{Cleanup, FocusGuard, InputStep};
use crate::x11::selection::{Which, MAX_READ_BYTES, MAX_TEXT_BYTES};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Longest wait for one answer of a selection owner (as on X11).
const CONVERT_WAIT: Duration = Duration::from_millis(2000);

/// The device `clipboard_get` keeps between its two requests (metadata,
/// then the text with expect_owner): the selection's number only means
/// "unchanged" on the device that numbered it.
static DEVICE: Mutex<Option<Device>> = Mutex::new(None);

fn focus(sock: &str) -> (Option<u32>, Option<u32>) {
    match guard::focused(sock) {
        Ok(Some(v)) => (Some(v.con_id), v.pid),
        _ => (None, None),
    }
}

pub fn get(sock: &str, a: &GetArgs, deadline: Instant) -> Result<GetResult> {
    let mut slot = DEVICE.lock().unwrap_or_else(|p| p.into_inner());
    // A broken device (the compositor restarted, a protocol error) is replaced once.
    let pumped = match slot.as_mut() {
        Some(d) => d.pump(deadline, &mut Vec::new()).is_ok(),
        None => false,
    };
    if !pumped {
        *slot = Some(Device::open(deadline)?);
    }
    let d = slot.as_mut().expect("opened above");
    let (generation, targets) = d.current(a.selection);
    if a.selection == Which::Primary && !d.has_primary() {
        return Err(Error::new(Code::ActionUnsupported, "the compositor's wlr-data-control is version 1: it has no primary selection").with("reason", "no-primary-selection"));
    }
    let (focus_window, focus_pid) = focus(sock);
    let mut r = GetResult { focus_window, focus_pid, ..Default::default() };
    let Some(generation) = generation else { return Ok(r) };
    r.owner_window = Some(generation);
    r.secret_hint = targets.iter().any(|t| t == SECRET_HINT);
    r.targets = targets;
    if a.expect_owner.is_some_and(|e| e != generation) {
        return Ok(r);
    }
    // A secret is never read, whatever the caller asked.
    if a.read_text && !r.secret_hint {
        let max = (a.max_bytes as usize).min(MAX_READ_BYTES);
        let until = deadline.min(Instant::now() + CONVERT_WAIT);
        if let Some((text, total, truncated)) = d.read_text(a.selection, max, MAX_READ_BYTES, until)? {
            (r.text, r.bytes, r.truncated) = (Some(text), total, truncated);
        }
    }
    Ok(r)
}

/// Set or clear. Setting hands the text to a detached owner (ops/clipboard.rs
/// spawn_owner: this binary with --own-selection, which on Wayland runs
/// `own_main`), then reads back that the selection offers what it offers.
pub fn set(a: SetArgs, deadline: Instant) -> Result<SetResult> {
    let mut d = Device::open(deadline)?;
    match a.text {
        None => {
            d.clear(a.selection)?;
            d.pump(deadline, &mut Vec::new())?;
            Ok(SetResult { owner_pid: None, set: d.current(a.selection).0.is_none() })
        }
        Some(text) => {
            let pid = crate::ops::clipboard::spawn_owner(a.selection, &text, deadline)?;
            d.pump(deadline, &mut Vec::new())?;
            if !d.shows_ours(a.selection) {
                return Err(Error::new(Code::ActionFailed, format!("the owner process (pid {pid}) took the selection, but it no longer offers its text")).with("owner_pid", pid));
            }
            Ok(SetResult { owner_pid: Some(pid), set: true })
        }
    }
}

/// The detached owner's work on Wayland (after the fork, in its own
/// session): a source with the text made the selection, confirmed by the
/// compositor relaying it back, "ok PID" acknowledged, then every `send`
/// answered until another client takes the selection (cancelled) or the
/// compositor goes. `ack` writes the one line; `detach` closes stdio.
pub fn own_main(which: Which, text: &str, ack: &dyn Fn(&str), detach: &dyn Fn()) -> i32 {
    let until = Instant::now() + Duration::from_secs(5);
    let mut d = match Device::open(until) {
        Ok(d) => d,
        Err(e) => {
            ack(&format!("err {}", e.message));
            return 1;
        }
    };
    let mut events = Vec::new();
    let source = match d.offer_text(which).and_then(|s| d.pump(until, &mut events).map(|_| s)) {
        Ok(s) => s,
        Err(e) => {
            ack(&format!("err {}", e.message));
            return 1;
        }
    };
    if !d.shows_ours(which) || events.iter().any(|e| matches!(e, SourceEvent::Cancelled { .. })) {
        ack("err the compositor did not make our source the selection");
        return 1;
    }
    ack(&format!("ok {}", std::process::id()));
    detach();
    loop {
        for e in events.drain(..) {
            match e {
                // Only the types we offered; any other request's fd just closes.
                SourceEvent::Send { source: s, fd: Some(fd), mime } if s == source && data_control::OFFER_TYPES.contains(&mime.as_str()) => {
                    data_control::write_text(&fd, text.as_bytes(), Instant::now() + data_control::SEND_WAIT);
                }
                SourceEvent::Cancelled { source: s } if s == source => return 0,
                _ => {}
            }
        }
        if d.wait(Instant::now() + Duration::from_secs(3600), &mut events).is_err() {
            return 0;
        }
    }
}

// ------------------------------------------------------------------ paste

const QUIET: Duration = Duration::from_millis(150);
const RESTORE_RESERVE: Duration = Duration::from_millis(1000);
const INPUT_LATE: Duration = Duration::from_millis(150);

enum Prev {
    Keep,
    Empty,
    Text(String),
    NotRestorable,
}

fn previous(d: &mut Device, which: Which, deadline: Instant) -> Prev {
    let (generation, types) = d.current(which);
    if generation.is_none() {
        return Prev::Empty;
    }
    // A password manager's secret is never read, nor re-offered by a process that would outlive its clearing.
    if types.iter().any(|t| t == SECRET_HINT) {
        return Prev::NotRestorable;
    }
    let until = deadline.min(Instant::now() + CONVERT_WAIT);
    match d.read_text(which, MAX_TEXT_BYTES, MAX_TEXT_BYTES + 1, until) {
        Ok(Some((t, _, false))) => Prev::Text(t),
        _ => Prev::NotRestorable,
    }
}

/// What a paste on sway did (ops/clipboard.rs makes its answer of it).
pub struct PasteOutcome {
    pub sent: bool,
    pub cleanup: Cleanup,
    pub served: u32,
    pub restored: &'static str,
    pub focus_window: Option<u32>,
    pub error: Option<Error>,
}

/// The paste on sway, on the input thread (the virtual keyboard lives there):
/// the focus first (elsewhere: nothing changes), what to put back, our text
/// on the selection, the chord under the focus guard, the target's requests
/// served until it went quiet, the previous text back.
#[allow(clippy::too_many_arguments)]
pub fn paste(sock: &str, selection: Which, text: &str, chord: &[String], g: FocusGuard, restore: bool, wait_ms: u64, deadline: Instant, stop: &dyn Fn() -> bool) -> PasteOutcome {
    let mut out = PasteOutcome { sent: false, cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None }, served: 0, restored: "skipped", focus_window: None, error: None };
    macro_rules! bail {
        ($e:expr) => {{
            out.error = Some($e);
            return out;
        }};
    }
    // 1. The focus, before the clipboard is touched.
    let seen = guard::observe_focus(sock, &g).and_then(|seen| {
        if !seen.accepted && g.activate {
            guard::activate_and_wait(sock, &g, deadline.min(Instant::now() + Duration::from_millis(1000)), stop)
        } else {
            Ok(seen)
        }
    });
    match seen {
        Ok(seen) if seen.accepted => {}
        Ok(seen) => bail!(seen.mismatch(&g).with("served", 0u32)),
        Err(e) => bail!(e),
    }
    // 2. What to put back afterwards.
    let mut d = match Device::open(deadline) {
        Ok(d) => d,
        Err(e) => bail!(e),
    };
    let prev = if restore { previous(&mut d, selection, deadline) } else { Prev::Keep };
    // 3. Our text on the selection, confirmed.
    let mut events = Vec::new();
    let source = match d.offer_text(selection).and_then(|s| d.pump(deadline, &mut events).map(|_| s)) {
        Ok(s) => s,
        Err(e) => bail!(e),
    };
    if !d.shows_ours(selection) {
        d.destroy_source(source);
        bail!(Error::new(Code::ActionFailed, "the compositor did not make the paste's text the selection: nothing sent"));
    }
    // 4. The chord, under the focus guard (activated above).
    let steps = [InputStep::Tap { keys: chord.to_vec(), repeat: 1 }];
    let o = super::input::run(sock, &steps, Some(FocusGuard { activate: false, ..g }), None, deadline, stop);
    (out.sent, out.cleanup, out.focus_window) = (o.anything_sent, o.cleanup, o.focus_window);
    // 5. Serve until the target got the text and went quiet, or wait_ms.
    let mut lost = false;
    let serve_until = (Instant::now() + Duration::from_millis(wait_ms)).min(deadline.checked_sub(RESTORE_RESERVE).unwrap_or(deadline));
    let mut last: Option<Instant> = None;
    // Requests that came before the chord (a client reading eagerly) are answered too.
    'serve: loop {
        for e in events.drain(..) {
            match e {
                SourceEvent::Send { source: s, fd: Some(fd), mime }
                    if s == source
                        && data_control::OFFER_TYPES.contains(&mime.as_str())
                        && data_control::write_text(&fd, text.as_bytes(), deadline.min(Instant::now() + data_control::SEND_WAIT)) =>
                {
                    out.served += 1;
                    last = Some(Instant::now());
                }
                SourceEvent::Cancelled { source: s } if s == source => {
                    lost = true;
                    break 'serve;
                }
                _ => {}
            }
        }
        if o.error.is_some() || stop() {
            break;
        }
        let stop_at = last.map(|t| (t + QUIET).min(serve_until)).unwrap_or(serve_until);
        let now = Instant::now();
        if now >= stop_at {
            break;
        }
        if let Err(e) = d.wait(stop_at.min(now + Duration::from_millis(50)), &mut events) {
            out.error = Some(e);
            break;
        }
    }
    // 6. Put back what was there (another client's newer selection stays).
    out.restored = if lost {
        "skipped"
    } else {
        let clear = |d: &mut Device| {
            let _ = d.clear(selection);
        };
        let r = match prev {
            Prev::Keep => {
                if crate::ops::clipboard::spawn_owner(selection, text, deadline).is_err() {
                    clear(&mut d);
                }
                "skipped"
            }
            Prev::Empty => {
                clear(&mut d);
                "cleared"
            }
            Prev::Text(t) => match crate::ops::clipboard::spawn_owner(selection, &t, deadline + INPUT_LATE) {
                Ok(_) => "text",
                Err(_) => {
                    clear(&mut d);
                    "not_restorable"
                }
            },
            Prev::NotRestorable => {
                clear(&mut d);
                "not_restorable"
            }
        };
        let _ = d.pump(deadline + INPUT_LATE, &mut Vec::new());
        r
    };
    d.destroy_source(source);
    let _ = d.pump(deadline + INPUT_LATE, &mut Vec::new());
    if let Some(e) = o.error {
        out.error = Some(e);
    }
    out
}
