// The lifecycle rows' window-manager oracles (lifecycle-rows.ts) on each
// desktop, read from the desktop itself, never from deckhand:
// - X11: the X server and the window manager through xdotool (the focused
//   window, _NET_ACTIVE_WINDOW, a window's _NET_WM_PID; minimize is
//   windowminimize);
// - Wayland: sway's tree (the focused container, a view's pid and shell,
//   whether it is in the scratchpad); minimize is `move scratchpad`, which
//   is what a minimized window is on sway (deckhand lists scratchpad views
//   as minimized). sway has one focus: "active" and "focused" are the same
//   read there.
import { xdotool } from "../harness.ts";
import { AS_ROOT, swaymsg, type SwayNode } from "../wayland.ts";
import { lookupUser, WAYLAND_USER } from "../../../src/desktop/user.ts";
import type { MatrixDesk } from "./desk.ts";

export interface LifecycleOracles {
  /** The window holding the keyboard focus (0: none). */
  focused(): Promise<number>;
  /** The window the window manager calls active (X11: _NET_ACTIVE_WINDOW; sway: its focused view). */
  active(): Promise<number>;
  /** Minimizes a window behind deckhand's back (X11: iconified; sway: into the scratchpad). */
  minimize(windowId: number): Promise<void>;
  /** Whether the window manager has the window minimized (X11: deckhand's list is the reading, see below). */
  minimized(windowId: number): Promise<boolean | undefined>;
  /** The pid the desktop says owns a window (X11: _NET_WM_PID; sway: the view's client pid), undefined when there is no such window. */
  windowPid(windowId: number): Promise<number | undefined>;
  /** Windows the desktop shows for a pid. */
  windowsOf(pid: number): Promise<number[]>;
  /** Whether the window is a native client of the desktop (X11: always; sway: an xdg_shell view, not Xwayland). */
  native(windowId: number): Promise<boolean>;
  /** The uid launched apps must run as (X11: ours; Wayland: the desktop's user, deckhand-wl under root). */
  readonly appUid: number;
}

function* walk(node: SwayNode, workspace: string): Generator<{ node: SwayNode; workspace: string }> {
  const ws = node.type === "workspace" ? (node.name ?? "") : workspace;
  if (node.pid !== undefined) yield { node, workspace: ws };
  for (const c of [...(node.nodes ?? []), ...(node.floating_nodes ?? [])]) yield* walk(c, ws);
}

function focusedIn(node: SwayNode): number {
  if (node.focused) return node.id;
  for (const c of [...(node.nodes ?? []), ...(node.floating_nodes ?? [])]) {
    const id = focusedIn(c);
    if (id) return id;
  }
  return 0;
}

function swayOracles(desk: MatrixDesk): LifecycleOracles {
  const env = desk.desktop.env;
  const tree = async () => (await swaymsg(env, "get_tree")) as SwayNode;
  const view = async (id: number) => [...walk(await tree(), "")].find((v) => v.node.id === id);
  const user = AS_ROOT ? lookupUser(WAYLAND_USER) : undefined;
  return {
    focused: async () => focusedIn(await tree()),
    active: async () => focusedIn(await tree()),
    minimize: async (id) => void (await swaymsg(env, "command", `[con_id=${id}] move scratchpad`)),
    minimized: async (id) => {
      const v = await view(id);
      return v ? v.workspace === "__i3_scratch" : undefined;
    },
    windowPid: async (id) => (await view(id))?.node.pid,
    windowsOf: async (pid) => [...walk(await tree(), "")].filter((v) => v.node.pid === pid).map((v) => v.node.id),
    native: async (id) => (await view(id))?.node.shell === "xdg_shell",
    appUid: user?.uid ?? process.getuid!(),
  };
}

function x11Oracles(desk: MatrixDesk): LifecycleOracles {
  const x = (args: string[]) => xdotool(desk.desktop, args);
  return {
    focused: async () => Number(await x(["getwindowfocus"])),
    active: async () => Number(await x(["getactivewindow"])),
    minimize: async (id) => void (await x(["windowminimize", "--sync", String(id)])),
    // The X11 rows read minimized from deckhand's list-windows (_NET_WM_STATE_HIDDEN there), as before.
    minimized: async () => undefined,
    windowPid: async (id) => {
      const out = await x(["getwindowpid", String(id)]).catch(() => "");
      return out ? Number(out) : undefined;
    },
    // --all: every condition must hold (xdotool's default is any of them, and the empty name pattern matches every window).
    windowsOf: async (pid) => (await x(["search", "--all", "--onlyvisible", "--pid", String(pid), "--name", ""]).catch(() => "")).split("\n").filter(Boolean).map(Number),
    native: async () => true,
    appUid: process.getuid!(),
  };
}

export function lifecycleOracles(desk: MatrixDesk): LifecycleOracles {
  return desk.kind === "wayland" ? swayOracles(desk) : x11Oracles(desk);
}
