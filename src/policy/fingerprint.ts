// Content fingerprints of the built-in denied binaries installed on this
// machine, so that a renamed copy of /usr/bin/xterm at /tmp/foo is still
// xterm. See docs/policy.md "Identity" for the rule and its limits.
//
// - Known binaries: each built-in executable name looked up in PATH and the
//   usual system directories; a candidate counts only if the basename of its
//   canonical path is itself a built-in name (so /snap/bin/alacritty ->
//   /usr/bin/snap, or a busybox applet link, never fingerprints the launcher).
// - A target is hashed only when its size equals a known binary's size, and
//   hashes are cached by path + device + inode + size + mtime + ctime, so a decision
//   costs one stat() in the common case.
import { createHash } from "node:crypto";
import { closeSync, openSync, readSync, realpathSync, statSync, type Stats } from "node:fs";
import { delimiter, join } from "node:path";
import { BUILTIN_DENY, type BuiltinApp } from "./builtin.ts";
import { normalizeExecutableName, pathBasename } from "./identity.ts";

/** Files larger than this are never hashed (no terminal binary is this big). */
const MAX_HASH_BYTES = 512 * 1024 * 1024;

export const DEFAULT_SYSTEM_DIRS: readonly string[] = Object.freeze([
  "/usr/bin",
  "/bin",
  "/usr/local/bin",
  "/usr/libexec",
  "/usr/lib/gnome-terminal",
  "/usr/lib/kitty/bin",
  "/opt/1Password",
  "/opt/Bitwarden",
  "/opt/enpass",
]);

type HashEntry = { key: string; sha256: string };
const hashCache = new Map<string, HashEntry>();

function statKey(path: string, st: Stats): string {
  return `${path}\u0000${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
}

/** sha256 of a regular file, cached by path + dev + inode + size + mtime + ctime. Null if unreadable. */
export function fileSha256(path: string): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return null;
  }
  if (!st.isFile() || st.size > MAX_HASH_BYTES) return null;
  const key = statKey(path, st);
  const hit = hashCache.get(path);
  if (hit && hit.key === key) return hit.sha256;
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return null;
  }
  try {
    const hash = createHash("sha256");
    const buf = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n <= 0) break;
      hash.update(buf.subarray(0, n));
    }
    const sha256 = hash.digest("hex");
    if (hashCache.size > 1024) hashCache.clear();
    hashCache.set(path, { key, sha256 });
    return sha256;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

export type FingerprintMatch = { app: BuiltinApp; knownPath: string };

export type FingerprintIndexOptions = {
  /** Directories searched for built-in binaries. Default: PATH + DEFAULT_SYSTEM_DIRS. */
  dirs?: readonly string[];
  /** The apps to fingerprint. Default: BUILTIN_DENY. */
  apps?: readonly BuiltinApp[];
  env?: NodeJS.ProcessEnv;
};

type Known = { path: string; app: BuiltinApp };

/**
 * The fingerprints of built-in denied binaries present on this machine,
 * discovered lazily on the first lookup and re-validated by stat on each use.
 */
export class FingerprintIndex {
  readonly #dirs: readonly string[];
  readonly #apps: readonly BuiltinApp[];
  #known: Known[] | null = null;

  constructor(opts: FingerprintIndexOptions = {}) {
    const env = opts.env ?? process.env;
    this.#dirs = opts.dirs ?? [...(env.PATH ?? "").split(delimiter).filter((d) => d.startsWith("/")), ...DEFAULT_SYSTEM_DIRS];
    this.#apps = opts.apps ?? BUILTIN_DENY;
  }

  #discover(): Known[] {
    const byName = new Map<string, BuiltinApp>();
    for (const app of this.#apps) for (const exe of app.executables) byName.set(exe, app);
    const seen = new Set<string>();
    const known: Known[] = [];
    for (const dir of new Set(this.#dirs)) {
      for (const [exe, app] of byName) {
        if (exe.includes(" ")) continue;
        let real: string;
        try {
          real = realpathSync.native(join(dir, exe));
        } catch {
          continue;
        }
        if (seen.has(real)) continue;
        seen.add(real);
        // The resolved file must itself carry a built-in name; a shared
        // launcher (snap, busybox, an interpreter) must never be fingerprinted.
        if (!byName.has(normalizeExecutableName(pathBasename(real)))) continue;
        try {
          const st = statSync(real);
          if (st.isFile() && st.size > 0 && st.size <= MAX_HASH_BYTES) known.push({ path: real, app });
        } catch {
          // vanished between realpath and stat
        }
      }
    }
    return known;
  }

  /** Paths of the built-in binaries found (for `policy-check` diagnostics and tests). */
  knownPaths(): string[] {
    this.#known ??= this.#discover();
    return this.#known.map((k) => k.path);
  }

  /**
   * The built-in app whose installed binary has the same content as
   * `executable`, or null. Never throws.
   */
  lookup(executable: string | null): FingerprintMatch | null {
    if (!executable) return null;
    this.#known ??= this.#discover();
    if (this.#known.length === 0) return null;
    let size: number;
    try {
      const st = statSync(executable);
      if (!st.isFile()) return null;
      size = st.size;
    } catch {
      return null;
    }
    // Re-stat known binaries: an upgrade in a long-lived serve session changes them.
    const candidates = this.#known.filter((k) => {
      try {
        return statSync(k.path).size === size;
      } catch {
        return false;
      }
    });
    if (candidates.length === 0) return null;
    const target = fileSha256(executable);
    if (!target) return null;
    for (const k of candidates) {
      if (fileSha256(k.path) === target) return { app: k.app, knownPath: k.path };
    }
    return null;
  }
}

let defaultIndex: FingerprintIndex | null = null;

/** The process-wide index (PATH + system dirs), created on first use. */
export function defaultFingerprintIndex(): FingerprintIndex {
  defaultIndex ??= new FingerprintIndex();
  return defaultIndex;
}
