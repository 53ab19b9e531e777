//! The clipboard (issue 13): X11 CLIPBOARD/PRIMARY get, set (a detached owner
//! process), paste (own the selection in-process, send the paste chord under
//! the focus guard, serve the target's requests, restore what was there).
//!
//! An X selection lives only as long as its owner's connection, and this
//! helper is one-shot for the CLI: `clipboard_set` therefore hands the text
//! to a detached owner, this binary re-executed as `deckhand-helper-linux
//! --own-selection clipboard|primary` with the text on its stdin (never in
//! argv, never logged). It forks into a new session (so neither the helper's
//! process group nor its process tree holds it), takes the selection,
//! confirms it with GetSelectionOwner, acknowledges on stdout, and serves
//! requests until another client takes the selection (SelectionClear) or
//! the display closes.

use super::{deadline_of, Ctx};
use crate::error::{Code, Error, Result};
use crate::procfs;
use crate::wire::codec::to_value;
use crate::wire::messages::{decode_args, Cleanup, Delivery, FocusGuard, InputStep, Receipt, Response, Route};
use crate::x11::selection::{Answered, Sel, Which, MAX_READ_BYTES, MAX_TEXT_BYTES};
use crate::x11::{focus, input, windows, X};
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
use x11rb::protocol::Event;

// ------------------------------------------------------------------ wire

#[derive(Deserialize, Debug)]
pub struct GetArgs {
    pub selection: Which,
    /// false: metadata only (owner, focus, targets); the text is not converted.
    pub read_text: bool,
    pub max_bytes: u64,
    /// Read the text only if this window still owns the selection (the
    /// owner the orchestrator checked); otherwise text stays nil.
    #[serde(default)]
    pub expect_owner: Option<u32>,
}

#[derive(Serialize, Debug, Default)]
pub struct GetResult {
    pub owner_window: Option<u32>,
    pub owner_pid: Option<u32>,
    /// The owner process's name (its comm), when its pid is known.
    pub owner_name: Option<String>,
    pub focus_window: Option<u32>,
    pub focus_pid: Option<u32>,
    pub targets: Vec<String>,
    pub secret_hint: bool,
    pub text: Option<String>,
    pub bytes: u64,
    pub truncated: bool,
}

#[derive(Deserialize, Debug)]
pub struct SetArgs {
    pub selection: Which,
    /// nil: clear the selection (no owner).
    pub text: Option<String>,
}

#[derive(Serialize, Debug)]
pub struct SetResult {
    pub owner_pid: Option<u32>,
    pub set: bool,
}

#[derive(Deserialize, Debug, Clone)]
pub struct PasteArgs {
    pub selection: Which,
    pub text: String,
    pub chord: Vec<String>,
    pub focus: FocusGuard,
    pub restore: bool,
    pub wait_ms: u64,
}

#[derive(Serialize, Debug)]
pub struct PasteResult {
    /// Requests answered with our text (TARGETS and the like not counted).
    pub served: u32,
    /// "text" | "cleared" | "not_restorable" | "skipped"
    pub restored: &'static str,
    pub chars: u32,
    pub focus_window: Option<u32>,
}

// ------------------------------------------------------------------ shared

/// One clipboard op at a time in this helper (a get never reads a paste's
/// own text mid-paste, two pastes never restore over each other).
static CLIP_LOCK: Mutex<()> = Mutex::new(());

fn clip_lock(until: Instant) -> Result<MutexGuard<'static, ()>> {
    loop {
        match CLIP_LOCK.try_lock() {
            Ok(g) => return Ok(g),
            Err(std::sync::TryLockError::Poisoned(p)) => return Ok(p.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Err(_) => return Err(Error::timeout("another clipboard operation of this helper did not finish in time")),
        }
    }
}

/// Longest wait for one answer of a selection owner (a hung owner must not
/// use up the whole deadline).
const CONVERT_WAIT: Duration = Duration::from_millis(2000);

