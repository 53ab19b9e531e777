// Reading a window image's text with OCR (issue 14, docs/ocr.md): the
// `tesseract` executable (a Debian package, tesseract-ocr) run on the image
// file the observation already wrote, its TSV words grouped into lines, each
// line's box mapped from image pixels to screen pixels. The engine is a
// separate process: started without a shell, in a process group of its own,
// killed as a group past its deadline or its output cap, so a stuck or
// flooding engine never holds an observation up for long.
import { spawn } from "node:child_process";
import { DeckhandError } from "../protocol/errors.ts";
import type { Rect } from "../wire/messages.ts";

/** Longest an OCR run may take before its process group is killed. */
export const OCR_TIMEOUT_MS = 20_000;
/** The engine's version query is quick; a binary that hangs on it is not a usable engine. */
const VERSION_TIMEOUT_MS = 5_000;
/** Most TSV bytes read from the engine (a full-screen image of dense text is ~200 KB). */
export const OCR_MAX_OUTPUT_BYTES = 4 << 20;
/** Most stderr bytes kept for an error message. */
const MAX_STDERR = 2048;
/** Most lines one OCR run yields (elements of one snapshot). */
export const OCR_MAX_LINES = 400;
/** Most characters of one line's text. */
export const OCR_MAX_LINE_CHARS = 300;

// Noise rules, measured on the Tk fixture and LibreOffice (docs/ocr.md):
// toolbar icons come out as short, low-confidence "words" (|, t=, Ay A.).
/** Words read with less confidence (0-100) are dropped. */
const MIN_WORD_CONF = 40;
/** Lines whose words average less are dropped. */
const MIN_LINE_CONF = 70;
/** A line with a single letter or digit is kept only this sure. */
const SINGLE_CHAR_CONF = 90;
/**
 * A gap between two words wider than this many line heights splits the
 * line: the engine joins controls that sit on one row ("Submit Order" and
 * "Cancel"; a menu bar's items), which are separate things to click.
 * Word spaces measured 0.3-0.6 line heights, a menu bar's items 1.2 apart.
 */
const SPLIT_GAP = 0.9;

/** One word of the engine's TSV (level 5), in image pixels. */
export interface OcrWord {
  block: number;
  par: number;
  line: number;
  left: number;
  top: number;
  width: number;
  height: number;
  /** 0-100; -1 when the engine gave none. */
  conf: number;
  text: string;
}

/** One line of text read, in image pixels. */
export interface OcrLine {
  text: string;
  /** Mean confidence of its words, 0-100. */
  conf: number;
  box: Rect;
}

/**
 * The words of tesseract's TSV output (level 5 rows). The header names the
 * columns, so their order is read from it; rows that do not parse are skipped.
 */
export function parseTsv(tsv: string): OcrWord[] {
  const rows = tsv.split(/\r?\n/);
  const header = (rows.shift() ?? "").split("\t");
  const col = (name: string) => header.indexOf(name);
  const c = { level: col("level"), block: col("block_num"), par: col("par_num"), line: col("line_num"), left: col("left"), top: col("top"), width: col("width"), height: col("height"), conf: col("conf"), text: col("text") };
  if (Object.values(c).some((i) => i < 0)) return [];
  const words: OcrWord[] = [];
  for (const row of rows) {
    if (!row) continue;
    const f = row.split("\t");
    if (f[c.level] !== "5") continue;
    const n = (i: number) => Number(f[i]);
    const w: OcrWord = { block: n(c.block), par: n(c.par), line: n(c.line), left: n(c.left), top: n(c.top), width: n(c.width), height: n(c.height), conf: n(c.conf), text: (f[c.text] ?? "").trim() };
    if (![w.block, w.par, w.line, w.left, w.top, w.width, w.height, w.conf].every(Number.isFinite)) continue;
    if (w.text === "" || w.width <= 0 || w.height <= 0) continue;
    words.push(w);
  }
  return words;
}

const ALNUM = /[\p{L}\p{N}]/u;
const ALNUM_ALL = /[\p{L}\p{N}]/gu;

function union(ws: readonly OcrWord[]): Rect {
  const x0 = Math.min(...ws.map((w) => w.left));
  const y0 = Math.min(...ws.map((w) => w.top));
  const x1 = Math.max(...ws.map((w) => w.left + w.width));
  const y1 = Math.max(...ws.map((w) => w.top + w.height));
  return { x: x0, y: y0, width: x1 - x0, height: y1 - y0 };
}

