//! App lifecycle (issue 13): installed apps, launch, window activate/restore/close.
//!
//! - list_installed: the Desktop Entry files of the XDG data dirs (desktop.rs).
//! - launch: a program exec'd directly (no shell), detached (spawn.rs), with
//!   the environment toolkits read to switch their accessibility on.
//! - launch_status: how a launched process is doing (the orchestrator tells
//!   a failed start from a single-instance hand-off by its exit code).
//! - window_op: activate / restore / close one top-level window (x11/wm.rs,
//!   x11/focus.rs), run on the input thread: its X connection is the one
//!   that may select focus events, and it never interleaves with input.

mod desktop;
mod session_user;
mod spawn;

use super::{deadline_of, Ctx};
use crate::error::{Code, Error, Result};
use crate::wire::codec::to_value;
use crate::wire::messages::{decode_args, Cleanup, Delivery, FocusGuard, NoArgs, Receipt, Response, Route};
use crate::x11::{focus, wm, X};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

// ------------------------------------------------------------------ wire

#[derive(Serialize, Debug, Clone, PartialEq, Eq)]
pub struct InstalledApp {
    pub desktop_id: String,
    pub name: String,
    pub executable: Option<String>,
    pub exec: Vec<String>,
    pub terminal: bool,
    pub no_display: bool,
}

#[derive(Serialize, Debug)]
pub struct ListInstalledResult {
    pub apps: Vec<InstalledApp>,
}

#[derive(Deserialize, Debug)]
pub struct LaunchArgs {
    pub executable: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub desktop_id: Option<String>,
}

#[derive(Serialize, Debug)]
pub struct LaunchResult {
    pub pid: u32,
    pub start_time: Option<u64>,
    pub env_added: Vec<String>,
    pub args_added: Vec<String>,
}

#[derive(Deserialize, Debug)]
pub struct LaunchStatusArgs {
    pub pid: u32,
}

#[derive(Serialize, Debug)]
pub struct LaunchStatusResult {
    pub known: bool,
    pub running: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

#[derive(Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum WindowOpKind {
    Activate,
    Restore,
    Close,
}

#[derive(Deserialize, Debug)]
pub struct WindowOpArgs {
    pub window_id: u32,
    pub op: WindowOpKind,
}

#[derive(Serialize, Debug)]
pub struct WindowOpResult {
    pub window_id: u32,
    pub done: bool,
    pub detail: String,
}

/// What launch and window_op did: "synthetic" (a spawn, window-manager
/// messages), nothing held, the pointer untouched.
fn receipt(delivery: Delivery) -> Receipt {
    Receipt { delivery, route: Route::Synthetic, cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None } }
}

// ------------------------------------------------------------------ list_installed

pub async fn list_installed(_: NoArgs) -> Result<ListInstalledResult> {
    let apps = tokio::task::spawn_blocking(desktop::scan_env).await.map_err(|e| Error::internal(format!("reading the installed apps: {e}")))?;
    Ok(ListInstalledResult {
        apps: apps
            .into_iter()
            .map(|a| InstalledApp { desktop_id: a.desktop_id, name: a.name, executable: a.executable, exec: a.exec, terminal: a.terminal, no_display: a.no_display })
            .collect(),
    })
}

// ------------------------------------------------------------------ launch

