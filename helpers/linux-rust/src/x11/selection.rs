//! X11 selections (CLIPBOARD, PRIMARY) on a connection of their own: reading
//! one (ConvertSelection to an unmapped window of ours, INCR transfers
//! included, every wait bounded) and owning one (SetSelectionOwner with a
//! server timestamp, confirmed by GetSelectionOwner, then answering
//! SelectionRequest events with text until told to stop or SelectionClear).
//!
//! A separate connection, because the events that drive a selection
//! (SelectionNotify, SelectionRequest, SelectionClear, PropertyNotify) must
//! not be drained by code that waits for other events on a shared one (the
//! focus guard's activation wait empties its connection's queue).

use super::X;
use crate::error::{Code, Error, Result};
use std::collections::VecDeque;
use std::os::unix::io::AsRawFd;
use std::time::{Duration, Instant};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, PropMode, Property, SelectionNotifyEvent, SelectionRequestEvent, WindowClass,
    SELECTION_NOTIFY_EVENT,
};
use x11rb::protocol::Event;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::CURRENT_TIME;

x11rb::atom_manager! {
    pub SelAtoms: SelAtomsCookie {
        CLIPBOARD,
        TARGETS,
        TIMESTAMP,
        MULTIPLE,
        TEXT,
        INCR,
        UTF8_STRING,
        TEXT_PLAIN_UTF8: b"text/plain;charset=utf-8",
        TEXT_PLAIN: b"text/plain",
        // What KDE's Klipper and password managers (KeePassXC) put among the
        // targets of a secret they copied.
        PASSWORD_HINT: b"x-kde-passwordManagerHint",
        DECKHAND_SELECTION,
        DECKHAND_TIME,
    }
}

/// Which selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Which {
    Clipboard,
    Primary,
}

impl Which {
    pub fn name(self) -> &'static str {
        match self {
            Which::Clipboard => "clipboard",
            Which::Primary => "primary",
        }
    }
    pub fn parse(s: &str) -> Option<Which> {
        match s {
            "clipboard" => Some(Which::Clipboard),
            "primary" => Some(Which::Primary),
            _ => None,
        }
    }
}

/// Most text one owner serves in one property (no INCR on our side): well
/// under what one X request carries with BIG-REQUESTS, and under the wire's
/// frame limit. Longer text is refused before anything changes.
pub const MAX_TEXT_BYTES: usize = 4 * 1024 * 1024;

/// Most bytes read from an owner in one conversion (an INCR transfer is cut
/// here and reported truncated).
pub const MAX_READ_BYTES: usize = 8 * 1024 * 1024;

/// Longest single poll(2): cancels and deadlines are seen within this.
const SLICE: Duration = Duration::from_millis(20);

/// What an owner handed over for one target.
#[derive(Debug, Clone)]
pub struct Content {
    /// The property's type (UTF8_STRING, STRING, ATOM, ...).
    pub type_: u32,
    pub format: u8,
    /// At most the caller's `max_bytes`.
    pub data: Vec<u8>,
    /// Bytes the owner offered (an INCR transfer cut short: what arrived).
    pub total: u64,
    pub truncated: bool,
}

/// How one SelectionRequest was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answered {
    /// The text itself (UTF8_STRING, STRING, TEXT, text/plain...).
    Text,
    /// TARGETS or TIMESTAMP.
    Meta,
    /// A target we do not offer (or a request for a selection we do not hold).
    Refused,
}

pub struct Sel {
    pub x: X,
    /// Our unmapped input-only window: requestor of conversions, owner of selections.
    pub win: u32,
    pub atoms: SelAtoms,
    /// Selection events that arrived while waiting for something else.
    queued: VecDeque<Event>,
}

impl Drop for Sel {
    fn drop(&mut self) {
        let _ = self.x.conn.destroy_window(self.win);
        let _ = self.x.conn.flush();
    }
}