/** A run of words as a line, or null when it is noise (see the rules above). */
function lineOf(run: OcrWord[]): OcrLine | null {
  // Stray marks at either end (a separator, an icon read as "|") are not part of the text.
  let a = 0;
  let b = run.length;
  while (a < b && !ALNUM.test(run[a]!.text)) a++;
  while (b > a && !ALNUM.test(run[b - 1]!.text)) b--;
  const words = run.slice(a, b);
  if (words.length === 0) return null;
  const conf = words.reduce((s, w) => s + Math.max(0, w.conf), 0) / words.length;
  const text = words.map((w) => w.text).join(" ");
  const alnum = text.match(ALNUM_ALL)?.length ?? 0;
  if (conf < MIN_LINE_CONF) return null;
  if (alnum < 2 && conf < SINGLE_CHAR_CONF) return null;
  return { text: text.length > OCR_MAX_LINE_CHARS ? text.slice(0, OCR_MAX_LINE_CHARS) + "…" : text, conf: Math.round(conf), box: union(words) };
}

/**
 * The lines of a page: words grouped by the engine's block, paragraph and
 * line, split where a gap is wider than SPLIT_GAP line heights, noise
 * dropped, in reading order (rows top to bottom, each left to right), at
 * most OCR_MAX_LINES.
 */
export function groupLines(words: readonly OcrWord[]): OcrLine[] {
  const groups = new Map<string, OcrWord[]>();
  for (const w of words) {
    if (w.conf < MIN_WORD_CONF) continue;
    const key = `${w.block}.${w.par}.${w.line}`;
    let g = groups.get(key);
    if (!g) groups.set(key, (g = []));
    g.push(w);
  }
  const lines: OcrLine[] = [];
  for (const g of groups.values()) {
    g.sort((p, q) => p.left - q.left);
    const height = Math.max(...g.map((w) => w.height));
    let run: OcrWord[] = [];
    for (const w of g) {
      const prev = run[run.length - 1];
      if (prev && w.left - (prev.left + prev.width) > SPLIT_GAP * height) {
        const l = lineOf(run);
        if (l) lines.push(l);
        run = [];
      }
      run.push(w);
    }
    const l = lineOf(run);
    if (l) lines.push(l);
  }
  return readingOrder(lines).slice(0, OCR_MAX_LINES);
}

/** Rows top to bottom (lines whose vertical centres lie within half a line height of each other share a row), each row left to right. */
function readingOrder(lines: OcrLine[]): OcrLine[] {
  const byTop = [...lines].sort((p, q) => p.box.y - q.box.y || p.box.x - q.box.x);
  const out: OcrLine[] = [];
  let row: OcrLine[] = [];
  let rowCentre = 0;
  let rowHalf = 0;
  for (const l of byTop) {
    const centre = l.box.y + l.box.height / 2;
    if (row.length && Math.abs(centre - rowCentre) > Math.max(rowHalf, l.box.height / 2)) {
      out.push(...row.sort((p, q) => p.box.x - q.box.x));
      row = [];
    }
    if (!row.length) {
      rowCentre = centre;
      rowHalf = l.box.height / 2;
    }
    row.push(l);
  }
  out.push(...row.sort((p, q) => p.box.x - q.box.x));
  return out;
}

function area(r: Rect): number {
  return r.width * r.height;
}

