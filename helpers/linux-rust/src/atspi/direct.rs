//! Peer-to-peer connections to applications (issue 15: observation speed).
//!
//! Every call to an application over the accessibility bus crosses the bus
//! daemon twice (request and reply): for a 155-node GTK 3 tree (~620 calls)
//! the daemon spent as much CPU as the application itself (11.6 ms against
//! 12.2 ms per read, measured with /proc/PID/stat on this 2-core machine),
//! and on two cores that CPU is the read's wall time. at-spi2-atk (GTK 3,
//! Chromium, LibreOffice's GTK 3 build) offers a private socket for exactly
//! this: org.a11y.atspi.Application.GetApplicationBusAddress on the
//! application root answers a `unix:path=` address where the application
//! itself accepts D-Bus connections (libatspi uses it the same way). The
//! same objects, interfaces and answers; no daemon in between.
//!
//! Safety: the address comes from the application, so the socket's peer is
//! checked (SO_PEERCRED) to be the very process the bus daemon says owns the
//! bus name (`pid`); anything else is refused and the bus is used. The
//! connection is made under a short timeout (a hung application delays one
//! request by at most DIRECT_CONNECT_TIMEOUT, then is remembered as without
//! one for a while). Calls keep their budget and per-call timeouts
//! (`A11y::call_msg`); a call that fails on the socket itself (the
//! application exited, closed it) is retried once over the bus, so callers
//! see the bus's own errors (ServiceUnknown -> APP_EXITED).
//! Toolkits without it (Qt 5, GTK 4) answer UnknownMethod: bus as before.

use super::{A11y, ROOT_PATH};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const I_APPLICATION: &str = "org.a11y.atspi.Application";

/// Longest GetApplicationBusAddress, the socket connect and the D-Bus
/// handshake may take together.
const DIRECT_CONNECT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long an application that offered no (usable) socket is not asked again.
const RETRY_AFTER: Duration = Duration::from_secs(30);
/// Most direct connections kept open (one per application observed).
const MAX_DIRECT: usize = 32;

/// Most calls in flight at once on one direct connection (all requests
/// together).
pub const MAX_IN_FLIGHT: usize = 32;

type Slots = Arc<tokio::sync::Semaphore>;

enum Entry {
    /// A connection whose peer was checked to be this pid.
    Open(u32, zbus::Connection, Slots),
    /// No socket (or a refused one) at this time.
    Unavailable(Instant),
}

/// Bus unique name -> its direct connection. A bus daemon never reuses a
/// unique name, so a name always means the same process.
static DIRECT: Mutex<Option<HashMap<String, Entry>>> = Mutex::new(None);
/// One connection attempt at a time (concurrent requests for the same app
/// share the connection the first one made).
static CONNECTING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn with_map<T>(f: impl FnOnce(&mut HashMap<String, Entry>) -> T) -> T {
    let mut g = DIRECT.lock().unwrap_or_else(|p| p.into_inner());
    f(g.get_or_insert_with(HashMap::new))
}

/// Whether direct connections are switched off (debug/comparison switch).
fn disabled() -> bool {
    std::env::var("DECKHAND_NO_DIRECT").is_ok_and(|v| v == "1")
}

/// The known state for `bus` as the application `pid`: Some(Some(conn))
/// open to that very process, Some(None) unavailable (recently), None never
/// tried (or the retry time has come, or the connection known leads to
/// another process: a bus name of an earlier bus daemon).
fn known(bus: &str, pid: u32) -> Option<Option<(zbus::Connection, Slots)>> {
    with_map(|m| match m.get(bus) {
        Some(Entry::Open(p, c, s)) if *p == pid => Some(Some((c.clone(), s.clone()))),
        Some(Entry::Unavailable(t)) if t.elapsed() < RETRY_AFTER => Some(None),
        _ => None,
    })
}

/// Forget every direct connection (a new accessibility bus connection: bus
/// names start over with a new bus daemon).
pub fn clear() {
    with_map(|m| m.clear());
}

fn remember(bus: &str, e: Entry) {
    with_map(|m| {
        if m.len() >= MAX_DIRECT && !m.contains_key(bus) {
            // Unavailable entries first, then anything: a dropped
            // connection is only a slower next read.
            let victim = m.iter().find(|(_, e)| matches!(e, Entry::Unavailable(_))).map(|(k, _)| k.clone()).or_else(|| m.keys().next().cloned());
            if let Some(k) = victim {
                m.remove(&k);
            }
        }
        m.insert(bus.to_string(), e);
    });
}

/// Forget the direct connection to `bus` (its socket failed): the next
/// request asks again, after RETRY_AFTER.
pub fn forget(bus: &str) {
    remember(bus, Entry::Unavailable(Instant::now()));
}

/// Whether `bus` is known to offer no usable direct connection (for now).
#[cfg(test)]
pub fn is_unavailable(bus: &str) -> bool {
    with_map(|m| matches!(m.get(bus), Some(Entry::Unavailable(t)) if t.elapsed() < RETRY_AFTER))
}

