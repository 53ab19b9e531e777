//! Foreground input on sway: the `input` op's steps sent through the
//! helper's virtual keyboard and pointer (`devices`), with the X11 path's
//! rules (x11/input.rs): every key and button pressed is tracked and
//! released at the end, even when a step fails (and by the session's Drop
//! should a step panic); the compositor has processed everything before we
//! answer (a round trip); the focus guard before every keyboard send, the
//! pointer guard (`guard`) before every pointer event.
//!
//! Runs on the input worker thread, which owns the devices (a thread-local:
//! the worker runs its jobs one at a time on one thread, so two ops never
//! mix their events).
//!
//! The pointer cannot be put back: Wayland gives a client no way to read
//! where the pointer is (sway 1.7's IPC neither: get_seats has no cursor).
//! A pointer the op moved is reported `pointer_restored: false`, asked or
//! not. Where a button step or scroll without a point happens is where this
//! helper last put the pointer (another device moving it is not seen).

use super::devices::{self, Devices};
use super::guard;
use crate::error::{Code, Error, Result};
use crate::wire::messages::{Button, Cleanup, FocusGuard, InputStep, PointerGuard, Rect};
use crate::x11::input::{cancelled_error, guard_focus, sleep_until, Outcome, TYPE_CHUNK};
use crate::x11::keys;
use std::cell::RefCell;
use std::time::{Duration, Instant};

thread_local! {
    /// The devices, created on first use by the input worker thread.
    static DEVICES: RefCell<Option<Devices>> = const { RefCell::new(None) };
    /// Where this helper last put the pointer (kept across ops).
    static POINTER_AT: RefCell<Option<(i32, i32)>> = const { RefCell::new(None) };
}

/// How long a click holds its button. The X11 path holds until the app has
/// read the press (its _NET_WM_USER_TIME); Wayland has nothing a client
/// could watch for that, so the hold is fixed: xdotool's 12 ms, which the
/// X11 measurements found enough for GTK 3 / GTK 4 / Qt to take press and
/// release as a click rather than one burst (x11/input.rs CLICK_HOLD).
const CLICK_HOLD: Duration = Duration::from_millis(12);

/// How long keys wait after a new keymap was sent (see `Session::map`).
const KEYMAP_SETTLE: Duration = Duration::from_millis(30);

/// The least time one typed character takes on Wayland. The X server keeps
/// what a slow client has not read yet; a Wayland compositor's buffer for a
/// client is bounded, and a burst of keys queued faster than the app reads
/// them (seen: 2000 keys from two type steps back to back into a GTK 3 entry
/// with accessibility on) ends with the app losing its connection ("Lost
/// connection to Wayland compositor"). So a type step is paced: each chunk
/// of TYPE_CHUNK keys takes at least this long per character (250 a
/// second). 2 ms (500 a second) held for one helper typing, but two helpers
/// typing at once into the same fixture (1000 a second between them) lost
/// it again after 1217 characters (1 run of 5).
const TYPE_PACE: Duration = Duration::from_millis(4);

/// When the chunk started at `start` with `len` characters may be followed by the next.
fn paced_until(start: Instant, len: usize) -> Instant {
    start + TYPE_PACE * len as u32
}

/// How long a keyboard step after a click waits for sway to move the focus
/// to the clicked view (sway does so as it handles the press).
const SETTLE_FOCUS: Duration = Duration::from_millis(200);

fn button_code(b: Button) -> u32 {
    match b {
        Button::Left => devices::BTN_LEFT,
        Button::Right => devices::BTN_RIGHT,
        Button::Middle => devices::BTN_MIDDLE,
        Button::Back => devices::BTN_SIDE,
        Button::Forward => devices::BTN_EXTRA,
    }
}

/// Every keysym the steps may press, in order of first use.
fn keysyms_of(steps: &[InputStep]) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    let mut add = |ks: u32| {
        if !out.contains(&ks) {
            out.push(ks);
        }
    };
    for s in steps {
        match s {
            InputStep::Click { modifiers, .. } => modifiers.iter().filter_map(|m| keys::key_to_keysym(m).ok()).for_each(&mut add),
            InputStep::Key { key, .. } => keys::key_to_keysym(key).into_iter().for_each(&mut add),
            InputStep::Tap { keys: names, .. } => names.iter().filter_map(|m| keys::key_to_keysym(m).ok()).for_each(&mut add),
            InputStep::Type { text } => text.chars().map(keys::char_keysym).for_each(&mut add),
            _ => {}
        }
    }
    out
}

