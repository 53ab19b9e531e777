//! The helper's virtual keyboard (zwp_virtual_keyboard_v1) and virtual
//! pointer (zwlr_virtual_pointer_v1) on the compositor's default seat, on a
//! Wayland connection of their own (`super::wire`).
//!
//! They live as long as the helper (created on first use, on the input
//! worker thread that owns them): a seat whose keyboard or pointer appears
//! makes every client bind a wl_keyboard / wl_pointer, and events sent
//! before a client has bound its own are lost to it. Keeping them means
//! that happens once per helper, and `create` waits for it (see
//! `CLIENTS_BIND`).

use super::keymap::Keymap;
use super::wire::{bind, words, Args, Conn, DISPLAY};
use crate::error::{Code, Error, Result};
use crate::wire::messages::Rect;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

const REGISTRY: u32 = 2;
const SEAT: u32 = 4;
const KEYBOARD_MANAGER: u32 = 5;
const POINTER_MANAGER: u32 = 6;
const KEYBOARD: u32 = 7;
const POINTER: u32 = 8;
/// Callback ids of later round trips start here: the server takes new ids
/// only in sequence (no gaps), so they follow the devices and are never reused.
const FIRST_FREE: u32 = 9;

/// How long after the devices appeared input waits, once per helper, for
/// the clients to bind their wl_keyboard and wl_pointer: each does so when
/// its event loop reads the seat's new capabilities, and a key or button
/// sent before that never reaches it (without this wait, "abc" typed as a
/// fresh helper's first input never reached a focused GTK 3 app on sway
/// 1.7, 3 times of 3; with 300 ms all of it did). No event tells us another
/// client's binding: this is the one fixed wait of the Wayland input path,
/// once per helper, with room for a loaded machine.
pub const CLIENTS_BIND: Duration = Duration::from_millis(500);

/// wl_keyboard.keymap format: XKB text.
const XKB_V1: u32 = 1;
/// Linux input button codes (linux/input-event-codes.h).
pub const BTN_LEFT: u32 = 0x110;
pub const BTN_RIGHT: u32 = 0x111;
pub const BTN_MIDDLE: u32 = 0x112;
pub const BTN_SIDE: u32 = 0x113;
pub const BTN_EXTRA: u32 = 0x114;

/// Scroll distance of one wheel notch (libinput's usual 15 degrees).
const NOTCH: i32 = 15;

pub struct Devices {
    conn: Conn,
    next_id: u32,
    pub keymap: Keymap,
    /// The depressed-modifier mask the compositor was last told.
    mods_sent: u32,
    /// When the devices were created (for the wait of `CLIENTS_BIND`).
    pub created: Instant,
}

fn fixed(v: i32) -> u32 {
    (v * 256) as u32
}

/// Milliseconds of the monotonic clock (the event times libinput gives).
fn now_ms() -> u32 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64 * 1000 + ts.tv_nsec as u64 / 1_000_000) as u32
}

type Globals = (Option<u32>, Option<u32>, Option<u32>);

/// The registry names of wl_seat and the two managers (None: not offered).
fn globals(conn: &mut Conn, deadline: Instant) -> Result<Globals> {
    conn.send(&words(DISPLAY, 1, &[REGISTRY]))?;
    let (mut seat, mut kbd, mut ptr) = (None, None, None);
    conn.roundtrip(3, deadline, |e| {
        if e.object == REGISTRY && e.opcode == 0 {
            let mut a = Args(&e.args);
            let (name, interface, _version) = (a.u32()?, a.string()?, a.u32()?);
            match interface.as_str() {
                "wl_seat" if seat.is_none() => seat = Some(name),
                "zwp_virtual_keyboard_manager_v1" => kbd = Some(name),
                "zwlr_virtual_pointer_manager_v1" => ptr = Some(name),
                _ => {}
            }
        }
        Ok(())
    })?;
    Ok((seat, kbd, ptr))
}

fn missing(g: Globals) -> Vec<&'static str> {
    [("wl_seat", g.0.is_none()), ("zwp_virtual_keyboard_manager_v1", g.1.is_none()), ("zwlr_virtual_pointer_manager_v1", g.2.is_none())]
        .iter()
        .filter(|(_, m)| *m)
        .map(|(n, _)| *n)
        .collect()
}

