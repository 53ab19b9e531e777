//! settle: wait until an application's accessibility events quiesce (no
//! event from it for quiet_ms), bounded by max_ms and the request deadline.
//!
//! The wait starts and ends with a round trip to the application (a
//! property read it answers from its main loop): D-Bus delivers what one
//! connection sends to another in order, so every event the application
//! sent before answering is in our stream when the answer arrives. The
//! first round trip makes everything the action already caused count (the
//! quiet window opens only after it); the last one catches events in
//! flight when the window closed, and an event then reopens the window. So
//! the window only has to cover work the application defers (GTK runs an
//! accessible action from an idle callback, layout runs at the next frame),
//! not the transit of what it already did: a window of tens of
//! milliseconds instead of a hundred (issue 15).
//!
//! atk-bridge (GTK 3, Chromium, Firefox) emits only the event types some
//! client registered with the registry, so the types that tell "the UI is
//! still changing" are registered for the wait and dropped again shortly
//! after (every application emits them while registered, for everyone).

use super::{apps, A11y, I_ACCESSIBLE, REGISTRY, ROOT_PATH};
use crate::error::{Code, Error, Result};
use crate::wire::messages::{SettleArgs, SettleResult};
use futures_util::future::join_all;
use futures_util::{FutureExt, StreamExt};
use std::cell::RefCell;
use std::time::{Duration, Instant};

/// Event types registered while a settle waits: what changes when an
/// application is still updating its UI (children added or removed, names
/// and descriptions, states such as busy/showing/enabled, text loaded).
/// Caret moves and focus are left out: they follow the user, not the app.
const EVENTS: [&str; 4] = ["object:children-changed", "object:property-change", "object:state-changed", "object:text-changed"];

/// The type A11y::connect_via registers for good (it makes atk-bridge expose
/// its Cache). DeregisterEvent("object:state-changed") also removes it (the
/// registry drops every subtype), so it is registered again after.
const KEEP: &str = "object:state-changed:defunct";

/// How long the registration outlives the last settle: back-to-back
/// action + settle pairs do not register and deregister each time, and a
/// new registration never races the removal of the previous one.
const LINGER: Duration = Duration::from_millis(1000);

/// Kept out of the wait: the answer must reach the orchestrator before the
/// request's own deadline.
const DEADLINE_MARGIN: Duration = Duration::from_millis(30);

/// Longest wait for the application to answer the call that tells its
/// bridge has seen the registration.
const SYNC_TIMEOUT: Duration = Duration::from_millis(500);

/// Registration state of this helper's accessibility connection (one
/// thread: requests run on a LocalSet).
#[derive(Default)]
struct Reg {
    /// Unique name of the connection the events are registered on.
    on: Option<String>,
    /// Settles running now.
    users: u32,
    /// Bumped on every acquire: a pending deregistration from before it is
    /// void.
    generation: u64,
}

thread_local! {
    static REG: RefCell<Reg> = RefCell::new(Reg::default());
}

async fn registry_call(a: &A11y, method: &str, event: &str) -> Result<()> {
    a.call::<_, ()>(REGISTRY, "/org/a11y/atspi/registry", "org.a11y.atspi.Registry", method, &(event,)).await
}

/// Holds the event registration while a settle waits. Dropping it (also
/// when the request is cancelled or times out) schedules the removal.
struct Lease {
    a: A11y,
}

impl Lease {
    /// Register the event types unless already registered on this
    /// connection. Returns whether this call registered them (the
    /// application may not have seen that yet).
    async fn acquire(a: &A11y) -> Result<(Lease, bool)> {
        let me = a.conn.unique_name().map(|n| n.to_string()).unwrap_or_default();
        let fresh = REG.with(|r| {
            let mut r = r.borrow_mut();
            r.users += 1;
            r.generation += 1;
            let fresh = r.on.as_deref() != Some(me.as_str());
            r.on = Some(me.clone());
            fresh
        });
        let lease = Lease { a: a.clone() };
        if fresh {
            let r = join_all(EVENTS.iter().map(|e| registry_call(a, "RegisterEvent", e))).await;
            if let Some(Err(e)) = r.into_iter().find(|r| r.is_err()) {
                return Err(e.recode(Code::Internal));
            }
        }
        Ok((lease, fresh))
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let generation = REG.with(|r| {
            let mut r = r.borrow_mut();
            r.users = r.users.saturating_sub(1);
            r.generation
        });
        let a = self.a.clone();
        // Outside a LocalSet (never in the helper) the registration stays
        // until the connection closes: the registry drops it then.
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tokio::task::spawn_local(async move {
                tokio::time::sleep(LINGER).await;
                let drop_now = REG.with(|r| {
                    let mut r = r.borrow_mut();
                    let me = a.conn.unique_name().map(|n| n.to_string());
                    if r.users == 0 && r.generation == generation && r.on.is_some() && r.on == me {
                        r.on = None;
                        true
                    } else {
                        false
                    }
                });
                if drop_now {
                    // One batch, sent in this order before any later
                    // RegisterEvent of a new settle.
                    let calls = EVENTS
                        .iter()
                        .map(|e| ("DeregisterEvent", *e))
                        .chain(std::iter::once(("RegisterEvent", KEEP)))
                        .map(|(m, e)| registry_call(&a, m, e));
                    for r in join_all(calls).await {
                        if let Err(e) = r {
                            eprintln!("deckhand-helper-linux: settle: dropping the event registration failed: {}", e.message);
                        }
                    }
                }
            });
        }));
    }
}

