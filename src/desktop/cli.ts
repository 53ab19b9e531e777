import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stateDir } from "../session/state-dir.ts";
import { displayServer, startDesktop, stopRecorded, type DesktopOptions, type DesktopRecord } from "./desktop.ts";
import { isAlive } from "./processes.ts";
import { runInDesktop } from "./run.ts";
import { isAgentMode, operatorOnlyError } from "../protocol/caller.ts";

const USAGE = `usage: deckhand desktop run [--wayland] [--size WxH] -- COMMAND [ARGS...]
       deckhand desktop start [--wayland] [--size WxH] [--json]
       deckhand desktop env [--json]
       deckhand desktop stop`;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

/**
 * `deckhand desktop <run|start|stop|env>`; returns the exit code (2 for usage
 * errors). Operator-only: `run -- CMD` runs any program, start/stop manage the
 * operator's desktop, so a CLI in agent mode (DECKHAND_AGENT_MODE) is refused
 * (exit 1, POLICY_DENIED reason operator-only). main.ts refuses it first, with
 * an envelope under --json; this is the same rule for any other entry point.
 */
export async function desktopMain(
  args: string[],
  io: Io = stdio,
  environment: NodeJS.ProcessEnv = process.env,
  progress?: DesktopOptions["progress"],
  /** The Linux helper's path, for a Wayland desktop's seat devices (DesktopOptions.seatDevices). */
  seatDevices?: string,
): Promise<number> {
  if (isAgentMode(environment)) {
    const e = operatorOnlyError("desktop", "agent_cli");
    io.err(`deckhand desktop: ${e.code}: ${e.message}\nhint: ${e.remediation}\n`);
    return 1;
  }
  const [sub, ...rest] = args;
  const usage = (why: string) => {
    io.err(`deckhand desktop: ${why}\n${USAGE}\n`);
    return 2;
  };
  const dashDash = rest.indexOf("--");
  const flags = dashDash >= 0 ? rest.slice(0, dashDash) : rest;
  const command = dashDash >= 0 ? rest.slice(dashDash + 1) : [];
  let json = false;
  let wayland = false;
  let size: { width: number; height: number } | undefined;
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i]!;
    if (f === "--json" && (sub === "start" || sub === "env")) json = true;
    else if (f === "--wayland" && (sub === "start" || sub === "run")) wayland = true;
    else if (f === "--size" && (sub === "start" || sub === "run")) {
      const m = /^(\d+)x(\d+)$/.exec(flags[++i] ?? "");
      if (!m) return usage("--size needs WIDTHxHEIGHT, e.g. 1920x1080");
      size = { width: Number(m[1]), height: Number(m[2]) };
    } else if (f === "-h" || f === "--help") {
      io.out(`${USAGE}\n`);
      return 0;
    } else return usage(`unexpected argument: ${f}`);
  }
  if (sub !== "run" && command.length) return usage(`${sub ?? "(none)"} takes no command`);

  switch (sub) {
    case "run":
      if (!command.length) return usage("run needs a command after --");
      return runInDesktop(command, { ...size, wayland, seatDevices, progress, log: process.env.DECKHAND_DEBUG ? (l) => io.err(`${l}\n`) : undefined });
    case "start":
      return start(io, json, size, progress, wayland, seatDevices);
    case "stop":
      return stop(io, progress);
    case "env":
      return env(io, json);
    default:
      return usage(sub ? `unknown subcommand: ${sub}` : "missing subcommand");
  }
}

function recordPath(): string {
  return join(stateDir(), "desktop.json");
}

function readRecord(): DesktopRecord | undefined {
  try {
    return JSON.parse(readFileSync(recordPath(), "utf8")) as DesktopRecord;
  } catch {
    return undefined;
  }
}

function isRunning(r: DesktopRecord): boolean {
  const server = displayServer(r);
  return !!server && isAlive(server.pid, server.start);
}

async function start(io: Io, json: boolean, size?: { width: number; height: number }, progress?: DesktopOptions["progress"], wayland = false, seatDevices?: string): Promise<number> {
  const old = readRecord();
  if (old && isRunning(old)) {
    io.err(`deckhand desktop: a desktop is already running on ${old.display}; run \`deckhand desktop stop\` first\n`);
    return 1;
  }
  if (old) await stopRecorded(old).catch(() => {}); // stale: clean up what is left
  let desktop;
  try {
    desktop = await startDesktop({ ...size, wayland, seatDevices, persistent: true, progress });
  } catch (err) {
    io.err(`${(err as Error).message}\n`);
    return 1;
  }
  const path = recordPath();
  const tmp = `${path}.${process.pid}.tmp`;
  // O_EXCL: a symlink planted at the temporary name is never written through.
  rmSync(tmp, { force: true });
  writeFileSync(tmp, `${JSON.stringify(desktop.record, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(tmp, path);
  printEnv(io, desktop.env, json);
  return 0;
}

async function stop(io: Io, progress?: DesktopOptions["progress"]): Promise<number> {
  const r = readRecord();
  if (!r) {
    io.err("deckhand desktop: no desktop is running\n");
    return 1;
  }
  progress?.(`desktop: stopping ${r.display}…`);
  await stopRecorded(r);
  progress?.(null);
  rmSync(recordPath(), { force: true });
  return 0;
}

function env(io: Io, json: boolean): number {
  const r = readRecord();
  if (!r || !isRunning(r)) {
    io.err(`deckhand desktop: no desktop is running${r ? ` (${r.display} has stopped; run \`deckhand desktop stop\` to clean up)` : ""}\n`);
    return 1;
  }
  printEnv(io, r.env, json);
  return 0;
}

function printEnv(io: Io, env: Record<string, string>, json: boolean): void {
  if (json) {
    io.out(`${JSON.stringify(env)}\n`);
    return;
  }
  const lines = Object.keys(env)
    .sort()
    .map((k) => `export ${k}=${shellQuote(env[k]!)}\n`);
  io.out(lines.join(""));
}

/** POSIX shell quoting: bare when safe, else single quotes. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

