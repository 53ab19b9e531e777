// Policy files: the admin file (/etc/deckhand/policy.toml, or
// DECKHAND_ADMIN_POLICY) and the user file (--policy, else
// $XDG_CONFIG_HOME/deckhand/policy.toml, else ~/.config/deckhand/policy.toml).
// A missing file means "no policy from that layer". A broken user file is
// INVALID_ARGUMENTS naming the line; a broken admin file fails closed (its
// layer then denies every app, URL and foreground grant).
import { readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseToml, TomlError } from "smol-toml";
import { z } from "zod";
import { DeckhandError } from "../protocol/errors.ts";
import { once } from "../lazy-table.ts";

export type PolicySource = "admin" | "user";

/** One [[allow]] or [[deny]] entry. Every given key must match (AND). */
export type PolicyEntry = {
  /** Executable basename or desktop / bundle id; case-insensitive; `*` globs. */
  id?: string;
  /** Canonical executable path; `*` globs; case-sensitive. */
  path?: string;
  /** App display or accessible name; case-insensitive; `*` globs. */
  name?: string;
  /** Window title; case-insensitive; `*` globs. Only matches when a window is known. */
  window_title?: string;
};

export type PolicyLayer = {
  source: PolicySource;
  /** The file this layer came from. */
  file: string;
  default: "allow" | "deny" | null;
  allow: PolicyEntry[];
  deny: PolicyEntry[];
  /** `*` globs of page URLs that browsers may not be on. */
  blockedUrls: string[];
  confirm: { command: string[] | null; timeoutMs: number | null };
  /** Operator grant (or refusal) of foreground input. */
  foreground: "allow" | "deny" | null;
  pauseOnUserInput: boolean;
  /**
   * Admin layer only: the file exists but could not be read or parsed. Such a
   * layer denies every app, every browser page and foreground input.
   */
  broken: { message: string; line: number | null } | null;
};

/** The loaded policy. `null` layers had no file. */
export type Policy = Readonly<{ admin: PolicyLayer | null; user: PolicyLayer | null }>;

export const EMPTY_POLICY: Policy = Object.freeze({ admin: null, user: null });

export const DEFAULT_ADMIN_POLICY_PATH = "/etc/deckhand/policy.toml";
/** Policy files larger than this are refused. */
export const MAX_POLICY_BYTES = 1024 * 1024;
export const MAX_CONFIRM_TIMEOUT_MS = 10 * 60 * 1000;

// ---------------------------------------------------------------- schema

const NO_CONTROL = /^[^\u0000-\u001f\u007f]*$/;
const text = (max: number) =>
  z.string().min(1, "must not be empty").max(max, `must be at most ${max} characters`).regex(NO_CONTROL, "must not contain control characters");
/** The policy.toml schema: the one source of truth for its keys (docs/policy.md documents it). Built on first use (src/lazy-table.ts): most calls read no policy file. */
export const policyFileSchema = once(() => {
  const absolutePath = text(4096).refine((p) => p.startsWith("/") || p.startsWith("*") || /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\"), {
    message: "must be an absolute path (a glob may start with *)",
  });

  const Entry = z
    .strictObject({
      id: text(512).optional(),
      path: absolutePath.optional(),
      name: text(512).optional(),
      window_title: text(1024).optional(),
    })
    .refine((e) => e.id !== undefined || e.path !== undefined || e.name !== undefined || e.window_title !== undefined, {
      message: "an entry needs at least one of id, path, name, window_title",
    });

  return z.strictObject({
    default: z.enum(["allow", "deny"]).optional(),
    allow: z.array(Entry).max(10_000).optional(),
    deny: z.array(Entry).max(10_000).optional(),
    blocked_urls: z.array(text(2048)).max(10_000).optional(),
    confirm: z
      .strictObject({
        command: z.array(text(4096)).min(1, "must name a program").max(256).optional(),
        timeout_ms: z.number().int().min(1).max(MAX_CONFIRM_TIMEOUT_MS).optional(),
      })
      .optional(),
    foreground: z.enum(["allow", "deny"]).optional(),
    pause_on_user_input: z.boolean().optional(),
  });
});
export type PolicyFile = z.infer<ReturnType<typeof policyFileSchema>>;

// ---------------------------------------------------------------- paths

/** The admin policy path: DECKHAND_ADMIN_POLICY, else /etc/deckhand/policy.toml. */
export function adminPolicyPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.DECKHAND_ADMIN_POLICY || DEFAULT_ADMIN_POLICY_PATH;
}

/** The default user policy path: $XDG_CONFIG_HOME/deckhand/policy.toml, else ~/.config/deckhand/policy.toml. */
export function defaultUserPolicyPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "deckhand", "policy.toml");
}

// ---------------------------------------------------------------- parsing

type Problem = { message: string; line: number; column?: number };

