// The Linux helper's Wayland backend (issue 19, first slice) through the
// compiled deckhand on a private sway desktop: the backend chosen from the
// session, windows from sway's IPC, trees with window-relative AT-SPI extents
// moved to the screen, and honest refusals of what is not there yet.
// Oracles: sway's own IPC (swaymsg), pyatspi run as the desktop's user.
import { execFile, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDesktop, type Desktop } from "../../src/desktop/index.ts";
import { deckhand, newStateDir, ok, requireBuild } from "./deckhand.ts";
import { SYSTEM_PYTHON, waitUntil } from "./harness.ts";
import { asDesktopUser, describeWayland, launchAsUser, swaymsg, swayViews, type SwayNode } from "./wayland.ts";

const run = promisify(execFile);

/** Window-relative extents of named nodes of the app with this pid, read by pyatspi as the desktop's user. */
const EXTENTS_PY = `
import json, sys, pyatspi
pid = int(sys.argv[1]); want = set(sys.argv[2:])
out = {}
def walk(n, depth):
    if depth > 30: return
    key = n.getRoleName() + ":" + (n.name or "")
    if key in want and key not in out:
        e = n.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        out[key] = [e.x, e.y, e.width, e.height]
    for c in n:
        if c is not None: walk(c, depth + 1)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.get_process_id() == pid:
        f = app[0]
        e = f.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        out["frame"] = [e.x, e.y, e.width, e.height]
        h = f[0].queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        out["first child"] = [h.x, h.y, h.width, h.height]
        walk(f, 0)
print(json.dumps(out))
`;

function content(v: SwayNode): { x: number; y: number; width: number; height: number } {
  return { x: v.rect.x + v.window_rect.x, y: v.rect.y + v.window_rect.y, width: v.window_rect.width, height: v.window_rect.height };
}

