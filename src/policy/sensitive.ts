// Which actions need a human's confirmation (the confirm hook) first, and
// why. decideStep is the one decision every front end reaches (CLI, serve,
// MCP, the vendor adapters and programs all run steps through the program
// executor, whose Safety.checkStep asks it): a control whose name has a
// sensitive word, reached by any route that can activate it.
import { keysymOf, normalizeKey, parseChord, parseKey, parseKeys, splitChord as parseSplit } from "../protocol/keys.ts";
import type { Step } from "../protocol/program.ts";
import { DIALOG_ROLES, TEXT_ROLES, type ActionName, type Role } from "../wire/vocabulary.ts";

export type SensitiveActionKind = "click" | "secondary" | "hotkey" | "press_key" | "set_clipboard" | "quit" | "type_text" | "hold_key" | "drag";

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

// ---- issue 15: click
/**
 * Every word controlSensitivity finds in a name (SENSITIVE_WORDS and
 * "quit"), lowercase: a helper that checks names itself before a click
 * (point_click's hold_words) holds every name that contains one of them as
 * an ASCII case-insensitive substring, or has a character outside ASCII, and
 * leaves the decision to controlSensitivity then. On an ASCII name a whole
 * word is such a substring, so no name this decision would confirm passes
 * (test/unit/click-hold-words.test.ts).
 */
export const NAME_WORDS: readonly string[] = Object.freeze([...SENSITIVE_WORDS, "quit"]);
// ---- end click

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
  kp_delete: "delete",
  esc: "esc",
  return: "enter",
};

/**
 * One key name as the checks read it: the canonical name (src/protocol/keys.ts:
 * "0xffe3" and "Control_R" are ctrl, "U+0071" is q, "kp_enter" is KP_Enter),
 * lower-cased. A single character stays itself ("+" is the plus key here).
 */
function checkName(raw: string): string {
  const k = raw.trim();
  if (!k) return "";
  const canonical = [...k].length === 1 ? k : normalizeKey(k);
  return canonical.toLowerCase();
}

/** ctrl / alt / shift / meta for a modifier's check name (Meta_L, Hyper_R, ⌘ included), else null. */
function modifierClass(k: string): string | null {
  return MODIFIER_ALIASES[k] ?? MODIFIER_ALIASES[k.replace(/_[lr]$/, "")] ?? null;
}

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
    const k = checkName(raw);
    if (!k) continue;
    const m = modifierClass(k);
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

// ---------------------------------------------------------------- routes

/**
 * The ways a step can activate a sensitive control. Each decision names its
 * route, and the reason sent to the confirm hook says which it was.
 */
export type SensitiveRoute =
  /** The step acts on the control itself (click, a secondary action, press-key on it). */
  | "element"
  /** A click at a point over the control (any button but right/back/forward, any count, any keys held). */
  | "point"
  /** A drag pressed or released over the control. */
  | "drag"
  /** Activating a text field (its Activate action, a click on it, Return in it) presses its window's default button. */
  | "entry-activation"
  /** Return / Enter / space while the control has keyboard focus. */
  | "focused"
  /** Return / Enter while focus is in a window whose default button is the control. */
  | "default-button"
  /** Return / Enter / space when the focus is not known (its window is not active) or moves earlier in the same step. */
  | "unknown-focus"
  /** alt+letter: the control's mnemonic. */
  | "mnemonic"
  /** A chord that closes an app or window. */
  | "closing-chord";

/** A control as the decision sees it: a snapshot element, a live tree node, a hit-tested node. Neutral words only (src/wire/vocabulary.ts). */
export interface Control {
  role: Role;
  name: string;
  /** Neutral states (focused, focusable, default...); empty when not read (snapshot elements). */
  states: readonly string[];
  /** Neutral action names. */
  actions?: readonly ActionName[];
  /** The snapshot's element index when the control is one (-1 or null otherwise). */
  index?: number | null;
}

