// `deckhand serve`: NDJSON requests {id, command, args} on stdin, one
// envelope plus the same id per request on stdout. Requests are pipelined;
// mutations on one target are serialised by the engine. EOF: finish what is
// in flight, stop the helper, exit. Safe retries (docs/serve.md): a request
// whose id was seen (within a window) is answered from the first one and
// never run twice; `status` lists what is in flight and what finished; a
// request's own `deadlineMs` cancels it when it passes.
import { DeckhandError } from "../protocol/errors.ts";
import { runProgramValue, type CallContext } from "../commands/index.ts";
import type { Engine, OperatorOptions } from "../engine/engine.ts";
import { openEngine } from "../frontend/engine.ts";
import { Cancellation } from "../program/executor.ts";
import { fail, ok, type Envelope } from "../frontend/envelope.ts";
import { isCommand, runCommand } from "../frontend/run-command.ts";
import { parseSessionFlags } from "../frontend/session-flags.ts";
import { DEFAULT_MAX_LINE_BYTES, idFromHead, LineReader, type LineTooLong } from "./line-reader.ts";
import { AdapterSession, type AdapterOptions } from "../adapters/session.ts";
import { fingerprintOf, RequestJournal, type JournalOptions, type RequestId } from "./request-journal.ts";
import { MemoryTrace } from "./memory-trace.ts";
import { GcPacer } from "../frontend/gc-pacer.ts";

const log = (m: string) => process.stderr.write(`deckhand serve: ${m}\n`);

export interface ServeOptions extends OperatorOptions {
  adapter?: "native" | "openai" | "anthropic";
  /** Adapter mode: default target app (--app) and image caps (--max-width, --max-side, --max-pixels). */
  app?: string;
  maxWidth?: number;
  maxSide?: number;
  maxPixels?: number;
  /** Cap on one request line in bytes (--max-line-bytes, default 8 MiB). */
  maxLineBytes?: number;
  /** Cap on requests being handled at once (--max-inflight, default 64); `cancel` is always handled. */
  maxInflight?: number;
  // ---- issue 14: set-of-marks
  /** Adapter mode: hand the model the set-of-marks image of the target app's window instead of the plain one (--marks). */
  marks?: boolean;
  // ---- end set-of-marks
}

/** Default cap on requests in flight in one serve session. */
export const DEFAULT_MAX_INFLIGHT = 64;

function intFlag(flag: string, raw: string, min: number, max: number): number {
  const v = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(v) || v < min || v > max) {
    throw new DeckhandError("INVALID_ARGUMENTS", `${flag} must be an integer from ${min} to ${max}`, { details: { flag } });
  }
  return v;
}

function parseServeArgs(argv: string[]): ServeOptions {
  const opts: ServeOptions = {};
  return parseSessionFlags(argv, "serve", opts, (flag, value) => {
    if (flag === "--adapter") {
      const v = value();
      if (v !== "native" && v !== "openai" && v !== "anthropic") throw new DeckhandError("INVALID_ARGUMENTS", `adapter ${JSON.stringify(v)} is not available (native, openai, anthropic)`);
      opts.adapter = v;
      return true;
    }
    if (flag === "--app") {
      opts.app = value();
      return true;
    }
    if (flag === "--max-line-bytes") {
      opts.maxLineBytes = intFlag(flag, value(), 1024, 1024 * 1024 * 1024);
      return true;
    }
    if (flag === "--max-inflight") {
      opts.maxInflight = intFlag(flag, value(), 1, 100_000);
      return true;
    }
    // ---- issue 14: set-of-marks
    if (flag === "--marks") {
      opts.marks = true;
      return true;
    }
    // ---- end set-of-marks
    return false;
  });
}

/** One answer line: the envelope, its request's id, and `replayed` when it is a stored answer given again. */
type Line = { id: unknown; envelope: Envelope; replayed?: boolean };

/** The longest deadline a client may give a request (ms); a longer one is this. */
export const MAX_CLIENT_DEADLINE_MS = 10 * 60_000;

/** A request's own deadline (top-level deadlineMs): absent, or a positive whole number of ms, capped. */
function clientDeadline(req: Record<string, unknown>): number | null {
  const v = req.deadlineMs;
  if (v === undefined) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
    throw new DeckhandError("INVALID_ARGUMENTS", "deadlineMs must be a positive whole number of milliseconds", { details: { field: "deadlineMs", reason: "bad-deadline", delivery: "not_dispatched" } });
  }
  return Math.min(v, MAX_CLIENT_DEADLINE_MS);
}

/**
 * A request cancelled because its client deadline passed: TIMEOUT, reason
 * client-deadline, with what was sent (its delivery) and its evidence. Any
 * other outcome (it finished, or failed on its own first) is kept as it is.
 */
