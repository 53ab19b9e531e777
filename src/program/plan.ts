// Planning: what one step will ask of the helper, decided before anything
// is sent, so that a refusal sends nothing.
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import type { ActionName } from "../protocol/actions.ts";
import { elementOf, isSecureNode, locatorKindOf, rememberedSecure, resolveNativeAction, windowKeyOf, type Element } from "../session/snapshot.ts";
import type { InputStep, WireNode } from "../wire/messages.ts";
import { PRESS_ACTIONS, PRESS_ROLES, type NodeAction } from "../wire/vocabulary.ts";
import type { HelperPort, SafetyPort, StorePort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { SnapshotStore } from "../session/store.ts";
import { parseChord, parseKey, parseKeys } from "../protocol/keys.ts";
import { assertPointInScope, outsideTarget, pointerScope, type PointerScope } from "./pointer.ts";
import { appPointerScope, pointVerdict } from "./pointer.ts"; // issue 15: click
import type { WireWindow } from "../wire/messages.ts"; // issue 15: click
import { dragMotion, liveDragEnds, type DropCheck } from "./element-drag.ts";
// ---- issue 14: OCR
import { isOcrElement, ocrClickPoint, refuseOcrAction } from "./ocr-point.ts";
// ---- end OCR

/** What a step will ask of the helper. Built before dispatch so refusals send nothing. */
export type Plan =
  | {
      kind: "element";
      action: "click" | "set_value" | "type_text" | "select_text" | "focus" | "scroll_into_view" | "secondary";
      element: Element;
      text?: string;
      start?: number;
      end?: number;
      /** secondary: the native name of the advertised action (element_action's action_name). */
      actionName?: string;
      /** Input that follows, e.g. a key pressed once the element has focus. */
      then?: InputStep[];
      /** A point click's element lives in the window the hit test found. */
      hitWindow?: number;
    }
  | {
      kind: "input";
      steps: InputStep[];
      pointer: boolean;
      keyboard: boolean;
      keepPointer?: boolean;
      /** Pointer input: the target's allowed windows, sent as the helper's pointer guard. */
      guard?: PointerScope;
      /** A middle-button press (an X primary-selection paste): refused while a secure field has focus. */
      pastes?: boolean;
      /** An element drag: what to read back from the drop target after the input (element-drag.ts). */
      drop?: DropCheck;
      // ---- issue 14: OCR
      /** A click on text read with OCR (src/program/ocr-point.ts): the element clicked at its centre. */
      ocr?: Element;
      // ---- end OCR
    }
  | { kind: "wait"; ms: number }
  // ---- issue 15: click
  /**
   * A granted click at a point in one helper request (point_click): the
   * helper checks the window there against the guard, holds the click when
   * a name under the point may be sensitive (`words`: the confirm decision
   * then sees the chain, src/program/point-click.ts), presses a press-like
   * node (`press`) or sends the click as input.
   */
  | { kind: "point"; x: number; y: number; button: "left" | "right" | "back" | "forward"; count: number; guard: PointerScope; words: readonly string[]; press: boolean }
  // ---- end click
  // ---- issue 13: clipboard
  /** Text through the clipboard (the helper's paste op: own it, send the chord under the focus guard, restore). */
  | { kind: "paste"; element: Element | null; text: string; selection: "clipboard" | "primary"; restore: boolean; chord: string[] };
  // ---- end clipboard

type StepOf<A extends ActionName> = Extract<Step, { action: A }>;

/**
 * What each action needs before it is planned, read by program validation
 * and the `capabilities` report (src/program/validate.ts), so a program
 * never starts without what its steps will ask for.
 *
 * - `element` / `point`: the helper capabilities by target (`element` when
 *   the step names an element, `point` otherwise); each inner list is one
 *   need that any of its capabilities satisfies. No entry: that form does
 *   not exist.
 * - `foreground`: whether the step is foreground input (the real pointer or
 *   keyboard, under the operator's grant) whatever the screen looks like:
 *   "always", "point" (when it names no element), or a test of the step.
 * - `input`: what a point form that is definitely foreground input needs
 *   instead of `point` (a click that cannot take the accessibility route).
 */
export const ACTION_NEEDS: {
  [A in ActionName]: { element?: string[][]; point?: string[][]; input?: string[][]; foreground?: "always" | "point" | ((step: StepOf<A>) => boolean) };
} = {
  click: {
    element: [["action.click"]],
    point: [["input.pointer", "action.click"]],
    input: [["input.pointer"], ["input.pointer_guard"]],
    // A plain left click at a point may hit an element (background route); anything else is input.
    foreground: (s) => s.elementIndex === undefined && ((s.button ?? "left") !== "left" || (s.count ?? 1) !== 1 || (s.modifiers?.length ?? 0) > 0),
  },
  "set-value": { element: [["action.set_value"]] },
  // Keys are sent only with the focus guard: a helper that cannot confine
  // them to the target window is refused keyboard input.
  "type-text": { element: [["action.type_text"]], point: [["input.keyboard"], ["input.focus_guard"]], foreground: "point" },
  "press-key": { element: [["action.focus"], ["input.keyboard"], ["input.focus_guard"]], point: [["input.keyboard"], ["input.focus_guard"]], foreground: "always" },
  hotkey: { point: [["input.keyboard"], ["input.focus_guard"]], foreground: "always" },
  // Pointer events are sent only with the pointer guard: a helper that cannot
  // confine them to the target's allowed windows is refused pointer input.
  // (A point click may still take the accessibility route; as input it needs
  // the guard too: its `input`.)
  scroll: { element: [["action.scroll_into_view"]], point: [["input.pointer"], ["input.pointer_guard"]], foreground: "point" },
  // An element drag reads both elements' live bounds (and the target after the drop) from the tree.
  drag: { element: [["get_tree"], ["input.pointer"], ["input.pointer_guard"]], point: [["input.pointer"], ["input.pointer_guard"]], foreground: "always" },
  "select-text": { element: [["action.select_text"]] },
  focus: { element: [["action.focus"]] },
  "perform-secondary-action": { element: [["action.secondary"]] },
  wait: { point: [] },
  move: { point: [["input.pointer"], ["input.pointer_guard"]], foreground: "always" },
  "hold-key": { point: [["input.keyboard"], ["input.focus_guard"]], foreground: "always" },
  // ---- issue 13: clipboard
  // The chord is keyboard input: only with the focus guard, under the grant.
  paste: {
    element: [["clipboard.paste"], ["action.focus"], ["focused_element"], ["input.keyboard"], ["input.focus_guard"]],
    point: [["clipboard.paste"], ["input.keyboard"], ["input.focus_guard"]],
    foreground: "always",
  },
  // ---- end clipboard
};

const DRAG_STEP_MS = 15;
const SCROLL: Record<string, [number, number]> = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] };

