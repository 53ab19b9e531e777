// OCR in an observation (issue 14, docs/ocr.md): when it runs, which image it
// reads, and how the lines it reads join the snapshot as elements (source
// "ocr", locator kind "ocr-box"), numbered past every index and position of
// the tree, so that no index of the tree's ever changes meaning.
import { rmSync } from "node:fs";
import { DEFAULT_REMEDIATION, DeckhandError } from "../protocol/errors.ts";
import type { Element, ScreenshotInfo, Snapshot, StoredNode } from "../session/snapshot.ts";
import type { Rect } from "../wire/messages.ts";
import { imageToScreen, readText, type OcrLine } from "./ocr.ts";
import type { ObservationWarning } from "./tree-advice.ts";

/** The OCR run an observation reports (results.ts OcrReport). */
export interface OcrReport {
  engine: string;
  automatic: boolean;
  lines: number;
  ms: number;
}

/** What an observation's OCR came to: a report, or why there is none (an error when asked for, a warning when automatic). */
export interface OcrOutcome {
  ocr?: OcrReport;
  ocrError?: { code: string; message: string };
  warning?: ObservationWarning;
}

/**
 * Whether an observation reads its image's text: asked (`ocr: true`), or
 * automatically when the app has no tree, or a tree with nothing below its
 * window (a canvas, a toolkit that shows only its frame); never when
 * `ocr: false` turns it off.
 */
export function ocrMode(asked: boolean | undefined, treeless: boolean, elements: readonly Element[]): "asked" | "automatic" | null {
  if (asked === true) return "asked";
  if (asked === false) return null;
  if (treeless || elements.every((e) => e.locator.path.length === 0)) return "automatic";
  return null;
}

const MAX_TITLE_CHARS = 120;

/** The element of one line read, at `index`, its box in screen pixels. */
export function ocrElement(line: OcrLine, index: number, bounds: Rect): Element {
  return {
    index,
    role: "label",
    nativeRole: "",
    title: line.text,
    value: null,
    label: "",
    enabled: true,
    focused: false,
    secure: false,
    bounds,
    actions: [],
    nativeActions: [],
    locator: { kind: "ocr-box", path: [], role: "label", nativeRole: "", identifier: "", name: line.text },
    source: "ocr",
  };
}

/** Its tree text line (without index): as a tree's label reads, shown in the compact view too. */
export function ocrNode(el: Element): StoredNode {
  const t = el.title.length > MAX_TITLE_CHARS ? el.title.slice(0, MAX_TITLE_CHARS) + "…" : el.title;
  return { d: 1, t: `label ${JSON.stringify(t)}`, e: el.index, k: 1 };
}

/**
 * Indices for `texts`, in order: past every index and node position of the
 * snapshot (and of a diff's base, whose indices an agent may still hold);
 * a line whose text the base read too keeps the base's index (a diff then
 * reports it unchanged, or changed when it moved).
 */
export function ocrIndices(texts: readonly string[], snapshot: Pick<Snapshot, "elements" | "nodes">, base: Pick<Snapshot, "elements" | "nodes"> | null = null): number[] {
  const taken = new Set(snapshot.elements.map((e) => e.index));
  let next = Math.max(snapshot.nodes.length, ...snapshot.elements.map((e) => e.index + 1), 0);
  const reusable = new Map<string, number[]>();
  if (base) {
    next = Math.max(next, base.nodes.length, ...base.elements.map((e) => e.index + 1));
    for (const e of base.elements) {
      if (e.source !== "ocr" || taken.has(e.index)) continue;
      let q = reusable.get(e.title);
      if (!q) reusable.set(e.title, (q = []));
      q.push(e.index);
    }
  }
  return texts.map((t) => {
    const kept = reusable.get(t)?.shift();
    const index = kept !== undefined && !taken.has(kept) ? kept : next++;
    taken.add(index);
    return index;
  });
}

