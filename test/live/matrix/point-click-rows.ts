// Issue 15 on the GTK3 fixture: a granted coordinate click through serve is
// one point_click request (protocol 2.3): the helper checks the window at the
// point, hit-tests it, holds the click when a name there may be sensitive
// (the confirm decision then sees it), presses a press-like control through
// accessibility or clicks with synthetic input and puts the pointer back; and
// a program's final observation waits for typed keys to land. The fixture's
// log says what it received; the helper's ops come from DECKHAND_TRACE_OPS on
// serve's stderr. Registered on a desk (desk.ts): the X11 run
// (test/live/coordinate-click.test.ts, which also has widget-factory's and
// the Qt5 fixture's rows) and the Wayland run (test/live/matrix-wayland.test.ts)
// share them. Timings are recorded as metrics, never asserted.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { waitUntil, type Fixture } from "../harness.ts";
import { requireBuild, Serve } from "../deckhand.ts";
import { rowTest, type MatrixDesk } from "./desk.ts";
import { quietViolations, since } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { findEl, observeTimed } from "./toolkit.ts";

export const TRACE = { DECKHAND_TRACE_OPS: "1" };

/** The helper ops serve traced (DECKHAND_TRACE_OPS=1: "deckhand: op NAME 1.23 ms"), in order. */
export function tracedOps(s: Serve): string[] {
  return [...s.stderr.matchAll(/deckhand: op (\w+) [\d.]+ ms/g)].map((m) => m[1]!);
}

export const centre = (b: { x: number; y: number; width: number; height: number }) => ({ x: b.x + Math.floor(b.width / 2), y: b.y + Math.floor(b.height / 2) });
export const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;

