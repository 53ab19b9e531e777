// Helpers for live tests: a private desktop per test file, the fixture app,
// real applications, xdotool and pyatspi run inside the desktop.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, closeSync, constants, existsSync, mkdtempSync, openSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe } from "vitest";
import { startDesktop, X11Connection, type Desktop, type DesktopOptions } from "../../src/desktop/index.ts";

const run = promisify(execFile);

/** Debian's python, which has python3-gi and pyatspi (the one on PATH may not). */
export const SYSTEM_PYTHON = "/usr/bin/python3";
export const FIXTURE_APP = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "apps", "fixture_app.py");

const REQUIRED_TOOLS = ["Xvfb", "dbus-daemon", "dbus-send", "openbox", "xdotool"];
const REQUIRED_FILES = ["/usr/libexec/at-spi-bus-launcher", "/usr/libexec/at-spi2-registryd", SYSTEM_PYTHON];

let missingCache: string[] | undefined;

/** What a live test needs and this machine lacks ([] when live tests can run). */
export function liveMissing(): string[] {
  if (missingCache) return missingCache;
  const missing: string[] = [];
  if (process.platform !== "linux") missing.push("Linux");
  const path = (process.env.PATH ?? "").split(":");
  for (const tool of REQUIRED_TOOLS) {
    if (!path.some((d) => isExecutable(join(d, tool)))) missing.push(tool);
  }
  for (const f of REQUIRED_FILES) if (!isExecutable(f)) missing.push(f);
  if (!missing.includes(SYSTEM_PYTHON)) {
    try {
      execFileSync(SYSTEM_PYTHON, ["-c", "import gi; gi.require_version('Gtk', '3.0'); from gi.repository import Gtk; import pyatspi"], {
        stdio: "ignore",
        env: { ...process.env, DISPLAY: "" },
      });
    } catch {
      missing.push("python3-gi, gir1.2-gtk-3.0 and python3-pyatspi for /usr/bin/python3");
    }
  }
  return (missingCache = missing);
}

export function liveAvailable(): boolean {
  return liveMissing().length === 0;
}

/**
 * `describe` for live tests. Without the prerequisites the suite is skipped
 * and says why; on CI (CI set) missing prerequisites fail instead, since
 * there they must run.
 */
export function describeLive(name: string, fn: () => void): void {
  const missing = liveMissing();
  if (missing.length === 0) describe(name, fn);
  else if (process.env.CI) {
    describe(name, () => {
      beforeAll(() => {
        throw new Error(`live test prerequisites missing on CI: ${missing.join(", ")} (see ci/apt-packages.txt)`);
      });
      fn();
    });
  } else describe.skip(`${name} [skipped: missing ${missing.join(", ")}]`, fn);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Anything that says where a desktop is: a Desktop or useDesktop()'s handle. */
export interface DesktopLike {
  env: Record<string, string>;
  display: string;
  root?: string;
}

export interface LiveDesktop extends DesktopLike {
  readonly desktop: Desktop;
  readonly root: string;
}

/** One private desktop for the test file: started in beforeAll, stopped in afterAll. */
export function useDesktop(opts: DesktopOptions = {}): LiveDesktop {
  let desktop: Desktop | undefined;
  beforeAll(async () => {
    desktop = await startDesktop(opts);
  });
  afterAll(async () => {
    await desktop?.stop();
  });
  const get = () => {
    if (!desktop) throw new Error("useDesktop(): the desktop is not started yet (use it inside tests or hooks)");
    return desktop;
  };
  return {
    get desktop() {
      return get();
    },
    get env() {
      return get().env;
    },
    get display() {
      return get().display;
    },
    get root() {
      return get().root;
    },
  };
}

export function desktopEnv(desktop: DesktopLike, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, ...desktop.env, ...extra };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `check` returns something truthy, or fails after timeoutMs with `what`. */
export async function waitUntil<T>(what: string, timeoutMs: number, check: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let interval = 5;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(interval);
    interval = Math.min(interval * 1.5, 50);
  }
}

