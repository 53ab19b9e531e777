// What the fixture rows' runners (fixture-runners.ts) need of the desktop
// they run on, so that one runner body serves X11 and Wayland: how the GTK3
// fixture is started, which window id deckhand knows its windows by, and the
// scene oracles (focus, stacking or sway's tree, pointer). The X11 desk is
// here; the Wayland one is in wayland-oracles.ts.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, it } from "vitest";
import type { RgbImage } from "../../integration/adapters/png-read.ts";
import { newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { accessibleMenus, popupWindows, type MenuToggle } from "./menu-oracle.ts";
import { desktopEnv, launchAppTree, launchFixture, launchFixtureScript, xdotool, type DesktopLike, type Fixture, type LaunchAppTreeOptions, type LaunchFixtureOptions, type TreeApp } from "../harness.ts";
import { pointer, pointerViolations, proveOracles, scene, sceneViolations, type Scene } from "./oracles.ts";
import { record } from "./results.ts";
import { expectationOn, ROWS, type MatrixDesktop } from "./rows.ts";
import { parsePpm } from "./image-compare.ts";

const run = promisify(execFile);
/** ImageMagick's import (absolute: a stand-in may shadow it on PATH). */
const IMPORT = "/usr/bin/import";

export interface Bounds {
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface MatrixDesk {
  readonly kind: MatrixDesktop;
  readonly desktop: DesktopLike;
  /** Starts a fixture script on this desktop (default the GTK3 fixture) and waits for its "ready". */
  launchFixture(opts?: LaunchFixtureOptions, script?: string): Promise<Fixture>;
  /** deckhand's window id of the fixture's window with this title (X11: its xid; Wayland: sway's container id). */
  windowId(f: Fixture, title: string): Promise<number>;
  /** What the scene oracles compare; `f` is the fixture whose own log is the pointer oracle on Wayland. */
  scene(f: Fixture): Promise<Scene>;
  /** Every scene oracle's violations: focus, stacking (Wayland: sway's tree), pointer. */
  sceneViolations(before: Scene, after: Scene): string[];
  pointerViolations(before: Scene, after: Scene): string[];
  /**
   * Whether the helper puts the pointer back after pointer input (X11: yes,
   * XTest reads where it was; Wayland: no client can read the pointer, so
   * it is never put back and the receipt says pointer_restored false).
   */
  readonly restoresPointer: boolean;
  /**
   * The "pointer restored" oracle of a row that moved the pointer, from the
   * scene before it: X11, the pointer is back where it was; Wayland (it is
   * never put back), the pointer stays where the action left it: the
   * fixture sees it hold still over its window.
   */
  pointerAfterInputViolations(f: Fixture, before: Scene): Promise<string[]>;
  /** After a hover to (x, y) on the canvas whose bounds these are: where the pointer is not there. */
  pointerAtViolations(f: Fixture, mark: number, x: number, y: number, canvas: Bounds): Promise<string[]>;
  /** Starts a real app (through wrappers or forks) and waits for its shown windows (ids as deckhand knows them). */
  launchAppTree(argv: string[], opts?: LaunchAppTreeOptions): Promise<TreeApp>;
  /** Makes a directory the desktop's apps' own, recursively (profiles, documents), and returns it (X11: they run as we do). */
  handOver(dir: string): string;
  /** What a browser needs on this desktop beyond its usual flags (Wayland: to be a native Wayland client). */
  browser(kind: "chromium" | "firefox"): { args: string[]; env: Record<string, string> };
  /** Brings a window to the front and gives it the focus (X11: the window manager through xdotool; Wayland: sway, then its tree holding still). */
  raise(windowId: number): Promise<void>;
  /**
   * The app's open menus, one line each (none: no menu of it is open). X11:
   * its popup windows; Wayland: items shown inside its menus in its
   * accessibility tree (menu-oracle.ts), blind to a popup with no tree.
   */
  openMenus(s: Serve, pid: number): Promise<string[]>;
  /** Opens a menu bar's menu by name, or closes them all, through accessibility without deckhand (pyatspi): the open-menu oracle's self-check. */
  toggleMenu(pid: number, toggle: MenuToggle): Promise<void>;
  /**
   * Resizes a window to this size of content (X11: the window manager
   * through xdotool; Wayland: sway floats the view and sets its size, as a
   * tiled view's size is the layout's).
   */
  resize(windowId: number, width: number, height: number): Promise<void>;
  /** The X display an X11-only app (Tk, LibreOffice's gen plugin, xterm) is started on (Wayland: sway's Xwayland). */
  xDisplay(): string;
  /** An argv run as the desktop's apps' user (X11: as it is; Wayland under root: as deckhand-wl), for clients of their accessibility bus. */
  asApps(argv: string[]): string[];
  /** Types text into whatever has the keyboard focus with a tool independent of deckhand (X11: xdotool type; Wayland: wtype), for a row's set-up. */
  typeRaw(text: string): Promise<void>;
  /** The whole screen as the display server shows it, read by a tool independent of deckhand (X11: ImageMagick's import of the root window; Wayland: grim). */
  screenImage(): Promise<RgbImage>;
  /** This desktop's oracle self-check (before any row counts; once per process). */
  proveOracles(): Promise<void>;
  /** Runs and records a row on this desktop (results.ts record). */
  record(id: string, file: string, fn: () => Promise<void>): Promise<void>;
}

/** The X11 desktop (Xvfb + openbox): the X server is the oracle of focus, stacking and the pointer. */
export function x11Desk(desktop: DesktopLike): MatrixDesk {
  return {
    kind: "x11",
    desktop,
    launchFixture: (opts, script) => (script ? launchFixtureScript(desktop, script, opts) : launchFixture(desktop, opts)),
    async windowId(f, title) {
      const ready = f.events().find((e) => e.event === "ready") as any;
      return ready.windows.find((w: any) => w.title === title).xid;
    },
    scene: async () => scene(desktop),
    sceneViolations,
    pointerViolations,
    restoresPointer: true,
    pointerAfterInputViolations: async (_f, before) => pointerViolations(before, scene(desktop)),
    async pointerAtViolations(_f, _mark, x, y) {
      const at = pointer(desktop);
      return new RegExp(`^x:${x} y:${y} `).test(at) ? [] : [`the pointer is at ${at}, not x:${x} y:${y}`];
    },
    launchAppTree: (argv, opts) => launchAppTree(desktop, argv, opts),
    handOver: (dir) => dir,
    async raise(windowId) {
      await xdotool(desktop, ["windowactivate", "--sync", String(windowId)]);
      await xdotool(desktop, ["windowraise", String(windowId)]);
    },
    browser: () => ({ args: [], env: {} }),
    openMenus: popupWindows,
    toggleMenu: async (pid, toggle) => void (await accessibleMenus(desktop, pid, toggle)),
    async resize(windowId, width, height) {
      // --sync waits for the window manager to apply it; some refuse and never report it: then without.
      await xdotool(desktop, ["windowsize", "--sync", String(windowId), String(width), String(height)]).catch(() => xdotool(desktop, ["windowsize", String(windowId), String(width), String(height)]));
    },
    typeRaw: async (text) => void (await xdotool(desktop, ["type", "--delay", "20", text])),
    asApps: (argv) => argv,
    xDisplay: () => desktopEnv(desktop).DISPLAY!,
    async screenImage() {
      const { stdout } = await run(IMPORT, ["-window", "root", "-depth", "8", "ppm:-"], { env: desktopEnv(desktop), encoding: "buffer", maxBuffer: 64 << 20, timeout: 20_000 });
      return parsePpm(stdout);
    },
    proveOracles: async () => void (await proveOracles(desktop)),
    record: (id, file, fn) => record(id, file, fn, "x11"),
  };
}

/** A browser's argv on this desk: what the desktop needs beyond the usual flags goes before the URL (the argv's last); its env is desk.browser(kind).env. */
export function nativeBrowserArgv(desk: MatrixDesk, kind: "chromium" | "firefox", argv: string[]): string[] {
  return [...argv.slice(0, -1), ...desk.browser(kind).args, argv.at(-1)!];
}

/**
 * it() for a matrix row on a desk: registered only where the row applies
 * (rows.ts says why it is pending or not applicable elsewhere), named with
 * its expectation there, and recorded on that desktop. `before` runs first
 * inside the recorded row (e.g. failing it with why its app did not start).
 */
export function rowTest(on: MatrixDesktop, desk: () => MatrixDesk, file: string, timeout: number, before?: (id: string) => void) {
  return (id: string, fn: () => Promise<void>, t = timeout): void => {
    const r = ROWS.find((x) => x.id === id);
    if (!r) throw new Error(`no matrix row ${id}`);
    const want = expectationOn(r, on);
    // A pending row is listed as skipped with its reason (a suite of pending
    // rows only is then skipped whole, its set-up hooks not run).
    if ("pending" in want) return void it.skip(`${id}: pending on ${on}: ${want.pending}`, () => {});
    if (!("expect" in want)) return;
    it(`${id}: ${r.action} -> ${want.expect}`, () => desk().record(id, file, async () => (before?.(id), await fn())), t);
  };
}

/** Fails a row whose app did not start, with why: its rows are then recorded as failed rather than skipped. */
export function startFailed(failures: Map<string, Error>, group: string): void {
  const failed = failures.get(group);
  if (failed) throw new Error(`${group} did not start: ${failed.message}`);
}

/** A serve session without grants for the caller's describe, opened once the desk's oracles are proved; the getter is valid in its tests. */
export function useServe(desk: () => MatrixDesk): () => Serve {
  let bg: Serve | undefined;
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    bg = new Serve(desk().desktop, { stateDir: newStateDir() });
  }, 90_000);
  afterAll(async () => {
    await bg?.close();
  });
  return () => bg!;
}
