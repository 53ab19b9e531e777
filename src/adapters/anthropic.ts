// Anthropic computer use: tool_use blocks in, tool_result blocks out. Two forms:
//
// * the single tool (computer_20241022, computer_20250124, computer_20251124;
//   beta Messages API): one tool named "computer", the action in input.action
//     {type: "tool_use", id, name: "computer", input: {action: "left_click", coordinate: [x, y]}}
// * the computer toolset (computer_toolset_20260801; the Messages API): each
//   action is its own tool, named as the action, stamped toolset_name "computer",
//   its input the action's parameters (no `action`)
//     {type: "tool_use", id, name: "left_click", toolset_name: "computer", caller: {type: "direct"}, input: {coordinate: [x, y]}}
//
// Both answer with a tool_result; a toolset member's carries toolset_name:
//   {type: "tool_result", tool_use_id, [toolset_name: "computer",] content: [{type: "image", source: {type: "base64", media_type: "image/png", data}}]}
// Field shapes follow @anthropic-ai/sdk (resources/messages: Computer*Input,
// ComputerToolUseBlock, ToolUseBlockParam, ToolResultBlockParam); the vendor
// fixtures are type-checked against them (test/unit/adapters/vendor-types.test.ts).
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

/** The single-tool versions (`type` of the tools[] entry, name "computer"). */
export const ANTHROPIC_TOOL_VERSIONS = Object.freeze(["computer_20241022", "computer_20250124", "computer_20251124"] as const);
/** The toolset (`type` of the tools[] entry, which carries no name) and the toolset_name its members' blocks carry. */
export const ANTHROPIC_TOOLSET_TYPE = "computer_toolset_20260801";
export const ANTHROPIC_TOOLSET_NAME = "computer";

const CLICKS: Record<string, { button: "left" | "right" | "middle"; count: number }> = {
  left_click: { button: "left", count: 1 },
  right_click: { button: "right", count: 1 },
  middle_click: { button: "middle", count: 1 },
  double_click: { button: "left", count: 2 },
  triple_click: { button: "left", count: 3 },
};

/**
 * The fields each action may carry (besides `action` in the single-tool
 * form): the union of what the single-tool versions and the toolset's member
 * inputs define. Anything else is refused, naming the field.
 */
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
  key: ["text", "repeat"],
  hold_key: ["text", "duration"],
  wait: ["duration"],
  cursor_position: [],
  zoom: ["region"],
};
/** Every action of the single tool, and every member of the toolset (the same 17 names). */
export const ANTHROPIC_ACTIONS = Object.freeze(Object.keys(FIELDS));

/** Actions a deckhand program cannot express; refused with ACTION_UNSUPPORTED and why. */
const UNSUPPORTED: Record<string, string> = {
  left_mouse_down: "a deckhand program has no separate button-down step (a button held across requests is never left pressed); use left_click_drag",
  left_mouse_up: "a deckhand program has no separate button-up step; use left_click_drag",
};

/** At most this many steps in one program (src/protocol/program.ts). */
const MAX_PROGRAM_STEPS = 100;

function coordinate(v: unknown, field: string): { x: number; y: number } {
  if (!Array.isArray(v) || v.length !== 2) throw invalid(`${field} must be [x, y] in pixels of the last screenshot`, field);
  return point(v[0], v[1], field);
}

/** `text` on a pointer action: keys held during it ("shift", "ctrl+shift"). */
function modifiers(text: unknown): string[] {
  if (text === undefined || text === null || text === "") return [];
  if (typeof text !== "string") throw invalid("text (keys held during the action) must be a string such as shift or ctrl+shift", "text");
  return modifierList(splitChord(text, { field: "text" }), "text");
}

const held = (mods: string[]) => (mods.length ? { modifiers: mods } : {});

/**
 * One action with its parameters (the single tool's input without `action`,
 * or a toolset member's input) -> what to do, coordinates still in image pixels.
 */
