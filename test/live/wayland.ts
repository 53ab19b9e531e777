// Helpers for the Wayland live tests (issue 19): the prerequisites, sway's
// own IPC as the oracle, apps run as the desktop's user.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe } from "vitest";
import { asUser, lookupUser, WAYLAND_USER } from "../../src/desktop/user.ts";
import { liveMissing } from "./harness.ts";

const run = promisify(execFile);

const WAYLAND_TOOLS = ["sway", "swaymsg", "Xwayland", "setpriv", "gtk3-widget-factory"];

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function waylandMissing(): string[] {
  const path = (process.env.PATH ?? "").split(":");
  const missing = WAYLAND_TOOLS.filter((t) => !path.some((d) => isExecutable(join(d, t))));
  return [...liveMissing(), ...missing];
}

/** Like describeLive, with sway and its tools required too (CI: missing ones fail). */
export function describeWayland(name: string, fn: () => void): void {
  const missing = waylandMissing();
  if (missing.length === 0) describe(name, fn);
  else if (process.env.CI) {
    describe(name, () => {
      beforeAll(() => {
        throw new Error(`Wayland live test prerequisites missing on CI: ${missing.join(", ")} (see ci/apt-packages.txt)`);
      });
      fn();
    });
  } else describe.skip(`${name} [skipped: missing ${missing.join(", ")}]`, fn);
}

export const AS_ROOT = process.getuid?.() === 0;

/** argv as the Wayland desktop's user (deckhand-wl under root), HOME in its private root. */
export function asDesktopUser(argv: string[], root: string): string[] {
  return asUser(argv, AS_ROOT ? lookupUser(WAYLAND_USER) : undefined, join(root, "home"));
}

/** Starts a program inside the desktop as its user; DISPLAY empty unless given (native Wayland). */
export function launchAsUser(env: Record<string, string>, root: string, argv: string[], extra: Record<string, string> = {}): ChildProcess {
  const full = asDesktopUser(argv, root);
  const child = spawn(full[0]!, full.slice(1), { env: { ...process.env, ...env, DISPLAY: "", ...extra }, cwd: join(root, "home"), stdio: "ignore", detached: true });
  child.on("error", () => {});
  return child;
}

export interface SwayRect {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface SwayNode {
  id: number;
  type: string;
  name: string | null;
  pid?: number;
  app_id?: string | null;
  shell?: string;
  focused: boolean;
  visible?: boolean;
  rect: SwayRect;
  window_rect: SwayRect;
  nodes: SwayNode[];
  floating_nodes: SwayNode[];
}

export async function swaymsg(env: Record<string, string>, type: string, ...command: string[]): Promise<unknown> {
  const { stdout } = await run("swaymsg", ["-r", "-s", env.SWAYSOCK!, "-t", type, ...command], { timeout: 5000 });
  return JSON.parse(stdout);
}

/** Every view (a node with a pid) of a get_tree reply, in tree order. */
export function views(node: SwayNode): SwayNode[] {
  const kids = [...(node.nodes ?? []), ...(node.floating_nodes ?? [])];
  return [...(node.pid !== undefined ? [node] : []), ...kids.flatMap(views)];
}

export async function swayViews(env: Record<string, string>): Promise<SwayNode[]> {
  return views((await swaymsg(env, "get_tree")) as SwayNode);
}
