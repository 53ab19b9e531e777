// The audit log: one JSON line per policy decision and per action, appended
// to <state dir>/audit.jsonl (mode 0600, opened O_APPEND|O_NOFOLLOW|O_CREAT).
// It rotates at a size cap (10 MiB, DECKHAND_AUDIT_MAX_BYTES): audit.jsonl
// becomes audit.jsonl.1, .1 becomes .2, ... and the oldest beyond `keep` (3,
// DECKHAND_AUDIT_KEEP) is dropped. Rotation only renames, so a line written
// through a descriptor opened just before it lands in the renamed file: no
// line is lost to rotation itself.
//
// The record type cannot carry secrets: AuditRecord is a strict schema of the
// allowed fields, and every record is validated before it is written. There
// is no field for typed text, values, clipboard contents, window titles or
// URLs, and identifier fields reject "/" and ":" so a URL or a path cannot
// be smuggled into one.
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";
import { DeckhandError, ERROR_CODES } from "../protocol/errors.ts";
import { stateDir } from "../session/state-dir.ts";

export const AUDIT_FILE = "audit.jsonl";
/** Rotate once the log would grow past this many bytes. */
export const DEFAULT_AUDIT_MAX_BYTES = 10 * 1024 * 1024;
/** Rotated files kept: audit.jsonl.1 (newest) .. audit.jsonl.N (oldest). */
export const DEFAULT_AUDIT_KEEP = 3;

export interface AuditOptions {
  /** Size cap in bytes (default DECKHAND_AUDIT_MAX_BYTES, else 10 MiB; at least 4096). */
  maxBytes?: number;
  /** Rotated files to keep (default DECKHAND_AUDIT_KEEP, else 3; 1 to 20). */
  keep?: number;
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return undefined;
  const n = Number(raw.trim());
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The cap and the number of rotated files, from options, then the operator's environment, then the defaults. */
export function auditLimits(env: NodeJS.ProcessEnv = process.env, opts: AuditOptions = {}): { maxBytes: number; keep: number } {
  const maxBytes = opts.maxBytes ?? positiveInt(env.DECKHAND_AUDIT_MAX_BYTES) ?? DEFAULT_AUDIT_MAX_BYTES;
  const keep = opts.keep ?? positiveInt(env.DECKHAND_AUDIT_KEEP) ?? DEFAULT_AUDIT_KEEP;
  return { maxBytes: Math.max(maxBytes, MAX_LINE), keep: Math.min(Math.max(keep, 1), 20) };
}

const int = z.number().int();
const uint = int.nonnegative();

/** Where the audit log lives: join(stateDir(env), "audit.jsonl"). */
export function auditPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(stateDir(env), AUDIT_FILE);
}

export const AuditEvent = z.enum(["decision", "action", "pause", "resume"]);
/**
 * Who or what decided. For pause / resume records, the true source of the
 * request: "operator" (the CLI in the operator's own shell), "agent_cli" (a
 * CLI started with DECKHAND_AGENT_MODE), "serve_client", "mcp_client", or
 * "user_input" (the kill switch: real user input with pause_on_user_input).
 * "pause" is what older deckhand versions wrote for the kill switch.
 * Append-only: old logs must keep validating.
 */
export const AuditDecisionSource = z.enum([
  "builtin",
  "admin",
  "user",
  "default",
  "flag",
  "session",
  "confirm",
  "pause",
  "operator",
  "agent_cli",
  "serve_client",
  "mcp_client",
  "user_input",
]);
export const AuditDelivery = z.enum(["not_dispatched", "submitted", "partial", "unknown"]);

/**
 * One audit line. Strict: unknown keys (text, value, url, clipboard, title,
 * ...) are rejected, never dropped silently. Fields left out default to null.
 */
