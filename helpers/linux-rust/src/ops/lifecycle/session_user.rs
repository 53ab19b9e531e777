//! Who a launched app runs as on a Wayland session (issue 19).
//!
//! An app belongs to the session whose compositor shows it: its windows,
//! its files under the session's home and runtime dir, its sockets (an
//! app's own AT-SPI socket accepts its own uid only). When the helper runs
//! as root and the compositor as another user (deckhand's private Wayland
//! desktop under root: sway refuses root, it runs as deckhand-wl), an app
//! started as root would be a root client on that user's desktop, writing
//! root-owned files into the user's dirs. So the app runs as the
//! compositor's user: its uid and gid (SO_PEERCRED of the compositor's
//! Wayland socket, the kernel's word), no supplementary groups, and the
//! compositor's own HOME, USER and LOGNAME (/proc/PID/environ: the
//! session's home, which the passwd entry of a system account may not
//! name). As any other user, or on X11, nothing changes.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

/// The user a launch switches to, and the variables that name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    pub uid: u32,
    pub gid: u32,
    /// HOME, USER, LOGNAME as the compositor has them (those it has).
    pub env: Vec<(String, OsString)>,
}

/// The peer of a Unix socket: (pid, uid, gid).
fn peer_cred(s: &UnixStream) -> Option<(u32, u32, u32)> {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a connected socket and a ucred-sized buffer.
    let r = unsafe { libc::getsockopt(s.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PEERCRED, (&mut cred as *mut libc::ucred).cast(), &mut len) };
    (r == 0 && cred.pid > 0).then_some((cred.pid as u32, cred.uid, cred.gid))
}

/// The Wayland socket of this session: $WAYLAND_DISPLAY (absolute, or in $XDG_RUNTIME_DIR).
fn wayland_socket(var: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let name = PathBuf::from(var("WAYLAND_DISPLAY").filter(|v| !v.is_empty())?);
    if name.is_absolute() {
        return Some(name);
    }
    Some(PathBuf::from(var("XDG_RUNTIME_DIR").filter(|v| !v.is_empty())?).join(name))
}

/// A process's HOME, USER and LOGNAME (those it has).
fn naming_env(environ: &[u8]) -> Vec<(String, OsString)> {
    let mut out = Vec::new();
    for key in ["HOME", "USER", "LOGNAME"] {
        let prefix = format!("{key}=");
        if let Some(v) = environ.split(|&b| b == 0).find_map(|kv| kv.strip_prefix(prefix.as_bytes())) {
            out.push((key.to_string(), OsString::from_vec(v.to_vec())));
        }
    }
    out
}

/// The decision, apart from the system: a helper running as root on a
/// session whose compositor runs as another user launches as that user.
pub fn decide(helper_euid: u32, compositor: Option<(u32, u32)>, compositor_environ: &[u8]) -> Option<RunAs> {
    let (uid, gid) = compositor?;
    if helper_euid != 0 || uid == 0 {
        return None;
    }
    Some(RunAs { uid, gid, env: naming_env(compositor_environ) })
}

/// Who a launch on this Wayland session runs as (None: as the helper).
pub fn of_session() -> Option<RunAs> {
    // SAFETY: geteuid cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid != 0 {
        return None;
    }
    let sock = wayland_socket(|k| std::env::var_os(k))?;
    let stream = UnixStream::connect(sock).ok()?;
    let (pid, uid, gid) = peer_cred(&stream)?;
    drop(stream);
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    decide(euid, Some((uid, gid)), &environ)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENV: &[u8] = b"PATH=/usr/bin\0HOME=/tmp/d/home\0USER=deckhand-wl\0LOGNAME=deckhand-wl\0WAYLAND_DISPLAY=wayland-1\0";

    #[test]
    fn root_on_another_users_session_runs_as_that_user() {
        let r = decide(0, Some((999, 998)), ENV).unwrap();
        assert_eq!((r.uid, r.gid), (999, 998));
        assert_eq!(r.env, vec![("HOME".into(), "/tmp/d/home".into()), ("USER".into(), "deckhand-wl".into()), ("LOGNAME".into(), "deckhand-wl".into())]);
    }

    #[test]
    fn otherwise_as_the_helper() {
        assert_eq!(decide(1000, Some((999, 998)), ENV), None, "not root: cannot switch, and need not");
        assert_eq!(decide(0, Some((0, 0)), ENV), None, "the compositor runs as root too");
        assert_eq!(decide(0, None, ENV), None, "no compositor answered");
    }

    #[test]
    fn only_the_naming_variables_are_taken() {
        let r = decide(0, Some((5, 5)), b"HOMEX=no\0HOME=/h\0SHELL=/bin/sh\0").unwrap();
        assert_eq!(r.env, vec![("HOME".into(), "/h".into())]);
    }

    #[test]
    fn the_socket_is_found_as_clients_find_it() {
        let env = |pairs: &'static [(&'static str, &'static str)]| move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| OsString::from(v));
        assert_eq!(wayland_socket(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("XDG_RUNTIME_DIR", "/run/user/9")])), Some(PathBuf::from("/run/user/9/wayland-1")));
        assert_eq!(wayland_socket(env(&[("WAYLAND_DISPLAY", "/tmp/w-0"), ("XDG_RUNTIME_DIR", "/run/user/9")])), Some(PathBuf::from("/tmp/w-0")));
        assert_eq!(wayland_socket(env(&[("XDG_RUNTIME_DIR", "/run/user/9")])), None);
        assert_eq!(wayland_socket(env(&[("WAYLAND_DISPLAY", "wayland-1")])), None);
    }

    #[test]
    fn peer_credentials_are_the_kernels() {
        let (a, _b) = UnixStream::pair().unwrap();
        let (pid, uid, gid) = peer_cred(&a).unwrap();
        assert_eq!(pid, std::process::id());
        assert_eq!((uid, gid), unsafe { (libc::geteuid(), libc::getegid()) });
    }
}
