// Set-of-marks (issue 14) on a real desktop: get-app-state --marks and
// screenshot --marks against the GTK3 fixture, gtk3-widget-factory, the Qt5
// fixture and Chromium on the web form, and the OpenAI adapter with --marks.
// Each image is checked against its plain screenshot pixel by pixel: only
// box edges and labels differ, each box's edge carries its colour, and each
// label reads back (digit matching on the pixels) as its element's index;
// the count is recomputed from the stored snapshot. A number read off the
// image is then clicked, and the fixture logs the click. Rows:
// test/live/matrix/rows.ts ("marks.").
// Registered on a desk (desk.ts): the X11 run (test/live/marks.test.ts) and
// the Wayland run (test/live/matrix-wayland.test.ts) share them.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { QT5_FIXTURE, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { AdapterServe, newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { QUIET_MS, since } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { browserArgv } from "../app-profiles.ts";
import { waitAccessible } from "./toolkit.ts";
import { nativeBrowserArgv, rowTest, startFailed, type MatrixDesk } from "./desk.ts";
import { decodePng } from "../../../src/engine/png.ts";
import { boundsToImage, inkOn, layoutMarks, markedElements, markScale, MAX_MARKS, type PlacedMark } from "../../../src/engine/marks.ts";
import { readLabel, rgbAt, type Pixels } from "../../fixtures/images/read-label.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const inside = (r: { x0: number; y0: number; x1: number; y1: number }, x: number, y: number) => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;

/** The stored snapshot a marks image was drawn for (its nodes carry the interactive `a` and compact `k` flags). */
function storedSnapshot(shotPath: string, snapshotId: string): any {
  return JSON.parse(readFileSync(join(dirname(dirname(shotPath)), "snapshots", `${snapshotId}.json`), "utf8"));
}

/**
 * What should be numbered, recomputed here from the stored snapshot: the
 * interactive nodes of the compact page up to its last position, whose
 * element's screen bounds overlap the screen rectangle the image shows.
 */
function expectedIndices(stored: any, lastPosition: number): number[] {
  const r = stored.screenshot.screenRect;
  const byIndex = new Map<number, any>(stored.elements.map((e: any) => [e.index, e]));
  const out: number[] = [];
  stored.nodes.forEach((n: any, pos: number) => {
    if (n.e === undefined || n.a !== 1 || n.k === undefined || pos > lastPosition) return;
    const b = byIndex.get(n.e)?.bounds;
    if (!b || b.width <= 0 || b.height <= 0) return;
    if (b.x < r.x + r.width && r.x < b.x + b.width && b.y < r.y + r.height && r.y < b.y + b.height) out.push(n.e);
  });
  return out;
}

interface MarksCheck {
  placed: PlacedMark[];
  marked: Pixels;
  stored: any;
  readable: number;
}

/**
 * The oracles of one marks image (rows.ts MARKS_IMAGE): same size as its
 * screenshot; count = the interactive elements shown with bounds on the
 * image; only box edges and labels differ from the screenshot; each box's
 * uncovered edge pixels carry its colour; each label that no later label
 * covers reads back as its index.
 */