/** A window's controls, for the routes that activate a control other than the one acted on. */
export interface Scene {
  title: string;
  /** The window root's neutral role ("window", "dialog"...), null when unknown. */
  role: Role | null;
  controls: readonly Control[];
  /**
   * true: read live with every node's states, so a button's default state
   * can be trusted. false (snapshot elements): no default state was read, and
   * every sensitive button of the window counts as possibly the default.
   */
  statesKnown: boolean;
}

/** Where keyboard focus is when the step's keys arrive. */
export type Focus =
  /** press-key on an element: the element is focused first. */
  | { source: "element"; node: Control; scene: Scene | null }
  /** Read live just before the keys. node null: no node of the app has focus (its window is not active yet). */
  | { source: "live"; node: Control | null; scene: Scene | null };

/** What a pointer button does at a point, and what is there. */
export interface PointerFact {
  gesture: "click" | "press" | "release";
  button: string;
  count: number;
  modifiers: readonly string[];
  /** The node under the point (hit-tested, or the nearest named control around it), null when none. */
  node: Control | null;
}

/** What the executor read live before the step (src/program/activation.ts gathers it). */
export interface StepFacts {
  /** The element the step acts on: a snapshot element, or a hit-tested node routed to accessibility. */
  element?: Control | null;
  /** The element's window (entry activation). */
  elementScene?: Scene | null;
  /** Keyboard steps with an activating key or a mnemonic. */
  focus?: Focus | null;
  /**
   * When the focused node is in another window of the app than the target:
   * the focus the keys meet if the focus guard activates the target instead
   * (restored by the toolkit, not readable before: node null). Both are judged.
   */
  focusIfActivated?: Focus | null;
  /** Point clicks and drags sent as input. */
  pointer?: readonly PointerFact[];
  /**
   * perform-secondary-action: the platform's name of the action the step's
   * name resolved to (the caller may name it neutrally, e.g. "other"): its
   * words are judged too.
   */
  nativeAction?: string | null;
}

export interface StepDecision {
  kind: SensitiveActionKind;
  route: SensitiveRoute;
  /** Names the rule and the route; never typed text. */
  reason: string;
  /** The sensitive control (for the hook's description), when one is known. */
  control: Control | null;
  /** hotkey / press_key / hold_key: the canonical key names. */
  keys?: string[];
}

/** Return-like keysyms: Return, KP_Enter, ISO_Enter, Linefeed (and the bare control characters 0x0d/0x0a as keysyms). */
const RETURN_KEYSYMS = new Set([0xff0d, 0xff8d, 0xfe34, 0xff0a, 0x0d, 0x0a]);
/** space and KP_Space: they press the focused button. */
const SPACE_KEYSYMS = new Set([0x20, 0xff80]);
/** Keys that move focus: Tab family, arrows, Page/Home/End (keypad too), F6, F10, Escape, Menu. */
const MOVER_KEYSYMS = new Set([
  0xff09, 0xfe20, 0xff89, 0xff50, 0xff51, 0xff52, 0xff53, 0xff54, 0xff55, 0xff56, 0xff57, 0xff58, 0xff95, 0xff96, 0xff97, 0xff98, 0xff99, 0xff9a, 0xff9b, 0xff9c,
  0xff9d, 0xffc3, 0xffc7, 0xff1b, 0xff67,
]);

/** Buttons a window's default (Return) may press. */
const BUTTON_ROLES: readonly Role[] = ["button"];
/** Content where Return submits a form: a web page or a form in one (not an office document). */
const DOCUMENT_ROLES: readonly Role[] = ["web_document", "form"];
const isButton = (c: Control) => BUTTON_ROLES.includes(c.role);

const clip = (s: string, n = 60) => (s.length > n ? `${s.slice(0, n)}…` : s);
const label = (c: Control) => JSON.stringify(clip(c.name || c.role));