function overlaps(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

export interface OcrInput {
  snapshot: Snapshot;
  /** The observation's image (null: none was taken or it failed). */
  screenshot: ScreenshotInfo | null;
  /** get-app-state's `ocr` (undefined: automatic only). */
  asked: boolean | undefined;
  /** The app has no tree at all. */
  treeless: boolean;
  /** Screen bounds of the tree's secure fields (blacked out in the image already): no line is taken from there. */
  secure: readonly Rect[];
  /** A diff's base snapshot, when the observation is a diff. */
  base: Snapshot | null;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
  /**
   * A full-resolution PNG of the same window (and region), secure fields
   * blacked out as in the observation's image, for an image that was scaled
   * down or lossily encoded: text that small reads badly (docs/ocr.md). The
   * file is removed after the OCR.
   */
  fullResolution(): Promise<ScreenshotInfo | null>;
}

/**
 * Read the observation's image and add a text element per line to the
 * snapshot (before it is stored): nodes after the tree's, shown in the
 * compact view under the window. For an app without a tree, a window line
 * (not an element) heads them. Null when OCR does not apply.
 */
export async function addOcr(input: OcrInput): Promise<OcrOutcome | null> {
  const { snapshot, screenshot } = input;
  const mode = ocrMode(input.asked, input.treeless, snapshot.elements);
  if (mode === null) return null;
  const automatic = mode === "automatic";
  const unavailable = (message: string): OcrOutcome =>
    automatic
      ? { warning: { code: "OCR_UNAVAILABLE", message: `text could not be read from the window image: ${message}`, remediation: DEFAULT_REMEDIATION.OCR_UNAVAILABLE } }
      : { ocrError: { code: "OCR_UNAVAILABLE", message } };
  if (!screenshot) {
    // Automatic OCR needs an image it was not given: the screenshot's own error says why.
    return automatic ? null : unavailable("there is no window image to read (see screenshotError)");
  }
  let image = screenshot;
  let extra: ScreenshotInfo | null = null;
  try {
    if (screenshot.scale < 1 || screenshot.format !== "png") {
      // A capture that fails leaves the observation's own image to read.
      extra = await input.fullResolution().catch(() => null);
      if (extra) image = extra;
    }
    const read = await readText(image.path, input.env, input.signal);
    const lines = read.lines
      .map((line) => ({ line, bounds: imageToScreen(line.box, image) }))
      .filter(({ bounds }) => !input.secure.some((s) => overlaps(s, bounds)));
    if (input.treeless && snapshot.nodes.length === 0 && lines.length > 0) {
      snapshot.nodes.push({ d: 0, t: `window ${JSON.stringify(snapshot.window.title.slice(0, MAX_TITLE_CHARS))}`, k: 0 });
    }
    const indices = ocrIndices(
      lines.map((l) => l.line.text),
      snapshot,
      input.base,
    );
    lines.forEach(({ line, bounds }, i) => {
      const el = ocrElement(line, indices[i]!, bounds);
      snapshot.elements.push(el);
      snapshot.nodes.push(ocrNode(el));
    });
    snapshot.elementCount = snapshot.elements.length;
    return { ocr: { engine: read.engine, automatic, lines: lines.length, ms: read.ms } };
  } catch (err) {
    if (err instanceof DeckhandError && err.code === "OCR_UNAVAILABLE") return unavailable(err.message);
    throw err;
  } finally {
    if (extra) rmSync(extra.path, { force: true });
  }
}

/** The result fields of an observation's OCR (appStateResult). */
export function ocrResultFields(s: { ocr?: OcrReport; ocrError?: { code: string; message: string } }): { ocr?: OcrReport; ocrError?: { code: string; message: string } } {
  return { ...(s.ocr ? { ocr: s.ocr } : {}), ...(s.ocrError ? { ocrError: s.ocrError } : {}) };
}

/** The observation's OCR fields and its warning, once its other warnings are set. */
export function applyOcrOutcome(observation: { ocr?: OcrReport; ocrError?: { code: string; message: string }; warnings?: ObservationWarning[] }, outcome: OcrOutcome | null): void {
  if (!outcome) return;
  if (outcome.ocr) observation.ocr = outcome.ocr;
  if (outcome.ocrError) observation.ocrError = outcome.ocrError;
  if (outcome.warning) observation.warnings = [...(observation.warnings ?? []), outcome.warning];
}
