//! AT-SPI over D-Bus (zbus 5, atspi 0.30 types). Calls are made raw on one
//! connection so many can be in flight at once (pipelined); every op runs
//! under the request's deadline, and per-app calls get their own shorter
//! timeouts so one hung application cannot stall a listing.

pub mod actions;
pub mod apps;
pub mod cache;
pub mod collection;
// ---- issue 15: observation
pub mod direct;
#[cfg(test)]
mod fake_app;
// ---- end observation
pub mod settle;
pub mod tree;
pub mod vocabulary;

use crate::error::{Code, Error, Result};
use serde::Serialize;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;
use zbus::zvariant::{DynamicDeserialize, DynamicType, OwnedObjectPath, OwnedValue};

pub const REGISTRY: &str = "org.a11y.atspi.Registry";
pub const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
pub const NULL_PATH: &str = "/org/a11y/atspi/null";
pub const CACHE_PATH: &str = "/org/a11y/atspi/cache";
pub const I_ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub const I_ACTION: &str = "org.a11y.atspi.Action";
pub const I_COMPONENT: &str = "org.a11y.atspi.Component";
pub const I_TEXT: &str = "org.a11y.atspi.Text";
pub const I_EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
pub const I_VALUE: &str = "org.a11y.atspi.Value";
pub const I_CACHE: &str = "org.a11y.atspi.Cache";
pub const I_PROPS: &str = "org.freedesktop.DBus.Properties";

/// Component coordinate type 0 = screen.
pub const COORD_SCREEN: u32 = 0;

/// An accessible object reference: (bus name, object path).
pub type ObjRef = (String, OwnedObjectPath);

/// Longest one call into an application may take. A toolkit busy for
/// longer (LibreOffice building a huge child list, a hung app) must not hold
/// the request: the call fails with TIMEOUT and the reader goes on without
/// that answer. Bulk calls (Cache.GetItems, Collection) pass their own.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(1500);

/// Calls one observation may make into an application (get_tree,
/// focused_element, the secure-field search): a bound on the work we cause in
/// the target, whatever its tree looks like.
pub const REQUEST_CALL_BUDGET: u32 = 20_000;

/// A per-request count of the calls made into applications, with a limit.
#[derive(Debug)]
pub struct Budget {
    used: AtomicU32,
    limit: u32,
}

impl Budget {
    /// Take one call; false (and the count stays at the limit) when spent.
    fn take(&self) -> bool {
        if self.used.fetch_add(1, Ordering::Relaxed) >= self.limit {
            self.used.store(self.limit, Ordering::Relaxed);
            return false;
        }
        true
    }
}

#[derive(Clone)]
pub struct A11y {
    pub conn: zbus::Connection,
    /// None: uncounted (the shared connection); Some: this request's budget.
    budget: Option<Arc<Budget>>,
    // ---- issue 15: observation
    /// Calls to this bus name go over this peer-to-peer connection to the
    /// application (`direct::attach`), not through the bus daemon, at most
    /// `direct::MAX_IN_FLIGHT` at a time (the semaphore).
    direct: Option<(Arc<str>, zbus::Connection, Arc<tokio::sync::Semaphore>)>,
    /// Calls that others wait on (a tree read's structure, before the
    /// details of what it finds): sent at once on a direct connection,
    /// ahead of the calls queued for its in-flight slots (`urgent`).
    urgent: bool,
    // ---- end observation
}

/// Where the accessibility bus is: AT_SPI_BUS_ADDRESS, else org.a11y.Bus on
/// the session bus.
pub async fn bus_address(session: Option<&zbus::Connection>) -> Result<String> {
    if let Ok(a) = std::env::var("AT_SPI_BUS_ADDRESS") {
        if !a.is_empty() {
            return Ok(a);
        }
    }
    let session = session.ok_or_else(|| {
        Error::new(Code::PermissionDenied, "no session D-Bus (DBUS_SESSION_BUS_ADDRESS) to ask for the accessibility bus")
    })?;
    let reply = session
        .call_method(Some("org.a11y.Bus"), "/org/a11y/bus", Some("org.a11y.Bus"), "GetAddress", &())
        .await
        .map_err(|e| Error::new(Code::PermissionDenied, format!("org.a11y.Bus.GetAddress failed: {e}")))?;
    let addr: String = reply.body().deserialize()?;
    Ok(addr)
}

pub async fn session_bus() -> Result<zbus::Connection> {
    zbus::Connection::session()
        .await
        .map_err(|e| Error::new(Code::PermissionDenied, format!("cannot connect to the session D-Bus: {e}")))
}

