// What every check of `deckhand helper check` shares: the connection, the
// hello, the time budget, the targets found so far, and one way to judge an
// answer against the op's result schema.
import { DEFAULT_DEADLINES } from "../supervisor.ts";
import { HELPER_ERROR_CODES, OPS, Receipt, type Hello, type OpName, type Response, type WireApp, type WireWindow } from "../../wire/messages.ts";
import { firstIssue, type Answer, type ExitInfo, type HelperConnection } from "./connection.ts";

/** Thrown when the run's time budget has no room left for another request. */
export class OutOfTime extends Error {
  constructor() {
    super("the run's time budget is exhausted");
  }
}

export class Budget {
  private readonly end: number;
  constructor(totalMs: number) {
    this.end = performance.now() + totalMs;
  }
  remaining(): number {
    return Math.max(0, Math.round(this.end - performance.now()));
  }
  /** A deadline of at most `wantMs`, leaving `reserveMs` of the budget; OutOfTime when too little is left. */
  deadline(wantMs: number, reserveMs = 0): number {
    const left = this.remaining() - reserveMs - 300;
    if (left < 200) throw new OutOfTime();
    return Math.min(wantMs, left);
  }
}

/** What the reads found on the desktop, for the checks that need a target. */
export interface Targets {
  apps: WireApp[] | null;
  windows: WireWindow[] | null;
  /** A small visible window of an accessible app: get_tree, screenshot, hit_test, element_action. */
  window: WireWindow | null;
  /** Its owner: focused_element, settle, cancel. */
  pid: number | null;
}

export interface CheckContext {
  conn: HelperConnection;
  hello: Hello;
  budget: Budget;
  /** A private temporary directory (screenshots), removed at the end. */
  tmp: string;
  targets: Targets;
  /** Budget kept back for the checks that run last (shutdown, frame limit). */
  reserveMs: number;
}

export function supports(ctx: CheckContext, key: string): boolean {
  return ctx.hello.capabilities[key]?.supported === true;
}

export function exitText(e: ExitInfo): string {
  return e.signal ? `killed by ${e.signal}` : `exit code ${e.code}`;
}

export type Judged =
  | { ok: true; result: Record<string, unknown>; response: Response; ms: number }
  | { ok: false; reason: string; response?: Response; ms: number };

/** Why an answer is not a response, in one phrase; null when it is one. */
export function notAResponse(op: string, a: Answer): string | null {
  switch (a.kind) {
    case "response":
      return null;
    case "timeout":
      return `no answer to ${op} within ${a.ms} ms (its deadline plus 250 ms)`;
    case "exited":
      return `the helper died during ${op} (${exitText(a.exit)})`;
    case "broken":
      return `${op}: ${a.message}`;
  }
}

/** Shape problems of an error response (a mutation's needs a receipt too); null when fine. */
export function errorShape(op: string, r: Response): string | null {
  if (!r.error) return `${op} answered ok: false without an error`;
  if ((OPS as Record<string, { mutates: boolean }>)[op]?.mutates && !r.receipt) return `${op} answered an error without a receipt (a mutation always carries one)`;
  return null;
}

export function errorText(r: Response): string {
  const e = r.error;
  if (!e) return "an error without details";
  const unknown = (HELPER_ERROR_CODES as readonly string[]).includes(e.code) ? "" : " (a code deckhand does not know)";
  return `${e.code}${unknown}: ${e.message.slice(0, 160)}`;
}

/** A response is ok and its result (and receipt, for a mutation) matches the op's schema. */
export function judge(op: OpName, a: Answer): Judged {
  const bad = notAResponse(op, a);
  if (bad) return { ok: false, reason: bad, ms: a.ms };
  const r = (a as Extract<Answer, { kind: "response" }>).response;
  if (!r.ok) return { ok: false, reason: errorShape(op, r) ?? `${op} answered ${errorText(r)}`, response: r, ms: a.ms };
  if (r.result === undefined) return { ok: false, reason: `${op} answered ok without a result`, response: r, ms: a.ms };
  const parsed = OPS[op].result.safeParse(r.result);
  if (!parsed.success) return { ok: false, reason: `${op} result does not match the schema (${firstIssue(parsed.error)})`, response: r, ms: a.ms };
  if (OPS[op].mutates) {
    if (!r.receipt) return { ok: false, reason: `${op} answered without a receipt (a mutation always carries one)`, response: r, ms: a.ms };
    const receipt = Receipt.safeParse(r.receipt);
    if (!receipt.success) return { ok: false, reason: `${op} receipt does not match the schema (${firstIssue(receipt.error)})`, response: r, ms: a.ms };
  }
  return { ok: true, result: parsed.data as Record<string, unknown>, response: r, ms: a.ms };
}

/**
 * The outcome of a read that did not answer ok: a well-formed PERMISSION_DENIED
 * is the OS's say on this machine, not a breach (skip, with the helper's
 * words); anything else fails.
 */
export function readFailure(j: Extract<Judged, { ok: false }>, prefix = ""): { status: "fail" | "skip"; reason: string } {
  const e = j.response && !j.response.ok ? j.response.error : undefined;
  if (e?.code === "PERMISSION_DENIED") return { status: "skip", reason: `${prefix}the OS denies it here (PERMISSION_DENIED: ${e.message.slice(0, 120)}); grant it and re-run` };
  return { status: "fail", reason: `${prefix}${j.reason}` };
}

/** Send an op with the contract's default deadline (capped by `maxMs` and the budget) and wait. */
export async function call(ctx: CheckContext, op: string, args: Record<string, unknown>, opts: { maxMs?: number; frameExtra?: Record<string, unknown> } = {}): Promise<Answer> {
  const want = Math.min((DEFAULT_DEADLINES as Record<string, number>)[op] ?? 5000, opts.maxMs ?? Infinity);
  const deadlineMs = ctx.budget.deadline(want, ctx.reserveMs);
  return await ctx.conn.request(op, args, { deadlineMs, frameExtra: opts.frameExtra }).answer;
}

/** The cheapest supported read, used to prove the helper still answers. */
export function pingOp(ctx: CheckContext): { op: OpName; args: Record<string, unknown> } | null {
  if (supports(ctx, "permissions")) return { op: "permissions", args: {} };
  if (supports(ctx, "list_windows")) return { op: "list_windows", args: { pid: null } };
  if (supports(ctx, "list_apps")) return { op: "list_apps", args: {} };
  return null;
}

/** null when the helper answered a supported read correctly; else why not. */
export async function ping(ctx: CheckContext): Promise<string | null> {
  const p = pingOp(ctx);
  if (!p) return ctx.conn.alive ? null : "the helper is gone";
  const j = judge(p.op, await call(ctx, p.op, p.args, { maxMs: 5000 }));
  return j.ok ? null : j.reason;
}
