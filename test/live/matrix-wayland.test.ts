// The acceptance matrix on the Wayland desktop (issue 19): every GTK3
// fixture row that applies there (rows.ts `wayland`), through the compiled
// deckhand serve on a private sway desktop (`deckhand desktop start
// --wayland`), with the same runners as the X11 run (matrix/fixture-runners.ts)
// and Wayland's own oracles (matrix/wayland-oracles.ts: the fixture's log,
// sway's focus and tree). Then the refusals Wayland forces, and the real
// GTK3 apps. Results go to .state/matrix-results.json under `wayland:<id>`,
// and count only after proveWaylandOracles passed in this run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDesktop, type Desktop } from "../../src/desktop/index.ts";
import type { Fixture } from "./harness.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { describeWayland, swaymsg, swayViews } from "./wayland.ts";
import { expectationOn, ROWS, type MatrixRow } from "./matrix/rows.ts";
import { record as recordRow } from "./matrix/results.ts";
import { proveWaylandOracles, settledTree, waylandOracleProof, type WaylandDesktop } from "./matrix/wayland-oracles.ts";
import { waylandDesk } from "./matrix/wayland-desk.ts";
import { BUTTON, find, FIXTURE_RUNNERS, receivedNothing, type Ctx, type Runner } from "./matrix/fixture-runners.ts";
import { mousepadRow, widgetFactoryRows } from "./matrix/app-runners.ts";
import { toolkitAppRows } from "./matrix/toolkit-app-rows.ts";
import { KITS, toolkitFixtureRows } from "./matrix/toolkit-fixture-rows.ts";
import { browserRows, BROWSERS } from "./matrix/web-rows.ts";
import { libreOfficeRows } from "./matrix/libreoffice-rows.ts";
import { observationRows } from "./matrix/observation-rows.ts";
import { marksRows } from "./matrix/marks-rows.ts";
import { ocrTreeRows } from "./matrix/ocr-rows.ts";
import { ocrNoTreeRows } from "./matrix/ocr-notree-rows.ts";
import { observeDirectRows } from "./matrix/observe-direct-rows.ts";
import { imageOptionsRows } from "./matrix/image-options-rows.ts";
import { pointClickFixtureRows } from "./matrix/point-click-rows.ts";
import { pointClickAppRows } from "./matrix/point-click-app-rows.ts";
import { menuRows } from "./matrix/menu-rows.ts";
import { lifecycleRows } from "./matrix/lifecycle-rows.ts";
import { dragRows } from "./matrix/drag-rows.ts";
import { clipboardWaylandRows } from "./matrix/clipboard-wayland-rows.ts";

const FILE = "matrix-wayland.test.ts";

function record(id: string, fn: () => Promise<void>): Promise<void> {
  return recordRow(id, FILE, fn, "wayland");
}

/** The rows this file runs on Wayland: the GTK3 fixture's and the Wayland-only ones (not notApplicable, not pending). */
function waylandFixtureRows(): MatrixRow[] {
  return ROWS.filter((r) => r.app === "fixture" && (r.id.startsWith("fixture.") || (r.id.startsWith("wayland.") && !r.id.startsWith("wayland.clipboard."))) && "expect" in expectationOn(r, "wayland"));
}

/** A fixture of the row's own whose windows sway rearranges (the shared one keeps its layout). */
async function withOwnFixture(ctx: Ctx, body: (f: Fixture, main: number, second: number) => Promise<void>): Promise<void> {
  const f = await ctx.desk.launchFixture();
  try {
    const main = await ctx.desk.windowId(f, "deckhand fixture");
    const second = await ctx.desk.windowId(f, "deckhand fixture 2");
    await body(f, main, second);
  } finally {
    await f.stop();
  }
}

/** Rows only Wayland has: refusals its compositor forces (sway 1.7 captures the screen, not a window). */
const WAYLAND_RUNNERS: Record<string, Runner> = {
  async "wayland.screenshot.covered"(ctx) {
    await withOwnFixture(ctx, async (f, main, second) => {
      const view = (await swayViews(ctx.desk.desktop.env)).find((v) => v.id === main)!;
      await swaymsg(ctx.desk.desktop.env, "command", `[con_id=${second}] floating enable, move position ${view.rect.x + 40} ${view.rect.y + 40}`);
      await settledTree(ctx.desk.desktop);
      const mark = f.events().length;
      const r = await ctx.bg.request("screenshot", { app: `pid:${f.pid}`, windowId: main });
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe("SCREENSHOT_FAILED");
      expect(r.error?.message).toMatch(new RegExp(`window ${main} is covered by window ${second} `));
      await receivedNothing(f, mark);
    });
  },
  async "wayland.screenshot.not-shown"(ctx) {
    await withOwnFixture(ctx, async (f, _main, second) => {
      await swaymsg(ctx.desk.desktop.env, "command", `[con_id=${second}] move scratchpad`);
      await settledTree(ctx.desk.desktop);
      const mark = f.events().length;
      const r = await ctx.bg.request("screenshot", { app: `pid:${f.pid}`, windowId: second });
      expect(r.ok).toBe(false);
      expect(r.error?.code).toBe("SCREENSHOT_FAILED");
      expect(r.error?.message).toMatch(new RegExp(`window ${second} is not shown`));
      // Its tree is still there: only the capture is refused.
      const st = await ctx.bg.ok("get-app-state", { app: `pid:${f.pid}`, windowId: second, noScreenshot: true });
      find(st, BUTTON, "Second OK");
      await receivedNothing(f, mark);
    });
  },
};

