// The one key-chord parser, shared by every front end (CLI --keys, serve and
// MCP args, program steps, the OpenAI / Anthropic adapters, the policy's
// closing-chord check). Key names come out xdotool-style: ctrl, alt, shift,
// super, Return, BackSpace, Page_Up, F5, plus, a, ...
//
// Chord grammar: key names joined by "+", blanks around names ignored. The
// "+" key itself is written "plus", or as a literal "+" where a key name
// goes: "ctrl++" and "ctrl+plus" are ctrl with plus, "+" alone is plus,
// "++ctrl" is plus with ctrl. A chord that is blank, ends in a separator
// ("ctrl+", "ctrl+++"), or has a blank inside a name ("ctrl+page up") is
// refused rather than guessed.
//
// Every spelling the helper accepts for a key (helpers/linux-rust/src/x11/
// keys.rs: aliases in any case, F1-F35 with or without leading zeros, X
// keysym names in any case, U+XXXX, 0xXXXX keysym numbers, one character)
// comes out under one canonical name for the keys the checks care about
// (modifiers, Return/Enter, space, Tab, arrows, the closing-chord keys): the
// names the checks see are the names the helper is sent. Decimal numbers are
// not keysyms to the helper (it refuses them), so they pass through as names.
import { DeckhandError } from "./errors.ts";

/** Lower-cased alias -> canonical xdotool name. */
const ALIASES: Record<string, string> = {
  ctrl: "ctrl",
  control: "ctrl",
  control_l: "ctrl",
  control_r: "ctrl",
  alt: "alt",
  option: "alt",
  alt_l: "alt",
  alt_r: "alt",
  shift: "shift",
  shift_l: "shift",
  shift_r: "shift",
  super: "super",
  super_l: "super",
  super_r: "super",
  meta: "super",
  cmd: "super",
  command: "super",
  win: "super",
  windows: "super",
  return: "Return",
  enter: "Return",
  esc: "Escape",
  escape: "Escape",
  backspace: "BackSpace",
  delete: "Delete",
  del: "Delete",
  tab: "Tab",
  space: "space",
  " ": "space",
  up: "Up",
  down: "Down",
  left: "Left",
  right: "Right",
  arrowup: "Up",
  arrowdown: "Down",
  arrowleft: "Left",
  arrowright: "Right",
  pageup: "Page_Up",
  page_up: "Page_Up",
  pgup: "Page_Up",
  prior: "Page_Up",
  pagedown: "Page_Down",
  page_down: "Page_Down",
  pgdn: "Page_Down",
  next: "Page_Down",
  home: "Home",
  end: "End",
  insert: "Insert",
  ins: "Insert",
  capslock: "Caps_Lock",
  caps_lock: "Caps_Lock",
  numlock: "Num_Lock",
  num_lock: "Num_Lock",
  scrolllock: "Scroll_Lock",
  scroll_lock: "Scroll_Lock",
  printscreen: "Print",
  print: "Print",
  pause: "Pause",
  menu: "Menu",
  contextmenu: "Menu",
  "+": "plus",
  plus: "plus",
  minus: "minus",
};

/** Canonical modifier names. */
export const MODIFIERS: ReadonlySet<string> = new Set(["ctrl", "alt", "shift", "super"]);

export interface KeyOptions {
  /** Fold a single upper-case letter (OpenAI writes ["CTRL", "S"] for ctrl+s; in xdotool "S" would mean shift+s). */
  lowerLetters?: boolean;
  /** The request field the keys came from, for error details (default "keys"). */
  field?: string;
}

function invalid(message: string, field: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message, { details: { field } });
}

/**
 * One key name -> canonical. Modifier and alias names are matched in any
 * case ("CTRL", "Shift", "ENTER"). Unknown multi-letter names pass through
 * unchanged: the helper knows the full keysym table and refuses what it does
 * not know.
 */
