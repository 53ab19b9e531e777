// NDJSON input for serve: bytes in, whole lines out, with a cap on a line's
// size. An oversized line is never held in memory: once it passes the cap,
// its bytes are discarded up to the next newline, it is reported once, and
// the lines after it are read as usual.

/** Default cap on one request line (bytes, without its newline). */
export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;

export interface LineTooLong {
  /** The cap that was exceeded. */
  limit: number;
  /** The line's first bytes (up to 256), to recover the request's id when it is the first key. */
  head: string;
}

export class LineReader {
  private chunks: Buffer[] = [];
  private size = 0;
  /** Inside an oversized line: drop bytes until the next newline. */
  private discarding = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly onTooLong: (info: LineTooLong) => void,
    readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {}

  /** Bytes held for the current (incomplete) line: never more than maxLineBytes. */
  get buffered(): number {
    return this.size;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      this.take(chunk.subarray(start, end));
      if (nl < 0) return;
      this.finish();
      start = nl + 1;
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    this.finish();
  }

  private take(part: Buffer): void {
    if (this.discarding || part.length === 0) return;
    if (this.size + part.length > this.maxLineBytes) {
      // Keep nothing of it but a short head (for the id), and say so now.
      const head = Buffer.concat([...this.chunks, part.subarray(0, Math.max(0, 256 - this.size))]).subarray(0, 256);
      this.chunks = [];
      this.size = 0;
      this.discarding = true;
      this.onTooLong({ limit: this.maxLineBytes, head: head.toString("utf8") });
      return;
    }
    // Copy: the caller's chunk buffer may be reused.
    this.chunks.push(Buffer.from(part));
    this.size += part.length;
  }

  private finish(): void {
    if (this.discarding) {
      this.discarding = false;
      return;
    }
    // "\n" never occurs inside a multi-byte UTF-8 sequence: whole lines decode cleanly.
    const line = Buffer.concat(this.chunks, this.size).toString("utf8").replace(/\r$/, "");
    this.chunks = [];
    this.size = 0;
    this.onLine(line);
  }
}

/**
 * The id of a request whose line was cut, when `"id"` is its first key (a
 * prefix cannot say more about a JSON object's top level); null otherwise.
 */
export function idFromHead(head: string): string | number | null {
  const m = /^\s*\{\s*"id"\s*:\s*(-?\d{1,15}(?![\d.eE])|"(?:[^"\\\n]|\\.){0,128}")/.exec(head);
  if (!m) return null;
  try {
    const v = JSON.parse(m[1]!) as unknown;
    return typeof v === "string" || typeof v === "number" ? v : null;
  } catch {
    return null;
  }
}