/** The elements a step names besides elementIndex (an element drag's from and to), looked up in the snapshot of window `windowId`. */
export interface NamedElements {
  elements: readonly Element[];
  windowId: number;
}

/**
 * `actionPairs`: the snapshot's pairing of the element's actions (see
 * Snapshot.actionPairs), for a secondary action named neutrally.
 * `named`: the elements an element drag names (stepElementIndices order).
 */
export async function planStep(
  engine: HelperPort & StorePort & SafetyPort,
  step: Step,
  element: Element | null,
  app: ResolvedApp,
  actionPairs?: readonly NodeAction[],
  named?: NamedElements,
  /** issue 15: click. The target's windows as the program listed them (a point click plans without listing again). */
  appWindows?: readonly WireWindow[],
): Promise<Plan> {
  // ---- issue 14: OCR (text read from the image is clicked by point, nothing else; src/program/ocr-point.ts)
  refuseOcrAction(step, element, named?.elements);
  if (step.action === "click" && isOcrElement(element)) {
    const at = ocrClickPoint(element!);
    return await planPointClick(engine, { action: "click", x: at.x, y: at.y }, app, await pointerScope(engine, app), element!);
  }
  // ---- end OCR
  switch (step.action) {
    case "click":
      if (element) return { kind: "element", action: "click", element };
      return (await planOneRequestClick(engine, step, app, appWindows)) ?? (await planPointClick(engine, step, app, await pointerScope(engine, app)));
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
      // With an element the step has no direction or point (its rules): scroll it into view.
      if (element) return { kind: "element", action: "scroll_into_view", element };
      const [sx, sy] = SCROLL[step.direction ?? "down"]!;
      const n = step.amount ?? 3;
      const guard = await pointerScope(engine, app);
      // Without a point the wheel turns where the pointer is: only the helper's guard knows where that is.
      if (step.x !== undefined && step.y !== undefined) assertPointInScope(guard, step.x, step.y, `the scroll point (${step.x}, ${step.y})`);
      return {
        kind: "input",
        // Modifiers held: see holdingModifiers (keyboard is then true: key-downs carry the focus guard).
        ...holdingModifiers(step.modifiers, [{ kind: "scroll", x: step.x ?? null, y: step.y ?? null, dx: sx * n, dy: sy * n }]),
        pointer: true,
        guard,
      };
    }
    case "drag": {
      const button = step.button ?? "left";
      if (step.fromElementIndex !== undefined) return await planElementDrag(engine, step, app, button, named!);
      const path = step.path!;
      const [first, ...rest] = path;
      // Every point of the path, not only its ends: a drag is refused before anything is sent.
      const guard = await pointerScope(engine, app);
      path.forEach((p, i) => assertPointInScope(guard, p.x, p.y, `drag point ${i} (${p.x}, ${p.y})`, { point: i }));
      // A middle-button release pastes the primary selection where it lands.
      if (button === "middle") await refuseSecureAt(engine, app, guard, path.at(-1)!, "a middle-button drag ending");
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
      // Modifiers held: see holdingModifiers (keyboard is then true: key-downs carry the focus guard).
      return { kind: "input", ...holdingModifiers(step.modifiers, steps), pointer: true, guard, ...(button === "middle" ? { pastes: true } : {}) };
    }
    case "select-text":
      return { kind: "element", action: "select_text", element: element!, start: step.start, end: step.end };
    case "focus":
      return { kind: "element", action: "focus", element: element! };
    case "perform-secondary-action": {
      // Named by its neutral name ("expand") or the platform's; the helper is sent the platform's.
      const native = resolveNativeAction(element!, step.name, actionPairs);
      if (native === null) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `element ${element!.index} does not advertise action ${JSON.stringify(step.name)}`, {
          details: { elementIndex: element!.index, available: element!.actions.join(",") },
        });
      }
      return { kind: "element", action: "secondary", element: element!, actionName: native };
    }
    case "wait":
      return { kind: "wait", ms: step.ms };
    case "move": {
      const guard = await pointerScope(engine, app);
      assertPointInScope(guard, step.x, step.y, `the move point (${step.x}, ${step.y})`);
      // Modifiers held: see holdingModifiers (keyboard is then true: key-downs carry the focus guard).
      return { kind: "input", ...holdingModifiers(step.modifiers, [{ kind: "move", x: step.x, y: step.y }]), pointer: true, keepPointer: true, guard };
    }
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
    // ---- issue 13: clipboard
    case "paste": {
      // Never into a secure field (snapshot elements carry the remembered ones
      // as secure): refused before the clipboard is touched, as type-text is.
      if (element && isSecureNode(element)) {
        throw new DeckhandError("POLICY_DENIED", `paste into element ${element.index}, a secure (password) field, is refused`, {
          details: { source: "builtin", rule: "builtin:secure_field", reason: "paste", elementIndex: element.index, delivery: "not_dispatched" },
        });
      }
      return { kind: "paste", element, text: step.text, selection: step.selection ?? "clipboard", restore: step.restore ?? true, chord: parseChord(step.chord ?? "ctrl+v", { field: "chord" }) };
    }
    // ---- end clipboard
  }
}

