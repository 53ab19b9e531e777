// Menus by path (issue 13): `menu list` and `menu click` against the GTK3
// and Qt5 fixtures (test/fixtures/apps/fixture_app.py and qt5_fixture.py
// log every menu activation), two real editors, mousepad (GTK3) and
// FeatherPad (Qt5), the browsers' context menus of web elements on
// test/fixtures/web/context.html (the page POSTs what it received to a
// loopback server), LibreOffice Writer and the GTK 4 fixture. Rows:
// rows.ts ("menus."). Registered on a desk (desk.ts): test/live/menus.test.ts
// (X11) and test/live/matrix-wayland.test.ts share them.
// Every row ends with no menu of its app open (desk.openMenus: X11, no popup
// window; Wayland, no item shown inside a menu in the app's tree), an
// oracle proved once per run on the GTK3 fixture before any row counts.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { browserArgv, browserProfile, FIREFOX_ENV, libreOfficeProfile, sofficeArgv } from "../app-profiles.ts";
import { newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { desktopEnv, GTK4_FIXTURE, QT5_FIXTURE, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { nativeBrowserArgv, rowTest, startFailed, type MatrixDesk } from "./desk.ts";
import { since, unexpectedEvents } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { observeTimed, waitAccessible } from "./toolkit.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request, timed (ms), as {ok, result, error}. */
async function timed(s: Serve, command: string, args: Record<string, unknown>): Promise<{ r: any; ms: number }> {
  const t0 = performance.now();
  const r = await s.request(command, args);
  return { r, ms: Math.round(performance.now() - t0) };
}

/**
 * What a menu's grab makes a fixture log without anyone touching it: focus
 * moves (the menu takes the keyboard), and on Wayland the pointer's leave
 * and enter where it stands (the xdg_popup's grab takes the pointer focus,
 * then gives it back). Motion or buttons are not the grab's: the rows that
 * allow these also require the pointer oracle unchanged.
 */
const menuGrab = (e: { event: string; kind?: unknown }) => e.event === "focus" || (e.event === "pointer" && (e.kind === "enter" || e.kind === "leave"));

/** The menu entry with this path in a menu list's items, at any depth. */
export function findItem(items: any[], path: string): any {
  for (const e of items) {
    if (e.path === path) return e;
    const inner = findItem(e.children, path);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * The open-menu oracle's self-check on a GTK3 fixture of its own: quiet
 * with every menu closed, it reports File opened through accessibility
 * (pyatspi, not deckhand), and is quiet again once the menu bar's
 * selection is cleared. Returns what it saw; throws when it missed.
 */
async function proveMenuOracle(desk: MatrixDesk, s: Serve): Promise<string[]> {
  const f = await desk.launchFixture();
  const seen: string[] = [];
  try {
    await waitAccessible(s, f.pid);
    const idle = await desk.openMenus(s, f.pid);
    seen.push(`closed: ${JSON.stringify(idle)}`);
    if (idle.length) throw new Error(`the open-menu oracle reports a menu open before any was opened: ${idle.join("; ")}`);
    await desk.toggleMenu(f.pid, { open: "File" });
    const open = await waitUntil("the open-menu oracle to report File open", 5000, async () => {
      const m = await desk.openMenus(s, f.pid);
      return m.length ? m : undefined;
    });
    seen.push(`File opened: ${JSON.stringify(open)}`);
    await desk.toggleMenu(f.pid, "close");
    await waitUntil("the open-menu oracle quiet again once File is closed", 5000, async () => ((await desk.openMenus(s, f.pid)).length === 0 ? true : undefined));
    seen.push("closed again: []");
    return seen;
  } finally {
    await f.stop();
  }
}

/** Registers the menus rows inside the caller's describe; `file` names the test file in the results. */
export function menuRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  let bg: Serve;
  let fg: Serve;
  let proof: { seen: string[]; error?: Error } | undefined;
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    const stateDir = newStateDir();
    bg = new Serve(desk().desktop, { stateDir });
    fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground"] });
    try {
      proof = { seen: await proveMenuOracle(desk(), bg) };
    } catch (err) {
      proof = { seen: [], error: err as Error };
    }
  }, 120_000);
  afterAll(async () => {
    await bg?.close();
    await fg?.close();
  });

  /** Why an app could not be started: its rows then fail, recorded, with that reason. */
  const startFailure = new Map<string, Error>();
  const proved = () => {
    if (proof?.error) throw new Error(`the open-menu oracle failed its self-check: ${proof.error.message}`);
  };
  const rowIt = rowTest(on, desk, file, 90_000, proved);
  const appRowIt = rowTest(on, desk, file, 180_000, (id) => (proved(), startFailed(startFailure, id.split(".")[1]!)));

  it(`open-menu oracle self-check (${on}): a menu opened through accessibility is reported, none once it is closed`, () => {
    console.log(`[menus] open-menu oracle on ${on}: ${proof?.seen.join("; ")}`);
    expect(proof?.error?.message).toBeUndefined();
    expect(proof?.seen).toHaveLength(3);
  });

  async function expectNoMenuOpen(pid: number): Promise<void> {
    // A menu closes in the app's next frames: a short bounded wait.
    const open = await waitUntil("no menu of the app open", 3000, async () => ((await desk().openMenus(bg, pid)).length === 0 ? true : undefined)).catch(async () => desk().openMenus(bg, pid));
    expect(open, "a menu of the app is still open").toBe(true);
  }

  // ---------------------------------------------------------------- GTK3 fixture
  describe("GTK3 fixture", () => {
    let f: Fixture;
    let win: number;
    const app = () => `pid:${f.pid}`;
    beforeAll(async () => {
      f = await desk().launchFixture();
      win = await desk().windowId(f, "deckhand fixture");
      await waitAccessible(bg, f.pid);
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });
    /** What the fixture logged since mark apart from menu activations and what a menu's grab causes (menuGrab). */
    const others = (mark: number) => unexpectedEvents(f, mark, (e) => e.event === "menu" || menuGrab(e));

    rowIt("menus.fixture.list", async () => {
      const mark = f.events().length;
      const { r, ms } = await timed(bg, "menu-list", { app: app(), windowId: win });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.fixture.list", "list_ms", ms);
      metric("menus.fixture.list", "items", r.result.itemCount);
      console.log(`[menus] fixture menu list: ${ms} ms, ${r.result.itemCount} items`);
      expect(r.result.items.map((e: any) => e.name)).toEqual(["File", "Edit", "View"]);
      expect(findItem(r.result.items, "File>Recent>One")).toMatchObject({ enabled: true, submenu: false });
      expect(findItem(r.result.items, "File>Save As…")).toMatchObject({ shortcut: "ctrl+shift+s" });
      expect(findItem(r.result.items, "View>Word Wrap")).toMatchObject({ checked: false, shortcut: "ctrl+shift+w", enabled: true });
      expect(findItem(r.result.items, "View>Zoom In")).toMatchObject({ shortcut: "ctrl+plus", checked: null });
      expect(findItem(r.result.items, "View>Print Preview")).toMatchObject({ enabled: false });
      expect(findItem(r.result.items, "View>Small Icons")).toMatchObject({ checked: true });
      expect(findItem(r.result.items, "View>Large Icons")).toMatchObject({ checked: false });
      expect(findItem(r.result.items, "View>Legacy")).toMatchObject({ enabled: false, submenu: true });
      expect(findItem(r.result.items, "View>Panels>Sidebar")).toMatchObject({ checked: false });
      expect(r.result.truncated).toBe(false);
      expect(since(f, mark).filter((e) => e.event === "menu")).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.fixture.click-nested", async () => {
      const before = await desk().scene(f);
      const mark = f.events().length;
      const { r, ms } = await timed(bg, "menu-click", { app: app(), windowId: win, path: "View>Panels>Sidebar" });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.fixture.click-nested", "click_ms", ms);
      console.log(`[menus] fixture menu click View>Panels>Sidebar: ${ms} ms`);
      expect(r.result).toMatchObject({ path: "View>Panels>Sidebar", opened: ["View", "Panels"], activated: true, route: "accessibility" });
      expect(r.result.verification).toMatchObject({ verified: true, menuClosed: true, checked: { before: false, after: true } });
      await f.waitFor((e) => e.event === "menu", 5000, mark);
      await sleep(300);
      expect(since(f, mark).filter((e) => e.event === "menu")).toEqual([expect.objectContaining({ item: "Sidebar", path: "View/Panels/Sidebar", active: true })]);
      expect(others(mark)).toEqual([]);
      // The grab's pointer crossings aside, the pointer did not move.
      expect(desk().pointerViolations(before, await desk().scene(f))).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.fixture.refuse.missing", async () => {
      const mark = f.events().length;
      const r = await bg.request("menu-click", { app: app(), windowId: win, path: "View>Panels>Toolbar" });
      expect(r.error?.code, JSON.stringify(r)).toBe("MENU_ITEM_NOT_FOUND");
      expect(r.error!.details).toMatchObject({ level: 3, available: "Sidebar", delivery: "not_dispatched" });
      await sleep(300);
      expect(since(f, mark)).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.fixture.refuse.disabled", async () => {
      const mark = f.events().length;
      const item = await bg.request("menu-click", { app: app(), windowId: win, path: "View>Print Preview" });
      expect(item.error?.code, JSON.stringify(item)).toBe("MENU_ITEM_DISABLED");
      expect(item.error!.details).toMatchObject({ level: 2, name: "Print Preview" });
      const via = await bg.request("menu-click", { app: app(), windowId: win, path: "View>Legacy>Old Thing" });
      expect(via.error?.code, JSON.stringify(via)).toBe("MENU_ITEM_DISABLED");
      expect(via.error!.details).toMatchObject({ level: 2, name: "Legacy" });
      await sleep(300);
      expect(since(f, mark)).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.fixture.refuse.confirm-required", async () => {
      const mark = f.events().length;
      const r = await bg.request("menu-click", { app: app(), windowId: win, path: "View>Delete All" });
      expect(r.error?.code, JSON.stringify(r)).toBe("CONFIRM_REQUIRED");
      await sleep(300);
      expect(since(f, mark)).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.fixture.context.not-exposed", async () => {
      const { st } = await observeTimed(bg, { app: app(), windowId: win });
      const name = st.snapshot.elements.find((e: any) => e.title === "Name" && /^text_/.test(e.role));
      expect(name, "the Name entry").toBeDefined();
      const mark = f.events().length;
      const r = await bg.request("menu-list", { app: app(), windowId: win, elementIndex: name.index, snapshotId: st.snapshot.snapshotId });
      expect(r.error?.code, JSON.stringify(r)).toBe("MENU_NOT_EXPOSED");
      expect(r.error!.details).toMatchObject({ reason: "no-show-menu-action", delivery: "not_dispatched" });
      await sleep(300);
      expect(since(f, mark)).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });
  });

  // ---------------------------------------------------------------- Qt5 fixture
  describe("Qt5 fixture", () => {
    let f: Fixture;
    let win: number;
    const app = () => `pid:${f.pid}`;
    beforeAll(async () => {
      // DECKHAND_FIXTURE_MENU_LOG: the Tools menu logs menu_shown / menu_hidden (the context row's oracle).
      f = await desk().launchFixture({ env: { QT_ACCESSIBILITY: "1", DECKHAND_FIXTURE_MENU_LOG: "1" } }, QT5_FIXTURE);
      win = await desk().windowId(f, (f.events().find((e) => e.event === "ready") as any).windows[0].title);
      await waitAccessible(bg, f.pid);
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });

    rowIt("menus.qt5-fixture.list", async () => {
      const mark = f.events().length;
      const { r, ms } = await timed(bg, "menu-list", { app: app(), windowId: win });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.qt5-fixture.list", "list_ms", ms);
      metric("menus.qt5-fixture.list", "items", r.result.itemCount);
      console.log(`[menus] qt5 fixture menu list: ${ms} ms, ${r.result.itemCount} items`);
      expect(r.result.items.map((e: any) => e.name)).toEqual(["File", "View"]);
      expect(findItem(r.result.items, "File>New")).toMatchObject({ shortcut: "ctrl+n" });
      expect(findItem(r.result.items, "File>Recent>Two")).toMatchObject({ enabled: true });
      expect(findItem(r.result.items, "View>Word Wrap")).toMatchObject({ shortcut: "ctrl+shift+w" });
      expect(findItem(r.result.items, "View>Print Preview")).toMatchObject({ enabled: false });
      expect(findItem(r.result.items, "View>Small Icons")).toMatchObject({ checked: true });
      expect(findItem(r.result.items, "View>Legacy")).toMatchObject({ enabled: false, submenu: true });
      expect(since(f, mark).filter((e) => e.event === "menu")).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.qt5-fixture.click-nested", async () => {
      const before = await desk().scene(f);
      const mark = f.events().length;
      const { r, ms } = await timed(bg, "menu-click", { app: app(), windowId: win, path: "View>Panels>Sidebar" });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.qt5-fixture.click-nested", "click_ms", ms);
      console.log(`[menus] qt5 fixture menu click View>Panels>Sidebar: ${ms} ms`);
      expect(r.result).toMatchObject({ opened: ["View", "Panels"], activated: true });
      expect(r.result.verification).toMatchObject({ verified: true, menuClosed: true, checked: { before: false, after: true } });
      await f.waitFor((e) => e.event === "menu", 5000, mark);
      await sleep(300);
      expect(since(f, mark).filter((e) => e.event === "menu")).toEqual([expect.objectContaining({ item: "Sidebar", path: "View/Panels/Sidebar", active: true })]);
      expect(unexpectedEvents(f, mark, (e) => e.event === "menu" || menuGrab(e))).toEqual([]);
      expect(desk().pointerViolations(before, await desk().scene(f))).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });

    rowIt("menus.qt5-fixture.context", async () => {
      const { st } = await observeTimed(fg, { app: app(), windowId: win });
      const tools = st.snapshot.elements.find((e: any) => e.title === "Tools" && e.role === "button");
      expect(tools?.actions, "the Tools button advertises show_menu").toContain("show_menu");
      const mark = f.events().length;
      const { r, ms } = await timed(fg, "menu-list", { app: app(), windowId: win, elementIndex: tools.index, snapshotId: st.snapshot.snapshotId });
      metric("menus.qt5-fixture.context", "list_ms", ms);
      console.log(`[menus] qt5 fixture context menu: ${ms} ms -> ${r.ok ? "ok" : `${r.error?.code} ${JSON.stringify(r.error?.details)}`}`);
      expect(r.error?.code, JSON.stringify(r)).toBe("MENU_NOT_EXPOSED");
      // deckhand counts the app's new popup windows: X11 has one; sway's tree lists no xdg_popup, so none there.
      expect(r.error!.details).toMatchObject({ reason: "popup-not-in-tree", popupWindows: desk().kind === "x11" ? 1 : 0, closed: true, closedBy: "escape", leftOpen: false });
      await sleep(300);
      // The fixture's own word: its Tools menu opened once and closed again (the one oracle of it on Wayland,
      // where the popup is neither a window a client sees nor in the tree), and nothing was activated.
      expect(since(f, mark).filter((e) => e.event === "menu_shown" || e.event === "menu_hidden").map((e) => `${e.event} ${e.menu}`)).toEqual(["menu_shown Tools", "menu_hidden Tools"]);
      expect(since(f, mark).filter((e) => e.event === "menu")).toEqual([]);
      await expectNoMenuOpen(f.pid);
    });
  });

  // ---------------------------------------------------------------- mousepad (GTK3)
  describe("mousepad", () => {
    let a: TreeApp | undefined;
    beforeAll(async () => {
      try {
        a = await desk().launchAppTree(["/usr/bin/mousepad", "--disable-server"]);
        await waitAccessible(bg, a.pid);
      } catch (err) {
        startFailure.set("mousepad", err as Error);
      }
    }, 90_000);
    afterAll(async () => {
      await a?.stop();
    });
    const doc = async () => {
      const st = await bg.ok("get-app-state", { app: `pid:${a!.pid}`, noScreenshot: true, maxNodes: 5000 });
      return st.snapshot.elements.find((e: any) => e.role === "text_area");
    };

    appRowIt("menus.mousepad.list-click", async () => {
      const app = `pid:${a!.pid}`;
      const { r, ms } = await timed(bg, "menu-list", { app });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.mousepad.list-click", "list_ms", ms);
      metric("menus.mousepad.list-click", "items", r.result.itemCount);
      console.log(`[menus] mousepad menu list: ${ms} ms, ${r.result.itemCount} items`);
      expect(r.result.items.map((e: any) => e.name)).toEqual(["File", "Edit", "Search", "View", "Document", "Help"]);
      expect(findItem(r.result.items, "File>Save")).toMatchObject({ shortcut: "ctrl+s" });
      // Drawn with a check box, exposed as a plain item with no check state.
      expect(findItem(r.result.items, "Document>Word Wrap")).toMatchObject({ checked: null, enabled: true });
      await expectNoMenuOpen(a!.pid);

      let el = await doc();
      expect(el, "mousepad's document").toBeDefined();
      await bg.ok("type-text", { app, elementIndex: el.index, text: "menus by path" });
      el = await doc();
      expect(el.value).toBe("menus by path");
      await bg.ok("select-text", { app, elementIndex: el.index, start: 0, end: 13 });
      const up = await timed(bg, "menu-click", { app, path: "Edit>Convert>To Uppercase" });
      expect(up.r.ok, JSON.stringify(up.r.error)).toBe(true);
      metric("menus.mousepad.list-click", "click_ms", up.ms);
      console.log(`[menus] mousepad menu click Edit>Convert>To Uppercase: ${up.ms} ms`);
      expect(up.r.result).toMatchObject({ opened: ["Edit", "Convert"], verification: { menuClosed: true } });
      await waitUntil("the document upper-cased", 5000, async () => ((await doc()).value === "MENUS BY PATH" ? true : undefined));
      await expectNoMenuOpen(a!.pid);
      // GtkSourceView records the conversion as a deletion and an insertion:
      // the first Undo takes the upper-cased text out, the second puts the
      // original back.
      const undo = await bg.request("menu-click", { app, path: "Edit>Undo" });
      expect(undo.ok, JSON.stringify(undo.error)).toBe(true);
      const once = await waitUntil("Undo to revert the conversion", 5000, async () => {
        const v = (await doc()).value;
        return v !== "MENUS BY PATH" ? { v } : undefined;
      });
      if (once.v !== "menus by path") {
        expect(once.v).toBe("");
        expect((await bg.request("menu-click", { app, path: "Edit>Undo" })).ok).toBe(true);
        await waitUntil("a second Undo to restore the text", 5000, async () => ((await doc()).value === "menus by path" ? true : undefined));
      }
      await expectNoMenuOpen(a!.pid);
    });
  });

  // ---------------------------------------------------------------- FeatherPad (Qt5)
  describe("featherpad", () => {
    let a: TreeApp | undefined;
    beforeAll(async () => {
      try {
        a = await desk().launchAppTree(["/usr/bin/featherpad", "--standalone"], { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 60_000 });
        await waitAccessible(bg, a.pid);
      } catch (err) {
        startFailure.set("featherpad", err as Error);
      }
    }, 90_000);
    afterAll(async () => {
      await a?.stop();
    });

    appRowIt("menus.featherpad.list-click", async () => {
      const app = `pid:${a!.pid}`;
      const { r, ms } = await timed(bg, "menu-list", { app });
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.featherpad.list-click", "list_ms", ms);
      metric("menus.featherpad.list-click", "items", r.result.itemCount);
      console.log(`[menus] featherpad menu list: ${ms} ms, ${r.result.itemCount} items`);
      expect(r.result.items.map((e: any) => e.name)).toEqual(["File", "Edit", "Options", "Search", "Help"]);
      expect(findItem(r.result.items, "File>Save As")).toMatchObject({ shortcut: "ctrl+shift+s" });
      const wrap = findItem(r.result.items, "Options>Wrap Lines");
      expect(wrap, "Options>Wrap Lines").toBeDefined();
      const was = wrap.checked === true;
      const first = await timed(bg, "menu-click", { app, path: "Options>Wrap Lines" });
      expect(first.r.ok, JSON.stringify(first.r.error)).toBe(true);
      metric("menus.featherpad.list-click", "click_ms", first.ms);
      console.log(`[menus] featherpad menu click Options>Wrap Lines: ${first.ms} ms`);
      expect(first.r.result.verification).toMatchObject({ verified: true, menuClosed: true, checked: { before: was, after: !was } });
      await expectNoMenuOpen(a!.pid);
      const listed = await bg.ok("menu-list", { app });
      expect(findItem(listed.items, "Options>Wrap Lines").checked === true).toBe(!was);
      const back = await bg.request("menu-click", { app, path: "Options>Wrap Lines" });
      expect(back.ok, JSON.stringify(back.error)).toBe(true);
      expect(back.result.verification.checked).toEqual({ before: !was, after: was });
      await expectNoMenuOpen(a!.pid);
    });
  });

  // ---------------------------------------------------------------- browsers' context menus
  // Started as the web rows start them (test/live/app-profiles.ts), on the context page.
  for (const id of ["chromium", "firefox"] as const) {
    describe(`${id} context menus`, () => {
      let web: WebFixture | undefined;
      let browser: TreeApp | undefined;
      let profile: string | undefined;
      const app = () => `pid:${browser!.pid}`;
      beforeAll(async () => {
        try {
          web = await startWebFixture("context.html");
          profile = desk().handOver(browserProfile(id, "deckhand-menus-"));
          // GNOME_ACCESSIBILITY=1: Firefox enables its accessibility service at start.
          const env = { ...(id === "firefox" ? FIREFOX_ENV : {}), ...desk().browser(id).env };
          browser = await desk().launchAppTree(nativeBrowserArgv(desk(), id, browserArgv(id, web.url, profile)), { env, timeoutMs: 90_000, titleMatches: /deckhand context fixture/ });
          await web.waitFor((e) => e.event === "ready", 60_000);
          await waitAccessible(bg, browser.pid);
        } catch (err) {
          // The row fails with this reason, recorded, rather than being skipped.
          startFailure.set(id, err as Error);
        }
      }, 180_000);
      afterAll(async () => {
        await browser?.stop();
        await web?.close();
        if (profile) rmSync(profile, { recursive: true, force: true });
      }, 30_000);

      /** An observation in which the link and the Note input are laid out (web content arrives after the page). */
      const pageObs = (s: Serve) =>
        waitUntil(`${id}'s context page in the accessibility tree`, 30_000, async () => {
          const { st } = await observeTimed(s, { app: app(), windowId: browser!.windows[0] });
          const link = st.snapshot.elements.find((e: any) => e.role === "link" && e.title === "Fixture link" && e.bounds);
          const note = st.snapshot.elements.find((e: any) => /^text_/.test(e.role) && e.title === "Note" && e.bounds);
          return link && note ? { st, link, note } : undefined;
        });
      const pageSaw = (mark: number, event: string) => web!.events().slice(mark).filter((e) => e.event === event);

      if (id === "chromium") {
        /** What the clipboard holds, read by a tool independent of deckhand (X11: xclip; Wayland: wl-paste); null when empty. */
        const clipboard = (): string | null => {
          const [cmd, args] = desk().kind === "wayland" ? ["wl-paste", ["--no-newline"]] : ["xclip", ["-o", "-selection", "clipboard"]];
          try {
            return execFileSync(cmd, args, { env: desktopEnv(desk().desktop), timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).toString();
          } catch {
            return null;
          }
        };
        appRowIt("menus.chromium.context", async () => {
          const { st, link, note } = await pageObs(fg);
          const sid = st.snapshot.snapshotId;
          const href = `http://127.0.0.1:${web!.port}/linked-target.html`;
          // 1. The link's context menu, listed, then closed again.
          let mark = web!.events().length;
          const list = await timed(fg, "menu-list", { app: app(), elementIndex: link.index, snapshotId: sid });
          expect(list.r.ok, JSON.stringify(list.r.error)).toBe(true);
          metric("menus.chromium.context", "list_ms", list.ms);
          metric("menus.chromium.context", "items", list.r.result.itemCount);
          console.log(`[menus] chromium link context menu: ${list.ms} ms, ${list.r.result.itemCount} items: ${list.r.result.items.map((e: any) => e.name).join(" | ")}; ${list.r.result.contextMenu.note}`);
          expect(list.r.result.source).toBe("context_menu");
          expect(list.r.result.items.find((e: any) => e.name === "Copy link address")).toMatchObject({ enabled: true, submenu: false });
          expect(list.r.result.items.some((e: any) => e.name === "Open link in new tab")).toBe(true);
          // Chromium offers no accessibility call that closes it: Escape, focus-guarded, under the grant.
          expect(list.r.result.contextMenu).toMatchObject({ element: { index: link.index, role: "link" }, opened: true, closed: true, closedBy: "escape" });
          await expectNoMenuOpen(browser!.pid);
          await sleep(300);
          expect(pageSaw(mark, "contextmenu")).toEqual([expect.objectContaining({ control: "Fixture link" })]);
          expect(pageSaw(mark, "clicked")).toEqual([]);

          // 2. Copy link address: the link's URL on the clipboard, the link not followed.
          const before = clipboard();
          expect(before).not.toBe(href);
          mark = web!.events().length;
          const copy = await timed(fg, "menu-click", { app: app(), elementIndex: link.index, snapshotId: sid, path: "Copy link address" });
          expect(copy.r.ok, JSON.stringify(copy.r.error)).toBe(true);
          metric("menus.chromium.context", "click_ms", copy.ms);
          console.log(`[menus] chromium menu click "Copy link address": ${copy.ms} ms, ${JSON.stringify(copy.r.result.contextMenu)}`);
          // Its items' default action is named "select" (it runs the item).
          expect(copy.r.result).toMatchObject({ path: "Copy link address", activated: true, route: "accessibility", nativeAction: "select", verification: { menuClosed: true } });
          await waitUntil("the link's URL on the clipboard", 5000, () => (clipboard() === href ? true : undefined));
          await expectNoMenuOpen(browser!.pid);
          await sleep(300);
          expect(pageSaw(mark, "contextmenu")).toEqual([expect.objectContaining({ control: "Fixture link" })]);
          expect(pageSaw(mark, "clicked")).toEqual([]);
          expect(web!.requests().filter((r) => r.includes("linked-target"))).toEqual([]);

          // 3. The Note input: focused (as a right-click would), then its context menu's "Select all".
          const f = await fg.request("focus", { app: app(), elementIndex: note.index, snapshotId: sid });
          expect(f.ok, JSON.stringify(f.error)).toBe(true);
          await web!.waitFor((e) => e.event === "focus" && e.control === "Note" && e.in === true, 10_000);
          mark = web!.events().length;
          const all = await timed(fg, "menu-click", { app: app(), elementIndex: note.index, snapshotId: sid, path: "Select all" });
          expect(all.r.ok, JSON.stringify(all.r.error)).toBe(true);
          metric("menus.chromium.context", "select_all_ms", all.ms);
          console.log(`[menus] chromium menu click "Select all": ${all.ms} ms, item ${JSON.stringify(all.r.result.item.name)}`);
          // Chromium's name carries the shortcut's text; the path names the item without it.
          expect(all.r.result.item.name).toMatch(/^Select all\b/);
          const sel = await web!.waitFor((e) => e.event === "select" && e.control === "Note", 5000, mark);
          expect(sel).toMatchObject({ start: 0, end: "context menu text".length });
          await expectNoMenuOpen(browser!.pid);
          await sleep(300);
          expect(pageSaw(mark, "contextmenu")).toEqual([expect.objectContaining({ control: "Note" })]);
          expect(pageSaw(mark, "text_changed")).toEqual([]);
        });
      } else {
        appRowIt("menus.firefox.context", async () => {
          const { st, link, note } = await pageObs(bg);
          const mark = web!.events().length;
          for (const [el, native] of [
            [link, "jump"],
            [note, "activate"],
          ] as const) {
            const r = await timed(bg, "menu-list", { app: app(), elementIndex: el.index, snapshotId: st.snapshot.snapshotId });
            console.log(`[menus] firefox ${el.role} context menu: ${r.ms} ms -> ${r.r.ok ? "ok" : `${r.r.error?.code} ${JSON.stringify(r.r.error?.details)}`}`);
            expect(r.r.error?.code, JSON.stringify(r.r)).toBe("MENU_NOT_EXPOSED");
            // Its exact actions, read live: nothing that opens a context menu.
            expect(r.r.error!.details).toMatchObject({ reason: "no-show-menu-action", actions: native, delivery: "not_dispatched" });
          }
          const click = await bg.request("menu-click", { app: app(), elementIndex: link.index, snapshotId: st.snapshot.snapshotId, path: "Copy Link" });
          expect(click.error?.code, JSON.stringify(click)).toBe("MENU_NOT_EXPOSED");
          await sleep(300);
          expect(pageSaw(mark, "contextmenu")).toEqual([]);
          expect(pageSaw(mark, "clicked")).toEqual([]);
          await expectNoMenuOpen(browser!.pid);
        });
      }
    });
  }

  // ---------------------------------------------------------------- LibreOffice Writer (VCL gtk3)
  describe("LibreOffice Writer", () => {
    let w: TreeApp | undefined;
    beforeAll(async () => {
      // A fresh profile (test/live/app-profiles.ts): no tip of the day, no first-run wizard.
      try {
        w = await desk().launchAppTree(sofficeArgv("--writer", desk().handOver(libreOfficeProfile())), { env: { SAL_USE_VCLPLUGIN: "gtk3" }, timeoutMs: 120_000, titleMatches: /Writer/ });
        await waitAccessible(bg, w.pid);
      } catch (err) {
        startFailure.set("writer", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await w?.stop();
    }, 30_000);

    const app = () => ({ app: `pid:${w!.pid}`, windowId: w!.windows[0] });
    /** The Standard toolbar's Formatting Marks toggle: its value reads 1 while the marks are shown. */
    const marksButton = async (): Promise<string | null> => {
      const st = await bg.ok("get-app-state", { ...app(), noScreenshot: true });
      const b = st.snapshot.elements.find((e: any) => e.role === "toggle_button" && e.title === "Formatting Marks");
      if (!b) throw new Error(`no Formatting Marks toggle in Writer's tree:\n${String(st.snapshot.treeText).slice(0, 3000)}`);
      return b.value;
    };

    appRowIt("menus.writer.list-click", async () => {
      const a = app();
      const { r, ms } = await timed(bg, "menu-list", a);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      metric("menus.writer.list-click", "list_ms", ms);
      metric("menus.writer.list-click", "items", r.result.itemCount);
      console.log(`[menus] Writer menu list: ${ms} ms, ${r.result.itemCount} items, truncated ${r.result.truncated}`);
      // One menu bar: the native GTK one LibreOffice draws (its own 0 px tall VCL menu bar is left out).
      expect(r.result.items.map((e: any) => e.name)).toEqual(["File", "Edit", "View", "Insert", "Format", "Styles", "Table", "Form", "Tools", "Window", "Help"]);
      expect(r.result.truncated).toBe(false);
      expect(findItem(r.result.items, "File>New>Text Document")).toMatchObject({ shortcut: "ctrl+n", enabled: true });
      expect(findItem(r.result.items, "Edit>Select All")).toMatchObject({ shortcut: "ctrl+a", enabled: true });
      // Nothing is selected in the empty document: Cut is disabled.
      expect(findItem(r.result.items, "Edit>Cut")).toMatchObject({ enabled: false });
      expect(findItem(r.result.items, "Tools>Automatic Spell Checking")).toMatchObject({ checked: true, shortcut: "shift+F7" });
      expect(findItem(r.result.items, "View>Formatting Marks")).toMatchObject({ checked: false, shortcut: "ctrl+F10", enabled: true });
      await expectNoMenuOpen(w!.pid);

      expect(await marksButton()).toBe("0");
      const on = await timed(bg, "menu-click", { ...a, path: "View>Formatting Marks" });
      expect(on.r.ok, JSON.stringify(on.r.error)).toBe(true);
      metric("menus.writer.list-click", "click_ms", on.ms);
      console.log(`[menus] Writer menu click View>Formatting Marks: ${on.ms} ms, verification ${JSON.stringify(on.r.result.verification)}`);
      expect(on.r.result).toMatchObject({ path: "View>Formatting Marks", opened: ["View"], activated: true, route: "accessibility", verification: { menuClosed: true } });
      // Recorded, not asserted: the native menu's check mark is refreshed only
      // when its menu opens again, so deckhand reads false -> false and says
      // verified false; the toolbar below is the read-back.
      metric("menus.writer.list-click", "verification", JSON.stringify(on.r.result.verification.checked));
      // The effect, read back from the tree: the toolbar's toggle follows the view.
      await waitUntil("the Formatting Marks toggle on", 5000, async () => ((await marksButton()) === "1" ? true : undefined));
      await expectNoMenuOpen(w!.pid);
      // Restored: the same item again turns the marks off.
      const off = await bg.request("menu-click", { ...a, path: "View>Formatting Marks" });
      expect(off.ok, JSON.stringify(off.error)).toBe(true);
      await waitUntil("the Formatting Marks toggle off", 5000, async () => ((await marksButton()) === "0" ? true : undefined));
      await expectNoMenuOpen(w!.pid);
    });

    appRowIt("menus.writer.refuse.missing", async () => {
      const a = app();
      const before = await marksButton();
      const r = await bg.request("menu-click", { ...a, path: "View>No Such View" });
      expect(r.error?.code, JSON.stringify(r)).toBe("MENU_ITEM_NOT_FOUND");
      expect(r.error!.details).toMatchObject({ level: 2, name: "No Such View", delivery: "not_dispatched" });
      expect(String(r.error!.details.available).split(" | ")).toEqual(expect.arrayContaining(["Normal", "Status Bar", "Formatting Marks", "Zoom"]));
      expect(await marksButton()).toBe(before);
      await expectNoMenuOpen(w!.pid);
    });
  });

  // ---------------------------------------------------------------- GTK 4 fixture (Gtk.PopoverMenuBar)
  describe("GTK4 fixture", () => {
    let f: Fixture | undefined;
    beforeAll(async () => {
      try {
        f = await desk().launchFixture({}, GTK4_FIXTURE);
        await waitAccessible(bg, f.pid);
      } catch (err) {
        startFailure.set("gtk4", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });

    appRowIt("menus.gtk4.refuse.not-exposed", async () => {
      const app = `pid:${f!.pid}`;
      // The bar is in the tree: its two items, each holding its caption label.
      const st = await bg.ok("get-app-state", { app, noScreenshot: true });
      const items = st.snapshot.elements.filter((e: any) => e.role === "menu_item").map((e: any) => [e.title, e.actions.length]);
      expect(items).toEqual([["File", 0], ["View", 0]]);
      const mark = f!.events().length;
      const list = await timed(bg, "menu-list", { app });
      metric("menus.gtk4.refuse.not-exposed", "list_ms", list.ms);
      console.log(`[menus] GTK4 menu list: ${list.ms} ms -> ${JSON.stringify(list.r.error ?? list.r.result)}`);
      expect(list.r.error?.code, JSON.stringify(list.r)).toBe("MENU_NOT_EXPOSED");
      expect(list.r.error!.details).toMatchObject({ reason: "no-open-action", available: "File | View" });
      const click = await bg.request("menu-click", { app, path: "View>Word Wrap" });
      expect(click.error?.code, JSON.stringify(click)).toBe("MENU_NOT_EXPOSED");
      expect(click.error!.details).toMatchObject({ reason: "no-open-action", delivery: "not_dispatched" });
      await sleep(300);
      expect(since(f!, mark)).toEqual([]);
      await expectNoMenuOpen(f!.pid);
    });
  });
}
