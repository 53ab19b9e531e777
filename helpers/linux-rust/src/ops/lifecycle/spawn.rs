//! Starting a program detached from the helper, without a shell.
//!
//! The process tree is helper -> A -> B -> app: A starts a new session and
//! exits at once (the helper reaps it); B, the app's parent in that session,
//! waits for the app and reports its pid and, when it ends, its wait status
//! on a pipe; the app has the null device as stdin, stdout and stderr and no
//! other descriptor of the helper. So neither the app nor B is a descendant
//! of the helper or in its process group: a supervisor that kills the
//! helper's tree (after a timeout) does not take the user's app with it,
//! and the app never holds the helper's pipes. B lives at most WATCH_SECS
//! (SIGALRM), after which init reaps the app; no zombie is left either way.
//!
//! Between fork and exec only async-signal-safe calls are made (the helper
//! has threads): everything the children need is allocated before forking.

use crate::error::{Code, Error, Result};
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long B waits for the app, so that launch_status knows how it ended
/// (a launch waits at most 120 s for its window).
const WATCH_SECS: u32 = 150;
/// Most the helper waits for B's report and for the exec's outcome.
const SPAWN_WAIT: Duration = Duration::from_millis(5000);

const TAG_PID: i32 = 1;
const TAG_EXIT: i32 = 2;
const TAG_EXEC_ERR: i32 = 3;
const TAG_SETUP_ERR: i32 = 4;
/// The switch to the launch's user failed (errno): nothing was exec'd.
const TAG_USER_ERR: i32 = 5;

/// Why a program could not be started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExecFailure {
    NotFound,
    NotExecutable,
    BadFormat,
    Other(i32),
}

impl ExecFailure {
    pub fn of_errno(e: i32) -> ExecFailure {
        match e {
            libc::ENOENT | libc::ENOTDIR => ExecFailure::NotFound,
            libc::EACCES | libc::EPERM | libc::EISDIR => ExecFailure::NotExecutable,
            libc::ENOEXEC | libc::ELIBBAD => ExecFailure::BadFormat,
            other => ExecFailure::Other(other),
        }
    }
    /// The wire's details.reason.
    pub fn reason(self) -> &'static str {
        match self {
            ExecFailure::NotFound => "not-found",
            ExecFailure::NotExecutable => "not-executable",
            ExecFailure::BadFormat => "bad-format",
            ExecFailure::Other(_) => "exec-failed",
        }
    }
}

pub fn launch_failed(f: ExecFailure, what: &str, errno: Option<i32>) -> Error {
    let msg = match errno {
        Some(e) => format!("{what}: {} ({})", f.reason(), std::io::Error::from_raw_os_error(e)),
        None => format!("{what}: {}", f.reason()),
    };
    let e = Error::new(Code::LaunchFailed, msg).with("reason", f.reason());
    match errno {
        Some(n) => e.with("errno", n as i64),
        None => e,
    }
}

/// How a launched process ended, as far as its watcher saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ended {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

struct Watched {
    start_time: Option<u64>,
    ended: Option<Ended>,
    /// The watcher still reports (its end is on the way once the process is gone).
    watching: bool,
    seq: u64,
}

/// Launches of this helper process, by pid (the most recent MAX_WATCHED).
static WATCHED: Mutex<Option<HashMap<u32, Watched>>> = Mutex::new(None);
const MAX_WATCHED: usize = 256;

