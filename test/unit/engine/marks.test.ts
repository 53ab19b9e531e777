// Set-of-marks drawing (src/engine/marks.ts, src/engine/digit-font.ts): the
// digit font, screen bounds to image pixels through origin and scale,
// clipping at the image's edges, what is numbered, label placement, and the
// PNG written beside the screenshot.
import { describe, expect, it } from "vitest";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { forEachInk, glyphDot, GLYPH_HEIGHT, GLYPH_WIDTH, textSize } from "../../../src/engine/digit-font.ts";
import {
  boundsToImage,
  clipToImage,
  drawMarks,
  inkOn,
  layoutMarks,
  markColour,
  markedElements,
  marksFor,
  markScale,
  MARK_PALETTE,
  MAX_MARKS,
  writeMarksImage,
  type Mark,
} from "../../../src/engine/marks.ts";
import { decodePng, encodePng, type Bitmap } from "../../../src/engine/png.ts";
import type { Element, ScreenshotInfo, StoredNode } from "../../../src/session/snapshot.ts";
import { SnapshotStore } from "../../../src/session/store.ts";
import { readLabel, rgbAt } from "../../fixtures/images/read-label.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "deckhand-marks-"));
  dirs.push(d);
  return d;
}

function blank(width: number, height: number, channels: 3 | 4 = 3, grey = 200): Bitmap {
  const data = new Uint8Array(width * height * channels).fill(grey);
  return { width, height, channels, data };
}

function el(index: number, bounds: Element["bounds"], extra: Partial<Element> = {}): Element {
  return {
    index,
    role: "button",
    nativeRole: "push button",
    title: `b${index}`,
    value: null,
    label: "",
    enabled: true,
    focused: false,
    secure: false,
    bounds,
    actions: ["press"],
    nativeActions: ["click"],
    locator: { kind: "atspi-path", path: [index], role: "button", nativeRole: "push button", identifier: "", name: `b${index}` },
    ...extra,
  };
}

describe("digit font", () => {
  it("ten distinct 5x7 glyphs: no two digits share their dots", () => {
    const shapes = [...Array(10).keys()].map((d) => [...Array(GLYPH_HEIGHT * GLYPH_WIDTH).keys()].map((i) => (glyphDot(d, i % GLYPH_WIDTH, Math.floor(i / GLYPH_WIDTH)) ? "#" : ".")).join(""));
    expect(new Set(shapes).size).toBe(10);
  });

  it("draws 8 and 0 as their shapes, and scales a dot to a square", () => {
    const draw = (text: string, scale: number) => {
      const { width, height } = textSize(text, scale);
      const rows = [...Array(height)].map(() => [...Array(width)].map(() => "."));
      forEachInk(text, scale, (x, y) => (rows[y]![x] = "#"));
      return rows.map((r) => r.join(""));
    };
    expect(draw("80", 1)).toEqual([".###...###.", "#...#.#...#", "#...#.#..##", ".###..#.#.#", "#...#.##..#", "#...#.#...#", ".###...###."]);
    const big = draw("7", 3);
    expect(big).toHaveLength(21);
    expect(big[0]).toBe("###############");
    // The stem of 7's last rows (column 1 of 5) is 3 pixels wide at scale 3.
    expect(big[20]).toBe("...###.........");
  });

  it("text size: digits with a one-dot gap, times the scale; only digits are drawn", () => {
    expect(textSize("123", 2)).toEqual({ width: (3 * 6 - 1) * 2, height: 14 });
    expect(() => forEachInk("1a", 1, () => undefined)).toThrow(/0-9 only/);
  });
});

