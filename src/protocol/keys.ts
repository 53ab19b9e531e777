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
    if (name === " ") return "space";
    if (name === "+") return "plus";
    return opts.lowerLetters && /^[A-Z]$/.test(name) ? name.toLowerCase() : name;
  }
  const lower = name.toLowerCase();
  const alias = ALIASES[lower];
  if (alias) return alias;
  const f = /^f([1-9]|1[0-9]|2[0-4])$/.exec(lower);
  if (f) return `F${f[1]}`;
  return name;
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
