// Single action commands compile to a one-step program: there is one executor.
import { DeckhandError } from "../protocol/errors.ts";
import { commandStep, declOf, isActionCommand, stepElementIndices } from "../protocol/actions.ts";
import { parseProgram, type CheckedProgram, type Step } from "../protocol/program.ts";

/**
 * A single action command's (valid) arguments as a checked one-step
 * program: the declaration's conveniences (commandStep), the target fields,
 * `state` as the final observation, then the one shape check, whose errors
 * name the command ("click: a point needs both x and y"). So contradictory
 * flags fail at flag parsing, before a helper is looked for. A secret to be
 * read from stdin is "" here: put it in with withStdin once it is read.
 */
export function compileCommand(command: string, args: Record<string, unknown>): CheckedProgram {
  if (!isActionCommand(command)) throw new DeckhandError("INVALID_ARGUMENTS", `${command} is not an action`);
  const target = Object.fromEntries(["app", "windowId", "windowIndex", "snapshotId", "restoreWindow"].filter((f) => args[f] !== undefined).map((f) => [f, args[f]]));
  return parseProgram({ ...target, steps: [commandStep(command, args)], observe: args.state === true }, { command });
}

/**
 * The program with the secret its command read from stdin put in its one
 * step's secret field. Not checked again: a secret field takes any string
 * (src/protocol/actions.ts), and no rule reads it.
 */
export function withStdin<P extends CheckedProgram>(program: P, secret: string): P {
  const [step, ...rest] = program.steps;
  const field = declOf(step!.action).secret;
  if (!field || rest.length) throw new DeckhandError("INTERNAL", "only a single command's secret field is read from stdin");
  return { ...program, steps: [{ ...step!, [field]: secret }] };
}

/** Steps that act on the snapshot: they name an element (elementIndex, or an element drag's from and to). */
export function stepUsesElement(step: Step): boolean {
  return stepElementIndices(step).length > 0;
}