struct Session<'a> {
    dev: &'a mut Devices,
    sock: &'a str,
    deadline: Instant,
    cancelled: &'a dyn Fn() -> bool,
    guard: Option<FocusGuard>,
    guard_checked: bool,
    focus_window: Option<u32>,
    pointer_guard: Option<PointerGuard>,
    /// The output layout's bounding box, read at the first pointer event.
    layout: Option<Rect>,
    chars_sent: u32,
    /// (keycode, keysym) of keys down, in press order.
    held_keys: Vec<(u32, u32)>,
    held_buttons: Vec<u32>,
    moved: bool,
    sent: bool,
    /// Where a button was last pressed, until a keyboard step waited for
    /// sway to move the focus there.
    last_press: Option<(i32, i32)>,
}

impl Session<'_> {
    fn mods(&self) -> u32 {
        self.held_keys.iter().fold(0, |m, &(_, ks)| m | super::keymap::modifier_mask(ks))
    }

    /// The keycode of a keysym, the keymap extended (and sent) if needed.
    fn keycode(&mut self, keysym: u32) -> Result<u32> {
        if let Some(kc) = self.dev.keymap.keycode(keysym) {
            return Ok(kc);
        }
        self.map(&[keysym])?;
        self.dev.keymap.keycode(keysym).ok_or_else(|| Error::internal("keysym not mapped"))
    }

    /// Give every keysym of `need` a key; a changed keymap is sent to the
    /// compositor (its clients get it before any later key), and the held
    /// modifiers again (a new keymap starts with none).
    fn map(&mut self, need: &[u32]) -> Result<()> {
        let keep: Vec<u32> = self.held_keys.iter().map(|&(_, ks)| ks).collect();
        if !self.dev.keymap.ensure(need, &keep) {
            return Err(Error::new(Code::ActionFailed, format!("{} different keys at once do not fit one keymap", need.len())));
        }
        if self.dev.keymap.changed() {
            self.dev.upload_keymap()?;
            self.dev.resend_modifiers(self.mods())?;
            // Clients then rebuild what they derive from the keymap: the
            // compositor has it all, then a moment, as X11 gives after a
            // remap. (GTK 3's key bindings missed a named key sent right
            // behind the keymap adding it: the common named keys are in the
            // base keymap, keymap::base, and never come this way.)
            self.dev.sync(self.deadline)?;
            if !sleep_until(Instant::now() + KEYMAP_SETTLE, self.cancelled) {
                return Err(cancelled_error("cancelled while the keymap changed".into()));
            }
        }
        Ok(())
    }

    fn key_down(&mut self, keysym: u32) -> Result<()> {
        let kc = self.keycode(keysym)?;
        if !self.held_keys.iter().any(|&(k, _)| k == kc) {
            self.held_keys.push((kc, keysym));
        }
        self.sent = true;
        self.dev.key(kc, true)?;
        let m = self.mods();
        self.dev.modifiers(m)
    }

    fn key_up(&mut self, keysym: u32) -> Result<()> {
        let kc = self.keycode(keysym)?;
        self.release_key(kc)
    }

    fn release_key(&mut self, kc: u32) -> Result<()> {
        self.dev.key(kc, false)?;
        self.held_keys.retain(|&(k, _)| k != kc);
        let m = self.mods();
        self.dev.modifiers(m)
    }

    fn button_down(&mut self, b: u32) -> Result<()> {
        if !self.held_buttons.contains(&b) {
            self.held_buttons.push(b);
        }
        self.sent = true;
        self.dev.button(b, true)
    }

    fn button_up(&mut self, b: u32) -> Result<()> {
        self.dev.button(b, false)?;
        self.held_buttons.retain(|&k| k != b);
        Ok(())
    }

    fn layout(&mut self) -> Result<Rect> {
        if let Some(l) = self.layout {
            return Ok(l);
        }
        let l = guard::layout(self.sock)?;
        self.layout = Some(l);
        Ok(l)
    }

    fn motion(&mut self, x: i32, y: i32) -> Result<()> {
        let layout = self.layout()?;
        self.moved = true;
        self.sent = true;
        self.dev.motion(x, y, layout)?;
        POINTER_AT.with(|p| *p.borrow_mut() = Some((x, y)));
        Ok(())
    }

    fn checkpoint(&self, what: &str) -> Result<()> {
        if (self.cancelled)() {
            return Err(cancelled_error(format!("cancelled during {what}")));
        }
        if Instant::now() >= self.deadline {
            return Err(Error::timeout(format!("deadline reached during {what}")));
        }
        Ok(())
    }

    /// The pointer guard before an event at (x, y).
    fn check_point(&mut self, x: i32, y: i32) -> Result<()> {
        let Some(g) = &self.pointer_guard else { return Ok(()) };
        guard::check_point(self.sock, g, x, y)
    }

    /// The pointer guard at the pointer's position (where this helper put it).
    fn check_here(&mut self) -> Result<()> {
        if self.pointer_guard.is_none() {
            return Ok(());
        }
        match POINTER_AT.with(|p| *p.borrow()) {
            Some((x, y)) => self.check_point(x, y),
            None => Err(Error::new(Code::PolicyDenied, "the pointer's position is unknown (Wayland lets no client read it, and this helper has not moved it): give the event a point")
                .with("reason", "pointer-position-unknown")),
        }
    }

    /// The focus guard before every keyboard send; activation (sway's
    /// focus command) only at the op's first check, as on X11.
    fn check_focus(&mut self) -> Result<()> {
        let Some(g) = self.guard else { return Ok(()) };
        let first = !self.guard_checked;
        self.guard_checked = true;
        let (sock, cancelled) = (self.sock, self.cancelled);
        let seen = guard_focus(&g, first, self.deadline, cancelled, || guard::observe_focus(sock, &g), |until| guard::activate_and_wait(sock, &g, until, cancelled))?;
        self.focus_window = Some(seen.window);
        Ok(())
    }

    /// After a click, keyboard input waits until sway has given the focus
    /// to the clicked view, or the keys would land in the one focused before.
    fn settle_focus(&mut self) {
        let Some((px, py)) = self.last_press.take() else { return };
        if self.dev.sync(self.deadline).is_err() {
            return;
        }
        let Ok(Some(target)) = guard::view_at(self.sock, px, py) else { return };
        let until = (Instant::now() + SETTLE_FOCUS).min(self.deadline);
        while Instant::now() < until {
            if guard::focused(self.sock).ok().flatten().map(|v| v.con_id) == Some(target.con_id) {
                return;
            }
            if !sleep_until(Instant::now() + Duration::from_millis(5), self.cancelled) {
                return;
            }
        }
    }

    fn step(&mut self, step: &InputStep) -> Result<()> {
        match step {
            InputStep::Key { .. } | InputStep::Tap { .. } | InputStep::Type { .. } => self.settle_focus(),
            InputStep::Click { x, y, .. } => self.last_press = Some((*x, *y)),
            InputStep::Button { down: true, .. } => self.last_press = POINTER_AT.with(|p| *p.borrow()),
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
                    self.button_down(button_code(*button))
                } else {
                    self.button_up(button_code(*button))
                }
            }
            InputStep::Click { x, y, button, count, modifiers } => {
                let mods: Vec<u32> = modifiers.iter().map(|m| keys::key_to_keysym(m)).collect::<Result<_>>()?;
                self.map(&mods)?;
                self.check_point(*x, *y)?;
                self.motion(*x, *y)?;
                for &m in &mods {
                    self.key_down(m)?;
                }
                let b = button_code(*button);
                for _ in 0..(*count).clamp(1, 3) {
                    self.check_here()?;
                    self.button_down(b)?;
                    if !sleep_until(Instant::now() + CLICK_HOLD, self.cancelled) {
                        return Err(cancelled_error("cancelled during a click".to_string()));
                    }
                    self.button_up(b)?;
                }
                for &m in mods.iter().rev() {
                    self.key_up(m)?;
                }
                Ok(())
            }
            InputStep::Key { key, down } => {
                let ks = keys::key_to_keysym(key)?;
                if *down {
                    self.checkpoint("a key press")?;
                    self.check_focus()?;
                    self.key_down(ks)
                } else {
                    self.key_up(ks)
                }
            }
            InputStep::Tap { keys: names, repeat } => {
                let syms: Vec<u32> = names.iter().map(|n| keys::key_to_keysym(n)).collect::<Result<_>>()?;
                self.map(&syms)?;
                for _ in 0..(*repeat).max(1) {
                    self.checkpoint("a tap")?;
                    self.check_focus()?;
                    for &ks in &syms {
                        self.key_down(ks)?;
                    }
                    for &ks in syms.iter().rev() {
                        self.key_up(ks)?;
                    }
                }
                Ok(())
            }
            InputStep::Type { text } => {
                let chars: Vec<char> = text.chars().collect();
                for (i, chunk) in chars.chunks(TYPE_CHUNK).enumerate() {
                    let start = Instant::now();
                    let syms: Vec<u32> = chunk.iter().map(|&c| keys::char_keysym(c)).collect();
                    // A new keymap first (it reaches the clients before the keys).
                    self.map(&syms)?;
                    self.checkpoint("typing")?;
                    self.check_focus()?;
                    for ks in syms {
                        self.key_down(ks)?;
                        self.key_up(ks)?;
                        self.chars_sent += 1;
                    }
                    // Paced (TYPE_PACE), but no wait after the last chunk.
                    if (i + 1) * TYPE_CHUNK < chars.len() && !sleep_until(paced_until(start, chunk.len()).min(self.deadline), self.cancelled) {
                        return Err(cancelled_error("cancelled while typing".to_string()));
                    }
                }
                Ok(())
            }
            InputStep::Scroll { x, y, dx, dy } => {
                if let (Some(x), Some(y)) = (x, y) {
                    self.check_point(*x, *y)?;
                    self.motion(*x, *y)?;
                }
                // Each notch checked (with the guard) at the pointer's position.
                let v = std::iter::repeat_n((0u32, dy.signum()), dy.unsigned_abs().min(1000) as usize);
                let h = std::iter::repeat_n((1u32, dx.signum()), dx.unsigned_abs().min(1000) as usize);
                for (axis, dir) in v.chain(h) {
                    self.checkpoint("a scroll")?;
                    self.check_here()?;
                    self.sent = true;
                    self.dev.notch(axis, dir)?;
                }
                Ok(())
            }
            InputStep::Wait { ms } => {
                let until = Instant::now() + Duration::from_millis(*ms as u64);
                if until > self.deadline {
                    return Err(Error::timeout(format!("a wait of {ms} ms would pass the deadline")));
                }
                if !sleep_until(until, self.cancelled) {
                    return Err(cancelled_error(format!("cancelled during a wait of {ms} ms")));
                }
                Ok(())
            }
        }
    }

    /// Release everything held (keys in reverse order, then buttons) and
    /// clear the modifiers; whether each kind went out.
    fn release_all(&mut self) -> (bool, bool) {
        let mut keys_ok = true;
        while let Some(&(kc, _)) = self.held_keys.last() {
            if self.release_key(kc).is_err() {
                keys_ok = false;
                self.held_keys.pop();
            }
        }
        keys_ok &= self.dev.modifiers(0).is_ok();
        let mut buttons_ok = true;
        while let Some(&b) = self.held_buttons.last() {
            if self.button_up(b).is_err() {
                buttons_ok = false;
                self.held_buttons.pop();
            }
        }
        (keys_ok, buttons_ok)
    }
}