/** Registers the GTK3 fixture's point-click and settle rows inside the caller's describe; `stateDir` is the caller's. */
export function pointClickFixtureRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string, stateDir: () => string): void {
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
  }, 90_000);
  const rowIt = rowTest(on, desk, file, 90_000);
  /** A GTK3 fixture of the describe's own, and its main window's id (valid in its tests). */
  const useFixture = () => {
    const h = {} as { fixture: Fixture; win: number };
    beforeAll(async () => {
      h.fixture = await desk().launchFixture();
      h.win = await desk().windowId(h.fixture, "deckhand fixture");
    }, 60_000);
    afterAll(async () => {
      await h.fixture?.stop();
    });
    return h;
  };

  describe("GTK3 fixture", () => {
    const fx = useFixture();
    const app = () => `pid:${fx.fixture.pid}`;

    rowIt("click.point.fixture.canvas", async () => {
      const fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground"], env: TRACE });
      try {
        const { st } = await observeTimed(fg, { app: app(), windowId: fx.win });
        const canvas = findEl(st, /.*/, "Canvas");
        const at = { x: canvas.bounds.x + 20, y: canvas.bounds.y + 20 };
        // The first click may move the keyboard focus into the canvas (the fixture grabs it on press).
        expect((await fg.request("click", { app: app(), x: at.x, y: at.y })).ok).toBe(true);
        await fx.fixture.waitFor((e) => e.event === "button" && e.type === "release", 5000);
        const before = await desk().scene(fx.fixture);
        const mark = fx.fixture.events().length;
        const opsBefore = tracedOps(fg).length;
        const ms: number[] = [];
        const N = 20;
        for (let i = 0; i < N; i++) {
          const t0 = performance.now();
          const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
          ms.push(performance.now() - t0);
          expect(r.ok, JSON.stringify(r.error)).toBe(true);
          expect(r.result).toMatchObject({ route: "foreground_input", delivery: "submitted", cleanup: { pointer_restored: desk().restoresPointer, buttons_released: true } });
        }
        metric("click.point.fixture.canvas", "median_ms", Math.round(median(ms) * 100) / 100);
        metric("click.point.fixture.canvas", "min_ms", Math.round(Math.min(...ms) * 100) / 100);
        // One list_windows (the program's window) and one point_click per click, nothing else.
        const ops = tracedOps(fg).slice(opsBefore);
        expect(ops).toEqual(Array.from({ length: N }, () => ["list_windows", "point_click"]).flat());
        // The canvas saw exactly N presses and N releases of button 1 at the point (and the
        // pointer's arrival there), nothing else.
        const releases = () => since(fx.fixture, mark).filter((e) => e.event === "button" && e.type === "release").length;
        await waitUntil(`${N} releases on the canvas`, 5000, () => releases() >= N);
        // (On Wayland the fixture also logs the pointer's enter, motion and leave over its window: where it goes is the scene's pointer oracle.)
        expect(await quietViolations(fx.fixture, mark, (e) => ((e.event === "button" || e.event === "motion") && e.control === "Canvas") || e.event === "pointer")).toEqual([]);
        const got = since(fx.fixture, mark);
        if (process.env.CLICK_DEBUG) console.log(JSON.stringify(got));
        expect(got.filter((e) => e.type === "press")).toHaveLength(N);
        expect(got.filter((e) => e.type === "release")).toHaveLength(N);
        // Every press and release at the same spot, every motion too (the fixture logs each kind
        // in its event window's coordinates).
        // (Clicks this fast are double and triple clicks to GTK, which adds events of those types.)
        const same = (of: typeof got) => {
          for (const e of of) expect({ button: e.button, x: e.x, y: e.y }).toEqual({ button: of[0]!.button, x: of[0]!.x, y: of[0]!.y });
        };
        same(got.filter((x) => x.event === "button" && (x.type === "press" || x.type === "release")));
        same(got.filter((x) => x.event === "motion"));
        expect(got.find((x) => x.event === "button")!.button).toBe(1);
        expect(desk().sceneViolations(before, await desk().scene(fx.fixture))).toEqual([]);
      } finally {
        await fg.close();
      }
    });

    rowIt("click.point.fixture.sensitive.refused", async () => {
      const fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground"], env: TRACE });
      try {
        const { st } = await observeTimed(fg, { app: app(), windowId: fx.win });
        const at = centre(findEl(st, /button/, "Delete").bounds);
        const before = await desk().scene(fx.fixture);
        const mark = fx.fixture.events().length;
        const opsBefore = tracedOps(fg).length;
        const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
        expect(r.ok).toBe(false);
        expect(r.error).toMatchObject({ code: "CONFIRM_REQUIRED", details: { delivery: "not_dispatched" } });
        expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
        expect(await quietViolations(fx.fixture, mark)).toEqual([]);
        expect(desk().sceneViolations(before, await desk().scene(fx.fixture))).toEqual([]);
      } finally {
        await fg.close();
      }
    });

    rowIt("click.point.fixture.sensitive.confirmed", async () => {
      const fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground", "--confirm-cmd", "/usr/bin/true"], env: TRACE });
      try {
        const { st } = await observeTimed(fg, { app: app(), windowId: fx.win });
        const at = centre(findEl(st, /button/, "Delete").bounds);
        const mark = fx.fixture.events().length;
        const opsBefore = tracedOps(fg).length;
        const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result.route).toBe("accessibility");
        expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click", "point_click"]);
        await fx.fixture.waitFor((e) => e.event === "clicked" && e.control === "Delete", 5000, mark);
        expect(await quietViolations(fx.fixture, mark, (e) => e.event === "clicked" && e.control === "Delete")).toEqual([]);
        expect(since(fx.fixture, mark).filter((e) => e.event === "clicked")).toHaveLength(1);
      } finally {
        await fg.close();
      }
    });
  });

  // The five-step program's final observation waits for the app to settle (a
  // round trip, a 40 ms quiet window, a round trip): keys typed through XTest
  // reach the app after the input op returned, so the observation must still
  // show them.
  describe("GTK3 fixture: the final observation after typed keys", () => {
    const fx = useFixture();
    const app = () => `pid:${fx.fixture.pid}`;

    rowIt("settle.fixture.typed-keys", async () => {
      const fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground"] });
      try {
        const waited: number[] = [];
        for (let i = 0; i < 5; i++) {
          const { st } = await observeTimed(fg, { app: app(), windowId: fx.win });
          const name = findEl(st, /^text_field$/, "Name");
          await fg.ok("set-value", { app: app(), elementIndex: name.index, value: "" });
          const text = `settled ${i} ${Date.now() % 1000}`;
          const at = centre(name.bounds);
          const r = await fg.ok("run", { program: { app: app(), windowId: fx.win, steps: [{ action: "click", x: at.x, y: at.y }, { action: "type-text", text }], format: "full", noScreenshot: true } });
          expect(r.steps.map((x: any) => x.status)).toEqual(["completed", "completed"]);
          expect(r.settle).toMatchObject({ settled: true });
          waited.push(r.settle.waitedMs);
          const after = r.observation.snapshot.elements.find((e: any) => e.role === "text_field" && e.title === "Name");
          if (after?.value !== text) {
            // What was it: too early (the value arrives later) or never (the keys went elsewhere)?
            await new Promise((res) => setTimeout(res, 500));
            const { st: later } = await observeTimed(fg, { app: app(), windowId: fx.win });
            const late = later.snapshot.elements.find((e: any) => e.role === "text_field" && e.title === "Name");
            throw new Error(`the final observation's Name after typing ${JSON.stringify(text)} was ${JSON.stringify(after?.value)}; 500 ms later ${JSON.stringify(late?.value)}; settle ${JSON.stringify(r.settle)}; steps ${JSON.stringify(r.steps)}; fx.fixture ${JSON.stringify(fx.fixture.events().slice(-12))}`);
          }
        }
        metric("settle.fixture.typed-keys", "settle_waited_ms_median", median(waited));
      } finally {
        await fg.close();
      }
    });
  });
}
