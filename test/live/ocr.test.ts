// Issue 14 item 4 on a real desktop with the real tesseract: OCR where the
// tree is empty or thin. The Tk fixture (test/fixtures/apps/tk_fixture.py:
// Tk has no accessibility bridge) is read without being asked, its known
// text found where the fixture says it drew it; its OCR'd button is clicked
// by point under the foreground grant (the fixture logs exactly one click),
// refused without it, and every other element action on OCR text is refused
// ocr-point-only. A half-size observation reads a full-resolution capture.
// LibreOffice on its plain X11 plugin (no tree) is read automatically;
// --ocr adds lines beside the tree of the GTK3 fixture (a revealed password
// in a field remembered secure is never read), gtk3-widget-factory,
// FeatherPad (Qt5) and Chromium; xterm (a built-in denied terminal) is
// refused before anything is captured. Rows: test/live/matrix/rows.ts
// ("issue 14: OCR"); words expected vs found and timings are row metrics.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import { observe } from "../../src/engine/observe.ts";
import { readText } from "../../src/engine/ocr.ts";
import { resolveApp, resolveWindow } from "../../src/engine/resolve.ts";
import { permissiveSafety } from "../../src/engine/safety.ts";
import { libreOfficeProfile, sofficeArgv, writerDocument } from "./app-profiles.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { describeLive, desktopEnv, launchApp, launchAppTree, launchFixtureScript, useDesktop, waitUntil, type Fixture, type TreeApp } from "./harness.ts";
import { pointer, proveOracles, quietViolations, since } from "./matrix/oracles.ts";
import { metric, record } from "./matrix/results.ts";
import { ROWS } from "./matrix/rows.ts";
import { x11Desk } from "./matrix/desk.ts";
import { accuracy, DOC_LINES, inside, lineFor, ocrOf, ocrTreeRows, overlaps, recordAccuracy, timed, timing, type Rect } from "./matrix/ocr-rows.ts";

const FILE = "ocr.test.ts";
const TK_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "apps", "tk_fixture.py");
/** What tk_fixture.py draws (its LARGE_LINES, SMALL_LINES and BUTTONS). */
const TK_LINES = ["Quarterly Report Overview", "Invoice number 4815 approved", "Shipping address confirmed", "Small print: delivery within seven working days", "Open Report", "Delete Draft"];
const rowIt = (id: string, fn: () => Promise<void>, timeout = 120_000) => {
  const r = ROWS.find((x) => x.id === id);
  if (!r) throw new Error(`no matrix row ${id}`);
  it(`${id}: ${r.action} -> ${r.expect}`, () => record(id, FILE, fn), timeout);
};
const LO_MENU = ["File", "Edit", "View", "Insert", "Format", "Styles", "Table", "Form", "Tools", "Window", "Help"];


