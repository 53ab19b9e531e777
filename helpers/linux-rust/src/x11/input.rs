//! Foreground input through XTest. Every key and button pressed is tracked
//! and released at the end, even when a step fails (and by the session's
//! Drop should a step panic); the pointer is put back when asked; the
//! server is synced before returning. Two optional guards: the focus guard
//! (`focus`) before keyboard sends, the pointer guard (`pointer`) before
//! every pointer event.
//!
//! This runs on the input worker thread (blocking calls and sleeps are fine
//! here, they do not hold up other requests). Sleeps that can be long (wait
//! steps, the activation wait, the focus settling) are cut into slices of at
//! most 10 ms that check for a `cancel` of the request.

use super::focus;
use super::keys::{self, Keymap};
use super::pointer;
use super::X;
use crate::error::{Code, Error, Result};
use crate::wire::messages::{Cleanup, FocusGuard, InputStep, PointerGuard};
use std::time::{Duration, Instant};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, EventMask, KEY_PRESS_EVENT, KEY_RELEASE_EVENT, BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, MOTION_NOTIFY_EVENT};
use x11rb::protocol::xtest::ConnectionExt as _;

pub struct Outcome {
    pub steps_completed: u32,
    /// Whether any event reached the server.
    pub anything_sent: bool,
    /// Characters typed by `type` steps.
    pub chars_sent: u32,
    /// The top-level window the focus guard accepted last (None: no check ran).
    pub focus_window: Option<u32>,
    pub error: Option<Error>,
    pub cleanup: Cleanup,
}

impl Outcome {
    /// Nothing was attempted (e.g. cancelled while queued).
    pub fn not_started(error: Error) -> Outcome {
        Outcome {
            steps_completed: 0,
            anything_sent: false,
            chars_sent: 0,
            focus_window: None,
            error: Some(error),
            cleanup: Cleanup { keys_released: true, buttons_released: true, pointer_restored: None },
        }
    }
}

/// A `type` step is sent in chunks of this many characters, the focus guard
/// checked before each (and before a character that needed a keymap remap,
/// which sleeps), so at most one chunk, sent in one burst, can land in a
/// window the focus moved to while typing.
pub const TYPE_CHUNK: usize = 8;

/// The longest the guard waits for the window manager to activate the target.
const ACTIVATE_WAIT: Duration = Duration::from_millis(1000);

/// The longest a click holds its button: until the application has read the
/// press (`Session::await_press_read`), or this long (xdotool's own delay)
/// for one that never says so.
///
/// Why hold at all: a press, its release and the pointer's way back sent in
/// one instant are read by the application in one go, and toolkits take that
/// for something else than a click. GTK 4's check button took focus and never
/// toggled (0 of 12 clicks with no hold; 13 of 15 with 1 ms, 15 of 15 with
/// 2-3 ms); Qt 5's too (0 of 11; 1 ms 9 of 11, 2 ms 10 of 11, 4 and 12 ms 11
/// of 11); GTK 3 saw the click but reported its release where the pointer
/// had been put back (5 of 10 releases at the wrong place, as for
/// `xdotool mousedown 1 mouseup 1 mousemove`), a drag to a drawing app.
/// Waiting until the application has read the press fixes all three (GTK 4
/// 13 of 13 toggles, Qt 5 13 of 13, GTK 3 30 of 30 releases where the press
/// was, back to back) without the fixed 12 ms, which were most of a
/// coordinate click's time where the application reads at once (the GTK 3
/// fixture: 0.7 ms median; issue 15).
const CLICK_HOLD: Duration = Duration::from_millis(12);

/// _NET_WM_USER_TIME, _NET_WM_USER_TIME_WINDOW and our own clock property,
/// interned once (atoms live as long as the X server; the helper talks to one).
fn click_atoms(x: &X) -> Result<(u32, u32, u32)> {
    static ATOMS: std::sync::OnceLock<(u32, u32, u32)> = std::sync::OnceLock::new();
    if let Some(a) = ATOMS.get() {
        return Ok(*a);
    }
    let t = x.conn.intern_atom(false, b"_NET_WM_USER_TIME")?;
    let w = x.conn.intern_atom(false, b"_NET_WM_USER_TIME_WINDOW")?;
    let c = x.conn.intern_atom(false, b"_DECKHAND_CLICK_CLOCK")?;
    let a = (t.reply()?.atom, w.reply()?.atom, c.reply()?.atom);
    Ok(*ATOMS.get_or_init(|| a))
}

