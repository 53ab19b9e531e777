// The Wayland desk (desk.ts MatrixDesk) for the matrix's shared runners:
// the fixture and real apps run as the desktop's user, native Wayland
// clients; window ids are sway's container ids; the oracles are
// wayland-oracles.ts'.
import { execFile } from "node:child_process";
import { chownSync, readdirSync } from "node:fs";
import { promisify } from "node:util";
import { join } from "node:path";
import { lookupUser, WAYLAND_USER } from "../../../src/desktop/user.ts";
import { desktopEnv, launchAppTree, waitUntil, type DesktopLike, type Fixture, type LaunchAppTreeOptions, type LaunchFixtureOptions, type TreeApp, type WindowFinder } from "../harness.ts";
import { AS_ROOT, asDesktopUser, swaymsg, swayViews } from "../wayland.ts";
import type { MatrixDesk } from "./desk.ts";
import { accessibleMenus, shownMenuItems } from "./menu-oracle.ts";
import { parsePpm } from "./image-compare.ts";
import { pointerViolations, QUIET_MS, sceneViolations } from "./oracles.ts";
import { record } from "./results.ts";
import { launchWaylandFixture, proveWaylandOracles, swayWindowId, settledTree, waylandOracleProof, waylandScene, type WaylandDesktop } from "./wayland-oracles.ts";

const run = promisify(execFile);

/** Shown views in sway's tree of any of these pids: sway's container id is deckhand's window id. */
function swayFinder(d: DesktopLike): WindowFinder {
  return async (pids, titleMatches) =>
    (await swayViews(d.env))
      .filter((v) => v.pid !== undefined && pids.includes(v.pid) && v.visible !== false && (!titleMatches || titleMatches.test(v.name ?? "")))
      .map((v) => ({ w: v.id, pid: v.pid! }));
}

/**
 * A real app on a workspace of its own, shown (tiled beside the fixture's
 * windows it would get a third of the screen, less than some apps' minimum
 * size); stop() ends it and shows the workspace that was shown before.
 */
async function launchOwnWorkspace(desktop: DesktopLike, argv: string[], opts: LaunchAppTreeOptions): Promise<TreeApp> {
  const home = ((await swaymsg(desktop.env, "get_workspaces")) as { name: string; focused: boolean }[]).find((w) => w.focused)!.name;
  const app = await launchAppTree(desktop, argv, opts);
  const stop = async () => {
    await app.stop();
    await swaymsg(desktop.env, "command", `workspace ${home}`);
  };
  try {
    for (const w of app.windows) await swaymsg(desktop.env, "command", `[con_id=${w}] move container to workspace app-${app.pid}`);
    await swaymsg(desktop.env, "command", `workspace app-${app.pid}`);
    await settledTree(desktop);
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...app, stop };
}

/**
 * A fixture whose windows sway has laid out, and whose stop() returns once the
 * layout holds still again. sway tiles an app's windows beside the others on
 * the workspace, so a fixture starting or ending moves and resizes every other
 * window there: a row that read a control's place while that went on clicked
 * beside it (settle.fixture.typed-keys, 2026-12-02: the click meant for Name
 * reached no control, the keys went to OK).
 */
async function launchSettled(desktop: WaylandDesktop, opts?: LaunchFixtureOptions, script?: string): Promise<Fixture> {
  const f = await launchWaylandFixture(desktop, opts, script);
  const stop = async () => {
    await f.stop();
    await settledTree(desktop);
  };
  try {
    await settledTree(desktop);
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...f, stop };
}

/**
 * The Wayland desk: apps run as the desktop's user (deckhand-wl under root),
 * native Wayland clients (DISPLAY empty, so nothing falls back to Xwayland).
 */