export function translateAnthropicAction(action: string, input: Record<string, unknown>, opts: TranslateOptions = {}): Translation {
  const allowed = FIELDS[action];
  if (!allowed) throw invalid(`${JSON.stringify(action.slice(0, 40))} is not an Anthropic computer action (${ANTHROPIC_ACTIONS.join(", ")})`, "action");
  if (UNSUPPORTED[action]) throw unsupported("anthropic", action, UNSUPPORTED[action]!);
  onlyFields(input, allowed, `input (${action})`);
  const a = input;
  const click = CLICKS[action];
  if (click) {
    const mods = modifiers(a.text);
    const how = { button: click.button, ...(click.count > 1 ? { count: click.count } : {}), ...held(mods) };
    // No coordinate: "the current cursor position" (the SDK). The session fills
    // in where deckhand left the pointer, or refuses when it does not know.
    if (a.coordinate === undefined || a.coordinate === null) return { kind: "steps", steps: [{ action: "click", ...how, atPointer: true }] };
    const step: ImageStep = { action: "click", ...coordinate(a.coordinate, "coordinate"), ...how };
    return { kind: "steps", steps: [step] };
  }
  switch (action) {
    case "screenshot":
      return { kind: "screenshot" };
    case "zoom":
      return { kind: "zoom", region: a.region };
    case "cursor_position":
      return { kind: "cursor" };
    case "left_click_drag": {
      const mods = modifiers(a.text);
      const from = coordinate(a.start_coordinate, "start_coordinate");
      const to = coordinate(a.coordinate, "coordinate");
      return { kind: "steps", steps: [{ action: "drag", path: [from, to], button: "left", ...held(mods) }] };
    }
    case "scroll": {
      const mods = modifiers(a.text);
      const dir = a.scroll_direction;
      if (dir !== "up" && dir !== "down" && dir !== "left" && dir !== "right") throw invalid("scroll_direction must be up, down, left or right", "scroll_direction");
      const amount = a.scroll_amount ?? 3;
      if (typeof amount !== "number" || !Number.isInteger(amount) || amount < 1 || amount > 100) throw invalid("scroll_amount must be an integer from 1 to 100", "scroll_amount");
      // No coordinate: the wheel turns where the pointer is (the SDK's "current cursor position").
      const at = a.coordinate === undefined || a.coordinate === null ? {} : coordinate(a.coordinate, "coordinate");
      return { kind: "steps", steps: [{ action: "scroll", direction: dir, amount, ...at, ...held(mods) }] };
    }
    case "mouse_move": {
      const mods = modifiers(a.text);
      return { kind: "steps", steps: [{ action: "move", ...coordinate(a.coordinate, "coordinate"), ...held(mods) }] };
    }
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
    case "key": {
      if (typeof a.text !== "string") throw invalid("key needs text such as Return or ctrl+s", "text");
      const repeat = a.repeat ?? 1;
      if (typeof repeat !== "number" || !Number.isInteger(repeat) || repeat < 1 || repeat > 100) throw invalid("repeat must be an integer from 1 to 100 (times to press)", "repeat");
      const chords = keySequence(a.text, false);
      if (repeat === 1) return { kind: "steps", steps: chords.map(chordStep) };
      // One chord pressed `repeat` times: one press-key step (its repeat is one input, focus-checked per press).
      if (chords.length === 1) return { kind: "steps", steps: [{ action: "press-key", key: chords[0]!.join("+"), repeat }] };
      // A sequence ("ctrl+a Delete"), the whole of it `repeat` times.
      if (chords.length * repeat > MAX_PROGRAM_STEPS) throw invalid(`a key sequence of ${chords.length} chords repeated ${repeat} times is more than ${MAX_PROGRAM_STEPS} steps`, "repeat");
      return { kind: "steps", steps: Array.from({ length: repeat }, () => chords.map(chordStep)).flat() };
    }
    case "wait": {
      const d = a.duration;
      if (d !== undefined && d !== null && (typeof d !== "number" || !Number.isFinite(d))) throw invalid("duration must be a number of seconds", "duration");
      return { kind: "steps", steps: [waitStep(typeof d === "number" ? d * 1000 : (opts.waitMs ?? DEFAULT_WAIT_MS))] };
    }
  }
  throw new DeckhandError("INTERNAL", `unhandled Anthropic action ${action}`);
}

/** One single-tool input {action, ...} -> what to do, coordinates still in image pixels. */
export function translateAnthropicInput(input: unknown, opts: TranslateOptions = {}): Translation {
  if (!isObject(input)) throw invalid("input must be an object with an action", "input");
  const { action, ...rest } = input;
  if (typeof action !== "string") throw invalid("input.action must be a string", "action");
  if (!FIELDS[action]) throw invalid(`input.action ${JSON.stringify(action.slice(0, 40))} is not an Anthropic computer action (${ANTHROPIC_ACTIONS.join(", ")})`, "action");
  return translateAnthropicAction(action, rest, opts);
}