/// Environment that makes toolkits expose their accessibility tree whatever
/// the session's accessibility flag says: Qt 5/6 (QT_ACCESSIBILITY; since Qt
/// 5.x also QT_LINUX_ACCESSIBILITY_ALWAYS_ON), GTK 2/Firefox and others that
/// read GNOME_ACCESSIBILITY.
pub const A11Y_ENV: &[(&str, &str)] = &[("QT_ACCESSIBILITY", "1"), ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"), ("GNOME_ACCESSIBILITY", "1")];

/// Chromium's renderer builds its tree only with this flag (or with the
/// session's flag on when it starts).
pub const CHROMIUM_A11Y_ARG: &str = "--force-renderer-accessibility";

/// Whether a program is a Chromium-family browser or an Electron app (by
/// the basename of its path, or of its target when it is a symlink).
pub fn chromium_family(executable: &Path) -> bool {
    let names = [Some(executable.to_path_buf()), std::fs::canonicalize(executable).ok()];
    names.iter().flatten().any(|p| {
        let base = p.file_name().map(|f| f.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        matches!(base.as_str(), "chromium" | "chromium-browser" | "chrome" | "headless_shell" | "electron")
            || ["google-chrome", "chromium-", "brave", "microsoft-edge", "vivaldi", "opera", "electron"].iter().any(|p| base.starts_with(p))
    })
}

/// The launch's environment: the helper's own (the orchestrator's, minus
/// deckhand's variables), plus A11Y_ENV and, for a desktop entry, the
/// variable GLib launchers set to name it (list_apps reads it back as the
/// process's desktop id), and `user`'s naming variables (HOME, USER, LOGNAME
/// of the user it runs as, session_user.rs). Names of the variables set or
/// changed.
pub fn launch_env(base: impl Iterator<Item = (OsString, OsString)>, desktop_file: Option<&Path>, user: &[(String, OsString)]) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut env: Vec<(OsString, OsString)> = base.filter(|(k, _)| !k.to_string_lossy().starts_with("DECKHAND_")).collect();
    let mut added = Vec::new();
    let mut set = |env: &mut Vec<(OsString, OsString)>, k: &str, v: OsString| {
        match env.iter_mut().find(|(ek, _)| ek == k) {
            Some((_, ev)) if *ev == v => return,
            Some((_, ev)) => *ev = v,
            None => env.push((k.into(), v)),
        }
        added.push(k.to_string());
    };
    for (k, v) in A11Y_ENV {
        set(&mut env, k, (*v).into());
    }
    if let Some(f) = desktop_file {
        set(&mut env, "GIO_LAUNCHED_DESKTOP_FILE", f.as_os_str().to_owned());
    }
    for (k, v) in user {
        set(&mut env, k, v.clone());
    }
    (env, added)
}

/// The program to exec: an absolute path as given, a bare name on PATH.
fn resolve_executable(name: &str) -> Result<PathBuf> {
    if name.contains('/') {
        let p = PathBuf::from(name);
        if !p.is_absolute() {
            return Err(Error::invalid(format!("executable {name:?} is a relative path: give an absolute path or a bare name")));
        }
        if !p.exists() {
            return Err(spawn::launch_failed(spawn::ExecFailure::NotFound, &format!("{name} does not exist"), None));
        }
        if !desktop::is_executable(&p) {
            return Err(spawn::launch_failed(spawn::ExecFailure::NotExecutable, &format!("{name} is not an executable file"), None));
        }
        return Ok(p);
    }
    desktop::resolve_program(name, std::env::var("PATH").ok().as_deref())
        .ok_or_else(|| spawn::launch_failed(spawn::ExecFailure::NotFound, &format!("no executable {name:?} on PATH"), None))
}

const MAX_ARG_BYTES: usize = 32 * 1024;

pub async fn launch(id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let refuse = |e: &Error| Response::err(id, e, Some(receipt(Delivery::NotDispatched)));
    let a: LaunchArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return refuse(&e),
    };
    if a.args.len() > 256 || a.args.iter().any(|x| x.len() > MAX_ARG_BYTES) || a.executable.is_empty() {
        return refuse(&Error::invalid("launch takes a non-empty executable and at most 256 arguments of at most 32 KiB each"));
    }
    let (d, _) = deadline_of(deadline_ms);
    let work = tokio::task::spawn_blocking(move || -> Result<LaunchResult> {
        let exe = resolve_executable(&a.executable)?;
        // The entry's file, for the environment that names it (not found: none).
        let desktop_file = a.desktop_id.as_deref().and_then(|id| desktop::scan_env().into_iter().find(|e| e.desktop_id == id || e.desktop_id == format!("{id}.desktop")).map(|e| e.path));
        let mut args_added = Vec::new();
        let mut argv = a.args.clone();
        if chromium_family(&exe) && !argv.iter().any(|x| x == CHROMIUM_A11Y_ARG) {
            argv.insert(0, CHROMIUM_A11Y_ARG.to_string());
            args_added.push(CHROMIUM_A11Y_ARG.to_string());
        }
        // ---- issue 19: on a Wayland session, the app runs as the compositor's user
        let run_as = if crate::wayland::backend().is_wayland() { session_user::of_session() } else { None };
        let naming = run_as.as_ref().map(|r| r.env.as_slice()).unwrap_or_default();
        // ---- end Wayland
        let (env, env_added) = launch_env(std::env::vars_os(), desktop_file.as_deref(), naming);
        let home = env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| PathBuf::from(v)).filter(|h| h.is_dir());
        let mut prepared = spawn::Prepared::new(&exe, &a.executable, &argv, &env, home.as_deref())?;
        if let Some(r) = &run_as {
            prepared = prepared.as_user(r.uid, r.gid);
        }
        let pid = spawn::spawn(&prepared)?;
        Ok(LaunchResult { pid, start_time: crate::procfs::start_time(pid), env_added, args_added })
    });
    match tokio::time::timeout(d, work).await {
        Ok(Ok(Ok(r))) => Response::ok(id, to_value(&r), Some(receipt(Delivery::Submitted))),
        // Refused before the fork, or the exec failed: nothing runs.
        Ok(Ok(Err(e))) => refuse(&e),
        Ok(Err(e)) => Response::err(id, &Error::internal(format!("launch: {e}")), Some(receipt(Delivery::Unknown))),
        Err(_) => Response::err(id, &Error::timeout(format!("launch did not finish within {} ms", d.as_millis())), Some(receipt(Delivery::Unknown))),
    }
}

