// Keeps a long-running front end's memory flat (issue 15: serve's resident
// memory under 120 MB, no growth over 10,000 requests). Each observation
// allocates about 230 KB that die young or after a few requests (the helper's
// answer decoded and validated, the snapshot, its JSON; a snapshot stays
// cached for a while, an answer is journaled): the runtime (JavaScriptCore)
// promotes them, and collects its old generation only once the heap has grown
// well past what survived its last full collection, so the resident size
// swings up by tens of MB of dead objects between full collections
// (bench/soak.ts: 20 MB live, up to 50 MB of heap, RSS 140 MB and rising
// over 3000 requests). An asynchronous request (Bun.gc(false)) runs a
// young-generation collection, which does not free them.
//
// So the pacer runs a full collection itself once the JS memory is
// `headroom` above what the last one left: the dead objects it lets pile up
// are bounded in bytes, whatever the request rate. It runs after the answer
// was written (a macrotask later), so the request that triggered it does not
// wait; the next one may (10-30 ms on a loaded 2-core machine, once every
// ~35 observations of a 155-node window). An agent's requests come seconds
// apart: it runs in the gap. Measuring costs a few microseconds per request.

/**
 * Dead objects allowed above the live level before a full collection. Over
 * 10,000 observations (bench/soak.ts) 16 MB kept serve between 94 and 123 MB
 * (rising in the last quarter); 8 MB between 93 and 102 MB, flat, for twice
 * the collections (bench/README.md, "Memory soak").
 */
export const DEFAULT_GC_HEADROOM_BYTES = 8 * 1024 * 1024;

export interface GcPacerOptions {
  headroomBytes?: number;
  /** JS memory now: heap used plus memory held outside it by JS objects (strings, buffers). */
  measure?: () => number;
  /** A full, synchronous collection; null: the runtime has none to call (the pacer is off). */
  collect?: (() => void) | null;
  /** When to run it: after the answer went out (default setImmediate). */
  schedule?: (fn: () => void) => void;
}

function jsMemory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Bun.gc(true): a full collection, after which the allocator returns free pages. Absent under Node (tests). */
function runtimeCollect(): (() => void) | null {
  const bun = (globalThis as { Bun?: { gc?: (force?: boolean) => void } }).Bun;
  return typeof bun?.gc === "function" ? () => bun.gc!(true) : null;
}

export class GcPacer {
  readonly headroomBytes: number;
  private readonly measure: () => number;
  private readonly collectNow: (() => void) | null;
  private readonly schedule: (fn: () => void) => void;
  /** JS memory after the last full collection (the live level); until the first one, the lowest seen. */
  private live = Number.POSITIVE_INFINITY;
  private pending = false;
  /** Collections run (tests, traces). */
  collections = 0;
  /** Time they took (ms): the event loop was held this long. */
  spentMs = 0;

  /**
   * DECKHAND_GC_HEADROOM_MB: the headroom in MB (a whole number; 0 turns the
   * pacer off, leaving collections to the runtime's own pacing); unset or
   * not a whole number: the default.
   */
  static fromEnv(env: NodeJS.ProcessEnv, opts: GcPacerOptions = {}): GcPacer {
    const raw = env.DECKHAND_GC_HEADROOM_MB;
    const mb = raw !== undefined && /^\d{1,6}$/.test(raw) ? Number(raw) : null;
    if (mb === 0) return new GcPacer({ ...opts, collect: null });
    return new GcPacer({ ...opts, ...(mb !== null ? { headroomBytes: mb * 1024 * 1024 } : {}) });
  }

  constructor(opts: GcPacerOptions = {}) {
    this.headroomBytes = opts.headroomBytes ?? DEFAULT_GC_HEADROOM_BYTES;
    this.measure = opts.measure ?? jsMemory;
    this.collectNow = opts.collect === undefined ? runtimeCollect() : opts.collect;
    this.schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
  }

  /** Whether it runs collections (off under a runtime without one, or DECKHAND_GC_HEADROOM_MB=0). */
  get enabled(): boolean {
    return this.collectNow !== null;
  }

  /** One request answered: schedule a full collection when the dead objects passed the headroom. */
  afterRequest(): void {
    if (!this.collectNow || this.pending) return;
    const used = this.measure();
    if (used < this.live) this.live = used;
    if (used - this.live <= this.headroomBytes) return;
    this.pending = true;
    this.schedule(() => this.collect());
  }

  private collect(): void {
    this.pending = false;
    const t0 = performance.now();
    this.collectNow!();
    this.spentMs += performance.now() - t0;
    this.collections++;
    this.live = this.measure();
  }
}
