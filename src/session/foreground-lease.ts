// The foreground lease: one deckhand process at a time sends real pointer
// or keyboard input. Two agents driving one desktop through two deckhand
// processes would otherwise interleave their keystrokes and drags.
//
// The lease is a file in the state directory (<state dir>/foreground.lease,
// mode 0600) holding {pid, startTime, command, acquiredAt, expiresAt, token}.
// - Taken atomically: the record is written to a file of its own, then
//   hard-linked to the lease's name (link fails if the name exists), so no
//   reader ever sees a half-written lease.
// - Re-entrant: inside a scope that holds it (a program), every foreground
//   request goes through; in-process, one holder at a time too (serve runs
//   programs for two targets concurrently).
// - Renewed while held (every ttl/3), released in `finally`.
// - A holder that is gone (its pid dead, or reused by another process: the
//   start-time witness differs) or whose lease expired is taken over. A
//   takeover and a renewal are made under a short mutex (a file beside the
//   lease), and re-check the lease they judged, so a takeover never deletes
//   a lease someone else just took; a release only ever removes its own.
// - A second holder waits (polling, bounded by DECKHAND_FOREGROUND_WAIT_MS,
//   default 10 s, and by its request's cancellation) and then gets
//   FOREGROUND_BUSY naming the holder.
import { AsyncLocalStorage } from "node:async_hooks";
import { closeSync, constants, linkSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { DeckhandError } from "../protocol/errors.ts";

export const LEASE_FILE = "foreground.lease";
/** How long a second holder waits by default (DECKHAND_FOREGROUND_WAIT_MS overrides it). */
export const DEFAULT_LEASE_WAIT_MS = 10_000;
/** How long a lease lives without renewal: a holder frozen this long loses it. */
export const DEFAULT_LEASE_TTL_MS = 15_000;
const POLL_MS = 25;
/** A takeover mutex older than this was left by a process that died holding it. */
const MUTEX_STALE_MS = 5_000;

export interface LeaseRecord {
  pid: number;
  /** The process start witness (the platform's process start time: src/platform), null when unknown. */
  startTime: number | null;
  /** What holds it: the deckhand command ("run", "type-text"), or the helper op. */
  command: string;
  acquiredAt: string;
  expiresAt: string;
  /** Which holding of that process: a lease is released only by the holding that took it. */
  token: string;
}

export interface LeaseOptions {
  /** The lease file (join(stateDir, LEASE_FILE)). */
  path: string;
  /** Default wait for a busy lease (ms). */
  waitMs?: number;
  ttlMs?: number;
  /** The process start witness of a pid, null when unknown (src/platform hostProcessFacts().startTime). */
  startTime?: (pid: number) => number | null;
  /** Whether a pid is alive (default: signal 0). */
  alive?: (pid: number) => boolean;
  /** Tests: the clock, and the pid this holder claims. */
  now?: () => number;
  pid?: number;
  pollMs?: number;
}

export interface AcquireOptions {
  /** Ends the wait: CANCELLED, nothing sent. */
  signal?: AbortSignal;
  /** Overrides the default wait (ms). */
  waitMs?: number;
}

interface Holding {
  token: string;
  command: string;
  since: number;
  timer: NodeJS.Timeout | null;
}

/** A program's scope: the holding it took at its first foreground request, released when it ends. */
interface Scope {
  lease: ForegroundLease;
  held: Holding | null;
  /** What the lease file names as its holder (the program's command). */
  command?: string;
}

/** The in-process side of one lease file, shared by every ForegroundLease of this process on it. */
interface Core {
  owner: Holding | null;
  waiters: Set<() => void>;
}
const cores = new Map<string, Core>();

function defaultAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, someone else's.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

const scopes = new AsyncLocalStorage<Scope[]>();

export class ForegroundLease {
  readonly path: string;
  readonly waitMs: number;
  readonly ttlMs: number;
  private readonly pid: number;
  private readonly witness: number | null;
  private readonly now: () => number;
  private readonly alive: (pid: number) => boolean;
  private readonly startTimeOf: (pid: number) => number | null;
  private readonly pollMs: number;
  private readonly core: Core;

  constructor(opts: LeaseOptions) {
    this.path = opts.path;
    this.waitMs = opts.waitMs ?? DEFAULT_LEASE_WAIT_MS;
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.pid = opts.pid ?? process.pid;
    this.now = opts.now ?? Date.now;
    this.alive = opts.alive ?? defaultAlive;
    this.startTimeOf = opts.startTime ?? (() => null);
    this.witness = this.startTimeOf(this.pid);
    this.pollMs = opts.pollMs ?? POLL_MS;
    const key = `${this.pid}:${this.path}`;
    let core = cores.get(key);
    if (!core) cores.set(key, (core = { owner: null, waiters: new Set() }));
    this.core = core;
  }

  /**
   * Run fn as one scope (a program): the first foreground request inside it
   * (hold) takes the lease for the rest of the scope; it is released when fn
   * settles. Nested scopes are the outer one. `command`: the holder's name
   * in the lease file (else the first request's).
   */
  async scope<T>(fn: () => Promise<T>, command?: string): Promise<T> {
    if (this.currentScope()) return await fn();
    const scope: Scope = { lease: this, held: null, command };
    const outer = scopes.getStore() ?? [];
    return await scopes.run([...outer, scope], async () => {
      try {
        return await fn();
      } finally {
        if (scope.held) this.release(scope.held);
        scope.held = null;
      }
    });
  }

  /**
   * Run fn holding the lease: at once where this async context already holds
   * it; inside a scope, taking it for the rest of the scope; otherwise taking
   * it around fn only.
   */
  async hold<T>(command: string, opts: AcquireOptions, fn: () => Promise<T>): Promise<T> {
    const scope = this.currentScope();
    if (scope?.held) return await fn();
    if (scope) {
      scope.held = await this.acquire(scope.command ?? command, opts);
      return await fn();
    }
    const held = await this.acquire(command, opts);
    const scoped: Scope = { lease: this, held };
    try {
      return await scopes.run([...(scopes.getStore() ?? []), scoped], fn);
    } finally {
      this.release(held);
    }
  }

  /** Whether this async context runs in a scope (or a holding) of this lease. */
  inScope(): boolean {
    return this.currentScope() !== undefined;
  }

  /** Whether this async context holds the lease. */
  heldHere(): boolean {
    return this.currentScope()?.held != null;
  }

  private currentScope(): Scope | undefined {
    const stack = scopes.getStore() ?? [];
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]!.lease.core === this.core) return stack[i];
    return undefined;
  }

  /** Take the lease (waiting, bounded), first from the other holders of this process, then from other processes. */
  async acquire(command: string, opts: AcquireOptions = {}): Promise<Holding> {
    const start = this.now();
    const deadline = start + (opts.waitMs ?? this.waitMs);
    while (this.core.owner) {
      const o = this.core.owner;
      if (this.now() >= deadline) throw busy({ pid: this.pid, command: o.command, since: new Date(o.since).toISOString() }, this.now() - start);
      await this.waitTurn(Math.min(this.pollMs * 4, Math.max(1, deadline - this.now())), opts.signal);
    }
    const held: Holding = { token: randomBytes(9).toString("base64url"), command, since: this.now(), timer: null };
    this.core.owner = held;
    try {
      for (;;) {
        const holder = this.tryTake(held);
        if (holder === null) break;
        if (this.now() >= deadline) throw busy({ pid: holder.pid, command: holder.command, since: holder.acquiredAt }, this.now() - start);
        await sleep(Math.min(this.pollMs, Math.max(1, deadline - this.now())), opts.signal);
      }
    } catch (err) {
      this.core.owner = null;
      this.notify();
      throw err;
    }
    held.timer = setInterval(() => this.renew(held), Math.max(50, Math.floor(this.ttlMs / 3)));
    held.timer.unref?.();
    return held;
  }

  /**
   * Give the lease back: the file only if it is still this holding's. Never
   * throws. Without the mutex (creating a file costs close to a millisecond
   * on some file systems; rename and unlink do not): the lease is moved
   * aside atomically, and put back should it turn out to be another's (only
   * possible after this holder outlived its expiry and was taken over).
   */
  release(held: Holding): void {
    if (held.timer) clearInterval(held.timer);
    held.timer = null;
    try {
      if (this.read()?.token === held.token) {
        const aside = `${this.path}.${this.pid}.${held.token}.old`;
        renameSync(this.path, aside);
        try {
          if (readRecord(aside)?.token !== held.token) linkSync(aside, this.path);
        } catch {
          // Put back failed: someone took the free name meanwhile; theirs stands.
        } finally {
          unlinkSync(aside);
        }
      }
    } catch {
      // The file stays; it expires, or its pid is seen dead.
    }
    if (this.core.owner === held) this.core.owner = null;
    this.notify();
  }

  /** The lease file's record now (null: free, or unreadable). */
  read(): LeaseRecord | null {
    return readRecord(this.path);
  }

  private record(held: Holding): LeaseRecord {
    const now = this.now();
    return {
      pid: this.pid,
      startTime: this.witness,
      command: held.command,
      acquiredAt: new Date(held.since).toISOString(),
      expiresAt: new Date(now + this.ttlMs).toISOString(),
      token: held.token,
    };
  }

  /**
   * A file of its own holding the record (0600): linked or renamed into
   * place. Not fsynced: a lease means nothing after a crash of the machine
   * (its holder is gone then), and a sync costs milliseconds per input.
   */
  private writeTemp(rec: LeaseRecord): string {
    const tmp = `${this.path}.${this.pid}.${randomBytes(6).toString("hex")}.tmp`;
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
    try {
      writeSync(fd, JSON.stringify(rec) + "\n");
    } finally {
      closeSync(fd);
    }
    return tmp;
  }

  /** One attempt: null when taken, else the record of whoever holds it. */
  private tryTake(held: Holding): LeaseRecord | null {
    const tmp = this.writeTemp(this.record(held));
    try {
      if (this.link(tmp)) return null;
      const current = this.read();
      if (!this.stale(current)) return current ?? unknownHolder();
      // Gone or expired: take it over, under the mutex, if it is still the one judged.
      let taken = false;
      const ok = this.underMutex(() => {
        const again = this.read();
        if ((again?.token ?? null) !== (current?.token ?? null) || !this.stale(again)) return;
        try {
          unlinkSync(this.path);
        } catch {
          return;
        }
        taken = this.link(tmp);
      });
      if (ok && taken) return null;
      return this.read() ?? unknownHolder();
    } finally {
      try {
        unlinkSync(tmp);
      } catch {
        /* linked name stays */
      }
    }
  }

  private link(tmp: string): boolean {
    try {
      linkSync(tmp, this.path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    }
  }

  /**
   * A lease nobody holds any more: expired; its pid dead or another process
   * now (the witness differs); this very process's but no holding of ours
   * (left by an earlier process with our pid); unreadable for longer than
   * a lease lives (never half-written: it was linked whole).
   */
  private stale(r: LeaseRecord | null): boolean {
    if (!r) {
      try {
        return this.now() - statSync(this.path).mtimeMs > this.ttlMs;
      } catch {
        return true;
      }
    }
    if (Date.parse(r.expiresAt) <= this.now()) return true;
    // This process's pid: every holding of this process on this file is the core's one owner, so any other token is a leftover.
    if (r.pid === this.pid) return r.token !== this.core.owner?.token;
    if (!this.alive(r.pid)) return true;
    const st = this.startTimeOf(r.pid);
    return r.startTime !== null && st !== null && st !== r.startTime;
  }

  /** Extend the lease while held; a lease taken over meanwhile is not touched. */
  private renew(held: Holding): void {
    try {
      this.underMutex(() => {
        if (this.read()?.token !== held.token) return;
        renameSync(this.writeTemp(this.record(held)), this.path);
      });
    } catch {
      // Renewal is best effort: the next tick tries again.
    }
  }

  /**
   * fn under the mutex: a file beside the lease, created exclusively (an
   * O_EXCL create is atomic) and removed after. false when it is busy (a
   * takeover in progress elsewhere); `patient`: retry briefly first.
   */
  private underMutex(fn: () => void, patient = false): boolean {
    const mutex = `${this.path}.lock`;
    for (let i = 0; ; i++) {
      try {
        closeSync(openSync(mutex, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600));
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        try {
          if (Date.now() - statSync(mutex).mtimeMs > MUTEX_STALE_MS) unlinkSync(mutex);
        } catch {
          /* released meanwhile */
        }
        if (!patient || i >= 50) return false;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
      }
    }
    try {
      fn();
      return true;
    } finally {
      try {
        unlinkSync(mutex);
      } catch {
        /* gone */
      }
    }
  }

  private waitTurn(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(cancelled());
      const done = () => {
        clearTimeout(t);
        this.core.waiters.delete(done);
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        clearTimeout(t);
        this.core.waiters.delete(done);
        reject(cancelled());
      };
      const t = setTimeout(done, ms);
      this.core.waiters.add(done);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  private notify(): void {
    for (const w of [...this.core.waiters]) w();
  }
}

function readRecord(path: string): LeaseRecord | null {
  try {
    const r = JSON.parse(readFileSync(path, "utf8")) as LeaseRecord;
    if (typeof r.pid !== "number" || typeof r.token !== "string" || typeof r.expiresAt !== "string") return null;
    return r;
  } catch {
    return null;
  }
}

function unknownHolder(): LeaseRecord {
  return { pid: 0, startTime: null, command: "unknown (unreadable lease file)", acquiredAt: "", expiresAt: "", token: "" };
}

function cancelled(): DeckhandError {
  return new DeckhandError("CANCELLED", "cancelled while waiting for the foreground input lease: nothing was sent", { details: { delivery: "not_dispatched", waitingFor: "foreground-lease" } });
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(cancelled());
    const onAbort = () => {
      clearTimeout(t);
      reject(cancelled());
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

function busy(holder: { pid: number; command: string; since: string }, waitedMs: number): DeckhandError {
  return new DeckhandError(
    "FOREGROUND_BUSY",
    `another deckhand ${holder.pid === process.pid ? "request of this process" : "process"} (pid ${holder.pid}, ${JSON.stringify(holder.command)}) holds the foreground input lease; waited ${waitedMs} ms: nothing was sent`,
    { details: { holderPid: holder.pid, holderCommand: holder.command, holderSince: holder.since, waitedMs, delivery: "not_dispatched" } },
  );
}

/** DECKHAND_FOREGROUND_WAIT_MS: a whole number of ms (0 .. 10 min); anything else is the default. */
export function leaseWaitMs(env: NodeJS.ProcessEnv): number {
  const raw = env.DECKHAND_FOREGROUND_WAIT_MS;
  if (raw === undefined || !/^\d+$/.test(raw)) return DEFAULT_LEASE_WAIT_MS;
  const v = Number(raw);
  return v <= 600_000 ? v : DEFAULT_LEASE_WAIT_MS;
}
