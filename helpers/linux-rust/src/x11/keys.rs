//! Key names -> X keysyms (xdotool-style names plus the XStringToKeysym
//! table), characters -> keysyms, and the server's keymap (keysym -> keycode
//! and shift level).

#[path = "keysym_table.rs"]
mod keysym_table;

use crate::error::{Error, Result};
use std::collections::HashMap;
use x11rb::protocol::xproto::ConnectionExt as _;

pub const XK_SHIFT_L: u32 = 0xffe1;
pub const XK_CONTROL_L: u32 = 0xffe3;
pub const XK_ALT_L: u32 = 0xffe9;
pub const XK_SUPER_L: u32 = 0xffeb;
pub const XK_ISO_LEVEL3_SHIFT: u32 = 0xfe03;

/// xdotool-style aliases (matched case-insensitively).
const ALIASES: &[(&str, u32)] = &[
    ("ctrl", XK_CONTROL_L),
    ("control", XK_CONTROL_L),
    ("alt", XK_ALT_L),
    ("option", XK_ALT_L),
    ("shift", XK_SHIFT_L),
    ("super", XK_SUPER_L),
    ("meta", XK_SUPER_L),
    ("cmd", XK_SUPER_L),
    ("command", XK_SUPER_L),
    ("win", XK_SUPER_L),
    ("windows", XK_SUPER_L),
    ("return", 0xff0d),
    ("enter", 0xff0d),
    ("backspace", 0xff08),
    ("tab", 0xff09),
    ("escape", 0xff1b),
    ("esc", 0xff1b),
    ("delete", 0xffff),
    ("del", 0xffff),
    ("insert", 0xff63),
    ("ins", 0xff63),
    ("home", 0xff50),
    ("end", 0xff57),
    ("page_up", 0xff55),
    ("pageup", 0xff55),
    ("pgup", 0xff55),
    ("prior", 0xff55),
    ("page_down", 0xff56),
    ("pagedown", 0xff56),
    ("pgdn", 0xff56),
    ("next", 0xff56),
    ("up", 0xff52),
    ("down", 0xff54),
    ("left", 0xff51),
    ("right", 0xff53),
    ("space", 0x20),
    ("menu", 0xff67),
    ("capslock", 0xffe5),
    ("caps_lock", 0xffe5),
    ("numlock", 0xff7f),
    ("printscreen", 0xff61),
    ("print", 0xff61),
    ("pause", 0xff13),
    ("scrolllock", 0xff14),
];

/// Keysym for one character (X's Latin-1 identity range, else the Unicode
/// keysym range 0x01000000 + code point).
pub fn char_keysym(c: char) -> u32 {
    let cp = c as u32;
    match c {
        '\n' | '\r' => 0xff0d,
        '\t' => 0xff09,
        '\u{8}' => 0xff08,
        '\u{1b}' => 0xff1b,
        _ if (0x20..=0x7e).contains(&cp) || (0xa0..=0xff).contains(&cp) => cp,
        _ => 0x0100_0000 + cp,
    }
}

/// XStringToKeysym for a name in the embedded table.
pub fn string_to_keysym(name: &str) -> Option<u32> {
    let t = keysym_table::KEYSYMS;
    t.binary_search_by(|(n, _)| (*n).cmp(name)).ok().map(|i| t[i].1)
}

/// Resolve a key name: alias, F1-F35, exact keysym name, a single character,
/// U+XXXX, 0xXXXX, or a keysym name differing only in case.
pub fn key_to_keysym(name: &str) -> Result<u32> {
    if name.is_empty() {
        return Err(Error::invalid("empty key name"));
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Ok(char_keysym(c));
    }
    let lower = name.to_ascii_lowercase();
    if let Some((_, ks)) = ALIASES.iter().find(|(a, _)| *a == lower) {
        return Ok(*ks);
    }
    if let Some(n) = lower.strip_prefix('f').and_then(|d| d.parse::<u32>().ok()) {
        if (1..=35).contains(&n) {
            return Ok(0xffbe + n - 1);
        }
    }
    if let Some(ks) = string_to_keysym(name) {
        return Ok(ks);
    }
    if let Some(hex) = name.strip_prefix("U+").or_else(|| name.strip_prefix("u+")) {
        if let Some(c) = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32) {
            return Ok(char_keysym(c));
        }
    }
    if let Some(hex) = lower.strip_prefix("0x") {
        if let Ok(v) = u32::from_str_radix(hex, 16) {
            return Ok(v);
        }
    }
    if let Some((_, ks)) = keysym_table::KEYSYMS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        return Ok(*ks);
    }
    Err(Error::invalid(format!("unknown key name {name:?}")).with("key", name))
}

/// Whether a keysym is a modifier (Shift, Control, Alt, Super, ...).
pub fn is_modifier(ks: u32) -> bool {
    (0xffe1..=0xffee).contains(&ks) || ks == XK_ISO_LEVEL3_SHIFT
}

/// The server keymap: which keycode (and shift level) produces a keysym.
#[derive(Debug, Clone)]
pub struct Keymap {
    pub per_keycode: u8,
    /// keysym -> (keycode, level); lowest level wins.
    pub by_sym: HashMap<u32, (u8, u8)>,
    /// Keycodes with no keysym at all (usable for temporary remapping).
    pub spare: Vec<u8>,
}