/** Parse one policy file's text. Throws DeckhandError INVALID_ARGUMENTS with details.line. */
export function parsePolicyText(source: string, opts: { layer: PolicySource; file: string }): PolicyLayer {
  const problem = checkText(source);
  if ("message" in problem) throw invalid(opts, problem);
  const file = problem.value;
  return {
    source: opts.layer,
    file: opts.file,
    default: file.default ?? null,
    allow: (file.allow ?? []).map(cleanEntry),
    deny: (file.deny ?? []).map(cleanEntry),
    blockedUrls: [...(file.blocked_urls ?? [])],
    confirm: { command: file.confirm?.command ? [...file.confirm.command] : null, timeoutMs: file.confirm?.timeout_ms ?? null },
    foreground: file.foreground ?? null,
    pauseOnUserInput: file.pause_on_user_input ?? false,
    broken: null,
  };
}

function cleanEntry(e: PolicyEntry): PolicyEntry {
  const out: PolicyEntry = {};
  if (e.id !== undefined) out.id = e.id;
  if (e.path !== undefined) out.path = e.path;
  if (e.name !== undefined) out.name = e.name;
  if (e.window_title !== undefined) out.window_title = e.window_title;
  return out;
}

function checkText(source: string): Problem | { value: PolicyFile } {
  let doc: unknown;
  try {
    doc = parseToml(source, { maxDepth: 16 });
  } catch (err) {
    if (err instanceof TomlError) {
      const first = String(err.message).split("\n")[0]!.replace(/^Invalid TOML document:\s*/, "");
      return { message: `invalid TOML: ${first}`, line: Math.max(1, err.line || 1), column: err.column || undefined };
    }
    return { message: `invalid TOML: ${err instanceof Error ? err.message.split("\n")[0] : "unreadable"}`, line: 1 };
  }
  const result = policyFileSchema().safeParse(doc);
  if (result.success) return { value: result.data };
  const issue = result.error.issues[0]!;
  const path: (string | number)[] = issue.path.filter((p): p is string | number => typeof p !== "symbol");
  const keys = issue.code === "unrecognized_keys" ? (issue as { keys: string[] }).keys : [];
  const located = keys.length ? [...path, keys[0]!] : path;
  const where = located.length ? formatPath(located) : "file";
  const message = issue.code === "unrecognized_keys" ? `unknown key ${formatPath(located)}` : `${where}: ${issue.message}`;
  return { message, line: lineOf(source, located) };
}

function formatPath(path: (string | number)[]): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("");
}

function invalid(opts: { layer: PolicySource; file: string }, p: Problem): DeckhandError {
  const details: Record<string, string | number> = { file: opts.file, line: p.line, layer: opts.layer };
  if (p.column) details.column = p.column;
  return new DeckhandError("INVALID_ARGUMENTS", `${opts.layer} policy ${opts.file}, line ${p.line}: ${p.message}`, {
    remediation: `Fix line ${p.line} of ${opts.file}; the keys are documented in docs/policy.md.`,
    details,
  });
}

