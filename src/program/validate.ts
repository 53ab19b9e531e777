// Validation of a whole program before anything is resolved or sent.
import { DeckhandError } from "../protocol/errors.ts";
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
  program.steps.forEach((step, i) => {
    checkStepShape(step, i);
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
  }
  if (step.action === "select-text" && step.end < step.start) throw bad("end must not be before start");
}

/** For each need, any one of the listed capabilities will do. */
function staticCapabilities(step: Step): string[][] {
  const el = "elementIndex" in step && step.elementIndex !== undefined;
  switch (step.action) {
    case "click":
      return el ? [["action.click"]] : [["input.pointer", "action.click"]];
    case "set-value":
      return [["action.set_value"]];
    case "type-text":
      return el ? [["action.type_text"]] : [["input.keyboard"]];
    case "press-key":
      return el ? [["action.focus"], ["input.keyboard"]] : [["input.keyboard"]];
    case "hotkey":
      return [["input.keyboard"]];
    case "scroll":
      return el ? [["action.scroll_into_view"]] : [["input.pointer"]];
    case "drag":
      return [["input.pointer"]];
    case "select-text":
      return [["action.select_text"]];
    case "focus":
      return [["action.focus"]];
    case "perform-secondary-action":
      return [["action.secondary"]];
    case "wait":
      return [];
    case "move":
      return [["input.pointer"]];
    case "hold-key":
      return [["input.keyboard"]];
  }
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