async function checkMarksImage(row: string, marksPng: Buffer, count: number, snapshotId: string, shotPath: string): Promise<MarksCheck> {
  const stored = storedSnapshot(shotPath, snapshotId);
  const shot = stored.screenshot;
  const plain = await decodePng(readFileSync(shot.path));
  const marked = await decodePng(marksPng);
  expect([marked.width, marked.height], "the marks image is the screenshot's size").toEqual([plain.width, plain.height]);
  expect([marked.width, marked.height]).toEqual([shot.width, shot.height]);
  const lastPosition = stored.horizon ?? stored.nodes.length - 1;
  const want = expectedIndices(stored, lastPosition).slice(0, MAX_MARKS);
  const placed = layoutMarks(markedElements(stored, { offset: 0, lastPosition, format: "compact" }, shot), shot.width, shot.height);
  expect(placed.map((p) => p.index), "the numbered elements").toEqual(want);
  expect(count, "count").toBe(want.length);

  /** Whether a box edge (but `except`'s own) or any label (its own too: it may sit inside its box) covers the pixel. */
  const covered = (x: number, y: number, except?: PlacedMark) => placed.some((p) => (p !== except && p.edges.some((e) => inside(e, x, y))) || inside(p.label, x, y));
  let changed = 0;
  for (let y = 0; y < plain.height; y++) {
    for (let x = 0; x < plain.width; x++) {
      const [a, b] = [rgbAt(plain, x, y), rgbAt(marked, x, y)];
      if (a[0] === b[0] && a[1] === b[1] && a[2] === b[2]) continue;
      changed++;
      if (!covered(x, y)) throw new Error(`${row}: pixel (${x}, ${y}) differs from the screenshot outside every box and label`);
    }
  }
  if (placed.length) expect(changed, "pixels painted").toBeGreaterThan(0);
  let readable = 0;
  placed.forEach((p, i) => {
    let own = 0;
    for (const e of p.edges) {
      for (let y = e.y0; y < e.y1; y++) {
        for (let x = e.x0; x < e.x1; x++) {
          if (covered(x, y, p)) continue;
          const c = rgbAt(marked, x, y);
          if (c[0] !== p.colour[0] || c[1] !== p.colour[1] || c[2] !== p.colour[2]) throw new Error(`${row}: box ${p.index} at (${x}, ${y}) is ${c}, not its colour ${p.colour}`);
          own++;
        }
      }
    }
    // A label covered by a later one (a crowded spot) cannot be read; every other one must read as its index.
    if (placed.slice(i + 1).some((q) => q.label.x0 < p.label.x1 && p.label.x0 < q.label.x1 && q.label.y0 < p.label.y1 && p.label.y0 < q.label.y1)) return;
    expect(readLabel(marked, p.label, inkOn(p.colour), markScale(marked.width, marked.height)), `${row}: the label of ${p.index}`).toBe(String(p.index));
    readable++;
    void own;
  });
  // Some box shows its colour somewhere (a fully covered one is possible in a crowded spot, not all of them).
  if (placed.length) expect(placed.some((p) => p.edges.some((e) => { const c = rgbAt(marked, e.x0, e.y0); return c[0] === p.colour[0] && c[1] === p.colour[1] && c[2] === p.colour[2]; }))).toBe(true);
  metric(row, "marks", placed.length);
  metric(row, "labels_readable", readable);
  metric(row, "image", `${marked.width}x${marked.height}`);
  if (placed.length) expect(readable, "readable labels").toBeGreaterThan(0);
  return { placed, marked, stored, readable };
}

/** The number shown on the box of the element with these screen bounds, read off the image. */
function numberOn(check: MarksCheck, bounds: { x: number; y: number; width: number; height: number }): string {
  const box = boundsToImage(bounds, check.stored.screenshot);
  const p = check.placed.find((q) => q.box.x0 === box.x0 && q.box.y0 === box.y0 && q.box.x1 === box.x1 && q.box.y1 === box.y1);
  if (!p) throw new Error(`no box on ${JSON.stringify(bounds)}`);
  const read = readLabel(check.marked, p.label, inkOn(p.colour), markScale(check.marked.width, check.marked.height));
  if (read === null) throw new Error(`the label on ${JSON.stringify(bounds)} cannot be read`);
  return read;
}

/** An element of the stored snapshot by role and title. */
function storedEl(stored: any, role: RegExp, title: string): any {
  const e = stored.elements.find((x: any) => role.test(x.role) && x.title === title);
  if (!e) throw new Error(`no ${role} "${title}" among ${stored.elements.length} elements`);
  return e;
}

