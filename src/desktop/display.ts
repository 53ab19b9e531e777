import { existsSync, readFileSync, rmSync } from "node:fs";
import { pollUntil } from "./poll.ts";
import { DesktopStartError, spawnDaemon, tail, type Daemon } from "./processes.ts";
import type { StartContext } from "./context.ts";
import { displayAnswers } from "./x11.ts";

/** Display numbers we try: above the ones people use by hand (:0, :1, xvfb-run's :99). */
const FIRST_DISPLAY = 100;
const LAST_DISPLAY = 999;
const ATTEMPTS = 10;

export interface ScreenSize {
  width: number;
  height: number;
  depth: number;
}

export function lockPath(n: number): string {
  return `/tmp/.X${n}-lock`;
}

export function unixSocketPath(n: number): string {
  return `/tmp/.X11-unix/X${n}`;
}

function isFree(n: number): boolean {
  return !existsSync(lockPath(n)) && !existsSync(unixSocketPath(n));
}

/** The pid recorded in /tmp/.XN-lock, if any (Xvfb ends it with a newline, wlroots' Xwayland with a NUL). */
export function lockOwner(n: number): number | undefined {
  try {
    const pid = Number(readFileSync(lockPath(n), "latin1").replace(/\0/g, "").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts Xvfb on a free display. Another process may take the same number
 * between our check and Xvfb's lock: Xvfb then exits ("server is already
 * active") and we try the next number. Ready means: the lock file names our
 * Xvfb and the display completes an X handshake (so we never mistake another
 * server that won the race for ours).
 */
export async function startXvfb(ctx: StartContext, size: ScreenSize): Promise<{ display: string; daemon: Daemon }> {
  let n = FIRST_DISPLAY + Math.floor(Math.random() * 20);
  for (let attempt = 1; ; attempt++) {
    while (!isFree(n)) if (++n > LAST_DISPLAY) throw new DesktopStartError("xvfb", "no free display number");
    const display = `:${n}`;
    const daemon = await spawnDaemon(
      "xvfb",
      [
        "Xvfb",
        display,
        "-screen", "0", `${size.width}x${size.height}x${size.depth}`,
        "-nolisten", "tcp",
        // Without -noreset the server resets whenever its last client leaves,
        // e.g. between our readiness probe and the window manager.
        "-noreset",
      ],
      ctx.daemonOptions(),
    );
    ctx.started.push(daemon);
    try {
      await pollUntil("xvfb", daemon, ctx.timeoutMs, async () => lockOwner(n) === daemon.pid && (await displayAnswers(display)));
      return { display, daemon };
    } catch (err) {
      const log = tail(daemon.logPath);
      const lostRace = daemon.exit && /already active|Cannot establish any listening sockets|server already running/i.test(log);
      if (!lostRace || attempt >= ATTEMPTS) throw err;
      ctx.started.splice(ctx.started.indexOf(daemon), 1);
      ctx.log?.(`xvfb: display ${display} was taken meanwhile; trying another`);
      rmSync(daemon.logPath, { force: true });
      n++;
    }
  }
}

/** Removes the lock and socket a killed Xvfb leaves behind, only if the lock still names that Xvfb. */
export function removeDisplayFiles(display: string, xvfbPid: number): void {
  const n = Number(display.slice(1));
  if (lockOwner(n) !== xvfbPid) return;
  rmSync(unixSocketPath(n), { force: true });
  rmSync(lockPath(n), { force: true });
}
