// What a program needs, checked before anything is resolved or sent. Its
// shape was checked once already (parseProgram, src/protocol/program.ts).
import { DeckhandError } from "../protocol/errors.ts";
import { isActionCommand, type ActionName } from "../protocol/actions.ts";
import type { CheckedProgram, Step } from "../protocol/program.ts";
import type { Hello } from "../wire/messages.ts";
import type { Safety } from "../engine/safety.ts";
import { ACTION_NEEDS } from "./plan.ts";
import { stepUsesElement } from "./compile.ts";

declare const runnable: unique symbol;
/** A checked program whose needs were validated (validateProgram): what the executor runs. */
export type RunnableProgram = CheckedProgram & { readonly [runnable]: true };

/**
 * How an error names step i: a program's "step 2 (click)"; a single action
 * command's one step is the command ("click"), never "step 0".
 */
export function stepLabel(command: string, i: number, action: string): string {
  return isActionCommand(command) ? command : `step ${i} (${action})`;
}

/**
 * The static checks of a (shape-checked) program: capabilities the helper
 * lacks, and foreground input that the operator has not granted. A program
 * either starts with the authority it needs for every step or does not
 * start. `command`: the command running it (`run`, or a single action's).
 */
export function validateProgram(safety: Pick<Safety, "foregroundGranted">, hello: Hello, program: CheckedProgram, command: string): RunnableProgram {
  const single = isActionCommand(command);
  program.steps.forEach((step, i) => {
    const where = stepLabel(command, i, step.action);
    const at: Record<string, number> = single ? {} : { step: i };
    for (const any of staticCapabilities(step)) {
      if (!any.some((c) => hello.capabilities[c]?.supported)) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `${where} needs ${any.join(" or ")}, which helper ${hello.helper.name} ${hello.helper.version} does not support`, {
          details: { capability: any.join("|"), ...at },
        });
      }
    }
    if (definitelyForeground(step) && !safety.foregroundGranted()) {
      throw new DeckhandError("FOREGROUND_REQUIRED", `${where} needs the real pointer or keyboard (foreground input), which the operator has not granted`, {
        details: { action: step.action, ...at },
      });
    }
  });
  return program as RunnableProgram;
}

function staticCapabilities(step: Step): string[][] {
  const needs = ACTION_NEEDS[step.action];
  if (stepUsesElement(step)) return needs.element ?? [];
  return (needs.input && definitelyForeground(step) ? needs.input : needs.point) ?? [];
}

/** Whether a helper with these capabilities can run the action in at least one of its forms. */
export function actionSupported(action: ActionName, capabilities: Hello["capabilities"]): boolean {
  const ok = (needs: string[][] | undefined) => needs !== undefined && needs.every((any) => any.some((c) => capabilities[c]?.supported));
  const n = ACTION_NEEDS[action];
  return ok(n.element) || ok(n.point);
}

/** Steps that need foreground input whatever the screen looks like (ACTION_NEEDS[action].foreground). */
function definitelyForeground(step: Step): boolean {
  const f = ACTION_NEEDS[step.action].foreground as "always" | "point" | ((s: Step) => boolean) | undefined;
  if (typeof f === "function") return f(step);
  if (f === "point") return !("elementIndex" in step) || step.elementIndex === undefined;
  return f === "always";
}