export interface FixtureEvent {
  t: number;
  event: string;
  [key: string]: unknown;
}

export interface Fixture {
  pid: number;
  logPath: string;
  /** Every line logged so far, parsed. */
  events(): FixtureEvent[];
  /** The first event at index >= after that matches; fails after timeoutMs or if the app exits. */
  waitFor(predicate: (e: FixtureEvent) => boolean, timeoutMs?: number, after?: number): Promise<FixtureEvent>;
  /** Settles when the app has exited. */
  exit: Promise<ExitStatus>;
  /** SIGTERM (the app logs "exit" and quits), SIGKILL to its group after 3 s. */
  stop(): Promise<void>;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

interface Launched {
  child: ChildProcess;
  outputPath: string;
  exited(): boolean;
  exit: Promise<ExitStatus>;
  stop(): Promise<void>;
}

function launch(desktop: DesktopLike, argv: string[], extraEnv: Record<string, string>, name: string): Launched {
  const dir = desktop.root && existsSync(desktop.root) ? desktop.root : mkdtempSync(join(tmpdir(), "deckhand-live-"));
  const outputPath = join(dir, `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.out`);
  const fd = openSync(outputPath, "a");
  let child: ChildProcess;
  try {
    child = spawn(argv[0]!, argv.slice(1), { env: desktopEnv(desktop, extraEnv), detached: true, stdio: ["ignore", fd, fd] });
  } finally {
    closeSync(fd);
  }
  let exit: ExitStatus | undefined;
  child.on("error", () => {});
  const exitPromise = new Promise<ExitStatus>((resolve) =>
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      resolve(exit);
    }),
  );
  const pid = child.pid!;
  return {
    child,
    outputPath,
    exited: () => exit !== undefined,
    exit: exitPromise,
    async stop() {
      if (exit || pid === undefined) return;
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      try {
        process.kill(pid, "SIGTERM");
      } catch {
        return;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // gone
        }
      }, 3000);
      await gone;
      clearTimeout(timer);
    },
  };
}

/** The last lines a started app wrote (stdout and stderr): why it did not come up. */
export function outputTail(path: string): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-15).join("\n");
  } catch {
    return "";
  }
}

export interface LaunchFixtureOptions {
  /** Where the JSON lines go (default: a new file in the desktop's root). */
  logPath?: string;
  env?: Record<string, string>;
  /** Runs the argv through this first (the Wayland desktop: as its user, see wayland.ts asDesktopUser). */
  wrapArgv?: (argv: string[]) => string[];
  /** Wait for the "ready" event (default true). */
  waitReady?: boolean;
  timeoutMs?: number;
}

/** Starts test/fixtures/apps/fixture_app.py inside the desktop and (by default) waits until both windows are up. */
export async function launchFixture(desktop: DesktopLike, opts: LaunchFixtureOptions = {}): Promise<Fixture> {
  return launchFixtureScript(desktop, FIXTURE_APP, { timeoutMs: 20_000, ...opts });
}

export interface App {
  pid: number;
  /** X ids of its managed, viewable top-level windows. */
  windows: number[];
  stop(): Promise<void>;
}

/**
 * Starts a real application (gtk3-widget-factory, mousepad...) and waits
 * until the window manager lists a viewable window whose _NET_WM_PID is the
 * app's pid.
 */
