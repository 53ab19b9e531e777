// Issue 14 on real apps: the compact observation against the full one (bytes,
// and nothing actionable lost), paging a real tree with the horizon refusal,
// and a diff after a real change. The full and compact outputs compared are of
// the SAME snapshot (the compact one pages it: --snapshot-id --offset 0), so
// the comparison is exact. Rows: rows.ts (capability "compact / diff").
// Registered on a desk (desk.ts): the X11 run (test/live/observation.test.ts)
// and the Wayland run (test/live/matrix-wayland.test.ts) share them.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { newStateDir, Serve } from "../deckhand.ts";
import { browserArgv, libreOfficeProfile, sofficeArgv, writerDocument } from "../app-profiles.ts";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { nativeBrowserArgv, rowTest, useServe, type MatrixDesk } from "./desk.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { waitAccessible } from "./toolkit.ts";

/** What an agent can act on, read from the FULL output alone (independent of the compact rules). */
const INPUT_ROLES = new Set(["text_field", "text_area", "secure_text_field", "combo_box", "spin_button", "slider"]);
/** Roles agents act on whatever actions the toolkit advertises (Chromium's links, for one, advertise none in the tree read). */
const CONTROL_ROLES = new Set([...INPUT_ROLES, "button", "toggle_button", "checkbox", "radio", "link", "tab", "menu_item"]);
function actionableIndices(full: any): number[] {
  return full.snapshot.elements.filter((e: any) => e.actions.length > 0 || e.secure || e.focused || CONTROL_ROLES.has(e.role)).map((e: any) => e.index);
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v), "utf8");

/**
 * The full observation of a window, then every compact page of the same
 * snapshot: byte counts of each (the result object, as an agent receives
 * it), and the indices each shows.
 */
async function compare(s: Serve, args: Record<string, unknown>) {
  const full = await s.ok("get-app-state", { ...args, format: "full" });
  const id = full.snapshot.snapshotId;
  const pages: any[] = [];
  let offset: number | undefined = 0;
  while (offset !== undefined && pages.length < 50) {
    const p = await s.ok("get-app-state", { app: args.app, snapshotId: id, offset });
    pages.push(p);
    offset = p.snapshot.nextOffset;
  }
  const shown = new Set<number>();
  for (const p of pages) for (const m of String(p.snapshot.treeText).matchAll(/^\s*\[(\d+)\]/gm)) shown.add(Number(m[1]));
  const actionable = actionableIndices(full);
  const missing = actionable.filter((i) => !shown.has(i));
  const fullBytes = bytes(full);
  const compactBytes = pages.reduce((n, p) => n + bytes(p), 0);
  return { full, pages, fullBytes, compactBytes, ratio: fullBytes / compactBytes, actionable, missing };
}

/** A fresh compact observation (the default an agent gets), its bytes. */
async function freshCompact(s: Serve, args: Record<string, unknown>) {
  const r = await s.ok("get-app-state", { ...args, format: "compact" });
  return { r, bytes: bytes(r) };
}

function expectSmallerWithNothingLost(id: string, c: Awaited<ReturnType<typeof compare>>, fresh: number) {
  metric(id, "full_bytes", c.fullBytes);
  metric(id, "compact_bytes", c.compactBytes);
  metric(id, "fresh_compact_bytes", fresh);
  metric(id, "ratio", Number(c.ratio.toFixed(1)));
  metric(id, "elements", c.full.snapshot.elementCount);
  metric(id, "actionable", c.actionable.length);
  metric(id, "pages", c.pages.length);
  if (process.env.DECKHAND_DEBUG_COMPACT) console.log(c.pages.map((p: any) => p.snapshot.treeText).join("\n"));
  console.log(`[compact] ${id}: full ${c.fullBytes} B, compact ${c.compactBytes} B in ${c.pages.length} page(s) (fresh ${fresh} B), ${c.ratio.toFixed(1)}x; ${c.full.snapshot.elementCount} elements, ${c.actionable.length} actionable, missing ${c.missing.length}`);
  expect(c.missing, `actionable elements missing from the compact view:\n${c.full.snapshot.elements.filter((e: any) => c.missing.includes(e.index)).map((e: any) => JSON.stringify(e)).join("\n").slice(0, 3000)}`).toEqual([]);
  expect(c.actionable.length).toBeGreaterThan(5);
  expect(c.ratio).toBeGreaterThanOrEqual(3);
}

