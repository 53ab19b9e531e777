// A one-shot CLI call starts its helper before deckhand's own modules load:
// the helper's start-up (process, hello, its bus and X connections: ~7 ms
// cold) then runs while the runtime evaluates deckhand's code (~10-20 ms),
// instead of after it. The supervisor adopts the child when it first needs a
// helper, if it is the one it would have started (same path, same env);
// otherwise the child is discarded and nothing else changes. Loaded by
// src/main.ts before anything heavy: node built-ins and discovery only.
import { spawn, type ChildProcess } from "node:child_process";
import { discoverHelper } from "./discovery.ts";

interface Early {
  child: ChildProcess;
  path: string;
  env: NodeJS.ProcessEnv;
  /** It exited or failed to start before adoption: the supervisor starts its own and sees why. */
  gone: boolean;
}

let early: Early | null = null;

/**
 * Commands that never start a helper, and front doors that start theirs
 * their own way (serve and mcp start it on the first request; desktop and
 * helper check are operator tools, and so is trace show, which reads files).
 */
const NO_HELPER = new Set(["pause", "resume", "help", "version", "desktop", "helper", "trace", "serve", "mcp"]);

/**
 * Whether argv is a command that will start the default helper. Not when
 * the caller names a helper (--helper is operator-only: the CLI decides
 * after parsing whether to honour it) or asks for help.
 */
export function startsDefaultHelper(argv: readonly string[]): boolean {
  const first = argv[0];
  if (first === undefined || first.startsWith("-") || NO_HELPER.has(first)) return false;
  return !argv.some((a) => a === "--help" || a === "-h" || a === "--helper" || a.startsWith("--helper="));
}

/** Start the default helper now, for the supervisor to adopt. Never throws: on any problem the normal path starts (and reports) it. */
export function prespawnHelper(env: NodeJS.ProcessEnv = process.env): void {
  if (early) return;
  try {
    const { path } = discoverHelper({ env });
    // The same options as the supervisor's spawn (supervisor.ts spawnAndHandshake).
    // As the supervisor spawns it (supervisor.ts): no process group (and no console window) on Windows.
    const child = spawn(path, [], { stdio: ["pipe", "pipe", "pipe"], detached: process.platform !== "win32", windowsHide: true, env });
    const e: Early = { child, path, env, gone: false };
    // An error or exit before adoption would otherwise be unhandled, or unseen by the supervisor.
    child.once("error", () => (e.gone = true));
    child.once("exit", () => (e.gone = true));
    child.stdin?.on("error", () => {
      /* EPIPE if it died: the supervisor never adopts a gone child */
    });
    early = e;
  } catch {
    early = null;
  }
}

/**
 * The prespawned helper, if it is the one the caller would start (same
 * path, same env object) and still alive; at most once. Its output so far
 * is still buffered in its streams for the caller's listeners.
 */
export function adoptPrespawned(path: string, env: NodeJS.ProcessEnv): ChildProcess | null {
  const e = early;
  if (!e) return null;
  early = null;
  if (e.path !== path || e.env !== env || e.gone || e.child.exitCode !== null || e.child.signalCode !== null) {
    discard(e);
    return null;
  }
  return e.child;
}

/** End a prespawned helper nobody adopted (the command failed early, or needed none): it exits on EOF. */
export function discardPrespawned(): void {
  const e = early;
  early = null;
  if (e) discard(e);
}

function discard(e: Early): void {
  try {
    e.child.stdin?.end();
  } catch {
    /* gone */
  }
  // Nobody reads its output: let the streams go.
  e.child.stdout?.destroy();
  e.child.stderr?.destroy();
  e.child.unref();
}