/// Watching for the application to read a press. EWMH toolkits (GTK 3 and
/// 4, Qt, Chromium, Firefox) set _NET_WM_USER_TIME to an input event's
/// server time as they read each button or key press (focus stealing
/// prevention), on the top-level window or on the one its
/// _NET_WM_USER_TIME_WINDOW names (GTK 4 writes the top level although it
/// names one: both are watched). The press's own time is bracketed by two
/// changes of a property on a window of ours, one just before the press and
/// one just after (their PropertyNotify times): only a user time inside that
/// bracket is this press's reading, never an earlier event's late update.
struct PressWatch {
    windows: Vec<u32>,
    user_time: u32,
    /// Our unmapped window and its clock property.
    clock_window: u32,
    clock: u32,
    /// Server times of the clock changes before and after the press.
    before: Option<u32>,
    after: Option<u32>,
    /// User times seen on the watched windows so far (their values).
    seen: Vec<u32>,
}

/// Whether server time `t` lies in [before, after] (times wrap after 49
/// days: compared as differences from `before`).
fn between(t: u32, before: u32, after: u32) -> bool {
    t.wrapping_sub(before) <= after.wrapping_sub(before)
}

/// Longest uninterrupted sleep: cancels are noticed within this.
const SLICE: Duration = Duration::from_millis(10);

/// Sleep until `until` in slices of at most 10 ms; false as soon as
/// `cancelled()` says so (true when the time passed).
pub fn sleep_until(until: Instant, cancelled: &dyn Fn() -> bool) -> bool {
    loop {
        if cancelled() {
            return false;
        }
        let now = Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(SLICE));
    }
}

pub(crate) fn cancelled_error(what: String) -> Error {
    Error::new(Code::ActionFailed, what).with("cancelled", true)
}

/// The focus guard's one rule, whichever backend observes the focus
/// (`observe`) and activates the target (`activate`, until the instant
/// given): at the first check of an op, and only then, a window that is not
/// focused may be activated; later the focus having moved away means the
/// user (or the app) moved it: stop rather than fight them.
pub(crate) fn guard_focus(
    g: &FocusGuard,
    first: bool,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
    observe: impl FnOnce() -> Result<focus::Seen>,
    activate: impl FnOnce(Instant) -> Result<focus::Seen>,
) -> Result<focus::Seen> {
    let mut seen = observe()?;
    if !seen.accepted && g.activate && first {
        seen = activate((Instant::now() + ACTIVATE_WAIT).min(deadline))?;
        if !seen.accepted && cancelled() {
            return Err(cancelled_error("cancelled while activating the target window".into()));
        }
    }
    if !seen.accepted {
        return Err(seen.mismatch(g));
    }
    Ok(seen)
}

/// A keysym resolved to what must be pressed.
#[derive(Debug, Clone, Copy)]
struct KeyPlan {
    keycode: u8,
    shift: bool,
    /// A spare keycode was remapped for it (the plan slept meanwhile).
    remapped: bool,
}

struct Session<'a> {
    x: &'a mut X,
    deadline: Instant,
    cancelled: &'a dyn Fn() -> bool,
    /// The focus guard (None: keyboard steps are not checked).
    guard: Option<FocusGuard>,
    /// Whether the guard has checked once (activation only at the first check).
    guard_checked: bool,
    focus_window: Option<u32>,
    /// The pointer guard (None: pointer events are not checked).
    pointer_guard: Option<PointerGuard>,
    pointer_cache: pointer::Cache,
    chars_sent: u32,
    /// The server's keymap, read when a key is first needed (a plain click
    /// needs none: one round trip saved).
    keymap: Option<Keymap>,
    held_keys: Vec<u8>,
    held_buttons: Vec<u8>,
    /// Spare keycodes we remapped (restored to NoSymbol at the end).
    remapped: Vec<u8>,
    next_spare: usize,
    moved: bool,
    sent: bool,
    shift_kc: Option<u8>,
    /// Where a button was last pressed, until a keyboard step waited for the
    /// window manager to move the focus there.
    last_press: Option<(i32, i32)>,
}

