//! The Wayland clipboard (issue 19) through wlr-data-control
//! (zwlr_data_control_manager_v1, sway 1.7 offers version 2: the primary
//! selection too), spoken on the wire directly as the rest of this backend.
//!
//! A data-control client sees the seat's selection whatever has the focus
//! (ordinary clients only while focused), reads an offer by handing the
//! compositor a pipe's write end (`receive`), and sets the selection with a
//! source of its own whose `send` events carry the fd to write the text to.
//! What X11 says and Wayland does not: who owns the selection. There is no
//! owner window and no owner pid; `Device` numbers each selection it sees
//! (`generation`), which stands for the owner in the orchestrator's
//! "unchanged since checked" test.

use super::wire::{message, Args, Conn, Msg, DISPLAY};
use crate::error::{Code, Error, Result};
use crate::x11::selection::Which;
use std::collections::HashMap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub const MANAGER_INTERFACE: &str = "zwlr_data_control_manager_v1";
/// Mime types read as text, best first.
pub const TEXT_TYPES: [&str; 5] = ["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT"];
/// What a source of ours offers (all the text the others read).
pub const OFFER_TYPES: [&str; 5] = ["text/plain;charset=utf-8", "text/plain", "UTF8_STRING", "STRING", "TEXT"];
/// Password managers (KeePassXC, KDE's) add this type to a secret's copy.
pub const SECRET_HINT: &str = "x-kde-passwordManagerHint";

const REGISTRY: u32 = 2;
const SYNC0: u32 = 3;
const SEAT: u32 = 4;
const MANAGER: u32 = 5;
const DEVICE: u32 = 6;

// Opcodes (wlr-data-control-unstable-v1).
const MANAGER_CREATE_SOURCE: u16 = 0;
const MANAGER_GET_DEVICE: u16 = 1;
const DEVICE_SET_SELECTION: u16 = 0;
const DEVICE_SET_PRIMARY: u16 = 2;
const EV_DEVICE_DATA_OFFER: u16 = 0;
const EV_DEVICE_SELECTION: u16 = 1;
const EV_DEVICE_FINISHED: u16 = 2;
const EV_DEVICE_PRIMARY: u16 = 3;
const SOURCE_OFFER: u16 = 0;
const SOURCE_DESTROY: u16 = 1;
const EV_SOURCE_SEND: u16 = 0;
const EV_SOURCE_CANCELLED: u16 = 1;
const OFFER_RECEIVE: u16 = 0;
const OFFER_DESTROY: u16 = 1;

/// Every selection any device of this process saw gets the next number:
/// a reconnected device never repeats one an earlier device gave.
static GENERATION: AtomicU32 = AtomicU32::new(0);

/// What a source of ours was asked.
pub enum SourceEvent {
    /// Write the text (as `mime`) to `fd` and close it.
    Send { source: u32, mime: String, fd: Option<OwnedFd> },
    /// Another client took the selection: the source is done.
    Cancelled { source: u32 },
}

fn slot(which: Which) -> usize {
    match which {
        Which::Clipboard => 0,
        Which::Primary => 1,
    }
}

pub struct Device {
    c: Conn,
    next_id: u32,
    /// The manager's version: 2 has the primary selection.
    version: u32,
    /// Offers the compositor announced and their types, by object id.
    offers: HashMap<u32, Vec<String>>,
    /// The current offer of each selection (clipboard, primary) and its number.
    current: [Option<u32>; 2],
    generation: [Option<u32>; 2],
    sources: Vec<u32>,
}