/// What the compositor lacks of what input needs (empty: nothing), asked
/// on a connection of its own (for `permissions`).
pub fn lacking(deadline: Instant) -> Result<Vec<&'static str>> {
    let mut conn = Conn::connect(Code::ActionFailed)?;
    Ok(missing(globals(&mut conn, deadline)?))
}

impl Devices {
    /// Bind the seat and the two managers, create both devices and give the
    /// keyboard its first keymap (a key before any keymap is a protocol
    /// error); one round trip checks the compositor took it all.
    pub fn create(deadline: Instant) -> Result<Devices> {
        let mut conn = Conn::connect(Code::ActionFailed)?;
        let (seat, kbd, ptr) = match globals(&mut conn, deadline)? {
            (Some(s), Some(k), Some(p)) => (s, k, p),
            g => {
                return Err(Error::new(Code::ActionUnsupported, format!("the compositor lacks {}", missing(g).join(", "))).with("reason", "no-virtual-input"));
            }
        };
        let mut m = bind(REGISTRY, seat, "wl_seat", 1, SEAT);
        m.extend(bind(REGISTRY, kbd, "zwp_virtual_keyboard_manager_v1", 1, KEYBOARD_MANAGER));
        m.extend(bind(REGISTRY, ptr, "zwlr_virtual_pointer_manager_v1", 1, POINTER_MANAGER));
        m.extend(words(KEYBOARD_MANAGER, 0, &[SEAT, KEYBOARD]));
        m.extend(words(POINTER_MANAGER, 0, &[SEAT, POINTER]));
        conn.send(&m)?;
        let mut d = Devices { conn, next_id: FIRST_FREE, keymap: Keymap::default(), mods_sent: 0, created: Instant::now() };
        d.upload_keymap()?; // the base keys (keymap::base)
        d.sync(deadline)?;
        d.created = Instant::now();
        Ok(d)
    }

    /// Everything sent so far was processed by the compositor (a protocol
    /// error it raised comes back here: the devices are then gone).
    pub fn sync(&mut self, deadline: Instant) -> Result<()> {
        let id = self.next_id;
        self.next_id += 1;
        // wl_seat capabilities/name, delete_id: nothing to act on.
        self.conn.roundtrip(id, deadline, |_| Ok(()))
    }