/** Why a control's name makes pressing it sensitive, or null. */
export function controlSensitivity(name: string | null | undefined): string | null {
  if (!name) return null;
  const v = sensitivity({ kind: "click", elementName: name });
  return v.sensitive ? v.reason : null;
}

/** Text fields: their activation (Return, their Activate action) presses the window's default button. */
export function isTextLike(c: Control): boolean {
  return TEXT_ROLES.includes(c.role) || c.states.includes("editable");
}

/**
 * The window's sensitive default button, or null. Read live, a button with
 * the default state is the default. When no button says so and the window
 * is a dialog (or web content, where Return submits the form), or when the
 * states were not read at all (snapshot elements), every sensitive button of
 * the window counts: it may be the default.
 */
export function sensitiveDefault(scene: Scene | null | undefined): Control | null {
  if (!scene) return null;
  const buttons = scene.controls.filter(isButton);
  const sensitive = (c: Control) => controlSensitivity(c.name) !== null;
  if (scene.statesKnown) {
    const defaults = buttons.filter((b) => b.states.includes("default"));
    if (defaults.length) return defaults.find(sensitive) ?? null;
    const dialogLike = (scene.role !== null && DIALOG_ROLES.includes(scene.role)) || scene.controls.some((c) => DOCUMENT_ROLES.includes(c.role));
    if (!dialogLike) return null;
  }
  return buttons.find(sensitive) ?? null;
}

/** A sensitive control the focus may be on when it is not known: focusable (or states not read). */
function sensitiveFocusable(scene: Scene | null | undefined): Control | null {
  if (!scene) return null;
  return scene.controls.find((c) => controlSensitivity(c.name) !== null && (!scene.statesKnown || c.states.includes("focusable") || c.states.includes("focused"))) ?? null;
}

interface KeyEvent {
  /** Canonical name ("Return", "space", "a"). */
  key: string;
  keysym: number | null;
  /** Check-class modifiers held (ctrl, alt, shift, meta). */
  mods: ReadonlySet<string>;
  /** A character of typed text (not a key step). */
  typed: boolean;
}

/** Canonical names of a chord, or the conservative reading of one the parser refuses. */
function chordKeys(parse: () => string[], raw: readonly string[]): string[] {
  try {
    return parse();
  } catch {
    return raw.flatMap(splitChord).map((k) => {
      try {
        return normalizeKey(k);
      } catch {
        return k;
      }
    });
  }
}

function chordEvents(keys: readonly string[]): KeyEvent[] {
  const mods = new Set<string>();
  const plain: string[] = [];
  for (const k of keys) {
    const m = modifierClass(checkName(k));
    if (m) mods.add(m);
    else plain.push(k);
  }
  return plain.map((key) => ({ key, keysym: keysymOf(key), mods, typed: false }));
}

function typedEvents(text: string): KeyEvent[] {
  return [...text].map((c) => ({ key: normalizeKey(c), keysym: keysymOf(c), mods: new Set<string>(), typed: true }));
}

/** The key events a keyboard step sends, in order; null for steps that send none. */
function keyEventsOf(step: Step): { events: KeyEvent[]; keys?: string[]; kind: SensitiveActionKind } | null {
  switch (step.action) {
    case "press-key": {
      const keys = chordKeys(() => parseChord(step.key, { field: "key" }), [step.key]);
      return { events: chordEvents(keys), keys, kind: "press_key" };
    }
    case "hotkey": {
      const keys = chordKeys(() => parseKeys(step.keys), step.keys);
      return { events: chordEvents(keys), keys, kind: "hotkey" };
    }
    case "hold-key": {
      const keys = chordKeys(() => [parseKey(step.key)], [step.key]);
      return { events: chordEvents(keys), keys, kind: "hold_key" };
    }
    case "type-text":
      // With an element the text is inserted through accessibility: no key is pressed.
      return step.elementIndex === undefined ? { events: typedEvents(step.text), kind: "type_text" } : null;
    default:
      return null;
  }
}