fn wm_pid(x: &X, w: u32) -> Option<u32> {
    let r = x.conn.get_property(false, w, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, 0, 1).ok()?.reply().ok()?;
    r.value32().and_then(|mut v| v.next()).filter(|&p| p > 0)
}

/// The pid of a selection owner's window: its _NET_WM_PID (our owners set
/// it), else its client leader's, else that of a managed top-level window
/// of the same X client (GTK and Qt own selections with unmapped windows
/// that carry no pid). None for a client without one (xclip).
pub fn owner_pid(x: &X, owner: u32) -> Option<u32> {
    if let Some(p) = wm_pid(x, owner) {
        return Some(p);
    }
    let leader = x.conn.get_property(false, owner, x.atoms.WM_CLIENT_LEADER, AtomEnum::WINDOW, 0, 1).ok()?.reply().ok();
    if let Some(l) = leader.and_then(|r| r.value32().and_then(|mut v| v.next())).filter(|&l| l != 0 && l != owner) {
        if let Some(p) = wm_pid(x, l) {
            return Some(p);
        }
    }
    let base = windows::client_base(x, owner);
    let ids = windows::stacking_ids(x).ok()?;
    ids.into_iter().filter(|&w| windows::client_base(x, w) == base).find_map(|w| wm_pid(x, w))
}

/// The top-level window holding the keyboard focus, and its pid.
fn focus_of(x: &X) -> (Option<u32>, Option<u32>) {
    match focus::focused_toplevel(x) {
        Ok(w) if w != 0 => (Some(w), wm_pid(x, w)),
        _ => (None, None),
    }
}

fn blocking_error(e: tokio::task::JoinError) -> Error {
    Error::internal(format!("the clipboard thread failed: {e}"))
}

// ------------------------------------------------------------------ clipboard_get

pub async fn get(a: GetArgs, deadline: Instant) -> Result<GetResult> {
    tokio::task::spawn_blocking(move || get_blocking(a, deadline)).await.map_err(blocking_error)?
}

fn get_blocking(a: GetArgs, deadline: Instant) -> Result<GetResult> {
    let _g = clip_lock(deadline)?;
    // ---- issue 19: sway's clipboard (wlr-data-control)
    if let crate::wayland::Backend::Sway { socket } = crate::wayland::backend() {
        return crate::wayland::clipboard::get(socket, &a, deadline);
    }
    // ---- end Wayland
    let mut s = Sel::open()?;
    let sel = s.atom(a.selection);
    let owner = s.owner(sel)?;
    let (focus_window, focus_pid) = focus_of(&s.x);
    let mut r = GetResult { focus_window, focus_pid, ..Default::default() };
    if owner == x11rb::NONE {
        return Ok(r);
    }
    r.owner_window = Some(owner);
    r.owner_pid = owner_pid(&s.x, owner);
    r.owner_name = r.owner_pid.and_then(procfs::comm);
    if a.expect_owner.is_some_and(|e| e != owner) {
        return Ok(r);
    }
    let until = deadline.min(Instant::now() + CONVERT_WAIT);
    r.targets = s.targets(sel, until)?;
    r.secret_hint = r.targets.iter().any(|t| t == "x-kde-passwordManagerHint");
    // A secret is never converted, whatever the caller asked.
    if a.read_text && !r.secret_hint {
        let max = (a.max_bytes as usize).min(MAX_READ_BYTES);
        let until = deadline.min(Instant::now() + CONVERT_WAIT);
        if let Some((text, total, truncated)) = s.read_text(sel, &r.targets, max, until)? {
            (r.text, r.bytes, r.truncated) = (Some(text), total, truncated);
        }
    }
    Ok(r)
}

// ------------------------------------------------------------------ clipboard_set