export async function launchApp(desktop: DesktopLike, argv: string[], opts: { timeoutMs?: number } = {}): Promise<App> {
  const app = launch(desktop, argv, {}, argv[0]!.split("/").pop()!);
  const pid = app.child.pid!;
  const x = await X11Connection.open(desktop.display);
  try {
    const clientList = await x.internAtom("_NET_CLIENT_LIST");
    const wmPid = await x.internAtom("_NET_WM_PID");
    const windows = await waitUntil(`a window of ${argv.join(" ")}`, opts.timeoutMs ?? 20_000, async () => {
      if (app.exited()) throw new Error(`${argv[0]} exited before showing a window; its output:\n${outputTail(app.outputPath)}`);
      const mine: number[] = [];
      for (const w of await x.getProperty32(x.root, clientList)) {
        try {
          if ((await x.getProperty32(w, wmPid))[0] === pid && (await x.isViewable(w))) mine.push(w);
        } catch {
          // The window went away between the list and the read (apps map and
          // destroy windows while starting): BadWindow, not a failure.
        }
      }
      return mine.length ? mine : undefined;
    });
    return { pid, windows, stop: app.stop };
  } catch (err) {
    await app.stop();
    throw err;
  } finally {
    x.close();
  }
}

/** Runs xdotool inside the desktop; its stdout, trimmed. */
export async function xdotool(desktop: DesktopLike, args: string[]): Promise<string> {
  const { stdout } = await run("xdotool", args, { env: desktopEnv(desktop), timeout: 10_000 });
  return stdout.trim();
}

/** Runs a Python script with /usr/bin/python3 inside the desktop; its stdout. */
export async function python(desktop: DesktopLike, script: string, timeoutMs = 20_000): Promise<string> {
  const { stdout } = await run(SYSTEM_PYTHON, ["-c", script], { env: desktopEnv(desktop), timeout: timeoutMs, maxBuffer: 64 << 20 });
  return stdout;
}

export interface AccessibleNode {
  app: string;
  role: string;
  name: string;
  id: string;
  /** Screen coordinates: [x, y, width, height]. */
  extents: [number, number, number, number];
  states: string[];
}

const ACCESSIBLE_NODES_PY = `
import json, sys, pyatspi
out = []
def walk(app, node, depth):
    if depth > 40:
        return
    try:
        name = node.name or ""
        role = node.getRoleName()
        states = [pyatspi.stateToString(s) for s in node.getState().getStates()]
        try:
            ident = node.accessibleId or ""
        except Exception:
            ident = ""
        ext = None
        if name and "showing" in states:
            try:
                e = node.queryComponent().getExtents(pyatspi.DESKTOP_COORDS)
                ext = [e.x, e.y, e.width, e.height]
            except NotImplementedError:
                pass
        if name or ident:
            out.append({"app": app, "role": role, "name": name, "id": ident, "extents": ext or [0, 0, 0, 0], "states": states})
        children = list(node) if (want_all or role not in ("list box", "list")) else []
    except Exception as err:
        return
    for ch in children:
        if ch is not None:
            walk(app, ch, depth + 1)
want_all = sys.argv[-1] == "all"
only = sys.argv[1] if len(sys.argv) > 2 else ""
for app in pyatspi.Registry.getDesktop(0):
    if app is None or (only and app.name != only):
        continue
    walk(app.name, app, 0)
print(json.dumps(out))
`;

/**
 * Named accessible objects of the desktop's applications (or one app), as
 * pyatspi sees them. List contents are skipped unless all is set (the
 * fixture's 200 rows would dominate the walk).
 */
export async function accessibleNodes(desktop: DesktopLike, appName = "", all = false): Promise<AccessibleNode[]> {
  const { stdout } = await run(SYSTEM_PYTHON, ["-c", ACCESSIBLE_NODES_PY, appName, all ? "all" : "some"], {
    env: desktopEnv(desktop),
    timeout: 30_000,
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout) as AccessibleNode[];
}

/** The centre of a node's extents, as integer screen coordinates. */
export function centre(node: AccessibleNode): [number, number] {
  const [x, y, w, h] = node.extents;
  return [Math.round(x + w / 2), Math.round(y + h / 2)];
}

// ---------------------------------------------------------------- toolkits
// Added for the per-toolkit fixtures and real apps (issue 11); the exports
// above keep their behaviour.

const FIXTURES_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "apps");
export const GTK4_FIXTURE = join(FIXTURES_DIR, "gtk4_fixture.py");
export const QT5_FIXTURE = join(FIXTURES_DIR, "qt5_fixture.py");