impl Device {
    /// Connect, bind the seat and the data-control manager, and read the
    /// current selections. ACTION_UNSUPPORTED when the compositor lacks the protocol.
    pub fn open(deadline: Instant) -> Result<Device> {
        let mut c = Conn::connect(Code::ActionFailed)?;
        let mut m = message(DISPLAY, 1, &REGISTRY.to_ne_bytes());
        m.extend(message(DISPLAY, 0, &SYNC0.to_ne_bytes()));
        c.send(&m)?;
        let (mut seat, mut manager) = (None, None);
        loop {
            let e = c.next(deadline)?;
            if e.object == SYNC0 {
                break;
            }
            if e.object == REGISTRY && e.opcode == 0 {
                let mut a = Args(&e.args);
                let (name, interface, version) = (a.u32()?, a.string()?, a.u32()?);
                match interface.as_str() {
                    "wl_seat" if seat.is_none() => seat = Some(name),
                    MANAGER_INTERFACE => manager = Some((name, version.min(2))),
                    _ => {}
                }
            }
        }
        let Some((manager, version)) = manager else {
            return Err(Error::new(Code::ActionUnsupported, format!("the compositor offers no {MANAGER_INTERFACE} (wlr-data-control): this helper has no other way to the Wayland clipboard"))
                .with("reason", "no-data-control"));
        };
        let Some(seat) = seat else { return Err(Error::new(Code::ActionFailed, "the compositor offers no wl_seat")) };
        let mut m = super::wire::bind(REGISTRY, seat, "wl_seat", 1, SEAT);
        m.extend(super::wire::bind(REGISTRY, manager, MANAGER_INTERFACE, version, MANAGER));
        m.extend(super::wire::words(MANAGER, MANAGER_GET_DEVICE, &[DEVICE, SEAT]));
        c.send(&m)?;
        let mut d = Device { c, next_id: DEVICE + 1, version, offers: HashMap::new(), current: [None, None], generation: [None, None], sources: Vec::new() };
        d.pump(deadline, &mut Vec::new())?;
        Ok(d)
    }