export function waylandDesk(desktop: WaylandDesktop): MatrixDesk {
  const asUser = (argv: string[]) => asDesktopUser(argv, desktop.root);
  return {
    kind: "wayland",
    desktop,
    launchFixture: (opts, script) => launchSettled(desktop, opts, script),
    windowId: (f, title) => swayWindowId(desktop, f, title),
    scene: (f) => waylandScene(desktop, f),
    sceneViolations,
    pointerViolations,
    restoresPointer: false,
    async pointerAfterInputViolations(f) {
      // Left where the action put it (over the fixture), and nothing moves it after.
      const now = await waylandScene(desktop, f);
      await new Promise((r) => setTimeout(r, QUIET_MS));
      const later = await waylandScene(desktop, f);
      const over = now.pointer.startsWith("over ") ? [] : [`the fixture last saw the pointer ${now.pointer}, not over its window where the action left it`];
      return [...over, ...pointerViolations(now, later)];
    },
    async pointerAtViolations(f, mark, x, y, canvas) {
      // The hover's last motion on the canvas, in the canvas's own coordinates.
      const m = f.events().slice(mark).filter((e) => e.event === "motion" && e.control === "Canvas").at(-1);
      const want = { x: x - canvas.x, y: y - canvas.y };
      return m && m.x === want.x && m.y === want.y ? [] : [`the canvas last saw the pointer at ${m ? `${m.x},${m.y}` : "nothing"}, not ${want.x},${want.y}`];
    },
    launchAppTree: (argv, opts = {}) => launchOwnWorkspace(desktop, argv, { ...opts, env: { DISPLAY: "", ...opts.env }, wrapArgv: asUser, findWindows: swayFinder(desktop) }),
    handOver(dir) {
      // The apps run as deckhand-wl under root: what they write must be theirs.
      const user = AS_ROOT ? lookupUser(WAYLAND_USER) : undefined;
      if (user) {
        chownSync(dir, user.uid, user.gid);
        for (const sub of readdirSync(dir, { recursive: true })) chownSync(join(dir, String(sub)), user.uid, user.gid);
      }
      return dir;
    },
    // Chromium picks X11 unless told; Firefox ESR 115 too (MOZ_ENABLE_WAYLAND).
    browser: (kind): { args: string[]; env: Record<string, string> } => (kind === "chromium" ? { args: ["--ozone-platform=wayland"], env: {} } : { args: [], env: { MOZ_ENABLE_WAYLAND: "1" } }),
    openMenus: (_s, pid) => shownMenuItems(desktop, pid, asUser),
    toggleMenu: async (pid, toggle) => void (await accessibleMenus(desktop, pid, toggle, asUser)),
    async raise(windowId) {
      await swaymsg(desktop.env, "command", `[con_id=${windowId}] focus`);
      // A window just mapped may still be laid out (sway tiles an app's second window beside its first): the
      // caller's captures start from a layout that holds still (the first run of image-options.fixture.region
      // saw 7388 of its 36000 pixels differ between a region and the full capture around it).
      await settledTree(desktop);
    },
    async resize(windowId, width, height) {
      // A tiled view's size is the layout's: floated, it takes the size asked for (its content, sway's window_rect).
      await swaymsg(desktop.env, "command", `[con_id=${windowId}] floating enable, resize set width ${width} px height ${height} px, move position 0 0`);
      await waitUntil(`sway to show window ${windowId} at ${width}x${height}`, 10_000, async () => {
        const v = (await swayViews(desktop.env)).find((x) => x.id === windowId);
        return v && v.window_rect.width === width && v.window_rect.height === height;
      });
      await settledTree(desktop);
    },
    asApps: asUser,
    xDisplay: () => desktop.env.DISPLAY!,
    // wtype's own virtual keyboard (the seat-devices holder keeps the seat a keyboard once it is gone).
    typeRaw: async (text) => void (await run("wtype", ["-d", "20", text], { env: { ...process.env, ...desktop.env }, timeout: 20_000 })),
    async screenImage() {
      // grim reads the output through wlr-screencopy, as an app of the desktop's user would.
      const argv = asUser(["/usr/bin/grim", "-t", "ppm", "-"]);
      const { stdout } = await run(argv[0]!, argv.slice(1), { env: desktopEnv(desktop), encoding: "buffer", maxBuffer: 64 << 20, timeout: 20_000 });
      return parsePpm(stdout);
    },
    proveOracles: async () => void (waylandOracleProof()?.ok || (await proveWaylandOracles(desktop))),
    record: (id, file, fn) => record(id, file, fn, "wayland"),
  };
}

