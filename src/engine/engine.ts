// The engine: one per process (a CLI invocation, a serve session or an MCP
// server). It owns the helper supervisor, the snapshot store and the safety
// seam, and resolves apps, windows and snapshots for the commands.
import { DeckhandError } from "../protocol/errors.ts";
import { discoverHelper, type HelperLocation } from "../helpers/discovery.ts";
import { Supervisor } from "../helpers/supervisor.ts";
import { SnapshotStore } from "../session/store.ts";
import { stateDir } from "../session/state-dir.ts";
import type { Safety } from "./safety.ts";
import type { CapabilityKey, Hello } from "../wire/messages.ts";

export interface OperatorOptions {
  /** --helper PATH */
  helperPath?: string;
  /** --allow-foreground (operator only; never from a request payload) */
  allowForeground?: boolean;
  confirmCmd?: string;
  policyPath?: string;
  env?: NodeJS.ProcessEnv;
}

export class Engine {
  readonly env: NodeJS.ProcessEnv;
  readonly store: SnapshotStore;
  readonly sessionId: string;
  private supervisor: Supervisor | null = null;
  private location: HelperLocation | null = null;
  /** Serialises mutations per target app (serve pipelines requests). */
  private locks = new Map<string, Promise<unknown>>();

  constructor(
    readonly operator: OperatorOptions,
    readonly safety: Safety,
  ) {
    this.env = operator.env ?? process.env;
    this.store = new SnapshotStore(stateDir(this.env));
    this.sessionId = `s_${process.pid.toString(36)}_${Date.now().toString(36)}`;
  }

  /** Stage "helper resolution": find and start the helper, once. */
  async helper(): Promise<{ supervisor: Supervisor; hello: Hello }> {
    if (!this.supervisor) {
      this.location = discoverHelper({ flag: this.operator.helperPath, env: this.env });
      this.supervisor = new Supervisor({ path: this.location.path, env: this.env });
      this.supervisor.on("helper-event", (e) => this.onHelperEvent(e));
    }
    const hello = await this.supervisor.start();
    return { supervisor: this.supervisor, hello };
  }

  get helperLocation(): HelperLocation | null {
    return this.location;
  }

  get currentSupervisor(): Supervisor | null {
    return this.supervisor;
  }

  /** Stage "action support": refuse before dispatch what the helper lacks. */
  requireCapability(hello: Hello, key: CapabilityKey, what: string): void {
    const cap = hello.capabilities[key];
    if (!cap?.supported) {
      throw new DeckhandError("ACTION_UNSUPPORTED", `${what} is not supported by helper ${hello.helper.name} ${hello.helper.version}`, {
        details: { capability: key, helper: hello.helper.name },
      });
    }
  }

  private eventListeners: ((e: { event: string; data: Record<string, unknown> }) => void)[] = [];
  onEvent(fn: (e: { event: string; data: Record<string, unknown> }) => void): void {
    this.eventListeners.push(fn);
  }
  private onHelperEvent(e: { event: string; data: Record<string, unknown> }): void {
    for (const fn of this.eventListeners) fn(e);
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