const isReturn = (e: KeyEvent) => e.keysym !== null && RETURN_KEYSYMS.has(e.keysym);
const isSpace = (e: KeyEvent) => e.keysym !== null && SPACE_KEYSYMS.has(e.keysym);
/** alt (without ctrl or super) and one letter or digit: a mnemonic. */
function mnemonicOf(e: KeyEvent): string | null {
  if (!e.mods.has("alt") || e.mods.has("ctrl") || e.mods.has("meta")) return null;
  return /^[\p{L}\p{N}]$/u.test(e.key) ? e.key.toLowerCase() : null;
}
/** A key that may move focus before a later key of the same step lands. */
function movesFocus(e: KeyEvent): boolean {
  if (e.mods.has("ctrl") || e.mods.has("alt") || e.mods.has("meta")) return true;
  if (e.keysym === null) return true; // a name only the helper knows: assume the worst
  if (MOVER_KEYSYMS.has(e.keysym)) return true;
  return e.keysym >= 0xffbe && e.keysym <= 0xffe0; // function keys
}

/** Whether a keyboard step needs to know where focus is (an activating key or a mnemonic). */
export function stepNeedsFocus(step: Step): boolean {
  const k = keyEventsOf(step);
  return !!k && k.events.some((e) => isReturn(e) || isSpace(e) || mnemonicOf(e) !== null);
}

/** Whether press-key on an element needs its window's scene (an activating key). */
export function stepActivatesElement(step: Step): boolean {
  if (step.action === "click" || step.action === "perform-secondary-action") return true;
  return step.action === "press-key" && stepNeedsFocus(step);
}

function keyLabel(e: KeyEvent): string {
  if (e.typed) return e.key === "space" ? "a typed space" : e.key === "Tab" ? "a typed tab" : "a typed newline";
  return [...[...e.mods].sort(), e.key].join("+");
}

function keyboardDecision(kind: SensitiveActionKind, keys: string[] | undefined, events: KeyEvent[], focus: Focus | null | undefined): StepDecision | null {
  const out = (route: SensitiveRoute, reason: string, control: Control | null): StepDecision => ({ kind, route, reason, control, ...(keys ? { keys: [...keys] } : {}) });
  let moved = false;
  const scene = focus?.scene ?? null;
  const where = scene ? ` in ${JSON.stringify(clip(scene.title))}` : "";
  for (const e of events) {
    const m = mnemonicOf(e);
    if (m) {
      const target = scene?.controls.find((c) => isButton(c) && controlSensitivity(c.name) !== null && c.name.toLowerCase().includes(m)) ?? null;
      if (target) return out("mnemonic", `${keyLabel(e)} may press ${label(target)} by its mnemonic${where} (${controlSensitivity(target.name)})`, target);
    }
    const ret = isReturn(e);
    const space = isSpace(e);
    if (ret || space) {
      const node = !moved && focus ? focus.node : null;
      if (node) {
        const why = controlSensitivity(node.name);
        // Return activates any focused control (a chat box named "Send message" sends); space presses buttons, not text.
        if (why && (ret || !isTextLike(node))) return out("focused", `${keyLabel(e)} while ${label(node)} has focus (${why})`, node);
        if (ret) {
          const d = sensitiveDefault(scene);
          if (d) return out(isTextLike(node) && focus?.source === "element" ? "entry-activation" : "default-button", `${keyLabel(e)} while focus is${where}, whose default button is ${label(d)} (${controlSensitivity(d.name)})`, d);
        }
      } else if (focus && !(space && e.typed && !moved)) {
        // Not known (the window is not active: activation restores a focus we cannot read), or moved earlier in this step.
        // A typed space while focus is unknown is not judged here (docs/security.md, "Routes to a sensitive control").
        const d = (ret ? sensitiveDefault(scene) : null) ?? sensitiveFocusable(scene);
        if (d) {
          const cause = moved ? "after a key that moves focus" : "while the focus is not known";
          return out("unknown-focus", `${keyLabel(e)} ${cause}${where}, which has ${label(d)} (${controlSensitivity(d.name)})`, d);
        }
      }
    }
    if (movesFocus(e)) moved = true;
  }
  return null;
}

