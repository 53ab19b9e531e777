import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { asUser, type DesktopUser } from "./user.ts";

/** A process the desktop started, with the witness that tells it apart from a later process reusing its pid. */
export interface ProcessRecord {
  name: string;
  pid: number;
  /** /proc/PID/stat starttime (clock ticks since boot). */
  start: number;
}

export interface Daemon extends ProcessRecord {
  logPath: string;
  child: ChildProcess;
  /** Set once the process has exited. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/** A start-up step failed; `step` names it and `log` holds the last lines that process wrote. */
export class DesktopStartError extends Error {
  constructor(
    readonly step: string,
    detail: string,
    readonly log: string = "",
  ) {
    super(`desktop: ${step}: ${detail}${log ? `\n--- last output of ${step} ---\n${log}` : ""}`);
  }
}

export interface SpawnDaemonOptions {
  env: Record<string, string>;
  logDir: string;
  /** Send stdout to its own file, NAME.out, instead of the log. */
  separateStdout?: boolean;
  /** Keep running after this process exits (`deckhand desktop start`). */
  persistent?: boolean;
  /** Run as this user (a Wayland desktop started by root), with HOME=home. */
  user?: DesktopUser;
  home?: string;
}

/**
 * Starts a long-running process in its own process group with stdout and
 * stderr going to a log file (files, not pipes: a persistent desktop outlives
 * the process that read its pipes).
 */
export async function spawnDaemon(name: string, argv: string[], opts: SpawnDaemonOptions): Promise<Daemon> {
  const logPath = join(opts.logDir, `${name}.log`);
  const fd = openSync(logPath, "a", 0o600);
  const outFd = opts.separateStdout ? openSync(join(opts.logDir, `${name}.out`), "a", 0o600) : fd;
  let child: ChildProcess;
  argv = asUser(argv, opts.user, opts.home ?? "/nonexistent");
  try {
    child = spawn(argv[0]!, argv.slice(1), {
      env: opts.env,
      // Another user may not be allowed into deckhand's working directory.
      ...(opts.user && opts.home ? { cwd: opts.home } : {}),
      detached: true,
      stdio: ["ignore", outFd, fd],
    });
  } finally {
    closeSync(fd);
    if (outFd !== fd) closeSync(outFd);
  }
  if (child.pid === undefined) {
    const err = await new Promise<Error>((resolve) => child.once("error", resolve));
    throw new DesktopStartError(name, `cannot start ${argv[0]}: ${err.message}`);
  }
  child.on("error", () => {}); // reported through `exit`
  const daemon: Daemon = { name, pid: child.pid, start: startTime(child.pid) ?? 0, logPath, child };
  child.once("exit", (code, signal) => (daemon.exit = { code, signal }));
  if (opts.persistent) child.unref();
  return daemon;
}

/** The last `lines` lines of a log file ("" when unreadable). */
export function tail(path: string, lines = 15): string {
  try {
    return readFileSync(path, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  start: number;
}

function readStat(pid: number): ProcInfo | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return undefined;
  }
  // comm may contain spaces and parentheses: fields resume after the last ")".
  const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { pid, state: f[0]!, ppid: Number(f[1]), pgrp: Number(f[2]), start: Number(f[19]) };
}

export function startTime(pid: number): number | undefined {
  return readStat(pid)?.start;
}

/** Alive: exists, is not a zombie, and (if given) is the same process that started at `start`. */
export function isAlive(pid: number, start?: number): boolean {
  const s = readStat(pid);
  if (!s || s.state === "Z" || s.state === "X") return false;
  return start === undefined || start === 0 || s.start === start;
}

function allProcesses(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s && s.state !== "Z" && s.state !== "X") out.push(s);
  }
  return out;
}

function environ(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0");
  } catch {
    return [];
  }
}

export interface Scope {
  /** The processes the desktop started. */
  roots: ProcessRecord[];
  /** Processes whose environment has one of these exact entries belong to the desktop too (bus-activated helpers, apps run inside it). */
  envEntries: string[];
}

/**
 * Every live process that belongs to the desktop: the roots (same start
 * witness), members of their process groups and their descendants (which
 * covers helpers the buses activate), and processes carrying our private bus
 * address in their environment. Never this process or its ancestors.
 */
export function processesInScope(scope: Scope): ProcInfo[] {
  const procs = allProcesses();
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const protectedPids = new Set<number>();
  for (let p: ProcInfo | undefined = readStat(process.pid); p && p.pid > 1; p = byPid.get(p.ppid) ?? readStat(p.ppid)) {
    protectedPids.add(p.pid);
  }
  const found = new Map<number, ProcInfo>();
  const roots = scope.roots.filter((r) => {
    const p = byPid.get(r.pid);
    return p && (r.start === 0 || p.start === r.start);
  });
  for (const r of roots) found.set(r.pid, byPid.get(r.pid)!);
  // Group members started no earlier than the group's leader (a pgid cannot be
  // reused while any member lives, so this only guards a dead, reused leader pid).
  for (const r of scope.roots) {
    for (const p of procs) if (p.pgrp === r.pid && p.start >= r.start) found.set(p.pid, p);
  }
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const queue = [...found.keys()];
  while (queue.length) {
    for (const c of children.get(queue.pop()!) ?? []) {
      if (!found.has(c.pid)) {
        found.set(c.pid, c);
        queue.push(c.pid);
      }
    }
  }
  if (scope.envEntries.length) {
    for (const p of procs) {
      if (found.has(p.pid) || p.pid === process.pid) continue;
      const env = environ(p.pid);
      if (scope.envEntries.some((e) => env.includes(e))) found.set(p.pid, p);
    }
  }
  for (const pid of protectedPids) found.delete(pid);
  return [...found.values()];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Ends every process in scope: SIGTERM, a bounded wait, then SIGKILL. The
 * scope is re-read on each round so that a process forked meanwhile is caught.
 */
export async function terminate(target: Scope, graceMs = 2000, killWaitMs = 2000): Promise<void> {
  // Everything signalled becomes a root, so its descendants stay in scope after it dies and they are reparented.
  const scope: Scope = { roots: [...target.roots], envEntries: target.envEntries };
  const signalled = new Map<number, number>(); // pid -> start
  const deadline = performance.now() + graceMs;
  let interval = 5;
  for (;;) {
    const live = processesInScope(scope);
    for (const p of live) {
      if (signalled.get(p.pid) === p.start) continue;
      signalled.set(p.pid, p.start);
      scope.roots.push({ name: "found", pid: p.pid, start: p.start });
      trySignal(p.pid, "SIGTERM");
    }
    if (live.length === 0) return;
    if (performance.now() > deadline) break;
    await sleep(interval);
    interval = Math.min(interval * 2, 50);
  }
  const killDeadline = performance.now() + killWaitMs;
  for (;;) {
    const live = processesInScope(scope);
    if (live.length === 0) return;
    for (const p of live) {
      scope.roots.push({ name: "found", pid: p.pid, start: p.start });
      trySignal(p.pid, "SIGKILL");
    }
    if (performance.now() > killDeadline) {
      throw new Error(`desktop: processes survived SIGKILL: ${live.map((p) => p.pid).join(", ")}`);
    }
    await sleep(20);
  }
}

/**
 * Synchronous last resort for process exit: SIGKILL the roots and their
 * groups (no waiting is possible in an "exit" handler).
 */
export function killNow(roots: ProcessRecord[]): void {
  for (const r of roots) {
    if (!isAlive(r.pid, r.start)) continue;
    trySignal(-r.pid, "SIGKILL");
    trySignal(r.pid, "SIGKILL");
  }
}

function trySignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