describe("boundsToImage and clipping", () => {
  it("maps screen bounds through origin and scale, covering every pixel touched", () => {
    expect(boundsToImage({ x: 120, y: 60, width: 40, height: 21 }, { origin: { x: 100, y: 50 }, scale: 0.5 })).toEqual({ x0: 10, y0: 5, x1: 30, y1: 16 });
    expect(boundsToImage({ x: 10, y: 20, width: 100, height: 24 }, { origin: { x: 10, y: 20 }, scale: 1 })).toEqual({ x0: 0, y0: 0, x1: 100, y1: 24 });
    // An upscaled image (scale 2: a HiDPI-like map) doubles everything.
    expect(boundsToImage({ x: 5, y: 5, width: 3, height: 1 }, { origin: { x: 0, y: 0 }, scale: 2 })).toEqual({ x0: 10, y0: 10, x1: 16, y1: 12 });
    // A sub-pixel element still gets one pixel.
    expect(boundsToImage({ x: 101, y: 51, width: 1, height: 1 }, { origin: { x: 100, y: 50 }, scale: 0.25 })).toEqual({ x0: 0, y0: 0, x1: 1, y1: 1 });
    // 1/3 scale: edges that land on pixel boundaries within float error stay on them.
    expect(boundsToImage({ x: 300, y: 0, width: 300, height: 3 }, { origin: { x: 0, y: 0 }, scale: 1 / 3 })).toEqual({ x0: 100, y0: 0, x1: 200, y1: 1 });
  });

  it("clips to the image; nothing on it is null", () => {
    expect(clipToImage({ x0: -5, y0: 3, x1: 20, y1: 50 }, 10, 40)).toEqual({ x0: 0, y0: 3, x1: 10, y1: 40 });
    expect(clipToImage({ x0: 10, y0: 0, x1: 20, y1: 5 }, 10, 40)).toBeNull();
    expect(clipToImage({ x0: -9, y0: -9, x1: 0, y1: 3 }, 10, 40)).toBeNull();
  });
});

describe("markedElements: what is numbered", () => {
  const shot = { width: 400, height: 300, origin: { x: 100, y: 100 }, scale: 1 };
  // pos: 0 window, 1 OK (interactive, shown), 2 label text (element, not interactive), 3 entry (interactive,
  // not in compact), 4 off-image button, 5 button without bounds, 6 far button (past the horizon).
  const nodes: StoredNode[] = [
    { d: 0, t: "window", e: 0, k: 0 },
    { d: 1, t: 'button "OK"', e: 1, k: 1, a: 1 },
    { d: 1, t: 'label "Name"', e: 2, k: 1 },
    { d: 1, t: "text_field", e: 3, a: 1 },
    { d: 1, t: 'button "Off"', e: 4, k: 1, a: 1 },
    { d: 1, t: 'button "NoBounds"', e: 5, k: 1, a: 1 },
    { d: 1, t: 'button "Later"', e: 6, k: 1, a: 1 },
  ];
  const elements = [
    el(0, { x: 100, y: 100, width: 400, height: 300 }, { role: "window", actions: [] }),
    el(1, { x: 110, y: 110, width: 50, height: 20 }),
    el(2, { x: 110, y: 140, width: 50, height: 20 }, { role: "label", actions: [] }),
    el(3, { x: 110, y: 170, width: 100, height: 20 }),
    el(4, { x: 600, y: 110, width: 50, height: 20 }),
    el(5, null),
    el(6, { x: 490, y: 390, width: 50, height: 20 }),
  ];
  const s = { nodes, elements };

  it("full page: the interactive elements with bounds on the image, in tree order; partly visible ones count", () => {
    const m = markedElements(s, { offset: 0, lastPosition: 6, format: "full" }, shot);
    expect(m.map((x) => x.index)).toEqual([1, 3, 6]);
    expect(m[0]!.box).toEqual({ x0: 10, y0: 10, x1: 60, y1: 30 });
    // 6 reaches past the image's corner: its box is unclipped (drawing clips it).
    expect(m[2]!.box).toEqual({ x0: 390, y0: 290, x1: 440, y1: 310 });
  });

  it("compact: only nodes the compact view shows", () => {
    expect(markedElements(s, { offset: 0, lastPosition: 6, format: "compact" }, shot).map((x) => x.index)).toEqual([1, 6]);
  });

  it("a page cut short by its budget: nothing beyond lastPosition (the horizon), nothing before offset", () => {
    expect(markedElements(s, { offset: 0, lastPosition: 4, format: "full" }, shot).map((x) => x.index)).toEqual([1, 3]);
    expect(markedElements(s, { offset: 2, lastPosition: 6, format: "full" }, shot).map((x) => x.index)).toEqual([3, 6]);
  });

  it("OCR elements count (point-actionable), in the tree or beside it", () => {
    const ocrNode: StoredNode = { d: 1, t: 'text "File"', e: 7, k: 1 };
    const withOcr = {
      nodes: [...nodes, ocrNode],
      elements: [...elements, el(7, { x: 300, y: 300, width: 30, height: 12 }, { source: "ocr", role: "label", actions: [] }), el(8, { x: 350, y: 300, width: 30, height: 12 }, { source: "ocr", role: "label", actions: [] })],
    };
    expect(markedElements(withOcr, { offset: 0, lastPosition: 7, format: "compact" }, shot).map((x) => x.index)).toEqual([1, 6, 7, 8]);
  });

  it("an image of part of the window (a region, scaled): mapped through its own origin and scale", () => {
    const region = { width: 100, height: 50, origin: { x: 150, y: 160 }, scale: 0.5 };
    // Only element 3 (110..210 x 170..190) reaches into 150..350 x 160..260.
    const m = markedElements(s, { offset: 0, lastPosition: 6, format: "full" }, region);
    expect(m).toEqual([{ index: 3, box: { x0: -20, y0: 5, x1: 30, y1: 15 } }]);
  });
});

