// The element routes and window operations on the Linux helper's Wayland
// backend (issue 19), through the compiled deckhand (serve, no foreground
// grant unless a test says so) on a private sway desktop: element actions,
// point clicks resolved by hit_test, menus, focused_element, window
// activate / restore / close, and the screenshot's scale and formats.
// Targets: two instances of a GTK 3 app run natively on Wayland
// (test/fixtures/wayland/elements_app.py), each logging what it received,
// and gtk3-widget-factory (floating: a client-side shadow).
// Oracles: each app's own log, sway's IPC (swaymsg), and for a screenshot
// ImageMagick's decoding of the files.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDesktop, type Desktop } from "../../src/desktop/index.ts";
import { Supervisor } from "../../src/helpers/supervisor.ts";
import { PRESS_ACTIONS, PRESS_ROLES } from "../../src/wire/vocabulary.ts";
import { element, HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { desktopEnv, SYSTEM_PYTHON, waitUntil } from "./harness.ts";
import { asDesktopUser, describeWayland, launchAsUser, swaymsg, swayViews, type SwayNode } from "./wayland.ts";

const here = dirname(fileURLToPath(import.meta.url));
const APP = resolve(here, "..", "fixtures", "wayland", "elements_app.py");
const LOG_LIB = resolve(here, "..", "fixtures", "apps", "fixture_log.py");
const CONVERT = "/usr/bin/convert";
const IDENTIFY = "/usr/bin/identify";

interface LogLine {
  event: string;
  control?: string;
  [k: string]: unknown;
}

/** What an app received that acting on it produces (focus and menu pop-ups aside). */
const ACTIONS = new Set(["clicked", "toggled", "activated", "text_changed", "selection_changed", "menu", "row"]);

function content(v: SwayNode): { x: number; y: number; width: number; height: number } {
  return { x: v.rect.x + v.window_rect.x, y: v.rect.y + v.window_rect.y, width: v.window_rect.width, height: v.window_rect.height };
}

const centre = (b: { x: number; y: number; width: number; height: number }) => ({ x: b.x + Math.floor(b.width / 2), y: b.y + Math.floor(b.height / 2) });

describeWayland("Linux helper, Wayland backend: element routes and window operations", () => {
  let desktop: Desktop;
  const stateDir = newStateDir();
  const procs: ChildProcess[] = [];
  let dir = "";
  let bg: Serve; // no foreground grant
  let op: Serve; // the operator's grant and confirm hook (activate, quit)
  let helper: Supervisor;
  const app = { a: { pid: 0, view: 0, log: "" }, b: { pid: 0, view: 0, log: "" } };
  let factory = 0;

  const readLog = (path: string): LogLine[] =>
    existsSync(path)
      ? readFileSync(path, "utf8")
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as LogLine)
      : [];
  /** Waits for a log line matching `want` after line `from`. */
  const logged = (path: string, from: number, what: string, want: (l: LogLine) => boolean) =>
    waitUntil(`${what} in ${path}`, 10_000, () => readLog(path).slice(from).find(want));
  const view = async (pid: number) => (await swayViews(desktop.env)).find((v) => v.pid === pid);

  function launchApp(name: "a" | "b"): ChildProcess {
    const log = join(dir, `${name}.log`);
    writeFileSync(log, "");
    chmodSync(log, 0o666);
    app[name].log = log;
    return launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, join(dir, "elements_app.py")], {
      GDK_BACKEND: "wayland",
      DECKHAND_FIXTURE_LOG: log,
      DECKHAND_WL_TITLE: `elements ${name}`,
    });
  }

  beforeAll(async () => {
    requireBuild();
    for (const t of [CONVERT, IDENTIFY]) if (!existsSync(t)) throw new Error(`${t} is missing (imagemagick, ci/apt-packages.txt)`);
    if (!(process.env.PATH ?? "").split(":").some((d) => existsSync(join(d, "wtype")))) throw new Error("wtype is missing (ci/apt-packages.txt)");
    desktop = await startDesktop({ wayland: true, width: 1280, height: 800 });
    // The app and its log library, where the desktop's user reads them.
    dir = mkdtempSync(join(tmpdir(), "deckhand-wl-elements-"));
    chmodSync(dir, 0o755);
    copyFileSync(APP, join(dir, "elements_app.py"));
    copyFileSync(LOG_LIB, join(dir, "fixture_log.py"));
    // Headless sway has no keyboard: a GTK window is active (and its
    // widgets focused) only while a keyboard is in the seat, as on any real
    // session. wtype -s holds a virtual keyboard and types nothing.
    const kb = asDesktopUser(["wtype", "-s", "3600000"], desktop.root);
    procs.push(spawn(kb[0]!, kb.slice(1), { env: { ...process.env, ...desktop.env }, cwd: join(desktop.root, "home"), stdio: "ignore", detached: true }));
    for (const n of ["a", "b"] as const) {
      const p = launchApp(n);
      procs.push(p);
      app[n].pid = p.pid!;
      await logged(app[n].log, 0, "ready", (l) => l.event === "ready");
      app[n].view = (await waitUntil(`${n}'s view`, 10_000, () => view(app[n].pid)))!.id;
    }
    const f = launchAsUser(desktop.env, desktop.root, ["gtk3-widget-factory"]);
    procs.push(f);
    factory = f.pid!;
    await waitUntil("gtk3-widget-factory's view", 20_000, () => view(factory));
    await swaymsg(desktop.env, "command", `[pid=${factory}] floating enable, move position 300 200`);
    let last = "";
    await waitUntil("the floating window to settle", 10_000, async () => {
      await new Promise((r) => setTimeout(r, 150));
      const v = (await view(factory))!;
      const now = JSON.stringify([v.type, content(v)]);
      const still = now === last && v.type === "floating_con";
      last = now;
      return still;
    });
    // The factory floats above a and b: moved to a workspace of its own
    // (the element routes need no window on screen; the screenshot does).
    await swaymsg(desktop.env, "command", `[pid=${factory}] move container to workspace 2`);
    bg = new Serve(desktop, { stateDir });
    op = new Serve(desktop, { stateDir, args: ["--allow-foreground", "--confirm-cmd", "/bin/true"] });
    helper = new Supervisor({ path: HELPER, env: desktopEnv(desktop) });
    await helper.start();
  }, 120_000);

  afterAll(async () => {
    await bg?.close();
    await op?.close();
    await helper?.stop();
    for (const p of procs) if (p.pid) {
      try {
        process.kill(-p.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
    await desktop?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const state = (pid: number) => bg.ok("get-app-state", { app: `pid:${pid}` });
  const n0 = (name: "a" | "b") => readLog(app[name].log).length;
  /** b received nothing an action produces since line `from`. */
  const bUntouched = (from: number) => expect(readLog(app.b.log).slice(from).filter((l) => ACTIONS.has(l.event))).toEqual([]);

  it("announces the element routes, hit testing, menus, focused_element, window_op and the screenshot options as run live", async () => {
    const caps = (await bg.ok("capabilities")).capabilities;
    for (const k of ["action.click", "action.set_value", "action.type_text", "action.select_text", "action.focus", "action.secondary", "hit_test", "focused_element", "menu_tree", "menu_close", "window_op", "screenshot.scale", "screenshot.formats"]) {
      expect(caps[k], k).toMatchObject({ supported: true, verified: "live" });
      expect(caps[k].note, k).toMatch(/wayland-elements\.test\.ts/);
    }
    expect(caps["action.scroll_into_view"]).toMatchObject({ supported: true, verified: "unverified" });
    expect(caps["screenshot.popups"]).toMatchObject({ supported: false });
    expect(caps["screenshot.popups"].note).toMatch(/xdg_popup/);
  });

  it("clicks a button and a check box by element index: the app received each, the other app nothing", async () => {
    const s = await state(app.a.pid);
    expect(s.window.windowId).toBe(app.a.view);
    const [a0, b0] = [n0("a"), n0("b")];
    const ok = element(s, "button", "OK");
    const r = await bg.ok("click", { app: `pid:${app.a.pid}`, elementIndex: ok.index });
    expect(r).toMatchObject({ performed: true, route: "accessibility", windowId: app.a.view });
    await logged(app.a.log, a0, "OK clicked", (l) => l.event === "clicked" && l.control === "OK");
    const check = element(s, "checkbox", "Subscribe");
    const t = await bg.ok("click", { app: `pid:${app.a.pid}`, elementIndex: check.index });
    expect(t.verification).toMatchObject({ verified: true });
    await logged(app.a.log, a0, "Subscribe toggled", (l) => l.event === "toggled" && l.control === "Subscribe" && l.active === true);
    expect(readLog(app.a.log).slice(a0).filter((l) => l.event === "clicked" || l.event === "toggled")).toHaveLength(2);
    bUntouched(b0);
  });

  it("sets a value (read back), types into an element, selects text, runs a secondary action", async () => {
    const s = await state(app.a.pid);
    const [a0, b0] = [n0("a"), n0("b")];
    const name = element(s, "text_field", "Name");
    const set = await bg.ok("set-value", { app: `pid:${app.a.pid}`, elementIndex: name.index, value: "hello wayland" });
    expect(set.verification).toMatchObject({ verified: true });
    await logged(app.a.log, a0, "Name set", (l) => l.event === "text_changed" && l.control === "Name" && l.text === "hello wayland");
    const notes = element(s, "text_field", "Notes");
    const typed = await bg.ok("type-text", { app: `pid:${app.a.pid}`, elementIndex: notes.index, text: "typed here" });
    expect(typed).toMatchObject({ performed: true, route: "accessibility", nativeAction: "EditableText.InsertText" });
    await logged(app.a.log, a0, "Notes typed", (l) => l.event === "text_changed" && l.control === "Notes" && l.text === "typed here");
    const sel = await bg.ok("select-text", { app: `pid:${app.a.pid}`, elementIndex: name.index, start: 0, end: 5 });
    expect(sel.verification).toMatchObject({ verified: true });
    await logged(app.a.log, a0, "Name's selection 0-5", (l) => l.event === "selection_changed" && l.control === "Name" && l.start === 0 && l.end === 5);
    const act = await bg.ok("perform-secondary-action", { app: `pid:${app.a.pid}`, elementIndex: notes.index, action: "activate" });
    expect(act).toMatchObject({ performed: true });
    await logged(app.a.log, a0, "Notes activated", (l) => l.event === "activated" && l.control === "Notes");
    bUntouched(b0);
  });

  it("focuses an element; focused_element finds it in its window with its screen bounds", async () => {
    // a's window active first (the operator's grant): b, launched last, has sway's focus.
    expect((await view(app.b.pid))!.focused).toBe(true);
    const act = await op.ok("activate", { app: `pid:${app.a.pid}` });
    expect(act).toMatchObject({ windowId: app.a.view, activated: true });
    expect((await view(app.a.pid))!.focused).toBe(true);
    const s = await state(app.a.pid);
    const a0 = n0("a");
    const notes = element(s, "text_field", "Notes");
    const r = await bg.ok("focus", { app: `pid:${app.a.pid}`, elementIndex: notes.index });
    expect(r.verification).toMatchObject({ verified: true });
    await logged(app.a.log, a0, "Notes focused", (l) => l.event === "focus" && l.control === "Notes" && l.in === true);
    const { result } = await helper.request("focused_element", { pid: app.a.pid });
    expect(result.window_id).toBe(app.a.view);
    expect(result.node).toMatchObject({ name: "Notes", path: notes.locator.path });
    // Screen coordinates: the same box get-app-state gives (surface origin moved by sway's content origin).
    expect(result.node!.bounds).toEqual(notes.bounds);
    const v = content((await view(app.a.pid))!);
    expect(notes.bounds.x).toBeGreaterThanOrEqual(v.x);
    expect(notes.bounds.y).toBeGreaterThan(v.y);
  });

  it("resolves point clicks with hit_test: a button pressed through accessibility, other views refused", async () => {
    const s = await state(app.a.pid);
    const [a0, b0] = [n0("a"), n0("b")];
    const ok = element(s, "button", "OK");
    const at = centre(ok.bounds);
    const r = await bg.ok("click", { app: `pid:${app.a.pid}`, x: at.x, y: at.y });
    expect(r).toMatchObject({ performed: true, route: "accessibility", nativeAction: "click" });
    await logged(app.a.log, a0, "OK clicked at a point", (l) => l.event === "clicked" && l.control === "OK");
    // A point over b's view: refused, nothing sent. One on a's own title bar
    // (sway's decoration: a's frame, no element there) needs the pointer.
    const bv = content((await view(app.b.pid))!);
    const refused = await bg.request("click", { app: `pid:${app.a.pid}`, x: bv.x + Math.floor(bv.width / 2), y: bv.y + Math.floor(bv.height / 2) });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "point-outside-target", delivery: "not_dispatched" } });
    const titleBar = await bg.request("click", { app: `pid:${app.a.pid}`, x: at.x, y: 5 });
    expect(titleBar.ok).toBe(false);
    expect(titleBar.error).toMatchObject({ code: "FOREGROUND_REQUIRED" });
    await new Promise((r) => setTimeout(r, 300));
    expect(readLog(app.a.log).slice(a0).filter((l) => l.event === "clicked")).toHaveLength(1);
    bUntouched(b0);
  });

  it("point_click (the granted click in one request): a button pressed through accessibility, a list row clicked by the virtual pointer, another view refused", async () => {
    const s = await state(app.a.pid);
    const [a0, b0] = [n0("a"), n0("b")];
    const args = (p: { x: number; y: number }) => ({ ...p, pid: app.a.pid, button: "left" as const, count: 1, windows: [app.a.view], press: { roles: [...PRESS_ROLES], actions: [...PRESS_ACTIONS] }, hold_words: [], expect: null, restore_pointer: true });
    const pressed = await helper.request("point_click", args(centre(element(s, "button", "OK").bounds)));
    expect(pressed.result).toMatchObject({ outcome: "pressed", window_id: app.a.view, node: { name: "OK" } });
    expect(pressed.receipt).toMatchObject({ route: "accessibility", delivery: "submitted" });
    await logged(app.a.log, a0, "OK pressed by point_click", (l) => l.event === "clicked" && l.control === "OK");
    const row = s.snapshot.elements.find((e: any) => e.title === "Row 1" && e.bounds.height > 0);
    expect(row, "Row 1 on the screen").toBeDefined();
    const clicked = await helper.request("point_click", args(centre(row.bounds)));
    expect(clicked.result).toMatchObject({ outcome: "clicked", window_id: app.a.view });
    expect(clicked.receipt).toMatchObject({ route: "foreground_input", delivery: "submitted", cleanup: { buttons_released: true, pointer_restored: false } });
    await logged(app.a.log, a0, "Row 1 selected by the virtual pointer", (l) => l.event === "row" && l.row === 1);
    const bv = content((await view(app.b.pid))!);
    const refused = await helper.request("point_click", args(centre(bv))).then(
      () => undefined,
      (e) => e,
    );
    expect(refused).toMatchObject({ code: "POLICY_DENIED", details: { reason: "point-outside-target" }, receipt: { delivery: "not_dispatched" } });
    await new Promise((r) => setTimeout(r, 300));
    bUntouched(b0);
  });

  it("hit_test in the helper: the node at a screen point in surface coordinates, the view from sway's tree", async () => {
    const s = await state(app.a.pid);
    const check = element(s, "checkbox", "Subscribe");
    const hit = (await helper.request("hit_test", centre(check.bounds))).result;
    expect(hit).toMatchObject({ pid: app.a.pid, window_id: app.a.view, node: { name: "Subscribe", path: check.locator.path } });
    expect(hit.node!.bounds).toEqual(check.bounds);
    const bv = content((await view(app.b.pid))!);
    const onB = (await helper.request("hit_test", centre(bv))).result;
    expect(onB).toMatchObject({ pid: app.b.pid, window_id: app.b.view });
    // Sway's title bar is the view's frame: the view, no node.
    const onTitle = (await helper.request("hit_test", { x: 10, y: 5 })).result;
    const left = (await view(app.a.pid))!.rect.x <= 10 ? app.a : app.b;
    expect(onTitle).toEqual({ pid: left.pid, window_id: left.view, node: null });
    // A floating window with GTK's client-side shadow (surface origin != content origin).
    await swaymsg(desktop.env, "command", "workspace 2");
    try {
      // Shown again, GTK redraws its decorations: wait until two reads agree.
      const pick = (st: any, fv: ReturnType<typeof content>) =>
        st.snapshot.elements.find((e: any) => e.role === "checkbox" && e.enabled && e.bounds && e.bounds.width > 4 && e.bounds.x > fv.x && e.bounds.y > fv.y);
      let prev = "";
      const { f, box } = await waitUntil("the factory's tree to hold still", 10_000, async () => {
        const f = await state(factory);
        const box = pick(f, content((await view(factory))!));
        const now = JSON.stringify(box?.bounds ?? null);
        const still = box && now === prev;
        prev = now;
        return still ? { f, box } : undefined;
      });
      const h = (await helper.request("hit_test", centre(box.bounds))).result;
      expect(h).toMatchObject({ pid: factory, window_id: f.window.windowId, node: { path: box.locator.path, name: box.title } });
      expect(h.node!.bounds).toEqual(box.bounds);
      // Its check box pressed by element index: the frame matched with the shadow, the checked state read back from the app.
      const t = await bg.ok("click", { app: `pid:${factory}`, elementIndex: box.index });
      expect(t, JSON.stringify(box)).toMatchObject({ performed: true, windowId: f.window.windowId, verification: { verified: true } });
    } finally {
      await swaymsg(desktop.env, "command", "workspace 1");
    }
  });

  it("lists menus, activates a menu item, and closes a menu it opened when the item is disabled", async () => {
    const a0 = n0("a");
    const menus = await bg.ok("menu-list", { app: `pid:${app.a.pid}` });
    expect(menus.windowId).toBe(app.a.view);
    const names = (p: string) => menus.items.find((i: any) => i.path === p)?.children.map((c: any) => c.name);
    expect(names("File")).toEqual(["New", "Open", "Save", "Revert"]);
    expect(names("Edit")).toEqual(["Copy", "Paste", "Word wrap"]);
    // The app disables Revert while its menu is open: deckhand opened File, found it disabled, closed it (menu_close).
    const refused = await bg.request("menu-click", { app: `pid:${app.a.pid}`, path: "File>Revert" });
    expect(refused.ok).toBe(false);
    expect(refused.error).toMatchObject({ code: "MENU_ITEM_DISABLED", details: { opened: "File", closed: true, closedBy: "accessibility" } });
    await logged(app.a.log, a0, "File menu up", (l) => l.event === "menu_shown" && l.menu === "File");
    await logged(app.a.log, a0, "File menu down", (l) => l.event === "menu_hidden" && l.menu === "File");
    expect(readLog(app.a.log).slice(a0).filter((l) => l.event === "menu")).toEqual([]);
    // Closed: Revert is enabled again (the app enables it when its menu hides).
    const after = await bg.ok("menu-list", { app: `pid:${app.a.pid}` });
    expect(after.items.find((i: any) => i.path === "File").children.find((c: any) => c.name === "Revert")).toMatchObject({ enabled: true });
    const a1 = n0("a");
    const click = await bg.ok("menu-click", { app: `pid:${app.a.pid}`, path: "File>Save" });
    expect(click).toMatchObject({ activated: true, route: "accessibility", verification: { menuClosed: true } });
    await logged(app.a.log, a1, "File>Save", (l) => l.event === "menu" && l.path === "File/Save");
    await logged(app.a.log, a1, "File menu down", (l) => l.event === "menu_hidden" && l.menu === "File");
    expect(readLog(app.a.log).slice(a1).filter((l) => l.event === "menu")).toHaveLength(1);
    // A menu left open (opened through the helper): its xdg_popup is not in sway's tree, so hit_test
    // gives no node rather than the one beneath it, and a point click there is not pressed; then
    // menu_close closes it.
    const s = await state(app.a.pid);
    const file = element(s, "menu", "File").locator;
    const fileLoc = { path: file.path, role: file.role, native_role: file.nativeRole, name: file.name, identifier: file.identifier };
    const okAt = centre(element(s, "button", "OK").bounds);
    const a3 = n0("a");
    await helper.request("element_action", { pid: app.a.pid, window_id: app.a.view, locator: fileLoc, action: "click" } as any);
    await logged(app.a.log, a3, "File menu up", (l) => l.event === "menu_shown" && l.menu === "File");
    const hit = (await helper.request("hit_test", okAt)).result;
    expect(hit).toEqual({ pid: app.a.pid, window_id: app.a.view, node: null });
    const pressed = await bg.request("click", { app: `pid:${app.a.pid}`, x: okAt.x, y: okAt.y });
    expect(pressed.ok).toBe(false);
    expect(pressed.error!.details.delivery).toBe("not_dispatched");
    const closed = (await helper.request("menu_close", { pid: app.a.pid, window_id: app.a.view, opener: fileLoc } as any)).result;
    expect(closed).toMatchObject({ closed: true, method: expect.stringMatching(/ClearSelection/) });
    await logged(app.a.log, a3, "File menu down", (l) => l.event === "menu_hidden" && l.menu === "File");
    expect((await helper.request("hit_test", okAt)).result.node).toMatchObject({ name: "OK" });
    expect(readLog(app.a.log).slice(a3).filter((l) => ACTIONS.has(l.event))).toEqual([]);
    // A menu bar's other menus: GTK 3 on Wayland sometimes pops one down as soon as accessibility
    // opens it (and opens the first menu instead; seen on a fresh app and after an item's activation
    // closed a menu, not after menu_close). Either the item is activated, once, or the failure is
    // reported exactly: nothing activated, the menu closed.
    const a2 = n0("a");
    const edit = await bg.request("menu-click", { app: `pid:${app.a.pid}`, path: "Edit>Copy" });
    if (edit.ok) {
      expect(edit.result).toMatchObject({ activated: true, route: "accessibility" });
      await logged(app.a.log, a2, "Edit>Copy", (l) => l.event === "menu" && l.path === "Edit/Copy");
    } else {
      expect(edit.error).toMatchObject({ code: "ACTION_FAILED", details: { reason: "submenu-not-shown", opened: "Edit", closed: true } });
      await logged(app.a.log, a2, "Edit menu down", (l) => l.event === "menu_hidden" && l.menu === "Edit");
    }
    await waitUntil("every menu closed", 5_000, async () => (await helper.request("hit_test", okAt)).result.node?.name === "OK");
    expect(readLog(app.a.log).slice(a2).filter((l) => l.event === "menu")).toHaveLength(edit.ok ? 1 : 0);
  });

  it("refuses exactly: a secure field, a stale snapshot, an element of a window that is gone", async () => {
    const s = await state(app.a.pid);
    const a0 = n0("a");
    const pw = element(s, "secure_text_field", "Password");
    for (const [cmd, args] of [
      ["set-value", { value: "hunter2" }],
      ["type-text", { text: "hunter2" }],
      ["select-text", { start: 0, end: 1 }],
    ] as const) {
      const r = await bg.request(cmd, { app: `pid:${app.a.pid}`, elementIndex: pw.index, ...args });
      expect(r.ok, cmd).toBe(false);
      expect(r.error, cmd).toMatchObject({ code: "POLICY_DENIED", details: { rule: "builtin:secure_field", delivery: "not_dispatched" } });
    }
    // A superseded snapshot.
    await state(app.a.pid);
    const stale = await bg.request("click", { app: `pid:${app.a.pid}`, snapshotId: s.snapshot.snapshotId, elementIndex: element(s, "button", "OK").index });
    expect(stale.error).toMatchObject({ code: "SNAPSHOT_STALE", details: { reason: "superseded" } });
    await new Promise((r) => setTimeout(r, 300));
    expect(readLog(app.a.log).slice(a0).filter((l) => ACTIONS.has(l.event))).toEqual([]);
  });

  it("restores a minimized (scratchpad) window for a click, activates a window, closes one politely", async () => {
    // Minimized: in sway's scratchpad.
    await swaymsg(desktop.env, "command", `[con_id=${app.a.view}] move scratchpad`);
    const listed = await bg.ok("list-windows", { app: `pid:${app.a.pid}` });
    expect(listed.windows[0]).toMatchObject({ windowId: app.a.view, minimized: true });
    const s = await state(app.a.pid);
    const a0 = n0("a");
    const r = await bg.ok("click", { app: `pid:${app.a.pid}`, elementIndex: element(s, "button", "OK").index, restoreWindow: true });
    expect(r).toMatchObject({ performed: true });
    await logged(app.a.log, a0, "OK clicked after the restore", (l) => l.event === "clicked" && l.control === "OK");
    const restored = (await view(app.a.pid))!;
    expect(restored).toMatchObject({ visible: true, focused: true });
    expect(restored.type).toBe("floating_con");
    // Activate b (the operator's grant): sway's focus moves to it.
    const act = await op.ok("activate", { app: `pid:${app.b.pid}` });
    expect(act).toMatchObject({ windowId: app.b.view, activated: true });
    expect((await view(app.b.pid))!.focused).toBe(true);
    expect((await view(app.a.pid))!.focused).toBe(false);
    // Close b: xdg_toplevel.close, the app's own close (it logs its destroy and exits).
    const sb = await state(app.b.pid);
    const q = await op.ok("quit", { app: `pid:${app.b.pid}`, timeoutMs: 10_000 });
    expect(q).toMatchObject({ exited: true, windowsClosed: 1 });
    expect(readLog(app.b.log).some((l) => l.event === "exit" && l.reason === "destroy")).toBe(true);
    expect(await view(app.b.pid)).toBeUndefined();
    expect(await view(app.a.pid)).toBeTruthy();
    // b is gone: its snapshot's element is refused, nothing sent.
    const gone = await bg.request("click", { app: `pid:${app.b.pid}`, snapshotId: sb.snapshot.snapshotId, elementIndex: element(sb, "button", "OK").index });
    expect(gone.ok).toBe(false);
    // Its process gone (APP_NOT_FOUND) or still exiting (APP_EXITED), depending on when the click comes.
    expect(["APP_NOT_FOUND", "APP_EXITED"]).toContain(gone.error!.code);
    // The helper's own answers for a view that is gone (sway has no such container).
    const fails = (p: Promise<unknown>) => p.then((r) => ({ unexpected: r }), (e) => e);
    expect(await fails(helper.request("window_op", { window_id: app.b.view, op: "activate" }))).toMatchObject({ code: "WINDOW_NOT_FOUND" });
    const ok = element(sb, "button", "OK").locator;
    const locator = { path: ok.path, role: ok.role, native_role: "push button", name: "OK", identifier: "ok_button" };
    expect(await fails(helper.request("element_action", { pid: app.a.pid, window_id: app.b.view, locator, action: "click" } as any))).toMatchObject({ code: "WINDOW_NOT_FOUND" });
  });

  it("acts on an Xwayland window by X11's rules (its extents are on the screen): a click by element index, hit_test, a screenshot; close by WM_DELETE_WINDOW, refused for a window without it", async () => {
    const clicked = join(desktop.root, "home", "xw-clicked");
    const script = [
      "import gi, sys",
      "gi.require_version('Gtk', '3.0')",
      "from gi.repository import Gtk",
      "w = Gtk.Window(title='wl-x11'); b = Gtk.Button(label='Hello'); w.add(b)",
      "b.connect('clicked', lambda _b: open(sys.argv[1], 'a').write('clicked\\n'))",
      "w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
    ].join("\n");
    const x = launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, "-c", script, clicked], { DISPLAY: desktop.env.DISPLAY!, GDK_BACKEND: "x11" });
    procs.push(x);
    const v = await waitUntil("the X11 app in sway's tree", 20_000, async () => (await view(x.pid!)) ?? undefined);
    expect(v.shell).toBe("xwayland");
    // Floating in a corner, small and on the screen.
    await swaymsg(desktop.env, "command", `[con_id=${v.id}] floating enable, resize set 300 200, move position 0 30`);
    await waitUntil("the X11 window in its corner", 10_000, async () => {
      const now = await view(x.pid!);
      return now?.visible && now.type === "floating_con" && now.rect.x === 0 && now.rect.width <= 310 ? true : undefined;
    });
    const box = content((await view(x.pid!))!);
    // Its tree once the app laid itself out at the new size (GTK under Xwayland configures after sway's resize).
    const inBox = (b: { x: number; y: number; width: number; height: number }) => b.x >= box.x && b.y >= box.y && b.x + b.width <= box.x + box.width && b.y + b.height <= box.y + box.height;
    let last: any;
    const st = await waitUntil("the X11 app's tree, laid out in its corner", 15_000, async () => {
      const r = await bg.request("get-app-state", { app: `pid:${x.pid}` });
      last = r;
      const h = r.ok ? r.result.snapshot.elements.find((e: any) => e.title === "Hello") : undefined;
      return h?.bounds && inBox(h.bounds) ? r.result : undefined;
    }).catch((err) => {
      x.kill("SIGKILL");
      throw new Error(`${(err as Error).message}; the box ${JSON.stringify(box)}, the last answer: ${JSON.stringify(last?.result?.snapshot?.elements?.find((e: any) => e.title === "Hello") ?? last?.error)}`);
    });
    expect(st.window.windowId).toBe(v.id);
    const hello = element(st, "button", "Hello");
    // Screen bounds inside the view's content as sway shows it.
    expect(hello.bounds.x).toBeGreaterThanOrEqual(box.x);
    expect(hello.bounds.y).toBeGreaterThanOrEqual(box.y);
    expect(hello.bounds.x + hello.bounds.width).toBeLessThanOrEqual(box.x + box.width);
    expect(hello.bounds.y + hello.bounds.height).toBeLessThanOrEqual(box.y + box.height);
    expect(st.screenshot).toMatchObject({ width: box.width, height: box.height });
    const b0 = n0("b");
    await bg.ok("click", { app: `pid:${x.pid}`, elementIndex: hello.index });
    await waitUntil("the X11 app to log its click", 5000, async () => (existsSync(clicked) ? readFileSync(clicked, "utf8") : "") === "clicked\n" || undefined);
    const hit = (await helper.request("hit_test", centre(hello.bounds))).result;
    expect(hit).toMatchObject({ pid: x.pid, window_id: v.id, node: { name: "Hello" } });
    const fails = (p: Promise<unknown>) => p.then((r) => ({ unexpected: r }), (e) => e);
    // This helper runs as root; Xwayland admits its own user only (SI:localuser): the X window's WM_PROTOCOLS cannot be
    // read, so no close is asked of anyone (sway's kill would kill a client without WM_DELETE_WINDOW).
    expect(await fails(helper.request("window_op", { window_id: v.id, op: "close" }))).toMatchObject({ code: "WINDOW_NOT_FOUND", details: { reason: "xwayland-window" } });
    expect(await view(x.pid!)).toBeTruthy();
    // A helper run as the desktop's user, as on a user's own session: it reads WM_PROTOCOLS on Xwayland.
    const [cmd, ...args] = asDesktopUser([HELPER], desktop.root);
    const asUser = new Supervisor({ path: cmd!, args, env: desktopEnv(desktop) });
    await asUser.start();
    try {
    // A bare X window whose WM_PROTOCOLS has no WM_DELETE_WINDOW: refused (sway's kill would kill its client), left open.
    const bareScript = [
      "import time",
      "from Xlib import display, X",
      "d = display.Display(); s = d.screen()",
      "w = s.root.create_window(0, 0, 200, 100, 0, s.root_depth, X.InputOutput, X.CopyFromParent, background_pixel=s.white_pixel)",
      "w.set_wm_name('wl-x11-bare'); w.map(); d.flush(); time.sleep(120)",
    ].join("\n");
    const bare = launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, "-c", bareScript], { DISPLAY: desktop.env.DISPLAY! });
    procs.push(bare);
    const bv = await waitUntil("the bare X window in sway's tree", 20_000, async () => (await swayViews(desktop.env)).find((n) => n.name === "wl-x11-bare"));
    expect(await fails(asUser.request("window_op", { window_id: bv.id, op: "close" }))).toMatchObject({ code: "ACTION_UNSUPPORTED", details: { reason: "xwayland-no-wm-delete" } });
    await new Promise((r) => setTimeout(r, 500));
    expect((await swayViews(desktop.env)).some((n) => n.id === bv.id), "the bare window is still open").toBe(true);
    expect(bare.exitCode, "its client still runs").toBeNull();
    bare.kill("SIGKILL");
    await waitUntil("the bare X window to be gone", 10_000, async () => ((await swayViews(desktop.env)).some((n) => n.id === bv.id) ? undefined : true));
    // The GTK app takes WM_DELETE_WINDOW: closed as its close button would, its own quit run (it exits by itself).
    const closed = await asUser.request("window_op", { window_id: v.id, op: "close" });
    expect(closed.result).toMatchObject({ window_id: v.id });
    expect(closed.result.detail).toMatch(/WM_DELETE_WINDOW sent/);
    // done says what the helper saw in its 2 s, and sway's tree agrees: gone (then the app, asked and not killed,
    // exits by itself), or still open. Run alone the app closed every time (3 of 3); in two full-suite runs GTK
    // under Xwayland had not closed in 2 s, nor 12 s later, and the op said so (done false).
    if (closed.result.done) {
      expect(await view(x.pid!), closed.result.detail).toBeUndefined();
      await waitUntil("the X11 app to exit by itself", 10_000, () => (x.exitCode !== null || x.signalCode !== null ? true : undefined));
      expect(x.signalCode, "not killed").toBeNull();
    } else {
      expect(closed.result.detail).toMatch(/still open/);
      expect(await view(x.pid!), "done false while the window is gone").toBeTruthy();
      console.log(`[wayland-elements] the Xwayland GTK window did not close in the helper's 2 s: ${closed.result.detail}`);
      x.kill("SIGKILL");
      await waitUntil("the X11 app to be gone", 10_000, async () => ((await view(x.pid!)) ? undefined : true));
    }
    } finally {
      await asUser.stop();
    }
    bUntouched(b0);
  });

  it("writes scaled, JPEG and WebP screenshots of a Wayland window, close to its PNG", async () => {
    const png = await bg.ok("screenshot", { app: `pid:${app.a.pid}` });
    const ref = png.screenshot;
    expect(execFileSync(IDENTIFY, ["-format", "%m %w %h", ref.path]).toString()).toBe(`PNG ${ref.width} ${ref.height}`);
    const decode = (path: string, w: number, h: number) => execFileSync(CONVERT, [path, "-resize", `${w}x${h}!`, "-depth", "8", "rgb:-"], { maxBuffer: 64 << 20 });
    const meanError = (a: Buffer, b: Buffer) => {
      expect(a.length).toBe(b.length);
      let sum = 0;
      for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
      return sum / a.length;
    };
    for (const [format, magic] of [
      ["jpeg", "JPEG"],
      ["webp", "WEBP"],
    ] as const) {
      const r = (await bg.ok("screenshot", { app: `pid:${app.a.pid}`, imageFormat: format, quality: 90 })).screenshot;
      expect(r).toMatchObject({ format, width: ref.width, height: ref.height, origin: ref.origin });
      expect(execFileSync(IDENTIFY, ["-format", "%m %w %h", r.path]).toString()).toBe(`${magic} ${ref.width} ${ref.height}`);
      expect(meanError(decode(r.path, ref.width, ref.height), decode(ref.path, ref.width, ref.height))).toBeLessThan(6);
    }
    const small = (await bg.ok("screenshot", { app: `pid:${app.a.pid}`, maxWidth: 200 })).screenshot;
    expect(small.width).toBe(200);
    expect(Math.abs(small.height - (ref.height * 200) / ref.width)).toBeLessThanOrEqual(1);
    expect(small.scale).toBeCloseTo(200 / ref.width, 3);
    expect(meanError(decode(small.path, small.width, small.height), decode(ref.path, small.width, small.height))).toBeLessThan(12);
  });
});