impl<'a> Session<'a> {
    fn fake(&mut self, ty: u8, detail: u8, x: i16, y: i16) -> Result<()> {
        let root = self.x.root;
        self.x.conn.xtest_fake_input(ty, detail, 0, root, x, y, 0)?;
        self.sent = true;
        Ok(())
    }
    fn key_down(&mut self, kc: u8) -> Result<()> {
        if !self.held_keys.contains(&kc) {
            self.held_keys.push(kc);
        }
        self.fake(KEY_PRESS_EVENT, kc, 0, 0)
    }
    fn key_up(&mut self, kc: u8) -> Result<()> {
        self.fake(KEY_RELEASE_EVENT, kc, 0, 0)?;
        self.held_keys.retain(|&k| k != kc);
        Ok(())
    }
    fn button_down(&mut self, b: u8) -> Result<()> {
        if !self.held_buttons.contains(&b) {
            self.held_buttons.push(b);
        }
        self.fake(BUTTON_PRESS_EVENT, b, 0, 0)
    }
    fn button_up(&mut self, b: u8) -> Result<()> {
        self.fake(BUTTON_RELEASE_EVENT, b, 0, 0)?;
        self.held_buttons.retain(|&k| k != b);
        Ok(())
    }
    fn motion(&mut self, x: i32, y: i32) -> Result<()> {
        let clamp = |v: i32| v.clamp(i16::MIN as i32, i16::MAX as i32) as i16;
        self.moved = true;
        self.fake(MOTION_NOTIFY_EVENT, 0, clamp(x), clamp(y))
    }

    fn keymap(&mut self) -> Result<&mut Keymap> {
        if self.keymap.is_none() {
            self.keymap = Some(Keymap::load(&self.x.conn)?);
        }
        Ok(self.keymap.as_mut().expect("loaded above"))
    }

    /// Resolve a keysym to a keycode, remapping a spare keycode if needed.
    fn plan(&mut self, keysym: u32) -> Result<KeyPlan> {
        self.keymap()?;
        let keymap = self.keymap.as_mut().expect("loaded above");
        if let Some((kc, level)) = keymap.lookup(keysym) {
            return Ok(KeyPlan { keycode: kc, shift: level == 1 && !keys::is_modifier(keysym), remapped: false });
        }
        if keymap.spare.is_empty() {
            return Err(Error::new(Code::ActionFailed, format!("keysym 0x{keysym:x} is not on the keyboard and no spare keycode is free")));
        }
        let kc = keymap.spare[self.next_spare % keymap.spare.len()];
        self.next_spare += 1;
        let per = keymap.per_keycode.max(1);
        let syms = vec![keysym; per as usize];
        self.x.conn.change_keyboard_mapping(1, kc, per, &syms)?;
        self.x.sync()?;
        if !self.remapped.contains(&kc) {
            self.remapped.push(kc);
        }
        // Forget any other keysym that used this keycode, learn the new one.
        let keymap = self.keymap.as_mut().expect("loaded above");
        keymap.by_sym.retain(|_, v| v.0 != kc);
        keymap.by_sym.insert(keysym, (kc, 0));
        // Clients refresh their keymaps on MappingNotify: give them a moment.
        std::thread::sleep(Duration::from_millis(25));
        Ok(KeyPlan { keycode: kc, shift: false, remapped: true })
    }

    fn shift(&mut self) -> Result<u8> {
        if let Some(k) = self.shift_kc {
            return Ok(k);
        }
        let k = self
            .keymap()?
            .lookup(keys::XK_SHIFT_L)
            .map(|(k, _)| k)
            .ok_or_else(|| Error::new(Code::ActionFailed, "no Shift key on the keyboard"))?;
        self.shift_kc = Some(k);
        Ok(k)
    }

    /// Press one key (with Shift if its level needs it) and release it.
    fn stroke(&mut self, p: KeyPlan) -> Result<()> {
        let shift = if p.shift { Some(self.shift()?) } else { None };
        let shift_already = shift.map(|s| self.held_keys.contains(&s)).unwrap_or(true);
        if let (Some(s), false) = (shift, shift_already) {
            self.key_down(s)?;
        }
        self.key_down(p.keycode)?;
        self.key_up(p.keycode)?;
        if let (Some(s), false) = (shift, shift_already) {
            self.key_up(s)?;
        }
        Ok(())
    }