function intersection(a: Rect, b: Rect): number {
  const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

/**
 * The lines of several reads of one image, each place read once: the surest
 * line first (then the longer text), and a line covering half or more of
 * one already taken (or half of it covered) is the same text read again.
 * In reading order, at most OCR_MAX_LINES.
 */
export function mergeLines(...reads: readonly OcrLine[][]): OcrLine[] {
  const all = reads.flat().sort((p, q) => q.conf - p.conf || q.text.length - p.text.length);
  const kept: OcrLine[] = [];
  for (const l of all) {
    if (!kept.some((k) => intersection(k.box, l.box) >= 0.5 * Math.min(area(k.box), area(l.box)))) kept.push(l);
  }
  return readingOrder(kept).slice(0, OCR_MAX_LINES);
}

/**
 * A box of image pixels as screen pixels, through the image's map (image
 * pixel i shows screen point origin + i / scale): the smallest whole-pixel
 * screen rectangle covering it.
 */
export function imageToScreen(box: Rect, shot: { origin: { x: number; y: number }; scale: number }): Rect {
  const x0 = Math.floor(shot.origin.x + box.x / shot.scale);
  const y0 = Math.floor(shot.origin.y + box.y / shot.scale);
  const x1 = Math.ceil(shot.origin.x + (box.x + box.width) / shot.scale);
  const y1 = Math.ceil(shot.origin.y + (box.y + box.height) / shot.scale);
  return { x: x0, y: y0, width: Math.max(1, x1 - x0), height: Math.max(1, y1 - y0) };
}

// ---------------------------------------------------------------- the engine

/** Why the engine gave no text: it is not installed, or it did not finish properly. */
export type OcrFailureReason = "missing" | "timeout" | "output-too-large" | "failed";

/** OCR_UNAVAILABLE with details.reason; never carries the image's text. */
export function ocrUnavailable(reason: OcrFailureReason, message: string, extra: Record<string, string | number | boolean> = {}): DeckhandError {
  return new DeckhandError("OCR_UNAVAILABLE", message, { details: { reason, ...extra } });
}

/** The engine's executable: DECKHAND_TESSERACT (a path or a name on PATH), else `tesseract` on PATH. */
export function tesseractBinary(env: NodeJS.ProcessEnv): string {
  const own = env.DECKHAND_TESSERACT?.trim();
  return own ? own : "tesseract";
}

/** Languages to read (DECKHAND_OCR_LANGS, e.g. eng+deu; default eng): letters, digits, _ and + only. */
export function ocrLanguages(env: NodeJS.ProcessEnv): string {
  const langs = env.DECKHAND_OCR_LANGS?.trim();
  return langs && /^[A-Za-z0-9_]+(?:\+[A-Za-z0-9_]+)*$/.test(langs) && langs.length <= 64 ? langs : "eng";
}

/** The OCR deadline: DECKHAND_OCR_TIMEOUT_MS (1 ms to 120 s), else OCR_TIMEOUT_MS. */
export function ocrTimeoutMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.DECKHAND_OCR_TIMEOUT_MS);
  return Number.isInteger(n) && n > 0 && n <= 120_000 ? n : OCR_TIMEOUT_MS;
}

/**
 * What the engine's process sees: its search path and data, one thread
 * (OpenMP threads cost more than they give on window-sized images: 157 ms
 * instead of 379 ms on the Tk fixture), the C locale (tesseract asks for it).
 * Nothing else of deckhand's environment.
 */
function engineEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    PATH: env.PATH ?? "/usr/bin:/bin",
    ...(env.TESSDATA_PREFIX ? { TESSDATA_PREFIX: env.TESSDATA_PREFIX } : {}),
    OMP_THREAD_LIMIT: "1",
    LC_ALL: "C",
  };
}

