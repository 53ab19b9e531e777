import { constants } from "node:os";
import { execa } from "execa";
import { startDesktop, type DesktopOptions } from "./desktop.ts";
import { asUser } from "./user.ts";

const FORWARDED: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];
/** A command told to stop still may not keep the desktop alive forever. */
const FORCE_KILL_AFTER_MS = 10_000;

/**
 * Starts a desktop, runs argv inside it (stdio inherited), tears the desktop
 * down afterwards, also when this process is told to stop, and returns the
 * command's exit code (128 + signal number when it died of a signal, 127 when
 * it could not be started).
 *
 * The command is run by execa, whose `cleanup` kills it should deckhand
 * exit first (its desktop is torn down then too). A signal this process
 * receives is forwarded as itself, then SIGKILL after 10 s: execa's
 * `forceKillAfterDelay` would follow only its one `killSignal`.
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
      // On a Wayland desktop started by root: as the desktop's user, like everything in it.
      const full = asUser(argv, desktop.user, desktop.home);
      const command = execa(full[0]!, full.slice(1), {
        stdio: "inherit",
        env: desktop.env, // on top of deckhand's own (extendEnv)
        reject: false,
        cleanup: true,
        // execa arms its force kill only for its own killSignal; we forward whichever signal came.
        forceKillAfterDelay: false,
        verbose: "none",
      });
      forward = (s) => {
        command.kill(s);
        setTimeout(() => command.kill("SIGKILL"), FORCE_KILL_AFTER_MS).unref();
      };
      const result = await command;
      if (result.exitCode !== undefined) return result.exitCode;
      if (result.signal) return 128 + constants.signals[result.signal as NodeJS.Signals];
      const cause = (result.cause as Error | undefined)?.message ?? result.shortMessage;
      process.stderr.write(`deckhand desktop: cannot run ${argv[0]}: ${cause}\n`);
      return 127;
    } finally {
      forward = undefined;
      await desktop.stop();
    }
  } finally {
    for (const s of FORWARDED) process.off(s, onSignal);
  }
}
