// Validation of a whole program before anything is resolved or sent.
import { DeckhandError } from "../protocol/errors.ts";
import { exclusiveConflict, type ActionName } from "../protocol/commands.ts";
import { parseChord, parseKey, parseKeys } from "../protocol/keys.ts";
import type { Program, Step } from "../protocol/program.ts";
import type { Hello } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";

/**
 * Static checks of the whole program before anything is resolved or sent:
 * contradictory steps, capabilities the helper lacks, and foreground input
 * that the operator has not granted. A program either starts with the
 * authority it needs for every step or does not start.
 */
export function validateProgram(engine: Engine, hello: Hello, program: Program): void {
  checkProgramShape(program);
  program.steps.forEach((step, i) => {
    for (const any of staticCapabilities(step)) {
      if (!any.some((c) => hello.capabilities[c]?.supported)) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `step ${i} (${step.action}) needs ${any.join(" or ")}, which helper ${hello.helper.name} ${hello.helper.version} does not support`, {
          details: { capability: any.join("|"), step: i },
        });
      }
    }
    if (definitelyForeground(step) && !engine.safety.foregroundGranted()) {
      throw new DeckhandError("FOREGROUND_REQUIRED", `step ${i} (${step.action}) needs the real pointer or keyboard (foreground input), which the operator has not granted`, {
        details: { action: step.action, step: i },
      });
    }
  });
}

/** Contradictory or incomplete steps: INVALID_ARGUMENTS, no helper needed. */
export function checkProgramShape(program: Program): void {
  const conflict = exclusiveConflict(program);
  if (conflict) {
    throw new DeckhandError("INVALID_ARGUMENTS", `program: ${conflict[0]} and ${conflict[1]} both name a window; give one`, { details: { path: conflict[1], field: conflict[1] } });
  }
  program.steps.forEach(checkStepShape);
}

function checkStepShape(step: Step, i: number): void {
  const bad = (m: string) => new DeckhandError("INVALID_ARGUMENTS", `step ${i} (${step.action}): ${m}`, { details: { step: i } });
  if (step.action === "click") {
    const point = step.x !== undefined || step.y !== undefined;
    if (point && (step.x === undefined || step.y === undefined)) throw bad("a point needs both x and y");
    if (point === (step.elementIndex !== undefined)) throw bad("give either elementIndex or x and y");
    if (step.elementIndex !== undefined && (step.button || step.count || step.modifiers)) throw bad("button, count and modifiers apply to point clicks only");
  }
  if (step.action === "scroll") {
    if ((step.x === undefined) !== (step.y === undefined)) throw bad("give both x and y or neither");
    if (step.elementIndex === undefined && step.direction === undefined) throw bad("give a direction, or an elementIndex to scroll into view");
    if (step.elementIndex !== undefined && (step.direction !== undefined || step.x !== undefined)) throw bad("elementIndex scrolls into view; drop direction and x/y");
    if (step.elementIndex !== undefined && step.modifiers?.length) throw bad("modifiers apply to wheel scrolls only, not to scrolling an element into view");
  }
  if (step.action === "select-text" && step.end < step.start) throw bad("end must not be before start");
  // Key names go through the one chord parser (src/protocol/keys.ts): a chord it refuses is refused here, before anything is sent.
  try {
    if (step.action === "hotkey") parseKeys(step.keys);
    if (step.action === "press-key") parseChord(step.key, { field: "key" });
    if (step.action === "hold-key") parseKey(step.key);
    if (step.action === "click" && step.modifiers?.length) parseKeys(step.modifiers, { field: "modifiers" });
    // Keys held during pointer input (plan.ts holdingModifiers).
    if ((step.action === "scroll" || step.action === "drag" || step.action === "move") && step.modifiers?.length) parseKeys(step.modifiers, { field: "modifiers" });
  } catch (err) {
    if (err instanceof DeckhandError) throw new DeckhandError("INVALID_ARGUMENTS", `step ${i} (${step.action}): ${err.message}`, { details: { ...err.details, step: i } });
    throw err;
  }
}

/**
 * The helper capabilities each action needs, by target: `element` when the
 * step names an element, `point` otherwise. Each inner list is one need that
 * any of its capabilities satisfies. The one table behind program validation
 * and the `capabilities` report.
 */
export const ACTION_NEEDS: Record<ActionName, { element?: string[][]; point?: string[][] }> = {
  click: { element: [["action.click"]], point: [["input.pointer", "action.click"]] },
  "set-value": { element: [["action.set_value"]] },
  // Keys are sent only with the focus guard: a helper that cannot confine
  // them to the target window is refused keyboard input.
  "type-text": { element: [["action.type_text"]], point: [["input.keyboard"], ["input.focus_guard"]] },
  "press-key": { element: [["action.focus"], ["input.keyboard"], ["input.focus_guard"]], point: [["input.keyboard"], ["input.focus_guard"]] },
  hotkey: { point: [["input.keyboard"], ["input.focus_guard"]] },
  // Pointer events are sent only with the pointer guard: a helper that cannot
  // confine them to the target's allowed windows is refused pointer input.
  // (A point click may still take the accessibility route; as input it needs
  // the guard too, see POINTER_INPUT_NEEDS.)
  scroll: { element: [["action.scroll_into_view"]], point: [["input.pointer"], ["input.pointer_guard"]] },
  drag: { point: [["input.pointer"], ["input.pointer_guard"]] },
  "select-text": { element: [["action.select_text"]] },
  focus: { element: [["action.focus"]] },
  "perform-secondary-action": { element: [["action.secondary"]] },
  wait: { point: [] },
  move: { point: [["input.pointer"], ["input.pointer_guard"]] },
  "hold-key": { point: [["input.keyboard"], ["input.focus_guard"]] },
};

/** A point click that cannot take the accessibility route is pointer input. */
const POINTER_INPUT_NEEDS: string[][] = [["input.pointer"], ["input.pointer_guard"]];

function staticCapabilities(step: Step): string[][] {
  const needs = ACTION_NEEDS[step.action];
  const el = "elementIndex" in step && step.elementIndex !== undefined;
  if (step.action === "click" && !el && definitelyForeground(step)) return POINTER_INPUT_NEEDS;
  return (el ? needs.element : needs.point) ?? [];
}

/** Whether a helper with these capabilities can run the action in at least one of its forms. */
export function actionSupported(action: ActionName, capabilities: Hello["capabilities"]): boolean {
  const ok = (needs: string[][] | undefined) => needs !== undefined && needs.every((any) => any.some((c) => capabilities[c]?.supported));
  const n = ACTION_NEEDS[action];
  return ok(n.element) || ok(n.point);
}

/** Steps that need foreground input whatever the screen looks like. */
function definitelyForeground(step: Step): boolean {
  switch (step.action) {
    case "type-text":
      return step.elementIndex === undefined;
    case "press-key":
    case "hotkey":
    case "drag":
    case "move":
    case "hold-key":
      return true;
    case "scroll":
      return step.elementIndex === undefined;
    case "click":
      // A plain left click at a point may hit an element (background route); anything else is input.
      return step.elementIndex === undefined && ((step.button ?? "left") !== "left" || (step.count ?? 1) !== 1 || (step.modifiers?.length ?? 0) > 0);
    default:
      return false;
  }
}
