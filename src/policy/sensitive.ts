// Which actions need a human's confirmation (the confirm hook) first.
import { splitChord as parseSplit } from "../protocol/keys.ts";

export type SensitiveActionKind = "click" | "secondary" | "hotkey" | "press_key" | "set_clipboard" | "quit";

export type SensitiveAction = {
  kind: SensitiveActionKind | (string & {});
  /** The target element's accessible name (click, secondary). */
  elementName?: string | null;
  /** secondary: the advertised action's name, e.g. "delete". */
  actionName?: string | null;
  /** hotkey / press_key: ["ctrl", "q"] (one chord) or ["ctrl+q", "Return"] (a sequence of chords). */
  keys?: readonly string[] | null;
};

export type Sensitivity = { sensitive: boolean; reason: string };

/**
 * Words that make pressing a control sensitive, matched as whole words,
 * case-insensitively: "Delete", "Delete all", "Send & archive", "delete_row"
 * match; "Undelete", "Deleted items", "Sender", "PayPal", "Payment" do not.
 * Inflections are deliberately not matched: "Deleted items" names a folder,
 * not an act.
 */
export const SENSITIVE_WORDS: readonly string[] = Object.freeze(["delete", "erase", "pay", "purchase", "send", "submit", "transfer"]);

const WORD_RES = SENSITIVE_WORDS.map((w) => [w, new RegExp(`(?<![\\p{L}\\p{N}])${w}(?![\\p{L}\\p{N}])`, "iu")] as const);
const INVISIBLE = /[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]/g;

// Pressing a control named "Quit" is quitting the app.
const QUIT_RE = /(?<![\p{L}\p{N}])quit(?![\p{L}\p{N}])/iu;

/** The sensitive word in a control's name, or null. */
export function sensitiveWord(name: string): string | null {
  const clean = name.normalize("NFKC").replace(INVISIBLE, "");
  for (const [w, re] of WORD_RES) if (re.test(clean)) return w;
  return null;
}

const MODIFIER_ALIASES: Record<string, string> = {
  ctrl: "ctrl",
  control: "ctrl",
  ctl: "ctrl",
  alt: "alt",
  option: "alt",
  opt: "alt",
  shift: "shift",
  cmd: "meta",
  command: "meta",
  meta: "meta",
  super: "meta",
  win: "meta",
  windows: "meta",
  logo: "meta",
  hyper: "meta",
  "⌘": "meta",
  "⌥": "alt",
  "⌃": "ctrl",
  "⇧": "shift",
};
const KEY_ALIASES: Record<string, string> = {
  escape: "esc",
  del: "delete",
  esc: "esc",
  return: "enter",
};

/**
 * Chords that close an app or a window (or the session), normalised as
 * sorted modifiers + key. ctrl+w / cmd+w close the window, which quits
 * single-window apps.
 */
export const CLOSING_CHORDS: readonly string[] = Object.freeze([
  "ctrl+q",
  "ctrl+shift+q",
  "meta+q",
  "meta+shift+q",
  "alt+meta+q",
  "alt+f4",
  "ctrl+f4",
  "ctrl+w",
  "ctrl+shift+w",
  "meta+w",
  "meta+shift+w",
  "alt+meta+w",
  "alt+meta+esc",
  "alt+ctrl+delete",
  "alt+ctrl+backspace",
  "ctrl+meta+q",
]);

/** Normalise a chord ("Ctrl+Shift+Q", ["control", "q"]) to "ctrl+shift+q"; null if empty. */
export function normalizeChord(keys: readonly string[]): string | null {
  const mods = new Set<string>();
  const plain: string[] = [];
  for (const raw of keys) {
    const k = raw.trim().toLowerCase();
    if (!k) continue;
    const m = MODIFIER_ALIASES[k.replace(/_[lr]$/, "")];
    if (m) mods.add(m);
    else plain.push(KEY_ALIASES[k] ?? k);
  }
  if (mods.size === 0 && plain.length === 0) return null;
  return [...[...mods].sort(), ...plain].join("+");
}

/**
 * Split "ctrl+q" into ["ctrl", "q"] with the one chord parser every front end
 * uses ("ctrl++" is ctrl and "+"). A chord it refuses never reaches the
 * helper; here it still gets the conservative reading (every non-empty name),
 * so a malformed chord cannot hide a closing one.
 */
function splitChord(chord: string): string[] {
  try {
    return parseSplit(chord);
  } catch {
    return chord.split("+").map((k) => k.trim()).filter(Boolean);
  }
}

/** The closing chord among `keys`, read both as one chord and as a sequence of chords. */
export function closingChord(keys: readonly string[]): string | null {
  const chords: string[][] = [keys.flatMap(splitChord), ...keys.map(splitChord)];
  for (const c of chords) {
    const n = normalizeChord(c);
    if (n && CLOSING_CHORDS.includes(n)) return n;
  }
  return null;
}

/**
 * Whether an action is sensitive (needs the confirm hook) and why. The
 * reason names the rule (the matched word or chord), never typed text.
 */
export function sensitivity(action: SensitiveAction): Sensitivity {
  switch (action.kind) {
    case "quit":
      return { sensitive: true, reason: "quitting an app" };
    case "set_clipboard":
      return { sensitive: true, reason: "setting the clipboard" };
    case "click":
    case "secondary": {
      for (const name of [action.elementName, action.actionName]) {
        if (!name) continue;
        const w = sensitiveWord(name);
        if (w) return { sensitive: true, reason: `control name contains "${w}"` };
        if (QUIT_RE.test(name.normalize("NFKC").replace(INVISIBLE, ""))) return { sensitive: true, reason: "quitting an app" };
      }
      return { sensitive: false, reason: "" };
    }
    case "hotkey":
    case "press_key": {
      const chord = action.keys ? closingChord(action.keys) : null;
      if (chord) return { sensitive: true, reason: `${chord} closes an app or window` };
      return { sensitive: false, reason: "" };
    }
    default:
      return { sensitive: false, reason: "" };
  }
}