impl Sel {
    pub fn open() -> Result<Sel> {
        let x = X::connect()?;
        let atoms = SelAtoms::new(&x.conn)?.reply()?;
        let win = x.conn.generate_id()?;
        let aux = CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE);
        x.conn.create_window(0, win, x.root, -10, -10, 1, 1, 0, WindowClass::INPUT_ONLY, 0, &aux)?.check()?;
        // Whoever asks who owns a selection of ours finds this process.
        x.conn.change_property32(PropMode::REPLACE, win, x.atoms._NET_WM_PID, AtomEnum::CARDINAL, &[std::process::id()])?;
        x.conn.change_property8(PropMode::REPLACE, win, AtomEnum::WM_NAME, AtomEnum::STRING, b"deckhand selection")?;
        x.conn.flush()?;
        Ok(Sel { x, win, atoms, queued: VecDeque::new() })
    }

    pub fn atom(&self, w: Which) -> u32 {
        match w {
            Which::Clipboard => self.atoms.CLIPBOARD,
            Which::Primary => AtomEnum::PRIMARY.into(),
        }
    }

    /// The window owning the selection; 0 when none.
    pub fn owner(&self, sel: u32) -> Result<u32> {
        Ok(self.x.conn.get_selection_owner(sel)?.reply()?.owner)
    }

    /// The next event `want` accepts, waiting until `until`. Selection
    /// requests and clears that arrive meanwhile are kept for `next_request`;
    /// anything else is dropped.
    fn wait_for(&mut self, until: Instant, cancelled: &dyn Fn() -> bool, mut want: impl FnMut(&Event) -> bool) -> Result<Option<Event>> {
        loop {
            while let Some(e) = self.x.conn.poll_for_event()? {
                if want(&e) {
                    return Ok(Some(e));
                }
                if matches!(e, Event::SelectionRequest(_) | Event::SelectionClear(_)) {
                    self.queued.push_back(e);
                }
            }
            let now = Instant::now();
            if now >= until || cancelled() {
                return Ok(None);
            }
            poll_fd(&self.x, (until - now).min(SLICE));
        }
    }

    /// A server timestamp (ICCCM: selections are taken at a real time, never
    /// CurrentTime): the time of the PropertyNotify a zero-length append to
    /// a property of our window causes.
    fn server_time(&mut self, until: Instant) -> Result<u32> {
        let (win, prop) = (self.win, self.atoms.DECKHAND_TIME);
        self.x.conn.change_property8(PropMode::APPEND, win, prop, AtomEnum::STRING, &[])?;
        self.x.conn.flush()?;
        match self.wait_for(until, &|| false, |e| matches!(e, Event::PropertyNotify(p) if p.window == win && p.atom == prop))? {
            Some(Event::PropertyNotify(p)) => Ok(p.time),
            _ => Err(Error::timeout("the X server did not report a property change on the helper's own window in time")),
        }
    }

    /// Take the selection with this window; confirmed with GetSelectionOwner.
    /// The server time it was taken at.
    pub fn own(&mut self, sel: u32, until: Instant) -> Result<u32> {
        let t = self.server_time(until)?;
        self.x.conn.set_selection_owner(self.win, sel, t)?;
        let owner = self.owner(sel)?;
        if owner != self.win {
            return Err(Error::new(Code::ActionFailed, format!("the selection was not taken: its owner is window {owner}, not ours")));
        }
        Ok(t)
    }

    /// Leave the selection without an owner (any client may: the current
    /// owner, if any, is sent SelectionClear). True when confirmed empty.
    pub fn clear(&mut self, sel: u32) -> Result<bool> {
        self.x.conn.set_selection_owner(x11rb::NONE, sel, CURRENT_TIME)?;
        Ok(self.owner(sel)? == x11rb::NONE)
    }

    /// Ask the owner of `sel` for `target` and read what it hands over, at
    /// most `max_bytes` of it. None: the owner refused the target (or there
    /// is no owner). TIMEOUT when it does not answer before `until`.
    pub fn convert(&mut self, sel: u32, target: u32, max_bytes: usize, until: Instant) -> Result<Option<Content>> {
        let (win, prop) = (self.win, self.atoms.DECKHAND_SELECTION);
        self.x.conn.delete_property(win, prop)?;
        self.x.conn.convert_selection(win, sel, target, prop, CURRENT_TIME)?;
        self.x.conn.flush()?;
        let got = self.wait_for(until, &|| false, |e| matches!(e, Event::SelectionNotify(n) if n.requestor == win && n.selection == sel))?;
        let Some(Event::SelectionNotify(n)) = got else {
            return Err(Error::timeout("the selection's owner did not answer the conversion in time"));
        };
        if n.property == x11rb::NONE {
            return Ok(None);
        }
        let head = self.x.conn.get_property(false, win, n.property, AtomEnum::ANY, 0, 0)?.reply()?;
        if head.type_ == self.atoms.INCR {
            return self.read_incr(n.property, max_bytes, until).map(Some);
        }
        let size = head.bytes_after as usize;
        let want = size.min(max_bytes);
        let r = self.x.conn.get_property(false, win, n.property, AtomEnum::ANY, 0, want.div_ceil(4) as u32)?.reply()?;
        self.x.conn.delete_property(win, n.property)?;
        self.x.conn.flush()?;
        let mut data = r.value;
        data.truncate(want);
        Ok(Some(Content { type_: r.type_, format: r.format, data, total: size as u64, truncated: size > max_bytes }))
    }

    /// ICCCM INCR: deleting the property starts the transfer; each chunk is a
    /// new value of it, read and deleted; an empty chunk ends it. Cut at
    /// MAX_READ_BYTES (reported truncated; the owner's own timeout ends it).
    fn read_incr(&mut self, prop: u32, max_bytes: usize, until: Instant) -> Result<Content> {
        let win = self.win;
        self.x.conn.delete_property(win, prop)?;
        self.x.conn.flush()?;
        let (mut data, mut total, mut type_, mut format) = (Vec::new(), 0u64, 0u32, 8u8);
        loop {
            let got = self.wait_for(until, &|| false, |e| {
                matches!(e, Event::PropertyNotify(p) if p.window == win && p.atom == prop && p.state == Property::NEW_VALUE)
            })?;
            if got.is_none() {
                return Err(Error::timeout("the selection's owner did not finish its incremental (INCR) transfer in time"));
            }
            let r = self.x.conn.get_property(true, win, prop, AtomEnum::ANY, 0, (MAX_READ_BYTES / 4) as u32)?.reply()?;
            if r.value.is_empty() {
                break;
            }
            (type_, format) = (r.type_, r.format);
            total += r.value.len() as u64;
            let room = max_bytes.saturating_sub(data.len());
            data.extend_from_slice(&r.value[..r.value.len().min(room)]);
            if total as usize > MAX_READ_BYTES.max(max_bytes) {
                let _ = self.x.conn.delete_property(win, prop);
                let _ = self.x.conn.flush();
                return Ok(Content { type_, format, data, total, truncated: true });
            }
        }
        Ok(Content { type_, format, data, total, truncated: total as usize > max_bytes })
    }

    /// The atoms of a TARGETS answer, by name. Empty when the owner refuses TARGETS.
    pub fn targets(&mut self, sel: u32, until: Instant) -> Result<Vec<String>> {
        let Some(c) = self.convert(sel, self.atoms.TARGETS, 64 * 1024, until)? else { return Ok(Vec::new()) };
        if c.format != 32 {
            return Ok(Vec::new());
        }
        let atoms: Vec<u32> = c.data.chunks_exact(4).map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]])).filter(|&a| a != 0).take(512).collect();
        let cookies = atoms.iter().map(|&a| self.x.conn.get_atom_name(a)).collect::<std::result::Result<Vec<_>, _>>()?;
        Ok(cookies.into_iter().filter_map(|c| c.reply().ok()).map(|r| String::from_utf8_lossy(&r.name).into_owned()).collect())
    }

    /// The owner's text, trying UTF8_STRING, then STRING, then TEXT (only
    /// targets it lists, when it lists any). None: it offers no text.
    pub fn read_text(&mut self, sel: u32, targets: &[String], max_bytes: usize, until: Instant) -> Result<Option<(String, u64, bool)>> {
        let a = self.atoms;
        for (name, atom) in [("UTF8_STRING", a.UTF8_STRING), ("STRING", AtomEnum::STRING.into()), ("TEXT", a.TEXT)] {
            if !targets.is_empty() && !targets.iter().any(|t| t == name) {
                continue;
            }
            let Some(c) = self.convert(sel, atom, max_bytes, until)? else { continue };
            if c.format != 8 {
                continue;
            }
            let text = if c.type_ == u32::from(AtomEnum::STRING) { latin1(&c.data) } else { utf8_prefix(&c.data, c.truncated) };
            return Ok(Some((text, c.total, c.truncated)));
        }
        Ok(None)
    }

    /// The next selection request or clear (queued first), waiting until
    /// `until`; None when the time passed or `cancelled()`.
    pub fn next_request(&mut self, until: Instant, cancelled: &dyn Fn() -> bool) -> Result<Option<Event>> {
        if let Some(e) = self.queued.pop_front() {
            return Ok(Some(e));
        }
        self.wait_for(until, cancelled, |e| matches!(e, Event::SelectionRequest(_) | Event::SelectionClear(_)))
    }

    /// Answer one request for a selection we own with `text` (taken at
    /// `since`): TARGETS, TIMESTAMP, UTF8_STRING, text/plain;charset=utf-8,
    /// TEXT (as UTF8_STRING), STRING and text/plain (Latin-1, '?' for the
    /// rest). MULTIPLE and anything else are refused (property None).
    pub fn answer(&self, ev: &SelectionRequestEvent, owned: &[u32], text: &str, since: u32) -> Result<Answered> {
        let a = self.atoms;
        let c = &self.x.conn;
        // ICCCM: a property of None is an obsolete client asking for the target's name.
        let prop = if ev.property == x11rb::NONE { ev.target } else { ev.property };
        let max = c.maximum_request_bytes().saturating_sub(64);
        let mut outcome = Answered::Refused;
        if ev.owner == self.win && owned.contains(&ev.selection) && (ev.time == CURRENT_TIME || ev.time >= since) {
            let t = ev.target;
            outcome = if t == a.TARGETS {
                let list = [a.TARGETS, a.TIMESTAMP, a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.TEXT, AtomEnum::STRING.into(), a.TEXT_PLAIN];
                c.change_property32(PropMode::REPLACE, ev.requestor, prop, AtomEnum::ATOM, &list)?;
                Answered::Meta
            } else if t == a.TIMESTAMP {
                c.change_property32(PropMode::REPLACE, ev.requestor, prop, AtomEnum::INTEGER, &[since])?;
                Answered::Meta
            } else if [a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.TEXT].contains(&t) && text.len() <= max {
                let ty = if t == a.TEXT { a.UTF8_STRING } else { t };
                c.change_property8(PropMode::REPLACE, ev.requestor, prop, ty, text.as_bytes())?;
                Answered::Text
            } else if (t == u32::from(AtomEnum::STRING) || t == a.TEXT_PLAIN) && text.chars().count() <= max {
                c.change_property8(PropMode::REPLACE, ev.requestor, prop, t, &to_latin1(text))?;
                Answered::Text
            } else {
                Answered::Refused
            };
        }
        let notify = SelectionNotifyEvent {
            response_type: SELECTION_NOTIFY_EVENT,
            sequence: 0,
            time: ev.time,
            requestor: ev.requestor,
            selection: ev.selection,
            target: ev.target,
            property: if outcome == Answered::Refused { x11rb::NONE } else { prop },
        };
        c.send_event(false, ev.requestor, EventMask::NO_EVENT, notify)?;
        c.flush()?;
        Ok(outcome)
    }
}