/**
 * drag --from-element-index A --to-element-index B: the centres of both
 * elements' LIVE bounds (element-drag.ts liveDragEnds), every point of the
 * motion inside the target's allowed windows (the pointer guard), a
 * middle-button release never over a secure field; the drop target is read
 * back after the input (the plan's `drop`).
 */
async function planElementDrag(engine: HelperPort & StorePort & SafetyPort, step: StepOf<"drag">, app: ResolvedApp, button: NonNullable<StepOf<"drag">["button"]>, named: NamedElements): Promise<Plan> {
  const [from, to] = named.elements as [Element, Element];
  const ends = await liveDragEnds(engine, app, named.windowId, from, to);
  const motion = dragMotion(ends.from.point, ends.to.point, button);
  const guard = await pointerScope(engine, app);
  motion.forEach((s, i) => {
    if (s.kind === "move") assertPointInScope(guard, s.x, s.y, `the drag's point (${s.x}, ${s.y})`, { point: i });
  });
  if (button === "middle") await refuseSecureAt(engine, app, guard, ends.to.point, "a middle-button drag ending");
  return {
    kind: "input",
    ...holdingModifiers(step.modifiers, motion),
    pointer: true,
    guard,
    drop: { pid: app.pid, ...ends },
    ...(button === "middle" ? { pastes: true } : {}),
  };
}

