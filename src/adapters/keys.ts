// Vendor key names -> the xdotool-style names deckhand's steps carry
// (ctrl, alt, shift, super, Return, BackSpace, Page_Up, F5, a, ...).
import { DeckhandError } from "../protocol/errors.ts";

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

export const MODIFIERS: ReadonlySet<string> = new Set(["ctrl", "alt", "shift", "super"]);

/**
 * One key name -> canonical. `lowerLetters` folds a single upper-case letter
 * (OpenAI writes ["CTRL", "S"] for ctrl+s; in xdotool "S" would mean shift+s).
 * Unknown multi-letter names pass through unchanged: the helper knows the
 * full keysym table and refuses what it does not know.
 */
export function normalizeKey(name: string, opts: { lowerLetters?: boolean } = {}): string {
  if (typeof name !== "string" || name.length === 0) {
    throw new DeckhandError("INVALID_ARGUMENTS", "a key name must be a non-empty string", { details: { field: "keys" } });
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

/** "ctrl+shift+t" -> ["ctrl", "shift", "t"]; a lone "+" or a trailing "++" is the plus key. */
export function splitChord(chord: string): string[] {
  if (chord === "+") return ["+"];
  const parts = chord.split("+");
  const out: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (p === "" && i === parts.length - 1 && parts[i - 1] === "") out.push("+");
    else if (p !== "") out.push(p);
  }
  if (!out.length) throw new DeckhandError("INVALID_ARGUMENTS", `empty key combination ${JSON.stringify(chord)}`, { details: { field: "text" } });
  return out;
}