function deadlineEnvelope(envelope: Envelope, deadlineMs: number): Envelope {
  if (envelope.ok || envelope.error.code !== "CANCELLED") return envelope;
  const { details, message } = envelope.error;
  return {
    ...envelope,
    error: {
      code: "TIMEOUT",
      message: `the request's deadline (deadlineMs ${deadlineMs}) passed and it was cancelled: ${message}`,
      remediation: "The request ran out of the time it was given and was cancelled; details.delivery says whether anything was sent. Re-observe before retrying (under a new id: this one is answered with this result).",
      details: { ...details, reason: "client-deadline", deadlineMs, delivery: details.delivery ?? "not_dispatched" },
    },
  };
}

export class ServeSession {
  private inflight = new Set<Promise<void>>();
  private cancels = new Map<string, Cancellation>();
  private readonly adapters: AdapterSession;
  /** Ids seen, what they asked and their answers: a retry is never run twice. */
  readonly journal: RequestJournal;
  /** Keeps the session's memory flat over thousands of requests (see GcPacer). */
  readonly gc: GcPacer;
  /** Requests being handled (status), by start order. */
  private readonly running = new Set<{ id: RequestId | null; command: string; startedAt: number }>();

  constructor(
    readonly engine: Engine,
    private readonly write: (line: Line) => void,
    adapterOptions: AdapterOptions = {},
    private readonly limits: { maxInflight?: number; journal?: JournalOptions; gc?: GcPacer } = {},
  ) {
    this.adapters = new AdapterSession(engine, adapterOptions);
    this.journal = new RequestJournal(limits.journal);
    this.gc = limits.gc ?? GcPacer.fromEnv(process.env);
  }

  handleLine(text: string): void {
    if (!text.trim()) return;
    const max = this.limits.maxInflight ?? DEFAULT_MAX_INFLIGHT;
    if (this.inflight.size >= max && !this.refuseExcess(text, max)) return;
    const p = this.handle(text).catch((err) => this.write({ id: null, envelope: fail("deckhand", err, log) }));
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
  }

  /**
   * Too many requests in flight: answer this one at once with an error (its
   * id when the line parses), unless it is a `cancel`, which is how a client
   * relieves the pressure. Returns true when the request should run anyway.
   */
  private refuseExcess(text: string, max: number): boolean {
    let req: { id?: unknown; command?: unknown } | null = null;
    try {
      req = JSON.parse(text);
    } catch {
      /* answered with id null below */
    }
    if (req && typeof req === "object" && (req.command === "cancel" || req.command === "status")) return true;
    const id = req && typeof req === "object" && (typeof req.id === "string" || typeof req.id === "number") ? req.id : null;
    const command = req && typeof req === "object" && typeof req.command === "string" && isCommand(req.command) ? req.command : "deckhand";
    this.write({
      id,
      envelope: fail(
        command,
        new DeckhandError("INVALID_ARGUMENTS", `too many requests in flight (at most ${max}); this one was not run`, {
          remediation: `Wait for answers before sending more requests: at most ${max} are handled at once (serve --max-inflight). A \`cancel\` is always accepted.`,
          details: { reason: "too-many-in-flight", limit: max, delivery: "not_dispatched" },
        }),
      ),
    });
    return false;
  }

  /** Bytes of one request line over the cap were discarded, not parsed: answer with a stable error and go on. */
  lineTooLong(info: LineTooLong): void {
    this.write({
      id: idFromHead(info.head),
      envelope: fail(
        "deckhand",
        new DeckhandError("INVALID_ARGUMENTS", `request line longer than ${info.limit} bytes; it was discarded up to its newline and not run`, {
          remediation: `Keep each request line under ${info.limit} bytes (serve --max-line-bytes); send large values in several requests.`,
          details: { reason: "line-too-long", limit: info.limit, delivery: "not_dispatched" },
        }),
      ),
    });
  }

  /** DECKHAND_TRACE_TIMING=1: deckhand's own time per request, helper time excluded (for bench/). */
  readonly ownTimes: number[] | null = process.env.DECKHAND_TRACE_TIMING === "1" ? [] : null;

  /** What the session holds in memory, bounded: snapshots cached, journaled ids and answer bytes (memory trace, tests). */
  heldCounts(): { snapshotsHeld: number; snapshotBytesHeld: number; journalIds: number; journalBytes: number } {
    const store = this.engine.store.memoryHeld;
    const journal = this.journal.size;
    return { snapshotsHeld: store.snapshots, snapshotBytesHeld: store.bytes, journalIds: journal.ids, journalBytes: journal.bytes };
  }

  /** DECKHAND_TRACE_MEMORY=<n>: a memory line on stderr every n requests (bench/soak.ts). */
  private readonly memoryTrace = MemoryTrace.fromEnv(process.env, (line) => process.stderr.write(line));