    /// After a click, keyboard input must wait until the window manager has
    /// given the focus to the clicked window (it does so asynchronously), or
    /// the keys land in the previously focused window.
    fn settle_focus(&mut self) {
        let deadline = self.deadline;
        let Some((px, py)) = self.last_press.take() else { return };
        let _ = self.x.sync();
        let Ok(Some(target)) = super::windows::window_at(self.x, px, py) else { return };
        let Ok(target_frame) = super::windows::toplevel_frame(self.x, target.id) else { return };
        let until = (Instant::now() + Duration::from_millis(200)).min(deadline);
        while Instant::now() < until {
            let focus = self.x.conn.get_input_focus().ok().and_then(|c| c.reply().ok()).map(|r| r.focus).unwrap_or(0);
            if focus <= 1 || focus == self.x.root {
                return; // None / PointerRoot: keys follow the pointer
            }
            if super::windows::toplevel_frame(self.x, focus).ok() == Some(target_frame) {
                return;
            }
            if !sleep_until(Instant::now() + Duration::from_millis(5), self.cancelled) {
                return; // the keyboard step's checkpoint reports the cancel
            }
        }
    }

    /// Stop points inside long steps: a cancel or the deadline.
    fn checkpoint(&self, what: &str) -> Result<()> {
        if (self.cancelled)() {
            return Err(cancelled_error(format!("cancelled during {what}")));
        }
        if Instant::now() >= self.deadline {
            return Err(Error::timeout(format!("deadline reached during {what}")));
        }
        Ok(())
    }

    /// The pointer guard, before a pointer event at (px, py): the topmost
    /// window there must be the target's (see `pointer`).
    /// Ok(the top-level client window there, when the guard looked; without
    /// a guard, nothing is looked at: None).
    fn check_point(&mut self, px: i32, py: i32) -> Result<Option<u32>> {
        let Some(g) = &self.pointer_guard else { return Ok(None) };
        let hit = pointer::hit_at(self.x, px, py, &mut self.pointer_cache)?;
        if pointer::accepts(&hit, g) {
            Ok(Some(hit.client))
        } else {
            Err(hit.refusal(px, py))
        }
    }

