// The engine: one per process (a CLI invocation, a serve session or an MCP
// server). It owns the helper supervisor, the snapshot store and the safety
// seam, and implements the ports (src/engine/ports.ts) that the engine's and
// the program's functions take: each of them names the parts it uses.
import { AsyncLocalStorage } from "node:async_hooks";
import { discoverHelper, type HelperLocation } from "../helpers/discovery.ts";
import type { Supervisor } from "../helpers/supervisor.ts";
import { SnapshotStore } from "../session/store.ts";
import { stateDir } from "../session/state-dir.ts";
import type { Safety } from "./safety.ts";
import { pause as pauseFlag } from "../audit/pause.ts";
import type { Hello } from "../wire/messages.ts";
import type { CancelScope, EnvPort, HelperPort, HelperSession, PermissionsPort, ProgressEvent, ProgressPort, SafetyPort, ScreenshotOptions, ScreenshotScope, SerialPort, StorePort } from "./ports.ts";
import type { AppCache, ResolvedApp } from "./resolve.ts";
import { join } from "node:path";
import { ForegroundLease, LEASE_FILE, leaseWaitMs } from "../session/foreground-lease.ts";
import { hostProcessFacts } from "../platform/index.ts";
import { LeasedSupervisor } from "./foreground-ops.ts";
import { mark } from "../startup-trace.ts";
// ---- issue 15: memory
import { BoundedMap } from "../session/lru.ts";
/** App selectors whose resolution a session keeps (a live agent works on a few apps at a time). */
const APP_CACHE_ENTRIES = 64;
// ---- end memory

export interface OperatorOptions {
  /** --helper PATH */
  helperPath?: string;
  /** --allow-foreground (operator only; never from a request payload) */
  allowForeground?: boolean;
  confirmCmd?: string;
  policyPath?: string;
  env?: NodeJS.ProcessEnv;
  /** --trace DIR (issue 16): record every program of this process in DIR (src/program/trace-recorder.ts). */
  traceDir?: string;
  /** Which front end records (the trace's session line). */
  traceMode?: "cli" | "serve" | "mcp";
  /** Progress of long operations, for a terminal (the one-shot CLI sets it when stderr is a TTY; serve and MCP never do). */
  progress?: (event: ProgressEvent) => void;
}

export class Engine implements HelperPort, CancelScope, SerialPort, StorePort, SafetyPort, EnvPort, PermissionsPort, ScreenshotScope, ProgressPort, AppCache {
  readonly env: NodeJS.ProcessEnv;
  readonly store: SnapshotStore;
  readonly sessionId: string;
  private supervisor: Supervisor | null = null;
  private location: HelperLocation | null = null;
  /**
   * Gating permission checks the helper reported as `unknown` (neither
   * granted nor denied) at this process's permission gate: a request that
   * then fails with PERMISSION_DENIED is PERMISSION_UNVERIFIED instead.
   */
  permissionsUnknown: string[] = [];
  /** Resolved app selectors of this session (see resolveApp). */
  // ---- issue 15: memory
  // Keyed by every selector a session meets: bounded, so that a serve running
  // for days over many apps does not grow (a forgotten one is resolved again).
  readonly appCache: Map<string, { app: ResolvedApp; at: number }> = new BoundedMap(APP_CACHE_ENTRIES);
  // ---- end memory
  /** Serialises mutations per target app (serve pipelines requests). */
  private locks = new Map<string, Promise<unknown>>();
  /**
   * The cancellation signal of the command running in this async context:
   * every helper request it makes, however deep, carries it (see withCancel).
   */
  private readonly cancelScope = new AsyncLocalStorage<AbortSignal>();
  /**
   * How the screenshots taken in this async context are cropped and scaled
   * by the helper (see withScreenshotOptions): a vendor adapter's or MCP's
   * image size, through the commands' own capture paths.
   */
  private readonly screenshotScope = new AsyncLocalStorage<ScreenshotOptions>();

  /**
   * One foreground input at a time across deckhand processes (and requests
   * of this one): held around every foreground helper request, and by a
   * program from its first one to its end (executor.ts).
   */
  readonly foregroundLease: ForegroundLease;

