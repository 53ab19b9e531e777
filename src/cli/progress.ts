// Progress of long operations (a program's steps, a big tree, a desktop's
// start-up) as one updating line on stderr, for a person at a terminal.
//
// Only the one-shot CLI and `deckhand desktop` draw it, and only when stderr
// is a TTY: an agent reading a pipe gets no progress bytes at all, and
// stdout (the envelope under --json, the human output) is never touched.
// serve and mcp never draw it, even on a TTY: their stderr is a log that
// interleaves many requests, where a self-erasing line would only garble it.
import type { ProgressEvent } from "../engine/ports.ts";

/** At most one redraw per this many ms: a fast program costs a write or two, not one per step. */
export const THROTTLE_MS = 100;
/** A tree read shows only once it has run this long: most reads end first and never flash a line. */
export const TREE_DELAY_MS = 300;

/** Return to column 0 and erase the line (ANSI EL 2). */
const ERASE = "\r\x1b[2K";

/** What the line needs of a stream: process.stderr, or a test's fake. */
export interface ProgressStream {
  write(chunk: string | Uint8Array, ...rest: unknown[]): boolean;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Whether to draw progress on this stream: a terminal that understands
 * erasing a line (not TERM=dumb), unless DECKHAND_PROGRESS=0 turns it off.
 */
export function progressWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.DECKHAND_PROGRESS === "0") return false;
  if (env.TERM === "dumb") return false;
  return stream.isTTY === true;
}

/** The line for an engine event, and how long it must last before it is worth showing; null: erase the line. */
export function progressText(e: ProgressEvent): [text: string, delayMs: number] | null {
  switch (e.kind) {
    case "step":
      return [`step ${e.index + 1}/${e.total} ${e.action}…`, 0];
    case "settle":
      return ["settling…", 0];
    case "observe":
      return ["observing…", 0];
    case "tree":
      return [`reading tree of ${e.app}…`, TREE_DELAY_MS];
    case "confirm":
      return null;
  }
}

/** The engine's progress sink (OperatorOptions.progress) drawing on a line. */
export function engineProgress(line: ProgressLine): (e: ProgressEvent) => void {
  return (e) => {
    const shown = progressText(e);
    if (shown) line.show(...shown);
    else line.clear();
  };
}

/**
 * One line of progress on a terminal stream. show() replaces the text
 * (drawn at once, or at the end of the throttle window, or after its
 * delay); clear() erases it. While a line is on screen, any other write to
 * the stream (a diagnostic, an error message) erases it first, so nothing
 * else is ever printed after a progress text on the same line.
 */
export class ProgressLine {
  /** A progress text is on screen now. */
  private shown = false;
  /** The text wanted on screen (null: none). */
  private current: string | null = null;
  private lastDraw = Number.NEGATIVE_INFINITY;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly write: (chunk: string) => boolean;
  private readonly restore: () => void;

  constructor(
    private readonly stream: ProgressStream,
    private readonly now: () => number = () => performance.now(),
  ) {
    const original = stream.write;
    this.write = (chunk) => original.call(stream, chunk);
    // Interpose on the stream's own writes: whoever else writes to stderr
    // (src/ writes diagnostics directly) gets a clean line.
    const patched = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
      // Drawn again at the next show(), not here: the other write may be a
      // line's first half, which a redraw would erase.
      if (this.shown) {
        this.write(ERASE);
        this.shown = false;
      }
      return original.call(stream, chunk, ...rest);
    };
    stream.write = patched;
    this.restore = () => {
      if (stream.write === patched) stream.write = original;
    };
  }

  /** Show text as the line, once it has been wanted for delayMs (and the throttle allows). */
  show(text: string, delayMs = 0): void {
    this.current = text;
    this.schedule(delayMs);
  }

  /** Erase the line now and forget any text waiting to be drawn. */
  clear(): void {
    this.current = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.shown) this.write(ERASE);
    this.shown = false;
  }

  /** clear(), and give the stream its own write back. */
  dispose(): void {
    this.clear();
    this.restore();
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const now = this.now();
    const at = Math.max(now + delayMs, this.lastDraw + THROTTLE_MS);
    if (at <= now) {
      this.draw();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.draw();
    }, at - now);
    // Progress never keeps the process alive.
    (this.timer as { unref?: () => void }).unref?.();
  }

  private draw(): void {
    if (this.current === null) return;
    // Never wider than the terminal: a wrapped line would not be erased by one ERASE.
    // A terminal that reports no size (0 columns) is taken as 80 wide.
    const width = (this.stream.columns || 80) - 1;
    const chars = [...this.current];
    const text = chars.length > width ? `${chars.slice(0, Math.max(0, width - 1)).join("")}…` : this.current;
    this.write(`${ERASE}${text}`);
    this.shown = true;
    this.lastDraw = this.now();
  }
}

/**
 * The progress line of this process's stderr, or null when progress is not
 * wanted there. Erased at exit too, so an interrupted command leaves no
 * half line behind.
 */
export function stderrProgress(env: NodeJS.ProcessEnv = process.env): ProgressLine | null {
  if (!progressWanted(process.stderr, env)) return null;
  const line = new ProgressLine(process.stderr as unknown as ProgressStream);
  process.once("exit", () => line.dispose());
  return line;
}