    /// Start watching the window a click goes to for the application's
    /// reading of the press (`PressWatch`); None when there is nothing to
    /// watch (then a click holds CLICK_HOLD).
    fn watch_presses(&mut self, client: u32) -> Option<PressWatch> {
        use x11rb::protocol::xproto::{CreateWindowAux, WindowClass};
        if client == 0 {
            return None;
        }
        let (user_time, utw_atom, clock) = click_atoms(self.x).ok()?;
        let utw = self.x.conn.get_property(false, client, utw_atom, AtomEnum::WINDOW, 0, 1).ok()?;
        let mask = ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE);
        self.x.conn.change_window_attributes(client, &mask).ok()?;
        let clock_window = self.x.conn.generate_id().ok()?;
        let root = self.x.root;
        self.x
            .conn
            .create_window(0, clock_window, root, -10, -10, 1, 1, 0, WindowClass::INPUT_ONLY, 0, &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE))
            .ok()?;
        let mut windows = vec![client];
        if let Some(w) = utw.reply().ok().and_then(|r| r.value32().and_then(|mut v| v.next())).filter(|&w| w != 0 && w != client) {
            if self.x.conn.change_window_attributes(w, &mask).is_ok() {
                windows.push(w);
            }
        }
        // Nothing queued before the press may count as its reading.
        while let Ok(Some(_)) = self.x.conn.poll_for_event() {}
        Some(PressWatch { windows, user_time, clock_window, clock, before: None, after: None, seen: Vec::new() })
    }

    /// A tick of our clock: a zero-length append to its property, whose
    /// PropertyNotify carries the server time it was made at.
    fn tick(&mut self, w: &PressWatch) -> Result<()> {
        use x11rb::protocol::xproto::PropMode;
        self.x.conn.change_property(PropMode::APPEND, w.clock_window, w.clock, AtomEnum::INTEGER, 32, 0, &[])?;
        Ok(())
    }

    /// After a press between two ticks: wait until the application has read
    /// it (a user time within the ticks' times), CLICK_HOLD at most; false
    /// when it never showed (then the hold simply passed).
    fn await_press_read(&mut self, w: &mut PressWatch) -> Result<bool> {
        use std::os::unix::io::AsRawFd;
        use x11rb::protocol::Event;
        self.x.conn.flush()?;
        let t0 = Instant::now();
        let until = (t0 + CLICK_HOLD).min(self.deadline);
        loop {
            while let Some(ev) = self.x.conn.poll_for_event()? {
                let Event::PropertyNotify(p) = ev else { continue };
                if p.window == w.clock_window && p.atom == w.clock {
                    if w.before.is_none() {
                        w.before = Some(p.time);
                    } else {
                        w.after = Some(p.time);
                    }
                } else if p.atom == w.user_time && w.windows.contains(&p.window) {
                    // The value is the input event's time (one round trip).
                    let v = self.x.conn.get_property(false, p.window, w.user_time, AtomEnum::CARDINAL, 0, 1)?.reply()?;
                    if let Some(t) = v.value32().and_then(|mut i| i.next()) {
                        w.seen.push(t);
                    }
                }
            }
            if let (Some(b), Some(a)) = (w.before, w.after) {
                if w.seen.iter().any(|&t| between(t, b, a)) {
                    if crate::debug() {
                        eprintln!("deckhand-helper-linux: click: the press was read after {:.2} ms", t0.elapsed().as_secs_f64() * 1e3);
                    }
                    return Ok(true);
                }
            }
            if (self.cancelled)() {
                return Err(cancelled_error("cancelled during a click".to_string()));
            }
            let now = Instant::now();
            if now >= until {
                return Ok(false);
            }
            let wait = (until - now).min(SLICE);
            let mut fds = [libc::pollfd { fd: self.x.conn.stream().as_raw_fd(), events: libc::POLLIN, revents: 0 }];
            let ms = (wait.as_micros().div_ceil(1000)).min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd for the duration of the call.
            let _ = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
        }
    }

    /// Stop watching (the selection is this connection's own; the other
    /// clients' stay as they were) and drop our clock window.
    fn unwatch(&mut self, w: PressWatch) {
        for win in w.windows {
            let _ = self.x.conn.change_window_attributes(win, &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT));
        }
        let _ = self.x.conn.destroy_window(w.clock_window);
    }

    /// The pointer guard for an event at the pointer's current position
    /// (button steps, clicks' presses, scroll notches): asked of the server,
    /// since the user may have moved it.
    fn check_here(&mut self) -> Result<()> {
        if self.pointer_guard.is_none() {
            return Ok(());
        }
        let (px, py) = pointer::position(self.x)?;
        self.check_point(px, py).map(|_| ())
    }

    /// The focus guard, before every keyboard-affecting send (key down, each
    /// tap repeat, each chunk of typed text). At the first check of the op,
    /// and only then, a window that is not focused may be activated; later
    /// the focus having moved away means the user (or the app) moved it:
    /// stop rather than fight them.
    fn check_focus(&mut self) -> Result<()> {
        let Some(g) = self.guard else { return Ok(()) };
        let first = !self.guard_checked;
        self.guard_checked = true;
        let (deadline, cancelled) = (self.deadline, self.cancelled);
        let x = &mut *self.x;
        let seen = guard_focus(&g, first, deadline, cancelled, || focus::observe(x, &g), |until| focus::activate_and_wait(x, &g, until, cancelled))?;
        self.focus_window = Some(seen.window);
        Ok(())
    }

    fn step(&mut self, step: &InputStep) -> Result<()> {
        let deadline = self.deadline;
        match step {
            // Settle first: the guard then sees where the click put the focus.
            InputStep::Key { .. } | InputStep::Tap { .. } | InputStep::Type { .. } => self.settle_focus(),
            InputStep::Click { x, y, .. } => self.last_press = Some((*x, *y)),
            InputStep::Button { down: true, .. } => {
                let root = self.x.root;
                if let Ok(Ok(r)) = self.x.conn.query_pointer(root).map(|c| c.reply()) {
                    self.last_press = Some((r.root_x as i32, r.root_y as i32));
                }
            }
            _ => {}
        }
        match step {
            InputStep::Move { x, y } => {
                self.check_point(*x, *y)?;
                self.motion(*x, *y)
            }
            InputStep::Button { button, down } => {
                self.check_here()?;
                if *down {
                    self.button_down(button.x_button())
                } else {
                    self.button_up(button.x_button())
                }
            }
            InputStep::Click { x, y, button, count, modifiers } => {
                let mut mods = Vec::new();
                for m in modifiers {
                    let ks = keys::key_to_keysym(m)?;
                    mods.push(self.plan(ks)?.keycode);
                }
                // Guarded: checked before the motion, and before each press
                // at the pointer's position then (the release goes where
                // the press went: the server's implicit grab).
                let client = match self.check_point(*x, *y)? {
                    Some(c) => c,
                    None => pointer::hit_at(self.x, *x, *y, &mut self.pointer_cache).map(|h| h.client).unwrap_or(0),
                };
                let mut watch = self.watch_presses(client);
                self.motion(*x, *y)?;
                for &m in &mods {
                    self.key_down(m)?;
                }
                let b = button.x_button();
                let presses = (|| {
                    for _ in 0..(*count).clamp(1, 3) {
                        self.check_here()?;
                        // Held until the application has read the press (CLICK_HOLD).
                        match watch.as_mut() {
                            Some(w) => {
                                w.before = None;
                                w.after = None;
                                w.seen.clear();
                                self.tick(w)?;
                                self.button_down(b)?;
                                self.tick(w)?;
                                self.await_press_read(w)?;
                            }
                            None => {
                                self.button_down(b)?;
                                self.x.conn.flush()?;
                                if !sleep_until(Instant::now() + CLICK_HOLD, self.cancelled) {
                                    return Err(cancelled_error("cancelled during a click".to_string()));
                                }
                            }
                        }
                        self.button_up(b)?;
                    }
                    Ok(())
                })();
                if let Some(w) = watch {
                    self.unwatch(w);
                }
                presses?;
                for &m in mods.iter().rev() {
                    self.key_up(m)?;
                }
                Ok(())
            }
            InputStep::Key { key, down } => {
                let p = self.plan(keys::key_to_keysym(key)?)?;
                if *down {
                    self.checkpoint("a key press")?;
                    self.check_focus()?;
                    if p.shift {
                        let s = self.shift()?;
                        self.key_down(s)?;
                    }
                    self.key_down(p.keycode)
                } else {
                    self.key_up(p.keycode)?;
                    if p.shift {
                        let s = self.shift()?;
                        if self.held_keys.contains(&s) {
                            self.key_up(s)?;
                        }
                    }
                    Ok(())
                }
            }
            InputStep::Tap { keys: names, repeat } => {
                let mut plans = Vec::new();
                for n in names {
                    let ks = keys::key_to_keysym(n)?;
                    plans.push(self.plan(ks)?);
                }
                let need_shift = plans.iter().any(|p| p.shift);
                let shift = if need_shift { Some(self.shift()?) } else { None };
                for _ in 0..(*repeat).max(1) {
                    self.checkpoint("a tap")?;
                    self.check_focus()?;
                    if let Some(s) = shift {
                        self.key_down(s)?;
                    }
                    for p in &plans {
                        self.key_down(p.keycode)?;
                    }
                    for p in plans.iter().rev() {
                        self.key_up(p.keycode)?;
                    }
                    if let Some(s) = shift {
                        self.key_up(s)?;
                    }
                    self.x.conn.flush()?;
                }
                Ok(())
            }
            InputStep::Type { text } => {
                let chars: Vec<char> = text.chars().collect();
                for chunk in chars.chunks(TYPE_CHUNK) {
                    self.checkpoint("typing")?;
                    self.check_focus()?;
                    for &c in chunk {
                        let p = self.plan(keys::char_keysym(c))?;
                        if p.remapped {
                            // The remap waited for clients to see the new
                            // keymap: look again right before sending.
                            self.check_focus()?;
                        }
                        self.stroke(p)?;
                        self.chars_sent += 1;
                    }
                    self.x.conn.flush()?;
                }
                Ok(())
            }
            InputStep::Scroll { x, y, dx, dy } => {
                if let (Some(x), Some(y)) = (x, y) {
                    self.check_point(*x, *y)?;
                    self.motion(*x, *y)?;
                }
                // Each notch is a press + release of button 4-7, checked
                // (with the guard) before the press, at the pointer's position.
                let (vb, hb) = (if *dy > 0 { 5 } else { 4 }, if *dx > 0 { 7 } else { 6 });
                let notches = std::iter::repeat_n(vb, dy.unsigned_abs().min(1000) as usize).chain(std::iter::repeat_n(hb, dx.unsigned_abs().min(1000) as usize));
                for b in notches {
                    self.checkpoint("a scroll")?;
                    self.check_here()?;
                    self.button_down(b)?;
                    self.button_up(b)?;
                }
                Ok(())
            }
            InputStep::Wait { ms } => {
                self.x.conn.flush()?;
                let until = Instant::now() + Duration::from_millis(*ms as u64);
                if until > deadline {
                    return Err(Error::timeout(format!("a wait of {ms} ms would pass the deadline")));
                }
                if !sleep_until(until, self.cancelled) {
                    return Err(cancelled_error(format!("cancelled during a wait of {ms} ms")));
                }
                Ok(())
            }
        }
    }
}