describeLive("OCR where the tree is empty or thin (issue 14)", () => {
  const desktop = useDesktop();
  let stateDir: string;
  let fg: Serve;
  let bg: Serve;

  beforeAll(async () => {
    requireBuild();
    execFileSync("tesseract", ["--version"], { stdio: "ignore" });
    await proveOracles(desktop);
    stateDir = newStateDir();
    fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
    bg = new Serve(desktop, { stateDir });
  }, 90_000);
  afterAll(async () => {
    await fg?.close();
    await bg?.close();
  });

  describe("the Tk fixture (no tree)", () => {
    let tk: Fixture;
    let win: { xid: number; x: number; y: number; width: number; height: number };
    let boxes: Map<string, Rect>;
    let st: any;
    const app = () => `pid:${tk.pid}`;
    const el = (text: string) => lineFor(st, text);

    beforeAll(async () => {
      tk = await launchFixtureScript(desktop, TK_FIXTURE, { timeoutMs: 30_000 });
      const ready = tk.events().find((e) => e.event === "ready") as any;
      win = ready.windows[0];
      boxes = new Map(ready.lines.map((l: any) => [l.text, { x: l.x, y: l.y, width: l.width, height: l.height }]));
    }, 60_000);
    afterAll(async () => {
      await tk?.stop();
    });

    rowIt("ocr.tk.automatic", async () => {
      const r = await timed(bg, { app: app(), windowId: win.xid });
      st = r.st;
      timing("ocr.tk.automatic", st, r.ms);
      expect(st.ocr, JSON.stringify(st.ocrError ?? st.warnings)).toMatchObject({ automatic: true, engine: expect.stringMatching(/^tesseract \d/) });
      expect(st.warnings.map((w: any) => w.code)).toEqual(["NO_ACCESSIBILITY_TREE"]);
      const acc = accuracy(TK_LINES, ocrOf(st).map((e) => e.title));
      recordAccuracy("ocr.tk.automatic", acc);
      expect(acc.rate, `missing: ${acc.missing.join(" ")}`).toBeGreaterThanOrEqual(0.95);
      for (const e of ocrOf(st)) {
        expect(e).toMatchObject({ role: "label", value: null, actions: [], locator: { kind: "ocr-box", path: [] } });
        expect(inside(e.bounds, st.window.bounds), `${e.title} ${JSON.stringify(e.bounds)} inside ${JSON.stringify(st.window.bounds)}`).toBe(true);
      }
      // Each known line lies where the fixture drew it (its widget's box, screen pixels).
      for (const text of TK_LINES) expect(overlaps(el(text).bounds, boxes.get(text)!), `${text}: OCR ${JSON.stringify(el(text).bounds)} vs drawn ${JSON.stringify(boxes.get(text))}`).toBe(true);
      // Shown in the compact view too.
      const compact = await bg.request("get-app-state", { app: app(), windowId: win.xid, format: "compact" });
      expect(compact.result.snapshot.treeText).toContain('label "Open Report"');
      st = (await timed(bg, { app: app(), windowId: win.xid })).st;
    });

    rowIt("ocr.tk.click.granted", async () => {
      const open = el("Open Report");
      const box = boxes.get("Open Report")!;
      const before = pointer(desktop);
      const mark = tk.events().length;
      const t0 = performance.now();
      const r = await fg.request("click", { app: app(), elementIndex: open.index, snapshotId: st.snapshot.snapshotId });
      metric("ocr.tk.click.granted", "click_ms", Math.round(performance.now() - t0));
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result).toMatchObject({ route: "foreground_input", delivery: "submitted", elementIndex: open.index });
      await tk.waitFor((e) => e.event === "clicked", 5000, mark);
      expect(await quietViolations(tk, mark, (e) => (e.event === "clicked" && e.control === "Open Report") || ((e.event === "press" || e.event === "release") && e.control === "Open Report"))).toEqual([]);
      const got = since(tk, mark);
      expect(got.filter((e) => e.event === "clicked")).toHaveLength(1);
      const presses = got.filter((e) => e.event === "press");
      expect(presses).toHaveLength(1);
      expect(got.filter((e) => e.event === "release")).toHaveLength(1);
      const p = presses[0] as any;
      expect(p.x >= box.x && p.x < box.x + box.width && p.y >= box.y && p.y < box.y + box.height, `press at ${p.x},${p.y} inside ${JSON.stringify(box)}`).toBe(true);
      expect(pointer(desktop)).toBe(before);
      st = (await timed(bg, { app: app(), windowId: win.xid })).st;
    });

    rowIt("ocr.tk.click.ungranted", async () => {
      const mark = tk.events().length;
      const r = await bg.request("click", { app: app(), elementIndex: el("Open Report").index, snapshotId: st.snapshot.snapshotId });
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ code: "FOREGROUND_REQUIRED", details: { delivery: "not_dispatched" } });
      expect(await quietViolations(tk, mark)).toEqual([]);
    });

    rowIt("ocr.tk.refuse.set-value", async () => {
      const mark = tk.events().length;
      const target = el("Invoice number 4815 approved");
      for (const [command, args] of [
        ["set-value", { value: "9999" }],
        ["focus", {}],
      ] as const) {
        const r = await fg.request(command, { app: app(), elementIndex: target.index, snapshotId: st.snapshot.snapshotId, ...args });
        expect(r.ok, command).toBe(false);
        expect(r.error, command).toMatchObject({ code: "ACTION_UNSUPPORTED", details: { reason: "ocr-point-only", elementIndex: target.index, delivery: "not_dispatched" } });
      }
      expect(await quietViolations(tk, mark)).toEqual([]);
    });

    rowIt("ocr.tk.refuse.sensitive", async () => {
      const mark = tk.events().length;
      const r = await fg.request("click", { app: app(), elementIndex: el("Delete Draft").index, snapshotId: st.snapshot.snapshotId });
      expect(r.ok).toBe(false);
      expect(r.error).toMatchObject({ code: "CONFIRM_REQUIRED" });
      expect(await quietViolations(tk, mark)).toEqual([]);
    });

    rowIt("ocr.tk.scaled", async () => {
      // In-process, with the real helper: get-app-state's --max-width comes with the image options (issue 14 item 5).
      const engine = new Engine({ helperPath: HELPER, env: desktopEnv(desktop, { DECKHAND_STATE_DIR: stateDir }) }, permissiveSafety(false));
      try {
        const a = await resolveApp(engine, app());
        const { window } = await resolveWindow(engine, a, { windowId: win.xid });
        const shotsBefore = readdirSync(join(stateDir, "screenshots")).length;
        const t0 = performance.now();
        const o = await observe(engine, a, window, { image: { maxWidth: Math.round(window.bounds.width / 2) }, ocr: true });
        metric("ocr.tk.scaled", "observe_ms", Math.round(performance.now() - t0));
        metric("ocr.tk.scaled", "ocr_ms", o.ocr?.ms ?? -1);
        expect(o.screenshot!.scale).toBeLessThan(0.55);
        const read = o.elements.filter((e) => e.source === "ocr");
        const full = accuracy(TK_LINES, read.map((e) => e.title));
        recordAccuracy("ocr.tk.scaled", full, "fullres_");
        expect(full.rate, `missing: ${full.missing.join(" ")}`).toBeGreaterThanOrEqual(0.95);
        for (const text of ["Open Report", "Quarterly Report Overview"]) {
          const line = lineFor({ snapshot: { elements: read } }, text);
          expect(overlaps(line.bounds, boxes.get(text)!), `${text} ${JSON.stringify(line.bounds)}`).toBe(true);
        }
        // The half-size image itself, read as it is: what the full-resolution capture saves.
        const scaled = await readText(o.screenshot!.path, process.env);
        const half = accuracy(TK_LINES, scaled.lines.map((l) => l.text));
        recordAccuracy("ocr.tk.scaled", half, "halfsize_");
        // Only the observation's own image is kept.
        expect(readdirSync(join(stateDir, "screenshots")).length).toBe(shotsBefore + 1);
      } finally {
        await engine.close();
      }
    });
  });

  describe("LibreOffice Writer on its X11 plugin (no tree)", () => {
    let lo: TreeApp;
    let dir: string;
    beforeAll(async () => {
      // A fresh directory: a lock file left by a killed soffice would show a dialog instead of the document.
      dir = mkdtempSync(join(tmpdir(), "deckhand-ocr-lo-"));
      const doc = writerDocument(dir, "ocr-known", DOC_LINES);
      const profile = libreOfficeProfile();
      lo = await launchAppTree(desktop, sofficeArgv("--writer", profile, doc), { env: { SAL_USE_VCLPLUGIN: "gen" }, timeoutMs: 120_000, titleMatches: /ocr-known/ });
    }, 150_000);
    afterAll(async () => {
      await lo?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    rowIt("ocr.lo-gen.automatic", async () => {
      // The document is drawn a moment after the window maps.
      const { st, ms } = await waitUntil("Writer's document text read", 30_000, async () => {
        const o = await timed(bg, { app: `pid:${lo.pid}`, windowId: lo.windows[0] });
        return accuracy(DOC_LINES, ocrOf(o.st).map((e) => e.title)).rate >= 0.9 ? o : undefined;
      });
      timing("ocr.lo-gen.automatic", st, ms);
      expect(st.ocr.automatic).toBe(true);
      expect(st.warnings[0].code).toBe("NO_ACCESSIBILITY_TREE");
      const doc = accuracy(DOC_LINES, ocrOf(st).map((e) => e.title));
      recordAccuracy("ocr.lo-gen.automatic", doc);
      const titles = ocrOf(st).map((e) => e.title);
      const menu = LO_MENU.filter((m) => titles.includes(m));
      metric("ocr.lo-gen.automatic", "menu_items_read", `${menu.length}/${LO_MENU.length}`);
      expect(menu.length, `menu items read as their own elements: ${menu.join(" ")}`).toBeGreaterThanOrEqual(8);
      for (const e of ocrOf(st)) expect(inside(e.bounds, st.window.bounds), `${e.title} ${JSON.stringify(e.bounds)}`).toBe(true);
    });
  });

  // gtk3-widget-factory, FeatherPad, Chromium and the GTK3 fixture (a revealed password): shared with the Wayland run.
  ocrTreeRows("x11", () => x11Desk(desktop), FILE);

  describe("a denied app", () => {
    rowIt("ocr.xterm.refused", async () => {
      const term = await launchApp(desktop, ["/usr/bin/xterm", "-geometry", "60x10+900+600", "-e", "sh", "-c", "echo Disk usage report ready; sleep 120"]);
      try {
        const shots = () => (existsSync(join(stateDir, "screenshots")) ? readdirSync(join(stateDir, "screenshots")).length : 0);
        const before = shots();
        const r = await bg.request("get-app-state", { app: `pid:${term.pid}`, ocr: true });
        expect(r.ok).toBe(false);
        expect(r.error).toMatchObject({ code: "POLICY_DENIED", details: { source: "builtin", rule: "builtin:terminal:xterm" } });
        expect(shots()).toBe(before);
      } finally {
        await term.stop();
      }
    });
  });
});
