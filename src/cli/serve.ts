// `deckhand serve`: NDJSON requests {id, command, args} on stdin, one
// envelope plus the same id per request on stdout. Requests are pipelined;
// mutations on one target are serialised by the engine. EOF: finish what is
// in flight, stop the helper, exit.
import { StringDecoder } from "node:string_decoder";
import { DeckhandError } from "../protocol/errors.ts";
import { runProgramValue, type CallContext } from "../commands/index.ts";
import { Engine, type OperatorOptions } from "../engine/engine.ts";
import { createSafety } from "../engine/default-safety.ts";
import type { CancelToken } from "../program/executor.ts";
import { fail, ok, type Envelope } from "./envelope.ts";
import { runCommand } from "./run-command.ts";
import { parseSessionFlags } from "./session-flags.ts";
import { AdapterSession, type AdapterOptions } from "../adapters/session.ts";

const log = (m: string) => process.stderr.write(`deckhand serve: ${m}\n`);

export interface ServeOptions extends OperatorOptions {
  adapter?: "native" | "openai" | "anthropic";
  /** Adapter mode: default target app (--app) and screenshot width cap (--max-width). */
  app?: string;
  maxWidth?: number;
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
    return false;
  });
}

type Line = { id: unknown; envelope: Envelope };

export class ServeSession {
  private inflight = new Set<Promise<void>>();
  private cancels = new Map<string, CancelToken>();
  private readonly adapters: AdapterSession;

  constructor(
    readonly engine: Engine,
    private readonly write: (line: Line) => void,
    adapterOptions: AdapterOptions = {},
  ) {
    this.adapters = new AdapterSession(engine, adapterOptions);
  }

  handleLine(text: string): void {
    if (!text.trim()) return;
    const p = this.handle(text).catch((err) => this.write({ id: null, envelope: fail("deckhand", err, log) }));
    this.inflight.add(p);
    void p.finally(() => this.inflight.delete(p));
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
      if (token) token.cancelled = true;
      this.write({ id, envelope: ok("cancel", { id: target ?? null, cancelled: token !== undefined }) });
      return;
    }
    const cancel: CancelToken = { cancelled: false };
    this.cancels.set(key, cancel);
    const ctx: CallContext = { cancel };
    try {
      // Adapter mode (docs/adapters.md): the request's `adapter`, else --adapter; null = native.
      const adapted = await this.adapters.serveRequest(req as Record<string, unknown>, ctx);
      if (adapted) {
        this.write({ id, envelope: adapted as unknown as Envelope });
        return;
      }
      if (command === "run") {
        // In serve the program travels in the request: {command: "run", args: {program: {...}}}.
        const program = (req.args as { program?: unknown } | undefined)?.program;
        let envelope: Envelope;
        try {
          envelope = ok("run", await runProgramValue(this.engine, program, ctx));
        } catch (err) {
          envelope = fail("run", err, log);
        }
        this.write({ id, envelope });
        return;
      }
      const envelope = await runCommand(this.engine, command, req.args ?? {}, ctx, log);
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
    engine = new Engine(opts, createSafety(opts, process.env, { sessionGrant: opts.allowForeground === true, session }));
  } catch (err) {
    process.stdout.write(JSON.stringify({ id: null, ...fail("serve", err, log) }) + "\n");
    return 1;
  }
  const session = new ServeSession(
    engine,
    ({ id, envelope }) => {
      process.stdout.write(JSON.stringify({ id, ...envelope }) + "\n");
    },
    { defaultAdapter: opts.adapter, app: opts.app, maxWidth: opts.maxWidth },
  );
  // Split lines ourselves: readline's async iterator adds a scheduling hop per request.
  await new Promise<void>((resolve) => {
    let pending = "";
    // A multi-byte character may straddle two chunks: decode as a stream.
    const utf8 = new StringDecoder("utf8");
    process.stdin.on("data", (chunk: Buffer) => {
      pending += utf8.write(chunk);
      let nl: number;
      while ((nl = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, nl).replace(/\r$/, "");
        pending = pending.slice(nl + 1);
        session.handleLine(line);
      }
    });
    process.stdin.on("end", () => {
      pending += utf8.end();
      if (pending.trim()) session.handleLine(pending);
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