/// A step that panicked (a bug) unwinds through here: whatever is still
/// held is released and the keymap restored, as `run`'s cleanup would have
/// (which empties these lists, so normally this does nothing).
impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.held_keys.is_empty() && self.held_buttons.is_empty() && self.remapped.is_empty() {
            return;
        }
        while let Some(kc) = self.held_keys.pop() {
            let _ = self.fake(KEY_RELEASE_EVENT, kc, 0, 0);
        }
        while let Some(b) = self.held_buttons.pop() {
            let _ = self.fake(BUTTON_RELEASE_EVENT, b, 0, 0);
        }
        let per = self.keymap.as_ref().map(|k| k.per_keycode).unwrap_or(1).max(1);
        for kc in std::mem::take(&mut self.remapped) {
            let _ = self.x.conn.change_keyboard_mapping(1, kc, per, &vec![0u32; per as usize]);
        }
        let _ = self.x.sync();
    }
}

/// Debug switch DECKHAND_DEBUG_PANIC_AT_STEP=N: panic before step N, to
/// check live that a bug in a step still releases what the op holds (the
/// Session's Drop) and that the worker survives.
pub fn debug_panic_at() -> Option<usize> {
    static AT: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *AT.get_or_init(|| std::env::var("DECKHAND_DEBUG_PANIC_AT_STEP").ok().and_then(|v| v.parse().ok()))
}

