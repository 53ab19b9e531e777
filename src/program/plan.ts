// Planning: what one step will ask of the helper, decided before anything
// is sent, so that a refusal sends nothing.
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import type { Element } from "../session/snapshot.ts";
import type { InputStep } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import { parseChord, parseKey, parseKeys } from "../protocol/keys.ts";

/** What a step will ask of the helper. Built before dispatch so refusals send nothing. */
export type Plan =
  | {
      kind: "element";
      action: "click" | "set_value" | "type_text" | "select_text" | "focus" | "scroll_into_view" | "secondary";
      element: Element;
      text?: string;
      start?: number;
      end?: number;
      actionName?: string;
      /** Input that follows, e.g. a key pressed once the element has focus. */
      then?: InputStep[];
      /** A point click's element lives in the window the hit test found. */
      hitWindow?: number;
    }
  | { kind: "input"; steps: InputStep[]; pointer: boolean; keyboard: boolean; keepPointer?: boolean }
  | { kind: "wait"; ms: number };

const DRAG_STEP_MS = 15;
const SCROLL: Record<string, [number, number]> = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] };

export async function planStep(engine: Engine, step: Step, element: Element | null, app: ResolvedApp): Promise<Plan> {
  switch (step.action) {
    case "click":
      if (element) return { kind: "element", action: "click", element };
      return await planPointClick(engine, step, app);
    case "set-value":
      return { kind: "element", action: "set_value", element: element!, text: step.value };
    case "type-text":
      if (element) return { kind: "element", action: "type_text", element, text: step.text };
      return { kind: "input", steps: [{ kind: "type", text: step.text }], pointer: false, keyboard: true };
    case "press-key": {
      const tap: InputStep = { kind: "tap", keys: parseChord(step.key, { field: "key" }), repeat: step.repeat ?? 1 };
      if (element) return { kind: "element", action: "focus", element, then: [tap] };
      return { kind: "input", steps: [tap], pointer: false, keyboard: true };
    }
    case "hotkey":
      return { kind: "input", steps: [{ kind: "tap", keys: parseKeys(step.keys), repeat: 1 }], pointer: false, keyboard: true };
    case "scroll": {
      if (element && step.direction === undefined) return { kind: "element", action: "scroll_into_view", element };
      if (element) throw new DeckhandError("INVALID_ARGUMENTS", "scroll with --element-index scrolls it into view; drop --direction, or scroll by --x/--y");
      const [sx, sy] = SCROLL[step.direction ?? "down"]!;
      const n = step.amount ?? 3;
      return {
        kind: "input",
        steps: [{ kind: "scroll", x: step.x ?? null, y: step.y ?? null, dx: sx * n, dy: sy * n }],
        pointer: true,
        keyboard: false,
      };
    }
    case "drag": {
      const button = step.button ?? "left";
      const [first, ...rest] = step.path;
      // Toolkits need time between drag events: GTK compresses motion that
      // arrives in one burst and reports the release where the pointer was
      // restored. A short pause per point, as a person's drag has.
      const pause: InputStep = { kind: "wait", ms: DRAG_STEP_MS };
      const steps: InputStep[] = [
        { kind: "move", x: first!.x, y: first!.y },
        pause,
        { kind: "button", button, down: true },
        ...rest.flatMap((p) => [pause, { kind: "move" as const, x: p.x, y: p.y }]),
        pause,
        { kind: "button", button, down: false },
        pause,
      ];
      return { kind: "input", steps, pointer: true, keyboard: false };
    }
    case "select-text":
      return { kind: "element", action: "select_text", element: element!, start: step.start, end: step.end };
    case "focus":
      return { kind: "element", action: "focus", element: element! };
    case "perform-secondary-action":
      if (!element!.actions.includes(step.name)) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `element ${element!.index} does not advertise action ${JSON.stringify(step.name)}`, {
          details: { elementIndex: element!.index, available: element!.actions.join(",") },
        });
      }
      return { kind: "element", action: "secondary", element: element!, actionName: step.name };
    case "wait":
      return { kind: "wait", ms: step.ms };
    case "move":
      return { kind: "input", steps: [{ kind: "move", x: step.x, y: step.y }], pointer: true, keyboard: false, keepPointer: true };
    case "hold-key": {
      const key = parseKey(step.key);
      return {
        kind: "input",
        steps: [
          { kind: "key", key, down: true },
          { kind: "wait", ms: step.ms },
          { kind: "key", key, down: false },
        ],
        pointer: false,
        keyboard: true,
      };
    }
  }
}

/**
 * A left single click at a point: if the point hit-tests to an actionable
 * element of the target app, press it through accessibility (background);
 * otherwise it is foreground input. A point over another app is refused.
 */
async function planPointClick(engine: Engine, step: Extract<Step, { action: "click" }>, app: ResolvedApp): Promise<Plan> {
  const { supervisor, hello } = await engine.helper();
  const button = step.button ?? "left";
  const count = step.count ?? 1;
  const modifiers = step.modifiers?.length ? parseKeys(step.modifiers, { field: "modifiers" }) : [];
  const input: Plan = {
    kind: "input",
    steps: [{ kind: "click", x: step.x!, y: step.y!, button, count, modifiers }],
    pointer: true,
    keyboard: modifiers.length > 0,
  };
  if (!hello.capabilities.hit_test?.supported) return input;
  const { result } = await supervisor.request("hit_test", { x: step.x!, y: step.y! });
  if (result.pid !== app.pid) {
    // Over another app, or over no window at all (the root): never ours to click.
    throw new DeckhandError("POLICY_DENIED", result.pid === null ? "the point is not over any window of the target app" : "the point is over another application's window", {
      details: { reason: "point-outside-target", ...(result.pid !== null ? { pid: result.pid } : {}) },
    });
  }
  const n = result.node;
  if (n && button === "left" && count === 1 && modifiers.length === 0 && pressLike(n.role, n.actions) && result.window_id !== null) {
    const element: Element = {
      index: -1,
      role: n.role,
      title: n.name,
      value: null,
      label: n.description,
      enabled: true,
      focused: false,
      secure: n.secure,
      bounds: n.bounds,
      actions: n.actions,
      locator: { kind: "atspi-path", path: n.path, role: n.role, identifier: n.identifier, name: n.name },
    };
    return { kind: "element", action: "click", element, hitWindow: result.window_id };
  }
  return input;
}

/**
 * Controls whose default action is what a left click does. A click into a
 * text field or a canvas also moves focus and the caret, which no default
 * action does: those stay foreground input.
 */
const PRESS_ROLES = /^(push button|button|toggle button|check box|radio button|menu item|check menu item|radio menu item|menu|link|page tab|combo box|spin button)$/;
const PRESS_ACTIONS = new Set(["click", "press", "activate", "toggle", "jump", "open"]);
function pressLike(role: string, actions: string[]): boolean {
  return PRESS_ROLES.test(role) && actions.length > 0 && PRESS_ACTIONS.has(actions[0]!.toLowerCase());
}

export function capabilityFor(plan: Plan): string[] {
  if (plan.kind === "element") {
    const caps = [`action.${plan.action}`];
    if (plan.then) caps.push("input.keyboard", "input.focus_guard");
    return caps;
  }
  if (plan.kind === "input") return [...(plan.pointer ? ["input.pointer"] : []), ...(plan.keyboard ? ["input.keyboard", "input.focus_guard"] : [])];
  return [];
}