export const AuditRecord = z.strictObject({
  /** ISO 8601 UTC time; appendAudit fills it in when absent. */
  time: z.iso.datetime(),
  event: AuditEvent,
  /** Session id (serve / MCP) or null for a one-shot CLI call. */
  session: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "session id: letters, digits, _ . - only").nullable().default(null),
  /** The deckhand command, e.g. "click", "set-value", "policy-check". */
  command: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "command: lowercase name"),
  /** Desktop / bundle id or executable basename: no "/" or ":" (never a path or URL). */
  app_id: z
    .string()
    .regex(/^[\p{L}\p{N}][\p{L}\p{N} ._+@!~()-]{0,255}$/u, "app_id: an id or basename, not a path or URL")
    .nullable()
    .default(null),
  pid: uint.nullable().default(null),
  /** Window id (never its title). */
  window_id: uint.nullable().default(null),
  /** Element index in the snapshot (never its name or value). */
  element_index: uint.nullable().default(null),
  decision: z.enum(["allow", "deny"]).nullable().default(null),
  decision_source: AuditDecisionSource.nullable().default(null),
  /** The rule that decided, e.g. "builtin:terminal:xterm", "user:blocked_urls[0]" (an index, never a glob or URL). */
  rule: z
    .string()
    .regex(/^[A-Za-z0-9_.:=[\]-]{1,128}$/, "rule: a rule reference")
    .nullable()
    .default(null),
  /** "OK" or a public error code. */
  outcome: z.enum(["OK", ...ERROR_CODES]),
  delivery: AuditDelivery.nullable().default(null),
  duration_ms: uint.nullable().default(null),
});
/** A record as written (every field present). */
export type AuditRecord = z.infer<typeof AuditRecord>;
/** What callers pass: `time` and nullable fields may be omitted. */
export type AuditRecordInput = Omit<z.input<typeof AuditRecord>, "time"> & { time?: string };

const MAX_LINE = 4096;

function auditError(message: string, reason: string, remediation: string): DeckhandError {
  return new DeckhandError("INTERNAL", message, { remediation, details: { reason } });
}

/** Validate a record; the error names fields, never their values. */
export function validateAuditRecord(record: AuditRecordInput): AuditRecord {
  const input = { ...record, time: record.time ?? new Date().toISOString() };
  const result = AuditRecord.safeParse(input);
  if (!result.success) {
    const fields = result.error.issues
      .map((i) => (i.code === "unrecognized_keys" ? (i as { keys: string[] }).keys.join(",") : i.path.join(".") || "(root)"))
      .join(", ");
    throw new DeckhandError("INTERNAL", `audit record rejected: ${fields}`, {
      remediation: "This is a deckhand bug: an audit record may carry only AuditRecord's fields.",
      details: { reason: "audit_record_rejected", fields },
    });
  }
  return result.data;
}

