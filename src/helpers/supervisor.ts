// Supervision of one platform helper process: spawn in its own process group,
// handshake, per-request deadlines, kill-and-restart on any protocol breach,
// and the one rule that matters most: a mutation whose outcome is unknown is
// reported as such and never sent again.
import { spawn, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { accessSync, constants as fsConstants } from "node:fs";
import { delimiter, join } from "node:path";
import treeKill from "tree-kill";
import { DeckhandError } from "../protocol/errors.ts";
import { encodeFrame, FrameDecoder, FrameError } from "../wire/codec.ts";
import {
  DEFAULT_MAX_FRAME_BYTES,
  Event as EventSchema,
  Hello,
  HELPER_ERROR_CODES,
  OPS,
  PROTOCOL_VERSION,
  Response as ResponseSchema,
  type OpArgs,
  type OpName,
  type OpResult,
  type Receipt,
} from "../wire/messages.ts";
import { StderrBuffer } from "./stderr-buffer.ts";
import { adoptPrespawned } from "./prespawn.ts";

/** Default deadlines per op, from the public contract (ms). */
/** DECKHAND_TRACE_OPS=1: every helper request's op and round trip on stderr (for bench/ and slow-path hunts). */
const TRACE_OPS = process.env.DECKHAND_TRACE_OPS === "1";

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
  set_accessibility: 5_000,
  focused_element: 5_000,
  // The settle wait is bounded by its own max_ms (at most 10 s); this leaves room.
  settle: 12_000,
  // ---- issue 13: clipboard
  // Conversions are bounded by 2 s each; paste adds its wait_ms on top (the caller passes it).
  clipboard_get: 8_000,
  clipboard_set: 8_000,
  paste: 10_000,
  // ---- end clipboard
  // ---- issue 13: menus
  // A menu bar of a few hundred items: each a handful of pipelined calls.
  menu_tree: 15_000,
  // Bounded by its own 1 s wait for the menu to leave the screen.
  menu_close: 5_000,
  // ---- end menus
  // ---- issue 13: app lifecycle
  // Reading a few hundred entries; a spawn (the exec's outcome is awaited);
  // window_op waits (bounded) for the window manager and the app.
  list_installed: 10_000,
  launch: 10_000,
  launch_status: 5_000,
  window_op: 10_000,
  // ---- end lifecycle
  // ---- issue 15: click
  // A hit test and one click (GTK 4 and Qt hold the button 12 ms), or one accessibility press.
  point_click: 10_000,
  // ---- end click
};

/** Input step kinds that move or press the pointer, and those that press keys. */
const POINTER_STEPS = new Set(["move", "button", "click", "scroll"]);
const KEYBOARD_STEPS = new Set(["key", "tap", "type"]);

/**
 * The capabilities a request needs: the op's own (OPS[op].capability), or for
 * element_action `action.<action>`, and for input `input.pointer` /
 * `input.keyboard` by step kind (a click with modifiers presses keys) plus
 * `input.focus_guard` when it carries a focus guard. The supervisor refuses a
 * request before sending it unless the helper's hello supports all of them.
 */
export function requiredCapabilities<O extends OpName>(op: O, args: OpArgs<O>): string[] {
  const own = OPS[op].capability;
  if (own) return [own];
  if (op === "element_action") return [`action.${(args as OpArgs<"element_action">).action}`];
  if (op === "input") {
    const a = args as OpArgs<"input">;
    const needs = new Set<string>();
    for (const s of a.steps ?? []) {
      if (POINTER_STEPS.has(s.kind)) needs.add("input.pointer");
      if (KEYBOARD_STEPS.has(s.kind) || (s.kind === "click" && s.modifiers.length > 0)) needs.add("input.keyboard");
    }
    if (a.focus) needs.add("input.focus_guard");
    if (a.pointer_guard) needs.add("input.pointer_guard");
    return [...needs];
  }
  return [];
}

/** Why a helper instance was lost; "spawn" failures (not found, not executable) are not crashes. */
type FailureKind = "crash" | "protocol" | "timeout" | "no-hello";

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
  /**
   * The cancellation signal of the command being run (the engine's cancel
   * scope), used by a request that names no signal of its own.
   */
  ambientSignal?: () => AbortSignal | undefined;
}