  constructor(
    readonly operator: OperatorOptions,
    readonly safety: Safety,
  ) {
    this.env = operator.env ?? process.env;
    this.store = new SnapshotStore(stateDir(this.env));
    this.sessionId = `s_${process.pid.toString(36)}_${Date.now().toString(36)}`;
    this.foregroundLease = new ForegroundLease({ path: join(stateDir(this.env), LEASE_FILE), waitMs: leaseWaitMs(this.env), startTime: hostProcessFacts().startTime });
  }

  // issue 16: trace (TracePort)
  get traceDir(): string | undefined {
    return this.operator.traceDir;
  }
  get traceMode(): "cli" | "serve" | "mcp" | undefined {
    return this.operator.traceMode;
  }

  /** Stage "helper resolution": find and start the helper, once. */
  async helper(): Promise<HelperSession> {
    if (!this.supervisor) {
      this.location = discoverHelper({ flag: this.operator.helperPath, env: this.env });
      this.supervisor = new LeasedSupervisor({ path: this.location.path, env: this.env, ambientSignal: () => this.cancelScope.getStore() }, this.foregroundLease);
      this.supervisor.on("helper-event", (e) => this.onHelperEvent(e));
    }
    const hello = await this.supervisor.start();
    mark("helper");
    if (this.watchedHello !== hello) {
      this.watchedHello = hello;
      await this.startUserInputWatch(this.supervisor, hello);
    }
    return { supervisor: this.supervisor, hello };
  }

  private watchedHello: Hello | null = null;

  /**
   * Kill switch: with pause_on_user_input in policy, the helper watches real
   * user input and deckhand pauses (across processes) when it sees any.
   */
  private async startUserInputWatch(supervisor: Supervisor, hello: Hello): Promise<void> {
    if (!this.safety.pauseOnUserInput?.()) return;
    if (!hello.capabilities.watch_user_input?.supported) {
      process.stderr.write("deckhand: policy asks to pause on user input but the helper cannot watch input\n");
      return;
    }
    // Session-wide, not the command's: a cancelled command does not cancel it.
    await supervisor.request("watch_user_input", { enabled: true }, { signal: null });
  }

  get helperLocation(): HelperLocation | null {
    return this.location;
  }

  get currentSupervisor(): Supervisor | null {
    return this.supervisor;
  }

  private eventListeners: ((e: { event: string; data: Record<string, unknown> }) => void)[] = [];
  onEvent(fn: (e: { event: string; data: Record<string, unknown> }) => void): void {
    this.eventListeners.push(fn);
  }
  private onHelperEvent(e: { event: string; data: Record<string, unknown> }): void {
    if (e.event === "user_input" && this.safety.pauseOnUserInput?.()) {
      pauseFlag(this.env, "user input seen");
      try {
        this.safety.audit({ event: "pause", command: "pause", decision: "n/a", decisionSource: "user_input", outcome: "OK" });
      } catch {
        /* the flag file is what matters */
      }
    }
    for (const fn of this.eventListeners) fn(e);
  }

  /**
   * Run fn with `signal` as the cancellation of every helper request made
   * inside it (a serve `cancel`, an MCP client's abort): an in-flight request
   * gets a wire `cancel` frame and the command CANCELLED. No signal: fn as is.
   */
  withCancel<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
    return signal ? this.cancelScope.run(signal, fn) : fn();
  }

  /** Run fn outside any cancellation (its helper requests carry no signal). */
  withoutCancel<T>(fn: () => Promise<T>): Promise<T> {
    return this.cancelScope.exit(fn);
  }

  /**
   * Run fn with every screenshot it takes (a window's, the whole screen's, an
   * observation's) cropped and scaled by the helper as `options` say
   * (capability screenshot.scale; src/engine/observe.ts captureWindow).
   */
  withScreenshotOptions<T>(options: ScreenshotOptions, fn: () => Promise<T>): Promise<T> {
    return this.screenshotScope.run(options, fn);
  }

  /** The screenshot options of the command running here, if any. */
  get screenshotOptions(): ScreenshotOptions | undefined {
    return this.screenshotScope.getStore();
  }

  /** The operator's progress sink (OperatorOptions.progress), if any. */
  get progress(): ((event: ProgressEvent) => void) | undefined {
    return this.operator.progress;
  }

  /** The cancellation signal of the command running here, if any. */
  get cancelSignal(): AbortSignal | undefined {
    return this.cancelScope.getStore();
  }

  /** Run fn after every earlier mutation on the same target has finished. */
  async serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(fn);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    }
  }

  async close(): Promise<void> {
    await this.supervisor?.stop();
  }
}