/** Registers the compact / page / diff rows inside the caller's describe; `file` names the test file in the results. */
export function observationRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  const rowIt = rowTest(on, desk, file, 180_000);
  const serve = useServe(desk);

  describe("gtk3-widget-factory", () => {
    let app: TreeApp;
    beforeAll(async () => {
      app = await desk().launchAppTree(["/usr/bin/gtk3-widget-factory"]);
      await waitAccessible(serve(), app.pid);
    }, 60_000);
    afterAll(async () => {
      await app?.stop();
    });

    rowIt("observe.compact.widget-factory", async () => {
      const args = { app: `pid:${app.pid}` };
      const c = await compare(serve(), args);
      const fresh = await freshCompact(serve(), args);
      expectSmallerWithNothingLost("observe.compact.widget-factory", c, fresh.bytes);
      expect(fresh.r.snapshot.treeText).toMatch(/radio_button|radio "Page 2"|"Page 2"/);
    });

    rowIt("observe.page.widget-factory", async () => {
      const app_ = `pid:${app.pid}`;
      // Which elements lie where: learned in another state dir (the same tree numbers its nodes the same).
      const other = new Serve(desk().desktop, { stateDir: newStateDir() });
      const full = await other.ok("get-app-state", { app: app_, noScreenshot: true, format: "full" });
      await other.close();
      const q1 = await serve().ok("get-app-state", { app: app_, noScreenshot: true, format: "compact", maxBytes: 2000 });
      expect(q1.snapshot.truncated).toBe(true);
      expect(q1.snapshot.elementCount).toBe(full.snapshot.elementCount);
      const next = q1.snapshot.nextOffset as number;
      const target = full.snapshot.elements.find((e: any) => e.index > next && INPUT_ROLES.has(e.role) && e.bounds);
      expect(target, `an entry well past the first page (next ${next}): ${full.snapshot.elements.filter((e: any) => INPUT_ROLES.has(e.role)).map((e: any) => e.index + ":" + e.role).join(" ")}`).toBeTruthy();
      const refused = await serve().request("focus", { app: app_, elementIndex: target.index });
      expect(refused.ok).toBe(false);
      expect(refused.error).toMatchObject({ code: "ELEMENT_BEYOND_HORIZON", details: { elementIndex: target.index, reason: "page", nextOffset: next, delivery: "not_dispatched" } });
      // Page on until the entry is shown; then it is acted on.
      let offset: number | undefined = next;
      let pages = 1;
      for (; offset !== undefined && pages < 100; pages++) {
        const p = await serve().ok("get-app-state", { app: app_, snapshotId: q1.snapshot.snapshotId, offset, maxBytes: 2000 });
        expect(Buffer.byteLength(p.snapshot.treeText)).toBeLessThanOrEqual(2000);
        if (new RegExp(`^\\s*\\[${target.index}\\]`, "m").test(p.snapshot.treeText)) break;
        offset = p.snapshot.nextOffset;
      }
      metric("observe.page.widget-factory", "pages_to_target", pages + 1);
      const focused = await serve().request("focus", { app: app_, elementIndex: target.index });
      expect(focused.ok, JSON.stringify(focused.error)).toBe(true);
    });
  });

  describe("LibreOffice Writer", () => {
    let app: TreeApp;
    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), "deckhand-compact-"));
      const doc = writerDocument(dir, "deckhand-compact", ["First paragraph from deckhand.", "Second paragraph, with a comma.", "Third and last paragraph."]);
      desk().handOver(dir);
      const argv = sofficeArgv("--writer", desk().handOver(libreOfficeProfile()), doc);
      app = await desk().launchAppTree(argv, { env: { SAL_USE_VCLPLUGIN: "gtk3" }, timeoutMs: 120_000, titleMatches: /deckhand-compact/ });
      await waitAccessible(serve(), app.pid, 90_000);
    }, 150_000);
    afterAll(async () => {
      await app?.stop();
    }, 30_000);

    rowIt("observe.compact.writer", async () => {
      const args = { app: `pid:${app.pid}`, windowId: app.windows[0] };
      // Writer's document arrives in the tree some time after its window.
      await waitUntil("Writer's paragraphs in the tree", 60_000, async () => {
        const st = await serve().ok("get-app-state", { ...args, noScreenshot: true, format: "compact" });
        return String(st.snapshot.treeText).includes("Third and last paragraph.") ? st : undefined;
      });
      const c = await compare(serve(), args);
      const fresh = await freshCompact(serve(), args);
      expectSmallerWithNothingLost("observe.compact.writer", c, fresh.bytes);
      expect(fresh.r.snapshot.treeText).toContain("Second paragraph, with a comma.");
    });
  });

  describe("Chromium on a long page", () => {
    let web: WebFixture;
    let browser: TreeApp;
    beforeAll(async () => {
      web = await startWebFixture("article.html");
      const profile = desk().handOver(mkdtempSync(join(tmpdir(), "deckhand-compact-chromium-")));
      browser = await desk().launchAppTree(nativeBrowserArgv(desk(), "chromium", browserArgv("chromium", web.url, profile)), { env: desk().browser("chromium").env, timeoutMs: 90_000, titleMatches: /deckhand long page/ });
      await web.waitFor((e) => e.event === "ready", 60_000);
      await waitAccessible(serve(), browser.pid);
    }, 150_000);
    afterAll(async () => {
      await browser?.stop();
      await web?.close();
    }, 30_000);

    rowIt("observe.compact.chromium-article", async () => {
      const args = { app: `pid:${browser.pid}`, windowId: browser.windows[0] };
      await waitUntil("the long page in the tree", 30_000, async () => {
        const st = await serve().ok("get-app-state", { ...args, noScreenshot: true, format: "compact" });
        return String(st.snapshot.treeText).includes("Release table") ? st : undefined;
      });
      const c = await compare(serve(), args);
      const fresh = await freshCompact(serve(), args);
      expectSmallerWithNothingLost("observe.compact.chromium-article", c, fresh.bytes);
      // Links, the search field and the headings are there; the paragraphs' running text is not.
      // The helper reads what is on screen: the first sections (the rest is below the fold).
      expect(fresh.r.snapshot.treeText).toContain('link "reference 1.4"');
      expect(fresh.r.snapshot.treeText).toContain('heading "Release table"');
    });
  });

  describe("the GTK3 fixture", () => {
    let fixture: Fixture;
    beforeAll(async () => {
      fixture = await desk().launchFixture();
    }, 60_000);
    afterAll(async () => {
      await fixture?.stop();
    });

    rowIt("observe.diff.fixture", async () => {
      const app_ = `pid:${fixture.pid}`;
      const windows = await serve().ok("list-windows", { app: app_ });
      const main = windows.windows.find((w: any) => w.title === "deckhand fixture").windowId;
      const base = await serve().ok("get-app-state", { app: app_, windowId: main, noScreenshot: true, format: "full" });
      const name = base.snapshot.elements.find((e: any) => e.role === "text_field" && e.title === "Name");
      const ok = base.snapshot.elements.find((e: any) => e.role === "button" && e.title === "OK");
      const set = await serve().request("set-value", { app: app_, windowId: main, elementIndex: name.index, value: "Ada Lovelace" });
      expect(set.ok, JSON.stringify(set.error)).toBe(true);
      const d = await serve().ok("get-app-state", { app: app_, windowId: main, noScreenshot: true, format: "compact", since: base.snapshot.snapshotId });
      const diff = d.snapshot.diff;
      metric("observe.diff.fixture", "diff_bytes", bytes(d));
      metric("observe.diff.fixture", "full_bytes", bytes(base));
      expect(diff).toMatchObject({ since: base.snapshot.snapshotId, applied: true, added: [], removed: [] });
      const changedName = diff.changed.find((c: any) => c.index === name.index);
      expect(changedName?.changed).toContain("value");
      expect(changedName.line).toContain('value="Ada Lovelace"');
      expect(d.snapshot.treeText).toBe("");
      // Indices kept: OK is still OK in the new snapshot, and is acted on there.
      const click = await serve().request("click", { app: app_, windowId: main, elementIndex: ok.index });
      expect(click.ok, JSON.stringify(click.error)).toBe(true);
      await fixture.waitFor((e) => e.event === "clicked" && e.control === "OK", 5000);
      // The window did not change, so a diff of nothing is applied and empty.
      const again = await serve().ok("get-app-state", { app: app_, windowId: main, noScreenshot: true, format: "compact", since: d.snapshot.snapshotId });
      expect(again.snapshot.diff).toMatchObject({ applied: true, added: [], removed: [] });
      // Another window: no diff, and why.
      const second = windows.windows.find((w: any) => w.windowId !== main).windowId;
      const other = await serve().ok("get-app-state", { app: app_, windowId: second, noScreenshot: true, format: "compact", since: again.snapshot.snapshotId });
      expect(other.snapshot.diff).toMatchObject({ applied: false, reason: "window_changed" });
      expect(other.snapshot.treeText.length).toBeGreaterThan(0);
    });
  });
}
