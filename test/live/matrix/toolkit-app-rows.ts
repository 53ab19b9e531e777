// The rows of real GTK4 and Qt5 applications (gtk4-demo: observe shows more
// than the frame; gtk4-widget-factory is not used: under Xvfb its endless
// animations kept it from ever registering on the AT-SPI registry in most
// starts, so its rows measured the machine, not deckhand; FeatherPad, a Qt5
// editor: observe and type into it), registered on a desk (desk.ts): the
// X11 run (test/live/toolkits-apps.test.ts) and the Wayland run
// (test/live/matrix-wayland.test.ts) share them. Rows: rows.ts.
import { afterAll, beforeAll, describe, expect } from "vitest";
import { alivePid, processTree, waitUntil, type TreeApp } from "../harness.ts";
import { rowTest, startFailed, useServe, type MatrixDesk } from "./desk.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { expectInsideWindow, expectNoHarm, observeN, observeTimed, waitAccessible } from "./toolkit.ts";

/** Registers the rows' tests inside the caller's describe; `file` names the test file in the results. */
export function toolkitAppRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  const serve = useServe(desk);

  /**
   * Why an app could not be started (or never joined the AT-SPI bus): its
   * rows then fail with that reason, recorded, rather than being skipped and
   * leaving an older result standing.
   */
  const startFailure = new Map<string, Error>();
  const rowIt = rowTest(on, desk, file, 120_000, (id) => startFailed(startFailure, id.split(".")[0]!));

  describe("gtk4-demo", () => {
    let app: TreeApp;
    beforeAll(async () => {
      try {
        app = await desk().launchAppTree(["/usr/bin/gtk4-demo"], { timeoutMs: 60_000 });
        await waitAccessible(serve(), app.pid);
      } catch (err) {
        startFailure.set("gtk4-demo", err as Error);
      }
    }, 90_000);
    afterAll(async () => {
      await app?.stop();
    });
    rowIt("gtk4-demo.observe", async () => {
      const { st, ms } = await observeTimed(serve(), { app: `pid:${app.pid}`, windowId: app.windows[0], maxNodes: 5000 }, "gtk4-demo.observe");
      console.log(`[observe] gtk4-demo: ${ms} ms, ${st.snapshot.elementCount} elements, truncated ${st.snapshot.truncated}`);
      expect(st.snapshot.elementCount, `more than the frame:\n${String(st.snapshot.treeText).slice(0, 2000)}`).toBeGreaterThan(50);
      const buttons = st.snapshot.elements.filter((e: any) => /button/.test(e.role) && e.title);
      const entries = st.snapshot.elements.filter((e: any) => /^text_(?:field|area)$/.test(e.role));
      expect(buttons.length, "named buttons").toBeGreaterThan(3);
      expect(entries.length, "entries").toBeGreaterThan(0);
      for (const el of [...buttons.slice(0, 5), ...entries.slice(0, 3)]) expectInsideWindow(st, el);
    });
    rowIt("gtk4-demo.harm", async () => {
      await expectNoHarm("gtk4-demo.harm", app.pid, () => processTree(app.pid), async () => {
        const times = await observeN(serve(), { app: `pid:${app.pid}`, windowId: app.windows[0], maxNodes: 5000 }, 5, "gtk4-demo.harm");
        console.log(`[observe] gtk4-demo x5: ${times.join(", ")} ms`);
      });
    });
  });

  describe("featherpad", () => {
    let app: TreeApp;
    const editor = async () => {
      const o = await observeTimed(serve(), { app: `pid:${app.pid}`, windowId: app.windows[0], maxNodes: 5000 });
      // The document is FeatherPad's one multi-line text element (its search
      // bar's line edits are hidden).
      const el = o.st.snapshot.elements.filter((e: any) => /^text_(?:field|area)$/.test(e.role)).sort((a: any, b: any) => b.bounds.width * b.bounds.height - a.bounds.width * a.bounds.height)[0];
      return { ...o, el };
    };
    beforeAll(async () => {
      // Qt 5 joins the AT-SPI bus only with QT_ACCESSIBILITY=1; --standalone:
      // no single-instance hand-off to another FeatherPad.
      try {
        app = await desk().launchAppTree(["/usr/bin/featherpad", "--standalone"], { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 60_000 });
        await waitAccessible(serve(), app.pid);
      } catch (err) {
        startFailure.set("featherpad", err as Error);
      }
    }, 90_000);
    afterAll(async () => {
      await app?.stop();
    });
    rowIt("featherpad.observe", async () => {
      const { st, ms, el } = await editor();
      metric("featherpad.observe", "observe_ms", ms);
      console.log(`[observe] featherpad: ${ms} ms, ${st.snapshot.elementCount} elements`);
      expect(el, `an editor in:\n${String(st.snapshot.treeText).slice(0, 3000)}`).toBeDefined();
      expectInsideWindow(st, el);
      expect(st.snapshot.elements.some((e: any) => /menu/.test(e.role) && /File/.test(e.title ?? "")), "the File menu").toBe(true);
    });
    rowIt("featherpad.type-text", async () => {
      const { el } = await editor();
      const r = await serve().request("type-text", { app: `pid:${app.pid}`, elementIndex: el.index, text: "hello featherpad" });
      if (!alivePid(app.pid)) throw new Error(`featherpad died during type-text; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await waitUntil("the typed text in featherpad's editor", 5000, async () => String((await editor()).el?.value ?? "").includes("hello featherpad"));
    });
    rowIt("featherpad.harm", async () => {
      await expectNoHarm("featherpad.harm", app.pid, () => processTree(app.pid), async () => {
        const times = await observeN(serve(), { app: `pid:${app.pid}`, windowId: app.windows[0], maxNodes: 5000 }, 5, "featherpad.harm");
        console.log(`[observe] featherpad x5: ${times.join(", ")} ms`);
        const { el } = await editor();
        await serve().request("type-text", { app: `pid:${app.pid}`, elementIndex: el.index, text: " again" });
      });
    });
  });
}