export interface RequestOptions {
  deadlineMs?: number;
  /**
   * Cancels the request. Before it is written: nothing is sent. In flight: a
   * `cancel` frame goes to the helper; a read is answered CANCELLED at once,
   * a mutation when the helper's receipt says what was sent (never resent).
   * null: ignore the ambient signal too.
   */
  signal?: AbortSignal | null;
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
  /** The caller cancelled it and a cancel frame went out. */
  cancelled?: boolean;
}

/** Ids of cancelled reads given up on without an answer: a late answer is dropped, not a protocol error. */
const MAX_ABANDONED = 1024;

function cancelledError(op: OpName, delivery: Receipt["delivery"], message?: string, details: Record<string, string | number | boolean> = {}): DeckhandError {
  return new DeckhandError("CANCELLED", message ?? `${op} was cancelled`, { details: { ...details, op, delivery } });
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
  private abandoned = new Set<number>();
  /** Kills of helper trees still walking `ps`; stop() waits for them. */
  private kills = new Set<Promise<void>>();
  private nextId = 1;
  private state: State = "idle";
  private starting: Promise<Hello> | null = null;
  /** Failures of helper instances within the crash window (for back-off and giving up). */
  private crashTimes: { at: number; kind: FailureKind }[] = [];
  /** The helper's own stderr lines only. */
  readonly stderr = new StderrBuffer();
  /** deckhand's own diagnostics about the helper (protocol errors, kills), kept apart from its stderr. */
  readonly diagnostics = new StderrBuffer(50, 16 * 1024);
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
    this.crashTimes = this.crashTimes.filter((t) => now - t.at < window);
    return this.crashTimes.length;
  }

  private recordFailure(kind: FailureKind): void {
    this.crashTimes.push({ at: Date.now(), kind });
  }

  private note(message: string): void {
    this.diagnostics.push(`${new Date().toISOString()} ${message}\n`);
  }

  /**
   * HELPER_UNAVAILABLE for a helper that was found and started but
   * misbehaved: the remediation says so (not "install a helper"), names its
   * path, and points at details.stderrTail (its own stderr) and
   * details.lastDiagnostic (deckhand's note about what went wrong).
   */
  private misbehaved(reason: "no-hello" | "exited-before-hello" | "crash-loop" | "lost", message: string, remediation: string, details: Record<string, string | number | boolean> = {}): DeckhandError {
    const last = this.diagnostics.tail(1)[0];
    return new DeckhandError("HELPER_UNAVAILABLE", message, {
      remediation,
      details: {
        ...details,
        reason,
        helperPath: this.opts.path,
        stderrTail: this.stderr.tail(10).join("\n"),
        ...(last ? { lastDiagnostic: last } : {}),
      },
    });
  }

  /** "3 crashes, 1 timeout" for the failures in the window. */
  private failureSummary(): string {
    const counts = new Map<FailureKind, number>();
    for (const f of this.crashTimes) counts.set(f.kind, (counts.get(f.kind) ?? 0) + 1);
    const words: Record<FailureKind, [string, string]> = {
      crash: ["crash", "crashes"],
      protocol: ["protocol error", "protocol errors"],
      timeout: ["timeout", "timeouts"],
      "no-hello": ["start-up without a hello", "start-ups without a hello"],
    };
    return [...counts].map(([k, n]) => `${n} ${words[k][n === 1 ? 0 : 1]}`).join(", ");
  }

  private async spawnAndHandshake(): Promise<Hello> {
    const crashes = this.recentCrashes();
    if (crashes >= (this.opts.maxCrashes ?? 4)) {
      const windowMs = this.opts.crashWindowMs ?? 30_000;
      const spanS = Math.max(1, Math.round((Date.now() - (this.crashTimes[0]?.at ?? Date.now())) / 1000));
      const summary = this.failureSummary();
      throw this.misbehaved(
        "crash-loop",
        `helper ${this.opts.path} failed ${crashes} times in ${spanS} s (${summary}); giving up for now`,
        `The helper at ${this.opts.path} keeps failing (${summary} in ${spanS} s), so deckhand stopped restarting it; it tries again once ${Math.round(windowMs / 1000)} s pass without a failure. Its last stderr lines are in details.stderrTail and deckhand's own note in details.lastDiagnostic: check its log, and report it with both.`,
        { crashes, windowS: Math.round(windowMs / 1000), failures: summary },
      );
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
      // A one-shot CLI call may have started this very helper already (prespawn.ts).
      const early = this.stats.spawns === 1 && !this.opts.args?.length ? adoptPrespawned(this.opts.path, this.opts.env ?? process.env) : null;
      child = early ?? spawn(this.opts.path, this.opts.args ?? [], {
        stdio: ["pipe", "pipe", "pipe"],
        // Its own process group, so a kill takes its children too. Not on
        // Windows: there `detached` gives the helper a console window of its
        // own (which would show up among the desktop's windows); its tree is
        // killed with taskkill /T instead.
        detached: process.platform !== "win32",
        windowsHide: true,
        env: this.opts.env ?? process.env,
      });
    } catch (err) {
      this.state = "idle";
      throw new DeckhandError("HELPER_UNAVAILABLE", `could not start helper ${this.opts.path}: ${(err as Error).message}`, {
        details: { reason: "spawn-failed", helperPath: this.opts.path },
      });
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
        this.recordFailure("no-hello");
        this.note(`helper pid ${child.pid} sent no hello within ${helloTimeout} ms; killed`);
        fail(
          this.misbehaved(
            "no-hello",
            `helper sent no hello within ${helloTimeout} ms`,
            `The helper at ${this.opts.path} started but sent no hello within ${helloTimeout} ms: it hangs at start-up, or it is not a deckhand helper. Its last stderr lines are in details.stderrTail; run it by hand to see what it does (DECKHAND_HELLO_TIMEOUT_MS raises the wait).`,
            { helloTimeoutMs: helloTimeout },
          ),
        );
      }, helloTimeout);

      child.on("error", (err) => {
        // Not found or not executable: it never ran, so it is not a crash.
        fail(
          new DeckhandError("HELPER_UNAVAILABLE", `could not start helper ${this.opts.path}: ${err.message}`, {
            details: { reason: "spawn-failed", helperPath: this.opts.path, ...((err as NodeJS.ErrnoException).code ? { errno: (err as NodeJS.ErrnoException).code! } : {}) },
          }),
        );
      });
      child.stderr!.on("data", (d: Buffer) => this.stderr.push(d));
      // A helper that dies at start-up says why on stderr; its exit can be
      // seen before that last chunk is read. Wait (bounded) for stderr's end.
      const stderrDrained = new Promise<void>((resolve) => {
        child.stderr!.once("close", () => resolve());
        child.stderr!.once("end", () => resolve());
      });
      child.stdin!.on("error", () => {
        /* EPIPE when the helper dies: the exit handler reports it */
      });
      child.on("exit", (code, signal) => {
        if (settled) {
          if (this.child === child) this.onExit(code, signal);
        } else {
          this.stats.crashes++;
          this.recordFailure("crash");
          this.note(`helper pid ${child.pid} exited before its hello (code ${code}, signal ${signal})`);
          void Promise.race([stderrDrained, new Promise((r) => setTimeout(r, 250))]).then(() =>
            fail(
              this.misbehaved(
                "exited-before-hello",
                `helper exited before hello (code ${code}, signal ${signal})`,
                `The helper at ${this.opts.path} started but exited before its hello (code ${code}, signal ${signal}). Its last stderr lines are in details.stderrTail: fix what they report (a display, a bus, a library?), or report it with them.`,
                { exitCode: code ?? -1, signal: signal ?? "" },
              ),
            ),
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
          if (!settled) {
            fail(new DeckhandError("HELPER_PROTOCOL_ERROR", `bad first frame: ${(err as Error).message}`, {
              remediation: `The program at ${this.opts.path} wrote bytes that are not a deckhand frame to stdout: it is not a deckhand helper, or it prints diagnostics to stdout instead of stderr. Its last stderr lines are in details.stderrTail.`,
              details: { reason, helperPath: this.opts.path, stderrTail: this.stderr.tail(10).join("\n") },
            }));
          }
          return;
        }
        for (const frame of frames) {
          if (!settled) {
            const parsed = Hello.safeParse(frame);
            if (!parsed.success) {
              this.recordFailure("protocol");
              this.note(`helper pid ${child.pid}: first frame is not a valid hello (type ${JSON.stringify(frame.type)})`);
              fail(new DeckhandError("HELPER_PROTOCOL_ERROR", "helper's first frame is not a valid hello", {
                remediation: `The program at ${this.opts.path} did not begin with a deckhand hello frame: it is not a deckhand helper, or it writes something else to stdout. Its last stderr lines are in details.stderrTail.`,
                details: { type: String(frame.type), helperPath: this.opts.path, stderrTail: this.stderr.tail(10).join("\n") },
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
      if (!p && this.abandoned.delete(res.id)) return; // a cancelled read's late answer
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
        const e = res.error ?? { code: "INTERNAL", message: "helper error without details" };
        const details: Record<string, string | number | boolean> = { ...(e.details ?? {}) };
        if (res.receipt) details.delivery = res.receipt.delivery;
        // A code from a newer helper is not a protocol error: surface it under
        // a stable code with the helper's own word in details.
        const known = (HELPER_ERROR_CODES as readonly string[]).includes(e.code);
        if (!known) details.helperCode = e.code;
        const err =
          p.cancelled && details.cancelled === true
            ? cancelledError(p.op, res.receipt?.delivery ?? "unknown", `${p.op} was cancelled: ${e.message}`, details)
            : new DeckhandError(known ? (e.code as DeckhandError["code"]) : "HELPER_ERROR", e.message, { details });
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
    this.note(`protocol error: ${message}`);
    this.loseHelper(new HelperLost("protocol", message, details));
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.state === "stopped") return;
    this.stats.crashes++;
    // An exit with nothing in flight (between requests, after answering) made
    // progress: restart on demand, but do not count it towards a crash loop.
    if (this.pending.size > 0) this.recordFailure("crash");
    if (this.pending.size > 0) this.note(`helper exited with ${this.pending.size} request(s) in flight (code ${code}, signal ${signal})`);
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
    if (reason.why !== "exited") this.recordFailure(reason.why);
    if (reason.why === "timeout") this.note(`killed the helper: ${reason.message}`);
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

  /**
   * Kill a helper and everything it started: its process group and, while
   * it is still alive, its descendants that left the group (killHelperTree).
   * A helper that already exited has only its group left to kill: its pid
   * may be reused, and its setsid'd children were reparented out of reach.
   */
  private killGroup(child: ChildProcess): void {
    if (child.pid == null) return;
    if (child.exitCode === null && child.signalCode === null) {
      const done = killHelperTree(child).finally(() => this.kills.delete(done));
      this.kills.add(done);
      return;
    }
    signalGroup(child, "SIGKILL");
  }

  /** Raw request: resolves with result and receipt, rejects with DeckhandError. */
  async request<O extends OpName>(op: O, args: OpArgs<O>, opts: RequestOptions = {}): Promise<HelperReply<O>> {
    if (TRACE_OPS) {
      const t0 = performance.now();
      try {
        return await this.requestTraced(op, args, opts);
      } finally {
        process.stderr.write(`deckhand: op ${op} ${(performance.now() - t0).toFixed(2)} ms\n`);
      }
    }
    return this.requestTraced(op, args, opts);
  }

  private async requestTraced<O extends OpName>(op: O, args: OpArgs<O>, opts: RequestOptions): Promise<HelperReply<O>> {
    const spec = OPS[op];
    const mutates = spec.mutates;
    const signal = opts.signal === undefined ? this.opts.ambientSignal?.() : (opts.signal ?? undefined);
    const once = { deadlineMs: opts.deadlineMs, signal };
    try {
      return await this.requestOnce(op, args, once);
    } catch (err) {
      if (!(err instanceof HelperLost)) throw err;
      if (mutates) {
        // The helper may or may not have acted. Say so; never resend.
        if (signal?.aborted) {
          throw cancelledError(op, "unknown", `${err.message}; the cancelled action's outcome is unknown and it was not retried`, err.details);
        }
        throw new DeckhandError(err.why === "timeout" ? "TIMEOUT" : "ACTION_FAILED", `${err.message}; the action's outcome is unknown and it was not retried`, {
          remediation: `The helper ${err.why === "timeout" ? "did not answer in time and was restarted" : err.why === "protocol" ? "broke the wire protocol and was restarted" : "died"} during the action, so whether it acted is unknown: re-observe (get-app-state) before retrying. Its last stderr lines are in details.stderrTail.`,
          details: { ...err.details, delivery: "unknown", op, stderrTail: this.stderr.tail(10).join("\n") },
        });
      }
      if (err.why === "timeout") {
        throw new DeckhandError("TIMEOUT", err.message, { details: { ...err.details, op } });
      }
      // A read is safe to retry once on a fresh helper (not once cancelled).
      if (signal?.aborted) throw cancelledError(op, "not_dispatched", `${op} was cancelled`);
      try {
        return await this.requestOnce(op, args, once);
      } catch (err2) {
        if (err2 instanceof HelperLost) {
          if (err2.why === "timeout") {
            throw new DeckhandError("TIMEOUT", `${err2.message} (after one retry)`, { details: { ...err2.details, op, stderrTail: this.stderr.tail(10).join("\n") } });
          }
          const what = err2.why === "protocol" ? "broke the wire protocol" : "died";
          throw this.misbehaved(
            "lost",
            `${err2.message} (after one retry)`,
            `The helper at ${this.opts.path} ${what} during ${op} twice in a row, on two fresh processes. Its last stderr lines are in details.stderrTail and deckhand's own note in details.lastDiagnostic: check its log, and report it with both if it persists.`,
            { ...err2.details, op, lost: err2.why },
          );
        }
        throw err2;
      }
    }
  }

  private async requestOnce<O extends OpName>(op: O, args: OpArgs<O>, opts: { deadlineMs?: number; signal?: AbortSignal }): Promise<HelperReply<O>> {
    const signal = opts.signal;
    const notSent = () => cancelledError(op, "not_dispatched", `${op} was cancelled before it was sent`);
    if (signal?.aborted) throw notSent();
    const hello = await this.start();
    // The capability gate: nothing is sent for a capability the hello does not support.
    const missing = requiredCapabilities(op, args).filter((c) => hello.capabilities[c]?.supported !== true);
    if (missing.length) {
      throw new DeckhandError("ACTION_UNSUPPORTED", `${op} needs ${missing.join(" and ")}, which helper ${hello.helper.name} ${hello.helper.version} does not support`, {
        details: { op, capability: missing.join("|"), helper: hello.helper.name, delivery: "not_dispatched" },
      });
    }
    if (signal?.aborted) throw notSent();
    const child = this.child;
    if (!child || !child.stdin) throw new HelperLost("exited", "helper is not running");
    // Input that waits on purpose (hold-key, drag pauses) gets its waits on
    // top of the op's deadline: a 10 s hold must not be a timeout.
    const waits = op === "input" ? (args as OpArgs<"input">).steps.reduce((n, s) => n + (s.kind === "wait" ? s.ms : 0), 0) : 0;
    const deadline = opts.deadlineMs ?? (this.opts.deadlines?.[op] ?? DEFAULT_DEADLINES[op]) + waits;
    const grace = this.opts.graceMs ?? 250;
    const id = this.nextId++;
    const mutates = OPS[op].mutates;
    // The frame limit binds both ways: a request over the helper's
    // max_frame_bytes (at most 16 MiB) would kill it. Refused here, before a
    // byte is written; the error names the limit, never the value.
    const frame = encodeFrame({ type: "request", id, op, deadline_ms: deadline, args: args as Record<string, unknown> });
    const maxFrame = Math.min(hello.limits.max_frame_bytes || DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_FRAME_BYTES);
    if (frame.length - 4 > maxFrame) {
      throw new DeckhandError("INVALID_ARGUMENTS", `the ${op} request is larger than the helper's frame limit of ${maxFrame} bytes; nothing was sent`, {
        remediation: `The helper accepts requests of at most ${maxFrame} bytes (hello.limits.max_frame_bytes): send long text or values in several smaller requests.`,
        details: { reason: "request-too-large", limit: maxFrame, op, delivery: "not_dispatched" },
      });
    }
    return await new Promise((resolve, reject) => {
      const onAbort = () => {
        const p = this.pending.get(id);
        if (!p || p.cancelled) return;
        p.cancelled = true;
        this.cancel(id);
        // A read has nothing to wait for: CANCELLED now, and the helper's
        // answer, if any, is dropped. A mutation waits for the helper's
        // receipt, which says what was sent (the deadline still applies).
        if (!mutates) p.reject(cancelledError(op, "not_dispatched", `${op} was cancelled`));
      };
      const settled = <A extends unknown[]>(f: (...a: A) => void) => (...a: A) => {
        signal?.removeEventListener("abort", onAbort);
        f(...a);
      };
      const timer = setTimeout(() => {
        const p = this.pending.get(id);
        if (!p) return;
        if (p.cancelled && !mutates) {
          // The helper dropped a cancelled read without answering: forget it
          // (a late answer is ignored) rather than kill a helper that obeyed.
          this.pending.delete(id);
          this.abandoned.add(id);
          if (this.abandoned.size > MAX_ABANDONED) this.abandoned.delete(this.abandoned.values().next().value!);
          return;
        }
        this.stats.timeouts++;
        this.loseHelper(new HelperLost("timeout", `helper did not answer ${op} within ${deadline} ms`, { deadlineMs: deadline }), true, id);
      }, deadline + grace);
      this.pending.set(id, {
        op,
        sentAt: performance.now(),
        mutates,
        resolve: settled(resolve as Pending["resolve"]),
        reject: settled(reject),
        timer,
      });
      child.stdin!.write(frame);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /**
   * Best effort: ask the helper to drop a request it has not dispatched yet,
   * or to stop a dispatched `input` between steps. Callers normally pass an
   * AbortSignal to request() instead, which sends this for them.
   */
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
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          // It lingers: kill it with its group and its descendants.
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
    await Promise.all(this.kills);
  }
}

// ---------------------------------------------------------------- killing a helper's tree

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid == null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** Helpers being killed (pids): their groups get a synchronous SIGKILL if deckhand exits before `ps` answered. */
const killing = new Map<number, ChildProcess>();
let exitHookInstalled = false;

let psFound: boolean | undefined;
/** tree-kill runs `ps` (Linux) or `pgrep` (macOS): without it, its spawn error would be an uncaught exception. */
function canWalkTree(): boolean {
  if (process.platform === "win32") return true; // taskkill /T
  if (psFound !== undefined) return psFound;
  const tool = process.platform === "darwin" ? "pgrep" : "ps";
  psFound = (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || ".", tool), fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  return psFound;
}

/** How long tree-kill may take to walk the tree before the group is killed without it. */
const TREE_WALK_MS = 2000;

/**
 * Kill a live helper, its process group and its descendants that left the
 * group (a setsid'd child is still the helper's child, but found only while
 * the helper lives: once it dies the child is reparented). The group is
 * SIGSTOPped at once, so nothing in it acts or forks while tree-kill walks
 * the tree with `ps`; then tree-kill SIGKILLs every process it found and we
 * SIGKILL the group (a stopped process dies of SIGKILL). Node reaps the
 * helper only after this returns to the event loop, so its pid is still
 * ours when the group is killed. Known gaps: a descendant that forks while
 * the walk runs outside the stopped group, or whose parent already died, is
 * missed (tree-kill follows parent links).
 */
function killHelperTree(child: ChildProcess): Promise<void> {
  const pid = child.pid!;
  if (!canWalkTree()) {
    signalGroup(child, "SIGKILL");
    return Promise.resolve();
  }
  if (process.platform !== "win32") signalGroup(child, "SIGSTOP");
  killing.set(pid, child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const c of killing.values()) signalGroup(c, "SIGKILL");
    });
  }
  return new Promise<void>((resolve) => {
    const finish = () => {
      if (killing.get(pid) !== child) return;
      killing.delete(pid);
      clearTimeout(timer);
      signalGroup(child, "SIGKILL");
      resolve();
    };
    const timer = setTimeout(finish, TREE_WALK_MS);
    try {
      treeKill(pid, "SIGKILL", finish);
    } catch {
      finish();
    }
  });
}