/**
 * Starts any fixture script that logs JSON lines to DECKHAND_FIXTURE_LOG
 * (gtk4_fixture.py, qt5_fixture.py...) and waits for its "ready" event.
 */
export async function launchFixtureScript(desktop: DesktopLike, script: string, opts: LaunchFixtureOptions = {}): Promise<Fixture> {
  const dir = desktop.root && existsSync(desktop.root) ? desktop.root : mkdtempSync(join(tmpdir(), "deckhand-live-"));
  const base = script.split("/").pop()!.replace(/\.py$/, "");
  const logPath = opts.logPath ?? join(dir, `${base}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.jsonl`);
  const argv = [SYSTEM_PYTHON, script];
  const app = launch(desktop, opts.wrapArgv ? opts.wrapArgv(argv) : argv, { ...opts.env, DECKHAND_FIXTURE_LOG: logPath }, base);
  const events = (): FixtureEvent[] => {
    let text: string;
    try {
      text = readFileSync(logPath, "utf8");
    } catch {
      return [];
    }
    const lines = text.split("\n");
    lines.pop();
    return lines.map((l) => JSON.parse(l) as FixtureEvent);
  };
  const fixture: Fixture = {
    pid: app.child.pid!,
    logPath,
    events,
    async waitFor(predicate, timeoutMs = 10_000, after = 0) {
      return waitUntil(`a ${base} event matching ${predicate.toString()}`, timeoutMs, () => {
        const found = events().slice(after).find(predicate);
        if (found) return found;
        if (app.exited()) throw new Error(`${base} exited; its output:\n${outputTail(app.outputPath)}`);
        return undefined;
      });
    },
    exit: app.exit,
    stop: app.stop,
  };
  if (opts.waitReady ?? true) {
    try {
      await fixture.waitFor((e) => e.event === "ready", opts.timeoutMs ?? 30_000);
    } catch (err) {
      await app.stop();
      throw err;
    }
  }
  return fixture;
}

/** Child pids of a process (from /proc/PID/task/TID/children). */
export function childPids(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const text = readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim();
      if (text) out.push(...text.split(/\s+/).map(Number));
    }
  } catch {
    // gone
  }
  return out;
}

/** A process and all its descendants. */
export function processTree(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) for (const c of childPids(all[i]!)) if (!all.includes(c)) all.push(c);
  return all;
}

export interface TreeApp extends App {
  /** The pid deckhand should target: the process that owns the windows. */
  pid: number;
  /** The pid we started (a wrapper such as soffice's oosplash may sit between). */
  rootPid: number;
  /** Whether the started process is still running. */
  alive(): boolean;
  outputPath: string;
}

/**
 * Like launchApp, for apps that start through wrappers or fork (LibreOffice's
 * soffice -> oosplash -> soffice.bin, browsers): waits for a viewable managed
 * window whose _NET_WM_PID is the started process or any descendant, and
 * runs with extra environment. stop() kills the whole process group.
 */