export function normalizeKey(name: string, opts: KeyOptions = {}): string {
  if (typeof name !== "string" || name.length === 0) {
    throw invalid("a key name must be a non-empty string", opts.field ?? "keys");
  }
  if ([...name].length === 1) {
    const special = CONTROL_CHAR_KEYS[name];
    if (special) return special;
    if (name === " ") return "space";
    if (name === "+") return "plus";
    return opts.lowerLetters && /^[A-Z]$/.test(name) ? name.toLowerCase() : name;
  }
  const lower = name.toLowerCase();
  const alias = ALIASES[lower];
  if (alias) return alias;
  const f = fKey(name);
  if (f !== null) return `F${f}`;
  const ks = keysymOf(name);
  if (ks !== null) {
    const canonical = keysymName(ks);
    if (canonical !== null) return canonical;
    // A keysym number deckhand has no name for: one spelling of it.
    if (/^0x/i.test(name)) return `0x${ks.toString(16)}`;
  }
  return name;
}

// ---------------------------------------------------------------- keysyms

/** Characters the helper types as keys rather than as themselves (its char_keysym). */
const CONTROL_CHAR_KEYS: Record<string, string> = { "\n": "Return", "\r": "Return", "\t": "Tab", "\b": "BackSpace", "\u001b": "Escape" };
const CONTROL_CHAR_KEYSYMS: Record<number, number> = { 0x0a: 0xff0d, 0x0d: 0xff0d, 0x09: 0xff09, 0x08: 0xff08, 0x1b: 0xff1b };

/**
 * X keysyms of the keys the policy checks care about, under their
 * XStringToKeysym names (the first name of a keysym is its canonical name
 * unless a modifier or ALIASES target says otherwise). Every name the
 * helper's table has for these keysyms is here (test/unit/protocol/keys.test.ts
 * checks this list against helpers/linux-rust/src/x11/keysym_table.rs).
 */
export const KEYSYMS: Readonly<Record<string, number>> = Object.freeze({
  BackSpace: 0xff08,
  Tab: 0xff09,
  Linefeed: 0xff0a,
  Return: 0xff0d,
  Pause: 0xff13,
  Scroll_Lock: 0xff14,
  Escape: 0xff1b,
  Delete: 0xffff,
  Home: 0xff50,
  Left: 0xff51,
  Up: 0xff52,
  Right: 0xff53,
  Down: 0xff54,
  Page_Up: 0xff55,
  Prior: 0xff55,
  Page_Down: 0xff56,
  Next: 0xff56,
  End: 0xff57,
  Begin: 0xff58,
  Print: 0xff61,
  Insert: 0xff63,
  Menu: 0xff67,
  Num_Lock: 0xff7f,
  KP_Space: 0xff80,
  KP_Tab: 0xff89,
  KP_Enter: 0xff8d,
  KP_Home: 0xff95,
  KP_Left: 0xff96,
  KP_Up: 0xff97,
  KP_Right: 0xff98,
  KP_Down: 0xff99,
  KP_Page_Up: 0xff9a,
  KP_Prior: 0xff9a,
  KP_Page_Down: 0xff9b,
  KP_Next: 0xff9b,
  KP_End: 0xff9c,
  KP_Begin: 0xff9d,
  KP_Delete: 0xff9f,
  ISO_Left_Tab: 0xfe20,
  ISO_Enter: 0xfe34,
  ISO_Level3_Shift: 0xfe03,
  Mode_switch: 0xff7e,
  ISO_Group_Shift: 0xff7e,
  script_switch: 0xff7e,
  Greek_switch: 0xff7e,
  Hebrew_switch: 0xff7e,
  Shift_L: 0xffe1,
  Shift_R: 0xffe2,
  Control_L: 0xffe3,
  Control_R: 0xffe4,
  Caps_Lock: 0xffe5,
  Shift_Lock: 0xffe6,
  Meta_L: 0xffe7,
  Meta_R: 0xffe8,
  Alt_L: 0xffe9,
  Alt_R: 0xffea,
  Super_L: 0xffeb,
  Super_R: 0xffec,
  Hyper_L: 0xffed,
  Hyper_R: 0xffee,
  space: 0x20,
  plus: 0x2b,
  minus: 0x2d,
});

