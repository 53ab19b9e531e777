// The menus rows' "no menu left open" oracle (desk.ts MatrixDesk.openMenus)
// and its self-check. On X11 an open menu is a popup window of the app
// (list-windows popup: true), read from the X server. On Wayland sway's tree
// holds no xdg_popup, so the app's accessibility tree stands for it, read
// with pyatspi (open_menus.py), not through deckhand: an item shown inside a
// menu is an open menu. That is weaker than a window: a popup whose items
// are not in the tree (Qt 5's QToolButton menus) is not seen there. The
// script runs as the apps' user (Wayland: deckhand-wl): an app's own AT-SPI
// socket accepts its own uid only, and pyatspi reads through it.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Serve } from "../deckhand.ts";
import { desktopEnv, SYSTEM_PYTHON, type DesktopLike } from "../harness.ts";

const run = promisify(execFile);
const SCRIPT = join(import.meta.dirname, "open_menus.py");

/** What open_menus.py does besides listing: open a menu bar's menu by name, or close them all (the oracle's self-check). */
export type MenuToggle = { open: string } | "close";

/** open_menus.py on the desktop's accessibility bus, its argv wrapped to run as the apps' user: its JSON answer. */
export async function accessibleMenus(desktop: DesktopLike, pid: number, toggle?: MenuToggle, asApps: (argv: string[]) => string[] = (a) => a): Promise<any> {
  const extra = toggle === undefined ? [] : toggle === "close" ? ["close"] : ["open", toggle.open];
  const [cmd, ...args] = asApps([SYSTEM_PYTHON, SCRIPT, String(pid), ...extra]);
  const { stdout } = await run(cmd!, args, { env: desktopEnv(desktop), timeout: 30_000, maxBuffer: 16 << 20 });
  return JSON.parse(stdout);
}

/** X11: the app's popup windows, as "popup window <id>". */
export async function popupWindows(s: Serve, pid: number): Promise<string[]> {
  const w = await s.ok("list-windows", { app: `pid:${pid}` });
  return w.windows.filter((x: any) => x.popup).map((x: any) => `popup window ${x.windowId}`);
}

/** Wayland: the items shown inside the app's menus, as "menu > item". */
export const shownMenuItems = (desktop: DesktopLike, pid: number, asApps: (argv: string[]) => string[]): Promise<string[]> => accessibleMenus(desktop, pid, undefined, asApps);
