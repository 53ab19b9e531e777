// A program: one target, 1..N steps, validated whole before any step runs.
// Single action commands compile to a one-step program (src/program/compile.ts).
// The steps are derived from the action declarations (src/protocol/actions.ts).
import { z } from "zod";
import { ACTION_DECLS, ACTIONS, app, declOf, restoreWindow, snapshotId, windowId, windowIndex, type ActionName, type StepShape } from "./actions.ts";
import { exclusiveConflict, ObservationFormat } from "./commands.ts";
import { DeckhandError } from "./errors.ts";
import { parseChord, parseKey, parseKeys } from "./keys.ts";
import { once } from "../lazy-table.ts";

type StepObject<A extends ActionName> = z.ZodObject<{ action: z.ZodLiteral<A> } & StepShape<A>, z.core.$strict>;
type AnyStepObject = { [A in ActionName]: StepObject<A> }[ActionName];

const options = () => ACTIONS.map((a) => z.strictObject({ action: z.literal(a), ...ACTION_DECLS[a].step })) as unknown as [AnyStepObject, ...AnyStepObject[]];

/** What a step check's issue carries, for the message that names the step (programError). */
interface StepIssueParams {
  step: true;
  action: string;
  field?: string;
}

/**
 * Once a step's fields are valid: its declared rules, then its key names
 * through the one chord parser (a `keys` list is kept as canonical names:
 * "CTRL++" is ["ctrl", "plus"]).
 */
function checkStep(payload: z.core.ParsePayload<Record<string, unknown> & { action: ActionName }>): void {
  const step = payload.value;
  const decl = declOf(step.action);
  const issue = (message: string, path: string[], field?: string) =>
    payload.issues.push({ code: "custom", message, input: step, path, params: { step: true, action: step.action, ...(field ? { field } : {}) } satisfies StepIssueParams });
  const broken = decl.rules?.(step);
  if (broken) return void issue(broken, []);
  for (const [field, kind] of Object.entries(decl.keys ?? {})) {
    const v = step[field];
    if (v === undefined || (Array.isArray(v) && v.length === 0)) continue;
    try {
      if (kind === "keys") payload.value = { ...payload.value, [field]: parseKeys(v as string[], { field }) };
      else if (kind === "chord") parseChord(v as string, { field });
      else parseKey(v as string, { field });
    } catch (err) {
      if (!(err instanceof DeckhandError)) throw err;
      return void issue(err.message, [field], String(err.details.field ?? field));
    }
  }
}

/** A program step's schema, built on first use (src/lazy-table.ts): loading this module builds no schema. */
export const stepSchema = once(() => z.discriminatedUnion("action", options()).check((p) => checkStep(p as never)));
export type Step = z.infer<ReturnType<typeof stepSchema>>;

/** A program's schema, built on first use. */
export const programSchema = once(() =>
  z
  .strictObject({
    app,
    windowId: windowId.optional(),
    windowIndex: windowIndex.optional(),
    snapshotId: snapshotId.optional(),
    steps: z.array(stepSchema()).min(1).max(100),
    /** One final observation after the last step (default true). */
    observe: z.boolean().optional(),
    noScreenshot: z.boolean().optional(),
    /** issue 14: the final observation's format (compact by default, like get-app-state). */
    format: ObservationFormat.optional(),
    /** issue 13 (lifecycle): un-minimize the target window before the first step. */
    restoreWindow: restoreWindow.optional(),
  })
  .check((payload) => {
    const conflict = exclusiveConflict(payload.value);
    if (conflict) {
      payload.issues.push({ code: "custom", message: `${conflict[0]} and ${conflict[1]} both name a window; give one`, input: payload.value, path: [conflict[1]], params: { program: true } });
    }
  }),
);
export type Program = z.infer<ReturnType<typeof programSchema>>;

declare const checked: unique symbol;
/**
 * A program that passed parseProgram: its fields, every step's rules and
 * key names, one window. The layers after it trust its shape.
 */
export type CheckedProgram = Program & { readonly [checked]: true };

/**
 * The one check of a program's shape (a `run` program, or a single action
 * command's one-step program). INVALID_ARGUMENTS naming what is wrong: a
 * step by its index ("step 2 (click): a point needs both x and y",
 * details.step), or, for a single command (`command`), by the command's
 * name ("click: ..."): it is not a program to its caller.
 */
export function parseProgram(raw: unknown, opts: { command?: string } = {}): CheckedProgram {
  const parsed = programSchema().safeParse(raw);
  if (parsed.success) return parsed.data as CheckedProgram;
  throw programError(parsed.error.issues[0]!, opts.command);
}

function programError(issue: z.core.$ZodIssue, command: string | undefined): DeckhandError {
  const path = issue.path.join(".");
  const params = issue.code === "custom" ? (issue.params as Partial<StepIssueParams> & { program?: true }) : undefined;
  if (params?.step) {
    const i = issue.path[1] as number;
    const where = command ?? `step ${i} (${params.action})`;
    return new DeckhandError("INVALID_ARGUMENTS", `${where}: ${issue.message}`, {
      details: { ...(params.field ? { field: params.field } : {}), ...(command ? {} : { step: i }) },
    });
  }
  if (params?.program) return new DeckhandError("INVALID_ARGUMENTS", `program: ${issue.message}`, { details: { path, field: path } });
  return new DeckhandError("INVALID_ARGUMENTS", `program ${path || "(root)"}: ${issue.message}`, { details: { path } });
}

export const StepStatus = z.enum(["completed", "failed", "unattempted"]);
