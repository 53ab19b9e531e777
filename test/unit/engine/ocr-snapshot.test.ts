// OCR in an observation (src/engine/ocr-snapshot.ts): when it runs (asked,
// automatic without a tree or with only the frame, off with ocr: false),
// how its lines join the snapshot (elements source "ocr", locator "ocr-box",
// indices past every tree index and position and a diff base's, nodes after
// the tree's shown in the compact view), which image it reads (a scaled or
// lossy one is read at full resolution, that file removed after), and what
// it reports (an error when asked, a warning when automatic).
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { addOcr, applyOcrOutcome, ocrIndices, ocrMode, ocrResultFields, type OcrInput } from "../../../src/engine/ocr-snapshot.ts";
import { buildTree, type Element, type ScreenshotInfo, type Snapshot } from "../../../src/session/snapshot.ts";
import { renderPage } from "../../../src/session/view.ts";
import { DEFAULT_REMEDIATION } from "../../../src/protocol/errors.ts";
import { fakeTesseract, tsvOf } from "../../fixtures/ocr/fake-tesseract.ts";
import { node, acts } from "../nodes.ts";
import { snap, tempDirs } from "../session/fixtures.ts";

const tmp = tempDirs("deckhand-ocr-snap-");

function shotAt(dir: string, extra: Partial<ScreenshotInfo> = {}): ScreenshotInfo {
  const path = join(dir, `shot-${Math.random().toString(36).slice(2)}.png`);
  writeFileSync(path, "image");
  return { path, width: 400, height: 300, scale: 1, origin: { x: 100, y: 50 }, method: "test", redacted: 0, format: "png", screenRect: { x: 100, y: 50, width: 400, height: 300 }, ...extra };
}

function treeSnapshot(): Snapshot {
  const built = buildTree(
    [
      node([], "window", "Main", { child_count: 2 }),
      node([0], "button", "OK", { actions: acts("click") }),
      node([1], "container", "", { child_count: 1 }),
      node([1, 0], "secure_text_field", "Password", { secure: true, bounds: { x: 300, y: 200, width: 100, height: 20 } }),
    ],
    "atspi-path",
  );
  return { ...snap(), elements: built.elements, nodes: built.nodes, elementCount: built.elements.length };
}

const WORDS = tsvOf([
  [1, 1, 1, 10, 20, 60, 12, 96, "Quarterly"],
  [1, 1, 1, 74, 20, 50, 12, 95, "Report"],
  [2, 1, 1, 10, 60, 50, 14, 96, "Submit"],
  [3, 1, 1, 210, 152, 60, 14, 95, "hidden"], // over the password field (screen 310,202)
]);

function input(dir: string, over: Partial<OcrInput> = {}): OcrInput {
  const fake = fakeTesseract(join(dir, "fake"), { tsv: WORDS });
  return {
    snapshot: snap(),
    screenshot: shotAt(dir),
    asked: undefined,
    treeless: true,
    secure: [],
    base: null,
    env: { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path },
    fullResolution: async () => null,
    ...over,
  };
}

describe("when OCR runs", () => {
  const el = (path: number[]): Element => ({ locator: { path } }) as Element;
  it("asked; automatic without a tree or with nothing below the window; never with ocr: false", () => {
    expect(ocrMode(true, false, [el([]), el([0])])).toBe("asked");
    expect(ocrMode(undefined, true, [])).toBe("automatic");
    expect(ocrMode(undefined, false, [])).toBe("automatic");
    expect(ocrMode(undefined, false, [el([])])).toBe("automatic");
    expect(ocrMode(undefined, false, [el([]), el([0, 1])])).toBeNull();
    expect(ocrMode(false, true, [])).toBeNull();
  });
});

