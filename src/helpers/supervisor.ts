// Supervision of one platform helper process: spawn in its own process group,
// handshake, per-request deadlines, kill-and-restart on any protocol breach,
// and the one rule that matters most: a mutation whose outcome is unknown is
// reported as such and never sent again.
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { DeckhandError } from "../protocol/errors.ts";
import { encodeFrame, FrameDecoder, FrameError } from "../wire/codec.ts";
import {
  DEFAULT_MAX_FRAME_BYTES,
  Event as EventSchema,
  Hello,
  OPS,
  PROTOCOL_VERSION,
  Response as ResponseSchema,
  type OpArgs,
  type OpName,
  type OpResult,
  type Receipt,
} from "../wire/messages.ts";
import { StderrBuffer } from "./stderr-buffer.ts";

/** Default deadlines per op, from the public contract (ms). */
export const DEFAULT_DEADLINES: Record<OpName, number> = {
  permissions: 5_000,
  list_apps: 10_000,
  list_windows: 10_000,
  get_tree: 20_000,
  screenshot: 15_000,
  hit_test: 10_000,
  element_action: 10_000,
  input: 10_000,
  watch_user_input: 5_000,
};

export interface SupervisorOptions {
  path: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
  helloTimeoutMs?: number;
  /** Extra time past a deadline before the helper is declared hung. */
  graceMs?: number;
  /** Crashes within crashWindowMs beyond which we give up. */
  maxCrashes?: number;
  crashWindowMs?: number;
  deadlines?: Partial<Record<OpName, number>>;
}

export interface HelperReply<O extends OpName> {
  result: OpResult<O>;
  receipt?: Receipt;
}

interface Pending {
  op: OpName;
  /** When the request was written: the helper's share of the time is measured from here. */
  sentAt: number;
  mutates: boolean;
  resolve: (v: { result: Record<string, unknown>; receipt?: Receipt }) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
}

/** Thrown internally when a helper died or broke protocol with a request in flight. */
class HelperLost extends Error {
  constructor(
    readonly why: "exited" | "protocol" | "timeout",
    message: string,
    readonly details: Record<string, string | number | boolean> = {},
  ) {
    super(message);
  }
}

type State = "idle" | "starting" | "ready" | "stopped";

export class Supervisor extends EventEmitter {
  private child: ChildProcess | null = null;
  private decoder = new FrameDecoder();
  private pending = new Map<number, Pending>();
  private nextId = 1;
  private state: State = "idle";
  private starting: Promise<Hello> | null = null;
  private crashTimes: number[] = [];
  readonly stderr = new StderrBuffer();
  hello: Hello | null = null;
  /** Counters for tests and `capabilities`: how often we restarted, and why. */
  readonly stats = { spawns: 0, crashes: 0, timeouts: 0, protocolErrors: 0, helperWaitMs: 0 };

