// A trace: what deckhand did, step by step, for an operator to look at
// (issue 16). Recorded by `deckhand run --trace DIR` and by serve / mcp
// started with `--trace DIR` (src/program/trace-recorder.ts); shown by
// `deckhand trace show DIR` as one self-contained HTML file.
//
// On disk: DIR/trace.jsonl, one TraceEvent per line (appended: a serve
// session adds programs to the same file as they run), and DIR/img/, the
// downscaled window images, named by a hash of their bytes so an image that
// did not change between steps is stored once. DIR is 0700, every file 0600.
//
// Nothing secret enters a trace: a step's secret field (typed text, a value:
// ACTION_DECLS' `secret`) is recorded as its length only, error messages are
// scrubbed of those secrets, secure fields are never read (so their values
// are not in the tree lines), and images keep their redaction.
import { z } from "zod";

import { TRACE_FORMAT_VERSION } from "./trace-limits.ts";
export { TRACE_FILE, TRACE_FORMAT_VERSION, TRACE_IMAGE_DIR, TRACE_LIMITS } from "./trace-limits.ts";

const Point = z.object({ x: z.number(), y: z.number() });
const Rect = z.object({ x: z.number(), y: z.number(), width: z.number(), height: z.number() });

/**
 * A window image in the trace: `file` relative to the trace dir. The map from
 * screen to image pixels: imageX = (screenX - origin.x) * scale (the
 * screenshot map of a snapshot).
 */
export const TraceImage = z.object({
  file: z.string(),
  width: z.number().int(),
  height: z.number().int(),
  origin: Point,
  scale: z.number(),
  /** Secure fields blacked out in it. */
  redacted: z.number().int(),
});
export type TraceImage = z.infer<typeof TraceImage>;

/** A capture that was not stored: why (the helper failed, the trace's image budget was spent, the app has no window...). */
export const TraceImageMissing = z.object({ missing: z.string() });

/**
 * What a step aimed at, in screen coordinates, for drawing on its images:
 * the point(s) clicked or moved to, a drag's path, the element's box.
 */
export const TraceMarks = z.object({
  points: z.array(Point.extend({ kind: z.enum(["click", "move", "scroll", "press", "release"]) })).default([]),
  path: z.array(Point).default([]),
  box: Rect.nullable().default(null),
});
export type TraceMarks = z.infer<typeof TraceMarks>;

/** A line-level diff of the window's tree text (compact format) before and after a step. */
export const TraceTreeDiff = z.object({
  added: z.array(z.string()),
  removed: z.array(z.string()),
  /** Lines unchanged (not listed). */
  unchanged: z.number().int(),
  /** More lines changed than are listed. */
  truncated: z.boolean(),
});
export type TraceTreeDiff = z.infer<typeof TraceTreeDiff>;

/** The policy's verdict on a step: allow, or the refusal (code and remediation). */
export const TraceDecision = z.object({
  verdict: z.enum(["allow", "deny", "not-reached"]),
  /** Where the app's verdict came from (built-in, user, admin, default) and the rule that matched. */
  source: z.string().nullable(),
  rule: z.string().nullable(),
  code: z.string().nullable(),
  remediation: z.string().nullable(),
});
export type TraceDecision = z.infer<typeof TraceDecision>;

export const TraceError = z.object({ code: z.string(), message: z.string(), remediation: z.string() });

export const TraceSessionEvent = z.object({
  type: z.literal("session"),
  version: z.literal(TRACE_FORMAT_VERSION),
  /** run (one-shot CLI), serve or mcp. */
  mode: z.enum(["cli", "serve", "mcp"]),
  deckhand: z.string(),
  helper: z.string().nullable(),
  startedAt: z.string(),
  pid: z.number().int(),
});

export const TraceProgramEvent = z.object({
  type: z.literal("program"),
  /** Unique within the trace file: p1, p2... (a serve session's requests append). */
  id: z.string(),
  /** The command that ran it: run, or a single action's (click, set-value...). */
  command: z.string(),
  app: z.object({ name: z.string(), pid: z.number().int() }),
  windowId: z.number().int().nullable(),
  snapshotId: z.string().nullable(),
  startedAt: z.string(),
  /** The steps as asked for, secrets as lengths (see the file comment). */
  steps: z.array(z.record(z.string(), z.unknown())),
  /** The window before the first step. */
  before: z.union([TraceImage, TraceImageMissing]).nullable(),
});

export const TraceStepEvent = z.object({
  type: z.literal("step"),
  program: z.string(),
  index: z.number().int(),
  action: z.string(),
  /** The step as asked for, secrets as lengths. */
  request: z.record(z.string(), z.unknown()),
  status: z.enum(["completed", "failed", "unattempted"]),
  decision: TraceDecision,
  /** The step's receipt (src/program/executor.ts StepReceipt: delivery, route, verification, cleanup...), scrubbed. */
  receipt: z.record(z.string(), z.unknown()),
  error: TraceError.nullable(),
  startedAt: z.string(),
  durationMs: z.number(),
  marks: TraceMarks,
  /** The window after the step (the next step's "before"). */
  after: z.union([TraceImage, TraceImageMissing]).nullable(),
  /** The tree before and after the step, as lines; null when no tree was read. */
  treeDiff: TraceTreeDiff.nullable(),
});

export const TraceProgramEndEvent = z.object({
  type: z.literal("program-end"),
  program: z.string(),
  firstFailure: z.number().int().nullable(),
  /** The program's error (a refusal before any step ran, or the failed step's), scrubbed. */
  error: TraceError.nullable(),
  durationMs: z.number(),
  settle: z.object({ waitedMs: z.number(), events: z.number(), settled: z.boolean() }).nullable(),
  observationError: z.object({ code: z.string(), message: z.string() }).nullable(),
});

export const TraceEvent = z.discriminatedUnion("type", [TraceSessionEvent, TraceProgramEvent, TraceStepEvent, TraceProgramEndEvent]);
export type TraceEvent = z.infer<typeof TraceEvent>;
export type TraceSessionEvent = z.infer<typeof TraceSessionEvent>;
export type TraceProgramEvent = z.infer<typeof TraceProgramEvent>;
export type TraceStepEvent = z.infer<typeof TraceStepEvent>;
export type TraceProgramEndEvent = z.infer<typeof TraceProgramEndEvent>;
