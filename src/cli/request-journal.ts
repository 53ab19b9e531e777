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
/**
 * How many bytes of stored answers are kept at most; past it the oldest
 * answers are dropped (their ids stay known). A retry comes seconds after its
 * request: 16 MiB holds the last thousand observations of a typical window
 * (4 KB each, compact), and keeps serve's resident memory within its budget
 * (issue 15: under 120 MB) when answers are large (full trees, 100s of KB).
 */
export const DEFAULT_REPLAY_MAX_BYTES = 16 * 1024 * 1024;
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
  /**
   * In flight: settles with the answer once the request finished (what an
   * in-flight retry waits for). Null once finished: a settled promise would
   * keep the answer object alive beside its stored text.
   */
  waiting: { answered: Promise<unknown>; resolve: (envelope: unknown) => void } | null;
  /**
   * The stored answer as its JSON text in UTF-8 (parsed again for a retry):
   * its bytes are what is counted (a JS string of the same text may take
   * twice that), and it holds nothing else alive (an answer object may share
   * parts with the session's snapshots). Null in flight, or when it was too
   * large or dropped to stay under the byte cap.
   */
  envelope: Uint8Array | null;
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
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder();

export class RequestJournal {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** How many entries have finished (the count cap's measure, kept so that a prune copies nothing). */
  private finished = 0;
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
    if (e.finishedAt === null) return { kind: "inflight", answer: e.waiting!.answered };
    if (e.envelope === null) return { kind: "answer-dropped", command: e.command, ok: e.ok, code: e.code, finishedAt: e.finishedAt };
    return { kind: "done", envelope: JSON.parse(utf8Decoder.decode(e.envelope)) };
  }

  /** A new request under this id: returns how to record its answer (call it exactly once). */
  begin(id: RequestId, command: string, fingerprint: string): (envelope: unknown) => void {
    let resolve!: (envelope: unknown) => void;
    const answered = new Promise<unknown>((r) => (resolve = r));
    const entry: Entry = { id, command, fingerprint, startedAt: this.now(), finishedAt: null, waiting: { answered, resolve }, envelope: null, bytes: 0, ok: null, code: null };
    const key = keyOf(id);
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    this.entries.set(key, entry);
    return (envelope) => this.finish(key, entry, envelope);
  }

  private finish(key: string, entry: Entry, envelope: unknown): void {
    if (entry.finishedAt !== null) return;
    entry.finishedAt = this.now();
    const e = envelope as { ok?: unknown; error?: { code?: unknown } };
    entry.ok = e?.ok === true;
    entry.code = !entry.ok && typeof e?.error?.code === "string" ? e.error.code : null;
    const current = this.entries.get(key) === entry;
    if (current) this.finished++;
    // Its own exactly sized copy (a pooled Buffer would keep a shared slab alive).
    const json = utf8Encoder.encode(JSON.stringify(envelope) ?? "null");
    if (json.length <= this.maxAnswerBytes && current) {
      entry.envelope = json;
      entry.bytes = json.length;
      this.bytes += json.length;
    }
    // Retries waiting on it get the answer either way.
    entry.waiting?.resolve(envelope);
    entry.waiting = null;
    this.prune();
  }

  /** Forget what is past the window or over the caps; requests in flight are never forgotten. */
  private prune(): void {
    // Runs twice per request: a walk over the map, no copy of it (serve's
    // memory stays flat when nothing is allocated per entry per request).
    const now = this.now();
    for (const [key, e] of this.entries) {
      if (e.finishedAt === null) continue;
      if (now - e.finishedAt <= this.windowMs && this.finished <= this.maxIds) continue;
      this.drop(key, e);
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
    if (e.finishedAt !== null) this.finished--;
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