describe("layoutMarks and drawMarks", () => {
  it("boxes are bands inside the bounds in the mark's colour; only box and label pixels change", () => {
    const img = blank(700, 300);
    const before = Buffer.from(img.data);
    const marks: Mark[] = [
      { index: 12, box: { x0: 50, y0: 60, x1: 150, y1: 100 } },
      { index: 3, box: { x0: 200, y0: 60, x1: 260, y1: 90 } },
    ];
    const placed = drawMarks(img, marks);
    expect(placed).toHaveLength(2);
    const s = markScale(700, 300);
    expect(s).toBe(2);
    expect(markScale(639, 300)).toBe(1);
    const inside = (r: { x0: number; y0: number; x1: number; y1: number }, x: number, y: number) => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
    for (let y = 0; y < 300; y++) {
      for (let x = 0; x < 700; x++) {
        const o = (y * 700 + x) * 3;
        const changed = img.data[o] !== before[o] || img.data[o + 1] !== before[o + 1] || img.data[o + 2] !== before[o + 2];
        const covered = placed.some((p) => p.edges.some((e) => inside(e, x, y)) || inside(p.label, x, y));
        if (changed) expect(covered, `pixel (${x}, ${y}) changed outside every box and label`).toBe(true);
      }
    }
    // The box of 12: its four bands, 2 pixels thick, inside the bounds; the pixel just outside is untouched.
    const c12 = markColour(12);
    for (const [x, y] of [
      [50, 60],
      [51, 61],
      [149, 99],
      [100, 99],
      [148, 80],
      [50, 80],
    ] as const) {
      expect(rgbAt(img, x, y), `(${x}, ${y})`).toEqual([...c12]);
    }
    expect(rgbAt(img, 49, 80)).toEqual([200, 200, 200]);
    expect(rgbAt(img, 150, 80)).toEqual([200, 200, 200]);
    expect(rgbAt(img, 100, 100)).toEqual([200, 200, 200]);
    expect(rgbAt(img, 52, 80)).toEqual([200, 200, 200]); // inside: only the band
    // Labels sit above the box's top-left corner and read back as the index.
    expect(placed[0]!.label.y1).toBe(60);
    expect(placed[0]!.label.x0).toBe(50);
    expect(readLabel(img, placed[0]!.label, inkOn(c12), s)).toBe("12");
    expect(readLabel(img, placed[1]!.label, inkOn(markColour(3)), s)).toBe("3");
  });

  it("clipping at the image's edges: sides off the image are not drawn, labels stay inside", () => {
    const img = blank(300, 200);
    const marks: Mark[] = [
      { index: 4, box: { x0: -30, y0: -10, x1: 40, y1: 30 } }, // top-left corner off
      { index: 905, box: { x0: 280, y0: 150, x1: 340, y1: 260 } }, // bottom-right off
    ];
    const placed = drawMarks(img, marks);
    const [a, b] = placed as [(typeof placed)[0], (typeof placed)[0]];
    // Under 640 pixels wide: lines 1 pixel thick, digits at scale 1.
    expect(markScale(300, 200)).toBe(1);
    // a: only its bottom and right sides show, from the image's edge.
    expect(a.edges).toEqual([
      { x0: 0, y0: 29, x1: 40, y1: 30 },
      { x0: 39, y0: 0, x1: 40, y1: 30 },
    ]);
    // b: only its top and left sides.
    expect(b.edges).toEqual([
      { x0: 280, y0: 150, x1: 300, y1: 151 },
      { x0: 280, y0: 150, x1: 281, y1: 200 },
    ]);
    for (const p of placed) {
      expect(p.label.x0).toBeGreaterThanOrEqual(0);
      expect(p.label.y0).toBeGreaterThanOrEqual(0);
      expect(p.label.x1).toBeLessThanOrEqual(300);
      expect(p.label.y1).toBeLessThanOrEqual(200);
    }
    expect(readLabel(img, a.label, inkOn(markColour(4)), 1)).toBe("4");
    expect(readLabel(img, b.label, inkOn(markColour(905)), 1)).toBe("905");
  });

  it("labels of neighbours do not cover each other when there is room; a small image gets scale 1", () => {
    const marks: Mark[] = [...Array(6).keys()].map((i) => ({ index: 100 + i, box: { x0: 10, y0: 20 + i * 12, x1: 150, y1: 30 + i * 12 } }));
    const placed = layoutMarks(marks, 390, 150);
    expect(markScale(390, 150)).toBe(1);
    for (let i = 0; i < placed.length; i++) {
      for (let j = i + 1; j < placed.length; j++) {
        const [p, q] = [placed[i]!.label, placed[j]!.label];
        expect(p.x0 < q.x1 && q.x0 < p.x1 && p.y0 < q.y1 && q.y0 < p.y1, `labels ${i} and ${j} overlap`).toBe(false);
      }
    }
  });

  it(`at most ${MAX_MARKS} marks, the first in order`, () => {
    const marks: Mark[] = [...Array(MAX_MARKS + 20).keys()].map((i) => ({ index: i, box: { x0: (i * 7) % 900, y0: (i * 13) % 700, x1: ((i * 7) % 900) + 20, y1: ((i * 13) % 700) + 10 } }));
    const placed = layoutMarks(marks, 1000, 800);
    expect(placed).toHaveLength(MAX_MARKS);
    expect(placed.at(-1)!.index).toBe(MAX_MARKS - 1);
  });

  it("colours: a palette of distinct hues, neighbours differ, digits contrast with their fill", () => {
    expect(new Set(MARK_PALETTE.map((c) => c.join())).size).toBe(MARK_PALETTE.length);
    for (let i = 0; i < 20; i++) expect(markColour(i)).not.toEqual(markColour(i + 1));
    for (const c of MARK_PALETTE) {
      const ink = inkOn(c);
      const lum = (p: readonly number[]) => 0.2126 * p[0]! + 0.7152 * p[1]! + 0.0722 * p[2]!;
      expect(Math.abs(lum(ink) - lum(c))).toBeGreaterThan(90);
    }
  });

  it("RGBA images: drawn pixels become opaque", () => {
    const img = blank(100, 60, 4, 0);
    drawMarks(img, [{ index: 1, box: { x0: 20, y0: 20, x1: 60, y1: 50 } }]);
    const o = (20 * 100 + 20) * 4;
    expect([...img.data.subarray(o, o + 4)]).toEqual([...markColour(1), 255]);
  });
});