// Best-effort line of a schema path in TOML text: the key's own line when it
// can be found, else its table header, else the first mention, else line 1.
function lineOf(source: string, path: (string | number)[]): number {
  const lines = source.split(/\r\n|\n|\r/);
  if (path.length === 0) return 1;
  const esc = (s: string) => s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");
  const keyLine = (k: string) => new RegExp(`^\\s*(?:"${esc(k)}"|'${esc(k)}'|${esc(k)})\\s*(?:=|\\.)`);
  const header = (line: string) => /^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?/.exec(line);
  const headerName = (m: RegExpExecArray) => m[2]!.replace(/["'\s]/g, "");
  const findKey = (k: string, from: number): number | null => {
    for (let i = from; i < lines.length; i++) {
      if (header(lines[i]!)) break;
      if (keyLine(k).test(lines[i]!)) return i + 1;
    }
    return null;
  };
  const top = String(path[0]);
  const second = path[1];
  const third = path[2];
  if (typeof second === "number") {
    let seen = -1;
    for (let i = 0; i < lines.length; i++) {
      const m = header(lines[i]!);
      if (m && m[1] === "[[" && headerName(m) === top && ++seen === second) {
        if (typeof third === "string") return findKey(third, i + 1) ?? i + 1;
        return i + 1;
      }
    }
  } else if (typeof second === "string") {
    for (let i = 0; i < lines.length; i++) {
      const m = header(lines[i]!);
      if (m && m[1] === "[" && headerName(m) === top) return findKey(second, i + 1) ?? i + 1;
    }
    const dotted = new RegExp(`^\\s*${esc(top)}\\s*\\.\\s*${esc(second)}\\s*=`);
    const i = lines.findIndex((l) => dotted.test(l));
    if (i >= 0) return i + 1;
  } else {
    // Top-level key: before the first table header.
    for (let i = 0; i < lines.length; i++) {
      if (header(lines[i]!)) break;
      if (keyLine(top).test(lines[i]!)) return i + 1;
    }
  }
  for (let i = 0; i < lines.length; i++) {
    const m = header(lines[i]!);
    if ((m && headerName(m) === top) || keyLine(top).test(lines[i]!)) return i + 1;
  }
  const mention = lines.findIndex((l) => l.includes(top));
  return mention >= 0 ? mention + 1 : 1;
}

// ---------------------------------------------------------------- loading

type ReadResult = { kind: "missing" } | { kind: "text"; text: string } | { kind: "error"; message: string };

function readPolicyFile(path: string): ReadResult {
  let buf: Buffer;
  try {
    const st = statSync(path);
    if (!st.isFile()) return { kind: "error", message: "not a regular file" };
    if (st.size > MAX_POLICY_BYTES) return { kind: "error", message: `larger than ${MAX_POLICY_BYTES} bytes` };
    buf = readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { kind: "missing" };
    return { kind: "error", message: `cannot read: ${code ?? "error"}` };
  }
  if (buf.length > MAX_POLICY_BYTES) return { kind: "error", message: `larger than ${MAX_POLICY_BYTES} bytes` };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(buf).replace(/^\uFEFF/, "");
  } catch {
    return { kind: "error", message: "not valid UTF-8" };
  }
  return { kind: "text", text };
}

/** A layer that denies everything: what a broken admin file becomes. */
export function failClosedLayer(file: string, message: string, line: number | null): PolicyLayer {
  return {
    source: "admin",
    file,
    default: "deny",
    allow: [],
    deny: [],
    blockedUrls: ["*"],
    confirm: { command: null, timeoutMs: null },
    foreground: "deny",
    pauseOnUserInput: false,
    broken: { message, line },
  };
}

/** Load the admin layer. Never throws: missing -> null, broken -> fail-closed layer. */
export function loadAdminPolicy(path: string): PolicyLayer | null {
  const read = readPolicyFile(path);
  if (read.kind === "missing") return null;
  if (read.kind === "error") return failClosedLayer(path, read.message, null);
  try {
    return parsePolicyText(read.text, { layer: "admin", file: path });
  } catch (err) {
    if (err instanceof DeckhandError) {
      const line = typeof err.details.line === "number" ? err.details.line : null;
      return failClosedLayer(path, err.message, line);
    }
    return failClosedLayer(path, "unreadable policy", null);
  }
}

/**
 * Load the user layer. `explicit` (from --policy) must exist; the default
 * path may be missing. Broken -> INVALID_ARGUMENTS naming file and line.
 */
export function loadUserPolicy(path: string, explicit: boolean): PolicyLayer | null {
  const read = readPolicyFile(path);
  if (read.kind === "missing") {
    if (!explicit) return null;
    throw new DeckhandError("INVALID_ARGUMENTS", `policy file ${path} does not exist`, {
      remediation: "Pass an existing file to --policy.",
      details: { file: path, layer: "user" },
    });
  }
  if (read.kind === "error") {
    throw new DeckhandError("INVALID_ARGUMENTS", `user policy ${path}: ${read.message}`, {
      remediation: `Make ${path} a readable UTF-8 TOML file.`,
      details: { file: path, layer: "user", line: 1 },
    });
  }
  return parsePolicyText(read.text, { layer: "user", file: path });
}

export type LoadPolicyOptions = {
  /** --policy PATH. Default: defaultUserPolicyPath(env), which may be missing. */
  userPath?: string;
  /** Default: adminPolicyPath(env). */
  adminPath?: string;
  env?: NodeJS.ProcessEnv;
};

/** Load both layers. Throws only for a broken user file (INVALID_ARGUMENTS). */
export function loadPolicy(opts: LoadPolicyOptions = {}): Policy {
  const env = opts.env ?? process.env;
  const admin = loadAdminPolicy(opts.adminPath ?? adminPolicyPath(env));
  const user = loadUserPolicy(opts.userPath ?? defaultUserPolicyPath(env), opts.userPath !== undefined);
  return Object.freeze({ admin, user });
}

/** The policy's layers, admin first. */
export function layers(policy: Policy): PolicyLayer[] {
  return [policy.admin, policy.user].filter((l): l is PolicyLayer => l !== null);
}

/** Whether the helper's user-input event should pause deckhand (either layer may turn it on). */
export function pauseOnUserInput(policy: Policy): boolean {
  return layers(policy).some((l) => l.pauseOnUserInput);
}

/** A summary for `deckhand policy-check` output. */
export function describePolicy(policy: Policy): {
  admin: { file: string; broken: string | null } | null;
  user: { file: string } | null;
} {
  return {
    admin: policy.admin ? { file: policy.admin.file, broken: policy.admin.broken?.message ?? null } : null,
    user: policy.user ? { file: policy.user.file } : null,
  };
}