/// Quiescence over event times (ms from the start of the request): the
/// quiet window opens once the subscription is in place (`ready`) and
/// restarts at every event; the wait ends when a window of `quiet` ms
/// passed without an event, or at `max`.
#[derive(Debug, Clone, Copy)]
pub struct Quiet {
    quiet: u64,
    max: u64,
    last: u64,
}

impl Quiet {
    pub fn new(ready: u64, quiet: u64, max: u64) -> Quiet {
        Quiet { quiet, max, last: ready }
    }
    pub fn event(&mut self, t: u64) {
        self.last = self.last.max(t);
    }
    /// When to stop waiting if no event comes before.
    pub fn due(&self) -> u64 {
        (self.last + self.quiet).min(self.max)
    }
    pub fn settled(&self, now: u64) -> bool {
        now >= self.last + self.quiet
    }
}

/// The outcome `Quiet` gives for events at these times (ms, sorted):
/// (waited_ms, events counted, settled). What the live loop does, with the
/// clock replaced by the event times.
#[cfg(test)]
pub fn simulate(events: &[u64], ready: u64, quiet: u64, max: u64) -> (u64, u32, bool) {
    let mut q = Quiet::new(ready, quiet, max);
    let mut n = 0;
    for &t in events {
        if t >= q.due() {
            break;
        }
        q.event(t);
        n += 1;
    }
    let end = q.due();
    (end, n, q.settled(end))
}

/// Wait for the application with `pid` to go quiet.
pub async fn settle(a: &A11y, args: &SettleArgs, deadline: Instant) -> Result<SettleResult> {
    let t0 = Instant::now();
    if args.quiet_ms == 0 || args.max_ms == 0 {
        return Err(Error::invalid("settle needs quiet_ms >= 1 and max_ms >= 1"));
    }
    let end = (t0 + Duration::from_millis(args.max_ms as u64)).min(deadline.checked_sub(DEADLINE_MARGIN).unwrap_or(deadline));
    let max = end.saturating_duration_since(t0).as_millis() as u64;
    let bus = apps::find_by_pid(a, args.pid).await?;
    // Subscribe first, then register: nothing the registration triggers is
    // missed.
    let rule = zbus::MatchRule::builder()
        .msg_type(zbus::message::Type::Signal)
        .sender(bus.as_str())
        .map_err(|e| Error::internal(format!("match rule for {bus}: {e}")))?
        .build();
    let mut stream = zbus::MessageStream::for_match_rule(rule, &a.conn, Some(1024)).await?;
    let (_lease, _fresh) = Lease::acquire(a).await?;
    let ms = |t: Instant| t.saturating_duration_since(t0).as_millis() as u64;
    let mut events: u32 = 0;
    let mut gone = false;
    // The sync point: once the application answers, everything it sent
    // before is queued here (and, after a fresh registration, the registry
    // has told its bridge: it emits the registered types from then on).
    if !sync_with(a, &bus, end).await? {
        gone = true;
    }
    events += drain(&mut stream, &mut gone);
    let mut q = Quiet::new(ms(Instant::now()), args.quiet_ms as u64, max);
    while !gone {
        let due = q.due();
        if ms(Instant::now()) >= due {
            // The window closed: one more round trip. An event that was on
            // its way reopens it (unless the bound is reached).
            if due >= max || !sync_with(a, &bus, end).await? {
                break;
            }
            let late = drain(&mut stream, &mut gone);
            if late == 0 || gone {
                break;
            }
            events += late;
            q.event(ms(Instant::now()));
            continue;
        }
        let wake = tokio::time::Instant::from_std(t0 + Duration::from_millis(due));
        tokio::select! {
            biased;
            m = stream.next() => match m {
                Some(Ok(msg)) => {
                    if is_event(&msg) {
                        q.event(ms(Instant::now()));
                        events += 1;
                        if crate::debug() {
                            let h = msg.header();
                            eprintln!("deckhand-helper-linux: settle: {}.{} at {} ms", h.interface().map(|i| i.as_str()).unwrap_or(""), h.member().map(|m| m.as_str()).unwrap_or(""), ms(Instant::now()));
                        }
                    }
                }
                Some(Err(_)) => {}
                None => {
                    gone = true;
                    break;
                }
            },
            _ = tokio::time::sleep_until(wake) => {}
        }
    }
    let now = ms(Instant::now());
    if gone || crate::ops::act::process_gone(args.pid) {
        return Err(Error::new(Code::AppExited, format!("the application (pid {}) exited while settling", args.pid)).with("pid", args.pid));
    }
    Ok(SettleResult { waited_ms: now.min(u32::MAX as u64) as u32, events, settled: q.settled(now) })
}

