import { spawn } from "node:child_process";
import { constants } from "node:os";
import { startDesktop, type DesktopOptions } from "./desktop.ts";

const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

/**
 * Starts a desktop, runs argv inside it (stdio inherited), tears the desktop
 * down afterwards, also when this process is told to stop, and returns the
 * command's exit code (128 + signal number when it died of a signal, 127 when
 * it could not be started).
 */
export async function runInDesktop(argv: string[], opts: DesktopOptions = {}): Promise<number> {
  if (argv.length === 0) throw new Error("runInDesktop: no command");
  let received: NodeJS.Signals | undefined;
  let forward: ((s: NodeJS.Signals) => void) | undefined;
  const onSignal = (s: NodeJS.Signals) => {
    received ??= s;
    forward?.(s);
  };
  for (const s of FORWARDED) process.on(s, onSignal);
  try {
    const desktop = await startDesktop({ ...opts, persistent: false });
    try {
      if (received) return 128 + constants.signals[received];
      return await new Promise<number>((resolve) => {
        const child = spawn(argv[0]!, argv.slice(1), { stdio: "inherit", env: { ...process.env, ...desktop.env } });
        forward = (s) => {
          child.kill(s);
          // A command that ignores the signal still may not keep the desktop alive forever.
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        };
        child.once("error", (err) => {
          process.stderr.write(`deckhand desktop: cannot run ${argv[0]}: ${err.message}\n`);
          resolve(127);
        });
        child.once("exit", (code, signal) => resolve(code ?? 128 + (signal ? constants.signals[signal] : 0)));
      });
    } finally {
      forward = undefined;
      await desktop.stop();
    }
  } finally {
    for (const s of FORWARDED) process.off(s, onSignal);
  }
}