  constructor(private readonly opts: SupervisorOptions) {
    super();
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Spawn (or reuse) the helper and wait for its hello. */
  async start(): Promise<Hello> {
    if (this.state === "stopped") throw new DeckhandError("HELPER_UNAVAILABLE", "helper supervisor was stopped");
    if (this.state === "ready" && this.hello) return this.hello;
    if (this.starting) return this.starting;
    this.starting = this.spawnAndHandshake().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private recentCrashes(): number {
    const window = this.opts.crashWindowMs ?? 30_000;
    const now = Date.now();
    this.crashTimes = this.crashTimes.filter((t) => now - t < window);
    return this.crashTimes.length;
  }

  private async spawnAndHandshake(): Promise<Hello> {
    const crashes = this.recentCrashes();
    if (crashes >= (this.opts.maxCrashes ?? 4)) {
      throw new DeckhandError("HELPER_UNAVAILABLE", `helper crashed ${crashes} times in a short window; giving up`, {
        details: { crashes, stderrTail: this.stderr.tail(10).join("\n") },
      });
    }
    if (crashes > 0) {
      // Back off before respawning a helper that keeps dying.
      await new Promise((r) => setTimeout(r, Math.min(50 * 2 ** (crashes - 1), 1000)));
    }
    this.state = "starting";
    this.decoder = new FrameDecoder(DEFAULT_MAX_FRAME_BYTES);
    this.stats.spawns++;
    let child: ChildProcess;
    try {
      child = spawn(this.opts.path, this.opts.args ?? [], {
        stdio: ["pipe", "pipe", "pipe"],
        detached: true, // its own process group, so a kill takes its children too
        env: this.opts.env ?? process.env,
      });
    } catch (err) {
      this.state = "idle";
      throw new DeckhandError("HELPER_UNAVAILABLE", `could not start helper: ${(err as Error).message}`);
    }
    this.child = child;
    const helloTimeout = this.opts.helloTimeoutMs ?? Number((this.opts.env ?? process.env).DECKHAND_HELLO_TIMEOUT_MS || 5000);

    return await new Promise<Hello>((resolve, reject) => {
      let settled = false;
      const fail = (err: DeckhandError) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        // Detach first: its exit is accounted for here, not again by onExit.
        if (this.child === child) this.child = null;
        this.killGroup(child);
        this.state = "idle";
        reject(err);
      };
      const timer = setTimeout(() => {
        this.crashTimes.push(Date.now());
        fail(
          new DeckhandError("HELPER_UNAVAILABLE", `helper sent no hello within ${helloTimeout} ms`, {
            details: { helloTimeoutMs: helloTimeout, stderrTail: this.stderr.tail(10).join("\n") },
          }),
        );
      }, helloTimeout);

      child.on("error", (err) => {
        this.crashTimes.push(Date.now());
        fail(new DeckhandError("HELPER_UNAVAILABLE", `could not start helper: ${err.message}`));
      });
      child.stderr!.on("data", (d: Buffer) => this.stderr.push(d));
      child.stdin!.on("error", () => {
        /* EPIPE when the helper dies: the exit handler reports it */
      });
      child.on("exit", (code, signal) => {
        if (settled) {
          if (this.child === child) this.onExit(code, signal);
        } else {
          this.stats.crashes++;
          this.crashTimes.push(Date.now());
          fail(
            new DeckhandError("HELPER_UNAVAILABLE", `helper exited before hello (code ${code}, signal ${signal})`, {
              details: { stderrTail: this.stderr.tail(10).join("\n") },
            }),
          );
        }
      });
      child.stdout!.on("data", (chunk: Buffer) => {
        if (this.child !== child) return;
        let frames: Record<string, unknown>[];
        try {
          frames = this.decoder.push(chunk);
        } catch (err) {
          const reason = err instanceof FrameError ? err.reason : "malformed";
          this.protocolError(`bad frame from helper: ${(err as Error).message}`, { reason });
          if (!settled) fail(new DeckhandError("HELPER_PROTOCOL_ERROR", `bad first frame: ${(err as Error).message}`));
          return;
        }
        for (const frame of frames) {
          if (!settled) {
            const parsed = Hello.safeParse(frame);
            if (!parsed.success) {
              this.crashTimes.push(Date.now());
              fail(new DeckhandError("HELPER_PROTOCOL_ERROR", "helper's first frame is not a valid hello", {
                details: { type: String(frame.type) },
              }));
              return;
            }
            const hello = parsed.data;
            if (hello.protocol[0] !== PROTOCOL_VERSION[0]) {
              fail(
                new DeckhandError(
                  "HELPER_INCOMPATIBLE",
                  `helper speaks protocol ${hello.protocol.join(".")}, deckhand speaks ${PROTOCOL_VERSION.join(".")}`,
                  {
                    details: {
                      helperProtocol: hello.protocol.join("."),
                      deckhandProtocol: PROTOCOL_VERSION.join("."),
                      helper: `${hello.helper.name} ${hello.helper.version}`,
                    },
                  },
                ),
              );
              return;
            }
            settled = true;
            clearTimeout(timer);
            this.decoder.maxFrameBytes = Math.min(hello.limits.max_frame_bytes || DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_FRAME_BYTES);
            this.hello = hello;
            this.state = "ready";
            resolve(hello);
            continue;
          }
          this.onFrame(frame);
          if (this.child !== child) return; // a protocol error killed it
        }
      });
    });
  }

  private onFrame(frame: Record<string, unknown>): void {
    if (frame.type === "response") {
      const parsed = ResponseSchema.safeParse(frame);
      if (!parsed.success) return this.protocolError("malformed response from helper");
      const res = parsed.data;
      const p = this.pending.get(res.id);
      if (!p) return this.protocolError(`response to unknown request id ${res.id}`, { id: res.id });
      this.stats.helperWaitMs += performance.now() - p.sentAt;
      this.pending.delete(res.id);
      clearTimeout(p.timer);
      if (p.mutates && !res.receipt) {
        // Without a receipt we cannot say what happened: unknown, never retried.
        p.reject(new HelperLost("protocol", "helper answered a mutation without a receipt"));
        return this.protocolError("mutation response without receipt");
      }
      if (res.ok) {
        const check = OPS[p.op].result.safeParse(res.result ?? {});
        if (!check.success) {
          p.reject(new HelperLost("protocol", `helper's ${p.op} result does not match the schema`, {
            issue: check.error.issues[0]?.path.join(".") + ": " + check.error.issues[0]?.message,
          }));
          return this.protocolError(`invalid ${p.op} result`);
        }
        p.resolve({ result: check.data as Record<string, unknown>, receipt: res.receipt });
      } else {
        const e = res.error ?? { code: "INTERNAL" as const, message: "helper error without details" };
        const details = { ...(e.details ?? {}) };
        if (res.receipt) details.delivery = res.receipt.delivery;
        const err = new DeckhandError(e.code, e.message, { details });
        (err as DeckhandError & { receipt?: Receipt }).receipt = res.receipt;
        p.reject(err);
      }
      return;
    }
    if (frame.type === "event") {
      const parsed = EventSchema.safeParse(frame);
      if (!parsed.success) return this.protocolError("malformed event from helper");
      this.emit("helper-event", parsed.data);
      return;
    }
    this.protocolError(`unexpected frame type ${JSON.stringify(frame.type)} from helper`);
  }

  private protocolError(message: string, details: Record<string, string | number | boolean> = {}): void {
    this.stats.protocolErrors++;
    this.stderr.push(`[deckhand] protocol error: ${message}\n`);
    this.loseHelper(new HelperLost("protocol", message, details));
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.state === "stopped") return;
    this.stats.crashes++;
    // An exit with nothing in flight (between requests, after answering) made
    // progress: restart on demand, but do not count it towards a crash loop.
    if (this.pending.size > 0) this.crashTimes.push(Date.now());
    this.loseHelper(new HelperLost("exited", `helper exited (code ${code}, signal ${signal})`, {
      exitCode: code ?? -1,
      signal: signal ?? "",
    }), false);
  }

