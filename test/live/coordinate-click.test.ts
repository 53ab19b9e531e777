// Issue 15: a granted coordinate click through serve is one point_click
// request (protocol 2.3): the helper checks the window at the point, hit-tests
// it, holds the click when a name there may be sensitive (the confirm decision
// then sees it), presses a press-like control through accessibility or clicks
// with XTest and puts the pointer back. On the real desktop: the GTK3 fixture
// (its log says what it received), gtk3-widget-factory (GTK3, a real app: a
// fresh observation says what changed) and the Qt5 fixture. The helper's ops
// come from DECKHAND_TRACE_OPS on serve's stderr. Rows: test/live/matrix/rows.ts
// ("click.point."). Timings are recorded as metrics, never asserted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeLive, launchAppTree, launchFixtureScript, QT5_FIXTURE, useDesktop, type Fixture, type TreeApp } from "./harness.ts";
import { newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { pointer, proveOracles, quietViolations, since } from "./matrix/oracles.ts";
import { record } from "./matrix/results.ts";
import { ROWS } from "./matrix/rows.ts";
import { findEl, observeTimed, waitAccessible } from "./matrix/toolkit.ts";
import { x11Desk } from "./matrix/desk.ts";
import { centre, pointClickFixtureRows, TRACE, tracedOps } from "./matrix/point-click-rows.ts";

const FILE = "coordinate-click.test.ts";



describeLive("a granted coordinate click is one point_click request", () => {
  const desktop = useDesktop();
  let stateDir: string;

  beforeAll(async () => {
    requireBuild();
    // Before any row counts: the oracles must catch what they are there to catch.
    await proveOracles(desktop);
    stateDir = newStateDir();
  }, 90_000);

  const rowIt = (id: string, fn: () => Promise<void>, timeout = 90_000) => {
    const r = ROWS.find((x) => x.id === id);
    if (!r) throw new Error(`no matrix row ${id}`);
    it(`${id}: ${r.action} -> ${r.expect}`, () => record(id, FILE, fn), timeout);
  };

  // The GTK3 fixture's rows: shared with the Wayland run.
  pointClickFixtureRows("x11", () => x11Desk(desktop), FILE, () => stateDir);

  describe("gtk3-widget-factory", () => {
    let wf: TreeApp;
    let fg: Serve;
    beforeAll(async () => {
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"], env: TRACE });
      wf = await launchAppTree(desktop, ["/usr/bin/gtk3-widget-factory"], { timeoutMs: 60_000 });
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
      const p0 = pointer(desktop);
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
      expect(pointer(desktop)).toBe(p0);
    });

    rowIt("click.point.widget-factory.entry", async () => {
      const { st } = await observeTimed(fg, { app: app() });
      const entry = st.snapshot.elements.find((e: any) => e.role === "text_field" && e.bounds && e.enabled && !e.focused && e.bounds.width > 40);
      expect(entry, `an unfocused entry in:\n${String(st.snapshot.treeText).slice(0, 3000)}`).toBeDefined();
      const at = centre(entry.bounds);
      const p0 = pointer(desktop);
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", cleanup: { pointer_restored: true } });
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
      const { st: after } = await observeTimed(fg, { app: app() });
      expect(after.snapshot.elements.find((e: any) => e.index === entry.index)?.focused, lineOf(after, entry.index)).toBe(true);
      expect(pointer(desktop)).toBe(p0);
    });
  });

  describe("Qt5 fixture", () => {
    let fixture: Fixture;
    let win: number;
    let fg: Serve;
    const app = () => `pid:${fixture.pid}`;
    beforeAll(async () => {
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"], env: TRACE });
      fixture = await launchFixtureScript(desktop, QT5_FIXTURE, { env: { QT_ACCESSIBILITY: "1" } });
      win = (fixture.events().find((e) => e.event === "ready") as any).windows[0].xid;
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

    rowIt("click.point.qt5-fixture.entry", async () => {
      const { st } = await observeTimed(fg, { app: app(), windowId: win });
      const name = findEl(st, /^text_field$/, "Name");
      const at = { x: name.bounds.x + 10, y: centre(name.bounds).y };
      const p0 = pointer(desktop);
      const mark = fixture.events().length;
      const opsBefore = tracedOps(fg).length;
      const r = await fg.request("click", { app: app(), x: at.x, y: at.y });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", cleanup: { pointer_restored: true } });
      expect(tracedOps(fg).slice(opsBefore)).toEqual(["list_windows", "point_click"]);
      await fixture.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000, mark);
      expect(await quietViolations(fixture, mark, (e) => e.event === "focus")).toEqual([]);
      expect(pointer(desktop)).toBe(p0);
    });
  });
});

/** An element's line in the snapshot's tree text ("[12] checkbox \"Label\" (checked, ...)"). */
function lineOf(st: any, index: number): string {
  return String(st.snapshot.treeText).split("\n").find((l: string) => l.includes(`[${index}]`)) ?? "";
}