/// Longest launch_status waits for the watcher's report of a process seen gone.
const REPORT_WAIT: Duration = Duration::from_millis(500);

pub async fn launch_status(a: LaunchStatusArgs) -> Result<LaunchStatusResult> {
    let until = Instant::now() + REPORT_WAIT;
    let mut st = spawn::status(a.pid);
    // Gone, its end not yet reported: the report is a moment away.
    while matches!(st, Some((false, None, true))) && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(5)).await;
        st = spawn::status(a.pid);
    }
    Ok(match st {
        None => LaunchStatusResult { known: false, running: !crate::ops::act::process_gone(a.pid), exit_code: None, signal: None },
        Some((running, ended, _)) => LaunchStatusResult {
            known: true,
            running,
            exit_code: ended.and_then(|e| e.exit_code),
            signal: ended.and_then(|e| e.signal),
        },
    })
}

// ------------------------------------------------------------------ window_op

/// Longest a close waits for the window to go (the app may show a dialog
/// instead: then the caller sees it among the app's windows).
const CLOSE_WAIT: Duration = Duration::from_millis(2000);
/// Longest an activation or a restore waits for the window manager.
const WM_WAIT: Duration = Duration::from_millis(3000);
/// Margin kept before the request's deadline for the answer.
const MARGIN: Duration = Duration::from_millis(100);

fn net_wm_pid(x: &X, w: u32) -> Option<u32> {
    use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
    x.conn.get_property(false, w, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, 0, 1).ok()?.reply().ok()?.value32()?.next().filter(|&p| p > 0)
}