/// A step that panicked (a bug) unwinds through here: whatever is still
/// held is released, as `run`'s cleanup would have (which empties the
/// lists, so normally this does nothing).
impl Drop for Session<'_> {
    fn drop(&mut self) {
        if self.held_keys.is_empty() && self.held_buttons.is_empty() {
            return;
        }
        let _ = self.release_all();
        let _ = self.dev.sync(Instant::now() + Duration::from_millis(500));
    }
}

/// Run validated steps (x11::input::validate) on sway. `sock`: $SWAYSOCK.
pub fn run(
    sock: &str,
    steps: &[InputStep],
    guard: Option<FocusGuard>,
    pointer_guard: Option<PointerGuard>,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> Outcome {
    DEVICES.with(|slot| {
        let mut slot = slot.borrow_mut();
        if slot.is_none() {
            match Devices::create(deadline) {
                Ok(d) => *slot = Some(d),
                Err(e) => return Outcome::not_started(e),
            }
        }
        let dev = slot.as_mut().expect("created above");
        // Once per helper: the clients bind to the new devices first.
        if !sleep_until((dev.created + devices::CLIENTS_BIND).min(deadline), cancelled) {
            return Outcome::not_started(cancelled_error("cancelled before step 0".into()));
        }
        let o = run_on(dev, sock, steps, guard, pointer_guard, deadline, cancelled);
        if o.error.as_ref().is_some_and(|e| e.message.starts_with("Wayland")) || !o.cleanup.keys_released {
            *slot = None; // the connection broke: new devices next time
        }
        o
    })
}

fn run_on(
    dev: &mut Devices,
    sock: &str,
    steps: &[InputStep],
    guard: Option<FocusGuard>,
    pointer_guard: Option<PointerGuard>,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> Outcome {
    let mut s = Session {
        dev,
        sock,
        deadline,
        cancelled,
        guard,
        guard_checked: false,
        focus_window: None,
        pointer_guard,
        layout: None,
        chars_sent: 0,
        held_keys: Vec::new(),
        held_buttons: Vec::new(),
        moved: false,
        sent: false,
        last_press: None,
    };
    let mut completed = 0u32;
    // The whole op's keys in one keymap when they fit: one upload, before
    // anything is sent (when they do not, each step maps its own; a broken
    // connection shows at the first step).
    let _ = s.map(&keysyms_of(steps));
    let mut error = None;
    {
        for (i, step) in steps.iter().enumerate() {
            if cancelled() {
                error = Some(cancelled_error(format!("cancelled before step {i}")).with("step", i as i64));
                break;
            }
            if Instant::now() >= deadline {
                error = Some(Error::timeout(format!("deadline reached before step {i}")).with("step", i as i64));
                break;
            }
            if crate::x11::input::debug_panic_at() == Some(i) {
                panic!("DECKHAND_DEBUG_PANIC_AT_STEP={i}: deliberate panic (checks that held keys and buttons are released)");
            }
            match s.step(step) {
                Ok(()) => completed += 1,
                Err(e) => {
                    error = Some(e.with("step", i as i64));
                    break;
                }
            }
        }
    }
    let (keys_ok, buttons_ok) = s.release_all();
    let synced = s.dev.sync(Instant::now().max(deadline) + Duration::from_millis(500)).is_ok();
    Outcome {
        steps_completed: completed,
        anything_sent: s.sent,
        chars_sent: s.chars_sent,
        focus_window: s.focus_window,
        error,
        cleanup: Cleanup {
            keys_released: keys_ok && synced,
            buttons_released: buttons_ok && synced,
            // Never put back: Wayland lets no client read where it was.
            pointer_restored: s.moved.then_some(false),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_op_s_keysyms_are_gathered_once() {
        let steps = vec![
            InputStep::Type { text: "héllo Ω".into() },
            InputStep::Tap { keys: vec!["ctrl".into(), "a".into()], repeat: 2 },
            InputStep::Click { x: 1, y: 2, button: Button::Left, count: 1, modifiers: vec!["shift".into()] },
            InputStep::Key { key: "Return".into(), down: true },
        ];
        let k = keysyms_of(&steps);
        assert_eq!(k, vec![0x68, 0xe9, 0x6c, 0x6f, 0x20, 0x100_03a9, 0xffe3, 0x61, 0xffe1, 0xff0d]);
    }

    #[test]
    fn typing_is_paced_per_chunk() {
        // A chunk of 8 characters takes at least 32 ms: 1000 characters at least 4 s, not one burst.
        let t = Instant::now();
        assert_eq!(paced_until(t, TYPE_CHUNK) - t, Duration::from_millis(32));
        let total: Duration = (0..1000usize.div_ceil(TYPE_CHUNK)).map(|_| paced_until(t, TYPE_CHUNK) - t).sum();
        assert!(total >= Duration::from_secs(4), "{total:?}");
    }

    #[test]
    fn buttons_are_linux_codes() {
        assert_eq!(button_code(Button::Left), 0x110);
        assert_eq!(button_code(Button::Right), 0x111);
        assert_eq!(button_code(Button::Middle), 0x112);
    }
}