fn watched<T>(f: impl FnOnce(&mut HashMap<u32, Watched>) -> T) -> T {
    let mut g = WATCHED.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// What is known of a launched pid: None when this helper did not launch it.
/// (running, how it ended, whether the watcher's report of the end is
/// still to come).
pub fn status(pid: u32) -> Option<(bool, Option<Ended>, bool)> {
    watched(|m| {
        let w = m.get(&pid)?;
        if let Some(e) = w.ended {
            return Some((false, Some(e), false));
        }
        // Same pid, same start time: still our process.
        let same = crate::procfs::start_time(pid).is_some() && crate::procfs::start_time(pid) == w.start_time;
        let running = same && !crate::ops::act::process_gone(pid);
        Some((running, None, !running && w.watching))
    })
}

fn record(pid: u32, start_time: Option<u64>) {
    watched(|m| {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if m.len() >= MAX_WATCHED {
            if let Some(oldest) = m.iter().min_by_key(|(_, w)| w.seq).map(|(p, _)| *p) {
                m.remove(&oldest);
            }
        }
        m.insert(pid, Watched { start_time, ended: None, watching: true, seq });
    });
}

fn ended(pid: u32, status: i32) {
    let e = if libc::WIFEXITED(status) {
        Ended { exit_code: Some(libc::WEXITSTATUS(status)), signal: None }
    } else if libc::WIFSIGNALED(status) {
        Ended { exit_code: None, signal: Some(libc::WTERMSIG(status)) }
    } else {
        Ended::default()
    };
    watched(|m| {
        if let Some(w) = m.get_mut(&pid) {
            w.ended = Some(e);
        }
    });
}

fn unwatched(pid: u32) {
    watched(|m| {
        if let Some(w) = m.get_mut(&pid) {
            w.watching = false;
        }
    });
}

/// A program ready to be exec'd: everything allocated before the fork.
pub struct Prepared {
    exe: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
    cwd: Option<CString>,
    /// (uid, gid) the app runs as, supplementary groups cleared (None: the helper's).
    user: Option<(u32, u32)>,
}

impl Prepared {
    /// `argv[0]` is `arg0`; `env` is the complete environment.
    pub fn new(exe: &Path, arg0: &str, args: &[String], env: &[(OsString, OsString)], cwd: Option<&Path>) -> Result<Prepared> {
        let c = |b: &[u8], what: &str| CString::new(b).map_err(|_| Error::invalid(format!("{what} contains a NUL byte")));
        let exe = c(exe.as_os_str().as_bytes(), "the executable")?;
        let mut argv = vec![c(arg0.as_bytes(), "the program name")?];
        for a in args {
            argv.push(c(a.as_bytes(), "an argument")?);
        }
        let mut envp = Vec::with_capacity(env.len());
        for (k, v) in env {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp.push(c(&kv, "an environment variable")?);
        }
        let cwd = match cwd {
            Some(p) => Some(c(p.as_os_str().as_bytes(), "the working directory")?),
            None => None,
        };
        Ok(Prepared { exe, argv, envp, cwd, user: None })
    }

    /// Runs the app as this user and group (the helper must be root).
    pub fn as_user(mut self, uid: u32, gid: u32) -> Prepared {
        self.user = Some((uid, gid));
        self
    }
}

fn errno() -> i32 {
    // SAFETY: reading this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// One 12-byte record (atomic on a pipe: below PIPE_BUF).
fn write_rec(fd: i32, tag: i32, value: i32) {
    let mut buf = [0u8; 12];
    buf[0..4].copy_from_slice(&tag.to_ne_bytes());
    buf[4..8].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: a valid buffer; failure ignored (the reader is gone).
    unsafe {
        libc::write(fd, buf.as_ptr().cast(), buf.len());
    }
}

/// Read one record, waiting until `until`. Ok(None): end of file.
fn read_rec(fd: i32, until: Option<Instant>) -> std::io::Result<Option<(i32, i32)>> {
    let mut buf = [0u8; 12];
    let mut got = 0;
    while got < buf.len() {
        if let Some(until) = until {
            let left = until.saturating_duration_since(Instant::now());
            let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut p, 1, left.as_millis().min(i32::MAX as u128) as i32) };
            if r == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, "no report in time"));
            }
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
        }
        // SAFETY: reading into the unfilled part of buf.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n == 0 {
            return Ok(None);
        }
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        got += n as usize;
    }
    let tag = i32::from_ne_bytes(buf[0..4].try_into().expect("4 bytes"));
    let value = i32::from_ne_bytes(buf[4..8].try_into().expect("4 bytes"));
    Ok(Some((tag, value)))
}

struct Fd(i32);
impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: closing a descriptor we own.
            unsafe {
                libc::close(self.0);
            }
        }
    }
}

fn pipe() -> Result<(Fd, Fd)> {
    let mut fds = [0i32; 2];
    // SAFETY: a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::internal(format!("pipe2: {}", std::io::Error::last_os_error())));
    }
    Ok((Fd(fds[0]), Fd(fds[1])))
}