/** The helper's own aliases (keys.rs ALIASES), matched on the ASCII-lower-cased name. */
const HELPER_ALIASES: Record<string, number> = {
  ctrl: 0xffe3,
  control: 0xffe3,
  alt: 0xffe9,
  option: 0xffe9,
  shift: 0xffe1,
  super: 0xffeb,
  meta: 0xffeb,
  cmd: 0xffeb,
  command: 0xffeb,
  win: 0xffeb,
  windows: 0xffeb,
  return: 0xff0d,
  enter: 0xff0d,
  backspace: 0xff08,
  tab: 0xff09,
  escape: 0xff1b,
  esc: 0xff1b,
  delete: 0xffff,
  del: 0xffff,
  insert: 0xff63,
  ins: 0xff63,
  home: 0xff50,
  end: 0xff57,
  page_up: 0xff55,
  pageup: 0xff55,
  pgup: 0xff55,
  prior: 0xff55,
  page_down: 0xff56,
  pagedown: 0xff56,
  pgdn: 0xff56,
  next: 0xff56,
  up: 0xff52,
  down: 0xff54,
  left: 0xff51,
  right: 0xff53,
  space: 0x20,
  menu: 0xff67,
  capslock: 0xffe5,
  caps_lock: 0xffe5,
  numlock: 0xff7f,
  printscreen: 0xff61,
  print: 0xff61,
  pause: 0xff13,
  scrolllock: 0xff14,
};

/** Canonical names by keysym: modifiers and the ALIASES targets first, then each keysym's first name above. */
const NAME_OF_KEYSYM: ReadonlyMap<number, string> = (() => {
  const m = new Map<number, string>([
    [0xffe1, "shift"],
    [0xffe2, "shift"],
    [0xffe3, "ctrl"],
    [0xffe4, "ctrl"],
    [0xffe9, "alt"],
    [0xffea, "alt"],
    [0xffeb, "super"],
    [0xffec, "super"],
  ]);
  for (const target of new Set(Object.values(ALIASES))) {
    const ks = KEYSYMS[target];
    if (ks !== undefined && !m.has(ks)) m.set(ks, target);
  }
  for (const [name, ks] of Object.entries(KEYSYMS)) if (!m.has(ks)) m.set(ks, name);
  return m;
})();
const KEYSYM_BY_LOWER_NAME: ReadonlyMap<string, number> = new Map(Object.entries(KEYSYMS).map(([n, ks]) => [asciiLower(n), ks]));

function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => c.toLowerCase());
}

/** Rust's u32::from_str_radix: an optional "+", then digits of the radix only; null when not a u32. */
function parseU32(digits: string, radix: 10 | 16): number | null {
  const re = radix === 10 ? /^\+?[0-9]+$/ : /^\+?[0-9a-fA-F]+$/;
  if (!re.test(digits)) return null;
  const body = digits.replace(/^\+/, "").replace(/^0+(?=.)/, "");
  if (body.length > (radix === 10 ? 10 : 8)) return null;
  const v = parseInt(body, radix);
  return v <= 0xffffffff ? v : null;
}

/** F1-F35 as the helper reads them: "f" (any case), then a number ("F04" is F4); null otherwise. */
function fKey(name: string): number | null {
  if (name[0] !== "f" && name[0] !== "F") return null;
  const n = parseU32(name.slice(1), 10);
  return n !== null && n >= 1 && n <= 35 ? n : null;
}

/** The keysym the helper types for one character (keys.rs char_keysym). */
export function charKeysym(cp: number): number {
  const special = CONTROL_CHAR_KEYSYMS[cp];
  if (special !== undefined) return special;
  if ((cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xff)) return cp;
  return 0x0100_0000 + cp;
}

/**
 * The X keysym the helper resolves a key name to (keys.rs key_to_keysym, in
 * its order), or null when the name is not one deckhand knows: a name only
 * the helper's full table has (its meaning then matters to no check here),
 * or one the helper refuses.
 */
export function keysymOf(name: string): number | null {
  if (typeof name !== "string" || name.length === 0) return null;
  const cps = [...name];
  if (cps.length === 1) return charKeysym(name.codePointAt(0)!);
  const lower = asciiLower(name);
  const alias = HELPER_ALIASES[lower];
  if (alias !== undefined) return alias;
  const f = lower.startsWith("f") ? parseU32(lower.slice(1), 10) : null;
  if (f !== null && f >= 1 && f <= 35) return 0xffbe + f - 1;
  const exact = KEYSYMS[name];
  if (exact !== undefined) return exact;
  if (name.startsWith("U+") || name.startsWith("u+")) {
    const cp = parseU32(name.slice(2), 16);
    if (cp !== null && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) return charKeysym(cp);
  }
  if (lower.startsWith("0x")) {
    const v = parseU32(lower.slice(2), 16);
    if (v !== null) return v;
  }
  return KEYSYM_BY_LOWER_NAME.get(lower) ?? null;
}

