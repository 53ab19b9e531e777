// Anthropic computer tool (computer_20250124, computer_20251124): tool_use
// blocks in, tool_result blocks out.
//   {type: "tool_use", id, name: "computer", input: {action: "left_click", coordinate: [x, y]}}
//   {type: "tool_result", tool_use_id, content: [{type: "image", source: {type: "base64", media_type: "image/png", data}}]}
import { DeckhandError } from "../protocol/errors.ts";
import { parseChord, splitChord } from "../protocol/keys.ts";
import {
  chordStep,
  DEFAULT_WAIT_MS,
  invalid,
  isObject,
  keySequence,
  modifierList,
  onlyFields,
  point,
  unsupported,
  waitStep,
  type ImageStep,
  type TranslateOptions,
  type Translation,
} from "./translate.ts";

const CLICKS: Record<string, { button: "left" | "right" | "middle"; count: number }> = {
  left_click: { button: "left", count: 1 },
  right_click: { button: "right", count: 1 },
  middle_click: { button: "middle", count: 1 },
  double_click: { button: "left", count: 2 },
  triple_click: { button: "left", count: 3 },
};

/** The fields each action may carry (besides `action`). */
const FIELDS: Record<string, readonly string[]> = {
  screenshot: [],
  left_click: ["coordinate", "text"],
  right_click: ["coordinate", "text"],
  middle_click: ["coordinate", "text"],
  double_click: ["coordinate", "text"],
  triple_click: ["coordinate", "text"],
  mouse_move: ["coordinate", "text"],
  left_click_drag: ["start_coordinate", "coordinate", "text"],
  left_mouse_down: ["coordinate", "text"],
  left_mouse_up: ["coordinate", "text"],
  scroll: ["coordinate", "scroll_direction", "scroll_amount", "text"],
  type: ["text"],
  key: ["text"],
  hold_key: ["text", "duration"],
  wait: ["duration"],
  cursor_position: [],
  zoom: ["region"],
};
export const ANTHROPIC_ACTIONS = Object.freeze(Object.keys(FIELDS));

/** Actions a deckhand program cannot express; refused with ACTION_UNSUPPORTED and why. */
const UNSUPPORTED: Record<string, string> = {
  left_mouse_down: "a deckhand program has no separate button-down step (a button held across requests is never left pressed); use left_click_drag",
  left_mouse_up: "a deckhand program has no separate button-up step; use left_click_drag",
  cursor_position:
    "the helper protocol has no pointer query, and deckhand restores the pointer after each input, so there is no honest answer; coordinates are always explicit",
};

function coordinate(v: unknown, field: string): { x: number; y: number } {
  if (!Array.isArray(v) || v.length !== 2) throw invalid(`${field} must be [x, y] in pixels of the last screenshot`, field);
  return point(v[0], v[1], field);
}

function modifiers(text: unknown): string[] {
  if (text === undefined || text === null || text === "") return [];
  if (typeof text !== "string") throw invalid("text (keys held during the click) must be a string such as shift or ctrl+shift", "text");
  return modifierList(splitChord(text, { field: "text" }), "text");
}

