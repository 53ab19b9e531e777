// OpenAI computer tool (Responses API; tools: [{type: "computer"}], or the
// older {type: "computer_use_preview", display_width, display_height,
// environment}): computer_call items in, computer_call_output items out.
// Field shapes follow the openai SDK (resources/responses: ResponseComputerToolCall,
// ComputerAction, ResponseInputItem.ComputerCallOutput); the vendor fixtures
// are type-checked against them (test/unit/adapters/vendor-types.test.ts).
//   {type: "computer_call", call_id, action: {...} | actions: [{...}, ...], pending_safety_checks: [...]}
//   {type: "computer_call_output", call_id, output: {type: "computer_screenshot", image_url: "data:image/png;base64,..."}}
import { DeckhandError } from "../protocol/errors.ts";
import { MAX_DRAG_POINTS, type Button } from "../protocol/commands.ts";
import { parseKeys } from "../protocol/keys.ts";
import {
  chordStep,
  DEFAULT_WAIT_MS,
  invalid,
  isObject,
  modifierList,
  onlyFields,
  point,
  SCROLL_PX_PER_NOTCH,
  waitStep,
  type ImageStep,
  type TranslateOptions,
  type Translation,
} from "./translate.ts";

type ButtonName = (typeof Button)["options"][number];

/** OpenAI button names -> deckhand buttons. `wheel` is the middle button; back/forward are buttons 4 and 5. */
export const OPENAI_BUTTONS: Record<string, ButtonName> = {
  left: "left",
  right: "right",
  middle: "middle",
  wheel: "middle",
  back: "back",
  forward: "forward",
};

/** The fields each action type may carry (besides `type`). */
const FIELDS: Record<string, readonly string[]> = {
  click: ["x", "y", "button", "keys"],
  double_click: ["x", "y", "keys"],
  scroll: ["x", "y", "scroll_x", "scroll_y", "keys"],
  keypress: ["keys"],
  type: ["text"],
  move: ["x", "y", "keys"],
  drag: ["path", "keys"],
  wait: [],
  screenshot: [],
};
export const OPENAI_ACTIONS = Object.freeze(Object.keys(FIELDS));

function heldKeys(a: Record<string, unknown>, where: string): string[] {
  if (a.keys === undefined || a.keys === null) return [];
  if (!Array.isArray(a.keys) || a.keys.some((k) => typeof k !== "string")) throw invalid(`${where}.keys must be an array of key names`, "keys");
  return modifierList(a.keys as string[], `${where}.keys`);
}

/** `keys` held during a pointer action, as a step's modifiers (absent when none). */
function held(a: Record<string, unknown>, where: string): { modifiers?: string[] } {
  const modifiers = heldKeys(a, where);
  return modifiers.length ? { modifiers } : {};
}

function notches(px: number): number {
  return Math.min(100, Math.max(1, Math.round(Math.abs(px) / SCROLL_PX_PER_NOTCH)));
}

function num(a: Record<string, unknown>, k: string, where: string): number {
  const v = a[k];
  if (typeof v !== "number" || !Number.isFinite(v)) throw invalid(`${where}.${k} must be a number`, k);
  return v;
}

/** One OpenAI action object -> steps in image pixels (a screenshot action -> no steps). */
export function translateOpenAIAction(action: unknown, opts: TranslateOptions = {}, where = "action"): ImageStep[] | "screenshot" {
  if (!isObject(action)) throw invalid(`${where} must be an object with a type`, where);
  const type = action.type;
  if (typeof type !== "string") throw invalid(`${where}.type must be a string`, "type");
  const allowed = FIELDS[type];
  if (!allowed) throw invalid(`${where}.type ${JSON.stringify(type.slice(0, 40))} is not an OpenAI computer action (${OPENAI_ACTIONS.join(", ")})`, "type");
  onlyFields(action, ["type", ...allowed], `${where} (${type})`);
  const a = action;
  switch (type) {
    case "screenshot":
      return "screenshot";
    case "click": {
      const b = a.button ?? "left";
      const button = typeof b === "string" ? OPENAI_BUTTONS[b] : undefined;
      if (!button) throw invalid(`${where}.button must be one of ${Object.keys(OPENAI_BUTTONS).join(", ")}`, "button");
      return [{ action: "click", ...point(a.x, a.y, where), button, ...held(a, where) }];
    }
    case "double_click":
      return [{ action: "click", ...point(a.x, a.y, where), button: "left", count: 2, ...held(a, where) }];
    case "scroll": {
      // keys: held while the wheel turns (each scroll step holds them in its own input).
      const mods = held(a, where);
      const sx = num(a, "scroll_x", where);
      const sy = num(a, "scroll_y", where);
      const at = point(a.x, a.y, where);
      const steps: ImageStep[] = [];
      if (sy !== 0) steps.push({ action: "scroll", direction: sy > 0 ? "down" : "up", amount: notches(sy), ...at, ...mods });
      if (sx !== 0) steps.push({ action: "scroll", direction: sx > 0 ? "right" : "left", amount: notches(sx), ...at, ...mods });
      return steps;
    }
    case "keypress": {
      if (!Array.isArray(a.keys) || a.keys.length === 0 || a.keys.some((k) => typeof k !== "string" || k.length === 0)) {
        throw invalid(`${where}.keys must be a non-empty array of key names`, "keys");
      }
      const keys = parseKeys(a.keys as string[], { lowerLetters: true });
      return [chordStep(keys)];
    }
    case "type":
      if (typeof a.text !== "string") throw invalid(`${where}.text must be a string`, "text");
      return [{ action: "type-text", text: a.text }];
    case "move":
      // keys: held during the move, released after it (the pointer stays).
      return [{ action: "move", ...point(a.x, a.y, where), ...held(a, where) }];
    case "drag": {
      const mods = held(a, where);
      if (!Array.isArray(a.path) || a.path.length < 2) throw invalid(`${where}.path must list at least 2 points {x, y}`, "path");
      if (a.path.length > MAX_DRAG_POINTS) throw invalid(`${where}.path must have at most ${MAX_DRAG_POINTS} points`, "path");
      const path = a.path.map((p, i) => {
        if (!isObject(p)) throw invalid(`${where}.path[${i}] must be {x, y}`, "path");
        onlyFields(p, ["x", "y"], `${where}.path[${i}]`);
        return point(p.x, p.y, `${where}.path[${i}]`);
      });
      return [{ action: "drag", path, button: "left", ...mods }];
    }
    case "wait":
      return [waitStep(opts.waitMs ?? DEFAULT_WAIT_MS)];
  }
  throw new DeckhandError("INTERNAL", `unhandled OpenAI action ${type}`);
}