describe("writeMarksImage / marksFor", () => {
  const shotOf = (path: string, extra: Partial<ScreenshotInfo> = {}): ScreenshotInfo => ({
    path,
    width: 320,
    height: 240,
    scale: 0.5,
    origin: { x: 40, y: 30 },
    method: "test",
    redacted: 1,
    format: "png",
    screenRect: { x: 40, y: 30, width: 640, height: 480 },
    ...extra,
  });

  it("past the cap: count is the cap, omitted says how many were left unnumbered", async () => {
    const store = new SnapshotStore(tmp());
    const path = store.screenshotPath("cs_capped000000000");
    writeFileSync(path, await encodePng(blank(320, 240)));
    const marks: Mark[] = [...Array(MAX_MARKS + 7).keys()].map((i) => ({ index: i, box: { x0: i % 300, y0: i % 200, x1: (i % 300) + 10, y1: (i % 200) + 10 } }));
    const info = await writeMarksImage(store, "cs_capped000000000", shotOf(path), marks);
    expect(info.count).toBe(MAX_MARKS);
    expect(info.omitted).toBe(7);
    const few = await writeMarksImage(store, "cs_capped000000000", shotOf(path), marks.slice(0, 3));
    expect(few.omitted).toBeUndefined();
  });

  it("writes <name>-marks.png (0600) in the screenshots dir: same size and map, the count, marks drawn", async () => {
    const store = new SnapshotStore(tmp());
    const path = store.screenshotPath("cs_test0000000000");
    writeFileSync(path, await encodePng(blank(320, 240)));
    const shot = shotOf(path);
    const s = {
      snapshotId: "cs_test0000000000",
      nodes: [
        { d: 0, t: "window", e: 0, k: 0 },
        { d: 1, t: "button", e: 1, k: 1, a: 1 as const },
        { d: 1, t: "button", e: 2, k: 1, a: 1 as const },
      ],
      elements: [el(0, { x: 40, y: 30, width: 640, height: 480 }), el(1, { x: 100, y: 100, width: 80, height: 40 }), el(2, { x: 2000, y: 2000, width: 10, height: 10 })],
    };
    const out = await marksFor(store, s, { offset: 0, lastPosition: 2, format: "compact" }, shot);
    if (!("marks" in out)) throw new Error(JSON.stringify(out));
    expect(out.marks).toMatchObject({ width: 320, height: 240, scale: 0.5, origin: { x: 40, y: 30 }, screenRect: shot.screenRect, format: "png", redacted: 1, count: 1 });
    expect(out.marks.path).toBe(join(store.screenshotsDir, "cs_test0000000000-marks.png"));
    expect(statSync(out.marks.path).mode & 0o777).toBe(0o600);
    const img = await decodePng(readFileSync(out.marks.path));
    // Element 1 at screen (100, 100): image ((100 - 40) / 2, (100 - 30) / 2) = (30, 35).
    expect(rgbAt(img, 30, 35)).toEqual([...markColour(1)]);
    expect(rgbAt(img, 30 + 39, 35 + 19)).toEqual([...markColour(1)]);
    expect(rgbAt(img, 29, 45)).toEqual([200, 200, 200]);
    // The plain screenshot is left as it was.
    expect(rgbAt(await decodePng(readFileSync(path)), 30, 35)).toEqual([200, 200, 200]);
  });

  it("no screenshot, a non-PNG image, a size the helper did not report, garbage: marksError, never a drawing", async () => {
    const store = new SnapshotStore(tmp());
    const s = { snapshotId: "cs_test0000000001", nodes: [], elements: [] };
    const page = { offset: 0, lastPosition: -1, format: "compact" as const };
    expect(await marksFor(store, s, page, null, { code: "TIMEOUT", message: "slow" })).toEqual({ marksError: { code: "SCREENSHOT_FAILED", message: "no window image to draw the marks on (TIMEOUT: slow)" } });
    const jpeg = await marksFor(store, s, page, shotOf("/nonexistent.jpg", { format: "jpeg" }));
    expect(jpeg).toMatchObject({ marksError: { code: "ACTION_UNSUPPORTED" } });
    const p = join(store.screenshotsDir, "cs_test0000000001.png");
    writeFileSync(p, await encodePng(blank(10, 10)));
    expect(await marksFor(store, s, page, shotOf(p))).toMatchObject({ marksError: { code: "SCREENSHOT_FAILED", message: expect.stringContaining("10x10, not the 320x240") } });
    writeFileSync(p, "not a png");
    expect(await marksFor(store, s, page, shotOf(p))).toMatchObject({ marksError: { code: "SCREENSHOT_FAILED", message: expect.stringContaining("not a readable PNG") } });
    await expect(writeMarksImage(store, "x", shotOf("/nonexistent/cs.png"), [])).rejects.toThrow(/cannot be read/);
  });
});
