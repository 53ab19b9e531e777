// The confirm hook: an operator-chosen program that approves or refuses each
// sensitive action. It gets a JSON description on stdin (one line), runs
// without a shell, and its exit status decides: 0 allows; any other exit, a
// signal, a spawn failure or a timeout denies (CONFIRM_DENIED). With no hook
// configured a sensitive action is CONFIRM_REQUIRED and nothing runs.
import { z } from "zod";
import { DeckhandError } from "../protocol/errors.ts";
import type { Policy } from "../policy/load.ts";

export const DEFAULT_CONFIRM_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 10 * 60 * 1000;
const MAX_HOOK_MESSAGE = 200;

// ---------------------------------------------------------------- argv

/**
 * Split a command line into argv the way a user expects from a shell, but
 * with no shell semantics: whitespace separates words; '...' is literal;
 * "..." is literal except \" and \\; a backslash outside quotes escapes the
 * next character. No variables, globs, pipes, redirections or `;` — those
 * characters are passed through as literal text. Throws INVALID_ARGUMENTS on
 * an unterminated quote or a trailing backslash.
 */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let inWord = false;
  let i = 0;
  const bad = (why: string) =>
    new DeckhandError("INVALID_ARGUMENTS", `confirm command: ${why}`, {
      remediation: "Quote the confirm command's words with '...' or \"...\" and close every quote.",
      details: { reason: why },
    });
  while (i < line.length) {
    const c = line[i]!;
    if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      if (inWord) out.push(cur);
      cur = "";
      inWord = false;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw bad("unterminated single quote");
      cur += line.slice(i + 1, end);
      inWord = true;
      i = end + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      let closed = false;
      while (i < line.length) {
        const d = line[i]!;
        if (d === '"') {
          closed = true;
          i++;
          break;
        }
        if (d === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) {
          cur += line[i + 1];
          i += 2;
        } else {
          cur += d;
          i++;
        }
      }
      if (!closed) throw bad("unterminated double quote");
    } else if (c === "\\") {
      if (i + 1 >= line.length) throw bad("trailing backslash");
      cur += line[i + 1];
      inWord = true;
      i += 2;
    } else {
      cur += c;
      inWord = true;
      i++;
    }
  }
  if (inWord) out.push(cur);
  return out;
}

function toArgv(v: string | readonly string[] | undefined | null): string[] | null {
  if (v === undefined || v === null) return null;
  const argv = typeof v === "string" ? splitCommandLine(v) : [...v];
  return argv.length > 0 && argv[0] !== "" ? argv : null;
}

export type ConfirmSource = "admin" | "flag" | "env" | "user";
export type ResolvedConfirm = { command: string[] | null; source: ConfirmSource | null; timeoutMs: number };

/**
 * Which hook runs, in order: the admin policy's confirm.command (the
 * operator cannot swap it for `true`), the --confirm-cmd flag,
 * DECKHAND_CONFIRM_CMD, the user policy's confirm.command. Timeout: admin
 * confirm.timeout_ms, else user's, else 30 s. An empty flag or variable
 * counts as unset.
 */
export function resolveConfirm(opts: { flag?: string | readonly string[] | null; env?: NodeJS.ProcessEnv; policy: Policy }): ResolvedConfirm {
  const env = opts.env ?? process.env;
  const { admin, user } = opts.policy;
  const timeoutMs = admin?.confirm.timeoutMs ?? user?.confirm.timeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const candidates: [ConfirmSource, string | readonly string[] | null | undefined][] = [
    ["admin", admin?.confirm.command],
    ["flag", opts.flag],
    ["env", env.DECKHAND_CONFIRM_CMD],
    ["user", user?.confirm.command],
  ];
  for (const [source, value] of candidates) {
    const command = toArgv(value);
    if (command) return { command, source, timeoutMs };
  }
  return { command: null, source: null, timeoutMs };
}

/** The hook's argv, or null when none is configured. */
export function resolveConfirmCommand(opts: { flag?: string | readonly string[] | null; env?: NodeJS.ProcessEnv; policy: Policy }): string[] | null {
  return resolveConfirm(opts).command;
}

// ---------------------------------------------------------------- description

const label = (max: number) => z.string().max(max);
const int = z.number().int();

/**
 * What the hook reads on stdin. Strict: it has no field for typed text,
 * values, clipboard contents or URLs, so a caller cannot leak them to the
 * hook by accident (unknown keys are rejected before anything runs).
 */
export const ConfirmDescription = z.strictObject({
  version: z.literal(1),
  /** The deckhand command, e.g. "click", "hotkey", "set-clipboard", "quit-app". */
  command: label(64),
  /** The sensitive action kind (click, secondary, hotkey, press_key, set_clipboard, quit). */
  action: label(64),
  /** Why it is sensitive, e.g. `control name contains "delete"`, or `Return while focus is in "Delete file?", whose default button is "Delete" (...)`. */
  reason: label(256),
  /**
   * How the step reaches the control (src/policy/sensitive.ts SensitiveRoute):
   * element, point, drag, entry-activation, focused, default-button,
   * unknown-focus, mnemonic, closing-chord.
   */
  route: label(64).optional(),
  session: label(128).nullable().optional(),
  app: z.strictObject({
    id: label(512).nullable(),
    name: label(512),
    pid: int.nullable(),
    executable: label(4096).nullable(),
  }),
  window: z.strictObject({ id: int.nullable(), title: label(1024) }).nullable().optional(),
  element: z.strictObject({ index: int.nullable(), role: label(128), name: label(1024) }).nullable().optional(),
  /** hotkey / press_key only: the key names (never typed text). */
  keys: z.array(label(64)).max(32).optional(),
});
export type ConfirmDescription = z.infer<typeof ConfirmDescription>;