/**
 * A left single click at a point: if the point hit-tests to an actionable
 * element of the target app, press it through accessibility (background);
 * otherwise it is foreground input. A point over another app, over a window
 * of the target that policy denies (e.g. by a window_title rule), or over
 * another window's frame or title bar is refused, with or without the grant.
 */
async function planPointClick(engine: HelperPort & StorePort, step: Extract<Step, { action: "click" }>, app: ResolvedApp, guard: PointerScope, ocr?: Element): Promise<Plan> {
  const { supervisor, hello } = await engine.helper();
  const button = step.button ?? "left";
  const count = step.count ?? 1;
  const modifiers = step.modifiers?.length ? parseKeys(step.modifiers, { field: "modifiers" }) : [];
  const input: Plan = {
    kind: "input",
    steps: [{ kind: "click", x: step.x!, y: step.y!, button, count, modifiers }],
    pointer: true,
    keyboard: modifiers.length > 0,
    guard,
    ...(button === "middle" ? { pastes: true } : {}),
    ...(ocr ? { ocr } : {}), // issue 14: OCR
  };
  const what = ocr ? `the centre (${step.x}, ${step.y}) of OCR element ${ocr.index}` : `the point (${step.x}, ${step.y})`;
  assertPointInScope(guard, step.x!, step.y!, what);
  if (!hello.capabilities.hit_test?.supported) return input;
  const { result } = await supervisor.request("hit_test", { x: step.x!, y: step.y! });
  // The helper's own hit test must agree: the window it finds under the point is one of the allowed.
  if (result.pid !== app.pid || result.window_id === null || !guard.allowed.includes(result.window_id)) {
    // Over another app, over no window at all (the root), or over a window of ours that policy denies.
    throw outsideTarget(guard, { ok: false, pid: result.pid, windowId: result.window_id, frame: false }, what);
  }
  if (button === "middle") refuseSecureNode(engine.store, app, result.window_id, result.node, "a middle-button click");
  const n = result.node;
  // issue 14: OCR text is clicked as input, never routed to a node that happens to lie under it.
  if (ocr) return input;
  if (n && button === "left" && count === 1 && modifiers.length === 0 && pressLike(n) && result.window_id !== null) {
    const element = elementOf(n, -1, locatorKindOf(hello.helper.platform));
    return { kind: "element", action: "click", element, hitWindow: result.window_id };
  }
  return input;
}

// ---- issue 15: click
/**
 * A point click as one point_click request, when everything it decides can
 * be decided by the helper with what is sent: the helper has the op, the
 * operator granted foreground input (the op may send it), the safety seam
 * hands out the words its confirm decision finds in names, the target's
 * windows are listed already, and the click is plain (no keys held, not the
 * middle button, whose paste needs a secure-field check first). Else null:
 * the separate requests (planPointClick). Points outside the target's own
 * windows are refused here, nothing asked of the helper.
 */
async function planOneRequestClick(engine: HelperPort & SafetyPort, step: Extract<Step, { action: "click" }>, app: ResolvedApp, appWindows: readonly WireWindow[] | undefined): Promise<Plan | null> {
  const { hello } = await engine.helper();
  const words = engine.safety.confirmFacts.nameWords;
  const button = step.button ?? "left";
  const has = (cap: "point_click" | "input.pointer" | "input.pointer_guard") => hello.capabilities[cap]?.supported === true;
  if (!has("point_click") || !has("input.pointer") || !has("input.pointer_guard")) return null;
  if (!engine.safety.foregroundGranted() || !words || !appWindows?.length) return null;
  if (button === "middle" || (step.modifiers?.length ?? 0) > 0) return null;
  const guard = appPointerScope(engine.safety, app, appWindows);
  // Outside the target's own windows: refused, nothing sent. The error names what is there
  // (another app's window, a frame) as the separate requests' does: every window is listed then.
  if (!pointVerdict(guard, step.x!, step.y!).ok) {
    assertPointInScope(await pointerScope(engine, app), step.x!, step.y!, `the point (${step.x}, ${step.y})`);
    return null;
  }
  const count = step.count ?? 1;
  return {
    kind: "point",
    x: step.x!,
    y: step.y!,
    button,
    count,
    guard,
    // Only left and middle buttons can press a control (the decision's rule); an app without a tree has no names.
    words: button === "left" && app.accessible ? words : [],
    press: button === "left" && count === 1,
  };
}
// ---- end click

