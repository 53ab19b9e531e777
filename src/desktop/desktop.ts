import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAccessibility } from "./atspi.ts";
import type { StartContext } from "./context.ts";
import { startSessionBus } from "./dbus.ts";
import { removeDisplayFiles, startXvfb } from "./display.ts";
import { killNow, terminate, type ProcessRecord } from "./processes.ts";
import { startSeatDevices, startSway } from "./sway.ts";
import { waylandDesktopUser, type DesktopUser } from "./user.ts";
import { startWindowManager } from "./wm.ts";

export interface DesktopOptions {
  width?: number;
  height?: number;
  depth?: number;
  log?: (line: string) => void;
  /** Deadline for each start-up step (default 15 s). */
  stepTimeoutMs?: number;
  /** Keep the desktop running after this process exits (`deckhand desktop start`). */
  persistent?: boolean;
  /** The start-up phase now running, for a terminal's progress line; null once the desktop is up or has failed. */
  progress?: (phase: string | null) => void;
  /**
   * A headless sway (Wayland) desktop instead of Xvfb + openbox; run as the
   * unprivileged user deckhand-wl when deckhand is root (see docs/wayland.md).
   */
  wayland?: boolean;
  /**
   * Wayland: the Linux helper's path, run with `--seat-devices` for the
   * desktop's life to put a keyboard and a pointer in the headless seat, as
   * every real session has (GTK makes no window active in a seat without a
   * keyboard). Absent: the seat stays empty.
   */
  seatDevices?: string;
}

export interface Desktop {
  display: string;
  /** Merge into a process's environment to run it inside the desktop. */
  env: Record<string, string>;
  /** The processes the desktop started (Xvfb, dbus-daemon, at-spi-bus-launcher, at-spi2-registryd, openbox). */
  pids: number[];
  /** Private directory holding the runtime and XDG dirs and the daemons' logs. */
  root: string;
  /** Who runs inside the desktop when not deckhand's own user (a Wayland desktop started by root). */
  user?: DesktopUser;
  /** HOME for processes run as `user`. */
  home: string;
  /** What tear-down needs; persisted by `deckhand desktop start`. */
  record: DesktopRecord;
  stop(): Promise<void>;
}

/** What tear-down needs, also what `deckhand desktop start` records on disk. */
export interface DesktopRecord {
  /** X11: the display (":N"); Wayland: the Wayland socket's name (wayland-N). */
  display: string;
  /** Absent in records written before Wayland desktops existed: x11. */
  kind?: "x11" | "wayland";
  /** The user a Wayland desktop runs as, when not deckhand's own. */
  user?: string;
  env: Record<string, string>;
  root: string;
  processes: ProcessRecord[];
}

/** Variables from the caller's environment that would point the desktop at another session. */
const INHERITED_BUT_WRONG = [
  "DISPLAY",
  "WAYLAND_DISPLAY",
  "XAUTHORITY",
  "DBUS_SESSION_BUS_ADDRESS",
  "DBUS_STARTER_ADDRESS",
  "DBUS_STARTER_BUS_TYPE",
  "AT_SPI_BUS_ADDRESS",
  "SESSION_MANAGER",
];

/** Desktops of this process that must not outlive it. */
const owned = new Set<DesktopRecord>();
let exitHookInstalled = false;

