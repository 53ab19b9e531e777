// Set-of-marks (issue 14): the window image with a numbered box on each
// element the agent was shown as actionable, for vision-first agents. The
// number on a box is the element's index, so "click 12" is
// `click --element-index 12` on the same snapshot. Drawn on the very PNG the
// helper wrote (secure fields already blacked out), so the image-to-screen
// map is the screenshot's: marks never move a pixel, they paint over some.
// docs/marks.md says what is numbered, the colours and the limits.
import { readFileSync, statSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import type { Element, ScreenshotInfo, Snapshot } from "../session/snapshot.ts";
import { writeFileAtomic, type SnapshotStore } from "../session/store.ts";
import type { Page } from "../session/view.ts";
import type { Rect } from "../wire/messages.ts";
import { forEachInk, textSize } from "./digit-font.ts";
import { decodePng, encodePng, MAX_FILE_BYTES, type Bitmap } from "./png.ts";

/** The set-of-marks PNG: described like the screenshot it was drawn on (same size and map), plus the boxes drawn. */
export type MarksInfo = ScreenshotInfo & { count: number; omitted?: number };
export type MarksOutcome = { marks: MarksInfo } | { marksError: { code: string; message: string } };

/**
 * The most boxes drawn on one image. Past it the first MAX_MARKS elements in
 * tree order are numbered and the rest are not (count says how many were):
 * beyond a few hundred, boxes cover the window and no label can be read.
 */
export const MAX_MARKS = 500;

/** A rectangle in image pixels: x0, y0 inclusive; x1, y1 exclusive. May reach past the image (clipped when drawn). */
export interface ImageRect {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/** One element to number: its index and its bounds in image pixels. */
export interface Mark {
  index: number;
  box: ImageRect;
}

/** Where a mark is drawn: its box (clipped, with which sides show), its label, and its colour. */
export interface PlacedMark extends Mark {
  colour: Rgb;
  /** Edge bands drawn, in image pixels (clipped): the sides of the box inside the image. */
  edges: ImageRect[];
  /** The filled label with the number. */
  label: ImageRect;
  text: string;
}

export type Rgb = readonly [number, number, number];

/**
 * Box and label colours, by element index (index mod 8): saturated hues
 * that stand apart from each other and from the greys and whites of most
 * windows; neighbouring indices get different colours.
 */
export const MARK_PALETTE: readonly Rgb[] = [
  [230, 25, 75], // red
  [0, 92, 230], // blue
  [0, 150, 60], // green
  [200, 0, 200], // magenta
  [245, 130, 0], // orange
  [0, 140, 160], // teal
  [120, 50, 200], // violet
  [150, 90, 0], // brown
];

export function markColour(index: number): Rgb {
  return MARK_PALETTE[((index % MARK_PALETTE.length) + MARK_PALETTE.length) % MARK_PALETTE.length]!;
}

/** Digits in black on light fills, white on dark ones (relative luminance). */
export function inkOn(fill: Rgb): Rgb {
  const lum = 0.2126 * fill[0] + 0.7152 * fill[1] + 0.0722 * fill[2];
  return lum > 140 ? [0, 0, 0] : [255, 255, 255];
}

/** Float error in a scaled edge (a bound landing on a pixel boundary stays on it). */
const EPS = 1e-6;

/**
 * Screen bounds in image pixels: image x = (screen x - origin.x) * scale (y
 * likewise). The box covers every image pixel the bounds touch, at least one.
 */
export function boundsToImage(b: Rect, shot: { origin: { x: number; y: number }; scale: number }): ImageRect {
  const s = shot.scale;
  const x0 = Math.floor((b.x - shot.origin.x) * s + EPS);
  const y0 = Math.floor((b.y - shot.origin.y) * s + EPS);
  const x1 = Math.max(x0 + 1, Math.ceil((b.x + b.width - shot.origin.x) * s - EPS));
  const y1 = Math.max(y0 + 1, Math.ceil((b.y + b.height - shot.origin.y) * s - EPS));
  return { x0, y0, x1, y1 };
}

/** A rectangle clipped to a width x height image; null when nothing of it is on the image. */
export function clipToImage(r: ImageRect, width: number, height: number): ImageRect | null {
  const c = { x0: Math.max(0, r.x0), y0: Math.max(0, r.y0), x1: Math.min(width, r.x1), y1: Math.min(height, r.y1) };
  return c.x1 > c.x0 && c.y1 > c.y0 ? c : null;
}

/**
 * What is numbered: the interactive elements of the page the agent was
 * shown (nodes marked `a`; positions page.offset..page.lastPosition: the rest
 * is beyond the horizon; in the compact format only nodes it shows), and
 * elements read by OCR (source "ocr": actionable by point), each with bounds
 * that reach onto the image. In tree order, uncapped.
 */
export function markedElements(
  s: Pick<Snapshot, "nodes" | "elements">,
  page: Pick<Page, "offset" | "lastPosition" | "format">,
  shot: { width: number; height: number; origin: { x: number; y: number }; scale: number },
): Mark[] {
  const byIndex = new Map<number, Element>(s.elements.map((e) => [e.index, e]));
  const onImage = (e: Element | undefined): Mark | null => {
    if (!e?.bounds || e.bounds.width <= 0 || e.bounds.height <= 0) return null;
    const box = boundsToImage(e.bounds, shot);
    return clipToImage(box, shot.width, shot.height) ? { index: e.index, box } : null;
  };
  const out: Mark[] = [];
  const inNodes = new Set<number>();
  for (let pos = 0; pos < s.nodes.length; pos++) {
    const n = s.nodes[pos]!;
    if (n.e === undefined) continue;
    inNodes.add(n.e);
    if (pos < page.offset || pos > page.lastPosition) continue;
    if (page.format === "compact" && n.k === undefined) continue;
    const el = byIndex.get(n.e);
    if (n.a !== 1 && el?.source !== "ocr") continue;
    const m = onImage(el);
    if (m) out.push(m);
  }
  // OCR elements with no node of their own (read from the image, outside the tree): shown with every page.
  for (const e of s.elements) {
    if (e.source !== "ocr" || inNodes.has(e.index)) continue;
    const m = onImage(e);
    if (m) out.push(m);
  }
  return out;
}

/**
 * Label digits and box lines: 2 pixels a font dot (digits 14 pixels tall)
 * on images at least 640 x 300, else 1 (7 pixels tall): on a small image
 * (a window scaled down for a model) larger labels would hide what they label.
 */
export function markScale(width: number, height: number): number {
  return width >= 640 && height >= 300 ? 2 : 1;
}

function overlaps(a: ImageRect, b: ImageRect): boolean {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/** A w x h rectangle at (x, y), moved (not cut) to lie inside the image. */
function keepInside(x: number, y: number, w: number, h: number, width: number, height: number): ImageRect {
  const x0 = Math.max(0, Math.min(x, width - w));
  const y0 = Math.max(0, Math.min(y, height - h));
  return { x0, y0, x1: Math.min(width, x0 + w), y1: Math.min(height, y0 + h) };
}

/**
 * Where each mark goes on a width x height image: its box's visible sides
 * (bands `scale` thick, inside the bounds; a side off the image is not
 * drawn) and its label, a filled rectangle with the number, kept inside the
 * image. A label sits above the box's top-left corner, or inside it, below
 * it, left of it, or inside its top-right corner: the first of these that
 * covers no label placed before, else the first. At most MAX_MARKS, in order.
 */
export function layoutMarks(marks: readonly Mark[], width: number, height: number): PlacedMark[] {
  const s = markScale(width, height);
  const pad = s;
  const placed: PlacedMark[] = [];
  for (const m of marks.slice(0, MAX_MARKS)) {
    const vis = clipToImage(m.box, width, height);
    if (!vis) continue;
    const { x0, y0, x1, y1 } = m.box;
    const t = Math.max(1, Math.min(s, Math.floor((x1 - x0) / 2), Math.floor((y1 - y0) / 2)));
    const edges: ImageRect[] = [];
    const band = (r: ImageRect) => {
      const c = clipToImage(r, width, height);
      if (c) edges.push(c);
    };
    if (y0 >= 0) band({ x0: vis.x0, y0, x1: vis.x1, y1: y0 + t });
    if (y1 <= height) band({ x0: vis.x0, y0: y1 - t, x1: vis.x1, y1 });
    if (x0 >= 0) band({ x0, y0: vis.y0, x1: x0 + t, y1: vis.y1 });
    if (x1 <= width) band({ x0: x1 - t, y0: vis.y0, x1, y1: vis.y1 });
    const text = String(m.index);
    const size = textSize(text, s);
    const lw = size.width + 2 * pad;
    const lh = size.height + 2 * pad;
    const candidates = [
      keepInside(vis.x0, y0 - lh, lw, lh, width, height),
      keepInside(vis.x0, vis.y0, lw, lh, width, height),
      keepInside(vis.x0, y1, lw, lh, width, height),
      keepInside(x0 - lw, vis.y0, lw, lh, width, height),
      keepInside(vis.x1 - lw, vis.y0, lw, lh, width, height),
    ];
    const label = candidates.find((c) => !placed.some((p) => overlaps(p.label, c))) ?? candidates[0]!;
    placed.push({ ...m, colour: markColour(m.index), edges, label, text });
  }
  return placed;
}

function fill(img: Bitmap, r: ImageRect, c: Rgb): void {
  const { width, channels, data } = img;
  for (let y = Math.max(0, r.y0); y < Math.min(img.height, r.y1); y++) {
    for (let x = Math.max(0, r.x0); x < Math.min(width, r.x1); x++) {
      const o = (y * width + x) * channels;
      data[o] = c[0];
      data[o + 1] = c[1];
      data[o + 2] = c[2];
      if (channels === 4) data[o + 3] = 255;
    }
  }
}

/**
 * Draw the marks on the bitmap in place: every box first, then every label
 * (so a label is never cut by another box), in order. Returns the layout.
 */
export function drawMarks(img: Bitmap, marks: readonly Mark[]): PlacedMark[] {
  const placed = layoutMarks(marks, img.width, img.height);
  for (const p of placed) for (const e of p.edges) fill(img, e, p.colour);
  const s = markScale(img.width, img.height);
  for (const p of placed) {
    fill(img, p.label, p.colour);
    const ink = inkOn(p.colour);
    const size = textSize(p.text, s);
    // Centred in the label (the label may have been squeezed by a tiny image: ink outside it is not drawn).
    const ox = p.label.x0 + Math.floor((p.label.x1 - p.label.x0 - size.width) / 2);
    const oy = p.label.y0 + Math.floor((p.label.y1 - p.label.y0 - size.height) / 2);
    forEachInk(p.text, s, (x, y) => fill(img, { x0: ox + x, y0: oy + y, x1: ox + x + 1, y1: oy + y + 1 }, ink));
  }
  return placed;
}

/**
 * Read the window image, draw the marks, and write `<name>-marks.png` in the
 * store's screenshots directory (0600, atomically). The result describes it
 * with the screenshot's size and map.
 */
export async function writeMarksImage(store: SnapshotStore, name: string, shot: ScreenshotInfo, marks: readonly Mark[]): Promise<MarksInfo> {
  if (shot.format !== "png") {
    throw new DeckhandError("ACTION_UNSUPPORTED", `the window image is ${shot.format}: the set-of-marks image is drawn on a PNG capture`, { details: { reason: "not-png", format: shot.format } });
  }
  let bytes: Buffer;
  try {
    const size = statSync(shot.path).size;
    if (size > MAX_FILE_BYTES) throw new Error(`${size} bytes`);
    bytes = readFileSync(shot.path);
  } catch (err) {
    throw new DeckhandError("SCREENSHOT_FAILED", `the window image cannot be read: ${(err as Error).message}`, { details: { reason: "image-unreadable" } });
  }
  const img = await decodePng(bytes);
  if (img.width !== shot.width || img.height !== shot.height) {
    throw new DeckhandError("SCREENSHOT_FAILED", `the window image is ${img.width}x${img.height}, not the ${shot.width}x${shot.height} the helper reported`, { details: { reason: "size-mismatch" } });
  }
  const placed = drawMarks(img, marks);
  const path = store.screenshotPath(`${name}-marks`);
  const png = await encodePng(img);
  try {
    writeFileAtomic(path, png);
  } catch (err) {
    throw new DeckhandError("SCREENSHOT_FAILED", `the set-of-marks image cannot be written: ${(err as Error).message}`, { details: { reason: "write-failed" } });
  }
  // Past the cap the agent is told how many were left unnumbered (page with a smaller budget to see them numbered).
  const omitted = Math.max(0, marks.length - MAX_MARKS);
  return { ...shot, path, method: `${shot.method}+marks`, count: placed.length, ...(omitted > 0 ? { omitted } : {}) };
}

/**
 * The marks of an observation: drawn on its screenshot for what its page
 * shows, or why not (no screenshot, an image it cannot read). Never throws
 * for those: the observation stands without its marks.
 */
export async function marksFor(
  store: SnapshotStore,
  s: Pick<Snapshot, "snapshotId" | "nodes" | "elements">,
  page: Pick<Page, "offset" | "lastPosition" | "format">,
  shot: ScreenshotInfo | null,
  shotError?: { code: string; message: string },
): Promise<MarksOutcome> {
  if (!shot) {
    const why = shotError ? `${shotError.code}: ${shotError.message}` : "none was taken";
    return { marksError: { code: shotError?.code === "ACTION_UNSUPPORTED" ? "ACTION_UNSUPPORTED" : "SCREENSHOT_FAILED", message: `no window image to draw the marks on (${why})` } };
  }
  try {
    return { marks: await writeMarksImage(store, s.snapshotId, shot, markedElements(s, page, shot)) };
  } catch (err) {
    if (err instanceof DeckhandError) return { marksError: { code: err.code, message: err.message } };
    throw err;
  }
}
