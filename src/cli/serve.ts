// `deckhand serve`: NDJSON requests {id, command, args} on stdin, one
// envelope plus the same id per request on stdout. Requests are pipelined;
// mutations on one target are serialised by the engine. EOF: finish what is
// in flight, stop the helper, exit.
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
    return false;
  });
}

type Line = { id: unknown; envelope: Envelope };

export class ServeSession {
  private inflight = new Set<Promise<void>>();
  private cancels = new Map<string, Cancellation>();
  private readonly adapters: AdapterSession;

  constructor(
    readonly engine: Engine,
    private readonly write: (line: Line) => void,
    adapterOptions: AdapterOptions = {},
    private readonly limits: { maxInflight?: number } = {},
  ) {
    this.adapters = new AdapterSession(engine, adapterOptions);
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
    if (req && typeof req === "object" && req.command === "cancel") return true;
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

  private async handle(text: string): Promise<void> {
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
    const key = String(id);
    if (command === "cancel") {
      const target = (req.args as { id?: unknown } | undefined)?.id;
      const token = this.cancels.get(String(target));
      // Aborts its helper requests in flight (a wire cancel each) and its waits; its next step is not run.
      token?.cancel(`cancelled by serve request ${JSON.stringify(id)}`);
      this.write({ id, envelope: ok("cancel", { id: target ?? null, cancelled: token !== undefined }) });
      return;
    }
    const cancel = new Cancellation();
    this.cancels.set(key, cancel);
    // A serve client is an agent: operator-only commands (resume) are refused for it.
    const ctx: CallContext = { cancel, caller: "serve" };
    // Every helper request this request makes carries its cancellation.
    const cancellable = <T>(fn: () => Promise<T>) => this.engine.withCancel(cancel.signal, fn);
    try {
      // Adapter mode (docs/adapters.md): the request's `adapter`, else --adapter; null = native.
      const adapted = await cancellable(() => this.adapters.serveRequest(req as Record<string, unknown>, ctx));
      if (adapted) {
        this.write({ id, envelope: adapted as unknown as Envelope });
        return;
      }
      if (command === "run") {
        // In serve the program travels in the request: {command: "run", args: {program: {...}}}.
        const program = (req.args as { program?: unknown } | undefined)?.program;
        let envelope: Envelope;
        try {
          envelope = ok("run", await cancellable(() => runProgramValue(this.engine, program, ctx)));
        } catch (err) {
          envelope = fail("run", err, log);
        }
        this.write({ id, envelope });
        return;
      }
      const envelope = await cancellable(() => runCommand(this.engine, command, req.args ?? {}, ctx, log));
      this.write({ id, envelope });
    } finally {
      this.cancels.delete(key);
    }
  }

  async drain(): Promise<void> {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }
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
    ({ id, envelope }) => {
      process.stdout.write(JSON.stringify({ id, ...envelope }) + "\n");
    },
    { defaultAdapter: opts.adapter, app: opts.app, maxWidth: opts.maxWidth, maxSide: opts.maxSide, maxPixels: opts.maxPixels },
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