describeWayland("Linux helper, Wayland backend (sway)", () => {
  let desktop: Desktop;
  const stateDir = newStateDir();
  const apps: ChildProcess[] = [];
  let factory = 0; // gtk3-widget-factory: floating, client-side shadow
  let demo = 0; // gtk3-demo: tiled, no shadow

  beforeAll(async () => {
    requireBuild();
    desktop = await startDesktop({ wayland: true, width: 1280, height: 800 });
    const a = launchAsUser(desktop.env, desktop.root, ["gtk3-widget-factory"]);
    const b = launchAsUser(desktop.env, desktop.root, ["gtk3-demo"]);
    apps.push(a, b);
    factory = a.pid!;
    demo = b.pid!;
    await waitUntil("both apps' windows in sway's tree", 20_000, async () => {
      const pids = (await swayViews(desktop.env)).map((v) => v.pid);
      return pids.includes(factory) && pids.includes(demo);
    });
    await swaymsg(desktop.env, "command", `[pid=${factory}] floating enable, move position 100 150`);
    // The client resizes itself after floating: wait until sway's view of it holds still.
    let last = "";
    await waitUntil("the floating window to settle", 10_000, async () => {
      await new Promise((r) => setTimeout(r, 150));
      const v = (await swayViews(desktop.env)).find((v) => v.pid === factory)!;
      const now = JSON.stringify([v.type, content(v)]);
      const still = now === last && v.type === "floating_con" && content(v).x === 100;
      last = now;
      return still;
    });
  });
  afterAll(async () => {
    for (const a of apps) a.kill("SIGKILL");
    await desktop?.stop();
  });

  const cli = (args: string[]) => deckhand(desktop, args, { stateDir });
  const okCli = (args: string[]) => ok(desktop, args, { stateDir });

  async function atspiExtents(pid: number, keys: string[]): Promise<Record<string, [number, number, number, number]>> {
    const argv = asDesktopUser([SYSTEM_PYTHON, "-c", EXTENTS_PY, String(pid), ...keys], desktop.root);
    return waitUntil(`pyatspi extents of ${pid}`, 15_000, async () => {
      const { stdout } = await run(argv[0]!, argv.slice(1), { env: { ...process.env, ...desktop.env }, cwd: join(desktop.root, "home"), timeout: 15_000 });
      const r = JSON.parse(stdout) as Record<string, [number, number, number, number]>;
      return keys.every((k) => k in r) ? r : undefined;
    });
  }

  it("announces the atspi+sway backend and refuses what Wayland does not have, saying why", async () => {
    const caps = await okCli(["capabilities"]);
    expect(caps.helper.backend).toBe("atspi+sway");
    for (const k of ["list_apps", "list_windows", "get_tree", "permissions", "screenshot", "screenshot.redact_secure", "input.keyboard", "input.pointer", "point_click", "clipboard.get", "clipboard.set", "clipboard.paste", "watch_user_input"]) expect(caps.capabilities[k].supported, k).toBe(true);
    expect(caps.capabilities["clipboard.get"].note).toMatch(/wlr-data-control/);
    expect(caps.capabilities.watch_user_input.note).toMatch(/org_kde_kwin_idle/);
    // What sway 1.7 cannot do: refused with why.
    expect(caps.capabilities["screenshot.occluded"]).toMatchObject({ supported: false });
    expect(caps.capabilities["screenshot.occluded"].note).toMatch(/no per-window capture/);
    // (Input: test/live/wayland-input.test.ts; element routes: test/live/wayland-elements.test.ts; the clipboard: matrix-wayland.test.ts.)
    // A Wayland session whose compositor's IPC is not there: windows, trees and the clipboard refused, naming what is missing.
    const other = await deckhand(desktop, ["capabilities"], { stateDir, env: { SWAYSOCK: "" } });
    expect(other.envelope.result.helper.backend).toBe("atspi+wayland");
    for (const k of ["list_windows", "get_tree", "clipboard.get"]) {
      expect(other.envelope.result.capabilities[k]).toMatchObject({ supported: false });
      expect(other.envelope.result.capabilities[k].note).toMatch(/SWAYSOCK is unset/);
    }
    // The refusal is the orchestrator's capability gate: nothing is sent.
    const clip = await deckhand(desktop, ["clipboard", "get"], { stateDir, env: { SWAYSOCK: "" } });
    expect(clip.envelope.ok).toBe(false);
    expect(clip.envelope.error).toMatchObject({ code: "ACTION_UNSUPPORTED" });
    expect(clip.envelope.error!.message).toMatch(/clipboard get is not supported/);
    // The compositor stands for the display in the permission checks.
    const perms = await okCli(["permissions"]);
    expect(perms.checks.find((c: { id: string }) => c.id === "display")).toMatchObject({ status: "granted", nativeId: "wayland_compositor" });
  });

  it("lists windows from sway's tree: the container id, the content bounds, the stacking", async () => {
    const tree = await swayViews(desktop.env);
    for (const pid of [factory, demo]) {
      const view = tree.find((v) => v.pid === pid)!;
      const listed = await okCli(["list-windows", "--app", `pid:${pid}`]);
      expect(listed.windows).toHaveLength(1);
      expect(listed.windows[0]).toMatchObject({ windowId: view.id, title: view.name, bounds: content(view), minimized: false });
    }
    // The floating window is above the tiled one.
    const z = async (pid: number) => (await okCli(["list-windows", "--app", `pid:${pid}`])).windows[0].zIndex as number;
    expect(await z(factory)).toBeGreaterThan(await z(demo));
    const apps = await okCli(["list-apps"]);
    for (const pid of [factory, demo]) expect(apps.apps.find((a: { pid: number }) => a.pid === pid)).toMatchObject({ windowCount: 1, accessible: true });
  });

  it("reads a tiled window's tree with screen bounds: window-relative extents moved by sway's content origin", async () => {
    const view = (await swayViews(desktop.env)).find((v) => v.pid === demo)!;
    const origin = content(view);
    const rel = await atspiExtents(demo, ["push button:Run", "page tab:Info"]);
    // Tiled: no shadow, the frame is the window geometry itself.
    expect(rel.frame!.slice(2)).toEqual([origin.width, origin.height]);
    const state = await okCli(["get-app-state", "--app", `pid:${demo}`]);
    expect(state.window.windowId).toBe(view.id);
    for (const [role, title, key] of [["button", "Run", "push button:Run"], ["tab", "Info", "page tab:Info"]] as const) {
      const el = state.snapshot.elements.find((e: { role: string; title: string }) => e.role === role && e.title === title);
      expect(el, `${role} ${title}`).toBeDefined();
      const [x, y, w, h] = rel[key]!;
      expect(el.bounds).toEqual({ x: origin.x + x, y: origin.y + y, width: w, height: h });
    }
  });

  it("reads a floating client-side-decorated window's tree: the shadow is not counted, and bounds follow the window", async () => {
    const rel = await atspiExtents(factory, ["push button:Close"]);
    const close = async () => {
      const state = await okCli(["get-app-state", "--app", `pid:${factory}`]);
      return state.snapshot.elements.find((e: { role: string; title: string }) => e.role === "button" && e.title === "Close").bounds;
    };
    const view = (await swayViews(desktop.env)).find((v) => v.pid === factory)!;
    const origin = content(view);
    expect(origin).toMatchObject({ x: 100, y: 150 });
    // The surface is larger than the window (GTK 3 draws its shadow around it)...
    expect(rel.frame![2]).toBeGreaterThan(origin.width);
    // ...and the header bar, the first child, starts at the window's top-left on the screen.
    const [hx, hy] = rel["first child"]!;
    const [cx, cy, cw, ch] = rel["push button:Close"]!;
    expect(await close()).toEqual({ x: origin.x + cx - hx, y: origin.y + cy - hy, width: cw, height: ch });

    // Moved by sway: the bounds move by exactly as much.
    const before = await close();
    await swaymsg(desktop.env, "command", `[pid=${factory}] move position 300 200`);
    await waitUntil("sway to move the window", 5000, async () => content((await swayViews(desktop.env)).find((v) => v.pid === factory)!).x === 300);
    const after = await close();
    expect({ dx: after.x - before.x, dy: after.y - before.y }).toEqual({ dx: 200, dy: 50 });
  });

  it("screenshots the top window's region through wlr-screencopy: the same pixels grim captures", async () => {
    const view = (await swayViews(desktop.env)).find((v) => v.pid === factory)!;
    const shot = await okCli(["screenshot", "--app", `pid:${factory}`]);
    // At 300,200 on a 1280x800 output: the part on the screen.
    const area = { x: 300, y: 200, width: 1280 - 300, height: 800 - 200 };
    expect(content(view)).toMatchObject({ x: 300, y: 200 });
    expect(shot.screenshot).toMatchObject({ method: "wlr-screencopy", origin: { x: area.x, y: area.y }, width: area.width, height: area.height, format: "png" });
    const grim = join(stateDir, "grim.png");
    await run("grim", ["-g", `${area.x},${area.y} ${area.width}x${area.height}`, grim], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    // Pixels that differ by more than 5%: the spinners animate, nothing else may differ.
    const { stderr } = await run("/usr/bin/compare", ["-metric", "AE", "-fuzz", "5%", shot.screenshot.path, grim, "null:"]).catch((e: { stderr: string }) => ({ stderr: e.stderr }));
    const differing = Number(stderr.trim().split(/\s/)[0]);
    expect(differing, stderr).toBeLessThan(area.width * area.height * 0.005);
  });

  it("refuses a covered window's screenshot: SCREENSHOT_FAILED reason covered, naming the window over it", async () => {
    const tree = await swayViews(desktop.env);
    const over = tree.find((v) => v.pid === factory)!;
    const r = await cli(["screenshot", "--app", `pid:${demo}`]);
    expect(r.envelope.ok).toBe(false);
    // The helper's details (reason covered, covering_window_id) stay in the helper's answer; the envelope keeps its message.
    expect(r.envelope.error!.code).toBe("SCREENSHOT_FAILED");
    expect(r.envelope.error!.message).toMatch(new RegExp(`covered by window ${over.id} `));
  });

  it("blacks out a password field in a Wayland screenshot", async () => {
    await swaymsg(desktop.env, "command", `[pid=${factory}] move scratchpad`);
    const script = [
      "import gi",
      "gi.require_version('Gtk', '3.0')",
      "from gi.repository import Gtk",
      "w = Gtk.Window(title='wl-secret'); b = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=8)",
      "e = Gtk.Entry(); e.set_visibility(False); e.set_text('hunter2')",
      "b.add(Gtk.Label(label='Password:')); b.add(e); w.add(b); w.set_default_size(360, 120)",
      "w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
    ].join("\n");
    const secret = launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, "-c", script]);
    apps.push(secret);
    await waitUntil("the password app in sway's tree", 20_000, async () => (await swayViews(desktop.env)).some((v) => v.pid === secret.pid));
    await swaymsg(desktop.env, "command", `[pid=${secret.pid}] floating enable, move position 40 60`);
    const entry = await waitUntil("the password field on the AT-SPI bus", 15_000, async () => {
      const state = await okCli(["get-app-state", "--app", `pid:${secret.pid}`]);
      return state.snapshot.elements.find((e: { secure: boolean }) => e.secure);
    });
    const shot = await okCli(["screenshot", "--app", `pid:${secret.pid}`]);
    expect(shot.screenshot.redacted).toBeGreaterThanOrEqual(1);
    expect(shot.redacted.secureFields).toBe(1);
    const b = entry.bounds;
    const crop = `${b.width - 4}x${b.height - 4}+${b.x + 2 - shot.screenshot.origin.x}+${b.y + 2 - shot.screenshot.origin.y}`;
    const brightest = async (png: string) => Number((await run("/usr/bin/convert", [png, "-crop", crop, "+repage", "-format", "%[fx:maxima]", "info:"])).stdout);
    expect(await brightest(shot.screenshot.path)).toBe(0);
    // On the screen itself the field is not black: the image's black is the redaction.
    const grim = join(stateDir, "grim-secret.png");
    const o = shot.screenshot.origin;
    await run("grim", ["-g", `${o.x},${o.y} ${shot.screenshot.width}x${shot.screenshot.height}`, grim], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    expect(await brightest(grim)).toBeGreaterThan(0.5);
  });

  it("an Xwayland window is listed, and its tree read by X11's rules (its extents are on the screen)", async () => {
    // An accessible GTK 3 app as an X11 client of sway's Xwayland (started on demand).
    const script = [
      "import gi",
      "gi.require_version('Gtk', '3.0')",
      "from gi.repository import Gtk",
      "w = Gtk.Window(title='wl-x11'); w.add(Gtk.Button(label='Hello')); w.connect('destroy', Gtk.main_quit); w.show_all(); Gtk.main()",
    ].join("\n");
    const x11app = launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, "-c", script], { DISPLAY: desktop.env.DISPLAY!, GDK_BACKEND: "x11" });
    apps.push(x11app);
    const view = await waitUntil("the X11 app in sway's tree", 20_000, async () => (await swayViews(desktop.env)).find((v) => v.pid === x11app.pid));
    expect(view.shell).toBe("xwayland");
    // An Xwayland window is mapped before its title and size settle (seen when other desktops ran
    // alongside): compare deckhand's listing with sway's view of the same moment, until both agree.
    let last: unknown = null;
    await waitUntil("list-windows to agree with sway's view of the Xwayland window", 10_000, async () => {
      const now = (await swayViews(desktop.env)).find((v) => v.pid === x11app.pid);
      const listed = await okCli(["list-windows", "--app", `pid:${x11app.pid}`]);
      last = { sway: now && { id: now.id, name: now.name, bounds: now && content(now) }, listed: listed.windows[0] };
      const w = listed.windows[0];
      return now && w && w.windowId === now.id && w.title === "wl-x11" && JSON.stringify(w.bounds) === JSON.stringify(content(now)) ? true : undefined;
    }).catch((err) => {
      throw new Error(`${(err as Error).message}: last seen ${JSON.stringify(last)}`);
    });
    await waitUntil("the X11 app on the AT-SPI bus", 15_000, async () =>
      (await okCli(["list-apps"])).apps.some((a: { pid: number; accessible: boolean }) => a.pid === x11app.pid && a.accessible),
    );
    const st = await waitUntil("the X11 app's tree", 15_000, async () => {
      const r = await cli(["get-app-state", "--app", `pid:${x11app.pid}`]);
      return r.envelope.ok && r.envelope.result.snapshot.elements.some((e: { title: string }) => e.title === "Hello") ? r.envelope.result : undefined;
    });
    const now = content((await swayViews(desktop.env)).find((v) => v.pid === x11app.pid)!);
    expect(st.window).toMatchObject({ windowId: view.id, bounds: now });
    const hello = st.snapshot.elements.find((e: { title: string }) => e.title === "Hello");
    expect(hello.bounds.x).toBeGreaterThanOrEqual(now.x);
    expect(hello.bounds.y).toBeGreaterThanOrEqual(now.y);
    expect(hello.bounds.x + hello.bounds.width).toBeLessThanOrEqual(now.x + now.width);
  });
});