function openAppend(path: string): number {
  const nofollow = constants.O_NOFOLLOW ?? 0;
  if (!nofollow) {
    // No O_NOFOLLOW (Windows): refuse a symlink by lstat first.
    try {
      if (lstatSync(path).isSymbolicLink()) throw Object.assign(new Error("symlink"), { code: "ELOOP" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | nofollow, 0o600);
}

/** Open the log for appending and check it: a regular file, mode 0600. Returns the fd and its size. */
function openChecked(path: string): { fd: number; size: number; dev: number; ino: number } {
  let fd: number;
  try {
    fd = openAppend(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ELOOP" || code === "EMLINK") {
      throw auditError(`the audit log ${path} is a symlink; refusing to follow it`, "audit_path_is_symlink", `Remove the symlink at ${path}.`);
    }
    throw auditError(`cannot open the audit log ${path} (${code ?? "error"})`, "audit_unwritable", `Make ${path} writable by this user.`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw auditError(`the audit log ${path} is not a regular file`, "audit_path_not_a_file", `Remove ${path}.`);
    if ((st.mode & 0o077) !== 0) {
      try {
        fchmodSync(fd, 0o600);
      } catch {
        throw auditError(`the audit log ${path} is readable by others and cannot be fixed`, "audit_unwritable", `chmod 600 ${path}`);
      }
    }
    return { fd, size: st.size, dev: st.dev, ino: st.ino };
  } catch (err) {
    closeSync(fd);
    if (err instanceof DeckhandError) throw err;
    throw auditError(`cannot check the audit log ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, "audit_unwritable", `Check permissions of ${path}.`);
  }
}

/** A lock older than this was left by a process that died mid-rotation. */
const STALE_LOCK_MS = 10_000;

/**
 * Rotate `path` (whose open file is `file`) if it still names that file: one
 * process at a time, under an O_EXCL lock file beside it. Renames only, from
 * the oldest down: .{keep-1} -> .{keep} (replacing the oldest), ..., path ->
 * .1. Returns false when another process holds the lock (the caller writes
 * to the current file, slightly past the cap; a later write rotates).
 */
function rotate(path: string, file: { dev: number; ino: number }, keep: number): boolean {
  const lock = `${path}.lock`;
  let lockFd: number;
  try {
    lockFd = openSync(lock, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    try {
      if (Date.now() - lstatSync(lock).mtimeMs > STALE_LOCK_MS) unlinkSync(lock);
    } catch {
      /* gone meanwhile */
    }
    return false;
  }
  try {
    // Someone else rotated between our open and the lock: nothing to do.
    let now;
    try {
      now = lstatSync(path);
    } catch {
      return true;
    }
    if (now.dev !== file.dev || now.ino !== file.ino) return true;
    for (let i = keep - 1; i >= 1; i--) {
      try {
        renameSync(`${path}.${i}`, `${path}.${i + 1}`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
    renameSync(path, `${path}.1`);
    return true;
  } finally {
    closeSync(lockFd);
    try {
      unlinkSync(lock);
    } catch {
      /* already removed as stale */
    }
  }
}

/**
 * Validate `record` and append it as one line, rotating the log first when
 * the line would take it past the cap (auditLimits). Throws INTERNAL
 * (details.reason audit_record_rejected, audit_path_is_symlink,
 * audit_path_not_a_file, audit_unwritable) without writing anything when it
 * cannot. Callers should treat a throw as "do not dispatch".
 */
export function appendAudit(record: AuditRecordInput, env: NodeJS.ProcessEnv = process.env, opts: AuditOptions = {}): AuditRecord {
  const valid = validateAuditRecord(record);
  const line = `${JSON.stringify(valid)}\n`;
  if (Buffer.byteLength(line) > MAX_LINE) throw auditError("audit record too long", "audit_record_rejected", "This is a deckhand bug.");
  const { maxBytes, keep } = auditLimits(env, opts);
  const path = auditPath(env);
  const buf = Buffer.from(line);
  let file = openChecked(path);
  try {
    if (file.size > 0 && file.size + buf.length > maxBytes) {
      let rotated = false;
      try {
        rotated = rotate(path, file, keep);
      } catch (err) {
        throw auditError(`cannot rotate the audit log ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, "audit_unwritable", `Check permissions of ${dirname(path)}.`);
      }
      if (rotated) {
        // Write to the file now at the path (fresh, or another writer's fresh one).
        closeSync(file.fd);
        file = { fd: -1, size: 0, dev: 0, ino: 0 };
        file = openChecked(path);
      }
    }
    let off = 0;
    while (off < buf.length) off += writeSync(file.fd, buf, off, buf.length - off);
  } catch (err) {
    if (err instanceof DeckhandError) throw err;
    throw auditError(`cannot write the audit log ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`, "audit_unwritable", `Check free space and permissions of ${path}.`);
  } finally {
    if (file.fd >= 0) closeSync(file.fd);
  }
  return valid;
}

/** The log's files, oldest first: audit.jsonl.N .. audit.jsonl.1, audit.jsonl. */
export function auditFiles(env: NodeJS.ProcessEnv = process.env, opts: AuditOptions = {}): string[] {
  const path = auditPath(env);
  const { keep } = auditLimits(env, opts);
  return [...Array.from({ length: keep }, (_, i) => `${path}.${keep - i}`), path];
}

/** Every record in the audit log and its rotated files (oldest first); [] when there is none. For tests and `deckhand audit`. */
export function readAudit(env: NodeJS.ProcessEnv = process.env, opts: AuditOptions = {}): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const path of auditFiles(env, opts)) {
    let text: string;
    try {
      const fd = openSync(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
      try {
        text = readFileSync(fd, "utf8");
      } finally {
        closeSync(fd);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
      throw err;
    }
    text
      .split("\n")
      .filter((l) => l.trim() !== "")
      .forEach((l, i) => {
        const r = AuditRecord.safeParse(JSON.parse(l));
        if (!r.success) throw auditError(`audit line ${i + 1} of ${path} is not a valid record`, "audit_record_rejected", `Inspect ${path}.`);
        out.push(r.data);
      });
  }
  return out;
}
