// A raw, checking connection to one helper process for `deckhand helper
// check`. Unlike the supervisor it never restarts, never gates by capability
// and never kills the helper for a protocol breach: it records what the
// helper did (every frame, its exit, its stderr) so the checks can judge it.
// Spawned with argv only (no shell), in its own process group; kill() takes
// the whole group.
import { spawn, type ChildProcess } from "node:child_process";
import { encodeFrame, FrameDecoder } from "../../wire/codec.ts";
import { DEFAULT_MAX_FRAME_BYTES, Event as EventSchema, Hello, Response as ResponseSchema, type Response } from "../../wire/messages.ts";
import { StderrBuffer } from "../stderr-buffer.ts";

/** How the helper process ended. */
export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** ms since spawn */
  at: number;
}

/** What became of one request. */
export type Answer =
  | { kind: "response"; response: Response; ms: number }
  | { kind: "timeout"; ms: number }
  | { kind: "exited"; exit: ExitInfo; ms: number }
  | { kind: "broken"; message: string; ms: number };

export type HelloOutcome =
  | { kind: "hello"; hello: Hello; ms: number }
  | { kind: "invalid"; message: string; ms: number }
  | { kind: "timeout"; ms: number }
  | { kind: "exited"; exit: ExitInfo; ms: number }
  | { kind: "broken"; message: string; ms: number }
  | { kind: "spawn-failed"; message: string; ms: number };

interface Pending {
  resolve: (a: Answer) => void;
  timer: NodeJS.Timeout;
  sentAt: number;
}

/** The first issue of a zod error, as "path: message". */
export function firstIssue(error: { issues: { path: PropertyKey[]; message: string }[] }): string {
  const i = error.issues[0];
  if (!i) return "invalid";
  const path = i.path.map(String).join(".");
  return path ? `${path}: ${i.message}` : i.message;
}

export class HelperConnection {
  readonly stderr = new StderrBuffer(200, 64 * 1024);
  /** Breaches of the wire protocol seen on the helper's stdout, in order. */
  readonly violations: string[] = [];
  /** Responses that came after their request was given up on (deadline passed). */
  readonly late: number[] = [];
  readonly events: string[] = [];
  framesReceived = 0;
  hello: Hello | null = null;
  exit: ExitInfo | null = null;
  /** Set when the stdout stream could not be decoded: nothing after it can be read. */
  broken: string | null = null;

  private child: ChildProcess | null = null;
  private readonly t0 = performance.now();
  private decoder = new FrameDecoder(DEFAULT_MAX_FRAME_BYTES);
  private pending = new Map<number, Pending>();
  private expired = new Set<number>();
  private nextId = 1;
  private helloWaiter: ((o: HelloOutcome) => void) | null = null;
  private firstFrame: Record<string, unknown> | null = null;
  private spawnError: string | null = null;
  private exitWaiters: ((e: ExitInfo) => void)[] = [];

  constructor(
    readonly path: string,
    private readonly env: NodeJS.ProcessEnv = process.env,
  ) {}