/// org.a11y.Status.IsEnabled, read from the bus launcher on the session bus.
pub async fn a11y_enabled(session: &zbus::Connection) -> Result<bool> {
    let m = session
        .call_method(Some("org.a11y.Bus"), "/org/a11y/bus", Some(I_PROPS), "Get", &("org.a11y.Status", "IsEnabled"))
        .await?;
    let v: OwnedValue = m.body().deserialize()?;
    bool::try_from(v).map_err(|e| Error::internal(format!("IsEnabled is not a boolean: {e}")))
}

impl A11y {
    /// Connect, finding the bus through `session` (None: AT_SPI_BUS_ADDRESS or the X root property only).
    pub async fn connect_via(session: Option<zbus::Connection>) -> Result<A11y> {
        let address = bus_address(session.as_ref()).await?;
        let conn = zbus::connection::Builder::address(address.as_str())?
            .build()
            .await
            .map_err(|e| Error::new(Code::PermissionDenied, format!("cannot connect to the accessibility bus {address}: {e}")))?;
        let me = A11y { conn, budget: None, direct: None, urgent: false };
        // ---- issue 15: observation
        // What was learned per bus name belongs to the bus daemon that gave
        // the names: a new connection may be to a new daemon, whose names
        // start over (":1.3" another application).
        direct::clear();
        tree::forget_toolkits();
        // ---- end observation
        // Applications (GTK's atk-bridge) expose org.a11y.atspi.Cache only
        // once some client listens for events: register one, rare, event.
        if let Err(e) = me
            .call::<_, ()>(REGISTRY, "/org/a11y/atspi/registry", "org.a11y.atspi.Registry", "RegisterEvent", &("object:state-changed:defunct",))
            .await
        {
            eprintln!("deckhand-helper-linux: RegisterEvent failed ({}); bulk cache may be unavailable", e.message);
        }
        Ok(me)
    }

    /// The same connection with a fresh call budget of `limit` calls: every
    /// call made through the copy (and its clones) is counted.
    pub fn budgeted(&self, limit: u32) -> A11y {
        A11y { conn: self.conn.clone(), budget: Some(Arc::new(Budget { used: AtomicU32::new(0), limit })), direct: self.direct.clone(), urgent: false }
    }

    /// Calls made (or refused for want of budget) so far through this budget.
    pub fn calls(&self) -> u32 {
        self.budget.as_ref().map(|b| b.used.load(Ordering::Relaxed).min(b.limit)).unwrap_or(0)
    }

    /// Calls this budget still allows (u32::MAX: unbudgeted).
    pub fn remaining(&self) -> u32 {
        match &self.budget {
            Some(b) => b.limit.saturating_sub(b.used.load(Ordering::Relaxed)),
            None => u32::MAX,
        }
    }

    pub fn exhausted(&self) -> bool {
        self.remaining() == 0
    }

    /// Take one call from the budget; Err when none is left.
    fn spend(&self) -> Result<()> {
        if let Some(b) = &self.budget {
            if !b.take() {
                return Err(Error::timeout(format!("the request's budget of {} accessibility calls is spent", b.limit)).with("budget", b.limit));
            }
        }
        Ok(())
    }

    /// One raw method call, counted and bounded by `timeout`. D-Bus errors
    /// are returned as zbus gives them (callers match on their names).
    pub async fn call_msg<B>(&self, dest: &str, path: &str, iface: &str, method: &str, body: &B, timeout: Duration) -> std::result::Result<zbus::Message, CallError>
    where
        B: Serialize + DynamicType,
    {
        self.spend().map_err(CallError::Ours)?;
        // ---- issue 15: observation
        if let Some((bus, conn, slots)) = self.direct.as_ref().filter(|(b, _, _)| &**b == dest) {
            // A bounded number in flight: enough to keep the application
            // busy answering, never its whole tree's worth of calls queued
            // in front of its own input and painting.
            let call = async {
                let _slot = if self.urgent { None } else { Some(slots.acquire().await) };
                conn.call_method(Some(dest), path, Some(iface), method, body).await
            };
            match tokio::time::timeout(timeout, call).await {
                Ok(Ok(m)) => return Ok(m),
                Ok(Err(e @ zbus::Error::MethodError(..))) => return Err(CallError::Bus(e)),
                Err(_) => return Err(CallError::Ours(Error::timeout(format!("{iface}.{method} on {path} did not answer within {} ms", timeout.as_millis())))),
                // The socket itself failed (the application exited or
                // closed it): once more over the bus, whose answer callers
                // know how to read (ServiceUnknown: the app is gone).
                Ok(Err(e)) => {
                    if crate::debug() {
                        eprintln!("deckhand-helper-linux: direct connection to {bus} failed ({e}); back to the bus");
                    }
                    direct::forget(bus);
                    self.spend().map_err(CallError::Ours)?;
                }
            }
        }
        // ---- end observation
        match tokio::time::timeout(timeout, self.conn.call_method(Some(dest), path, Some(iface), method, body)).await {
            Ok(r) => r.map_err(CallError::Bus),
            Err(_) => Err(CallError::Ours(Error::timeout(format!("{iface}.{method} on {path} did not answer within {} ms", timeout.as_millis())))),
        }
    }