  private async handle(text: string): Promise<void> {
    await this.handleTimed(text);
    this.gc.afterRequest();
    this.memoryTrace?.tick(() => ({ gcRuns: this.gc.collections, gcMs: Math.round(this.gc.spentMs), ...this.heldCounts() }));
  }

  private async handleTimed(text: string): Promise<void> {
    if (!this.ownTimes) return await this.handleRequest(text);
    const t0 = performance.now();
    const helper0 = this.engine.currentSupervisor?.stats.helperWaitMs ?? 0;
    await this.handleRequest(text);
    const helperMs = (this.engine.currentSupervisor?.stats.helperWaitMs ?? 0) - helper0;
    this.ownTimes.push(performance.now() - t0 - helperMs);
  }

  private async handleRequest(text: string): Promise<void> {
    let req: { id?: unknown; command?: unknown; args?: unknown };
    try {
      req = JSON.parse(text);
    } catch {
      this.write({ id: null, envelope: fail("deckhand", new DeckhandError("INVALID_ARGUMENTS", "request is not valid JSON")) });
      return;
    }
    if (!req || typeof req !== "object" || Array.isArray(req)) {
      this.write({ id: null, envelope: fail("deckhand", new DeckhandError("INVALID_ARGUMENTS", "request must be an object {id, command, args}")) });
      return;
    }
    const id = typeof req.id === "string" || typeof req.id === "number" ? req.id : null;
    const command = typeof req.command === "string" ? req.command : "";
    if (command === "cancel") {
      const target = (req.args as { id?: unknown } | undefined)?.id;
      const token = this.cancels.get(String(target));
      // Aborts its helper requests in flight (a wire cancel each) and its waits; its next step is not run.
      token?.cancel(`cancelled by serve request ${JSON.stringify(id)}`);
      this.write({ id, envelope: ok("cancel", { id: target ?? null, cancelled: token !== undefined }) });
      return;
    }
    if (command === "status") {
      this.write({ id, envelope: ok("status", this.status()) });
      return;
    }
    const label = command || "computer";
    let deadline: number | null;
    try {
      deadline = clientDeadline(req as Record<string, unknown>);
    } catch (err) {
      this.write({ id, envelope: fail(isCommand(command) ? command : "deckhand", err) });
      return;
    }
    // A request with an id is run at most once: a retry is answered from the first.
    let finish: ((envelope: Envelope) => void) | null = null;
    if (id !== null) {
      const fingerprint = fingerprintOf(req as Record<string, unknown>);
      const seen = this.journal.lookup(id, fingerprint);
      if (seen.kind === "inflight") {
        this.write({ id, envelope: (await seen.answer) as Envelope, replayed: true });
        return;
      }
      if (seen.kind === "done") {
        this.write({ id, envelope: seen.envelope as Envelope, replayed: true });
        return;
      }
      if (seen.kind !== "new") {
        this.write({ id, envelope: fail(isCommand(command) ? command : "deckhand", idRefusal(id, seen)) });
        return;
      }
      finish = this.journal.begin(id, label, fingerprint);
    }
    const running = { id, command: label, startedAt: Date.now() };
    this.running.add(running);
    let envelope: Envelope;
    try {
      envelope = await this.run(req, id, command, deadline);
    } catch (err) {
      envelope = fail("deckhand", err, log);
    } finally {
      this.running.delete(running);
    }
    finish?.(envelope);
    this.write({ id, envelope });
  }

  /** Run one request under its cancellation (a `cancel` naming its id, its own deadline): its envelope. */
  private async run(req: { id?: unknown; command?: unknown; args?: unknown }, id: RequestId | null, command: string, deadline: number | null): Promise<Envelope> {
    const key = String(id);
    const cancel = new Cancellation();
    this.cancels.set(key, cancel);
    let expired = false;
    const timer =
      deadline === null
        ? null
        : setTimeout(() => {
            expired = true;
            cancel.cancel(`its deadline of ${deadline} ms passed`);
          }, deadline);
    // A serve client is an agent: operator-only commands (resume) are refused for it.
    const ctx: CallContext = { cancel, caller: "serve" };
    // Every helper request this request makes carries its cancellation.
    const cancellable = <T>(fn: () => Promise<T>) => this.engine.withCancel(cancel.signal, fn);
    try {
      const envelope = await this.runCancellable(req, command, ctx, cancellable);
      return expired && deadline !== null ? deadlineEnvelope(envelope, deadline) : envelope;
    } finally {
      if (timer) clearTimeout(timer);
      if (this.cancels.get(key) === cancel) this.cancels.delete(key);
    }
  }