/// Block until the connection has something to read or `max` passes.
fn poll_fd(x: &X, max: Duration) {
    let mut fds = [libc::pollfd { fd: x.conn.stream().as_raw_fd(), events: libc::POLLIN, revents: 0 }];
    let ms = max.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for the duration of the call.
    let _ = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
}

pub fn latin1(b: &[u8]) -> String {
    b.iter().map(|&c| c as char).collect()
}

/// Text as Latin-1 bytes: characters above U+00FF become '?'.
pub fn to_latin1(s: &str) -> Vec<u8> {
    s.chars().map(|c| if (c as u32) < 0x100 { c as u8 } else { b'?' }).collect()
}

/// UTF-8 bytes as text; a cut transfer loses its last, incomplete character
/// rather than ending in a replacement character.
pub fn utf8_prefix(b: &[u8], truncated: bool) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => s.to_string(),
        Err(e) if truncated && e.error_len().is_none() => String::from_utf8_lossy(&b[..e.valid_up_to()]).into_owned(),
        Err(_) => String::from_utf8_lossy(b).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_encodings() {
        assert_eq!(to_latin1("aé€"), vec![b'a', 0xe9, b'?']);
        assert_eq!(latin1(&[b'a', 0xe9]), "aé");
        // "é" is two bytes: cut after the first, the partial character goes.
        assert_eq!(utf8_prefix("aé".as_bytes()[..2].as_ref(), true), "a");
        assert_eq!(utf8_prefix("aé".as_bytes(), false), "aé");
        // Broken UTF-8 that is not a cut stays visible as replacement characters.
        assert_eq!(utf8_prefix(&[b'a', 0xff, b'b'], false), "a\u{fffd}b");
    }

    #[test]
    fn selection_names() {
        assert_eq!(Which::parse("clipboard"), Some(Which::Clipboard));
        assert_eq!(Which::parse("primary").map(Which::name), Some("primary"));
        assert_eq!(Which::parse("secondary"), None);
    }
}