fn run_window_op(x: &X, a: &WindowOpArgs, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<wm::Outcome> {
    match a.op {
        WindowOpKind::Restore => wm::restore(x, a.window_id, until.min(Instant::now() + WM_WAIT), cancelled),
        WindowOpKind::Close => wm::close(x, a.window_id, until.min(Instant::now() + CLOSE_WAIT), cancelled),
        WindowOpKind::Activate => {
            if !wm::shown(x, a.window_id)?.exists {
                return Err(Error::new(Code::WindowNotFound, format!("no X window {}", a.window_id)).with("window_id", a.window_id));
            }
            let g = FocusGuard { window_id: a.window_id, pid: net_wm_pid(x, a.window_id).unwrap_or(0), activate: true };
            let seen = focus::activate_and_wait(x, &g, until.min(Instant::now() + WM_WAIT), cancelled)?;
            let detail = if seen.window == a.window_id {
                "_NET_ACTIVE_WINDOW sent; the window holds the input focus (read back)".to_string()
            } else if seen.accepted {
                format!("_NET_ACTIVE_WINDOW sent; the focus went to window {}, a dialog of it (read back)", seen.window)
            } else if seen.window == 0 {
                "_NET_ACTIVE_WINDOW sent; no window holds the input focus".to_string()
            } else {
                format!("_NET_ACTIVE_WINDOW sent; the input focus is on window {}", seen.window)
            };
            Ok(wm::Outcome { done: seen.accepted, detail, sent: true })
        }
    }
}

pub async fn window_op(ctx: &Ctx, id: u64, deadline_ms: u64, args: &rmpv::Value) -> Response {
    let (d, deadline) = deadline_of(deadline_ms);
    let a: WindowOpArgs = match decode_args(args) {
        Ok(a) => a,
        Err(e) => return Response::err(id, &e, Some(receipt(Delivery::NotDispatched))),
    };
    let cancelled = ctx.cancelled.clone();
    let abandon = Arc::new(AtomicBool::new(false));
    let abandon_w = abandon.clone();
    let window_id = a.window_id;
    // ---- issue 19: sway's IPC on the Wayland backend
    let sway = match super::window::sway_socket() {
        Ok(s) => s,
        Err(e) => return Response::err(id, &e, Some(receipt(Delivery::NotDispatched))),
    };
    // ---- end Wayland
    let job = move |conn: &mut Option<X>| -> Result<wm::Outcome> {
        let stop = || abandon_w.load(Ordering::Relaxed) || super::OUTPUT_CLOSED.load(Ordering::Relaxed) || cancelled.lock().map(|s| s.contains(&id)).unwrap_or(false);
        let until = deadline.checked_sub(MARGIN).unwrap_or(deadline);
        if let Some(sock) = &sway {
            use crate::wayland::window_ops;
            return match a.op {
                WindowOpKind::Activate => window_ops::activate(sock, a.window_id, until.min(Instant::now() + WM_WAIT), &stop),
                WindowOpKind::Restore => window_ops::restore(sock, a.window_id, until.min(Instant::now() + WM_WAIT), &stop),
                WindowOpKind::Close => window_ops::close(sock, a.window_id, until.min(Instant::now() + CLOSE_WAIT), &stop),
            };
        }
        if conn.is_none() {
            *conn = Some(X::connect()?);
        }
        let x = conn.as_mut().expect("connected above");
        let r = run_window_op(x, &a, until, &stop);
        if r.as_ref().is_err_and(|e| e.message.starts_with("X connection")) {
            *conn = None;
        }
        r
    };
    match tokio::time::timeout(d, ctx.input.run(job)).await {
        Ok(Ok(Ok(o))) => {
            let delivery = if o.sent { Delivery::Submitted } else { Delivery::NotDispatched };
            Response::ok(id, to_value(&WindowOpResult { window_id, done: o.done, detail: o.detail }), Some(receipt(delivery)))
        }
        // Failures come before anything is sent (the window is gone, no X).
        Ok(Ok(Err(e))) => Response::err(id, &e, Some(receipt(Delivery::NotDispatched))),
        Ok(Err(e)) => Response::err(id, &e, Some(receipt(Delivery::Unknown))),
        Err(_) => {
            abandon.store(true, Ordering::Relaxed);
            Response::err(id, &Error::timeout(format!("window_op did not finish within {} ms", d.as_millis())), Some(receipt(Delivery::Unknown)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_env_adds_accessibility_and_drops_deckhand_vars() {
        let base = vec![
            (OsString::from("PATH"), OsString::from("/usr/bin")),
            (OsString::from("DECKHAND_STATE_DIR"), OsString::from("/tmp/s")),
            (OsString::from("QT_ACCESSIBILITY"), OsString::from("1")),
            (OsString::from("GNOME_ACCESSIBILITY"), OsString::from("0")),
        ];
        let (env, added) = launch_env(base.into_iter(), Some(Path::new("/usr/share/applications/x.desktop")), &[]);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(get("DECKHAND_STATE_DIR"), None);
        assert_eq!(get("QT_ACCESSIBILITY").as_deref(), Some("1"));
        assert_eq!(get("QT_LINUX_ACCESSIBILITY_ALWAYS_ON").as_deref(), Some("1"));
        assert_eq!(get("GNOME_ACCESSIBILITY").as_deref(), Some("1"));
        assert_eq!(get("GIO_LAUNCHED_DESKTOP_FILE").as_deref(), Some("/usr/share/applications/x.desktop"));
        // Already as wanted: not "added".
        assert_eq!(added, ["QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "GNOME_ACCESSIBILITY", "GIO_LAUNCHED_DESKTOP_FILE"]);
        assert_eq!(env.iter().filter(|(k, _)| k == "GNOME_ACCESSIBILITY").count(), 1);
    }

    #[test]
    fn launch_env_names_the_user_the_app_runs_as() {
        let base = vec![(OsString::from("HOME"), OsString::from("/root")), (OsString::from("USER"), OsString::from("root"))];
        let user = [("HOME".to_string(), OsString::from("/tmp/d/home")), ("USER".to_string(), OsString::from("deckhand-wl")), ("LOGNAME".to_string(), OsString::from("deckhand-wl"))];
        let (env, added) = launch_env(base.into_iter(), None, &user);
        let get = |k: &str| env.iter().find(|(ek, _)| ek == k).map(|(_, v)| v.to_string_lossy().into_owned());
        assert_eq!(get("HOME").as_deref(), Some("/tmp/d/home"));
        assert_eq!(get("USER").as_deref(), Some("deckhand-wl"));
        assert_eq!(get("LOGNAME").as_deref(), Some("deckhand-wl"));
        assert!(["HOME", "USER", "LOGNAME"].iter().all(|k| added.contains(&k.to_string())), "{added:?}");
    }

    #[test]
    fn chromium_family_by_name() {
        for n in ["/usr/bin/chromium", "/opt/google/chrome/google-chrome", "/usr/bin/google-chrome-stable", "/usr/bin/brave-browser", "/opt/x/electron", "/usr/bin/microsoft-edge-beta", "/usr/lib/chromium/chromium"] {
            assert!(chromium_family(Path::new(n)), "{n}");
        }
        for n in ["/usr/bin/firefox", "/usr/bin/mousepad", "/usr/bin/featherpad", "/bin/sh"] {
            assert!(!chromium_family(Path::new(n)), "{n}");
        }
    }

    #[test]
    fn executable_resolution() {
        assert!(resolve_executable("sh").is_ok());
        assert_eq!(resolve_executable("bin/sh").unwrap_err().code, Code::InvalidArguments);
        let e = resolve_executable("/nonexistent/deckhand").unwrap_err();
        assert_eq!(e.code, Code::LaunchFailed);
        let e = resolve_executable("deckhand-no-such-program-anywhere").unwrap_err();
        assert!(e.details.iter().any(|(k, v)| k == "reason" && *v == crate::error::Detail::Str("not-found".into())));
        let e = resolve_executable("/etc/passwd").unwrap_err();
        assert!(e.details.iter().any(|(k, v)| k == "reason" && *v == crate::error::Detail::Str("not-executable".into())));
    }
}