  now(): number {
    return Math.round(performance.now() - this.t0);
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get alive(): boolean {
    return this.child !== null && this.exit === null && this.spawnError === null;
  }

  /** Spawn and wait (at most timeoutMs) for the first frame. */
  start(timeoutMs: number): Promise<HelloOutcome> {
    const t = performance.now();
    const ms = () => Math.round(performance.now() - t);
    return new Promise<HelloOutcome>((resolve) => {
      let done = false;
      const finish = (o: HelloOutcome) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        this.helloWaiter = null;
        resolve(o);
      };
      const timer = setTimeout(() => finish({ kind: "timeout", ms: ms() }), timeoutMs);
      this.helloWaiter = (o) => finish({ ...o, ms: ms() } as HelloOutcome);
      let child: ChildProcess;
      try {
        child = spawn(this.path, [], { stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32", windowsHide: true, env: this.env, shell: false });
      } catch (err) {
        this.spawnError = (err as Error).message;
        finish({ kind: "spawn-failed", message: this.spawnError, ms: ms() });
        return;
      }
      this.child = child;
      child.on("error", (err) => {
        this.spawnError = err.message;
        finish({ kind: "spawn-failed", message: `${err.message}${(err as NodeJS.ErrnoException).code ? ` (${(err as NodeJS.ErrnoException).code})` : ""}`, ms: ms() });
      });
      child.stdin!.on("error", () => {
        /* EPIPE when the helper is gone: its exit says what happened */
      });
      child.stderr!.on("data", (d: Buffer) => this.stderr.push(d));
      child.stdout!.on("data", (chunk: Buffer) => this.onData(chunk));
      child.on("exit", (code, signal) => this.onExit(code, signal, finish, ms));
    });
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, finishHello: (o: HelloOutcome) => void, ms: () => number): void {
    // Let the last stdout/stderr bytes in before saying it is gone.
    const done = () => {
      if (this.exit) return;
      const exit: ExitInfo = { code, signal, at: this.now() };
      this.exit = exit;
      if (!this.hello && !this.firstFrame && this.spawnError === null) finishHello({ kind: "exited", exit, ms: ms() });
      const inflight = [...this.pending.entries()];
      this.pending.clear();
      for (const [, p] of inflight) {
        clearTimeout(p.timer);
        p.resolve({ kind: "exited", exit, ms: Math.round(performance.now() - p.sentAt) });
      }
      for (const w of this.exitWaiters.splice(0)) w(exit);
    };
    const out = this.child?.stdout;
    if (out && !out.readableEnded && !out.destroyed) {
      const t = setTimeout(done, 250);
      out.once("close", () => {
        clearTimeout(t);
        done();
      });
    } else done();
  }

  private onData(chunk: Buffer): void {
    if (this.broken) return;
    let frames: Record<string, unknown>[];
    try {
      frames = this.decoder.push(chunk);
    } catch (err) {
      this.breakStream(`stdout is not a frame stream: ${(err as Error).message}`);
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private breakStream(message: string): void {
    this.broken = message;
    this.violations.push(message);
    if (this.helloWaiter && !this.hello) this.helloWaiter({ kind: "broken", message, ms: 0 });
    const inflight = [...this.pending.values()];
    this.pending.clear();
    for (const p of inflight) {
      clearTimeout(p.timer);
      p.resolve({ kind: "broken", message, ms: Math.round(performance.now() - p.sentAt) });
    }
  }

  private onFrame(frame: Record<string, unknown>): void {
    this.framesReceived++;
    if (!this.firstFrame) {
      this.firstFrame = frame;
      const parsed = Hello.safeParse(frame);
      if (!parsed.success) {
        const what = frame.type === "hello" ? `not a valid hello (${firstIssue(parsed.error)})` : `not a hello (type ${JSON.stringify(frame.type)})`;
        this.helloWaiter?.({ kind: "invalid", message: `the first frame is ${what}`, ms: 0 });
        return;
      }
      this.hello = parsed.data;
      this.decoder.maxFrameBytes = Math.min(parsed.data.limits.max_frame_bytes || DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_FRAME_BYTES);
      this.helloWaiter?.({ kind: "hello", hello: parsed.data, ms: 0 });
      return;
    }
    switch (frame.type) {
      case "response": {
        const parsed = ResponseSchema.safeParse(frame);
        const id = typeof frame.id === "number" ? frame.id : null;
        if (!parsed.success) {
          const message = `a response frame does not match the schema (${firstIssue(parsed.error)})`;
          this.violations.push(message);
          const p = id !== null ? this.pending.get(id) : undefined;
          if (p && id !== null) {
            this.pending.delete(id);
            clearTimeout(p.timer);
            p.resolve({ kind: "broken", message, ms: Math.round(performance.now() - p.sentAt) });
          }
          return;
        }
        const res = parsed.data;
        const p = this.pending.get(res.id);
        if (!p) {
          if (this.expired.delete(res.id)) this.late.push(res.id);
          else this.violations.push(`a response to id ${res.id}, which is not in flight (never sent, or answered already)`);
          return;
        }
        this.pending.delete(res.id);
        clearTimeout(p.timer);
        p.resolve({ kind: "response", response: res, ms: Math.round(performance.now() - p.sentAt) });
        return;
      }
      case "event": {
        const parsed = EventSchema.safeParse(frame);
        if (!parsed.success) this.violations.push(`an event frame does not match the schema (${firstIssue(parsed.error)})`);
        else this.events.push(parsed.data.event);
        return;
      }
      case "hello":
        this.violations.push("a second hello frame");
        return;
      default:
        this.violations.push(`a frame of type ${JSON.stringify(frame.type)}, which a helper never sends`);
    }
  }

  /** Allocate the next request id (ids grow and are never reused). */
  takeId(): number {
    return this.nextId++;
  }

  /**
   * Send one request and wait for its answer, at most deadlineMs + graceMs.
   * `frameExtra` adds fields to the frame itself (after the standard ones).
   */
  request(op: string, args: Record<string, unknown>, opts: { deadlineMs: number; graceMs?: number; frameExtra?: Record<string, unknown>; id?: number }): { id: number; answer: Promise<Answer> } {
    const id = opts.id ?? this.takeId();
    const frame = encodeFrame({ type: "request", id, op, deadline_ms: opts.deadlineMs, args, ...(opts.frameExtra ?? {}) });
    return { id, answer: this.sendAndWait(id, frame, opts.deadlineMs + (opts.graceMs ?? 250)) };
  }

  /** Write an already encoded request frame and wait for the answer to `id`. */
  sendAndWait(id: number, frame: Buffer, waitMs: number): Promise<Answer> {
    const sentAt = performance.now();
    if (this.broken) return Promise.resolve({ kind: "broken", message: this.broken, ms: 0 });
    if (this.exit) return Promise.resolve({ kind: "exited", exit: this.exit, ms: 0 });
    if (!this.child?.stdin || this.child.stdin.destroyed) return Promise.resolve({ kind: "broken", message: "the helper's stdin is closed", ms: 0 });
    return new Promise<Answer>((resolve) => {
      const timer = setTimeout(() => {
        if (!this.pending.delete(id)) return;
        this.expired.add(id);
        resolve({ kind: "timeout", ms: Math.round(performance.now() - sentAt) });
      }, waitMs);
      this.pending.set(id, { resolve, timer, sentAt });
      this.child!.stdin!.write(frame);
    });
  }

  cancel(id: number): void {
    if (this.alive) this.child?.stdin?.write(encodeFrame({ type: "cancel", id }));
  }

  /** Close the helper's stdin (it should exit) and wait for its exit, at most timeoutMs. */
  async closeStdin(timeoutMs: number): Promise<ExitInfo | null> {
    this.child?.stdin?.end();
    return this.waitExit(timeoutMs);
  }

  waitExit(timeoutMs: number): Promise<ExitInfo | null> {
    if (this.exit || !this.child || this.spawnError) return Promise.resolve(this.exit);
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(null), timeoutMs);
      this.exitWaiters.push((e) => {
        clearTimeout(t);
        resolve(e);
      });
    });
  }

  /** SIGKILL the helper's process group (whatever it spawned goes too). Safe to call twice. */
  kill(): void {
    const child = this.child;
    if (!child?.pid) return;
    try {
      if (process.platform === "win32") child.kill("SIGKILL");
      else process.kill(-child.pid, "SIGKILL");
    } catch {
      try {
        child.kill("SIGKILL");
      } catch {
        /* already gone */
      }
    }
    child.stdin?.destroy();
  }

  /** Settle once everything in flight is answered or given up on. */
  get inFlight(): number {
    return this.pending.size;
  }
}