/// Check every key name before anything is sent (INVALID_ARGUMENTS otherwise).
pub fn validate(steps: &[InputStep]) -> Result<()> {
    for (i, s) in steps.iter().enumerate() {
        let names: Vec<&String> = match s {
            InputStep::Click { modifiers, .. } => modifiers.iter().collect(),
            InputStep::Key { key, .. } => vec![key],
            InputStep::Tap { keys, .. } => keys.iter().collect(),
            _ => vec![],
        };
        for n in names {
            keys::key_to_keysym(n).map_err(|e| e.with("step", i as i64))?;
        }
        if let InputStep::Click { count, .. } = s {
            if !(1..=3).contains(count) {
                return Err(Error::invalid("click count must be 1-3").with("step", i as i64));
            }
        }
        if let InputStep::Tap { keys, repeat } = s {
            if keys.is_empty() || !(1..=100).contains(repeat) {
                return Err(Error::invalid("tap needs 1+ keys and repeat 1-100").with("step", i as i64));
            }
        }
        if let InputStep::Wait { ms } = s {
            if *ms > 10_000 {
                return Err(Error::invalid("wait is at most 10000 ms").with("step", i as i64));
            }
        }
    }
    Ok(())
}

pub fn run(
    x: &mut X,
    steps: &[InputStep],
    restore_pointer: bool,
    guard: Option<FocusGuard>,
    pointer_guard: Option<PointerGuard>,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> Outcome {
    let none_cleanup = Cleanup { keys_released: true, buttons_released: true, pointer_restored: None };
    if x.ext.xtest.is_none() {
        return Outcome {
            steps_completed: 0,
            anything_sent: false,
            chars_sent: 0,
            focus_window: None,
            error: Some(Error::new(Code::PermissionDenied, "the X server has no XTEST extension")),
            cleanup: none_cleanup,
        };
    }
    let origin = x.conn.query_pointer(x.root).ok().and_then(|c| c.reply().ok()).map(|r| (r.root_x, r.root_y));
    let mut s = Session {
        x,
        deadline,
        cancelled,
        guard,
        guard_checked: false,
        focus_window: None,
        pointer_guard,
        pointer_cache: pointer::Cache::default(),
        chars_sent: 0,
        keymap: None,
        held_keys: Vec::new(),
        held_buttons: Vec::new(),
        remapped: Vec::new(),
        next_spare: 0,
        moved: false,
        sent: false,
        shift_kc: None,
        last_press: None,
    };
    let mut completed = 0u32;
    let mut error = None;
    for (i, step) in steps.iter().enumerate() {
        if cancelled() {
            error = Some(cancelled_error(format!("cancelled before step {i}")).with("step", i as i64));
            break;
        }
        if Instant::now() >= deadline {
            error = Some(Error::timeout(format!("deadline reached before step {i}")).with("step", i as i64));
            break;
        }
        if debug_panic_at() == Some(i) {
            panic!("DECKHAND_DEBUG_PANIC_AT_STEP={i}: deliberate panic (checks that held keys and buttons are released)");
        }
        match s.step(step).and_then(|_| s.x.conn.flush().map_err(Error::from)) {
            Ok(()) => completed += 1,
            Err(e) => {
                error = Some(e.with("step", i as i64));
                break;
            }
        }
    }

    // Cleanup, always: keys (reverse order), buttons, keymap, pointer, sync.
    let mut keys_ok = true;
    while let Some(&kc) = s.held_keys.last() {
        if s.key_up(kc).is_err() {
            keys_ok = false;
            s.held_keys.pop();
        }
    }
    let mut buttons_ok = true;
    while let Some(&b) = s.held_buttons.last() {
        if s.button_up(b).is_err() {
            buttons_ok = false;
            s.held_buttons.pop();
        }
    }
    if !s.remapped.is_empty() {
        let _ = s.x.sync();
        std::thread::sleep(Duration::from_millis(30));
        let per = s.keymap.as_ref().map(|k| k.per_keycode).unwrap_or(1).max(1);
        for kc in std::mem::take(&mut s.remapped) {
            let _ = s.x.conn.change_keyboard_mapping(1, kc, per, &vec![0u32; per as usize]);
        }
    }
    let pointer_restored = if s.moved {
        if restore_pointer {
            match origin {
                Some((ox, oy)) => Some(s.motion(ox as i32, oy as i32).is_ok()),
                None => Some(false),
            }
        } else {
            Some(false)
        }
    } else {
        None
    };
    let synced = s.x.sync().is_ok();
    // Events a click's watch let in (this connection selects none otherwise).
    while let Ok(Some(_)) = s.x.conn.poll_for_event() {}
    let sent = s.sent;
    Outcome {
        steps_completed: completed,
        anything_sent: sent,
        chars_sent: s.chars_sent,
        focus_window: s.focus_window,
        error,
        cleanup: Cleanup {
            keys_released: keys_ok && synced,
            buttons_released: buttons_ok && synced,
            pointer_restored: pointer_restored.map(|r| r && synced),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn only_a_user_time_between_the_ticks_is_the_press_s_reading() {
        assert!(between(1005, 1000, 1010));
        assert!(between(1000, 1000, 1000), "the press in the same millisecond as both ticks");
        assert!(!between(999, 1000, 1010), "an earlier event's late update");
        assert!(!between(1011, 1000, 1010));
        // Across the wrap of the 32-bit millisecond clock.
        assert!(between(2, u32::MAX - 3, 5));
        assert!(!between(u32::MAX - 10, u32::MAX - 3, 5));
    }

    #[test]
    fn sleep_until_is_cut_short_by_a_cancel() {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            f.store(true, Ordering::Relaxed);
        });
        let t0 = Instant::now();
        let finished = sleep_until(t0 + Duration::from_secs(3), &|| flag.load(Ordering::Relaxed));
        let took = t0.elapsed();
        t.join().unwrap();
        assert!(!finished, "reported as finished");
        assert!(took >= Duration::from_millis(30) && took < Duration::from_millis(200), "took {took:?}");
        assert!(sleep_until(Instant::now() + Duration::from_millis(15), &|| false));
    }
}
