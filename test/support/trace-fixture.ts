// A synthetic trace directory for the viewer's tests: the events a recorder
// would write (every line checked against the trace format before it is
// written, so the fixture cannot drift from src/protocol/trace.ts) and real
// PNG window images with the clicked element drawn where the trace says it is.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { encodePng } from "../../src/engine/png.ts";
import { TRACE_FILE, TRACE_IMAGE_DIR, TraceEvent, type TraceImage } from "../../src/protocol/trace.ts";

export const HOSTILE = `</script><img src=x onerror=alert(1)>`;

type Rect = { x: number; y: number; width: number; height: number };
type Rgb = [number, number, number];

/** A window image: `width` x `height`, light grey, with filled rectangles (in image pixels). */
export async function windowPng(width: number, height: number, rects: { rect: Rect; color: Rgb }[] = []): Promise<Buffer> {
  const data = new Uint8Array(width * height * 3).fill(236);
  // A title bar, so the image reads as a window in the screenshot.
  for (let y = 0; y < Math.min(12, height); y++) for (let x = 0; x < width; x++) data.set([70, 90, 130], (y * width + x) * 3);
  for (const { rect, color } of rects) {
    for (let y = Math.max(0, Math.round(rect.y)); y < Math.min(height, Math.round(rect.y + rect.height)); y++) {
      for (let x = Math.max(0, Math.round(rect.x)); x < Math.min(width, Math.round(rect.x + rect.width)); x++) data.set(color, (y * width + x) * 3);
    }
  }
  return encodePng({ width, height, channels: 3, data });
}

/** Stores an image as the recorder does (img/<sha256>.png) and returns its trace entry. */
export function storeImage(dir: string, png: Buffer, map: { origin: { x: number; y: number }; scale: number; width: number; height: number; redacted?: number }): TraceImage {
  mkdirSync(join(dir, TRACE_IMAGE_DIR), { recursive: true, mode: 0o700 });
  const file = `${TRACE_IMAGE_DIR}/${createHash("sha256").update(png).digest("hex")}.png`;
  writeFileSync(join(dir, file), png, { mode: 0o600 });
  return { file, width: map.width, height: map.height, origin: map.origin, scale: map.scale, redacted: map.redacted ?? 0 };
}

/** Serialises events as trace.jsonl lines, each validated (a fixture that is not a trace would test nothing). */
export function traceLines(events: unknown[]): string {
  return events.map((e) => JSON.stringify(TraceEvent.parse(e)) + "\n").join("");
}

const decisionAllow = { verdict: "allow", source: "default", rule: null, code: null, remediation: null } as const;

/** What the synthetic trace holds, for tests to compute expectations from the trace's own numbers. */
export interface SyntheticTrace {
  dir: string;
  /** The window: screen rect, and the image map (scale, origin). */
  window: Rect;
  scale: number;
  /** The clicked element's screen rect and the click point (its centre). */
  clickBox: Rect;
  clickPoint: { x: number; y: number };
  /** Steps in page order: [program id, step index, status] (not-reached: asked for, never run). */
  order: [string, number, string][];
  failed: { program: string; index: number; code: string; remediation: string };
  refused: { program: string; index: number; code: string; remediation: string };
  images: { before: TraceImage; afterClick: TraceImage };
}

/**
 * Four programs: p1 (fixture-app, run) click -> completed, type-text ->
 * failed, press-key -> unattempted; p2 (the hostile app name) click refused
 * by policy; p3 (fixture-app) a drag; p4 (no-such-app) refused before any
 * step ran. A window of 400x300 at screen (100, 50), images at scale 0.5
 * (200x150).
 */
