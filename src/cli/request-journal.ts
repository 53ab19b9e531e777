// serve's request journal: safe retries. A client whose connection hiccuped
// cannot tell whether its request ran, so it sends it again under the same
// id; that request must never run twice (a second click, a second paste).
// The journal remembers each id seen (within a window, bounded in count and
// bytes) with what it asked (a fingerprint of the request) and the answer.
// Requests without an id are not journaled; `cancel` and `status` never are.
import { createHash } from "node:crypto";

/** How long an id is remembered after its request finished. */
export const DEFAULT_REPLAY_WINDOW_MS = 10 * 60_000;
/** How many finished ids are remembered at most (the oldest go first). */
export const DEFAULT_REPLAY_MAX_IDS = 1000;
/** How many bytes of stored answers are kept at most; past it the oldest answers are dropped (their ids stay known). */
export const DEFAULT_REPLAY_MAX_BYTES = 64 * 1024 * 1024;
/** An answer larger than this is not stored (its id stays known): a retry is told so instead. */
export const DEFAULT_REPLAY_MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** How many finished requests `status` lists, newest first. */
export const STATUS_RECENT = 100;

export type RequestId = string | number;

export interface JournalOptions {
  windowMs?: number;
  maxIds?: number;
  maxBytes?: number;
  maxAnswerBytes?: number;
  now?: () => number;
}

interface Entry {
  id: RequestId;
  command: string;
  fingerprint: string;
  startedAt: number;
  finishedAt: number | null;
  /** Settles with the answer once the request finished (what an in-flight retry waits for). */
  answered: Promise<unknown>;
  resolve: (envelope: unknown) => void;
  /** The stored answer; null in flight, or when it was too large or dropped to stay under the byte cap. */
  envelope: unknown | null;
  bytes: number;
  ok: boolean | null;
  code: string | null;
}

/** What a request with an id already seen gets. */
export type Seen =
  | { kind: "new" }
  | { kind: "inflight"; answer: Promise<unknown> }
  | { kind: "done"; envelope: unknown }
  /** The id ran another request: refused, nothing run. */
  | { kind: "reused"; command: string }
  /** The id ran (within the window) but its answer is no longer kept: refused, nothing run. */
  | { kind: "answer-dropped"; command: string; ok: boolean | null; code: string | null; finishedAt: number };

export interface RecentRequest {
  id: RequestId;
  command: string;
  ok: boolean;
  code?: string;
  finishedAt: string;
}

/** A request's identity apart from its id and deadline: the same request, retried, has the same one. */
export function fingerprintOf(req: Record<string, unknown>): string {
  const { id: _id, deadlineMs: _deadline, ...rest } = req;
  return createHash("sha256").update(canonical(rest)).digest("hex");
}

/** JSON with object keys sorted, so key order never makes two equal requests differ. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

const keyOf = (id: RequestId) => `${typeof id}:${id}`;

export class RequestJournal {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  readonly windowMs: number;
  readonly maxIds: number;
  readonly maxBytes: number;
  readonly maxAnswerBytes: number;
  private readonly now: () => number;

  constructor(opts: JournalOptions = {}) {
    this.windowMs = opts.windowMs ?? DEFAULT_REPLAY_WINDOW_MS;
    this.maxIds = opts.maxIds ?? DEFAULT_REPLAY_MAX_IDS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_REPLAY_MAX_BYTES;
    this.maxAnswerBytes = opts.maxAnswerBytes ?? DEFAULT_REPLAY_MAX_ANSWER_BYTES;
    this.now = opts.now ?? Date.now;
  }

  /** What this id, asking this, gets: run it (new), or an answer without running anything. */
  lookup(id: RequestId, fingerprint: string): Seen {
    this.prune();
    const e = this.entries.get(keyOf(id));
    if (!e) return { kind: "new" };
    if (e.fingerprint !== fingerprint) return { kind: "reused", command: e.command };
    if (e.finishedAt === null) return { kind: "inflight", answer: e.answered };
    if (e.envelope === null) return { kind: "answer-dropped", command: e.command, ok: e.ok, code: e.code, finishedAt: e.finishedAt };
    return { kind: "done", envelope: e.envelope };
  }

  /** A new request under this id: returns how to record its answer (call it exactly once). */
  begin(id: RequestId, command: string, fingerprint: string): (envelope: unknown) => void {
    let resolve!: (envelope: unknown) => void;
    const answered = new Promise<unknown>((r) => (resolve = r));
    const entry: Entry = { id, command, fingerprint, startedAt: this.now(), finishedAt: null, answered, resolve, envelope: null, bytes: 0, ok: null, code: null };
    const key = keyOf(id);
    this.entries.delete(key);
    this.entries.set(key, entry);
    return (envelope) => this.finish(key, entry, envelope);
  }

  private finish(key: string, entry: Entry, envelope: unknown): void {
    if (entry.finishedAt !== null) return;
    entry.finishedAt = this.now();
    const e = envelope as { ok?: unknown; error?: { code?: unknown } };
    entry.ok = e?.ok === true;
    entry.code = !entry.ok && typeof e?.error?.code === "string" ? e.error.code : null;
    const bytes = Buffer.byteLength(JSON.stringify(envelope) ?? "");
    if (bytes <= this.maxAnswerBytes && this.entries.get(key) === entry) {
      entry.envelope = envelope;
      entry.bytes = bytes;
      this.bytes += bytes;
    }
    // Retries waiting on it get the answer either way.
    entry.resolve(envelope);
    this.prune();
  }

  /** Forget what is past the window or over the caps; requests in flight are never forgotten. */
  private prune(): void {
    const now = this.now();
    const finished = [...this.entries.entries()].filter(([, e]) => e.finishedAt !== null);
    let over = finished.length - this.maxIds;
    for (const [key, e] of finished) {
      if (now - e.finishedAt! <= this.windowMs && over <= 0) continue;
      this.drop(key, e);
      over--;
    }
    // Over the byte cap: the oldest answers go (their ids stay: a retry is refused, never run).
    for (const [, e] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      if (e.envelope !== null && e.finishedAt !== null) {
        this.bytes -= e.bytes;
        e.envelope = null;
        e.bytes = 0;
      }
    }
  }

  private drop(key: string, e: Entry): void {
    this.bytes -= e.bytes;
    this.entries.delete(key);
  }

  /** Finished requests, newest first (at most STATUS_RECENT). */
  recent(): RecentRequest[] {
    this.prune();
    return [...this.entries.values()]
      .filter((e) => e.finishedAt !== null)
      .sort((a, b) => b.finishedAt! - a.finishedAt!)
      .slice(0, STATUS_RECENT)
      .map((e) => ({ id: e.id, command: e.command, ok: e.ok === true, ...(e.code ? { code: e.code } : {}), finishedAt: new Date(e.finishedAt!).toISOString() }));
  }

  /** How many ids are remembered, and the bytes of answers kept (tests, memory bounds). */
  get size(): { ids: number; bytes: number } {
    return { ids: this.entries.size, bytes: this.bytes };
  }
}
