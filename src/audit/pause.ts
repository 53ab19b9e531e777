// Pause / resume: the kill switch. The source of truth, across every deckhand
// process of this user, is a flag file beside the audit log
// (<state dir>/paused.json, mode 0600, written atomically). While it exists,
// every mutating command is refused with PAUSED; read-only commands still work.
// Fails closed: a flag file that exists but cannot be read still means paused.
import { closeSync, constants, fsyncSync, lstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import { stateDir } from "../session/state-dir.ts";

export const PAUSE_FILE = "paused.json";
const MAX_REASON = 200;

export type PauseState = { paused: boolean; since?: string; reason?: string };

/** join(stateDir(env), "paused.json"). */
export function pausePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), PAUSE_FILE);
}

function cleanReason(reason: string | undefined | null): string | undefined {
  if (!reason) return undefined;
  const r = reason.replace(/[\u0000-\u001f\u007f]+/g, " ").trim().slice(0, MAX_REASON);
  return r || undefined;
}

/** The current state. Never throws: an unreadable or odd flag file reads as paused. */
export function isPaused(env: NodeJS.ProcessEnv = process.env): PauseState {
  const path = pausePath(env);
  try {
    lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { paused: false };
    return { paused: true };
  }
  try {
    const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    let text: string;
    try {
      text = readFileSync(fd, "utf8");
    } finally {
      closeSync(fd);
    }
    const data = JSON.parse(text) as { since?: unknown; reason?: unknown };
    const state: PauseState = { paused: true };
    if (typeof data.since === "string") state.since = data.since;
    const reason = typeof data.reason === "string" ? cleanReason(data.reason) : undefined;
    if (reason) state.reason = reason;
    return state;
  } catch {
    return { paused: true };
  }
}

/**
 * Pause every deckhand process of this user. Idempotent: pausing while paused
 * keeps the original `since` and reason. `reason` is short operator text
 * (control characters removed, 200 characters max); never put secrets in it.
 */
export function pause(env: NodeJS.ProcessEnv = process.env, reason?: string): PauseState {
  const current = isPaused(env);
  if (current.paused) return current;
  const state: PauseState = { paused: true, since: new Date().toISOString() };
  const r = cleanReason(reason);
  if (r) state.reason = r;
  const path = pausePath(env);
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  try {
    writeSync(fd, `${JSON.stringify({ since: state.since, reason: state.reason ?? null })}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path); // replaces a symlink itself, never its target
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // best effort
    }
    throw new DeckhandError("INTERNAL", `cannot write the pause flag ${path}`, {
      remediation: `Check permissions of ${path}'s directory.`,
      details: { reason: "pause_unwritable", errno: (err as NodeJS.ErrnoException).code ?? "unknown" },
    });
  }
  return state;
}

/** Resume. Returns the state that was lifted ({paused: false} if it was not paused). */
export function resume(env: NodeJS.ProcessEnv = process.env): PauseState {
  const before = isPaused(env);
  try {
    unlinkSync(pausePath(env));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new DeckhandError("INTERNAL", "cannot remove the pause flag", {
        remediation: `Remove ${pausePath(env)} by hand.`,
        details: { reason: "resume_failed", errno: (err as NodeJS.ErrnoException).code ?? "unknown" },
      });
    }
  }
  return before;
}

/** Throw PAUSED (details: since, reason) when paused. Call before every mutating command. */
export function assertNotPaused(env: NodeJS.ProcessEnv = process.env): void {
  const s = isPaused(env);
  if (!s.paused) return;
  const details: Record<string, string> = {};
  if (s.since) details.since = s.since;
  if (s.reason) details.reason = s.reason;
  throw new DeckhandError("PAUSED", s.reason ? `deckhand is paused: ${s.reason}` : "deckhand is paused", { details });
}
