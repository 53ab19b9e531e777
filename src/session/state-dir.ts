import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * Where deckhand keeps snapshots, screenshots, the audit log and the pause
 * flag: DECKHAND_STATE_DIR, else $XDG_STATE_HOME/deckhand, else
 * ~/.local/state/deckhand. Created 0700 on first use.
 */
const made = new Set<string>();

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  const dir =
    env.DECKHAND_STATE_DIR ||
    join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "deckhand");
  // Once per process and directory: this sits on every action's path (audit).
  if (!made.has(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    made.add(dir);
  }
  return dir;
}
