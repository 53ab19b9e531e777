//! watch_user_input on sway (issue 19): Wayland lets no client read the
//! seat's input, but sway 1.7 offers org_kde_kwin_idle, the protocol idle
//! daemons use: an idle timeout of IDLE_MS on the seat says `idle` once the
//! seat was quiet that long and `resumed` at the next input. A `resumed`
//! is user input unless this helper's own input (its virtual keyboard and
//! pointer count as the seat's input too) ran at that moment or just
//! before (OWN_GRACE). Any other input counts, a second deckhand's or
//! wtype's included: a kill switch errs on the side of pausing. Input that
//! comes within IDLE_MS of the seat's last input (the user typing on while
//! deckhand types) is not seen apart from it.

use super::wire::{self, Args, Conn, DISPLAY};
use crate::error::{Code, Error, Result};
use crate::x11::watch::Sink;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const REGISTRY: u32 = 2;
const SYNC: u32 = 3;
const SEAT: u32 = 4;
const IDLE: u32 = 5;
const TIMEOUT: u32 = 6;
const SYNC2: u32 = 7;
const EV_RESUMED: u16 = 1;

/// The seat's quiet time after which the next input is reported.
const IDLE_MS: u32 = 50;
/// Input seen this long after this helper's own input ended is taken as its own.
pub const OWN_GRACE: Duration = Duration::from_millis(150);
/// At most one event per this time.
const MIN_GAP: Duration = Duration::from_millis(500);

pub struct Watcher {
    enabled: Arc<AtomicBool>,
}

impl Watcher {
    /// `own_input_recent()`: whether this helper's own input runs or ended within OWN_GRACE.
    pub fn start(sink: Sink, own_input_recent: fn() -> bool) -> Result<Watcher> {
        let until = Instant::now() + Duration::from_secs(2);
        let mut c = Conn::connect(Code::ActionFailed)?;
        let mut m = wire::message(DISPLAY, 1, &REGISTRY.to_ne_bytes());
        m.extend(wire::message(DISPLAY, 0, &SYNC.to_ne_bytes()));
        c.send(&m)?;
        let (mut seat, mut idle) = (None, None);
        loop {
            let e = c.next(until)?;
            if e.object == SYNC {
                break;
            }
            if e.object == REGISTRY && e.opcode == 0 {
                let mut a = Args(&e.args);
                let (name, interface) = (a.u32()?, a.string()?);
                match interface.as_str() {
                    "wl_seat" if seat.is_none() => seat = Some(name),
                    "org_kde_kwin_idle" => idle = Some(name),
                    _ => {}
                }
            }
        }
        let Some(idle) = idle else {
            return Err(Error::new(Code::ActionUnsupported, "the compositor offers no org_kde_kwin_idle: Wayland shows no client the seat's input otherwise").with("reason", "no-idle-protocol"));
        };
        let Some(seat) = seat else { return Err(Error::new(Code::ActionFailed, "the compositor offers no wl_seat")) };
        let mut m = wire::bind(REGISTRY, seat, "wl_seat", 1, SEAT);
        m.extend(wire::bind(REGISTRY, idle, "org_kde_kwin_idle", 1, IDLE));
        m.extend(wire::words(IDLE, 0, &[TIMEOUT, SEAT, IDLE_MS])); // get_idle_timeout
        m.extend(wire::words(DISPLAY, 0, &[SYNC2]));
        c.send(&m)?;
        while c.next(until)?.object != SYNC2 {}
        let enabled = Arc::new(AtomicBool::new(false));
        let e2 = enabled.clone();
        std::thread::Builder::new()
            .name("watch-user-input".into())
            .spawn(move || {
                let mut last: Option<Instant> = None;
                loop {
                    let ev = match c.next_until(Instant::now() + Duration::from_secs(3600)) {
                        Ok(Some(ev)) => ev,
                        Ok(None) => continue,
                        Err(e) => {
                            eprintln!("deckhand-helper-linux: user-input watch stopped: {}", e.message);
                            return;
                        }
                    };
                    // EV_IDLE (the seat went quiet) only rearms the next `resumed`.
                    if ev.object != TIMEOUT || ev.opcode != EV_RESUMED {
                        continue;
                    }
                    if !e2.load(Ordering::SeqCst) || own_input_recent() {
                        continue;
                    }
                    let now = Instant::now();
                    if last.is_some_and(|t| now.duration_since(t) < MIN_GAP) {
                        continue;
                    }
                    last = Some(now);
                    sink("activity");
                }
            })
            .map_err(|e| Error::internal(format!("cannot start the watch thread: {e}")))?;
        Ok(Watcher { enabled })
    }

    pub fn set(&self, on: bool) {
        self.enabled.store(on, Ordering::SeqCst);
    }
}
