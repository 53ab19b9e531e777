// Issue 15: a granted coordinate click through serve is one point_click
// request on real apps: gtk3-widget-factory (GTK3, a real app: a fresh
// observation says what changed) and the Qt5 fixture (its log says what it
// received). Registered on a desk (desk.ts): the X11 run
// (test/live/coordinate-click.test.ts) and the Wayland run
// (test/live/matrix-wayland.test.ts). The pointer oracles: X11, the X
// server's pointer (did not move; back where it was); Wayland, where no
// client can read the pointer and it is never put back, the Qt5 fixture's
// own pointer log (it stays where the click left it), and none for
// gtk3-widget-factory, which logs nothing (said in the rows).
import { afterAll, beforeAll, describe, expect } from "vitest";
import { QT5_FIXTURE, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { Serve } from "../deckhand.ts";
import { pointer, quietViolations, since } from "./oracles.ts";
import { rowTest, type MatrixDesk } from "./desk.ts";
import type { MatrixDesktop } from "./rows.ts";
import { findEl, observeTimed, waitAccessible } from "./toolkit.ts";
import { centre, TRACE, tracedOps } from "./point-click-rows.ts";

/** Registers the real apps' point-click rows inside the caller's describe; `stateDir` is the caller's. */
export function pointClickAppRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string, stateDir: () => string): void {
  const rowIt = rowTest(on, desk, file, 90_000);
  /** The X server's pointer (X11); Wayland: null, no client can read it. */
  const xPointer = (): string | null => (desk().kind === "x11" ? pointer(desk().desktop) : null);

  describe("gtk3-widget-factory", () => {
    let wf: TreeApp;
    let fg: Serve;
    beforeAll(async () => {
      fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground"], env: TRACE });
      wf = await desk().launchAppTree(["/usr/bin/gtk3-widget-factory"], { timeoutMs: 60_000 });
      await waitAccessible(fg, wf.pid);
    }, 90_000);
    afterAll(async () => {
      await fg?.close();
      await wf?.stop();
    });
    const app = () => `pid:${wf.pid}`;

    rowIt("click.point.widget-factory.check", async () => {
      const { st } = await observeTimed(fg, { app: app() }, "click.point.widget-factory.check");
      const check = st.snapshot.elements.find((e: any) => e.role === "checkbox" && e.title && e.bounds && e.enabled && !/checked/.test(lineOf(st, e.index)));
      expect(check, `an unchecked check button in:\n${String(st.snapshot.treeText).slice(0, 3000)}`).toBeDefined();
      const at = centre(check.bounds);
      const p0 = xPointer();
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result.route).toBe("accessibility");
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
      // The press's own read-back (the checked state toggled) and a fresh observation.
      expect(r.result.verification, JSON.stringify(r.result)).toBeTruthy();
      const { st: after } = await observeTimed(fg, { app: app() });
      const sameBox = (b: any) => b && b.x === check.bounds.x && b.y === check.bounds.y && b.width === check.bounds.width && b.height === check.bounds.height;
      const again = after.snapshot.elements.find((e: any) => e.role === "checkbox" && e.title === check.title && sameBox(e.bounds));
      expect(lineOf(after, again.index), `before: ${lineOf(st, check.index)}; result ${JSON.stringify(r.result)}`).toMatch(/checked/);
      expect(xPointer()).toBe(p0);
    });

    rowIt("click.point.widget-factory.entry", async () => {
      const { st } = await observeTimed(fg, { app: app() });
      const entry = st.snapshot.elements.find((e: any) => e.role === "text_field" && e.bounds && e.enabled && !e.focused && e.bounds.width > 40);
      expect(entry, `an unfocused entry in:\n${String(st.snapshot.treeText).slice(0, 3000)}`).toBeDefined();
      const at = centre(entry.bounds);
      const p0 = xPointer();
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", cleanup: { pointer_restored: desk().restoresPointer } });
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
      // The app moves its focus once it has handled the press: read until it shows (bounded), the last reading kept.
      let after: any;
      await waitUntil("the clicked entry focused", 3000, async () => {
        after = (await observeTimed(fg, { app: app() })).st;
        return after.snapshot.elements.find((e: any) => e.index === entry.index)?.focused === true ? true : undefined;
      }).catch(() => undefined);
      expect(after.snapshot.elements.find((e: any) => e.index === entry.index)?.focused, lineOf(after, entry.index)).toBe(true);
      expect(xPointer()).toBe(p0);
    });
  });

  describe("Qt5 fixture", () => {
    let fixture: Fixture;
    let win: number;
    let fg: Serve;
    const app = () => `pid:${fixture.pid}`;
    beforeAll(async () => {
      fg = new Serve(desk().desktop, { stateDir: stateDir(), args: ["--allow-foreground"], env: TRACE });
      fixture = await desk().launchFixture({ env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 30_000 }, QT5_FIXTURE);
      win = await desk().windowId(fixture, (fixture.events().find((e) => e.event === "ready") as any).windows[0].title);
      await waitAccessible(fg, fixture.pid);
    }, 90_000);
    afterAll(async () => {
      await fg?.close();
      await fixture?.stop();
    });

    rowIt("click.point.qt5-fixture.check", async () => {
      const { st } = await observeTimed(fg, { app: app(), windowId: win });
      const at = centre(findEl(st, /check/, "Subscribe").bounds);
      const mark = fixture.events().length;
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result.route).toBe("accessibility");
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
      await fixture.waitFor((e) => e.event === "toggled" && e.control === "Subscribe", 5000, mark);
      expect(await quietViolations(fixture, mark, (e) => e.event === "toggled" && e.control === "Subscribe")).toEqual([]);
      expect(since(fixture, mark).filter((e) => e.event === "toggled")).toHaveLength(1);
    });

    // Wayland: whether a Qt 5 menu is open over the point cannot be told there (no Cache, no Collection, no popup in
    // sway's tree), so point_click finds no node, never the one beneath a popup: the first holds, the orchestrator reads
    // the window, and the click goes by pointer.
    rowIt("wayland.click.point.qt5-fixture.check", async () => {
      const { st } = await observeTimed(fg, { app: app(), windowId: win });
      const at = centre(findEl(st, /check/, "Subscribe").bounds);
      const before = await desk().scene(fixture);
      const mark = fixture.events().length;
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", cleanup: { pointer_restored: desk().restoresPointer } });
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click", "get_tree", "point_click"]);
      await fixture.waitFor((e) => e.event === "toggled" && e.control === "Subscribe", 5000, mark);
      // A pointer click also moves the focus to what it clicked (a press through accessibility does not).
      const clicksOwn = (e: any) => e.event === "pointer" || (e.event === "focus" && (e.control === "Subscribe" ? e.in === true : e.in === false));
      expect(await quietViolations(fixture, mark, (e) => (e.event === "toggled" && e.control === "Subscribe") || clicksOwn(e))).toEqual([]);
      expect(since(fixture, mark).filter((e) => e.event === "toggled")).toHaveLength(1);
      expect(await desk().pointerAfterInputViolations(fixture, before)).toEqual([]);
    });

    rowIt("click.point.qt5-fixture.entry", async () => {
      const { st } = await observeTimed(fg, { app: app(), windowId: win });
      const name = findEl(st, /^text_field$/, "Name");
      const at = { x: name.bounds.x + 10, y: centre(name.bounds).y };
      const before = await desk().scene(fixture);
      const mark = fixture.events().length;
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", cleanup: { pointer_restored: desk().restoresPointer } });
      // Wayland: whether a Qt 5 menu is open over the point cannot be told there (no Cache, no Collection, no popup in
      // sway's tree), so the first point_click finds no node and holds; the orchestrator reads the window and asks again.
      const ops = desk().kind === "wayland" ? ["list_windows", "point_click", "get_tree", "point_click"] : ["list_windows", "point_click"];
      expect(tracedOps(fg).slice(opsBefore)).toEqual(ops);
      await fixture.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000, mark);
      // The click's own pointer crossing (Wayland: the fixture logs the pointer entering) is no violation; anything else is.
      expect(await quietViolations(fixture, mark, (e) => e.event === "focus" || e.event === "pointer")).toEqual([]);
      // X11: the pointer is back where it was; Wayland (never put back): it stays where the click left it, over the window.
      expect(await desk().pointerAfterInputViolations(fixture, before)).toEqual([]);
    });
  });
}

/** An element's line in the snapshot's tree text ("[12] checkbox \"Label\" (checked, ...)"). */
function lineOf(st: any, index: number): string {
  return String(st.snapshot.treeText).split("\n").find((l: string) => l.includes(`[${index}]`)) ?? "";
}