export async function launchAppTree(desktop: DesktopLike, argv: string[], opts: LaunchAppTreeOptions = {}): Promise<TreeApp> {
  const app = launch(desktop, opts.wrapArgv ? opts.wrapArgv(argv) : argv, opts.env ?? {}, argv[0]!.split("/").pop()!);
  const rootPid = app.child.pid!;
  const finder = opts.findWindows ? { find: opts.findWindows, close: () => {} } : await x11WindowFinder(desktop);
  const stopTree = async () => {
    // The group first (SIGTERM), then SIGKILL after 5 s: browsers and soffice
    // leave helpers behind that would otherwise outlive the test.
    const members = processTree(rootPid);
    try {
      process.kill(-rootPid, "SIGTERM");
    } catch {
      // gone
    }
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && members.some(alivePid)) await sleep(100);
    for (const p of members.filter(alivePid)) {
      try {
        process.kill(p, "SIGKILL");
      } catch {
        // gone
      }
    }
    try {
      process.kill(-rootPid, "SIGKILL");
    } catch {
      // gone
    }
  };
  try {
    const found = await waitUntil(`a window of ${argv.join(" ")}`, opts.timeoutMs ?? 60_000, async () => {
      const tree = processTree(rootPid);
      if (app.exited() && tree.length === 1) throw new Error(`${argv[0]} exited before showing a window; its output:\n${outputTail(app.outputPath)}`);
      const mine = await finder.find(tree, opts.titleMatches);
      return mine.length ? mine : undefined;
    });
    const pid = found[0]!.pid;
    return { pid, rootPid, windows: found.map((f) => f.w), stop: stopTree, alive: () => alivePid(pid), outputPath: app.outputPath };
  } catch (err) {
    await stopTree();
    throw err;
  } finally {
    finder.close();
  }
}

/** Shown top-level windows of any of these pids (title matching, when given): the window id deckhand knows each by, and its pid. */
export type WindowFinder = (pids: number[], titleMatches?: RegExp) => Promise<{ w: number; pid: number }[]>;

export interface LaunchAppTreeOptions {
  timeoutMs?: number;
  env?: Record<string, string>;
  titleMatches?: RegExp;
  /** Runs the argv through this first (the Wayland desktop: as its user). */
  wrapArgv?: (argv: string[]) => string[];
  /** Where the app's windows are found (default: the X11 window manager's client list). */
  findWindows?: WindowFinder;
}

/** The X11 finder: viewable managed windows (_NET_CLIENT_LIST) whose _NET_WM_PID is one of the pids. */
async function x11WindowFinder(desktop: DesktopLike): Promise<{ find: WindowFinder; close(): void }> {
  const x = await X11Connection.open(desktop.display);
  const clientList = await x.internAtom("_NET_CLIENT_LIST");
  const wmPid = await x.internAtom("_NET_WM_PID");
  const find: WindowFinder = async (pids, titleMatches) => {
    const mine: { w: number; pid: number }[] = [];
    for (const w of await x.getProperty32(x.root, clientList)) {
      try {
        const p = (await x.getProperty32(w, wmPid))[0];
        if (p === undefined || !pids.includes(p) || !(await x.isViewable(w))) continue;
        if (titleMatches) {
          const title = execFileSync("xprop", ["-id", String(w), "_NET_WM_NAME"], { env: desktopEnv(desktop) }).toString();
          if (!titleMatches.test(title)) continue;
        }
        mine.push({ w, pid: p });
      } catch {
        // BadWindow: gone between the list and the read.
      }
    }
    return mine;
  };
  return { find, close: () => x.close() };
}

export function alivePid(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // A zombie has exited: it is not alive for our purposes.
    return !/^\d+ \(.*\) Z /.test(stat);
  } catch {
    return false;
  }
}

export interface ProcUsage {
  pid: number;
  /** utime + stime, in seconds. */
  cpuSeconds: number;
  /** VmRSS, in bytes. */
  rssBytes: number;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time and resident memory of a process, from /proc (throws when it is gone). */
export function procUsage(pid: number): ProcUsage {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the ")" of the command name: state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? "0") * 1024;
  return { pid, cpuSeconds: (utime + stime) / CLK_TCK, rssBytes: rss };
}

/** Sum of procUsage over a process tree (browsers do their work in children). */
export function treeUsage(pids: number[]): { cpuSeconds: number; rssBytes: number; pids: number[] } {
  let cpu = 0;
  let rss = 0;
  const seen: number[] = [];
  for (const p of pids) {
    try {
      const u = procUsage(p);
      cpu += u.cpuSeconds;
      rss += u.rssBytes;
      seen.push(p);
    } catch {
      // exited
    }
  }
  return { cpuSeconds: cpu, rssBytes: rss, pids: seen };
}