/**
 * A middle-button press pastes the X primary selection into what is under
 * the pointer: never into a secure field (the helper's flag, a password role,
 * or a field seen secure earlier in this window).
 */
async function refuseSecureAt(engine: HelperPort & StorePort, app: ResolvedApp, guard: PointerScope, p: { x: number; y: number }, what: string): Promise<void> {
  const { supervisor, hello } = await engine.helper();
  if (!hello.capabilities.hit_test?.supported) return;
  const { result } = await supervisor.request("hit_test", { x: p.x, y: p.y });
  if (result.pid !== app.pid || result.window_id === null || !guard.allowed.includes(result.window_id)) {
    throw outsideTarget(guard, { ok: false, pid: result.pid, windowId: result.window_id, frame: false }, `${what} at (${p.x}, ${p.y})`);
  }
  refuseSecureNode(engine.store, app, result.window_id, result.node, `${what} at (${p.x}, ${p.y})`);
}

function refuseSecureNode(store: SnapshotStore, app: ResolvedApp, windowId: number, node: WireNode | null, what: string): void {
  if (!node) return;
  if (isSecureNode(node) || rememberedSecure(node, store.secureLocators(windowKeyOf(app, windowId)))) {
    throw new DeckhandError("POLICY_DENIED", `${what} over a secure (password) field would paste into it`, {
      details: { source: "builtin", rule: "builtin:secure_field", reason: "paste", delivery: "not_dispatched" },
    });
  }
}

/**
 * Keys held during pointer input (scroll, drag and move steps with
 * `modifiers`, as the vendor adapters send them): key-down steps, the pointer
 * steps, key-up steps, all in ONE input op. The helper releases every key it
 * pressed on every exit path (a failed step, a cancel, the deadline), so no
 * key stays held after the op; each key-down passes the focus guard, which a
 * keyboard plan carries (executor.ts focusGuard). No modifiers: the steps as
 * they were, no keyboard.
 */
function holdingModifiers(modifiers: string[] | undefined, steps: InputStep[]): { steps: InputStep[]; keyboard: boolean } {
  const keys = modifiers?.length ? parseKeys(modifiers, { field: "modifiers" }) : [];
  if (!keys.length) return { steps, keyboard: false };
  const down: InputStep[] = keys.map((key) => ({ kind: "key", key, down: true }));
  const up: InputStep[] = [...keys].reverse().map((key) => ({ kind: "key", key, down: false }));
  return { steps: [...down, ...steps, ...up], keyboard: true };
}

/**
 * Controls whose primary action is what a left click does (vocabulary
 * PRESS_ROLES, first advertised action one of PRESS_ACTIONS). A click into a
 * text field or a canvas also moves focus and the caret, which no action
 * does: those stay foreground input.
 */
export function pressLike(n: Pick<WireNode, "role" | "actions">): boolean {
  const first = n.actions[0];
  return PRESS_ROLES.includes(n.role) && first !== undefined && PRESS_ACTIONS.includes(first.name);
}

export function capabilityFor(plan: Plan): string[] {
  if (plan.kind === "element") {
    const caps = [`action.${plan.action}`];
    if (plan.then) caps.push("input.keyboard", "input.focus_guard");
    return caps;
  }
  if (plan.kind === "input") return [...(plan.pointer ? ["input.pointer", "input.pointer_guard"] : []), ...(plan.keyboard ? ["input.keyboard", "input.focus_guard"] : [])];
  // ---- issue 13: clipboard
  if (plan.kind === "paste") return ["clipboard.paste", "input.keyboard", "input.focus_guard", ...(plan.element ? ["action.focus", "focused_element"] : [])];
  // ---- end clipboard
  if (plan.kind === "point") return ["point_click", "input.pointer", "input.pointer_guard"]; // issue 15: click
  return [];
}