    /// Send the keymap when it changed since the clients last got it.
    pub fn upload_keymap(&mut self) -> Result<()> {
        if !self.keymap.changed() {
            return Ok(());
        }
        let text = self.keymap.text();
        // SAFETY: a NUL-terminated name; the fd is owned right after.
        let fd = unsafe { libc::memfd_create(c"deckhand-keymap".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(Error::new(Code::ActionFailed, format!("memfd_create: {}", std::io::Error::last_os_error())));
        }
        // SAFETY: fd was just created and is owned by nothing else.
        let mut file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        file.write_all(text.as_bytes()).map_err(|e| Error::new(Code::ActionFailed, format!("writing the keymap: {e}")))?;
        self.conn.send_fd(&words(KEYBOARD, 0, &[XKB_V1, text.len() as u32]), file.as_raw_fd())?;
        self.keymap.mark_uploaded();
        Ok(())
    }

    /// A key event (XKB keycode; the wire carries the evdev code, 8 less).
    pub fn key(&mut self, keycode: u32, down: bool) -> Result<()> {
        self.conn.send(&words(KEYBOARD, 1, &[now_ms(), keycode - 8, down as u32]))
    }

    /// The depressed modifiers: the compositor does not derive them from a
    /// virtual keyboard's key events (wlroots passes those on without
    /// updating its modifier state), so they are sent with every change.
    pub fn modifiers(&mut self, depressed: u32) -> Result<()> {
        if depressed == self.mods_sent {
            return Ok(());
        }
        self.conn.send(&words(KEYBOARD, 2, &[depressed, 0, 0, 0]))?;
        self.mods_sent = depressed;
        Ok(())
    }

    /// After a new keymap: the compositor's modifier state starts empty.
    pub fn resend_modifiers(&mut self, depressed: u32) -> Result<()> {
        self.mods_sent = 0;
        self.modifiers(depressed)
    }

    /// The pointer to (x, y) of the output layout whose bounding box is
    /// `layout` (absolute motion is a fraction of it).
    pub fn motion(&mut self, x: i32, y: i32, layout: Rect) -> Result<()> {
        let cx = (x - layout.x).clamp(0, layout.width.saturating_sub(1) as i32) as u32;
        let cy = (y - layout.y).clamp(0, layout.height.saturating_sub(1) as i32) as u32;
        let mut m = words(POINTER, 1, &[now_ms(), cx, cy, layout.width.max(1), layout.height.max(1)]);
        m.extend(words(POINTER, 4, &[]));
        self.conn.send(&m)
    }

    pub fn button(&mut self, code: u32, down: bool) -> Result<()> {
        let mut m = words(POINTER, 2, &[now_ms(), code, down as u32]);
        m.extend(words(POINTER, 4, &[]));
        self.conn.send(&m)
    }

    /// One wheel notch on an axis (0 vertical, 1 horizontal), `dir` +1
    /// (down/right) or -1: a wheel source, the discrete step with its
    /// distance, a frame.
    pub fn notch(&mut self, axis: u32, dir: i32) -> Result<()> {
        let mut m = words(POINTER, 5, &[0]);
        m.extend(words(POINTER, 7, &[now_ms(), axis, fixed(NOTCH * dir), dir as u32]));
        m.extend(words(POINTER, 4, &[]));
        self.conn.send(&m)
    }
}

// ---- the desktop's seat devices (`--seat-devices`)
/// `deckhand desktop start --wayland` runs this binary with `--seat-devices`
/// for the desktop's life: a keyboard and a pointer in the headless seat,
/// as every real session has (WLR_LIBINPUT_NO_DEVICES leaves it empty).
/// Without a keyboard in the seat, GTK never makes a window active: a
/// focus given through accessibility shows no focus and no caret (the
/// matrix's focus rows failed that way). No key or pointer event is ever
/// sent on them.
///
/// The seat's keyboard is the one that last sent something: once a
/// virtual keyboard that typed (the helper's for an input op, wtype) is
/// gone, wlroots leaves the seat without a keyboard, and clients started
/// then get no keymap: Chromium with its renderer accessibility on died of
/// SIGSEGV at start, every time. sway gives the seat a keyboard again when
/// it configures its keyboards, so when it reports a keyboard removed (IPC
/// `input` events), the keyboards are configured again with a setting that
/// is sway's default anyway (repeat_rate 25; this private desktop's config
/// sets none): this keyboard, the one left, is the seat's again.
/// Returns when the compositor's connection ends (the desktop stopped).
pub fn hold_seat_devices() -> i32 {
    let mut d = match Devices::create(Instant::now() + std::time::Duration::from_secs(10)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("deckhand-helper-linux --seat-devices: {}", e.message);
            return 1;
        }
    };
    if let Some(sock) = std::env::var("SWAYSOCK").ok().filter(|s| !s.is_empty()) {
        let _ = std::thread::Builder::new().name("keyboards-removed".into()).spawn(move || {
            super::sway::watch_inputs(&sock, |change, kind| {
                if change == "removed" && kind == "keyboard" {
                    if let Err(e) = super::sway::command(&sock, RECONFIGURE_KEYBOARDS) {
                        eprintln!("deckhand-helper-linux --seat-devices: configuring the keyboards again: {}", e.message);
                    }
                }
            })
        });
    }
    // Read (and drop) whatever the compositor says until it hangs up.
    loop {
        match d.conn.next(Instant::now() + std::time::Duration::from_secs(3600)) {
            Ok(_) => {}
            Err(e) if e.code == Code::Timeout => {}
            Err(_) => return 0,
        }
    }
}

/// A sway command that configures every keyboard again, changing nothing (sway's default repeat rate).
pub const RECONFIGURE_KEYBOARDS: &str = "input type:keyboard repeat_rate 25";
