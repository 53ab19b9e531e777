// DECKHAND_TRACE_MEMORY=<n>: every n requests, serve writes one line about
// its memory to stderr (bench/soak.ts reads it), so that a growing resident
// size can be told apart: live objects (heap used after a collection) versus
// garbage not collected yet or memory the allocator keeps. With
// DECKHAND_TRACE_MEMORY_GC=1 a full, synchronous collection runs before each
// sample: a diagnostic only (it costs tens of ms), never on by default.

export interface MemorySample {
  requests: number;
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  gc: boolean;
}

const MB = 1024 * 1024;
const round = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

export class MemoryTrace {
  private requests = 0;

  constructor(
    private readonly every: number,
    private readonly fullGc: boolean,
    private readonly write: (line: string) => void,
  ) {}

  /** From the environment; null when the trace is off (the default). */
  static fromEnv(env: NodeJS.ProcessEnv, write: (line: string) => void): MemoryTrace | null {
    const every = Number(env.DECKHAND_TRACE_MEMORY);
    if (!Number.isSafeInteger(every) || every <= 0) return null;
    return new MemoryTrace(every, env.DECKHAND_TRACE_MEMORY_GC === "1", write);
  }

  /** One request answered; `extra`: counters shown on the line (collections run, what the session holds), read only when a line is written. */
  tick(extra: () => Record<string, number> = () => ({})): void {
    this.requests++;
    if (this.requests % this.every === 0) this.write(`deckhand serve memory: ${JSON.stringify({ ...this.sample(), ...extra() })}\n`);
  }

  sample(): MemorySample {
    const gc = this.fullGc && typeof globalThis.Bun?.gc === "function";
    if (gc) globalThis.Bun.gc(true);
    const m = process.memoryUsage();
    return { requests: this.requests, rssMb: round(m.rss), heapUsedMb: round(m.heapUsed), heapTotalMb: round(m.heapTotal), externalMb: round(m.external), gc };
  }
}