/**
 * The canonical name of a keysym, or null when deckhand has none: the name
 * from the table above, F1-F35, or the character itself (a Unicode keysym
 * 0x01000000 + U is the character U, typed as the helper types it).
 */
export function keysymName(ks: number): string | null {
  const named = NAME_OF_KEYSYM.get(ks);
  if (named) return named;
  if (ks >= 0xffbe && ks <= 0xffbe + 34) return `F${ks - 0xffbe + 1}`;
  if ((ks > 0x20 && ks <= 0x7e) || (ks >= 0xa0 && ks <= 0xff)) return charName(ks);
  if (ks >= 0x0100_0000 && ks <= 0x0110_ffff) {
    const cp = ks - 0x0100_0000;
    if (cp >= 0xd800 && cp <= 0xdfff) return null;
    const asKey = charKeysym(cp);
    return asKey === ks ? charName(cp) : keysymName(asKey);
  }
  return null;
}

function charName(cp: number): string {
  const c = String.fromCodePoint(cp);
  return c === "+" ? "plus" : c === " " ? "space" : c;
}

/**
 * "ctrl+shift+t" -> ["ctrl", "shift", "t"], names as written (see the
 * grammar above): "ctrl++" -> ["ctrl", "+"], "+" -> ["+"], " ctrl + s " ->
 * ["ctrl", "s"]. Throws INVALID_ARGUMENTS for a blank or malformed chord.
 */
export function splitChord(chord: string, opts: Pick<KeyOptions, "field"> = {}): string[] {
  const field = opts.field ?? "keys";
  if (typeof chord !== "string") throw invalid("a key combination must be a string", field);
  const shown = JSON.stringify(chord.length > 60 ? chord.slice(0, 60) + "…" : chord);
  const out: string[] = [];
  const blank = (c: string | undefined) => c !== undefined && /\s/.test(c);
  let i = 0;
  const skipBlanks = () => {
    while (blank(chord[i])) i++;
  };
  skipBlanks();
  if (i === chord.length) throw invalid(`empty key combination ${shown}`, field);
  for (;;) {
    // A key name: a literal "+", or everything up to the next "+".
    skipBlanks();
    if (i === chord.length) {
      throw invalid(`key combination ${shown} ends with "+": write the plus key as "ctrl++" or "ctrl+plus"`, field);
    }
    if (chord[i] === "+") {
      out.push("+");
      i++;
    } else {
      let j = i;
      while (j < chord.length && chord[j] !== "+") j++;
      const name = chord.slice(i, j).trim();
      if (/\s/.test(name)) throw invalid(`key combination ${shown}: a key name has a blank inside; join names with "+"`, field);
      out.push(name);
      i = j;
    }
    // Then the end, or a separator.
    skipBlanks();
    if (i === chord.length) return out;
    if (chord[i] !== "+") throw invalid(`key combination ${shown}: expected "+" between key names`, field);
    i++;
  }
}

/** One chord -> canonical key names: "CTRL++" -> ["ctrl", "plus"]. */
export function parseChord(chord: string, opts: KeyOptions = {}): string[] {
  return splitChord(chord, opts).map((k) => normalizeKey(k, opts));
}

/**
 * Several fragments of one chord (repeated --keys, a hotkey step's keys[]),
 * each of which may itself be a +-joined chord: ["ctrl", "shift+t"] ->
 * ["ctrl", "shift", "t"]. Throws INVALID_ARGUMENTS when there is no key.
 */
export function parseKeys(keys: readonly string[], opts: KeyOptions = {}): string[] {
  if (!Array.isArray(keys) || keys.length === 0) throw invalid("at least one key is needed", opts.field ?? "keys");
  return keys.flatMap((k) => parseChord(k, opts));
}

/** Exactly one key (hold-key): "+" -> "plus", "Ctrl" -> "ctrl"; a chord of several keys is refused. */
export function parseKey(name: string, opts: KeyOptions = {}): string {
  const keys = parseChord(name, opts);
  if (keys.length !== 1) throw invalid(`${JSON.stringify(name.slice(0, 60))} names ${keys.length} keys; give one key`, opts.field ?? "key");
  return keys[0]!;
}