export interface OpenAICall {
  callId: string;
  translation: Translation;
  pendingSafetyChecks: { id: string; code?: string; message?: string }[];
}

/**
 * `status` of a computer_call item: in_progress, completed or incomplete (the
 * SDK). An incomplete item was cut short (e.g. by max_output_tokens): its
 * action may be truncated, so it is not run.
 */
function checkStatus(status: unknown): void {
  if (status === undefined || status === null || status === "completed" || status === "in_progress") return;
  if (status === "incomplete") {
    throw new DeckhandError("INVALID_ARGUMENTS", 'computer_call.status is "incomplete": the model\'s output was cut short, so its action may be truncated; nothing was run', {
      details: { field: "status", status: "incomplete" },
      remediation: "Do not run an incomplete computer_call: continue the response (or ask the model again) and send the completed item.",
    });
  }
  throw invalid(`computer_call.status must be in_progress, completed or incomplete (got ${JSON.stringify(String(status).slice(0, 40))})`, "status");
}

/**
 * A computer_call item (or a bare action object, which then needs a call id
 * from the request) -> what to do. `actions: [...]` is one batched program;
 * screenshot entries inside a batch are dropped (the reply carries one anyway).
 */
export function translateOpenAICall(call: unknown, fallbackCallId: string, opts: TranslateOptions = {}): OpenAICall {
  if (!isObject(call)) throw invalid("call must be an OpenAI computer_call item", "call");
  let callId = fallbackCallId;
  let pending: OpenAICall["pendingSafetyChecks"] = [];
  let body: Record<string, unknown> = call;
  if (call.type === "computer_call") {
    onlyFields(call, ["type", "id", "call_id", "action", "actions", "pending_safety_checks", "status"], "computer_call");
    if (typeof call.call_id !== "string" || !call.call_id) throw invalid("computer_call.call_id must be a non-empty string", "call_id");
    checkStatus(call.status);
    callId = call.call_id;
    if (call.pending_safety_checks !== undefined && call.pending_safety_checks !== null) {
      if (!Array.isArray(call.pending_safety_checks) || call.pending_safety_checks.some((c) => !isObject(c) || typeof c.id !== "string")) {
        throw invalid("computer_call.pending_safety_checks must be an array of {id, code, message}", "pending_safety_checks");
      }
      pending = call.pending_safety_checks as OpenAICall["pendingSafetyChecks"];
    }
    body = call;
  } else if (typeof call.type === "string") {
    // A bare action object.
    const t = translateOpenAIAction(call, opts);
    return { callId, pendingSafetyChecks: [], translation: t === "screenshot" ? { kind: "screenshot" } : { kind: "steps", steps: t } };
  } else {
    throw invalid("call must be a computer_call item or an action object with a type", "type");
  }
  const hasOne = body.action !== undefined && body.action !== null;
  const hasMany = body.actions !== undefined && body.actions !== null;
  if (hasOne === hasMany) throw invalid("computer_call must carry exactly one of action or actions", "action");
  if (hasOne) {
    const t = translateOpenAIAction(body.action, opts);
    return { callId, pendingSafetyChecks: pending, translation: t === "screenshot" ? { kind: "screenshot" } : { kind: "steps", steps: t } };
  }
  if (!Array.isArray(body.actions) || body.actions.length === 0) throw invalid("computer_call.actions must be a non-empty array", "actions");
  const steps: ImageStep[] = [];
  let onlyScreenshots = true;
  body.actions.forEach((act, i) => {
    const t = translateOpenAIAction(act, opts, `actions[${i}]`);
    if (t !== "screenshot") {
      onlyScreenshots = false;
      steps.push(...t);
    }
  });
  return { callId, pendingSafetyChecks: pending, translation: onlyScreenshots ? { kind: "screenshot" } : { kind: "steps", steps } };
}

export function openaiOutput(callId: string, pngBase64: string, acknowledged: OpenAICall["pendingSafetyChecks"]): Record<string, unknown> {
  return {
    type: "computer_call_output",
    call_id: callId,
    ...(acknowledged.length ? { acknowledged_safety_checks: acknowledged } : {}),
    output: { type: "computer_screenshot", image_url: `data:image/png;base64,${pngBase64}` },
  };
}
