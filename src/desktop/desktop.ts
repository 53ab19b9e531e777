import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startAccessibility } from "./atspi.ts";
import type { StartContext } from "./context.ts";
import { startSessionBus } from "./dbus.ts";
import { removeDisplayFiles, startXvfb } from "./display.ts";
import { killNow, terminate, type ProcessRecord } from "./processes.ts";
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
}

export interface Desktop {
  display: string;
  /** Merge into a process's environment to run it inside the desktop. */
  env: Record<string, string>;
  /** The processes the desktop started (Xvfb, dbus-daemon, at-spi-bus-launcher, at-spi2-registryd, openbox). */
  pids: number[];
  /** Private directory holding the runtime and XDG dirs and the daemons' logs. */
  root: string;
  /** What tear-down needs; persisted by `deckhand desktop start`. */
  record: DesktopRecord;
  stop(): Promise<void>;
}

/** What tear-down needs, also what `deckhand desktop start` records on disk. */
export interface DesktopRecord {
  display: string;
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
  const t0 = performance.now();
  const root = mkdtempSync(join(tmpdir(), "deckhand-desktop-"));
  const dirs = {
    XDG_RUNTIME_DIR: join(root, "runtime"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    XDG_CACHE_HOME: join(root, "cache"),
    XDG_STATE_HOME: join(root, "state"),
  };
  const logDir = join(root, "logs");
  for (const d of [...Object.values(dirs), logDir]) mkdirSync(d, { mode: 0o700 });
  chmodSync(dirs.XDG_RUNTIME_DIR, 0o700); // mkdir's mode is subject to umask; runtime dirs must be exactly 0700

  const env: Record<string, string> = {
    ...dirs,
    GSETTINGS_BACKEND: "memory",
    NO_AT_BRIDGE: "0",
    GTK_MODULES: "gail:atk-bridge",
    // The runtime dir is private, so a Wayland socket can never be found there;
    // say so outright so toolkits do not try.
    GDK_BACKEND: "x11",
    QT_QPA_PLATFORM: "xcb",
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
    daemonOptions(extra) {
      return { env: this.env, logDir, persistent: this.persistent, ...extra };
    },
  };
  // Shares ctx.started, so tear-down (and the exit hook) sees every process as soon as it starts.
  const record: DesktopRecord = { display: "", env, root, processes: ctx.started };
  const mark = (step: string, since: number) => opts.log?.(`desktop: ${step} ready in ${Math.round(performance.now() - since)} ms`);
  if (!ctx.persistent) trackForExit(record);
  const phase = opts.progress ?? (() => {});
  try {
    let t = performance.now();
    phase("desktop: starting the X server (Xvfb)…");
    const x = await startXvfb(ctx, size);
    record.display = env.DISPLAY = ctx.env.DISPLAY = x.display;
    mark(`Xvfb ${x.display}`, t);

    t = performance.now();
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
    phase("desktop: starting the window manager (openbox)…");
    await startWindowManager(ctx, x.display);
    mark("openbox", t);
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
    const xvfb = record.processes.find((p) => p.name === "xvfb");
    if (xvfb && record.display) removeDisplayFiles(record.display, xvfb.pid);
    rmSync(record.root, { recursive: true, force: true });
  }
}

function trackForExit(record: DesktopRecord): void {
  owned.add(record);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const r of owned) {
      killNow(r.processes);
      const xvfb = r.processes.find((p) => p.name === "xvfb");
      if (xvfb && r.display) removeDisplayFiles(r.display, xvfb.pid);
      rmSync(r.root, { recursive: true, force: true });
    }
  });
}