/** In the caller's describe: its rows run on a sway workspace of their own, and the workspace shown before comes back after them. */
function onOwnWorkspace(desktop: () => WaylandDesktop, name: string): void {
  let home = "";
  beforeAll(async () => {
    home = ((await swaymsg(desktop().env, "get_workspaces")) as { name: string; focused: boolean }[]).find((w) => w.focused)!.name;
    await swaymsg(desktop().env, "command", `workspace ${name}`);
  });
  afterAll(async () => void (await swaymsg(desktop().env, "command", `workspace ${home}`)));
}

describeWayland("acceptance matrix on Wayland (sway)", () => {
  let desktop: Desktop | undefined;
  let wd: WaylandDesktop;
  const ctx = {} as Ctx;
  beforeAll(async () => {
    requireBuild();
    desktop = await startDesktop({ wayland: true, width: 1920, height: 1080, seatDevices: HELPER });
    wd = { env: desktop.env, display: desktop.display, root: desktop.root };
    ctx.desk = waylandDesk(wd);
    // Before any row counts: the Wayland oracles must catch what they are there to catch.
    await proveWaylandOracles(wd);
    ctx.stateDir = newStateDir();
    ctx.fixture = await ctx.desk.launchFixture();
    ctx.mainWindow = await ctx.desk.windowId(ctx.fixture, "deckhand fixture");
    // The rows start from the main window focused and a layout that holds still.
    await swaymsg(wd.env, "command", `[con_id=${ctx.mainWindow}] focus`);
    await settledTree(wd);
    ctx.bg = new Serve(wd, { stateDir: ctx.stateDir });
    ctx.fg = new Serve(wd, { stateDir: ctx.stateDir, args: ["--allow-foreground"] });
  }, 120_000);
  afterAll(async () => {
    await ctx.bg?.close();
    await ctx.fg?.close();
    await ctx.fixture?.stop();
    await desktop?.stop();
  });

  it("oracle self-check: a focus steal, a pointer nudge, a tree change and a stray keystroke are each caught", () => {
    const proof = waylandOracleProof();
    for (const c of proof?.checks ?? []) console.log(`[wayland oracles] ${c.injection} -> ${c.oracle}: ${c.caught ? "caught" : "quiet"} ${JSON.stringify(c.report).slice(0, 200)}`);
    expect(proof?.ok, JSON.stringify(proof, null, 2)).toBe(true);
    for (const c of proof!.checks) expect(c.caught, c.injection).toBe(c.injection !== "none");
  });

  for (const r of waylandFixtureRows()) {
    const want = expectationOn(r, "wayland");
    it(`${r.id}: ${r.action} -> ${"expect" in want ? want.expect : ""}`, async () => {
      // A refusal Wayland forces on a row that is delivered on X11 needs a runner of its own.
      const run = r.expect === (want as { expect: string }).expect ? (WAYLAND_RUNNERS[r.id] ?? FIXTURE_RUNNERS[r.id]) : WAYLAND_RUNNERS[r.id];
      if (!run) throw new Error(`row ${r.id} has no Wayland runner`);
      await record(r.id, () => run(ctx));
    }, 60_000);
  }

  it("widget-factory.observe / set-value.entry / click.page (native Wayland)", async () => {
    const app = await ctx.desk.launchAppTree(["/usr/bin/gtk3-widget-factory"]);
    try {
      await widgetFactoryRows(ctx.bg, app.pid, record);
    } finally {
      await app.stop();
    }
  }, 120_000);

  // The GTK4 and Qt5 fixtures' rows, each fixture on a workspace of its own (tiled beside the GTK3 fixture's windows it would be cramped).
  for (const kit of KITS) {
    describe(`${kit.app} (native Wayland)`, () => {
      onOwnWorkspace(() => wd, kit.prefix);
      toolkitFixtureRows("wayland", () => ctx.desk, FILE, kit);
    });
  }

  // The real GTK4 and Qt5 apps' rows (gtk4-demo, FeatherPad through qtwayland5), as on X11.
  toolkitAppRows("wayland", () => ctx.desk, FILE);

  // The browsers' rows on the web fixture, Chromium (--ozone-platform=wayland) and Firefox (MOZ_ENABLE_WAYLAND=1) as native Wayland clients.
  for (const b of BROWSERS) describe(`${b.id} on the web fixture (native Wayland)`, () => browserRows("wayland", () => ctx.desk, FILE, b));

  // LibreOffice Writer and Calc on its gtk3 plugin, a native Wayland client.
  describe("LibreOffice (native Wayland)", () => libreOfficeRows("wayland", () => ctx.desk, FILE));

  // Compact observation, pages and diffs (issue 14) on the same apps as on X11.
  describe("compact observation, pages and diffs (native Wayland)", () => observationRows("wayland", () => ctx.desk, FILE));

  // Set-of-marks (issue 14) on the same apps as on X11.
  describe("set-of-marks (native Wayland)", () => marksRows("wayland", () => ctx.desk, FILE));

  // OCR beside a tree (issue 14): gtk3-widget-factory, FeatherPad, Chromium and a GTK3 fixture of the rows' own, on a
  // workspace of their own (the fixture would tile beside the shared fixture's windows, a quarter of the screen).
  describe("OCR beside a tree (native Wayland)", () => {
    onOwnWorkspace(() => wd, "ocr");
    ocrTreeRows("wayland", () => ctx.desk, FILE);
  });

  // OCR where there is no tree (issue 14): the Tk fixture, LibreOffice on its X11 plugin and xterm as Xwayland windows,
  // on a workspace of their own.
  describe("OCR without a tree (Xwayland)", () => {
    onOwnWorkspace(() => wd, "ocr-notree");
    ocrNoTreeRows("wayland", () => ctx.desk, FILE);
  });

  // Observation over the app's own socket (issue 15), deckhand and its helper run as the apps' user (as users run it:
  // an app's socket accepts its own uid only), on a workspace of their own.
  describe("observation over a direct connection (native Wayland)", () => {
    onOwnWorkspace(() => wd, "observe-direct");
    observeDirectRows("wayland", () => ctx.desk, FILE);
  });

  // Screenshot options (issue 14) on the GTK3 fixture, the whole screen and the same real apps as on X11, on a
  // workspace of their own: the fixture's windows unobscured and the shared fixture's layout untouched.
  describe("image options (native Wayland)", () => {
    onOwnWorkspace(() => wd, "image-options");
    imageOptionsRows("wayland", () => ctx.desk, FILE);
  });

  // Point clicks on the GTK3 fixture (issue 15): one point_click per click; a program's final observation after typed keys.
  describe("point clicks on the GTK3 fixture (native Wayland)", () => pointClickFixtureRows("wayland", () => ctx.desk, FILE, () => ctx.stateDir));

  // Point clicks on real apps (issue 15): gtk3-widget-factory and the Qt5 fixture, on a workspace of their own.
  describe("point clicks on real apps (native Wayland)", () => {
    onOwnWorkspace(() => wd, "point-click");
    pointClickAppRows("wayland", () => ctx.desk, FILE, () => ctx.stateDir);
  });

  // Menus by path (issue 13) on the same apps as on X11, on a workspace of their own (the shared fixture's windows stay as they are);
  // "no menu left open" is read from each app's accessibility tree there (matrix/menu-oracle.ts).
  describe("menus by path (native Wayland)", () => {
    onOwnWorkspace(() => wd, "menus");
    menuRows("wayland", () => ctx.desk, FILE);
  });

  // App lifecycle (issue 13): launch through deckhand (apps as the desktop's user, native Wayland clients), activate, --restore-window, quit; on a workspace of its own (the launched apps' windows would tile beside the fixture's).
  describe("app lifecycle: launch, list-apps --all, activate, --restore-window, quit (native Wayland)", () => {
    onOwnWorkspace(() => wd, "lifecycle");
    lifecycleRows("wayland", () => ctx.desk, FILE);
  });

  // Element drag, the foreground lease and serve retries (issue 13) on the same apps as on X11, on a workspace of their own
  // (the drag row floats and moves the DnD fixture's window; the shared fixture's windows stay as they are).
  describe("element drag, lease, serve retries (native Wayland)", () => {
    onOwnWorkspace(() => wd, "drag");
    dragRows("wayland", () => ctx.desk, FILE);
  });

  // The clipboard (issue 13) through wlr-data-control, with wl-copy / wl-paste and a logging data-control owner as oracles,
  // on a workspace of its own with a GTK3 fixture of its own (the paste rows focus it).
  describe("clipboard (native Wayland)", () => {
    onOwnWorkspace(() => wd, "clipboard");
    clipboardWaylandRows("wayland", () => ctx.desk, FILE);
  });

  it("mousepad.type-select-replace-undo (native Wayland)", async () => {
    await record("mousepad.type-select-replace-undo", async () => {
      const app = await ctx.desk.launchAppTree(["/usr/bin/mousepad", "--disable-server"]);
      try {
        await mousepadRow(ctx.bg, app.pid);
      } finally {
        await app.stop();
      }
    });
  }, 120_000);
});