// ---------------------------------------------------------------- running

export type RunConfirmOptions = {
  /** Environment of the hook. Default: deckhand's own. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
};

function denied(message: string, details: Record<string, string | number | boolean>): DeckhandError {
  return new DeckhandError("CONFIRM_DENIED", message, { details });
}

/** Bytes of the hook's stdout kept (its first line is the operator-facing reason); the rest is read and dropped. */
const MAX_STDOUT = 4096;
/** After the hook exits, how long its stdout may stay open (a background grandchild holding the pipe) before deckhand stops waiting. */
const STDOUT_GRACE_MS = 100;

/**
 * Run the hook for one sensitive action. Resolves when it allows; throws
 * CONFIRM_REQUIRED (no hook: nothing ran), CONFIRM_DENIED (non-zero exit,
 * signal, spawn failure, timeout: the hook's whole process group is killed)
 * or INTERNAL (a description that does not fit the schema: a caller bug; nothing ran).
 *
 * The child is run by execa: the description goes in as `input` (stdin,
 * never argv; EPIPE from a hook that does not read it is ignored), stderr is
 * the operator's, stdout is kept up to MAX_STDOUT bytes by a transform (a
 * chatty hook is drained, never killed for it as `maxBuffer` would). The
 * deadline is a `cancelSignal` (AbortSignal.timeout): execa SIGKILLs the hook
 * and marks the result `isCanceled`; our listener SIGKILLs its whole process
 * group (execa only signals the pid). `detached` puts the hook in a group of
 * its own, which is also why execa's `cleanup` does not apply to it.
 */
export async function runConfirm(
  cmd: readonly string[] | null,
  description: ConfirmDescription,
  timeoutMs: number = DEFAULT_CONFIRM_TIMEOUT_MS,
  opts: RunConfirmOptions = {},
): Promise<void> {
  if (!cmd || cmd.length === 0 || !cmd[0]) {
    throw new DeckhandError("CONFIRM_REQUIRED", "this action is sensitive and no confirm hook is configured");
  }
  const parsed = ConfirmDescription.safeParse(description);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => i.path.join(".") || "(root)").join(", ");
    throw new DeckhandError("INTERNAL", `confirm description rejected at ${where}`, {
      remediation: "This is a deckhand bug: a confirm description may carry only ConfirmDescription's fields.",
      details: { fields: where },
    });
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) timeoutMs = DEFAULT_CONFIRM_TIMEOUT_MS;
  timeoutMs = Math.min(timeoutMs, MAX_TIMEOUT_MS);
  const posix = process.platform !== "win32";

  // Loaded on first use: most deckhand runs never start a hook, and execa costs tens of ms to load.
  const { execa } = await import("execa");
  const deadline = AbortSignal.timeout(timeoutMs);
  let kept = 0;
  const hook = execa(cmd[0], cmd.slice(1), {
    input: `${JSON.stringify(parsed.data)}\n`,
    stdout: {
      *transform(chunk: unknown) {
        if (kept >= MAX_STDOUT) return;
        const part = (chunk as Uint8Array).subarray(0, MAX_STDOUT - kept);
        kept += part.length;
        yield part;
      },
      binary: true,
    },
    stderr: "inherit",
    detached: posix, // own process group, so a timeout kills everything it started
    env: opts.env ?? process.env,
    extendEnv: false,
    cwd: opts.cwd,
    cancelSignal: deadline,
    killSignal: "SIGKILL",
    forceKillAfterDelay: false, // SIGKILL already
    stripFinalNewline: false,
    reject: false,
    verbose: "none", // not even with NODE_DEBUG=execa
  });
  const killGroup = () => {
    try {
      if (posix && hook.pid) process.kill(-hook.pid, "SIGKILL");
    } catch {
      // gone already; execa signals the hook itself
    }
  };
  deadline.addEventListener("abort", killGroup, { once: true });
  // Let buffered output arrive, without waiting on a grandchild that holds the pipe.
  hook.once("exit", () => setTimeout(() => hook.stdout?.destroy(), STDOUT_GRACE_MS).unref());
  // Once the hook is gone its group id may be someone else's: stop listening.
  const result = await hook.finally(() => deadline.removeEventListener("abort", killGroup));
  const { exitCode, signal } = result;
  if (exitCode === 0) return;
  if (exitCode === undefined && result.isCanceled) {
    throw denied(`the confirm hook did not answer within ${timeoutMs} ms`, { reason: "timeout", timeout_ms: timeoutMs });
  }
  if (exitCode === undefined && signal === undefined) {
    const errno = result.code ?? (result.cause as NodeJS.ErrnoException | undefined)?.code;
    throw denied(`the confirm hook could not be started (${errno ?? "error"})`, { reason: "spawn_failed", errno: errno ?? "unknown" });
  }
  const details: Record<string, string | number | boolean> =
    exitCode !== undefined ? { reason: "exit", exit_code: exitCode } : { reason: "signal", signal: signal ?? "unknown" };
  // The hook's first stdout line, if any, is its reason for the operator.
  const msg = String(result.stdout ?? "").split(/\r?\n/)[0]!.trim().slice(0, MAX_HOOK_MESSAGE);
  if (msg) details.hook_message = msg;
  throw denied(exitCode !== undefined ? `the confirm hook refused (exit ${exitCode})` : `the confirm hook was killed (${signal})`, details);
}