    // ---- issue 15: observation
    /// An unbudgeted A11y on `conn` (tests: a fake application's connection).
    #[cfg(test)]
    pub fn for_tests(conn: zbus::Connection) -> A11y {
        A11y { conn, budget: None, direct: None, urgent: false }
    }

    /// The same connection and budget, with calls to `bus` sent over `conn`
    /// (a direct connection to that application: `direct::attach`).
    pub fn with_direct(&self, bus: &str, conn: zbus::Connection, slots: Arc<tokio::sync::Semaphore>) -> A11y {
        A11y { conn: self.conn.clone(), budget: self.budget.clone(), direct: Some((Arc::from(bus), conn, slots)), urgent: false }
    }

    /// The same connection, budget and direct connection, its calls sent
    /// without waiting for an in-flight slot: for the few calls a read's
    /// next step waits on (each adds at most one to what is in flight, and
    /// their number is bounded by the caller: the structure repair's rounds).
    pub fn urgent(&self) -> A11y {
        A11y { urgent: true, ..self.clone() }
    }

    /// Whether calls to `bus` go over a direct connection.
    pub fn is_direct(&self, bus: &str) -> bool {
        self.direct.as_ref().is_some_and(|(b, _, _)| &**b == bus)
    }
    // ---- end observation

    /// One method call (counted, at most CALL_TIMEOUT); the reply body is
    /// decoded into `R`.
    pub async fn call<B, R>(&self, dest: &str, path: &str, iface: &str, method: &str, body: &B) -> Result<R>
    where
        B: Serialize + DynamicType,
        R: for<'d> DynamicDeserialize<'d>,
    {
        let msg = self.call_msg(dest, path, iface, method, body, CALL_TIMEOUT).await?;
        let r: R = msg.body().deserialize()?;
        Ok(r)
    }

    /// Properties.Get; the variant is returned as is.
    pub async fn prop(&self, dest: &str, path: &str, iface: &str, name: &str) -> Result<OwnedValue> {
        self.call(dest, path, I_PROPS, "Get", &(iface, name)).await
    }

    pub async fn prop_string(&self, dest: &str, path: &str, iface: &str, name: &str) -> Result<String> {
        let v = self.prop(dest, path, iface, name).await?;
        String::try_from(v).map_err(|e| Error::internal(format!("{iface}.{name} is not a string: {e}")))
    }

    pub async fn pid_of(&self, bus: &str) -> Result<u32> {
        self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID", &(bus,))
            .await
    }

    pub async fn children(&self, dest: &str, path: &str) -> Result<Vec<ObjRef>> {
        self.call(dest, path, I_ACCESSIBLE, "GetChildren", &()).await
    }
}

/// Why a raw call failed: the application's D-Bus error, or ours (budget
/// spent, no answer in time).
#[derive(Debug)]
pub enum CallError {
    Bus(zbus::Error),
    Ours(Error),
}

impl From<CallError> for Error {
    fn from(e: CallError) -> Error {
        match e {
            CallError::Bus(e) => e.into(),
            CallError::Ours(e) => e,
        }
    }
}

/// Run a future with its own timeout; a timeout becomes TIMEOUT.
pub async fn within<T>(d: Duration, what: &str, f: impl std::future::Future<Output = Result<T>>) -> Result<T> {
    match tokio::time::timeout(d, f).await {
        Ok(r) => r,
        Err(_) => Err(Error::timeout(format!("{what} did not answer within {} ms", d.as_millis()))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_counts_and_refuses() {
        let b = Budget { used: AtomicU32::new(0), limit: 3 };
        assert!(b.take() && b.take() && b.take());
        assert!(!b.take(), "the fourth call is refused");
        assert!(!b.take());
        assert_eq!(b.used.load(Ordering::Relaxed), 3, "refusals do not overflow the count");
    }
}

