// The protocol checks beyond single ops: refusals (unknown op, unclaimed
// capabilities), tolerance of unknown fields, cancel, the frame stream as a
// whole, shutdown on EOF, and the frame limit (run last, on a fresh spawn,
// since a helper may close on an oversized frame).
import { encodeFrame } from "../../wire/codec.ts";
import { OPS, type OpName } from "../../wire/messages.ts";
import { HelperConnection, type Answer } from "./connection.ts";
import { call, errorShape, errorText, exitText, judge, notAResponse, ping, pingOp, supports, type CheckContext } from "./context.ts";
import { fail, pass, skip, type Outcome, type Probe } from "./probe.ts";
import { ABSENT_LOCATOR } from "./reads.ts";

const REFUSAL_CODES = ["ACTION_UNSUPPORTED", "INVALID_ARGUMENTS"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function response(a: Answer) {
  return a.kind === "response" ? a.response : null;
}

const unknownOp: Probe = {
  name: "refuse.unknown_op",
  async run(ctx) {
    const a = await call(ctx, "deckhand_check_no_such_op", { x: 1 }, { maxMs: 5000 });
    const bad = notAResponse("an unknown op", a);
    if (bad) return fail(bad);
    const r = response(a)!;
    if (r.ok) return fail("an unknown op was answered ok; a helper answers INVALID_ARGUMENTS");
    if (!r.error) return fail("an unknown op was answered ok: false without an error");
    if (r.error.code !== "INVALID_ARGUMENTS") return fail(`an unknown op answered ${errorText(r)}; the contract says INVALID_ARGUMENTS`);
    const alive = await ping(ctx);
    if (alive) return fail(`refused, then: ${alive}`);
    return pass(`INVALID_ARGUMENTS, and the helper answers on (${a.ms} ms)`);
  },
};

/** Args for an op the helper says it does not support: valid, harmless, aimed at what is running. */
function refusalArgs(ctx: CheckContext, op: OpName): Record<string, unknown> {
  const pid = ctx.targets.pid ?? 1;
  const window = ctx.targets.window?.window_id ?? 1;
  switch (op) {
    case "list_windows":
      return { pid: null };
    case "get_tree":
      return { pid, window_id: window, max_depth: 1, max_children: 1, max_nodes: 1 };
    case "screenshot":
      return { window_id: window, path: `${ctx.tmp}/refused.png`, redact_secure: true, redact: [] };
    case "hit_test":
      return { x: 0, y: 0 };
    case "watch_user_input":
      return { enabled: false };
    case "focused_element":
      return { pid };
    case "settle":
      return { pid, quiet_ms: 1, max_ms: 1 };
    default:
      return {};
  }
}

function judgeRefusal(what: string, a: Answer, mutates: boolean): Outcome {
  const bad = notAResponse(what, a);
  if (bad) return fail(bad);
  const r = response(a)!;
  if (r.ok && what === "watch_user_input" && (r.result as { watching?: unknown } | undefined)?.watching === false) {
    return pass(`{enabled: false} answered watching: false (truthful, a no-op); enabling it was not tried`);
  }
  if (r.ok) return fail(`${what} is declared unsupported, yet it was answered ok`);
  if (!r.error) return fail(`${what} answered ok: false without an error`);
  if (mutates && !r.receipt) return fail(`${what} was refused without a receipt (a mutation always carries one)`);
  const code = r.error!.code;
  // PERMISSION_DENIED: the OS, not the helper's own gate, refused it (e.g. no display): nothing was done either.
  if (!REFUSAL_CODES.includes(code) && code !== "PERMISSION_DENIED") return fail(`${what} (declared unsupported) answered ${errorText(r)}; expected ACTION_UNSUPPORTED or INVALID_ARGUMENTS`);
  if (mutates && r.receipt!.delivery !== "not_dispatched") return fail(`${what} refused with delivery ${r.receipt!.delivery}; a refusal dispatches nothing`);
  const note = code === "PERMISSION_DENIED" ? " (the OS refused, not the helper's capability gate)" : "";
  return pass(`refused: ${code}${mutates ? ", not_dispatched" : ""}${note} (${a.ms} ms)`);
}

/** One check per capability the helper does not claim that gates a request we can send harmlessly. */
export function refusalProbes(ctx: CheckContext): Probe[] {
  const probes: Probe[] = [];
  for (const [op, spec] of Object.entries(OPS) as [OpName, (typeof OPS)[OpName]][]) {
    const key = spec.capability;
    if (!key || supports(ctx, key)) continue;
    if (op === "set_accessibility") {
      probes.push({ name: `refuse.${key}`, run: async () => skip("unclaimed; not sent: if the helper acted on it, it would change the session's accessibility flag") });
      continue;
    }
    probes.push({ name: `refuse.${key}`, run: async (c) => judgeRefusal(op, await call(c, op, refusalArgs(c, op), { maxMs: 5000 }), false) });
  }
  for (const action of ["click", "set_value", "type_text", "select_text", "focus", "scroll_into_view", "secondary"]) {
    const key = `action.${action}`;
    if (supports(ctx, key)) continue;
    probes.push({
      name: `refuse.${key}`,
      async run(c) {
        const w = c.targets.window;
        const args = {
          pid: w?.pid ?? c.targets.pid ?? 1,
          window_id: w?.window_id ?? 1,
          locator: ABSENT_LOCATOR,
          action,
          text: action === "set_value" || action === "type_text" ? "" : null,
          start: action === "select_text" ? 0 : null,
          end: action === "select_text" ? 0 : null,
          action_name: action === "secondary" ? "deckhand-helper-check-absent" : null,
        };
        return judgeRefusal(`element_action ${action}`, await call(c, "element_action", args, { maxMs: 5000 }), true);
      },
    });
  }
  // Steps that change nothing even if performed: a scroll of zero notches, typing no text.
  const harmless: Record<string, object> = {
    "input.pointer": { kind: "scroll", x: null, y: null, dx: 0, dy: 0 },
    "input.keyboard": { kind: "type", text: "" },
  };
  for (const [key, step] of Object.entries(harmless)) {
    if (supports(ctx, key)) continue;
    probes.push({
      name: `refuse.${key}`,
      run: async (c) => judgeRefusal(`input ${(step as { kind: string }).kind}`, await call(c, "input", { steps: [step], restore_pointer: false }, { maxMs: 5000 }), true),
    });
  }
  if (!probes.length) probes.push({ name: "refuse.unsupported", run: async () => skip("every capability that gates a request is claimed: nothing to refuse") });
  return probes;
}

const unknownFields: Probe = {
  name: "tolerance.unknown_fields",
  async run(ctx) {
    const p = pingOp(ctx);
    if (!p) return skip("no read op (permissions, list_windows, list_apps) is claimed to carry the fields");
    const args = { ...p.args, x_deckhand_check: { nested: [1, "two", null], flag: true } };
    const a = await call(ctx, p.op, args, { maxMs: 5000, frameExtra: { x_deckhand_check: "ignored", trace: { span: 7 } } });
    const j = judge(p.op, a);
    if (!j.ok) return fail(`${p.op} with unknown fields in the frame and in args: ${j.reason}`);
    return pass(`${p.op} with unknown fields in the frame and in args: answered normally (${j.ms} ms)`);
  },
};

/** A read the helper takes a while over: settle (quiet 1500 ms, at most 2000 ms), else a plain read. */
function slowRead(ctx: CheckContext): { op: OpName; args: Record<string, unknown>; maxMs: number } | null {
  if (supports(ctx, "settle") && ctx.targets.pid !== null) return { op: "settle", args: { pid: ctx.targets.pid, quiet_ms: 1500, max_ms: 2000 }, maxMs: 4000 };
  const p = pingOp(ctx);
  return p ? { ...p, maxMs: 5000 } : null;
}

const cancelRead: Probe = {
  name: "cancel.read",
  async run(ctx) {
    const s = slowRead(ctx);
    if (!s) return skip("no read op is claimed");
    const deadlineMs = ctx.budget.deadline(s.maxMs, ctx.reserveMs);
    const { id, answer } = ctx.conn.request(s.op, s.args, { deadlineMs });
    let early = false;
    void answer.then(() => (early = true));
    await sleep(100);
    const answeredFirst = early;
    ctx.conn.cancel(id);
    // The helper must stay alive and keep answering other requests at once.
    const alive = await ping(ctx);
    if (alive) return fail(`after a cancel of ${s.op}: ${alive}`);
    const a = await answer;
    if (a.kind === "exited" || a.kind === "broken") return fail(notAResponse(s.op, a)!);
    const fate =
      a.kind === "timeout"
        ? "no answer (allowed for a cancelled read)"
        : a.response.ok
          ? `answered ok after ${a.ms} ms`
          : `answered ${a.response.error?.code ?? "an error"} after ${a.ms} ms`;
    if (a.kind === "response" && a.response.ok) {
      const j = judge(s.op, a);
      if (!j.ok) return fail(j.reason);
    }
    const what = s.op === "settle" ? "settle (quiet 1500 ms, at most 2000 ms)" : s.op;
    return pass(`${what} cancelled after 100 ms${answeredFirst ? " (it had answered already)" : ""}: ${fate}; other requests answered meanwhile`);
  },
};

const cancelInput: Probe = {
  name: "cancel.input",
  async run(ctx) {
    if (!supports(ctx, "input.pointer") && !supports(ctx, "input.keyboard")) return skip("neither input.pointer nor input.keyboard is claimed");
    const waitMs = 1500;
    const deadlineMs = ctx.budget.deadline(10_000 + waitMs, ctx.reserveMs);
    const { id, answer } = ctx.conn.request("input", { steps: [{ kind: "wait", ms: waitMs }], restore_pointer: false }, { deadlineMs });
    let early: Answer | null = null;
    void answer.then((a) => (early = a));
    await sleep(100);
    if (early) {
      const a = early as Answer;
      if (a.kind !== "response") return fail(notAResponse("input", a)!);
      if (a.response.ok) return skip(`a ${waitMs} ms wait step was answered after ${a.ms} ms, before the cancel could be sent: cancel not observable`);
      return fail(`a wait step answered ${errorText(a.response)} before any cancel`);
    }
    const sent = performance.now();
    ctx.conn.cancel(id);
    const a = await answer;
    const bad = notAResponse("a cancelled input", a);
    if (bad) return fail(bad);
    const r = response(a)!;
    const after = Math.round(performance.now() - sent);
    if (r.ok) return fail(`the cancelled input finished its ${waitMs} ms wait and answered ok ${after} ms after the cancel; input checks for a cancel within waits`);
    const shape = errorShape("input", r);
    if (shape) return fail(shape);
    if (r.error!.code !== "ACTION_FAILED" || r.error!.details?.cancelled !== true) return fail(`the cancelled input answered ${errorText(r)}; the contract says ACTION_FAILED with details.cancelled true`);
    if (r.receipt!.delivery !== "not_dispatched") return fail(`a cancelled wait-only input has delivery ${r.receipt!.delivery}; nothing was sent, so not_dispatched`);
    const alive = await ping(ctx);
    if (alive) return fail(`after the cancel: ${alive}`);
    return pass(`a ${waitMs} ms wait stopped ${after} ms after the cancel: ACTION_FAILED, cancelled, not_dispatched`);
  },
};

const cancelUnknown: Probe = {
  name: "cancel.unknown_id",
  async run(ctx) {
    if (!pingOp(ctx)) return skip("no read op is claimed to follow the cancel");
    ctx.conn.cancel(4_000_000_000);
    const alive = await ping(ctx);
    if (alive) return fail(`after a cancel for an id never sent: ${alive}`);
    return pass("a cancel for an id never sent is ignored; the next request is answered");
  },
};

/** Whatever was seen on stdout beyond single answers: stray frames, invalid events, late answers. */
export const stream: Probe = {
  name: "stream",
  async run(ctx) {
    const c = ctx.conn;
    if (c.violations.length) return fail(`${c.violations[0]}${c.violations.length > 1 ? ` (and ${c.violations.length - 1} more)` : ""}`);
    const late = c.late.length ? `; ${c.late.length} answer(s) came after their deadline` : "";
    const events = c.events.length ? `, ${c.events.length} event(s): ${[...new Set(c.events)].join(", ")}` : "";
    return pass(`${c.framesReceived} frames, every one a valid frame${events}${late}`);
  },
};

export const shutdown: Probe = {
  name: "shutdown.eof",
  async run(ctx) {
    const c = ctx.conn;
    if (c.exit) return skip(`the helper had exited already (${exitText(c.exit)})`);
    const t = performance.now();
    const exit = await c.closeStdin(3000);
    const ms = Math.round(performance.now() - t);
    if (!exit) return fail("still running 3000 ms after its stdin closed (killed); a helper exits on EOF");
    if (exit.signal || exit.code !== 0) return fail(`stdin closed: ${exitText(exit)}; expected exit code 0`);
    return pass(`exit code 0, ${ms} ms after stdin closed`);
  },
};

/**
 * A request one frame above the helper's own max_frame_bytes, on a fresh
 * spawn. The contract: the helper refuses it (an error answer to its id, as
 * the Linux helper does) or closes (exits, as "should refuse (close)" allows);
 * it must not act on it, hang, or crash by a signal.
 */
export async function frameLimit(ctx: CheckContext, makeConnection: () => HelperConnection, helloTimeoutMs: number): Promise<Outcome> {
  const limit = ctx.hello.limits.max_frame_bytes;
  if (limit > 64 * 1024 * 1024) return skip(`max_frame_bytes ${limit} is too large to probe (over 64 MiB)`);
  const p = pingOp(ctx);
  if (!p) return skip("no read op is claimed to carry an oversized request");
  const conn = makeConnection();
  const started = await conn.start(Math.min(helloTimeoutMs, ctx.budget.deadline(helloTimeoutMs)));
  if (started.kind !== "hello") return fail(`a second spawn of the helper did not say hello (${started.kind})`);
  const id = conn.takeId();
  const deadlineMs = ctx.budget.deadline(5000);
  // id and op first, the padding last: a helper can answer after reading the head only.
  const head = { type: "request", id, op: p.op, deadline_ms: deadlineMs };
  let frame = encodeFrame({ ...head, args: { ...p.args, x_padding: "" } });
  frame = encodeFrame({ ...head, args: { ...p.args, x_padding: "x".repeat(limit - (frame.length - 4) + 1024) } });
  const bytes = frame.length - 4;
  const a = await conn.sendAndWait(id, frame, deadlineMs + 250);
  const what = `a request of ${bytes} bytes (max_frame_bytes ${limit})`;
  if (a.kind === "exited") {
    if (a.exit.signal) return fail(`${what}: the helper was ${exitText(a.exit)} (a crash, not a close)`);
    return pass(`${what}: closed the connection (${exitText(a.exit)}), as the contract allows`);
  }
  if (a.kind === "broken") return fail(`${what}: ${a.message}`);
  if (a.kind === "timeout") {
    const exit = await conn.waitExit(500);
    if (exit && !exit.signal) return pass(`${what}: closed the connection (${exitText(exit)}), as the contract allows`);
    return fail(`${what}: neither refused nor closed within ${a.ms} ms`);
  }
  if (a.response.ok) return fail(`${what} was accepted and answered ok: a frame above the limit must be refused`);
  const shape = errorShape(p.op, a.response);
  if (shape) return fail(shape);
  // Still answering after the refusal?
  const next = conn.request(p.op, p.args, { deadlineMs: ctx.budget.deadline(5000) });
  const after = judge(p.op, await next.answer);
  await conn.closeStdin(1000);
  conn.kill();
  if (!after.ok) return fail(`${what} was refused (${a.response.error!.code}), then: ${after.reason}`);
  return pass(`${what}: refused with ${a.response.error!.code}, and the helper answers on`);
}

export const CONTRACT_PROBES: Probe[] = [unknownOp, unknownFields, cancelUnknown, cancelRead, cancelInput];