export interface AnthropicCall {
  toolUseId: string;
  /** "computer" for a toolset member call (its tool_result must carry it), null for the single tool. */
  toolsetName: string | null;
  translation: Translation;
}

/**
 * A tool_use block: the single tool (name "computer", toolset_name absent or
 * null) or a computer toolset member (toolset_name "computer", name = the
 * action). `caller` and `cache_control` are accepted and carry no meaning
 * here. A bare single-tool input object needs an id from the request.
 */
export function translateAnthropicCall(call: unknown, fallbackId: string, opts: TranslateOptions = {}): AnthropicCall {
  if (!isObject(call)) throw invalid("call must be an Anthropic tool_use block", "call");
  if (call.type === "tool_use") {
    onlyFields(call, ["type", "id", "name", "input", "caller", "toolset_name", "cache_control"], "tool_use");
    if (typeof call.id !== "string" || !call.id) throw invalid("tool_use.id must be a non-empty string", "id");
    if (call.caller !== undefined && call.caller !== null && !isObject(call.caller)) throw invalid('tool_use.caller must be an object such as {"type": "direct"}', "caller");
    const name = String(call.name).slice(0, 40);
    const toolset = call.toolset_name;
    if (toolset !== undefined && toolset !== null) {
      if (toolset !== ANTHROPIC_TOOLSET_NAME) {
        throw invalid(`tool_use.toolset_name must be "${ANTHROPIC_TOOLSET_NAME}" (the ${ANTHROPIC_TOOLSET_TYPE} toolset; got ${JSON.stringify(String(toolset).slice(0, 40))})`, "toolset_name");
      }
      if (typeof call.name !== "string" || !FIELDS[call.name]) {
        throw invalid(`tool_use.name ${JSON.stringify(name)} is not a member of the computer toolset (${ANTHROPIC_ACTIONS.join(", ")})`, "name");
      }
      if (!isObject(call.input)) throw invalid("tool_use.input must be an object: the member's parameters", "input");
      return { toolUseId: call.id, toolsetName: ANTHROPIC_TOOLSET_NAME, translation: translateAnthropicAction(call.name, call.input, opts) };
    }
    if (call.name !== "computer") {
      const hint = typeof call.name === "string" && FIELDS[call.name] ? `; a computer toolset member (${ANTHROPIC_TOOLSET_TYPE}) carries toolset_name "${ANTHROPIC_TOOLSET_NAME}"` : "";
      throw invalid(`tool_use.name must be "computer" (got ${JSON.stringify(name)})${hint}`, "name");
    }
    return { toolUseId: call.id, toolsetName: null, translation: translateAnthropicInput(call.input, opts) };
  }
  if (typeof call.action === "string") return { toolUseId: fallbackId, toolsetName: null, translation: translateAnthropicInput(call, opts) };
  throw invalid("call must be a tool_use block or an input object with an action", "type");
}

/** The id and toolset of a tool_use block as far as they can be read, for an error reply to a call that did not translate. */
export function anthropicCallIds(call: unknown): { toolUseId: string | null; toolsetName: string | null } {
  if (!isObject(call) || call.type !== "tool_use") return { toolUseId: null, toolsetName: null };
  return {
    toolUseId: typeof call.id === "string" && call.id ? call.id : null,
    toolsetName: typeof call.toolset_name === "string" && call.toolset_name ? call.toolset_name : null,
  };
}

function toolResult(toolUseId: string, toolsetName: string | null, rest: Record<string, unknown>): Record<string, unknown> {
  return { type: "tool_result", tool_use_id: toolUseId, ...(toolsetName ? { toolset_name: toolsetName } : {}), ...rest };
}

export function anthropicImageResult(toolUseId: string, pngBase64: string, toolsetName: string | null = null): Record<string, unknown> {
  return toolResult(toolUseId, toolsetName, { content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: pngBase64 } }] });
}

/** cursor_position's answer, as the SDK's computer toolset renders one: "X=<x>,Y=<y>" in pixels of the last screenshot. */
export function anthropicCursorResult(toolUseId: string, p: { x: number; y: number }, toolsetName: string | null = null): Record<string, unknown> {
  return toolResult(toolUseId, toolsetName, { content: [{ type: "text", text: `X=${p.x},Y=${p.y}` }] });
}

export function anthropicErrorResult(toolUseId: string, text: string, toolsetName: string | null = null): Record<string, unknown> {
  return toolResult(toolUseId, toolsetName, { is_error: true, content: [{ type: "text", text }] });
}
