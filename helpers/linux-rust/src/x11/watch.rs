//! watch_user_input: XInput2 raw key/button/motion events on the root, on a
//! connection of its own and a thread of its own. Events from the XTest
//! devices (deckhand's own synthetic input, or any other XTest client) are
//! ignored; real input becomes a rate-limited `user_input` event frame.

use crate::error::{Code, Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xinput::{self, ConnectionExt as _, XIEventMask};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

/// Called with the kind ("key" | "button" | "motion") of real user input.
pub type Sink = Box<dyn Fn(&'static str) + Send + 'static>;

pub struct Watcher {
    conn: Arc<RustConnection>,
    root: u32,
    enabled: Arc<AtomicBool>,
}

const ALL_MASTER_DEVICES: u16 = 1;
const MIN_GAP: Duration = Duration::from_millis(500);

fn masks(on: bool) -> Vec<xinput::EventMask> {
    let bits = if on {
        u32::from(XIEventMask::RAW_KEY_PRESS) | u32::from(XIEventMask::RAW_BUTTON_PRESS) | u32::from(XIEventMask::RAW_MOTION)
    } else {
        0
    };
    vec![xinput::EventMask { deviceid: ALL_MASTER_DEVICES, mask: vec![XIEventMask::from(bits)] }]
}

/// Whether a device is an XTest device, by name ("Virtual core XTEST pointer").
fn xtest_devices(conn: &RustConnection) -> HashMap<u16, bool> {
    let mut out = HashMap::new();
    if let Ok(Ok(r)) = conn.xinput_xi_query_device(0u16).map(|c| c.reply()) {
        for d in r.infos {
            let name = String::from_utf8_lossy(&d.name).to_string();
            out.insert(d.deviceid, name.contains("XTEST"));
        }
    }
    out
}

impl Watcher {
    pub fn start(sink: Sink) -> Result<Watcher> {
        let (conn, screen) = x11rb::connect(None)?;
        let root = conn.setup().roots[screen].root;
        let v = conn
            .xinput_xi_query_version(2, 2)
            .map_err(Error::from)?
            .reply()
            .map_err(|e| Error::new(Code::PermissionDenied, format!("XInput2 unavailable: {e}")))?;
        if v.major_version < 2 {
            return Err(Error::new(Code::PermissionDenied, "XInput 2 is required"));
        }
        let conn = Arc::new(conn);
        let enabled = Arc::new(AtomicBool::new(false));
        let (c2, e2) = (conn.clone(), enabled.clone());
        std::thread::Builder::new()
            .name("watch-user-input".into())
            .spawn(move || {
                let mut devices = xtest_devices(&c2);
                // Debug switch: count XTest input too (to exercise the event
                // path on a virtual display, which has no real devices).
                let include_xtest = std::env::var("DECKHAND_WATCH_INCLUDE_XTEST").is_ok_and(|v| v == "1");
                let mut last: HashMap<&'static str, Instant> = HashMap::new();
                loop {
                    let ev = match c2.wait_for_event() {
                        Ok(ev) => ev,
                        Err(e) => {
                            eprintln!("deckhand-helper-linux: user-input watch stopped: {e}");
                            return;
                        }
                    };
                    let (kind, source) = match &ev {
                        Event::XinputRawKeyPress(e) => ("key", e.sourceid),
                        Event::XinputRawButtonPress(e) => ("button", e.sourceid),
                        Event::XinputRawMotion(e) => ("motion", e.sourceid),
                        _ => continue,
                    };
                    if !e2.load(Ordering::SeqCst) {
                        continue;
                    }
                    if !devices.contains_key(&source) {
                        devices = xtest_devices(&c2);
                    }
                    if devices.get(&source).copied().unwrap_or(false) && !include_xtest {
                        continue; // synthetic (XTest) input
                    }
                    let now = Instant::now();
                    if last.get(kind).is_some_and(|t| now.duration_since(*t) < MIN_GAP) {
                        continue;
                    }
                    last.insert(kind, now);
                    sink(kind);
                }
            })
            .map_err(|e| Error::internal(format!("cannot start the watch thread: {e}")))?;
        Ok(Watcher { conn, root, enabled })
    }

    pub fn set(&self, on: bool) -> Result<()> {
        self.enabled.store(on, Ordering::SeqCst);
        self.conn
            .xinput_xi_select_events(self.root, &masks(on))?
            .check()
            .map_err(|e| Error::internal(format!("XISelectEvents: {e}")))?;
        Ok(())
    }
}