/** One tool_use input -> what to do, coordinates still in image pixels. */
export function translateAnthropicInput(input: unknown, opts: TranslateOptions = {}): Translation {
  if (!isObject(input)) throw invalid("input must be an object with an action", "input");
  const action = input.action;
  if (typeof action !== "string") throw invalid("input.action must be a string", "action");
  const allowed = FIELDS[action];
  if (!allowed) throw invalid(`input.action ${JSON.stringify(action.slice(0, 40))} is not an Anthropic computer action (${ANTHROPIC_ACTIONS.join(", ")})`, "action");
  if (UNSUPPORTED[action]) throw unsupported("anthropic", action, UNSUPPORTED[action]!);
  onlyFields(input, ["action", ...allowed], `input (${action})`);
  const a = input;
  const click = CLICKS[action];
  if (click) {
    if (a.coordinate === undefined || a.coordinate === null) {
      throw invalid(`${action} needs coordinate: deckhand does not track the pointer, so it never clicks "wherever the pointer is"`, "coordinate");
    }
    const mods = modifiers(a.text);
    const step: ImageStep = { action: "click", ...coordinate(a.coordinate, "coordinate"), button: click.button, ...(click.count > 1 ? { count: click.count } : {}), ...(mods.length ? { modifiers: mods } : {}) };
    return { kind: "steps", steps: [step] };
  }
  switch (action) {
    case "screenshot":
      return { kind: "screenshot" };
    case "zoom":
      return { kind: "zoom", region: a.region };
    case "left_click_drag": {
      if (modifiers(a.text).length) throw unsupported("anthropic", action, "keys held while dragging are not a program step");
      const from = coordinate(a.start_coordinate, "start_coordinate");
      const to = coordinate(a.coordinate, "coordinate");
      return { kind: "steps", steps: [{ action: "drag", path: [from, to], button: "left" }] };
    }
    case "scroll": {
      if (modifiers(a.text).length) throw unsupported("anthropic", action, "keys held while scrolling are not a program step");
      const dir = a.scroll_direction;
      if (dir !== "up" && dir !== "down" && dir !== "left" && dir !== "right") throw invalid("scroll_direction must be up, down, left or right", "scroll_direction");
      const amount = a.scroll_amount ?? 3;
      if (typeof amount !== "number" || !Number.isInteger(amount) || amount < 1 || amount > 100) throw invalid("scroll_amount must be an integer from 1 to 100", "scroll_amount");
      const at = a.coordinate === undefined || a.coordinate === null ? {} : coordinate(a.coordinate, "coordinate");
      return { kind: "steps", steps: [{ action: "scroll", direction: dir, amount, ...at }] };
    }
    case "mouse_move":
      if (modifiers(a.text).length) throw unsupported("anthropic", action, "keys held while moving are not a program step");
      return { kind: "steps", steps: [{ action: "move", ...coordinate(a.coordinate, "coordinate") }] };
    case "hold_key": {
      if (typeof a.text !== "string" || !a.text) throw invalid("hold_key needs text: the key to hold", "text");
      const d = a.duration;
      if (typeof d !== "number" || !Number.isFinite(d) || d <= 0 || d > 10) throw invalid("hold_key needs duration: seconds, above 0 and at most 10", "duration");
      const keys = parseChord(a.text, { lowerLetters: false, field: "text" });
      if (keys.length !== 1) throw unsupported("anthropic", action, "holding a combination is not a program step; hold one key");
      return { kind: "steps", steps: [{ action: "hold-key", key: keys[0]!, ms: Math.max(1, Math.round(d * 1000)) }] };
    }
    case "type":
      if (typeof a.text !== "string" || a.text.length === 0) throw invalid("type needs text", "text");
      return { kind: "steps", steps: [{ action: "type-text", text: a.text }] };
    case "key":
      if (typeof a.text !== "string") throw invalid("key needs text such as Return or ctrl+s", "text");
      return { kind: "steps", steps: keySequence(a.text, false).map(chordStep) };
    case "wait": {
      const d = a.duration;
      if (d !== undefined && d !== null && (typeof d !== "number" || !Number.isFinite(d))) throw invalid("duration must be a number of seconds", "duration");
      return { kind: "steps", steps: [waitStep(typeof d === "number" ? d * 1000 : (opts.waitMs ?? DEFAULT_WAIT_MS))] };
    }
  }
  throw new DeckhandError("INTERNAL", `unhandled Anthropic action ${action}`);
}

export interface AnthropicCall {
  toolUseId: string;
  translation: Translation;
}

/** A tool_use block named "computer" (or a bare input object, which then needs an id from the request). */
export function translateAnthropicCall(call: unknown, fallbackId: string, opts: TranslateOptions = {}): AnthropicCall {
  if (!isObject(call)) throw invalid("call must be an Anthropic tool_use block", "call");
  if (call.type === "tool_use") {
    onlyFields(call, ["type", "id", "name", "input", "caller"], "tool_use");
    if (typeof call.id !== "string" || !call.id) throw invalid("tool_use.id must be a non-empty string", "id");
    if (call.name !== "computer") throw invalid(`tool_use.name must be "computer" (got ${JSON.stringify(String(call.name).slice(0, 40))})`, "name");
    return { toolUseId: call.id, translation: translateAnthropicInput(call.input, opts) };
  }
  if (typeof call.action === "string") return { toolUseId: fallbackId, translation: translateAnthropicInput(call, opts) };
  throw invalid("call must be a tool_use block or an input object with an action", "type");
}

export function anthropicImageResult(toolUseId: string, pngBase64: string): Record<string, unknown> {
  return {
    type: "tool_result",
    tool_use_id: toolUseId,
    content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: pngBase64 } }],
  };
}

export function anthropicErrorResult(toolUseId: string, text: string): Record<string, unknown> {
  return { type: "tool_result", tool_use_id: toolUseId, is_error: true, content: [{ type: "text", text }] };
}