    fn alloc(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn has_primary(&self) -> bool {
        self.version >= 2
    }

    fn need(&self, which: Which) -> Result<()> {
        if which == Which::Primary && !self.has_primary() {
            return Err(Error::new(Code::ActionUnsupported, "the compositor's wlr-data-control is version 1: it has no primary selection").with("reason", "no-primary-selection"));
        }
        Ok(())
    }

    /// Every event the compositor has for us, up to a round trip; our
    /// sources' events go to `events`.
    pub fn pump(&mut self, deadline: Instant, events: &mut Vec<SourceEvent>) -> Result<()> {
        let id = self.alloc();
        self.c.send(&super::wire::words(DISPLAY, 0, &[id]))?;
        loop {
            let e = self.c.next(deadline)?;
            if e.object == id {
                return Ok(());
            }
            self.handle(e, events)?;
        }
    }

    /// The next events until `until` (none: nothing came); for a source's serving loop.
    pub fn wait(&mut self, until: Instant, events: &mut Vec<SourceEvent>) -> Result<()> {
        if let Some(e) = self.c.next_until(until)? {
            self.handle(e, events)?;
        }
        Ok(())
    }

    fn handle(&mut self, e: Msg, events: &mut Vec<SourceEvent>) -> Result<()> {
        let mut a = Args(&e.args);
        if e.object == DEVICE {
            match e.opcode {
                EV_DEVICE_DATA_OFFER => {
                    self.offers.insert(a.u32()?, Vec::new());
                }
                EV_DEVICE_SELECTION => self.selected(0, a.u32()?),
                EV_DEVICE_PRIMARY => self.selected(1, a.u32()?),
                EV_DEVICE_FINISHED => return Err(Error::new(Code::ActionFailed, "Wayland: the data-control device finished (its seat is gone)")),
                _ => {}
            }
        } else if let Some(types) = self.offers.get_mut(&e.object) {
            if e.opcode == 0 {
                types.push(a.string()?);
            }
        } else if self.sources.contains(&e.object) {
            match e.opcode {
                EV_SOURCE_SEND => {
                    let mime = a.string()?;
                    events.push(SourceEvent::Send { source: e.object, mime, fd: self.c.take_fd() });
                }
                EV_SOURCE_CANCELLED => events.push(SourceEvent::Cancelled { source: e.object }),
                _ => {}
            }
        }
        // wl_display.delete_id and anything else: nothing to keep.
        Ok(())
    }

    /// A selection changed to offer `id` (0: empty); the offer it replaces
    /// is destroyed unless the other selection still shows it.
    fn selected(&mut self, i: usize, id: u32) {
        let old = self.current[i];
        self.current[i] = (id != 0).then_some(id);
        self.generation[i] = (id != 0).then(|| GENERATION.fetch_add(1, Ordering::Relaxed) + 1);
        if let Some(o) = old.filter(|&o| o != id && self.current[1 - i] != Some(o)) {
            self.offers.remove(&o);
            let _ = self.c.send(&super::wire::words(o, OFFER_DESTROY, &[]));
        }
    }

    /// The selection's number (None: empty) and the types its offer has.
    pub fn current(&self, which: Which) -> (Option<u32>, Vec<String>) {
        let i = slot(which);
        let types = self.current[i].and_then(|o| self.offers.get(&o)).cloned().unwrap_or_default();
        (self.generation[i], types)
    }

    /// The selection's text: (text cut at `max` bytes on a character
    /// boundary, the bytes the owner sent, truncated); None when it offers
    /// no text type. Waits for the owner until `until` (a hung owner is
    /// TIMEOUT, not a wait for ever); reads at most `cap` bytes.
    pub fn read_text(&mut self, which: Which, max: usize, cap: usize, until: Instant) -> Result<Option<(String, u64, bool)>> {
        self.need(which)?;
        let Some(offer) = self.current[slot(which)] else { return Ok(None) };
        let types = self.offers.get(&offer).cloned().unwrap_or_default();
        let Some(mime) = TEXT_TYPES.iter().find(|t| types.iter().any(|x| x == *t)) else { return Ok(None) };
        let (r, w) = pipe()?;
        let mut a = Vec::new();
        super::wire::put_str(&mut a, mime);
        self.c.send_fd(&message(offer, OFFER_RECEIVE, &a), w.as_raw_fd())?;
        drop(w); // only the owner's copy keeps the pipe open: EOF when it is done
        let bytes = read_to_eof(&r, cap, until).map_err(|why| Error::timeout(format!("the clipboard's owner did not send its text: {why}")).with("reason", "owner-silent"))?;
        let total = bytes.len() as u64;
        let truncated = bytes.len() > max;
        let mut end = bytes.len().min(max);
        while end > 0 && end < bytes.len() && (bytes[end] & 0xc0) == 0x80 {
            end -= 1;
        }
        Ok(Some((String::from_utf8_lossy(&bytes[..end]).into_owned(), total, truncated)))
    }

    /// A source of ours offering text (OFFER_TYPES) made the selection; its
    /// object id. The caller pumps to see it take effect (`is_ours`).
    pub fn offer_text(&mut self, which: Which) -> Result<u32> {
        self.need(which)?;
        let id = self.alloc();
        let mut m = super::wire::words(MANAGER, MANAGER_CREATE_SOURCE, &[id]);
        for t in OFFER_TYPES {
            let mut a = Vec::new();
            super::wire::put_str(&mut a, t);
            m.extend(message(id, SOURCE_OFFER, &a));
        }
        m.extend(super::wire::words(DEVICE, if which == Which::Primary { DEVICE_SET_PRIMARY } else { DEVICE_SET_SELECTION }, &[id]));
        self.c.send(&m)?;
        self.sources.push(id);
        Ok(id)
    }

    /// Whether the selection now offers exactly our types (our source's
    /// offer as the compositor relays it back).
    pub fn shows_ours(&self, which: Which) -> bool {
        let (_, types) = self.current(which);
        types.len() == OFFER_TYPES.len() && OFFER_TYPES.iter().all(|t| types.iter().any(|x| x == t))
    }

    /// Empty the selection (no source).
    pub fn clear(&mut self, which: Which) -> Result<()> {
        self.need(which)?;
        self.c.send(&super::wire::words(DEVICE, if which == Which::Primary { DEVICE_SET_PRIMARY } else { DEVICE_SET_SELECTION }, &[0]))
    }

    pub fn destroy_source(&mut self, id: u32) {
        self.sources.retain(|&s| s != id);
        let _ = self.c.send(&super::wire::words(id, SOURCE_DESTROY, &[]));
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fds on success; each is owned once.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(Error::new(Code::ActionFailed, format!("pipe2: {}", std::io::Error::last_os_error())));
    }
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Everything until EOF, at most `cap` bytes (the rest is left unread), by
/// `until`; Err(why) when `until` passes first.
fn read_to_eof(fd: &OwnedFd, cap: usize, until: Instant) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if out.len() >= cap {
            return Ok(out);
        }
        let now = Instant::now();
        if now >= until {
            return Err(format!("no end of its text in time ({} bytes read)", out.len()));
        }
        let mut p = [libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 }];
        let ms = (until - now).as_millis().clamp(1, 100) as i32;
        // SAFETY: one valid pollfd for the call.
        if unsafe { libc::poll(p.as_mut_ptr(), 1, ms) } <= 0 {
            continue;
        }
        let want = chunk.len().min(cap - out.len());
        // SAFETY: reads into a buffer of at least `want` bytes.
        let n = unsafe { libc::read(fd.as_raw_fd(), chunk.as_mut_ptr() as *mut libc::c_void, want) };
        match n {
            0 => return Ok(out),
            n if n > 0 => out.extend_from_slice(&chunk[..n as usize]),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted && e.kind() != std::io::ErrorKind::WouldBlock {
                    return Err(format!("read: {e}"));
                }
            }
        }
    }
}