pub async fn set(a: SetArgs, deadline: Instant) -> Result<SetResult> {
    if a.text.as_ref().is_some_and(|t| t.len() > MAX_TEXT_BYTES) {
        return Err(Error::invalid(format!("the text is longer than {MAX_TEXT_BYTES} bytes, the most one owner serves (no INCR)")));
    }
    tokio::task::spawn_blocking(move || set_blocking(a, deadline)).await.map_err(blocking_error)?
}

fn set_blocking(a: SetArgs, deadline: Instant) -> Result<SetResult> {
    let _g = clip_lock(deadline)?;
    // ---- issue 19: sway's clipboard (wlr-data-control)
    if crate::wayland::backend().is_wayland() {
        return crate::wayland::clipboard::set(a, deadline);
    }
    // ---- end Wayland
    match a.text {
        None => {
            let mut s = Sel::open()?;
            let sel = s.atom(a.selection);
            let set = s.clear(sel)?;
            Ok(SetResult { owner_pid: None, set })
        }
        Some(text) => {
            let pid = spawn_owner(a.selection, &text, deadline)?;
            // Confirmed from here too: the selection's owner is that process's window.
            let s = Sel::open()?;
            let owner = s.owner(s.atom(a.selection))?;
            if owner == x11rb::NONE || owner_pid(&s.x, owner) != Some(pid) {
                return Err(Error::new(Code::ActionFailed, format!("the owner process (pid {pid}) took the selection, but it is no longer its owner"))
                    .with("owner_pid", pid));
            }
            Ok(SetResult { owner_pid: Some(pid), set: true })
        }
    }
}

