// What a vendor action becomes: a screenshot, a zoom, or program steps whose
// coordinates are still pixels of the last image the model saw. The session
// maps them to screen pixels (toScreenSteps) and runs them as one Program.
import { DeckhandError } from "../protocol/errors.ts";
import type { Program, Step } from "../protocol/program.ts";
import { screenInImage, vendorPointToScreen, type ImageMap } from "./coords.ts";
import { MODIFIERS, normalizeKey, parseChord } from "../protocol/keys.ts";

export type AdapterName = "openai" | "anthropic";
export const ADAPTERS: readonly AdapterName[] = ["openai", "anthropic"];

/**
 * Steps in image pixels (same shape as Program steps; coordinates may be
 * fractional, as the SDKs type them: they are rounded through the map). A
 * click with `atPointer` has no point of its own: it acts where deckhand
 * left the pointer, which the session fills in (see toScreenSteps).
 */
export type ImageStep = Step | (Omit<Extract<Step, { action: "click" }>, "x" | "y" | "elementIndex"> & { atPointer: true });

export type Translation =
  | { kind: "screenshot" }
  | { kind: "zoom"; region: unknown }
  /** Where deckhand left the pointer, in pixels of the last screenshot (Anthropic cursor_position). */
  | { kind: "cursor" }
  | { kind: "steps"; steps: ImageStep[] };

export interface TranslateOptions {
  /** Sleep for a wait action that names no duration (OpenAI's has none). Default 1000 ms. */
  waitMs?: number;
}

export const DEFAULT_WAIT_MS = 1000;
/** Program wait steps are capped at 10 s. */
export const MAX_WAIT_MS = 10_000;
/** OpenAI scroll_x / scroll_y are pixels; deckhand scrolls in wheel notches. */
export const SCROLL_PX_PER_NOTCH = 100;

export function invalid(message: string, field?: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message, { details: field ? { field } : {} });
}

export function unsupported(adapter: AdapterName, action: string, why: string): DeckhandError {
  return new DeckhandError("ACTION_UNSUPPORTED", `${adapter} action ${JSON.stringify(action)} is not supported: ${why}`, {
    details: { adapter, action },
    remediation: "Use another action; see docs/adapters.md for what each vendor action maps to.",
  });
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Refuse fields this action does not define: a misread field is worse than an error. */
export function onlyFields(obj: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) throw invalid(`${where}: unknown field ${JSON.stringify(k)}`, k);
  }
}

/**
 * A required point in pixels of the last image: numbers, fractional allowed
 * (the SDKs type coordinates as numbers; a fraction is rounded through the
 * map, on the screen). Bounds are checked when mapped.
 */
export function point(x: unknown, y: unknown, where: string): { x: number; y: number } {
  if (typeof x !== "number" || !Number.isFinite(x) || typeof y !== "number" || !Number.isFinite(y)) {
    throw invalid(`${where} needs numeric x and y (pixels of the last screenshot)`, where);
  }
  return { x, y };
}

/** Where deckhand left the pointer is not known (it never put it anywhere in this session, or lost track). */
export function pointerUnknown(what: string): DeckhandError {
  return new DeckhandError("ACTION_UNSUPPORTED", `${what}: deckhand does not know where the pointer is (it knows only where it put the pointer itself in this session), and will not guess`, {
    details: { reason: "pointer-unknown" },
    remediation: "Give a coordinate, or move the pointer first (Anthropic mouse_move, OpenAI move): deckhand then knows where it is.",
  });
}

/** Modifier names for a click (OpenAI keys[] or Anthropic's text "shift" / "ctrl+shift"). */
export function modifierList(names: string[], field: string): string[] {
  return names.map((n) => {
    const k = normalizeKey(n, { lowerLetters: true });
    if (!MODIFIERS.has(k)) throw invalid(`${field}: ${JSON.stringify(n)} is not a modifier key (ctrl, alt, shift, super)`, field);
    return k;
  });
}

/** One chord of key names -> a press-key (a single key) or a hotkey step. */
export function chordStep(keys: string[]): ImageStep {
  if (keys.length === 1) return { action: "press-key", key: keys[0]! };
  return { action: "hotkey", keys };
}

/** Does any step carry image coordinates, or act at the pointer (and so need the last screenshot's map)? */
export function needsMap(steps: ImageStep[]): boolean {
  return steps.some((s) => "atPointer" in s || ((s.action === "click" || s.action === "scroll") && s.x !== undefined) || s.action === "drag" || s.action === "move");
}

/**
 * Image-pixel steps -> screen-pixel steps through the map; every point is
 * bounds-checked first. `pointer` is where deckhand left the pointer (screen
 * pixels), null when it does not know: a click `atPointer` is then refused
 * (ACTION_UNSUPPORTED, reason pointer-unknown); one whose pointer is outside
 * the last screenshot is COORDINATE_OUT_OF_BOUNDS.
 */
export function toScreenSteps(steps: ImageStep[], map: ImageMap | null, pointer: { x: number; y: number } | null = null): Step[] {
  if (needsMap(steps) && !map) {
    throw new DeckhandError("SCREENSHOT_REQUIRED", "take a screenshot first: coordinates are pixels of the last screenshot of this session, and there is none");
  }
  return steps.map((s): Step => {
    if ("atPointer" in s) {
      const { atPointer: _, ...click } = s;
      if (!pointer) throw pointerUnknown("a click without a coordinate (at the current pointer position)");
      if (!screenInImage(map!, pointer.x, pointer.y)) {
        throw new DeckhandError("COORDINATE_OUT_OF_BOUNDS", `the pointer (screen ${pointer.x}, ${pointer.y}) is outside the last screenshot; give a coordinate`, {
          details: { reason: "pointer-outside-screenshot", screenX: pointer.x, screenY: pointer.y, width: map!.width, height: map!.height },
        });
      }
      return { ...click, x: pointer.x, y: pointer.y };
    }
    if (((s.action === "click" || s.action === "scroll") && s.x !== undefined) || s.action === "move") {
      const p = vendorPointToScreen(map!, s.x, s.y);
      return { ...s, x: p.x, y: p.y };
    }
    if (s.action === "drag" && s.path) return { ...s, path: s.path.map((q, i) => vendorPointToScreen(map!, q.x, q.y, `path[${i}]`)) };
    return s;
  });
}

export function buildProgram(app: string, windowId: number | undefined, steps: Step[]): Program {
  return { app, ...(windowId !== undefined ? { windowId } : {}), steps, observe: false };
}

export function waitStep(ms: number): ImageStep {
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_WAIT_MS) throw invalid(`wait must be between 0 and ${MAX_WAIT_MS / 1000} s`, "duration");
  return { action: "wait", ms: Math.round(ms) };
}

/** "ctrl+a Delete" -> [[ctrl, a], [Delete]]. */
export function keySequence(text: string, lowerLetters: boolean): string[][] {
  const chords = text.split(/\s+/).filter(Boolean);
  if (!chords.length) throw invalid("key needs a key name such as Return or ctrl+s", "text");
  return chords.map((c) => parseChord(c, { lowerLetters, field: "text" }));
}
