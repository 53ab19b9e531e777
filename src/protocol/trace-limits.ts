// The trace's file names, format version and size bounds (issue 16), apart
// from its schemas (src/protocol/trace.ts) so the recorder, which every
// program run loads, builds no zod schema at start: a one-shot command pays
// for what it uses (issue 15).
export const TRACE_FORMAT_VERSION = 1;
export const TRACE_FILE = "trace.jsonl";
export const TRACE_IMAGE_DIR = "img";

/** Bounds of a trace's size (src/program/trace-recorder.ts). */
export const TRACE_LIMITS = Object.freeze({
  /** Images are scaled down to at most this width (helper screenshot.scale). */
  imageMaxWidth: 720,
  /** JPEG quality when the helper can write JPEG (screenshot.formats); PNG otherwise. */
  jpegQuality: 70,
  /** Stored image bytes per trace directory; past it, images are recorded as missing. */
  maxImageBytes: 64 * 1024 * 1024,
  /**
   * trace.jsonl's size; past it, events are dropped (one line on stderr says
   * so) and the program runs on. The operator may lower it with
   * DECKHAND_TRACE_MAX_BYTES (a serve session that runs for days).
   */
  maxTraceFileBytes: 256 * 1024 * 1024,
  /** Tree lines compared per capture, and diff lines kept per step. */
  maxTreeLines: 4000,
  maxDiffLines: 400,
});