/// Signal dispositions back to the defaults and nothing blocked: an ignored
/// signal (the helper ignores SIGPIPE) and the blocked mask survive exec.
/// Async-signal-safe.
unsafe fn reset_signals() {
    for sig in 1..32 {
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::signal(sig, libc::SIG_DFL);
        }
    }
    let mut set: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut set);
    libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
}

/// Close every descriptor from 3 up but `keep`. Async-signal-safe.
unsafe fn close_all_but(keep: i32) {
    let close_range = |lo: u32, hi: u32| libc::syscall(libc::SYS_close_range, lo, hi, 0u32) == 0;
    let ok = (keep <= 3 || close_range(3, keep as u32 - 1)) && close_range(keep as u32 + 1, u32::MAX);
    if !ok {
        // A kernel without close_range (before 5.9): one by one, as far as anything is usually open.
        for fd in 3..4096 {
            if fd != keep {
                libc::close(fd);
            }
        }
    }
}

/// Start the program; its pid once it was exec'd. Exec failures are
/// LAUNCH_FAILED with details.reason.
pub fn spawn(p: &Prepared) -> Result<u32> {
    let argv: Vec<*const libc::c_char> = p.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let envp: Vec<*const libc::c_char> = p.envp.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
    let exe = p.exe.as_ptr();
    let cwd = p.cwd.as_ref().map(|c| c.as_ptr());
    let user = p.user;
    let devnull_path = c"/dev/null";
    // SAFETY: a valid path.
    let devnull = Fd(unsafe { libc::open(devnull_path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) });
    if devnull.0 < 0 {
        return Err(Error::internal(format!("open /dev/null: {}", std::io::Error::last_os_error())));
    }
    let (st_r, st_w) = pipe()?;
    let (ex_r, ex_w) = pipe()?;

    // SAFETY: fork; the children below call only async-signal-safe functions
    // on memory allocated before it, and end in execve or _exit.
    let a = unsafe { libc::fork() };
    if a < 0 {
        return Err(Error::internal(format!("fork: {}", std::io::Error::last_os_error())));
    }
    if a == 0 {
        unsafe {
            libc::setsid();
            let b = libc::fork();
            if b < 0 {
                write_rec(st_w.0, TAG_SETUP_ERR, errno());
                libc::_exit(1);
            }
            if b > 0 {
                libc::_exit(0);
            }
            // B: the app's parent, in the new session. It must hold nothing
            // of the helper's: not its stdin/stdout (the orchestrator waits
            // for the helper's stdout to close), nor any other descriptor.
            reset_signals();
            libc::dup2(devnull.0, 0);
            libc::dup2(devnull.0, 1);
            libc::dup2(devnull.0, 2);
            let app = libc::fork();
            if app < 0 {
                write_rec(st_w.0, TAG_SETUP_ERR, errno());
                libc::_exit(1);
            }
            if app == 0 {
                // The app.
                libc::dup2(devnull.0, 0);
                libc::dup2(devnull.0, 1);
                libc::dup2(devnull.0, 2);
                // Nothing else of the helper's survives the exec (the exec
                // pipe stays open, close-on-exec, until the exec succeeds).
                libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 4u32 /* CLOSE_RANGE_CLOEXEC */);
                // Groups first, the uid last (after it nothing may be changed).
                if let Some((uid, gid)) = user {
                    if libc::setgroups(0, std::ptr::null()) != 0 || libc::setgid(gid) != 0 || libc::setuid(uid) != 0 {
                        write_rec(ex_w.0, TAG_USER_ERR, errno());
                        libc::_exit(127);
                    }
                }
                if let Some(cwd) = cwd {
                    libc::chdir(cwd);
                }
                libc::execve(exe, argv.as_ptr(), envp.as_ptr());
                write_rec(ex_w.0, TAG_EXEC_ERR, errno());
                libc::_exit(127);
            }
            close_all_but(st_w.0);
            write_rec(st_w.0, TAG_PID, app);
            libc::alarm(WATCH_SECS);
            loop {
                let mut status = 0;
                let r = libc::waitpid(app, &mut status, 0);
                if r == app {
                    write_rec(st_w.0, TAG_EXIT, status);
                    break;
                }
                if r < 0 && errno() != libc::EINTR {
                    break;
                }
            }
            libc::_exit(0);
        }
    }
    // The helper: only the readers stay open here.
    drop(st_w);
    drop(ex_w);
    drop(devnull);
    loop {
        let mut status = 0;
        // SAFETY: reaping A, our child, which exits at once.
        let r = unsafe { libc::waitpid(a, &mut status, 0) };
        if r == a || (r < 0 && errno() != libc::EINTR) {
            break;
        }
    }
    let until = Instant::now() + SPAWN_WAIT;
    let pid = match read_rec(st_r.0, Some(until)) {
        Ok(Some((TAG_PID, pid))) if pid > 0 => pid as u32,
        Ok(Some((TAG_SETUP_ERR, e))) => return Err(Error::internal(format!("fork: {}", std::io::Error::from_raw_os_error(e)))),
        Ok(other) => return Err(Error::internal(format!("the launch watcher reported {other:?} instead of a pid"))),
        Err(e) => return Err(Error::internal(format!("the launch watcher did not report: {e}"))),
    };
    // The exec's outcome: end of file when it succeeded (close-on-exec).
    let exec = read_rec(ex_r.0, Some(until));
    let start_time = crate::procfs::start_time(pid);
    record(pid, start_time);
    // The watcher's later report (how the app ended) is read on a thread of its own.
    let fd = st_r.0;
    std::mem::forget(st_r);
    let _ = std::thread::Builder::new().name(format!("launched-{pid}")).spawn(move || {
        let fd = Fd(fd);
        match read_rec(fd.0, None) {
            Ok(Some((TAG_EXIT, status))) => ended(pid, status),
            // The watcher gave up (WATCH_SECS) or died: status() reads /proc.
            _ => {}
        }
        unwatched(pid);
    });
    match exec {
        Ok(None) => Ok(pid),
        Ok(Some((TAG_EXEC_ERR, e))) => Err(launch_failed(ExecFailure::of_errno(e), &format!("exec of {}", p.exe.to_string_lossy()), Some(e))),
        Ok(Some((TAG_USER_ERR, e))) => {
            let (uid, gid) = p.user.unwrap_or_default();
            let msg = format!("switching to uid {uid} gid {gid} to run {}: {}", p.exe.to_string_lossy(), std::io::Error::from_raw_os_error(e));
            Err(Error::new(Code::LaunchFailed, msg).with("reason", "user-switch-failed").with("errno", e as i64))
        }
        Ok(other) => Err(Error::internal(format!("unexpected exec report {other:?}"))),
        Err(e) => Err(Error::internal(format!("the exec's outcome was not reported in time: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> Vec<(OsString, OsString)> {
        vec![(OsString::from("PATH"), OsString::from("/usr/bin:/bin")), (OsString::from("DECKHAND_SPAWN_TEST"), OsString::from("v"))]
    }

    fn wait_ended(pid: u32) -> Option<Ended> {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if let Some((false, e, false)) = status(pid) {
                return e;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("pid {pid} did not end");
    }

    #[test]
    fn exit_codes_are_reported_and_nothing_is_left_behind() {
        let p = Prepared::new(Path::new("/bin/sh"), "sh", &["-c".into(), "exit 3".into()], &env(), None).unwrap();
        let pid = spawn(&p).unwrap();
        assert_eq!(wait_ended(pid), Some(Ended { exit_code: Some(3), signal: None }));
        // Not our child: the helper has nothing to reap.
        let r = unsafe { libc::waitpid(pid as i32, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(r, -1, "the app is not a child of the helper");
    }

    #[test]
    fn detached_with_null_stdio_in_its_own_session_and_given_env() {
        let dir = std::env::temp_dir().join(format!("deckhand-spawn-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = dir.join("out");
        let script = format!(
            "printf '%s %s %s\\n' \"$DECKHAND_SPAWN_TEST\" \"$(ps -o sid= -p $$ | tr -d ' ')\" \"$(readlink /proc/$$/fd/0)\" > {}; ls /proc/$$/fd >> {}",
            out.display(),
            out.display()
        );
        let p = Prepared::new(Path::new("/bin/sh"), "sh", &["-c".into(), script], &env(), Some(&dir)).unwrap();
        let pid = spawn(&p).unwrap();
        assert_eq!(wait_ended(pid), Some(Ended { exit_code: Some(0), signal: None }));
        let text = std::fs::read_to_string(&out).unwrap();
        let mut lines = text.lines();
        let first: Vec<&str> = lines.next().unwrap().split(' ').collect();
        assert_eq!(first[0], "v");
        let my_sid = unsafe { libc::getsid(0) };
        assert_ne!(first[1].parse::<i32>().unwrap(), my_sid, "a session of its own");
        assert_eq!(first[2], "/dev/null");
        // fds: 0 1 2 and the one ls opens to list them (3); nothing of ours.
        let fds: Vec<&str> = lines.collect();
        assert!(fds.len() <= 4, "inherited descriptors: {fds:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Neither the app nor its watcher keeps a descriptor of the helper's
    /// (not even one without close-on-exec, as the helper's stdout is): the
    /// orchestrator sees the helper's stdout close when the helper exits.
    #[test]
    fn nothing_of_the_helper_is_held() {
        let mut fds = [0i32; 2];
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0, "a pipe without close-on-exec");
        let p = Prepared::new(Path::new("/bin/sleep"), "sleep", &["2".into()], &env(), None).unwrap();
        let pid = spawn(&p).unwrap();
        unsafe { libc::close(fds[1]) };
        let mut pfd = libc::pollfd { fd: fds[0], events: libc::POLLIN, revents: 0 };
        let t0 = Instant::now();
        let r = unsafe { libc::poll(&mut pfd, 1, 1500) };
        let mut b = [0u8; 1];
        let n = unsafe { libc::read(fds[0], b.as_mut_ptr().cast(), 1) };
        unsafe { libc::close(fds[0]) };
        assert!(r == 1 && n == 0, "the write end is still held by the launch (poll {r}, read {n}, {:?})", t0.elapsed());
        assert!(matches!(status(pid), Some((true, None, _))), "sleep still runs: {:?}", status(pid));
    }

    #[test]
    fn exec_failures_have_reasons() {
        let missing = Prepared::new(Path::new("/nonexistent/deckhand-x"), "x", &[], &env(), None).unwrap();
        let e = spawn(&missing).unwrap_err();
        assert_eq!(e.code, Code::LaunchFailed);
        assert!(e.details.iter().any(|(k, v)| k == "reason" && *v == crate::error::Detail::Str("not-found".into())), "{e:?}");
        let not_exec = Prepared::new(Path::new("/etc/passwd"), "passwd", &[], &env(), None).unwrap();
        let e = spawn(&not_exec).unwrap_err();
        assert!(e.details.iter().any(|(k, v)| k == "reason" && *v == crate::error::Detail::Str("not-executable".into())), "{e:?}");
        assert!(Prepared::new(Path::new("/bin/sh"), "sh", &["a\0b".into()], &env(), None).is_err());
    }

    /// As root: the app runs as the given user and group, with no supplementary group.
    #[test]
    fn runs_as_the_given_user() {
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: switching users needs root");
            return;
        }
        let p = Prepared::new(Path::new("/bin/sleep"), "sleep", &["2".into()], &env(), None).unwrap().as_user(65534, 65533);
        let pid = spawn(&p).unwrap();
        let st = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let field = |k: &str| st.lines().find(|l| l.starts_with(k)).unwrap().split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
        assert_eq!(field("Uid:"), "65534 65534 65534 65534");
        assert_eq!(field("Gid:"), "65533 65533 65533 65533");
        assert_eq!(field("Groups:"), "");
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
        assert_eq!(wait_ended(pid), Some(Ended { exit_code: None, signal: Some(libc::SIGTERM) }));
    }

    #[test]
    fn a_signal_is_reported() {
        let p = Prepared::new(Path::new("/bin/sh"), "sh", &["-c".into(), "kill -TERM $$".into()], &env(), None).unwrap();
        let pid = spawn(&p).unwrap();
        assert_eq!(wait_ended(pid), Some(Ended { exit_code: None, signal: Some(libc::SIGTERM) }));
        assert_eq!(status(1), None, "not one of ours");
    }
}