  private async runCancellable(
    req: { id?: unknown; command?: unknown; args?: unknown },
    command: string,
    ctx: CallContext,
    cancellable: <T>(fn: () => Promise<T>) => Promise<T>,
  ): Promise<Envelope> {
    // Adapter mode (docs/adapters.md): the request's `adapter`, else --adapter; null = native.
    const adapted = await cancellable(() => this.adapters.serveRequest(req as Record<string, unknown>, ctx));
    if (adapted) return adapted as unknown as Envelope;
    if (command === "run") {
      // In serve the program travels in the request: {command: "run", args: {program: {...}}}.
      const program = (req.args as { program?: unknown } | undefined)?.program;
      try {
        return ok("run", await cancellable(() => runProgramValue(this.engine, program, ctx)));
      } catch (err) {
        return fail("run", err, log);
      }
    }
    return await cancellable(() => runCommand(this.engine, command, req.args ?? {}, ctx, log));
  }

  /** The `status` answer: requests in flight (oldest first) and the journal's finished ones (newest first). */
  status(): { inflight: { id: RequestId | null; command: string; startedAt: string; elapsedMs: number }[]; recent: ReturnType<RequestJournal["recent"]> } {
    const now = Date.now();
    return {
      inflight: [...this.running].map((r) => ({ id: r.id, command: r.command, startedAt: new Date(r.startedAt).toISOString(), elapsedMs: Math.max(0, now - r.startedAt) })),
      recent: this.journal.recent(),
    };
  }

  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
}

/** A request whose id already ran something else, or whose answer is no longer kept: refused, nothing run. */
function idRefusal(id: RequestId, seen: { kind: "reused"; command: string } | { kind: "answer-dropped"; command: string; ok: boolean | null; code: string | null; finishedAt: number }): DeckhandError {
  if (seen.kind === "reused") {
    return new DeckhandError("INVALID_ARGUMENTS", `request id ${JSON.stringify(id)} was already used for a different request (${seen.command}): nothing was run`, {
      remediation: "Use a new id for a new request; resend a request under its id only unchanged (then it is answered from its first run, never run twice).",
      details: { reason: "id-reused", field: "id", firstCommand: seen.command, delivery: "not_dispatched" },
    });
  }
  return new DeckhandError("INVALID_ARGUMENTS", `request id ${JSON.stringify(id)} already ran (${seen.command}), and its answer is no longer kept: it was not run again`, {
    remediation: "The request ran once already; its answer was dropped to bound memory. Re-observe to see its effect; use a new id for a new request.",
    details: { reason: "id-answer-dropped", field: "id", firstCommand: seen.command, ...(seen.ok !== null ? { firstOk: seen.ok } : {}), ...(seen.code ? { firstCode: seen.code } : {}), firstFinishedAt: new Date(seen.finishedAt).toISOString(), delivery: "not_dispatched" },
  });
}

export async function serveMain(argv: string[]): Promise<number> {
  let opts: ServeOptions;
  try {
    opts = parseServeArgs(argv);
  } catch (err) {
    process.stdout.write(JSON.stringify({ id: null, ...fail("serve", err) }) + "\n");
    return 1;
  }
  let engine: Engine;
  try {
    const session = `serve-${process.pid}-${Date.now().toString(36)}`;
    engine = openEngine(opts, { sessionGrant: opts.allowForeground === true, session });
  } catch (err) {
    process.stdout.write(JSON.stringify({ id: null, ...fail("serve", err, log) }) + "\n");
    return 1;
  }
  const session = new ServeSession(
    engine,
    ({ id, envelope, replayed }) => {
      process.stdout.write(JSON.stringify({ id, ...(replayed ? { replayed: true } : {}), ...envelope }) + "\n");
    },
    { defaultAdapter: opts.adapter, app: opts.app, maxWidth: opts.maxWidth, maxSide: opts.maxSide, maxPixels: opts.maxPixels, marks: opts.marks /* issue 14: set-of-marks */ },
    { maxInflight: opts.maxInflight },
  );
  // Split lines ourselves (readline's async iterator adds a scheduling hop per
  // request), on bytes, so that an oversized line is discarded, never held.
  await new Promise<void>((resolve) => {
    const reader = new LineReader(
      (line) => session.handleLine(line),
      (info) => session.lineTooLong(info),
      opts.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
    );
    process.stdin.on("data", (chunk: Buffer) => reader.push(chunk));
    process.stdin.on("end", () => {
      reader.end();
      resolve();
    });
  });
  await session.drain();
  await engine.close();
  if (session.ownTimes?.length) {
    const xs = [...session.ownTimes].sort((a, b) => a - b);
    const pct = (p: number) => Math.round(xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]! * 1000);
    process.stderr.write(`deckhand serve timing: ${JSON.stringify({ requests: xs.length, ownP50Us: pct(50), ownP99Us: pct(99) })}\n`);
  }
  return 0;
}