/// `a` with its calls to `bus` sent over a direct connection to the
/// application when it offers one whose peer is `pid`; else `a` unchanged.
pub async fn attach(a: &A11y, bus: &str, pid: u32) -> A11y {
    if disabled() {
        return a.clone();
    }
    if let Some(k) = known(bus, pid) {
        return match k {
            Some((conn, slots)) => a.with_direct(bus, conn, slots),
            None => a.clone(),
        };
    }
    let _g = CONNECTING.lock().await;
    if let Some(k) = known(bus, pid) {
        return match k {
            Some((conn, slots)) => a.with_direct(bus, conn, slots),
            None => a.clone(),
        };
    }
    let t0 = Instant::now();
    match tokio::time::timeout(DIRECT_CONNECT_TIMEOUT, open(a, bus, pid)).await {
        Ok(Ok(conn)) => {
            if crate::debug() {
                eprintln!("deckhand-helper-linux: direct connection to {bus} (pid {pid}) in {:.1} ms", t0.elapsed().as_secs_f64() * 1e3);
            }
            let slots = Arc::new(tokio::sync::Semaphore::new(MAX_IN_FLIGHT));
            remember(bus, Entry::Open(pid, conn.clone(), slots.clone()));
            a.with_direct(bus, conn, slots)
        }
        Ok(Err(why)) => {
            if crate::debug() {
                eprintln!("deckhand-helper-linux: no direct connection to {bus} (pid {pid}): {why}");
            }
            remember(bus, Entry::Unavailable(Instant::now()));
            a.clone()
        }
        Err(_) => {
            eprintln!("deckhand-helper-linux: no direct connection to {bus} (pid {pid}) within {} ms", DIRECT_CONNECT_TIMEOUT.as_millis());
            remember(bus, Entry::Unavailable(Instant::now()));
            a.clone()
        }
    }
}

/// The socket path of an at-spi2-atk address (`unix:path=/run/...`, maybe
/// with `,guid=...`). Only filesystem sockets: that is what at-spi2-atk
/// makes, and what SO_PEERCRED is checked on.
pub fn socket_path(address: &str) -> Option<String> {
    let rest = address.strip_prefix("unix:")?;
    let mut path = None;
    for kv in rest.split(',') {
        if let Some(p) = kv.strip_prefix("path=") {
            path = Some(unescape(p)?);
        }
    }
    path.filter(|p| p.starts_with('/'))
}

/// D-Bus address value unescaping (%XX).
fn unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

async fn open(a: &A11y, bus: &str, pid: u32) -> std::result::Result<zbus::Connection, String> {
    let address: String = a.call(bus, ROOT_PATH, I_APPLICATION, "GetApplicationBusAddress", &()).await.map_err(|e| e.message)?;
    let path = socket_path(&address).ok_or_else(|| format!("unusable address {address:?}"))?;
    let stream = tokio::net::UnixStream::connect(&path).await.map_err(|e| format!("connect {path}: {e}"))?;
    let cred = stream.peer_cred().map_err(|e| format!("SO_PEERCRED: {e}"))?;
    if cred.pid() != Some(pid as i32) {
        return Err(format!("the socket's peer is pid {:?}, not {pid}", cred.pid()));
    }
    let conn = zbus::connection::Builder::unix_stream(stream).p2p().build().await.map_err(|e| format!("handshake: {e}"))?;
    // The application answers there as it does on the bus (one cheap
    // call): a socket that takes connections but serves nothing is not used.
    conn.call_method(None::<&str>, super::CACHE_PATH, Some("org.freedesktop.DBus.Peer"), "Ping", &())
        .await
        .map(|_| ())
        .or_else(|e| match e {
            // at-spi2-atk's router answers methods it does not know with an
            // error reply: it is serving.
            zbus::Error::MethodError(..) => Ok(()),
            e => Err(format!("ping: {e}")),
        })?;
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(socket_path("unix:path=/tmp/x/at-spi2-socket-1401").as_deref(), Some("/tmp/x/at-spi2-socket-1401"));
        assert_eq!(socket_path("unix:path=/run/user/1000/at-spi2-socket-7,guid=0123").as_deref(), Some("/run/user/1000/at-spi2-socket-7"));
        assert_eq!(socket_path("unix:path=/tmp/a%20b").as_deref(), Some("/tmp/a b"));
        assert_eq!(socket_path(""), None, "no socket offered");
        assert_eq!(socket_path("unix:abstract=/tmp/dbus-x"), None, "abstract sockets are not used");
        assert_eq!(socket_path("tcp:host=127.0.0.1,port=4000"), None);
        assert_eq!(socket_path("unix:path=relative"), None);
        assert_eq!(socket_path("unix:path=/tmp/%zz"), None);
    }
}