function pointerLabel(p: PointerFact): string {
  const count = p.count === 2 ? " double" : p.count === 3 ? " triple" : "";
  const held = p.modifiers.length ? `${p.modifiers.join("+")}+` : "";
  const what = p.gesture === "click" ? `${held}${p.button}${count} click` : `${held}${p.button} button ${p.gesture === "press" ? "pressed" : "released"}`;
  return what;
}

/** Buttons that press a control: left and middle (be conservative); right, back and forward do not. */
const ACTIVATING_BUTTONS = new Set(["left", "middle"]);

/**
 * The one decision: does this step need the confirm hook, and why. Every
 * route to a control whose name has a sensitive word comes here with what
 * the executor read live (StepFacts): the element acted on, its window, the
 * focus, the nodes under the pointer. null: no confirmation needed.
 */
export function decideStep(step: Step, facts: StepFacts = {}): StepDecision | null {
  const el = facts.element ?? null;
  switch (step.action) {
    case "click":
    case "perform-secondary-action": {
      const kind: SensitiveActionKind = step.action === "click" ? "click" : "secondary";
      if (el) {
        const secondary = step.action === "perform-secondary-action";
        // The action as the caller named it and as the platform names it: either may carry the word.
        const v = [secondary ? step.name : null, secondary ? (facts.nativeAction ?? null) : null]
          .map((actionName) => sensitivity({ kind, elementName: el.name, actionName }))
          .find((x) => x.sensitive) ?? { sensitive: false, reason: "" };
        const route: SensitiveRoute = el.index === undefined || el.index === null || el.index >= 0 ? "element" : "point";
        if (v.sensitive) return { kind, route, reason: v.reason, control: el };
        if (isTextLike(el)) {
          const d = sensitiveDefault(facts.elementScene);
          if (d) {
            const how = step.action === "click" ? "clicking" : `the ${JSON.stringify(clip(step.name, 40))} action of`;
            return { kind, route: "entry-activation", reason: `${how} the text field ${label(el)} activates it, which presses the default button ${label(d)} (${controlSensitivity(d.name)})`, control: d };
          }
        }
        return null;
      }
      return pointerDecision("click", facts.pointer);
    }
    case "drag":
      return pointerDecision("drag", facts.pointer);
    case "press-key":
    case "hotkey":
    case "hold-key":
    case "type-text": {
      const k = keyEventsOf(step);
      if (step.action === "press-key" || step.action === "hotkey") {
        const keys = k?.keys ?? [];
        const chord = closingChord(step.action === "hotkey" ? step.keys : [step.key]) ?? closingChord(keys);
        if (chord) return { kind: k!.kind, route: "closing-chord", reason: `${chord} closes an app or window`, control: null, keys: [...keys] };
      }
      if (!k) return null;
      if (step.action === "press-key" && step.elementIndex !== undefined && el) return keyboardDecision(k.kind, k.keys, k.events, { source: "element", node: el, scene: facts.elementScene ?? null });
      return keyboardDecision(k.kind, k.keys, k.events, facts.focus) ?? (facts.focusIfActivated ? keyboardDecision(k.kind, k.keys, k.events, facts.focusIfActivated) : null);
    }
    default:
      return null;
  }
}

function pointerDecision(kind: SensitiveActionKind, pointer: readonly PointerFact[] | undefined): StepDecision | null {
  for (const p of pointer ?? []) {
    if (!ACTIVATING_BUTTONS.has(p.button) || !p.node) continue;
    const why = controlSensitivity(p.node.name);
    if (why) return { kind, route: kind === "drag" ? "drag" : "point", reason: `${pointerLabel(p)} at a point over ${label(p.node)} (${why})`, control: p.node };
  }
  return null;
}