export interface RunLimits {
  timeoutMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/**
 * Run the engine: no shell, stdin closed, its own process group (killed
 * whole with SIGKILL at the deadline, past the output cap, or on
 * cancellation). Resolves with its stdout when it exits 0.
 */
export function runEngine(bin: string, args: readonly string[], env: NodeJS.ProcessEnv, limits: RunLimits): Promise<string> {
  const posix = process.platform !== "win32";
  return new Promise((resolve, reject) => {
    if (limits.signal?.aborted) {
      reject(new DeckhandError("CANCELLED", "OCR was cancelled before it started"));
      return;
    }
    const child = spawn(bin, args, { env: engineEnv(env), stdio: ["ignore", "pipe", "pipe"], detached: posix, shell: false, windowsHide: true });
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = "";
    let ended: DeckhandError | null = null;
    const killGroup = () => {
      try {
        if (posix && child.pid) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        // gone already
      }
    };
    const end = (e: DeckhandError) => {
      if (ended) return;
      ended = e;
      killGroup();
    };
    const timer = setTimeout(() => end(ocrUnavailable("timeout", `the OCR engine did not finish within ${limits.timeoutMs} ms: it was stopped`, { timeoutMs: limits.timeoutMs })), limits.timeoutMs);
    const onAbort = () => end(new DeckhandError("CANCELLED", "OCR was cancelled: the engine was stopped"));
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    child.stdout!.on("data", (d: Buffer) => {
      if (ended) return;
      outBytes += d.length;
      if (outBytes > limits.maxOutputBytes) {
        end(ocrUnavailable("output-too-large", `the OCR engine wrote more than ${limits.maxOutputBytes} bytes: it was stopped`, { maxOutputBytes: limits.maxOutputBytes }));
        return;
      }
      out.push(d);
    });
    child.stderr!.on("data", (d: Buffer) => {
      err = (err + d.toString("utf8")).slice(-MAX_STDERR);
    });
    // A grandchild that kept the pipes open does not hold the result up: they are closed shortly after the engine exits.
    child.once("exit", () => {
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, 500).unref();
    });
    const finish = () => {
      clearTimeout(timer);
      limits.signal?.removeEventListener("abort", onAbort);
    };
    child.once("error", (e: NodeJS.ErrnoException) => {
      finish();
      if (ended) return reject(ended);
      if (e.code === "ENOENT") return reject(ocrUnavailable("missing", `no OCR engine: ${bin} was not found (install tesseract-ocr, or point DECKHAND_TESSERACT at it)`, { engine: bin }));
      reject(ocrUnavailable("failed", `the OCR engine ${bin} could not be started (${e.code ?? "error"})`, { engine: bin, errno: e.code ?? "unknown" }));
    });
    child.once("close", (code, signal) => {
      finish();
      if (ended) return reject(ended);
      if (code !== 0) {
        const why = err.trim().split(/\r?\n/).filter(Boolean).slice(-1)[0]?.slice(0, 200) ?? "";
        return reject(ocrUnavailable("failed", `the OCR engine ${bin} failed (${code !== null ? `exit ${code}` : `signal ${signal}`})${why ? `: ${why}` : ""}`, { engine: bin, ...(code !== null ? { exitCode: code } : { signal: String(signal) }) }));
      }
      resolve(Buffer.concat(out).toString("utf8"));
    });
  });
}

/** Engine versions by binary, for this process (the version query costs a process start). */
const versions = new Map<string, string>();

/** "tesseract 5.3.0": the engine's name and version, from `--version` (stdout; older releases print it on stderr). */
export async function engineVersion(bin: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<string> {
  const cached = versions.get(bin);
  if (cached) return cached;
  const out = await runEngine(bin, ["--version"], env, { timeoutMs: VERSION_TIMEOUT_MS, maxOutputBytes: 64 * 1024, signal });
  const m = /tesseract\s+v?([0-9][\w.\-]*)/i.exec(out);
  const version = m ? `tesseract ${m[1]}` : "tesseract (unknown version)";
  versions.set(bin, version);
  return version;
}

/** What one OCR run read. */
export interface OcrText {
  engine: string;
  lines: OcrLine[];
  ms: number;
}

/**
 * The engine's passes over one image, each with page segmentation 11
 * (sparse text: UI labels, not a page of prose), differing in how the image
 * is turned black and white: the default global threshold reads labels
 * beside input boxes and text on buttons (Chromium's form) that the local
 * (Sauvola) one loses, which in turn reads menu bars and status bars on
 * grey that the global one misses entirely (LibreOffice). Measured: docs/ocr.md.
 */
const PASSES: readonly (readonly string[])[] = [[], ["-c", "thresholding_method=2"]];

/**
 * The text lines of an image file (PNG, JPEG or WebP), in image pixels: the
 * passes run side by side (one engine thread each), their lines merged
 * (mergeLines). A pass that fails stops the other. OCR_UNAVAILABLE when the
 * engine is missing or fails; CANCELLED with the signal.
 */
export async function readText(imagePath: string, env: NodeJS.ProcessEnv, signal?: AbortSignal): Promise<OcrText> {
  const t0 = performance.now();
  const bin = tesseractBinary(env);
  const engine = await engineVersion(bin, env, signal);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (signal?.aborted) stop.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  let failure: unknown = null;
  try {
    const reads = await Promise.all(
      PASSES.map((extra) =>
        runEngine(bin, [imagePath, "stdout", "-l", ocrLanguages(env), "--psm", "11", ...extra, "tsv"], env, { timeoutMs: ocrTimeoutMs(env), maxOutputBytes: OCR_MAX_OUTPUT_BYTES, signal: stop.signal }).then(
          (tsv) => groupLines(parseTsv(tsv)),
          (err: unknown) => {
            failure ??= err;
            stop.abort();
            return [];
          },
        ),
      ),
    );
    if (failure) throw failure;
    return { engine, lines: mergeLines(...reads), ms: Math.round(performance.now() - t0) };
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}