  /**
   * Kill the helper's process group and fail everything in flight. When one
   * request timed out (timedOutId), the others did not: they lost their
   * helper, so reads among them may be retried like after a crash.
   */
  private loseHelper(reason: HelperLost, kill = true, timedOutId?: number): void {
    const child = this.child;
    this.child = null;
    this.hello = null;
    if (this.state !== "stopped") this.state = "idle";
    if (child && kill) this.killGroup(child);
    if (reason.why !== "exited") this.crashTimes.push(Date.now());
    const inflight = [...this.pending.entries()];
    this.pending.clear();
    for (const [id, p] of inflight) {
      clearTimeout(p.timer);
      if (timedOutId !== undefined && id !== timedOutId) {
        p.reject(new HelperLost("exited", `helper was killed because another request timed out (${reason.message})`));
      } else {
        p.reject(reason);
      }
    }
  }

  private killGroup(child: ChildProcess): void {
    if (child.pid == null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      try {
        child.kill("SIGKILL");
      } catch {
        /* already gone */
      }
    }
  }

  /** Raw request: resolves with result and receipt, rejects with DeckhandError. */
  async request<O extends OpName>(op: O, args: OpArgs<O>, opts: { deadlineMs?: number } = {}): Promise<HelperReply<O>> {
    const spec = OPS[op];
    const mutates = spec.mutates;
    try {
      return await this.requestOnce(op, args, opts);
    } catch (err) {
      if (!(err instanceof HelperLost)) throw err;
      if (mutates) {
        // The helper may or may not have acted. Say so; never resend.
        throw new DeckhandError(err.why === "timeout" ? "TIMEOUT" : "ACTION_FAILED", `${err.message}; the action's outcome is unknown and it was not retried`, {
          details: { ...err.details, delivery: "unknown", op },
        });
      }
      if (err.why === "timeout") {
        throw new DeckhandError("TIMEOUT", err.message, { details: { ...err.details, op } });
      }
      // A read is safe to retry once on a fresh helper.
      try {
        return await this.requestOnce(op, args, opts);
      } catch (err2) {
        if (err2 instanceof HelperLost) {
          throw new DeckhandError(err2.why === "timeout" ? "TIMEOUT" : "HELPER_UNAVAILABLE", `${err2.message} (after one retry)`, {
            details: { ...err2.details, op, stderrTail: this.stderr.tail(10).join("\n") },
          });
        }
        throw err2;
      }
    }
  }

  private async requestOnce<O extends OpName>(op: O, args: OpArgs<O>, opts: { deadlineMs?: number }): Promise<HelperReply<O>> {
    await this.start();
    const child = this.child;
    if (!child || !child.stdin) throw new HelperLost("exited", "helper is not running");
    const deadline = opts.deadlineMs ?? this.opts.deadlines?.[op] ?? DEFAULT_DEADLINES[op];
    const grace = this.opts.graceMs ?? 250;
    const id = this.nextId++;
    const mutates = OPS[op].mutates;
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (!this.pending.has(id)) return;
        this.stats.timeouts++;
        this.loseHelper(new HelperLost("timeout", `helper did not answer ${op} within ${deadline} ms`, { deadlineMs: deadline }), true, id);
      }, deadline + grace);
      this.pending.set(id, {
        op,
        sentAt: performance.now(),
        mutates,
        resolve: resolve as Pending["resolve"],
        reject,
        timer,
      });
      child.stdin!.write(encodeFrame({ type: "request", id, op, deadline_ms: deadline, args: args as Record<string, unknown> }));
    });
  }

  /** Best effort: ask the helper to drop a request it has not dispatched yet. */
  cancel(id: number): void {
    this.child?.stdin?.write(encodeFrame({ type: "cancel", id }));
  }

  isSupported(capability: string): boolean {
    return this.hello?.capabilities[capability]?.supported === true;
  }

  /** Close stdin (the helper exits on EOF), then kill the group if it lingers. */
  async stop(): Promise<void> {
    this.state = "stopped";
    const child = this.child;
    this.child = null;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new HelperLost("exited", "deckhand is shutting down"));
    }
    this.pending.clear();
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.killGroup(child);
        resolve();
      }, 1000);
      child.once("exit", () => {
        clearTimeout(t);
        // Anything the helper itself spawned goes with its group.
        this.killGroup(child);
        resolve();
      });
      child.stdin?.end();
    });
  }
}
