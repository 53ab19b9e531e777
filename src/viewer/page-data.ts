// What the viewer page shows, as one JSON value: the parsed trace arranged
// for display (programs in order, each step with its before and after image)
// and the images, each stored once and referred to by key, so a window that
// did not change between steps is embedded once however often it is shown.
import type { TraceImage, TraceProgramEndEvent, TraceSessionEvent, TraceStepEvent } from "../protocol/trace.ts";
import { imageFiles, loadImage, MAX_EMBEDDED_IMAGE_BYTES, type ParsedTrace, type SkippedLine } from "./read.ts";

/** An image on the page: its key in `images` and the screen-to-image map, or why there is none. */
export type PageImage = (Omit<TraceImage, "file"> & { ref: string; file: string }) | { missing: string } | null;

export interface PageStep {
  index: number;
  action: string;
  /**
   * The step's status; for a step asked for without a step line:
   * "not-reached" when the program ended (it failed before the step ran: no
   * such app, a refusal up front), "not-recorded" when it did not (a crash,
   * or a skipped line).
   */
  status: TraceStepEvent["status"] | "not-reached" | "not-recorded";
  refused: boolean;
  request: Record<string, unknown>;
  decision: TraceStepEvent["decision"] | null;
  receipt: Record<string, unknown> | null;
  error: TraceStepEvent["error"];
  startedAt: string | null;
  durationMs: number | null;
  marks: TraceStepEvent["marks"] | null;
  before: PageImage;
  after: PageImage;
  treeDiff: TraceStepEvent["treeDiff"];
}

export interface PageProgram {
  id: string;
  /** Index into sessions, -1 when no session line came first. */
  session: number;
  command: string | null;
  app: { name: string; pid: number } | null;
  windowId: number | null;
  snapshotId: string | null;
  startedAt: string | null;
  /** The program line was skipped or never written: only its steps are known. */
  missingStart: boolean;
  /** The program-end line: absent when the run stopped before the program ended. */
  ended: boolean;
  durationMs: number | null;
  firstFailure: number | null;
  error: TraceProgramEndEvent["error"];
  settle: TraceProgramEndEvent["settle"];
  observationError: TraceProgramEndEvent["observationError"];
  steps: PageStep[];
}

export interface PageData {
  format: 1;
  /** The trace directory as given on the command line. */
  dir: string;
  generatedAt: string;
  /** The deckhand that generated the page (each session line names the one that recorded it). */
  viewer: string;
  sessions: TraceSessionEvent[];
  counts: { programs: number; steps: number; failed: number; refused: number; failedPrograms: number };
  skipped: { count: number; truncatedLastLine: boolean; lines: SkippedLine[] };
  /** Image key -> data: URI. */
  images: Record<string, string>;
  programs: PageProgram[];
}

/** Arranges a parsed trace for the page and loads its images from `dir` (see read.ts for what is read). */
export function buildPageData(trace: ParsedTrace, dir: string, opts: { viewer: string; now?: Date }): PageData {
  const images: Record<string, string> = {};
  const byFile = new Map<string, { ref: string } | { missing: string }>();
  let embedded = 0;
  for (const file of imageFiles(trace)) {
    const img = loadImage(dir, file);
    if ("missing" in img) byFile.set(file, img);
    else if (embedded + img.bytes > MAX_EMBEDDED_IMAGE_BYTES) byFile.set(file, { missing: "over the page's image budget" });
    else {
      const ref = `i${Object.keys(images).length}`;
      images[ref] = img.dataUri;
      embedded += img.bytes;
      byFile.set(file, { ref });
    }
  }
  const pageImage = (img: TraceImage | { missing: string } | null | undefined): PageImage => {
    if (img === null || img === undefined) return null;
    if ("missing" in img) return { missing: img.missing };
    const got = byFile.get(img.file)!;
    if ("missing" in got) return { missing: got.missing };
    const { file, ...map } = img;
    return { ...map, file, ref: got.ref };
  };

  let steps = 0;
  let failed = 0;
  let refused = 0;
  let failedPrograms = 0;
  const programs: PageProgram[] = trace.programs.map((p) => {
    const byIndex = new Map(p.steps.map((s) => [s.index, s]));
    const asked = p.start?.steps ?? [];
    // The steps asked for and the steps recorded (an index is the trace's
    // word, not a loop bound: a hostile 1e9 adds one card, not a billion).
    const indices = [...new Set([...asked.keys(), ...byIndex.keys()])].sort((a, b) => a - b);
    const out: PageStep[] = [];
    let before: PageImage = pageImage(p.start?.before);
    for (const i of indices) {
      const s = byIndex.get(i);
      if (!s) {
        const request = asked[i] ?? {};
        out.push({
          index: i,
          action: typeof request.action === "string" ? request.action : "?",
          status: p.end ? "not-reached" : "not-recorded",
          refused: false,
          request,
          decision: null,
          receipt: null,
          error: null,
          startedAt: null,
          durationMs: null,
          marks: null,
          before,
          after: null,
          treeDiff: null,
        });
        // What the window looked like after an unrecorded step is unknown.
        before = null;
        continue;
      }
      const after = pageImage(s.after);
      const isRefused = s.decision.verdict === "deny";
      steps++;
      if (s.status === "failed") failed++;
      if (isRefused) refused++;
      out.push({
        index: s.index,
        action: s.action,
        status: s.status,
        refused: isRefused,
        request: s.request,
        decision: s.decision,
        receipt: s.receipt,
        error: s.error,
        startedAt: s.startedAt,
        durationMs: s.durationMs,
        marks: s.marks,
        before,
        after,
        treeDiff: s.treeDiff,
      });
      before = after;
    }
    const programFailed = !!p.end?.error || out.some((s) => s.status === "failed");
    if (programFailed) failedPrograms++;
    return {
      id: p.id,
      session: p.session,
      command: p.start?.command ?? null,
      app: p.start?.app ?? null,
      windowId: p.start?.windowId ?? null,
      snapshotId: p.start?.snapshotId ?? null,
      startedAt: p.start?.startedAt ?? null,
      missingStart: p.start === null,
      ended: p.end !== null,
      durationMs: p.end?.durationMs ?? null,
      firstFailure: p.end?.firstFailure ?? null,
      error: p.end?.error ?? null,
      settle: p.end?.settle ?? null,
      observationError: p.end?.observationError ?? null,
      steps: out,
    };
  });
  return {
    format: 1,
    dir,
    generatedAt: (opts.now ?? new Date()).toISOString(),
    viewer: opts.viewer,
    sessions: trace.sessions,
    counts: { programs: programs.length, steps, failed, refused, failedPrograms },
    skipped: { count: trace.skippedCount, truncatedLastLine: trace.truncatedLastLine, lines: trace.skipped },
    images,
    programs,
  };
}