export async function startDesktop(opts: DesktopOptions = {}): Promise<Desktop> {
  const size = { width: opts.width ?? 1920, height: opts.height ?? 1080, depth: opts.depth ?? 24 };
  const wayland = opts.wayland ?? false;
  const t0 = performance.now();
  // Before anything is made: a failure to create the user leaves nothing behind.
  const user = wayland ? waylandDesktopUser() : undefined;
  const root = mkdtempSync(join(tmpdir(), "deckhand-desktop-"));
  const dirs = {
    XDG_RUNTIME_DIR: join(root, "runtime"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_STATE_HOME: join(root, "state"),
  };
  const logDir = join(root, "logs");
  const home = join(root, "home");
  const userDirs = [...Object.values(dirs), ...(wayland ? [home, join(dirs.XDG_CONFIG_HOME, "sway")] : [])];
  for (const d of [...userDirs, logDir]) mkdirSync(d, { mode: 0o700 });
  chmodSync(dirs.XDG_RUNTIME_DIR, 0o700); // mkdir's mode is subject to umask; runtime dirs must be exactly 0700
  if (user) {
    // The desktop's user owns its root and dirs (the logs stay deckhand's: their files are opened by deckhand).
    for (const d of [root, ...userDirs]) chownSync(d, user.uid, user.gid);
  }

  const env: Record<string, string> = {
    ...dirs,
    GSETTINGS_BACKEND: "memory",
    NO_AT_BRIDGE: "0",
    GTK_MODULES: "gail:atk-bridge",
    ...(wayland
      ? { GDK_BACKEND: "wayland", QT_QPA_PLATFORM: "wayland;xcb", XDG_SESSION_TYPE: "wayland", DECKHAND_BACKEND: "wayland" }
      : {
          // The runtime dir is private, so a Wayland socket can never be found there;
          // say so outright so toolkits do not try.
          GDK_BACKEND: "x11",
          QT_QPA_PLATFORM: "xcb",
        }),
  };
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !INHERITED_BUT_WRONG.includes(k)) base[k] = v;
  }
  const ctx: StartContext = {
    env: { ...base, ...env },
    logDir,
    persistent: opts.persistent ?? false,
    timeoutMs: opts.stepTimeoutMs ?? 15_000,
    started: [],
    log: opts.log,
    user,
    home,
    daemonOptions(extra) {
      return { env: this.env, logDir, persistent: this.persistent, user: this.user, home: this.home, ...extra };
    },
  };
  // Shares ctx.started, so tear-down (and the exit hook) sees every process as soon as it starts.
  const record: DesktopRecord = { display: "", kind: wayland ? "wayland" : "x11", ...(user ? { user: user.name } : {}), env, root, processes: ctx.started };
  const mark = (step: string, since: number) => opts.log?.(`desktop: ${step} ready in ${Math.round(performance.now() - since)} ms`);
  if (!ctx.persistent) trackForExit(record);
  const phase = opts.progress ?? (() => {});
  try {
    let t = performance.now();
    if (!wayland) {
      phase("desktop: starting the X server (Xvfb)…");
      const x = await startXvfb(ctx, size);
      record.display = env.DISPLAY = ctx.env.DISPLAY = x.display;
      mark(`Xvfb ${x.display}`, t);
      t = performance.now();
    }

    phase("desktop: starting the session D-Bus…");
    const bus = await startSessionBus(ctx);
    env.DBUS_SESSION_BUS_ADDRESS = ctx.env.DBUS_SESSION_BUS_ADDRESS = bus.address;
    mark("session bus", t);

    t = performance.now();
    phase("desktop: starting the AT-SPI accessibility bus and registry…");
    const a11y = await startAccessibility(ctx, bus.address);
    // Set explicitly so that an AT_SPI_BUS_ADDRESS in the caller's
    // environment can never point clients at another desktop's tree.
    env.AT_SPI_BUS_ADDRESS = a11y.a11yAddress;
    mark("accessibility bus and registry", t);

    t = performance.now();
    if (wayland) {
      phase("desktop: starting the compositor (sway, headless)…");
      const sway = await startSway(ctx, size, user?.uid ?? process.getuid?.() ?? 0);
      record.display = env.WAYLAND_DISPLAY = ctx.env.WAYLAND_DISPLAY = sway.waylandDisplay;
      // The seat devices watch sway's input events through it (helper --seat-devices).
      env.SWAYSOCK = ctx.env.SWAYSOCK = sway.swaysock;
      env.DISPLAY = sway.xDisplay; // Xwayland, started on demand by sway
      mark(`sway ${sway.waylandDisplay} (Xwayland ${sway.xDisplay})`, t);
      if (opts.seatDevices) {
        t = performance.now();
        await startSeatDevices(ctx, opts.seatDevices, sway.swaysock);
        mark("seat keyboard and pointer", t);
      }
    } else {
      phase("desktop: starting the window manager (openbox)…");
      await startWindowManager(ctx, record.display);
      mark("openbox", t);
    }
  } catch (err) {
    phase("desktop: start-up failed, cleaning up…");
    await stopRecorded(record).catch(() => {});
    owned.delete(record);
    throw err;
  } finally {
    phase(null);
  }
  record.processes = ctx.started.map(({ name, pid, start }) => ({ name, pid, start }));
  opts.log?.(`desktop: ${record.display} up in ${Math.round(performance.now() - t0)} ms (root ${root})`);

  let stopping: Promise<void> | undefined;
  return {
    record,
    display: record.display,
    env: { ...env },
    pids: record.processes.map((p) => p.pid),
    root,
    user,
    home,
    stop() {
      stopping ??= stopRecorded(record).finally(() => owned.delete(record));
      return stopping;
    },
  };
}

/**
 * Ends exactly the desktop's processes (by pid with a start-time witness,
 * their groups and descendants) and anything carrying its private bus
 * address, then removes the files Xvfb left and the private root.
 */
export async function stopRecorded(record: DesktopRecord): Promise<void> {
  const bus = record.env.DBUS_SESSION_BUS_ADDRESS;
  const envEntries = bus ? [`DBUS_SESSION_BUS_ADDRESS=${bus}`, `DBUS_STARTER_ADDRESS=${bus}`] : [];
  try {
    await terminate({ roots: [...record.processes], envEntries });
  } finally {
    removeServerFiles(record);
    rmSync(record.root, { recursive: true, force: true });
  }
}

/** The X display files a killed Xvfb (or sway, for Xwayland) leaves behind, only while their lock names it. */
function removeServerFiles(record: DesktopRecord): void {
  const server = displayServer(record);
  const display = record.kind === "wayland" ? record.env.DISPLAY : record.display;
  if (server && display) removeDisplayFiles(display, server.pid);
}

/** The process the desktop lives by: Xvfb, or sway for a Wayland desktop. */
export function displayServer(record: DesktopRecord): ProcessRecord | undefined {
  return record.processes.find((p) => p.name === (record.kind === "wayland" ? "sway" : "xvfb"));
}

function trackForExit(record: DesktopRecord): void {
  owned.add(record);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const r of owned) {
      killNow(r.processes);
      removeServerFiles(r);
      rmSync(r.root, { recursive: true, force: true });
    }
  });
}