/** Registers the set-of-marks rows inside the caller's describe; `file` names the test file in the results. */
export function marksRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  let bg: Serve;
  let stateDir: string;
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    stateDir = newStateDir();
    bg = new Serve(desk().desktop, { stateDir });
  }, 90_000);
  afterAll(async () => {
    await bg?.close();
  });

  const startFailure = new Map<string, Error>();
  const rowIt = rowTest(on, desk, file, 90_000, (id) => startFailed(startFailure, id.split(".")[1]!));

  /** get-app-state --marks, timed, and the same observation without marks for the overhead. */
  async function observeMarked(row: string, args: Record<string, unknown>): Promise<{ st: any; check: MarksCheck }> {
    // Without marks first: the marked observation is then the app's latest snapshot (a click may use it).
    const t1 = performance.now();
    await bg.ok("get-app-state", { ...args, format: "compact" });
    const plainMs = Math.round(performance.now() - t1);
    const t0 = performance.now();
    const st = await bg.ok("get-app-state", { ...args, marks: true, format: "compact" });
    const ms = Math.round(performance.now() - t0);
    metric(row, "marks_ms", ms);
    metric(row, "plain_ms", plainMs);
    expect(st.marksError, JSON.stringify(st.marksError)).toBeUndefined();
    expect(st.marks.path).toBe(st.screenshot.path.replace(/\.png$/, "-marks.png"));
    const { path: _p, method: _m, count: _c, ...map } = st.marks;
    const { path: _q, method: _n, ...shotMap } = st.screenshot;
    expect(map, "the marks image has the screenshot's map").toEqual(shotMap);
    const check = await checkMarksImage(row, readFileSync(st.marks.path), st.marks.count, st.snapshot.snapshotId, st.screenshot.path);
    console.log(`[marks] ${row}: ${st.marks.count} boxes on ${st.marks.width}x${st.marks.height}, ${ms} ms with marks vs ${plainMs} ms without, ${check.readable} labels read back`);
    return { st, check };
  }

  // ---------------------------------------------------------------- GTK3 fixture
  describe("GTK3 fixture", () => {
    let f: Fixture;
    let win: number;
    const app = () => `pid:${f.pid}`;
    beforeAll(async () => {
      f = await desk().launchFixture();
      win = await desk().windowId(f, "deckhand fixture");
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });
    const clicks = (mark: number) => since(f, mark).filter((e) => e.event === "clicked" || e.event === "toggled");

    rowIt("marks.fixture.get-app-state", async () => {
      const { st } = await observeMarked("marks.fixture.get-app-state", { app: app(), windowId: win });
      expect(st.marks.count).toBeGreaterThan(10);
    });

    rowIt("marks.fixture.click-by-number", async () => {
      const { st, check } = await observeMarked("marks.fixture.click-by-number", { app: app(), windowId: win });
      const ok = storedEl(check.stored, /button/, "OK");
      const n = numberOn(check, ok.bounds);
      expect(Number(n), "the number on OK's box is OK's element index").toBe(ok.index);
      const mark = f.events().length;
      const r = await bg.request("click", { app: app(), elementIndex: Number(n), snapshotId: st.snapshot.snapshotId });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await f.waitFor((e) => e.event === "clicked", 5000, mark);
      await sleep(QUIET_MS);
      expect(clicks(mark)).toEqual([expect.objectContaining({ event: "clicked", control: "OK" })]);
    });

    rowIt("marks.fixture.screenshot", async () => {
      const t0 = performance.now();
      const r = await bg.ok("screenshot", { app: app(), windowId: win, marks: true });
      metric("marks.fixture.screenshot", "screenshot_marks_ms", Math.round(performance.now() - t0));
      expect(r.snapshotId).toMatch(/^cs_/);
      const { count: _c, path: _p, method: _m, ...map } = r.marks;
      const { path: _q, method: _n, ...shotMap } = r.screenshot;
      expect(map).toEqual(shotMap);
      const check = await checkMarksImage("marks.fixture.screenshot", readFileSync(r.marks.path), r.marks.count, r.snapshotId, r.screenshot.path);
      const sub = storedEl(check.stored, /checkbox/, "Subscribe");
      const n = numberOn(check, sub.bounds);
      expect(Number(n)).toBe(sub.index);
      const mark = f.events().length;
      const c = await bg.request("click", { app: app(), elementIndex: Number(n), snapshotId: r.snapshotId });
      expect(c.ok, JSON.stringify(c.error)).toBe(true);
      await f.waitFor((e) => e.event === "toggled", 5000, mark);
      await sleep(QUIET_MS);
      expect(clicks(mark)).toEqual([expect.objectContaining({ event: "toggled", control: "Subscribe" })]);
    });

    rowIt("marks.fixture.page-horizon", async () => {
      const all = await bg.ok("get-app-state", { app: app(), windowId: win, marks: true, format: "compact" });
      const st = await bg.ok("get-app-state", { app: app(), windowId: win, marks: true, format: "compact", maxBytes: 2000 });
      expect(st.snapshot.nextOffset, "the 2000-byte page is cut").toBeGreaterThan(0);
      const check = await checkMarksImage("marks.fixture.page-horizon", readFileSync(st.marks.path), st.marks.count, st.snapshot.snapshotId, st.screenshot.path);
      expect(check.stored.horizon).toBe(st.snapshot.nextOffset - 1);
      expect(st.marks.count).toBeLessThan(all.marks.count);
      // Every element numbered is at or before the horizon; the ones after it, numbered on the whole page, are not.
      const pos = new Map<number, number>(check.stored.nodes.map((n: any, i: number) => [n.e, i]));
      for (const p of check.placed) expect(pos.get(p.index)!).toBeLessThanOrEqual(check.stored.horizon);
      metric("marks.fixture.page-horizon", "whole_page_marks", all.marks.count);
      console.log(`[marks] page cut at ${st.snapshot.nextOffset}: ${st.marks.count} of ${all.marks.count} boxes`);
    });

    rowIt("marks.fixture.adapter-scaled", async () => {
      // The adapters target the app's front window: bring the main one forward.
      await desk().raise(win);
      const s = new AdapterServe(desk().desktop, stateDir, ["--adapter", "openai", "--app", app(), "--marks", "--max-width", "400"]);
      try {
        const t0 = performance.now();
        const shot = await s.send({ call: { type: "computer_call", call_id: "call_marks", action: { type: "screenshot" }, pending_safety_checks: [] } });
        metric("marks.fixture.adapter-scaled", "adapter_screenshot_ms", Math.round(performance.now() - t0));
        const url: string = shot.output.output.image_url;
        const png = Buffer.from(url.slice("data:image/png;base64,".length), "base64");
        expect(shot.image.width).toBe(400);
        expect(shot.image.marks).toEqual({ count: expect.any(Number), snapshotId: expect.stringMatching(/^cs_/) });
        const stored = storedSnapshot(join(stateDir, "screenshots", "x.png"), shot.image.marks.snapshotId);
        // The map handed back is the screenshot's: its origin and scale.
        expect(shot.image.map).toMatchObject({ width: 400, height: stored.screenshot.height, origin: stored.screenshot.origin, windowId: win });
        expect(shot.image.map.scaleX).toBeCloseTo(stored.screenshot.scale, 12);
        expect(stored.screenshot.scale).toBeLessThan(1);
        const check = await checkMarksImage("marks.fixture.adapter-scaled", png, shot.image.marks.count, shot.image.marks.snapshotId, stored.screenshot.path);
        expect(check.placed.length).toBeGreaterThan(10);
      } finally {
        s.close();
      }
    });
  });

  // ---------------------------------------------------------------- gtk3-widget-factory
  describe("gtk3-widget-factory", () => {
    let wf: TreeApp;
    beforeAll(async () => {
      try {
        wf = await desk().launchAppTree(["/usr/bin/gtk3-widget-factory"], { timeoutMs: 60_000 });
        await waitAccessible(bg, wf.pid);
      } catch (err) {
        startFailure.set("widget-factory", err as Error);
      }
    }, 90_000);
    afterAll(async () => {
      await wf?.stop();
    });
    rowIt("marks.widget-factory.get-app-state", async () => {
      const { st } = await observeMarked("marks.widget-factory.get-app-state", { app: `pid:${wf.pid}`, windowId: wf.windows[0] });
      expect(st.marks.count, "widget-factory's first page has many controls").toBeGreaterThan(20);
    });
  });

  // ---------------------------------------------------------------- Qt5 fixture
  describe("Qt5 fixture", () => {
    let q: Fixture;
    beforeAll(async () => {
      try {
        q = await desk().launchFixture({ env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 30_000 }, QT5_FIXTURE);
        await waitAccessible(bg, q.pid);
      } catch (err) {
        startFailure.set("qt5-fixture", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await q?.stop();
    });
    rowIt("marks.qt5-fixture.click-by-number", async () => {
      const win = await desk().windowId(q, (q.events().find((e) => e.event === "ready") as any).windows[0].title);
      // Qt's bridge may list the window's children a moment after it registers.
      const { st, check } = await waitUntil("the Qt5 fixture's OK button in its tree", 20_000, async () => {
        const o = await observeMarked("marks.qt5-fixture.click-by-number", { app: `pid:${q.pid}`, windowId: win });
        return o.check.stored.elements.some((e: any) => /button/.test(e.role) && e.title === "OK" && e.bounds) ? o : undefined;
      });
      const ok = storedEl(check.stored, /button/, "OK");
      const n = numberOn(check, ok.bounds);
      expect(Number(n)).toBe(ok.index);
      const mark = q.events().length;
      const r = await bg.request("click", { app: `pid:${q.pid}`, elementIndex: Number(n), snapshotId: st.snapshot.snapshotId });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await q.waitFor((e) => e.event === "clicked", 5000, mark);
      await sleep(QUIET_MS);
      expect(since(q, mark).filter((e) => e.event === "clicked")).toEqual([expect.objectContaining({ control: "OK" })]);
    });
  });

  // ---------------------------------------------------------------- Chromium
  describe("Chromium on the web form", () => {
    let web: WebFixture;
    let browser: TreeApp;
    beforeAll(async () => {
      web = await startWebFixture();
      try {
        const profile = desk().handOver(mkdtempSync(join(tmpdir(), "deckhand-chromium-marks-")));
        browser = await desk().launchAppTree(nativeBrowserArgv(desk(), "chromium", browserArgv("chromium", web.url, profile)), { env: desk().browser("chromium").env, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(bg, browser.pid);
      } catch (err) {
        startFailure.set("chromium", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await browser?.stop();
      await web?.close();
    });
    rowIt("marks.chromium.get-app-state", async () => {
      // The page's tree arrives after the load: observe until the Name field is there, laid out.
      const o = await waitUntil("the form's Name field in Chromium's tree", 30_000, async () => {
        const st = await bg.ok("get-app-state", { app: `pid:${browser.pid}`, windowId: browser.windows[0], format: "full" });
        return st.snapshot.elements.some((e: any) => /^text_field$/.test(e.role) && e.title === "Name" && e.bounds) ? st : undefined;
      });
      void o;
      const { check } = await observeMarked("marks.chromium.get-app-state", { app: `pid:${browser.pid}`, windowId: browser.windows[0] });
      const name = storedEl(check.stored, /^text_field$/, "Name");
      expect(check.placed.map((p) => p.index)).toContain(name.index);
      expect(Number(numberOn(check, name.bounds))).toBe(name.index);
    }, 120_000);
  });
}