describe("indices", () => {
  it("start past every node position and element index of the snapshot", () => {
    const s = treeSnapshot(); // 4 nodes, elements 0, 1, 3
    expect(ocrIndices(["a", "b"], s)).toEqual([4, 5]);
    const sparse = { nodes: s.nodes, elements: [...s.elements, { ...s.elements[0]!, index: 9 }] };
    expect(ocrIndices(["a"], sparse)).toEqual([10]);
    expect(ocrIndices(["a"], { nodes: [], elements: [] })).toEqual([0]);
  });

  it("in a diff: past the base's indices too; a text the base read keeps its index", () => {
    const s = treeSnapshot();
    const base = treeSnapshot();
    const ocrEl = (index: number, title: string) => ({ ...base.elements[0]!, index, title, source: "ocr" as const, locator: { ...base.elements[0]!.locator, kind: "ocr-box" as const, path: [] } });
    base.elements.push(ocrEl(4, "Report"), ocrEl(5, "Submit"), ocrEl(6, "Report"));
    expect(ocrIndices(["Submit", "New", "Report", "Report", "Report"], s, base)).toEqual([5, 7, 4, 6, 8]);
    // An index the new tree took is never given twice.
    const taken = { ...s, elements: [...s.elements, { ...s.elements[0]!, index: 5 }] };
    expect(ocrIndices(["Submit"], taken, base)).toEqual([7]);
  });
});