export async function writeSyntheticTrace(dir: string, opts: { extraLines?: string; truncatedTail?: string } = {}): Promise<SyntheticTrace> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const window = { x: 100, y: 50, width: 400, height: 300 };
  const scale = 0.5;
  const origin = { x: window.x, y: window.y };
  const toImg = (r: Rect): Rect => ({ x: (r.x - origin.x) * scale, y: (r.y - origin.y) * scale, width: r.width * scale, height: r.height * scale });
  const clickBox = { x: 180, y: 110, width: 120, height: 40 };
  const clickPoint = { x: clickBox.x + clickBox.width / 2, y: clickBox.y + clickBox.height / 2 };
  const field = { x: 140, y: 200, width: 260, height: 30 };
  const map = { origin, scale, width: 200, height: 150 };
  const before = storeImage(dir, await windowPng(200, 150, [{ rect: toImg(clickBox), color: [90, 140, 220] }, { rect: toImg(field), color: [255, 255, 255] }]), map);
  const afterClick = storeImage(dir, await windowPng(200, 150, [{ rect: toImg(clickBox), color: [40, 90, 180] }, { rect: toImg(field), color: [255, 255, 255] }]), map);
  const t = (s: number) => new Date(Date.UTC(2026, 11, 2, 12, 0, s)).toISOString();
  const failedRemediation = "Focus the field first, or use set-value.";
  const appRemediation = "Run `deckhand list-apps` and use one of its names.";
  const refusedRemediation = "This app is on the built-in deny list; the operator can allow it in their policy file.";
  const events: unknown[] = [
    { type: "session", version: 1, mode: "cli", deckhand: "0.1.0", helper: "deckhand-helper-linux 0.1.0", startedAt: t(0), pid: 4000 },
    {
      type: "program",
      id: "p1",
      command: "run",
      app: { name: "fixture-app", pid: 4242 },
      windowId: 0x200001,
      snapshotId: "s1",
      startedAt: t(1),
      steps: [{ action: "click", elementIndex: 3 }, { action: "type-text", text: { redacted: true, length: 8 } }, { action: "press-key", key: "Return" }],
      before,
    },
    {
      type: "step",
      program: "p1",
      index: 0,
      action: "click",
      request: { action: "click", elementIndex: 3 },
      status: "completed",
      decision: decisionAllow,
      receipt: { delivery: "submitted", route: "accessibility", elementIndex: 3, verification: { verified: true, predicate: "focused" }, cleanup: null, nativeAction: "press" },
      error: null,
      startedAt: t(2),
      durationMs: 41,
      marks: { points: [{ ...clickPoint, kind: "click" }], path: [], box: clickBox },
      after: afterClick,
      treeDiff: { added: ["[3] button \"OK\" focused"], removed: ["[3] button \"OK\""], unchanged: 17, truncated: false },
    },
    {
      type: "step",
      program: "p1",
      index: 1,
      action: "type-text",
      request: { action: "type-text", text: { redacted: true, length: 8 } },
      status: "failed",
      decision: decisionAllow,
      receipt: { delivery: "partial", route: "input", verification: { verified: false, predicate: null }, cleanup: null, charsSent: 3 },
      error: { code: "ACTION_FAILED", message: "focus moved away after 3 characters", remediation: failedRemediation },
      startedAt: t(3),
      durationMs: 120,
      marks: { points: [], path: [], box: field },
      // The same bytes as the previous after: one file, one embedded copy.
      after: afterClick,
      treeDiff: { added: [HOSTILE], removed: [], unchanged: 18, truncated: true },
    },
    {
      type: "step",
      program: "p1",
      index: 2,
      action: "press-key",
      request: { action: "press-key", key: "Return" },
      status: "unattempted",
      decision: { verdict: "not-reached", source: null, rule: null, code: null, remediation: null },
      receipt: { delivery: "not_dispatched", route: null },
      error: null,
      startedAt: t(3),
      durationMs: 0,
      marks: { points: [], path: [], box: null },
      after: null,
      treeDiff: null,
    },
    { type: "program-end", program: "p1", firstFailure: 1, error: { code: "ACTION_FAILED", message: "step 1 (type-text): focus moved away after 3 characters", remediation: failedRemediation }, durationMs: 190, settle: { waitedMs: 30, events: 2, settled: true }, observationError: null },
    {
      type: "program",
      id: "p2",
      command: "click",
      app: { name: HOSTILE, pid: 5151 },
      windowId: 0x300001,
      snapshotId: null,
      startedAt: t(5),
      steps: [{ action: "click", x: 10, y: 10 }],
      before: { missing: "the app has no window" },
    },
    {
      type: "step",
      program: "p2",
      index: 0,
      action: "click",
      request: { action: "click", x: 10, y: 10, note: HOSTILE },
      status: "failed",
      decision: { verdict: "deny", source: "built-in", rule: "deny-terminals", code: "POLICY_DENIED", remediation: refusedRemediation },
      receipt: { delivery: "not_dispatched", route: null },
      error: { code: "POLICY_DENIED", message: `refused: ${HOSTILE}`, remediation: refusedRemediation },
      startedAt: t(6),
      durationMs: 2,
      marks: { points: [{ x: 10, y: 10, kind: "click" }], path: [], box: null },
      after: { file: "../../../etc/passwd", width: 10, height: 10, origin: { x: 0, y: 0 }, scale: 1, redacted: 0 },
      treeDiff: null,
    },
    { type: "program-end", program: "p2", firstFailure: 0, error: { code: "POLICY_DENIED", message: "refused", remediation: refusedRemediation }, durationMs: 3, settle: null, observationError: null },
    {
      type: "program",
      id: "p3",
      command: "drag",
      app: { name: "fixture-app", pid: 4242 },
      windowId: 0x200001,
      snapshotId: "s2",
      startedAt: t(8),
      steps: [{ action: "drag", path: [{ x: 150, y: 100 }, { x: 400, y: 280 }] }],
      before: afterClick,
    },
    {
      type: "step",
      program: "p3",
      index: 0,
      action: "drag",
      request: { action: "drag", path: [{ x: 150, y: 100 }, { x: 400, y: 280 }] },
      status: "completed",
      decision: decisionAllow,
      receipt: { delivery: "submitted", route: "input", verification: { verified: null, predicate: null }, cleanup: { released: true } },
      error: null,
      startedAt: t(9),
      durationMs: 300,
      marks: { points: [{ x: 150, y: 100, kind: "press" }, { x: 400, y: 280, kind: "release" }], path: [{ x: 150, y: 100 }, { x: 275, y: 190 }, { x: 400, y: 280 }], box: null },
      after: { missing: "the trace's image budget was spent" },
      treeDiff: { added: [], removed: [], unchanged: 19, truncated: false },
    },
    { type: "program-end", program: "p3", firstFailure: null, error: null, durationMs: 310, settle: null, observationError: null },
    // Refused before any step ran (no such app): a program and its end, no step line.
    { type: "program", id: "p4", command: "click", app: { name: "no-such-app", pid: 0 }, windowId: null, snapshotId: null, startedAt: t(11), steps: [{ action: "click", elementIndex: 1 }], before: null },
    { type: "program-end", program: "p4", firstFailure: null, error: { code: "APP_NOT_FOUND", message: 'no app matches "no-such-app"', remediation: appRemediation }, durationMs: 4, settle: null, observationError: null },
  ];
  writeFileSync(join(dir, TRACE_FILE), traceLines(events) + (opts.extraLines ?? "") + (opts.truncatedTail ?? ""), { mode: 0o600 });
  return {
    dir,
    window,
    scale,
    clickBox,
    clickPoint,
    order: [
      ["p1", 0, "completed"],
      ["p1", 1, "failed"],
      ["p1", 2, "unattempted"],
      ["p2", 0, "failed"],
      ["p3", 0, "completed"],
      ["p4", 0, "not-reached"],
    ],
    failed: { program: "p1", index: 1, code: "ACTION_FAILED", remediation: failedRemediation },
    refused: { program: "p2", index: 0, code: "POLICY_DENIED", remediation: refusedRemediation },
    images: { before, afterClick },
  };
}
