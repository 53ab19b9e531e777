// Reading a trace directory for the viewer: DIR/trace.jsonl line by line,
// each line checked against the trace format (src/protocol/trace.ts), and the
// images it names read from DIR/img. A trace is evidence of a run that may
// have crashed, so a bad line is skipped and counted, never fatal; and its
// text comes from apps (window titles, tree lines), so nothing here trusts it:
// an image path is read only when it has the exact shape the recorder writes.
import { closeSync, constants, fstatSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import {
  TRACE_FILE,
  TRACE_LIMITS,
  TraceEvent,
  type TraceImage,
  type TraceProgramEndEvent,
  type TraceProgramEvent,
  type TraceSessionEvent,
  type TraceStepEvent,
} from "../protocol/trace.ts";

/** The only image paths read: what the recorder writes (img/<hex hash>.jpg|png). Anything else could point outside DIR. */
export const IMAGE_PATH = /^img\/[0-9a-f]{8,64}\.(jpg|png)$/;

/** One image file is at most this big (the recorder's are a downscaled window, well under 1 MiB). */
export const MAX_IMAGE_FILE_BYTES = 16 * 1024 * 1024;
/** Images embedded per page, in bytes: the recorder's own budget for the directory. */
export const MAX_EMBEDDED_IMAGE_BYTES = TRACE_LIMITS.maxImageBytes;
/** Skipped lines listed by number and reason (all are counted). */
export const MAX_LISTED_SKIPS = 50;

export interface SkippedLine {
  /** 1-based line number in trace.jsonl. */
  line: number;
  reason: string;
}

export interface TraceProgram {
  /** The program event (null: its line was skipped or never written, the steps still show). */
  start: TraceProgramEvent | null;
  id: string;
  /** Which session event came before it (index into sessions), -1 when none. */
  session: number;
  steps: TraceStepEvent[];
  end: TraceProgramEndEvent | null;
}

export interface ParsedTrace {
  sessions: TraceSessionEvent[];
  programs: TraceProgram[];
  /** Lines skipped (counted in full; listed up to MAX_LISTED_SKIPS). */
  skippedCount: number;
  skipped: SkippedLine[];
  /** The file's last line was cut short (a crash mid-write), and skipped. */
  truncatedLastLine: boolean;
}

function firstIssue(err: { issues: { path: PropertyKey[]; message: string }[] }): string {
  const i = err.issues[0];
  if (!i) return "not a trace event";
  const where = i.path.map(String).join(".");
  return `not a trace event: ${where ? `${where}: ` : ""}${i.message}`.slice(0, 200);
}

/** Parses trace.jsonl's text; see the file comment. */
export function parseTraceText(text: string): ParsedTrace {
  const out: ParsedTrace = { sessions: [], programs: [], skippedCount: 0, skipped: [], truncatedLastLine: false };
  const lines = text.split("\n");
  // A file that ends without a newline was cut off mid-line (every event is
  // written whole with its newline); that last piece is the one a crash leaves.
  const endsCleanly = text.endsWith("\n");
  // Steps and ends attach to the latest program of their id: two sessions
  // appending to one directory may both have a p1.
  const latest = new Map<string, TraceProgram>();
  const programOf = (id: string): TraceProgram => {
    let p = latest.get(id);
    if (!p) {
      p = { start: null, id, session: out.sessions.length - 1, steps: [], end: null };
      latest.set(id, p);
      out.programs.push(p);
    }
    return p;
  };
  const skip = (line: number, reason: string) => {
    out.skippedCount++;
    if (out.skipped.length < MAX_LISTED_SKIPS) out.skipped.push({ line, reason });
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!;
    const isLast = i === lines.length - 1;
    if (raw.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      if (isLast && !endsCleanly) {
        out.truncatedLastLine = true;
        skip(i + 1, "truncated last line (the run stopped mid-write)");
      } else skip(i + 1, "not JSON");
      continue;
    }
    const parsed = TraceEvent.safeParse(value);
    if (!parsed.success) {
      skip(i + 1, firstIssue(parsed.error));
      continue;
    }
    const e = parsed.data;
    switch (e.type) {
      case "session":
        out.sessions.push(e);
        break;
      case "program": {
        const p: TraceProgram = { start: e, id: e.id, session: out.sessions.length - 1, steps: [], end: null };
        latest.set(e.id, p);
        out.programs.push(p);
        break;
      }
      case "step":
        programOf(e.program).steps.push(e);
        break;
      case "program-end":
        programOf(e.program).end = e;
        break;
    }
  }
  for (const p of out.programs) p.steps.sort((a, b) => a.index - b.index);
  return out;
}

/** DIR/trace.jsonl, parsed; no file is INVALID_ARGUMENTS, details.reason "no-trace". */
export function readTrace(dir: string): ParsedTrace {
  const path = join(dir, TRACE_FILE);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "unknown";
    throw new DeckhandError("INVALID_ARGUMENTS", `no trace in ${dir}: ${TRACE_FILE} cannot be read (${code})`, {
      remediation: "Record one first: `deckhand run --trace DIR ...` (or serve / mcp with --trace DIR), then `deckhand trace show DIR`.",
      details: { reason: "no-trace", errno: code },
    });
  }
  return parseTraceText(text);
}

/** An image ready for the page, or why it is not there. */
export type LoadedImage = { dataUri: string; bytes: number } | { missing: string };

const MIME = { png: "image/png", jpg: "image/jpeg" } as const;

function looksLike(kind: keyof typeof MIME, b: Buffer): boolean {
  if (kind === "png") return b.length >= 8 && b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  return b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff;
}

/**
 * Reads one image the trace names, if its path has the recorder's shape: a
 * regular file (no symlink followed), of the type its name says, within the
 * size bound. Never throws: a problem is the image's `missing` reason.
 */
export function loadImage(dir: string, file: string): LoadedImage {
  const m = IMAGE_PATH.exec(file);
  if (!m) return { missing: "not a trace image path (refused)" };
  const kind = m[1] as keyof typeof MIME;
  let fd: number;
  try {
    fd = openSync(join(dir, file), constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return { missing: code === "ENOENT" ? "image file not found" : code === "ELOOP" ? "image file is a symlink (refused)" : `image file unreadable (${code ?? "error"})` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { missing: "image is not a regular file (refused)" };
    if (st.size > MAX_IMAGE_FILE_BYTES) return { missing: `image file too large (${st.size} bytes)` };
    const b = Buffer.alloc(st.size);
    let got = 0;
    while (got < b.length) {
      const n = readSync(fd, b, got, b.length - got, got);
      if (n === 0) break;
      got += n;
    }
    const bytes = b.subarray(0, got);
    if (!looksLike(kind, bytes)) return { missing: `image file is not a ${kind.toUpperCase()}` };
    return { dataUri: `data:${MIME[kind]};base64,${bytes.toString("base64")}`, bytes: got };
  } catch (err) {
    return { missing: `image file unreadable (${(err as NodeJS.ErrnoException).code ?? "error"})` };
  } finally {
    closeSync(fd);
  }
}

/** Every image file a parsed trace names, in order of first use. */
export function imageFiles(trace: ParsedTrace): string[] {
  const seen = new Set<string>();
  const add = (img: TraceImage | { missing: string } | null | undefined) => {
    if (img && "file" in img) seen.add(img.file);
  };
  for (const p of trace.programs) {
    add(p.start?.before);
    for (const s of p.steps) add(s.after);
  }
  return [...seen];
}
