// OCR where there is no tree (issue 14 item 4), on the X11 apps that have
// none: the Tk fixture (test/fixtures/apps/tk_fixture.py: Tk has no
// accessibility bridge) is read without being asked, its known text found
// where the fixture says it drew it; its OCR'd button is clicked by point
// under the foreground grant (the fixture logs exactly one click), refused
// without it, and every other element action on OCR text is refused
// ocr-point-only; a half-size observation reads a full-resolution capture.
// LibreOffice on its plain X11 plugin is read automatically; xterm (a
// built-in denied terminal) is refused before anything is captured.
// Registered on a desk (desk.ts): the X11 run (test/live/ocr.test.ts) and
// the Wayland run (test/live/matrix-wayland.test.ts), where these X11 apps
// are Xwayland windows (desk.xDisplay), run as the apps' user, which the
// helper drives by X11's rules.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { Engine } from "../../../src/engine/engine.ts";
import { observe } from "../../../src/engine/observe.ts";
import { readText } from "../../../src/engine/ocr.ts";
import { resolveApp, resolveWindow } from "../../../src/engine/resolve.ts";
import { permissiveSafety } from "../../../src/engine/safety.ts";
import { libreOfficeProfile, sofficeArgv, writerDocument } from "../app-profiles.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { desktopEnv, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { rowTest, type MatrixDesk } from "./desk.ts";
import { accuracy, DOC_LINES, inside, lineFor, ocrOf, overlaps, recordAccuracy, timed, timing, type Rect } from "./ocr-rows.ts";
import { pointer, quietViolations, since } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";

const TK_FIXTURE = join(import.meta.dirname, "..", "..", "fixtures", "apps", "tk_fixture.py");
const TK_LINES = ["Quarterly Report Overview", "Invoice number 4815 approved", "Shipping address confirmed", "Small print: delivery within seven working days", "Open Report", "Delete Draft"];
const LO_MENU = ["File", "Edit", "View", "Insert", "Format", "Styles", "Table", "Form", "Tools", "Window", "Help"];

/** Registers the no-tree OCR rows inside the caller's describe; `file` names the test file in the results. */
export function ocrNoTreeRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  let stateDir: string;
  let fg: Serve;
  let bg: Serve;
  beforeAll(async () => {
    requireBuild();
    execFileSync("tesseract", ["--version"], { stdio: "ignore" });
    await desk().proveOracles();
    stateDir = newStateDir();
    fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground"] });
    bg = new Serve(desk().desktop, { stateDir });
  }, 90_000);
  afterAll(async () => {
    await fg?.close();
    await bg?.close();
  });
  const rowIt = rowTest(on, desk, file, 120_000);
  /** The X server's pointer (X11); Wayland: null, no client can read it. */
  const xPointer = (): string | null => (desk().kind === "x11" ? pointer(desk().desktop) : null);

  describe("the Tk fixture (no tree)", () => {
    let tk: Fixture;
    let win: { xid: number; x: number; y: number; width: number; height: number };
    let boxes: Map<string, Rect>;
    let st: any;
    const app = () => `pid:${tk.pid}`;
    const el = (text: string) => lineFor(st, text);

    beforeAll(async () => {
      // An X11 app: on Wayland an Xwayland window (the helper drives it by X11's rules), run as the apps' user.
      tk = await desk().launchFixture({ timeoutMs: 30_000, env: { DISPLAY: desk().xDisplay() } }, TK_FIXTURE);
      const ready = tk.events().find((e) => e.event === "ready") as any;
      win = { ...ready.windows[0], xid: await desk().windowId(tk, ready.windows[0].title) };
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
      const before = xPointer();
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
      // X11: the pointer is back where it was; Wayland: never put back (the receipt says so), and nothing reads where it is.
      expect(r.result.cleanup.pointer_restored).toBe(desk().restoresPointer);
      expect(xPointer()).toBe(before);
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
      const engine = new Engine({ helperPath: HELPER, env: desktopEnv(desk().desktop, { DECKHAND_STATE_DIR: stateDir }) }, permissiveSafety(false));
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
      desk().handOver(dir);
      desk().handOver(profile);
      lo = await desk().launchAppTree(sofficeArgv("--writer", profile, doc), { env: { SAL_USE_VCLPLUGIN: "gen", DISPLAY: desk().xDisplay() }, timeoutMs: 120_000, titleMatches: /ocr-known/ });
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

  describe("a denied app", () => {
    rowIt("ocr.xterm.refused", async () => {
      const term = await desk().launchAppTree(["/usr/bin/xterm", "-geometry", "60x10+900+600", "-e", "sh", "-c", "echo Disk usage report ready; sleep 120"], { env: { DISPLAY: desk().xDisplay() } });
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
}
