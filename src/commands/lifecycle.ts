// App lifecycle (issue 13): launch, activate, quit, and list-apps --all.
//
// launch: the app to start is resolved against the helper's installed apps
// (list_installed), else taken as an executable; policy decides on that
// identity before anything is spawned (a terminal cannot be started, not
// even through a wrapper such as `env` or `sh -c`); the helper starts it
// with the environment toolkits need to be accessible; then a bounded wait
// for a window of the process (or of a descendant, or, when the process
// handed off to an instance already running and exited, of that instance)
// whose accessibility tree is more than its frame. The app is never killed
// on a timeout: the error says it is left running.
//
// activate: raise and focus one window (foreground grant), focus read back.
// quit: policy, the confirm hook, then a polite close of each top-level
// window (the app may ask to save), then a bounded wait for the process to
// end. Never a kill.
import { basename, delimiter, isAbsolute, join } from "node:path";
import { accessSync, constants as fsConstants, realpathSync, statSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import type { CommandArgs } from "../protocol/commands.ts";
import type { CommandResult, ReadonlyDeep } from "../protocol/results.ts";
import type { OpResult, WireApp, WireWindow } from "../wire/messages.ts";
import { requireCapability, type CancelSignal, type EnvPort, type HelperPort, type SafetyPort, type SerialPort } from "../engine/ports.ts";
import { appKey, appWindows, resolveApp, resolveWindow, toApp, type AppCache, type ResolvedApp } from "../engine/resolve.ts";
import { auditAppId } from "../engine/safety.ts";
import type { SnapshotApp } from "../session/snapshot.ts";
import { hostProcessFacts, hostProcessTree } from "../platform/index.ts";

export type InstalledEntry = OpResult<"list_installed">["apps"][number];

export const LAUNCH_DEFAULT_TIMEOUT_MS = 30_000;
export const QUIT_DEFAULT_TIMEOUT_MS = 10_000;
/** Between two looks at the desktop while waiting. */
const POLL_MS = 150;
/** One look at a window's tree while waiting: enough nodes to tell a tree from a bare frame. */
const TREE_PROBE = { max_depth: 8, max_children: 64, max_nodes: 48 } as const;
/** Longest one tree probe may take (an app still starting may answer slowly). */
const TREE_PROBE_MS = 5_000;
/** Most words of a wrapper's arguments checked against policy. */
const MAX_WRAPPED_WORDS = 128;

type Ports = HelperPort & SafetyPort & CancelSignal;

function sleep(ms: number, signal: AbortSignal | undefined, what: string): Promise<void> {
  const cancelled = () => new DeckhandError("CANCELLED", `${what} was cancelled`);
  if (signal?.aborted) return Promise.reject(cancelled());
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(t);
      reject(cancelled());
    };
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const stripDesktop = (id: string) => id.replace(/\.desktop$/, "");

function canonical(path: string | null): string | null {
  if (!path) return null;
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/** An executable file named `name` on `pathVar` (a shell's lookup), or null. */
export function whichOnPath(name: string, pathVar: string | undefined): string | null {
  for (const dir of (pathVar ?? "").split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const p = join(dir, name);
    try {
      if (statSync(p).isFile()) {
        accessSync(p, fsConstants.X_OK);
        return p;
      }
    } catch {
      // not here
    }
  }
  return null;
}

// ---------------------------------------------------------------- what to start

export interface LaunchTarget {
  /** The installed entry it starts from, or null for a bare executable. */
  entry: InstalledEntry | null;
  /** Absolute path of the program to exec. */
  executable: string;
  /** Its arguments (the entry's, then the caller's). */
  args: string[];
}

function launchFailed(message: string, reason: string, details: Record<string, string | number | boolean> = {}): DeckhandError {
  return new DeckhandError("LAUNCH_FAILED", message, { details: { reason, ...details } });
}

function ambiguous(selector: string, entries: InstalledEntry[]): DeckhandError {
  return new DeckhandError("AMBIGUOUS_APP", `${entries.length} installed apps match ${JSON.stringify(selector)}`, {
    remediation: "Give one of the desktop ids in details.candidates (`deckhand list-apps --all`).",
    details: { app: selector, candidates: entries.map((e) => `${e.desktop_id} (${e.name})`).join("; ") },
  });
}

/**
 * The app a launch selector names: an installed entry by desktop id (with
 * or without .desktop), then by exact name, then by its program (path or
 * basename; entries shown in menus and without arguments of their own
 * preferred); else an executable path, or a name on PATH.
 */
export function pickLaunchTarget(selector: string, installed: readonly InstalledEntry[], extraArgs: readonly string[], pathVar: string | undefined): LaunchTarget {
  const fromEntry = (entry: InstalledEntry): LaunchTarget => {
    if (entry.terminal) {
      throw launchFailed(`${entry.desktop_id} runs inside a terminal, which deckhand does not start`, "terminal-app", { desktopId: entry.desktop_id });
    }
    if (!entry.executable) {
      throw launchFailed(`the program of ${entry.desktop_id} (${entry.exec[0] ?? "none"}) is not installed`, "not-found", { desktopId: entry.desktop_id });
    }
    return { entry, executable: entry.executable, args: [...entry.exec.slice(1), ...extraArgs] };
  };
  const byId = installed.filter((e) => stripDesktop(e.desktop_id) === stripDesktop(selector));
  if (byId.length) return fromEntry(byId[0]!);
  const byName = installed.filter((e) => e.name === selector);
  if (byName.length === 1) return fromEntry(byName[0]!);
  if (byName.length > 1) throw ambiguous(selector, byName);
  const sel = canonical(selector.includes("/") ? selector : null);
  let byProgram = installed.filter(
    (e) =>
      e.executable !== null &&
      (selector.includes("/") ? e.executable === selector || (sel !== null && canonical(e.executable) === sel) : basename(e.executable) === selector || e.exec[0] === selector),
  );
  if (byProgram.length > 1) byProgram = byProgram.filter((e) => !e.no_display).length ? byProgram.filter((e) => !e.no_display) : byProgram;
  if (byProgram.length > 1) byProgram = byProgram.filter((e) => e.exec.length === 1).length ? byProgram.filter((e) => e.exec.length === 1) : byProgram;
  if (byProgram.length === 1) return fromEntry(byProgram[0]!);
  if (byProgram.length > 1) throw ambiguous(selector, byProgram);
  if (selector.includes("/")) {
    if (!isAbsolute(selector)) throw new DeckhandError("INVALID_ARGUMENTS", "launch --app: a path must be absolute", { details: { field: "app" } });
    return { entry: null, executable: selector, args: [...extraArgs] };
  }
  const onPath = whichOnPath(selector, pathVar);
  if (!onPath) {
    throw launchFailed(`no installed app and no executable on PATH matches ${JSON.stringify(selector)}`, "not-found", { app: selector });
  }
  return { entry: null, executable: onPath, args: [...extraArgs] };
}

/**
 * Programs that run another program named in their arguments. A launch
 * through one of them is checked against policy for every word of its
 * arguments that names a program, an app or a desktop id too: `env xterm`
 * and `sh -c "xterm"` are a terminal.
 */
const WRAPPERS = new Set([
  "env", "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox", "nohup", "setsid", "stdbuf", "nice", "ionice",
  "taskset", "timeout", "chrt", "sudo", "doas", "pkexec", "runuser", "su", "dbus-launch", "dbus-run-session", "systemd-run", "flatpak",
  "gtk-launch", "xdg-open", "exo-open", "gio", "kioclient", "kioclient5", "python3", "python", "perl", "x-terminal-emulator",
]);

/** The identities a launch is checked as: the program itself, and what a wrapper would run. */
export function launchIdentities(target: LaunchTarget, pathVar: string | undefined): SnapshotApp[] {
  const exe = target.executable;
  const self: SnapshotApp = {
    pid: 0,
    startTime: null,
    name: target.entry?.name ?? basename(exe),
    executable: exe,
    desktopId: target.entry ? stripDesktop(target.entry.desktop_id) : null,
    processName: basename(canonical(exe) ?? exe).slice(0, 15),
    executableDeleted: false,
    bundleId: null,
  };
  const out = [self];
  const wrapper = [basename(exe), basename(canonical(exe) ?? exe)].some((b) => WRAPPERS.has(b.replace(/\d+(\.\d+)*$/, "")) || WRAPPERS.has(b));
  if (!wrapper) return out;
  const words = target.args.flatMap((a) => a.split(/[\s;|&()`$'"<>=]+/)).filter((w) => w && !w.startsWith("-"));
  for (const w of words.slice(0, MAX_WRAPPED_WORDS)) {
    const path = w.includes("/") ? (isAbsolute(w) ? w : null) : whichOnPath(w, pathVar);
    out.push({ pid: 0, startTime: null, name: basename(w), executable: path, desktopId: stripDesktop(basename(w)), processName: basename(canonical(path) ?? w).slice(0, 15), executableDeleted: false, bundleId: null });
  }
  return out;
}

// ---------------------------------------------------------------- launch

type LaunchResult = ReadonlyDeep<CommandResult<"launch">>;

function listedApp(a: WireApp) {
  return { name: a.name, pid: a.pid, executable: a.executable, desktopId: a.desktop_id, accessible: a.accessible, windowCount: a.window_count, toolkit: a.toolkit ?? null };
}

function listedWindows(windows: WireWindow[]) {
  return windows.map((w, i) => ({ windowId: w.window_id, windowIndex: i, title: w.title, bounds: w.bounds, minimized: w.minimized, zIndex: w.z_index, popup: w.popup === true }));
}

/** Whether a running app is the one the target starts (a hand-off to an instance of it). */
function sameApp(a: WireApp, target: LaunchTarget): boolean {
  if (target.entry && a.desktop_id && stripDesktop(basename(a.desktop_id)) === stripDesktop(target.entry.desktop_id)) return true;
  const exe = canonical(target.executable);
  if (exe && a.executable === exe) return true;
  return a.executable !== null && appKey(a.executable) === appKey(target.executable);
}

export interface LaunchOptions {
  /** The permission gate of the command dispatcher (src/commands/index.ts). */
  gate: () => Promise<unknown>;
}

export async function launchApp(engine: Ports & EnvPort, args: CommandArgs<"launch">, opts: LaunchOptions): Promise<LaunchResult> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "launch", "launch");
  engine.safety.checkPaused("launch");
  await opts.gate();
  const pathVar = engine.env.PATH;
  const installed = hello.capabilities.list_installed?.supported ? (await supervisor.request("list_installed", {})).result.apps : [];
  const target = pickLaunchTarget(args.app, installed, args.args ?? [], pathVar);
  // Policy first: on what is about to run, before anything is spawned.
  const identities = launchIdentities(target, pathVar);
  let decision = { source: "default", rule: "allow" };
  for (const [i, id] of identities.entries()) {
    const d = engine.safety.checkApp(id, null, "launch");
    if (i === 0) decision = d;
  }
  const self = identities[0]!;
  const auditBase = { command: "launch", appId: auditAppId(self), decisionSource: decision.source } as const;
  engine.safety.audit({ ...auditBase, event: "decision", decision: "allow", rule: decision.rule, outcome: "OK", delivery: "not_dispatched" });

  const timeoutMs = args.timeoutMs ?? LAUNCH_DEFAULT_TIMEOUT_MS;
  // Windows there before: a hand-off shows a new one.
  const before = new Set((await supervisor.request("list_windows", { pid: null })).result.windows.map((w) => w.window_id));
  const t0 = Date.now();
  let started: OpResult<"launch">;
  try {
    started = (await supervisor.request("launch", { executable: target.executable, args: target.args, desktop_id: target.entry?.desktop_id ?? null })).result;
  } catch (err) {
    engine.safety.audit({ ...auditBase, decision: "allow", outcome: err instanceof DeckhandError ? err.code : "INTERNAL", delivery: "not_dispatched" });
    throw err;
  }
  engine.safety.audit({ ...auditBase, pid: started.pid, decision: "allow", outcome: "OK", delivery: "submitted" });
  const launched = {
    pid: started.pid,
    desktopId: target.entry?.desktop_id ?? null,
    executable: target.executable,
    args: [...started.args_added, ...target.args],
    argsAdded: started.args_added,
    envAdded: started.env_added,
  };
  const { handedOff, ...ready } = await waitForApp(engine, target, started, before, t0, timeoutMs);
  return { ...ready, launched: { ...launched, handedOff } };
}

interface Ready {
  app: ReturnType<typeof listedApp>;
  windows: ReturnType<typeof listedWindows>;
  waitedMs: number;
  windowMs: number;
  treeNodes: number;
  handedOff: boolean;
}

/**
 * The bounded wait after the spawn: a window of the process or one of its
 * descendants (or, once the process exited successfully at once, of an
 * instance of the same app started after it or showing a new window), then
 * an accessibility tree in it that is more than the frame.
 */
async function waitForApp(engine: Ports, target: LaunchTarget, started: OpResult<"launch">, before: Set<number>, t0: number, timeoutMs: number): Promise<Omit<Ready, never>> {
  const { supervisor } = await engine.helper();
  const tree = hostProcessTree();
  const pid = started.pid;
  const deadline = t0 + timeoutMs;
  const allowed = new Set<number>();
  let windowAt: number | null = null;
  let exited = false;
  let lastTree = 0;
  let lastError = "";
  for (;;) {
    const apps = (await supervisor.request("list_apps", {})).result.apps;
    const mine = apps.filter((a) => a.pid === pid || tree.isDescendant(a.pid, pid) === true);
    let app: WireApp | undefined = mine.find((a) => a.window_count > 0) ?? mine[0];
    if (!app && !exited) {
      const st = (await supervisor.request("launch_status", { pid })).result;
      const running = st.known ? st.running : tree.alive(pid) !== false;
      if (!running) {
        const failed = (st.exit_code !== null && st.exit_code !== 0) || st.signal !== null;
        if (failed || windowAt !== null) {
          const how = st.signal !== null ? `was killed by signal ${st.signal}` : st.exit_code !== null ? `exited with code ${st.exit_code}` : "exited";
          throw launchFailed(`${basename(target.executable)} (pid ${pid}) ${how} ${windowAt === null ? "before showing a window" : "after showing a window, before its tree was ready"}`, "exited", {
            pid,
            ...(st.exit_code !== null ? { exitCode: st.exit_code } : {}),
            ...(st.signal !== null ? { signal: st.signal } : {}),
          });
        }
        // Exited fine at once: a single-instance app handed the request to its running instance.
        exited = true;
      }
    }
    if (!app && exited) {
      const newWindowPids = new Set<number>();
      const wins = (await supervisor.request("list_windows", { pid: null })).result.windows;
      for (const w of wins) if (!before.has(w.window_id) && !w.popup && w.pid !== null) newWindowPids.add(w.pid);
      app = apps.find((a) => sameApp(a, target) && (newWindowPids.has(a.pid) || (started.start_time !== null && a.start_time !== null && a.start_time >= started.start_time)));
    }
    if (app && app.window_count > 0) {
      const windows = (await appWindows(engine, app.pid)).filter((w) => !w.popup);
      const main = windows.find((w) => !w.minimized) ?? windows[0];
      if (main) {
        windowAt ??= Date.now();
        // The app that showed up is the one observed: policy decides on it as it runs (a wrapper may have started something else).
        if (!allowed.has(app.pid)) {
          try {
            engine.safety.checkApp(toApp(app), main, "launch");
          } catch (err) {
            if (err instanceof DeckhandError) {
              err.details.pid = app.pid;
              throw new DeckhandError(err.code, `${err.message}; the launched app (pid ${app.pid}) is left running`, { remediation: err.remediation, details: err.details });
            }
            throw err;
          }
          allowed.add(app.pid);
        }
        const remaining = deadline - Date.now();
        if (remaining > 0) {
          try {
            const r = await supervisor.request("get_tree", { pid: app.pid, window_id: main.window_id, ...TREE_PROBE }, { deadlineMs: Math.max(200, Math.min(TREE_PROBE_MS, remaining)) });
            lastTree = r.result.nodes.length;
          } catch (err) {
            if (err instanceof DeckhandError && err.code === "CANCELLED") throw err;
            // Not on the accessibility bus yet, or busy starting: look again.
            lastTree = 0;
            lastError = err instanceof DeckhandError ? err.code : "INTERNAL";
          }
        }
        if (lastTree > 1) {
          // Listed once more: what list-apps shows now (the tree is up: accessible).
          const fresh = (await supervisor.request("list_apps", {})).result.apps.find((a) => a.pid === app!.pid) ?? app;
          const now = Date.now();
          return {
            app: listedApp(fresh),
            windows: listedWindows((await appWindows(engine, app.pid)).filter((w) => w.pid === app!.pid)),
            waitedMs: now - t0,
            windowMs: windowAt - t0,
            treeNodes: lastTree,
            handedOff: app.pid !== pid && !mine.includes(app),
          };
        }
      }
    }
    if (Date.now() >= deadline) {
      const stage = windowAt === null ? "window" : "tree";
      const what = stage === "window" ? "showed no window" : `showed a window whose accessibility tree is ${lastTree === 0 ? `not readable${lastError ? ` (${lastError})` : ""}` : "only its frame"}`;
      throw new DeckhandError("LAUNCH_TIMEOUT", `${basename(target.executable)} (pid ${pid}) ${what} within ${timeoutMs} ms; it is left running`, {
        details: { stage, pid, timeoutMs, ...(app ? { appPid: app.pid } : {}) },
      });
    }
    await sleep(Math.min(POLL_MS, Math.max(0, deadline - Date.now())), engine.cancelSignal, "launch");
  }
}

// ---------------------------------------------------------------- list-apps --all

type ListAppsResult = ReadonlyDeep<CommandResult<"list-apps">>;

/** list-apps: the running apps; with `all`, the installed ones not running too. */
export async function listApps(engine: HelperPort, args: CommandArgs<"list-apps">): Promise<ListAppsResult> {
  const { supervisor, hello } = await engine.helper();
  const { result } = await supervisor.request("list_apps", {});
  const running = result.apps.map(listedApp);
  if (!args.all) return { apps: running.sort(byName) };
  requireCapability(hello, "list_installed", "list-apps --all");
  const installed = (await supervisor.request("list_installed", {})).result.apps;
  const canon = new Map<string, string | null>();
  const canonOf = (p: string) => {
    if (!canon.has(p)) canon.set(p, canonical(p));
    return canon.get(p)!;
  };
  const matched = new Set<string>();
  const out: ListAppsResult["apps"][number][] = [];
  for (const a of running) {
    const entry = matchEntry(a, installed, canonOf);
    if (entry) matched.add(entry.desktop_id);
    out.push({ ...a, desktopId: a.desktopId ?? entry?.desktop_id ?? null, running: true, installed: entry !== null });
  }
  for (const e of installed) {
    if (e.no_display || matched.has(e.desktop_id)) continue;
    out.push({ name: e.name, pid: null, executable: e.executable, desktopId: e.desktop_id, accessible: false, windowCount: 0, toolkit: null, running: false, installed: true, terminal: e.terminal });
  }
  return { apps: out.sort(byName) };
}

function byName(a: { name: string; pid: number | null }, b: { name: string; pid: number | null }): number {
  return a.name.localeCompare(b.name) || (a.pid ?? Number.MAX_SAFE_INTEGER) - (b.pid ?? Number.MAX_SAFE_INTEGER);
}

/** The installed entry of a running app: its desktop id, else its program (entries shown in menus first). */
function matchEntry(a: { desktopId: string | null; executable: string | null }, installed: readonly InstalledEntry[], canonOf: (p: string) => string | null): InstalledEntry | null {
  if (a.desktopId) {
    const byId = installed.find((e) => stripDesktop(e.desktop_id) === stripDesktop(basename(a.desktopId!)));
    if (byId) return byId;
  }
  if (!a.executable) return null;
  const exe = a.executable;
  const byExe = installed.filter((e) => e.executable !== null && (e.executable === exe || canonOf(e.executable) === exe));
  const byKey = byExe.length ? byExe : installed.filter((e) => e.executable !== null && appKey(e.executable) === appKey(exe));
  return byKey.find((e) => !e.no_display && e.exec.length === 1) ?? byKey.find((e) => !e.no_display) ?? byKey[0] ?? null;
}

// ---------------------------------------------------------------- activate

type Activated = ReadonlyDeep<CommandResult<"activate">>;

export async function activateApp(engine: Ports & AppCache, args: CommandArgs<"activate">): Promise<Activated> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "window_op", "activate");
  engine.safety.checkPaused("activate");
  // Raising and focusing a window moves the user's focus: the operator's grant, before anything is looked up.
  if (!engine.safety.foregroundGranted()) {
    throw new DeckhandError("FOREGROUND_REQUIRED", "activate raises and focuses a window (it takes the keyboard focus), which needs the operator's foreground grant", {
      details: { delivery: "not_dispatched" },
    });
  }
  const app = await resolveApp(engine, args.app);
  const { window } = await resolveWindow(engine, app, args);
  const decision = engine.safety.checkApp(app, window, "activate");
  const audit = { command: "activate", appId: auditAppId(app), pid: app.pid, windowId: window.window_id, decisionSource: decision.source } as const;
  engine.safety.audit({ ...audit, event: "decision", decision: "allow", rule: decision.rule, outcome: "OK", delivery: "not_dispatched" });
  const { result, receipt } = await supervisor.request("window_op", { window_id: window.window_id, op: "activate" });
  engine.safety.audit({ ...audit, decision: "allow", outcome: result.done ? "OK" : "VERIFICATION_FAILED", delivery: receipt?.delivery ?? "unknown" });
  if (!result.done) {
    throw new DeckhandError("VERIFICATION_FAILED", `activate was asked of the window manager, but window ${window.window_id} does not hold the focus: ${result.detail}`, {
      details: { delivery: receipt?.delivery ?? "unknown", windowId: window.window_id },
    });
  }
  return { app: { name: app.name, pid: app.pid }, windowId: window.window_id, activated: true, wasMinimized: window.minimized, detail: result.detail };
}

// ---------------------------------------------------------------- quit

type Quit = ReadonlyDeep<CommandResult<"quit">>;

/** The same process still runs: alive, and (where the host can tell) the same start witness. */
function stillRunning(app: ResolvedApp): boolean {
  if (hostProcessTree().alive(app.pid) === false) return false;
  const st = hostProcessFacts().startTime(app.pid);
  return st === null || app.startTime === null || st === app.startTime;
}

export async function quitApp(engine: Ports & AppCache & SerialPort, args: CommandArgs<"quit">): Promise<Quit> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "window_op", "quit");
  engine.safety.checkPaused("quit");
  const app = await resolveApp(engine, args.app);
  const decision = engine.safety.checkApp(app, null, "quit");
  const windows = (await appWindows(engine, app.pid)).filter((w) => !w.popup);
  const main = windows.find((w) => !w.minimized) ?? windows[0] ?? null;
  await engine.safety.confirmCommand({
    app,
    window: main ? { windowId: main.window_id, title: main.title } : null,
    command: "quit",
    action: "quit",
    reason: `close ${windows.length} window(s) of ${app.name} and let it exit: unsaved work may be lost, or the app may ask first`,
  });
  const audit = { command: "quit", appId: auditAppId(app), pid: app.pid, decisionSource: decision.source } as const;
  engine.safety.audit({ ...audit, event: "decision", decision: "allow", rule: decision.rule, outcome: "OK", delivery: "not_dispatched" });
  return await engine.serialized(`pid:${app.pid}`, async () => {
    const t0 = Date.now();
    const timeoutMs = args.timeoutMs ?? QUIT_DEFAULT_TIMEOUT_MS;
    let closed = 0;
    let sent = false;
    for (const w of windows) {
      try {
        const { result, receipt } = await supervisor.request("window_op", { window_id: w.window_id, op: "close" });
        sent ||= receipt?.delivery !== "not_dispatched";
        if (result.done) closed++;
      } catch (err) {
        // A window that went by itself meanwhile (closing one closed another) is closed.
        if (err instanceof DeckhandError && err.code === "WINDOW_NOT_FOUND") closed++;
        else {
          engine.safety.audit({ ...audit, decision: "allow", outcome: err instanceof DeckhandError ? err.code : "INTERNAL", delivery: sent ? "partial" : "not_dispatched" });
          throw err;
        }
      }
    }
    const deadline = t0 + timeoutMs;
    while (stillRunning(app) && Date.now() < deadline) await sleep(Math.min(100, deadline - Date.now()), engine.cancelSignal, "quit");
    const exited = !stillRunning(app);
    const left = exited ? [] : (await appWindows(engine, app.pid)).filter((w) => !w.popup).map((w) => ({ windowId: w.window_id, title: w.title }));
    engine.safety.audit({ ...audit, decision: "allow", outcome: "OK", delivery: sent ? "submitted" : "not_dispatched" });
    return { app: { name: app.name, pid: app.pid }, exited, windowsClosed: closed, windowsLeft: left, waitedMs: Date.now() - t0 };
  });
}