/// One round trip to the application (a property it answers from its main
/// loop), bounded by SYNC_TIMEOUT and `end`: Ok(false) when it has exited,
/// Ok(true) otherwise (a slow or failing answer only ends the sync).
async fn sync_with(a: &A11y, bus: &str, end: Instant) -> Result<bool> {
    let left = end.saturating_duration_since(Instant::now()).min(SYNC_TIMEOUT);
    match tokio::time::timeout(left, a.prop(bus, ROOT_PATH, I_ACCESSIBLE, "ChildCount")).await {
        Ok(Err(e)) if e.code == Code::AppExited => Ok(false),
        _ => Ok(true),
    }
}

/// The events already queued on the stream (without waiting); `gone` when
/// the stream ended.
fn drain(stream: &mut zbus::MessageStream, gone: &mut bool) -> u32 {
    let mut n = 0;
    loop {
        match stream.next().now_or_never() {
            Some(Some(Ok(msg))) => {
                if is_event(&msg) {
                    n += 1;
                }
            }
            Some(Some(Err(_))) => {}
            Some(None) => {
                *gone = true;
                return n;
            }
            None => return n,
        }
    }
}

/// A signal the application sent about its accessible objects (events and
/// cache updates; not, say, a reply to someone else's property request).
fn is_event(msg: &zbus::Message) -> bool {
    let h = msg.header();
    h.interface().is_some_and(|i| i.as_str().starts_with("org.a11y.atspi."))
}

/// `simulate` with the round trips: the window opens `rtt` ms after
/// `ready` (the first one), and when it closes, events that arrive during
/// the closing round trip (within `rtt` of the close) reopen it.
#[cfg(test)]
pub fn simulate_synced(events: &[u64], ready: u64, quiet: u64, max: u64, rtt: u64) -> (u64, u32, bool) {
    let open = ready + rtt;
    // What arrived before the first answer is counted at once.
    let mut n = events.iter().filter(|&&t| t < open).count() as u32;
    let mut q = Quiet::new(open, quiet, max);
    let mut rest = events.iter().copied().filter(|&t| t >= open).peekable();
    loop {
        while let Some(&t) = rest.peek() {
            if t >= q.due() {
                break;
            }
            q.event(t);
            n += 1;
            rest.next();
        }
        let due = q.due();
        if due >= max {
            return (due, n, q.settled(due));
        }
        let late: Vec<u64> = std::iter::from_fn(|| rest.next_if(|&t| t < due + rtt)).collect();
        if late.is_empty() {
            return (due + rtt, n, true);
        }
        n += late.len() as u32;
        q.event(due + rtt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_count_what_came_before_and_reopen_on_late_events() {
        // Events already sent when the first answer arrives: counted, no wait for them.
        assert_eq!(simulate_synced(&[0, 1], 0, 40, 500, 2), (44, 2, true));
        // GTK's window activation state 25-32 ms after the keys: inside a 40 ms window.
        assert_eq!(simulate_synced(&[30], 0, 40, 500, 1), (71, 1, true));
        // An event on its way when the window closes: seen by the closing round trip, the window reopens.
        assert_eq!(simulate_synced(&[43], 0, 40, 500, 2), (86, 1, true));
        // One that comes after the closing answer is not waited for.
        assert_eq!(simulate_synced(&[45], 0, 40, 500, 2), (44, 0, true));
        // A busy app still ends at max.
        let busy: Vec<u64> = (1..60).map(|k| k * 10).collect();
        let (end, _, settled) = simulate_synced(&busy, 0, 40, 500, 1);
        assert_eq!((end, settled), (500, false));
    }

    #[test]
    fn quiet_window_restarts_at_every_event() {
        // No event: settled one quiet window after the subscription.
        assert_eq!(simulate(&[], 5, 100, 2000), (105, 0, true));
        // Events keep it open; the last one at 250 -> settled at 350.
        assert_eq!(simulate(&[20, 90, 180, 250], 5, 100, 2000), (350, 4, true));
        // A gap as long as the window ends it: the event at 300 is not seen,
        // nor one exactly when the window closes.
        assert_eq!(simulate(&[20, 119, 300], 5, 100, 2000), (219, 2, true));
        assert_eq!(simulate(&[20, 120], 5, 100, 2000), (120, 1, true));
    }

    #[test]
    fn max_bounds_a_busy_app() {
        let busy: Vec<u64> = (1..100).map(|k| k * 30).collect();
        assert_eq!(simulate(&busy, 0, 100, 1000), (1000, 33, false));
        // Events every 90 ms up to 990, 100 quiet: at max (1000) not yet quiet.
        let every90: Vec<u64> = (1..=11).map(|k| k * 90).collect();
        assert_eq!(simulate(&every90, 0, 100, 1000), (1000, 11, false));
        // The last at 900: quiet exactly at max counts as settled.
        assert_eq!(simulate(&every90[..10], 0, 100, 1000), (1000, 10, true));
    }
}