/// Answer a `send`: the text to `fd` (non-blocking, by `until`: a reader
/// that never reads does not hold the source), (the caller drops it: closed). Whether all of
/// it went.
pub fn write_text(fd: &OwnedFd, text: &[u8], until: Instant) -> bool {
    // SAFETY: fcntl on an fd we own.
    unsafe {
        let fl = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
    }
    let mut off = 0;
    while off < text.len() {
        let now = Instant::now();
        if now >= until {
            return false;
        }
        let mut p = [libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLOUT, revents: 0 }];
        let ms = (until - now).as_millis().clamp(1, 100) as i32;
        // SAFETY: one valid pollfd for the call.
        if unsafe { libc::poll(p.as_mut_ptr(), 1, ms) } <= 0 {
            continue;
        }
        // SAFETY: writes from inside `text` (a reader gone is EPIPE: Rust programs ignore SIGPIPE).
        let n = unsafe { libc::write(fd.as_raw_fd(), text[off..].as_ptr() as *const libc::c_void, text.len() - off) };
        if n > 0 {
            off += n as usize;
        } else {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted && e.kind() != std::io::ErrorKind::WouldBlock {
                return false;
            }
        }
    }
    true
}

/// How long one `send` may take to be read (the owner is not held longer by a slow reader).
pub const SEND_WAIT: Duration = Duration::from_secs(5);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_types_cover_what_sources_offer() {
        // What we offer is all readable by ourselves, best first.
        for t in OFFER_TYPES {
            assert!(TEXT_TYPES.contains(&t), "{t}");
        }
        assert_eq!(TEXT_TYPES[0], "text/plain;charset=utf-8");
    }

    #[test]
    fn a_pipe_is_read_to_its_end_and_capped() {
        let (r, w) = pipe().unwrap();
        assert!(write_text(&w, "héllo wörld".as_bytes(), Instant::now() + Duration::from_secs(1)));
        drop(w); // the owner's end closed: EOF
        let got = read_to_eof(&r, 1 << 20, Instant::now() + Duration::from_secs(1)).unwrap();
        assert_eq!(got, "héllo wörld".as_bytes());
        let (r, w) = pipe().unwrap();
        assert!(write_text(&w, b"0123456789", Instant::now() + Duration::from_secs(1)));
        drop(w);
        assert_eq!(read_to_eof(&r, 4, Instant::now() + Duration::from_secs(1)).unwrap(), b"0123");
        // An owner that never closes: the read gives up at its deadline.
        let (r, w) = pipe().unwrap();
        let t = Instant::now();
        assert!(read_to_eof(&r, 100, t + Duration::from_millis(150)).is_err());
        assert!(t.elapsed() >= Duration::from_millis(150));
        drop(w);
    }

    #[test]
    fn a_reader_that_never_reads_does_not_hold_the_writer() {
        let (_r, w) = pipe().unwrap();
        let big = vec![b'x'; 1 << 20]; // more than a pipe holds
        let t = Instant::now();
        assert!(!write_text(&w, &big, t + Duration::from_millis(150)));
        assert!(t.elapsed() < Duration::from_secs(2));
    }
}