describe("addOcr", () => {
  it("an app without a tree: a window line, then one label element per line, bounds on the screen, in the compact view", async () => {
    const dir = tmp();
    const i = input(dir);
    const out = await addOcr(i);
    expect(out?.ocr).toMatchObject({ engine: "tesseract 9.9.9", automatic: true, lines: 3 });
    const s = i.snapshot;
    expect(s.elementCount).toBe(3);
    expect(s.elements[0]).toEqual({
      index: 1,
      role: "label",
      nativeRole: "",
      title: "Quarterly Report",
      value: null,
      label: "",
      enabled: true,
      focused: false,
      secure: false,
      bounds: { x: 110, y: 70, width: 114, height: 12 },
      actions: [],
      nativeActions: [],
      locator: { kind: "ocr-box", path: [], role: "label", nativeRole: "", identifier: "", name: "Quarterly Report" },
      source: "ocr",
    });
    expect(s.nodes[0]).toEqual({ d: 0, t: 'window "w"', k: 0 });
    const page = renderPage(s, { format: "compact", maxNodes: null, maxBytes: null, offset: 0, withBounds: false });
    expect(page.treeText).toBe(['window "w"', '  [1] label "Quarterly Report" (ocr)', '  [2] label "Submit" (ocr)', '  [3] label "hidden" (ocr)'].join("\n"));
    const withBounds = renderPage(s, { format: "compact", maxNodes: null, maxBytes: null, offset: 0, withBounds: true });
    expect(withBounds.treeText.split("\n")[1]).toBe('  [1] label "Quarterly Report" @110,70 114x12 (ocr)');
  });

  it("beside a tree (asked): nodes after the tree's, indices past it, no window line, nothing read over a secure field", async () => {
    const dir = tmp();
    const s = treeSnapshot();
    const i = input(dir, { snapshot: s, asked: true, treeless: false, secure: [{ x: 300, y: 200, width: 100, height: 20 }] });
    const out = await addOcr(i);
    expect(out?.ocr).toMatchObject({ automatic: false, lines: 2 });
    expect(s.nodes).toHaveLength(6);
    expect(s.nodes.slice(4)).toEqual([
      { d: 1, t: 'label "Quarterly Report"', e: 4, k: 1 },
      { d: 1, t: 'label "Submit"', e: 5, k: 1 },
    ]);
    expect(s.elements.map((e) => [e.index, e.title, e.source ?? "tree"])).toEqual([
      [0, "Main", "tree"],
      [1, "OK", "tree"],
      [3, "Password", "tree"],
      [4, "Quarterly Report", "ocr"],
      [5, "Submit", "ocr"],
    ]);
    expect(s.elements.some((e) => e.title === "hidden")).toBe(false);
  });

  it("a tree with controls and no ocr asked: nothing runs", async () => {
    const dir = tmp();
    const i = input(dir, { snapshot: treeSnapshot(), treeless: false });
    expect(await addOcr(i)).toBeNull();
    expect(i.snapshot.elements.some((e) => e.source === "ocr")).toBe(false);
  });

  it("a scaled-down image is read at full resolution from a second capture, removed afterwards", async () => {
    const dir = tmp();
    const fake = fakeTesseract(join(dir, "fake-full"), { tsv: WORDS });
    const full = shotAt(dir, { width: 800, height: 600, scale: 1, origin: { x: 100, y: 50 } });
    let asked = 0;
    const i = input(dir, {
      screenshot: shotAt(dir, { width: 400, height: 300, scale: 0.5 }),
      env: { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path },
      fullResolution: async () => (asked++, full),
    });
    await addOcr(i);
    expect(asked).toBe(1);
    // The engine read the full-resolution file; its boxes map at scale 1.
    expect(fake.runs()[1]![0]).toBe(full.path);
    expect(i.snapshot.elements[0]!.bounds).toEqual({ x: 110, y: 70, width: 114, height: 12 });
    expect(existsSync(full.path)).toBe(false);
    expect(existsSync(i.screenshot!.path)).toBe(true);
  });

  it("a JPEG is read at full resolution too; when no second capture comes, the image itself, mapped by its scale", async () => {
    const dir = tmp();
    const fake = fakeTesseract(join(dir, "fake-jpeg"), { tsv: WORDS });
    const jpeg = shotAt(dir, { format: "jpeg", scale: 0.5 });
    const i = input(dir, { screenshot: jpeg, env: { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path } });
    await addOcr(i);
    expect(fake.runs()[1]![0]).toBe(jpeg.path);
    expect(i.snapshot.elements[0]!.bounds).toEqual({ x: 120, y: 90, width: 228, height: 24 });
  });

  it("a second capture that fails: the observation's own image is read", async () => {
    const dir = tmp();
    const fake = fakeTesseract(join(dir, "fake-failing"), { tsv: WORDS });
    const small = shotAt(dir, { scale: 0.5 });
    const i = input(dir, {
      screenshot: small,
      env: { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path },
      fullResolution: async () => {
        throw new Error("capture failed");
      },
    });
    expect((await addOcr(i))?.ocr?.lines).toBe(3);
    expect(fake.runs()[1]![0]).toBe(small.path);
  });

  it("the engine missing: automatic gives a warning (no error), asked gives ocrError; the snapshot has no OCR elements", async () => {
    const dir = tmp();
    const env = { PATH: dir, DECKHAND_TESSERACT: join(dir, "missing-tesseract") };
    const auto = await addOcr(input(dir, { env }));
    expect(auto).toEqual({
      warning: { code: "OCR_UNAVAILABLE", message: expect.stringContaining("was not found"), remediation: DEFAULT_REMEDIATION.OCR_UNAVAILABLE },
    });
    const asked = input(dir, { env, asked: true, treeless: false, snapshot: treeSnapshot() });
    const out = await addOcr(asked);
    expect(out).toEqual({ ocrError: { code: "OCR_UNAVAILABLE", message: expect.stringContaining("was not found") } });
    expect(asked.snapshot.elements.some((e) => e.source === "ocr")).toBe(false);
  });

  it("no image: asked is an error, automatic says nothing (the screenshot's error does)", async () => {
    const dir = tmp();
    expect(await addOcr(input(dir, { screenshot: null }))).toBeNull();
    expect(await addOcr(input(dir, { screenshot: null, asked: true }))).toEqual({ ocrError: { code: "OCR_UNAVAILABLE", message: expect.stringContaining("no window image") } });
  });

  it("an engine that reads nothing: a report of 0 lines, no window line", async () => {
    const dir = tmp();
    const fake = fakeTesseract(join(dir, "fake-empty"));
    const i = input(dir, { env: { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path } });
    expect((await addOcr(i))?.ocr).toMatchObject({ lines: 0, automatic: true });
    expect(i.snapshot.nodes).toEqual([]);
  });
});

describe("the report", () => {
  it("result fields and the warning appended after the observation's own", () => {
    const o: Parameters<typeof applyOcrOutcome>[0] = { warnings: [{ code: "NO_ACCESSIBILITY_TREE", message: "m", remediation: "r" }] };
    applyOcrOutcome(o, { warning: { code: "OCR_UNAVAILABLE", message: "x", remediation: "y" } });
    expect(o.warnings!.map((w) => w.code)).toEqual(["NO_ACCESSIBILITY_TREE", "OCR_UNAVAILABLE"]);
    applyOcrOutcome(o, { ocr: { engine: "tesseract 5", automatic: false, lines: 2, ms: 3 } });
    expect(ocrResultFields(o)).toEqual({ ocr: { engine: "tesseract 5", automatic: false, lines: 2, ms: 3 } });
    applyOcrOutcome(o, null);
    expect(ocrResultFields({})).toEqual({});
  });
});
