// The confirm hook: an operator-chosen program that approves or refuses each
// sensitive action. It gets a JSON description on stdin (one line), runs
// without a shell, and its exit status decides: 0 allows; any other exit, a
// signal, a spawn failure or a timeout denies (CONFIRM_DENIED). With no hook
// configured a sensitive action is CONFIRM_REQUIRED and nothing runs.
import { spawn } from "node:child_process";
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

/**
 * Run the hook for one sensitive action. Resolves when it allows; throws
 * CONFIRM_REQUIRED (no hook: nothing ran), CONFIRM_DENIED (non-zero exit,
 * signal, spawn failure, timeout: the hook's whole process group is killed)
 * or INTERNAL (a description that does not fit the schema: a caller bug; nothing ran).
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
  const input = `${JSON.stringify(parsed.data)}\n`;
  const posix = process.platform !== "win32";

  await new Promise<void>((resolve, reject) => {
    let settled = false;
    let stdout = "";
    const child = spawn(cmd[0]!, cmd.slice(1), {
      shell: false,
      stdio: ["pipe", "pipe", "inherit"],
      detached: posix, // own process group, so a timeout kills everything it started
      windowsHide: true,
      env: opts.env ?? process.env,
      cwd: opts.cwd,
    });
    const killGroup = () => {
      try {
        if (posix && child.pid) process.kill(-child.pid, "SIGKILL");
        else child.kill("SIGKILL");
      } catch {
        try {
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }
    };
    const finish = (err: DeckhandError | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.stdout?.destroy();
      child.stdin?.destroy();
      if (err) reject(err);
      else resolve();
    };
    const timer = setTimeout(() => {
      killGroup();
      finish(denied(`the confirm hook did not answer within ${timeoutMs} ms`, { reason: "timeout", timeout_ms: timeoutMs }));
    }, timeoutMs);

    child.on("error", (err: NodeJS.ErrnoException) => {
      finish(denied(`the confirm hook could not be started (${err.code ?? "error"})`, { reason: "spawn_failed", errno: err.code ?? "unknown" }));
    });
    child.stdout?.setEncoding("utf8");
    child.stdout?.on("data", (chunk: string) => {
      if (stdout.length < 4096) stdout += chunk;
    });
    let stdoutEnded = false;
    const stdoutDone: (() => void)[] = [];
    child.stdout?.on("error", () => {});
    child.stdout?.on("close", () => {
      stdoutEnded = true;
      for (const f of stdoutDone.splice(0)) f();
    });
    child.on("exit", (code, signal) => {
      if (code === 0) return finish(null);
      const refuse = () => {
        const details: Record<string, string | number | boolean> =
          code !== null ? { reason: "exit", exit_code: code } : { reason: "signal", signal: signal ?? "unknown" };
        // The hook's first stdout line, if any, is its reason for the operator.
        const msg = stdout.split(/\r?\n/)[0]!.trim().slice(0, MAX_HOOK_MESSAGE);
        if (msg) details.hook_message = msg;
        finish(denied(code !== null ? `the confirm hook refused (exit ${code})` : `the confirm hook was killed (${signal})`, details));
      };
      if (stdoutEnded || !child.stdout) return refuse();
      // Let buffered output arrive, without waiting on a grandchild that holds the pipe.
      const grace = setTimeout(refuse, 100);
      stdoutDone.push(() => {
        clearTimeout(grace);
        refuse();
      });
    });
    // A hook that never reads stdin (or exits first) must not crash deckhand with EPIPE.
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
  });
}
