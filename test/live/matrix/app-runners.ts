// The real applications' matrix rows of matrix.test.ts (gtk3-widget-factory,
// mousepad), shared by the X11 and the Wayland run: each takes a running
// app's pid and a serve session without grants; the caller starts the app
// on its desktop (X11: launchApp; Wayland: as the desktop's user, a native
// Wayland client) and records the rows on its desktop.
import { expect } from "vitest";
import { waitUntil } from "../harness.ts";
import type { Serve } from "../deckhand.ts";
import { ENTRY, find } from "./fixture-runners.ts";
import { metric } from "./results.ts";

/** Records one row (the caller's desktop and file). */
export type Record = (id: string, fn: () => Promise<void>) => Promise<void>;

/** widget-factory.observe, .set-value.entry, .click.page, in this order, on one running gtk3-widget-factory; each is recorded. */
export async function widgetFactoryRows(bg: Serve, pid: number, record: Record): Promise<void> {
  // Each row is recorded whatever the one before did; the first failure is rethrown at the end.
  const failures: unknown[] = [];
  const each = (id: string, fn: () => Promise<void>) => record(id, fn).catch((err: unknown) => void failures.push(err));
  await each("widget-factory.observe", async () => {
    const t0 = performance.now();
    const st = await bg.ok("get-app-state", { app: `pid:${pid}` });
    metric("widget-factory.observe", "observe_ms", Math.round(performance.now() - t0));
    // Closed menus, unnamed fillers and empty rows are noise the helper
    // drops at the source (issue 11): count real, named controls instead
    // of raw elements.
    const controls = st.snapshot.elements.filter((e: any) => /button|checkbox|radio|text_field|text_area|slider|combo_box|spin_button/.test(e.role) && e.title);
    expect(controls.length, `named controls in:\n${String(st.snapshot.treeText).slice(0, 3000)}`).toBeGreaterThan(25);
    expect(st.snapshot.elementCount).toBeGreaterThan(50);
    expect(st.snapshot.truncated).toBe(false);
    expect(st.screenshot.width).toBe(st.window.bounds.width);
  });
  await each("widget-factory.set-value.entry", async () => {
    const st = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true });
    const entry = st.snapshot.elements.find((e: any) => ENTRY.test(e.role) && e.enabled && !e.secure && e.value !== null);
    expect(entry, "an editable entry on page 1").toBeDefined();
    const r = await bg.ok("set-value", { app: `pid:${pid}`, elementIndex: entry.index, value: "deckhand was here" });
    expect(r.verification.verified).toBe(true);
    const again = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true });
    expect(again.snapshot.elements.some((e: any) => e.value === "deckhand was here")).toBe(true);
  });
  await each("widget-factory.click.page", async () => {
    const st = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true });
    const page2 = find(st, /radio/, "Page 2");
    const titlesBefore = new Set(st.snapshot.elements.map((e: any) => e.title));
    await bg.ok("click", { app: `pid:${pid}`, elementIndex: page2.index });
    const after = await waitUntil("page 2 to show", 5000, async () => {
      const s = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true });
      const fresh = s.snapshot.elements.filter((e: any) => e.title && !titlesBefore.has(e.title));
      return fresh.length > 5 ? s : undefined;
    });
    expect(find(after, /radio/, "Page 2").focused || after.snapshot.treeText.includes('radio "Page 2" (checked')).toBe(true);
  });
  if (failures.length) throw failures[0];
}

/** mousepad.type-select-replace-undo on a running mousepad (a new document). */
export async function mousepadRow(bg: Serve, pid: number): Promise<void> {
  const doc = async () => {
    const st = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true, maxNodes: 5000 });
    // The document is mousepad's one multi-line text element.
    const el = st.snapshot.elements.find((e: any) => e.role === "text_area");
    return { st, el };
  };
  let { el } = await doc();
  expect(el, "mousepad's document").toBeDefined();
  await bg.ok("type-text", { app: `pid:${pid}`, elementIndex: el.index, text: "hello brave world" });
  ({ el } = await doc());
  expect(el.value).toBe("hello brave world");
  await bg.ok("select-text", { app: `pid:${pid}`, elementIndex: el.index, start: 6, end: 11 });
  await bg.ok("type-text", { app: `pid:${pid}`, elementIndex: el.index, text: "new" });
  let st;
  ({ st, el } = await doc());
  expect(el.value).toBe("hello new world");
  let undo = st.snapshot.elements.find((e: any) => /menu_item/.test(e.role) && /^Undo/.test(e.title));
  if (!undo) {
    // A closed menu's items are not elements (issue 11): open Edit
    // first, as a user would; its popup is part of the app's windows.
    const edit = st.snapshot.elements.find((e: any) => /menu/.test(e.role) && e.title === "Edit");
    expect(edit, `an Edit menu in:\n${st.snapshot.treeText.slice(0, 3000)}`).toBeDefined();
    await bg.ok("click", { app: `pid:${pid}`, elementIndex: edit.index });
    undo = await waitUntil("the Edit menu's Undo item", 5000, async () => {
      const s = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true, maxNodes: 5000 });
      return s.snapshot.elements.find((e: any) => /menu_item/.test(e.role) && /^Undo/.test(e.title));
    }).catch(async (err) => {
      const s = await bg.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true, maxNodes: 5000 });
      throw new Error(`${(err as Error).message}; after clicking Edit the observation was:\n${s.snapshot.treeText.slice(0, 3000)}`);
    });
  }
  await bg.ok("click", { app: `pid:${pid}`, elementIndex: undo.index });
  const reverted = await waitUntil("undo to revert the replacement", 5000, async () => {
    const d = await doc();
    return d.el.value !== "hello new world" ? d.el.value : undefined;
  });
  expect(["hello brave world", "hello  world"]).toContain(reverted);
}