impl Keymap {
    pub fn from_mapping(min_keycode: u8, per_keycode: u8, keysyms: &[u32]) -> Keymap {
        let mut by_sym: HashMap<u32, (u8, u8)> = HashMap::new();
        let mut spare = Vec::new();
        let per = per_keycode.max(1) as usize;
        for (i, syms) in keysyms.chunks(per).enumerate() {
            let kc = min_keycode as usize + i;
            if kc > 255 {
                break;
            }
            let kc = kc as u8;
            if syms.iter().all(|&s| s == 0) {
                spare.push(kc);
                continue;
            }
            // Levels 0 and 1 of group 1; a lone keysym stands for both cases.
            for (level, &s) in syms.iter().enumerate().take(per.min(2)) {
                if s == 0 {
                    continue;
                }
                let e = by_sym.entry(s).or_insert((kc, level as u8));
                if e.1 > level as u8 {
                    *e = (kc, level as u8);
                }
            }
            if per >= 2 && syms[1] == 0 && syms[0] != 0 {
                // e.g. letters listed once: the upper case needs Shift.
                let (lo, up) = case_pair(syms[0]);
                if lo == syms[0] && up != lo {
                    by_sym.entry(up).or_insert((kc, 1));
                }
            }
        }
        Keymap { per_keycode, by_sym, spare }
    }

    pub fn load(conn: &x11rb::rust_connection::RustConnection) -> Result<Keymap> {
        use x11rb::connection::Connection;
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let r = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
        Ok(Keymap::from_mapping(min, r.keysyms_per_keycode, &r.keysyms))
    }

    pub fn lookup(&self, ks: u32) -> Option<(u8, u8)> {
        self.by_sym.get(&ks).copied()
    }
}

/// Latin letters: (lower, upper) keysyms.
fn case_pair(ks: u32) -> (u32, u32) {
    match ks {
        0x61..=0x7a => (ks, ks - 0x20),
        0x41..=0x5a => (ks + 0x20, ks),
        0xe0..=0xfe if ks != 0xf7 => (ks, ks - 0x20),
        0xc0..=0xde if ks != 0xd7 => (ks + 0x20, ks),
        _ => (ks, ks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_names() {
        assert_eq!(key_to_keysym("ctrl").unwrap(), XK_CONTROL_L);
        assert_eq!(key_to_keysym("Control").unwrap(), XK_CONTROL_L);
        assert_eq!(key_to_keysym("cmd").unwrap(), XK_SUPER_L);
        assert_eq!(key_to_keysym("Return").unwrap(), 0xff0d);
        assert_eq!(key_to_keysym("enter").unwrap(), 0xff0d);
        assert_eq!(key_to_keysym("BackSpace").unwrap(), 0xff08);
        assert_eq!(key_to_keysym("Page_Down").unwrap(), 0xff56);
        assert_eq!(key_to_keysym("F1").unwrap(), 0xffbe);
        assert_eq!(key_to_keysym("F24").unwrap(), 0xffbe + 23);
        assert_eq!(key_to_keysym("space").unwrap(), 0x20);
        assert_eq!(key_to_keysym("a").unwrap(), 0x61);
        assert_eq!(key_to_keysym("A").unwrap(), 0x41);
        assert_eq!(key_to_keysym("é").unwrap(), 0xe9);
        assert_eq!(key_to_keysym("€").unwrap(), 0x0100_20ac);
        assert_eq!(key_to_keysym("EuroSign").unwrap(), 0x20ac);
        assert_eq!(key_to_keysym("KP_Enter").unwrap(), 0xff8d);
        assert_eq!(key_to_keysym("XF86AudioMute").unwrap(), 0x1008ff12);
        assert_eq!(key_to_keysym("semicolon").unwrap(), 0x3b);
        assert_eq!(key_to_keysym("U+20AC").unwrap(), 0x0100_20ac);
        assert_eq!(key_to_keysym("Iso_left_tab").unwrap(), 0xfe20);
        assert!(key_to_keysym("NoSuchKeyAtAll").is_err());
        assert!(key_to_keysym("").is_err());
    }

    #[test]
    fn table_is_sorted_for_binary_search() {
        let t = keysym_table::KEYSYMS;
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(t.len() > 1000);
    }

    #[test]
    fn chars() {
        assert_eq!(char_keysym('\n'), 0xff0d);
        assert_eq!(char_keysym(' '), 0x20);
        assert_eq!(char_keysym('ß'), 0xdf);
        assert_eq!(char_keysym('Ж'), 0x0100_0416);
    }

    #[test]
    fn keymap_levels_and_spares() {
        // keycode 10: a A ; keycode 11: 1 exclam ; keycode 12: nothing; keycode 13: b (alone)
        let syms = [0x61, 0x41, 0x31, 0x21, 0, 0, 0x62, 0];
        let k = Keymap::from_mapping(10, 2, &syms);
        assert_eq!(k.lookup(0x61), Some((10, 0)));
        assert_eq!(k.lookup(0x41), Some((10, 1)));
        assert_eq!(k.lookup(0x21), Some((11, 1)));
        assert_eq!(k.lookup(0x42), Some((13, 1)));
        assert_eq!(k.spare, vec![12]);
        assert!(is_modifier(XK_SHIFT_L) && !is_modifier(0x61));
    }
}