/// Start a detached owner of `which` holding `text`; its pid once it has
/// confirmed ownership.
pub fn spawn_owner(which: Which, text: &str, deadline: Instant) -> Result<u32> {
    // /proc/self/exe: this very binary, even if the file was replaced since.
    let mut child = Command::new("/proc/self/exe")
        .arg0("deckhand-helper-linux")
        .args(["--own-selection", which.name()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::new(Code::ActionFailed, format!("cannot start the selection owner process: {e}")))?;
    let written = child.stdin.take().map(|mut w| w.write_all(text.as_bytes()));
    // stdin dropped: the owner reads to EOF.
    let until = deadline.min(Instant::now() + Duration::from_secs(5));
    let line = child.stdout.take().map(|o| read_line_until(o, until)).unwrap_or_default();
    // The first process exits as soon as it has forked the owner: reap it.
    while Instant::now() < until {
        if matches!(child.try_wait(), Ok(Some(_))) {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    if matches!(child.try_wait(), Ok(None)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    if let Some(Err(e)) = written {
        return Err(Error::new(Code::ActionFailed, format!("cannot hand the text to the selection owner process: {e}")));
    }
    parse_ack(&line)
}

/// The owner's one line: "ok PID" or "err WHY".
fn parse_ack(line: &str) -> Result<u32> {
    let line = line.trim();
    if let Some(pid) = line.strip_prefix("ok ").and_then(|p| p.trim().parse::<u32>().ok()) {
        return Ok(pid);
    }
    let why = line.strip_prefix("err ").unwrap_or(if line.is_empty() { "it exited or did not answer in time" } else { line });
    Err(Error::new(Code::ActionFailed, format!("the selection owner process did not take the selection: {why}")))
}

fn read_line_until(mut r: std::process::ChildStdout, until: Instant) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 256];
    while !buf.contains(&b'\n') && buf.len() < 4096 {
        let now = Instant::now();
        if now >= until {
            break;
        }
        let mut fds = [libc::pollfd { fd: r.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        let ms = (until - now).as_millis().min(100) as i32;
        // SAFETY: one valid pollfd for the duration of the call.
        if unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) } <= 0 {
            continue;
        }
        match r.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// `deckhand-helper-linux --own-selection clipboard|primary`, text on stdin.
/// Runs before anything else in the process (no thread exists yet: the fork
/// below is safe).
pub fn own_selection_main(args: &[std::ffi::OsString]) -> i32 {
    let Some(which) = args.get(2).and_then(|s| s.to_str()).and_then(Which::parse) else {
        eprintln!("usage: deckhand-helper-linux --own-selection clipboard|primary   (the text on stdin)");
        return 2;
    };
    let mut raw = Vec::new();
    if let Err(e) = std::io::stdin().lock().take(MAX_TEXT_BYTES as u64 + 1).read_to_end(&mut raw) {
        ack(&format!("err cannot read stdin: {e}"));
        return 1;
    }
    if raw.len() > MAX_TEXT_BYTES {
        ack(&format!("err the text is longer than {MAX_TEXT_BYTES} bytes"));
        return 1;
    }
    let Ok(text) = String::from_utf8(raw) else {
        ack("err the text is not UTF-8");
        return 1;
    };
    // Detach: the owner is this process's child in a session of its own,
    // reparented to init once this process exits (the helper reaps it), so
    // killing the helper's process group or tree does not take the owner.
    // SAFETY: single-threaded here; the child only continues this function.
    match unsafe { libc::fork() } {
        -1 => {
            ack("err fork failed");
            return 1;
        }
        0 => {}
        _ => unsafe { libc::_exit(0) },
    }
    // SAFETY: plain syscalls.
    unsafe {
        libc::setsid();
        libc::signal(libc::SIGHUP, libc::SIG_IGN);
        // Started as /proc/self/exe, its name would read "exe".
        libc::prctl(libc::PR_SET_NAME, c"deckhand-helper".as_ptr() as libc::c_ulong, 0, 0, 0);
    }
    let _ = std::env::set_current_dir("/");
    // ---- issue 19: on Wayland the owner is a wlr-data-control source.
    if crate::wayland::backend().is_wayland() {
        return crate::wayland::clipboard::own_main(which, &text, &ack, &detach_stdio);
    }
    // ---- end Wayland
    let until = Instant::now() + Duration::from_secs(5);
    let mut s = match Sel::open() {
        Ok(s) => s,
        Err(e) => {
            ack(&format!("err {}", e.message));
            return 1;
        }
    };
    let sel = s.atom(which);
    let since = match s.own(sel, until) {
        Ok(t) => t,
        Err(e) => {
            ack(&format!("err {}", e.message));
            return 1;
        }
    };
    ack(&format!("ok {}", std::process::id()));
    detach_stdio();
    // Until another client takes the selection, or the display goes.
    loop {
        match s.next_request(Instant::now() + Duration::from_secs(3600), &|| false) {
            Ok(Some(Event::SelectionRequest(r))) => {
                let _ = s.answer(&r, &[sel], &text, since);
            }
            Ok(Some(Event::SelectionClear(c))) if c.selection == sel => return 0,
            Ok(_) => {}
            Err(_) => return 0,
        }
    }
}

fn ack(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// stdin, stdout and stderr to /dev/null: the helper's pipe closes (it reads
/// EOF after the acknowledgement) and nothing is ever written anywhere.
fn detach_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null") {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors.
            unsafe { libc::dup2(null.as_raw_fd(), fd) };
        }
    }
}

// ------------------------------------------------------------------ paste

/// After the first request was served, how long no further request must
/// come before the paste counts as done (toolkits ask TARGETS, then the text,
/// sometimes twice).
const QUIET: Duration = Duration::from_millis(150);
/// Kept from the deadline for the restore (a detached owner starts in ~10 ms).
const RESTORE_RESERVE: Duration = Duration::from_millis(1000);
/// How long after the deadline we stop waiting for the input thread.
const INPUT_LATE: Duration = Duration::from_millis(150);

/// What the selection held before the paste, as far as it can be put back.
enum Prev {
    /// restore: false: not read at all.
    Keep,
    Empty,
    Text(String),
    /// Not text, marked secret, too long, or the owner did not answer.
    NotRestorable,
}

fn previous(s: &mut Sel, sel: u32, deadline: Instant) -> Prev {
    let Ok(owner) = s.owner(sel) else { return Prev::NotRestorable };
    if owner == x11rb::NONE {
        return Prev::Empty;
    }
    let until = deadline.min(Instant::now() + CONVERT_WAIT);
    let Ok(targets) = s.targets(sel, until) else { return Prev::NotRestorable };
    // A password manager's secret is never read, and never re-owned by a
    // process that would outlive the manager's own clearing of it.
    if targets.iter().any(|t| t == "x-kde-passwordManagerHint") {
        return Prev::NotRestorable;
    }
    match s.read_text(sel, &targets, MAX_TEXT_BYTES, until) {
        Ok(Some((t, _, false))) => Prev::Text(t),
        _ => Prev::NotRestorable,
    }
}

struct PasteOutcome {
    sent: bool,
    cleanup: Cleanup,
    served: u32,
    restored: &'static str,
    focus_window: Option<u32>,
    error: Option<Error>,
    /// The input connection broke: drop it.
    broken: bool,
}

impl PasteOutcome {
    /// Nothing sent, nothing touched.
    fn failed(e: Error) -> PasteOutcome {
        PasteOutcome {
            sent: false,
            cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None },
            served: 0,
            restored: "skipped",
            focus_window: None,
            error: Some(e),
            broken: false,
        }
    }
}

fn paste_blocking(conn: &mut Option<X>, a: &PasteArgs, deadline: Instant, stop: &dyn Fn() -> bool) -> PasteOutcome {
    let mut out = PasteOutcome { error: None, ..PasteOutcome::failed(Error::internal("unset")) };
    macro_rules! bail {
        ($e:expr) => {{
            out.error = Some($e);
            return out;
        }};
    }
    let _g = match clip_lock(deadline) {
        Ok(g) => g,
        Err(e) => bail!(e),
    };
    if conn.is_none() {
        match X::connect() {
            Ok(x) => *conn = Some(x),
            Err(e) => bail!(e),
        }
    }
    let ix = conn.as_mut().expect("connected above");
    if ix.ext.xtest.is_none() {
        bail!(Error::new(Code::PermissionDenied, "the X server has no XTEST extension"));
    }
    // 1. The focus, before the clipboard is touched: elsewhere, nothing changes.
    let g = a.focus;
    let seen = focus::observe(ix, &g).and_then(|seen| {
        if !seen.accepted && g.activate {
            focus::activate_and_wait(ix, &g, deadline.min(Instant::now() + Duration::from_millis(1000)), stop)
        } else {
            Ok(seen)
        }
    });
    match seen {
        Ok(seen) if seen.accepted => {}
        Ok(seen) => bail!(seen.mismatch(&g).with("served", 0u32)),
        Err(e) => {
            out.broken = e.message.starts_with("X connection");
            bail!(e)
        }
    }
    // 2. What to put back afterwards.
    let mut s = match Sel::open() {
        Ok(s) => s,
        Err(e) => bail!(e),
    };
    let sel = s.atom(a.selection);
    let prev = if a.restore { previous(&mut s, sel, deadline) } else { Prev::Keep };
    // 3. Our text on the selection.
    let since = match s.own(sel, deadline) {
        Ok(t) => t,
        Err(e) => bail!(e),
    };
    // 4. The chord, under the focus guard (already activated above).
    let steps = [InputStep::Tap { keys: a.chord.clone(), repeat: 1 }];
    let o = input::run(ix, &steps, false, Some(FocusGuard { activate: false, ..g }), None, deadline, stop);
    (out.sent, out.cleanup, out.focus_window) = (o.anything_sent, o.cleanup, o.focus_window);
    out.broken = o.error.as_ref().is_some_and(|e| e.message.starts_with("X connection"));
    // 5. Serve until the target got the text and went quiet, or wait_ms.
    let mut lost = false;
    if o.error.is_none() {
        let until = (Instant::now() + Duration::from_millis(a.wait_ms)).min(deadline.checked_sub(RESTORE_RESERVE).unwrap_or(deadline));
        let mut last: Option<Instant> = None;
        loop {
            let stop_at = last.map(|t| (t + QUIET).min(until)).unwrap_or(until);
            match s.next_request(stop_at, stop) {
                Ok(Some(Event::SelectionRequest(r))) => match s.answer(&r, &[sel], &a.text, since) {
                    Ok(Answered::Text) => {
                        out.served += 1;
                        last = Some(Instant::now());
                    }
                    Ok(_) => {}
                    Err(e) => {
                        out.error = Some(e);
                        break;
                    }
                },
                Ok(Some(Event::SelectionClear(c))) if c.selection == sel => {
                    lost = true;
                    break;
                }
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => {
                    out.error = Some(e);
                    break;
                }
            }
        }
    }
    // 6. Put back what was there (another client's newer selection stays).
    out.restored = if lost {
        "skipped"
    } else {
        match prev {
            Prev::Keep => {
                // restore: false: the pasted text stays, held by a detached owner.
                if spawn_owner(a.selection, &a.text, deadline).is_err() {
                    let _ = s.clear(sel);
                }
                "skipped"
            }
            Prev::Empty => {
                let _ = s.clear(sel);
                "cleared"
            }
            Prev::Text(t) => match spawn_owner(a.selection, &t, deadline + INPUT_LATE) {
                Ok(_) => "text",
                Err(_) => {
                    let _ = s.clear(sel);
                    "not_restorable"
                }
            },
            Prev::NotRestorable => {
                let _ = s.clear(sel);
                "not_restorable"
            }
        }
    };
    if let Some(e) = o.error {
        out.error = Some(e);
    }
    out
}

fn receipt(delivery: Delivery, cleanup: Cleanup) -> Receipt {
    Receipt { delivery, route: Route::ForegroundInput, cleanup }
}

pub async fn paste(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let (d, deadline) = deadline_of(deadline_ms);
    let nothing = Cleanup { keys_released: true, buttons_released: true, pointer_restored: None };
    let refuse = |e: &Error| Response::err(id, e, Some(receipt(Delivery::NotDispatched, nothing)));
    let a: PasteArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    if a.chord.is_empty() {
        return refuse(&Error::invalid("paste needs a chord (e.g. [\"ctrl\", \"v\"])"));
    }
    if let Err(e) = input::validate(&[InputStep::Tap { keys: a.chord.clone(), repeat: 1 }]) {
        return refuse(&e);
    }
    if a.text.len() > MAX_TEXT_BYTES {
        return refuse(&Error::invalid(format!("the text is longer than {MAX_TEXT_BYTES} bytes, the most one owner serves (no INCR)")));
    }
    if a.wait_ms > 10_000 {
        return refuse(&Error::invalid("wait_ms is at most 10000"));
    }
    let chars = a.text.chars().count() as u32;
    let cancelled = ctx.cancelled.clone();
    let abandon = Arc::new(AtomicBool::new(false));
    let abandon_w = abandon.clone();
    let job = move |conn: &mut Option<X>| -> PasteOutcome {
        let stop = || {
            abandon_w.load(Ordering::Relaxed) || super::OUTPUT_CLOSED.load(Ordering::Relaxed) || cancelled.lock().map(|s| s.contains(&id)).unwrap_or(false)
        };
        struct Busy;
        impl Drop for Busy {
            fn drop(&mut self) {
                super::input_ended();
            }
        }
        super::INPUT_BUSY.store(true, Ordering::Relaxed);
        let _busy = Busy;
        // ---- issue 19: on sway, the paste through wlr-data-control and the virtual keyboard.
        match crate::wayland::backend() {
            crate::wayland::Backend::Sway { socket } => {
                let _g = match clip_lock(deadline) {
                    Ok(g) => g,
                    Err(e) => return PasteOutcome::failed(e),
                };
                let w = crate::wayland::clipboard::paste(socket, a.selection, &a.text, &a.chord, a.focus, a.restore, a.wait_ms, deadline, &stop);
                return PasteOutcome { sent: w.sent, cleanup: w.cleanup, served: w.served, restored: w.restored, focus_window: w.focus_window, error: w.error, broken: false };
            }
            crate::wayland::Backend::Wayland { missing } => {
                return PasteOutcome::failed(Error::new(Code::ActionUnsupported, format!("paste on Wayland needs sway: {missing}")).with("reason", "wayland-backend"));
            }
            crate::wayland::Backend::X11 => {}
        }
        // ---- end Wayland
        let o = paste_blocking(conn, &a, deadline, &stop);
        if o.broken {
            *conn = None;
        }
        o
    };
    let o = match tokio::time::timeout_at(tokio::time::Instant::from_std(deadline + RESTORE_RESERVE + INPUT_LATE), ctx.input.run(job)).await {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => {
            let unknown = Cleanup { keys_released: false, buttons_released: false, pointer_restored: None };
            return Response::err(id, &e, Some(receipt(Delivery::Unknown, unknown)));
        }
        Err(_) => {
            abandon.store(true, Ordering::Relaxed);
            let unknown = Cleanup { keys_released: false, buttons_released: false, pointer_restored: None };
            return Response::err(id, &Error::timeout(format!("paste did not finish within {} ms", d.as_millis())), Some(receipt(Delivery::Unknown, unknown)));
        }
    };
    let delivery = if o.sent { Delivery::Submitted } else { Delivery::NotDispatched };
    match o.error {
        None => Response::ok(
            id,
            to_value(&PasteResult { served: o.served, restored: o.restored, chars, focus_window: o.focus_window }),
            Some(receipt(delivery, o.cleanup)),
        ),
        Some(e) => Response::err(id, &e.with("served", o.served).with("restored", o.restored), Some(receipt(delivery, o.cleanup))),
    }
}

pub async fn get_op(a: GetArgs, deadline: Instant) -> Result<GetResult> {
    if a.max_bytes == 0 && a.read_text {
        return Err(Error::invalid("max_bytes must be at least 1 to read text"));
    }
    get(a, deadline).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements() {
        assert_eq!(parse_ack("ok 4242\n").unwrap(), 4242);
        let e = parse_ack("err another client took it").unwrap_err();
        assert_eq!(e.code, Code::ActionFailed);
        assert!(e.message.contains("another client took it"));
        assert!(parse_ack("").unwrap_err().message.contains("did not answer"));
        assert!(parse_ack("ok nope").is_err());
    }

    #[test]
    fn args_decode() {
        use rmpv::Value;
        let m = |v: Vec<(&str, Value)>| Value::Map(v.into_iter().map(|(k, v)| (Value::from(k), v)).collect());
        let g: GetArgs = decode_args(&m(vec![("selection", "primary".into()), ("read_text", false.into()), ("max_bytes", 10.into())])).unwrap();
        assert_eq!((g.selection, g.read_text, g.expect_owner), (Which::Primary, false, None));
        let s: SetArgs = decode_args(&m(vec![("selection", "clipboard".into()), ("text", Value::Nil)])).unwrap();
        assert!(s.text.is_none());
        assert!(decode_args::<SetArgs>(&m(vec![("selection", "secondary".into()), ("text", Value::Nil)])).is_err());
    }

    /// The owner mode refuses anything but a selection name, before reading stdin.
    #[test]
    fn owner_mode_usage() {
        let args: Vec<std::ffi::OsString> = ["x", "--own-selection", "secondary"].iter().map(Into::into).collect();
        assert_eq!(own_selection_main(&args), 2);
    }
}
