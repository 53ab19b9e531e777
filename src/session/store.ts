// Durable snapshots: one JSON file per snapshot and one "latest" pointer per
// app, written atomically with mode 0600, so that a separate CLI process can
// act on what an earlier one observed.
import { closeSync, fsyncSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import { Lru } from "./lru.ts";
import { sameLocator, type SecureLocator, type Snapshot } from "./snapshot.ts";

export const DEFAULT_SNAPSHOT_TTL_MS = 5 * 60_000;
const KEEP_SNAPSHOTS = 200;
const KEEP_SCREENSHOTS = 30;
const KEEP_LATEST = 200;
/**
 * Snapshots this process keeps in memory besides their files (issue 15:
 * serve's resident memory must stay flat). What a session reads back is the
 * latest observation of each app it works on and the base of a diff: a few
 * records, not the 200 on disk; any other is read from its file (about a
 * millisecond). Bounded in count and in JSON bytes (a 5000-node tree is
 * megabytes), so that a big app cannot hold tens of MB.
 */
export const MEMORY_SNAPSHOTS = 16;
export const MEMORY_SNAPSHOT_BYTES = 8 * 1024 * 1024;

/**
 * The names deckhand writes in the store's directories. Retention deletes
 * regular files with these names only: never a file deckhand does not
 * produce, never through a symlink.
 */
export const STORE_FILE_NAMES = Object.freeze({
  /** snapshots/: cs_<id>.json */
  snapshot: /^cs_[A-Za-z0-9]{10,40}\.json$/,
  /**
   * screenshots/: cs_<id> (a snapshot's), shot_<time>_<random> (the
   * screenshot command's), as .png, .jpg or .webp (--image-format), and the
   * set-of-marks image <name>-marks.png beside them.
   */
  screenshot: /^(?:cs_[A-Za-z0-9]{10,40}|shot_[0-9a-z]{1,16}_[0-9a-z]{0,16})(?:\.(?:png|jpg|webp)|-marks\.png)$/,
  /** latest/ and secure/: <32 hex digits of sha256(key)>.json */
  keyed: /^[0-9a-f]{32}\.json$/,
});
/** A screenshot file's format, and the extension its file is given. */
export type ImageFileFormat = "png" | "jpeg" | "webp";
export const IMAGE_EXTENSION: Readonly<Record<ImageFileFormat, string>> = Object.freeze({ png: "png", jpeg: "jpg", webp: "webp" });
/** Windows whose secure fields are remembered, and locators per window. */
const KEEP_SECURE_WINDOWS = 200;
const MAX_SECURE_PER_WINDOW = 500;

interface SecureMemoryFile {
  windowKey: string;
  entries: { path: number[]; identifier: string; until: number }[];
}

/**
 * Write a file atomically (a reader sees the old content or the new, never a
 * part), mode 0600. `durable` also fsyncs it before the rename: for what
 * must outlive a crash (the secure-field memory). Snapshot records and latest
 * pointers are not: after a crash the agent observes again, and an fsync cost
 * 0.1-5 ms per file on every observation here (issue 15).
 */
export function writeFileAtomic(path: string, data: string | Buffer, durable = true): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    if (typeof data === "string") writeSync(fd, data);
    else writeSync(fd, data);
    if (durable) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function slug(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 32);
}

export class SnapshotStore {
  /** Recently saved or read snapshots (see MEMORY_SNAPSHOTS), weighed by their JSON's length. */
  private readonly memory = new Lru<string, Snapshot>(MEMORY_SNAPSHOTS, MEMORY_SNAPSHOT_BYTES);
  /** Latest snapshot id per target, for when its pointer file cannot be read; as many as the pointers on disk. */
  private readonly latestMemory = new Lru<string, string>(KEEP_LATEST);
  readonly snapshotsDir: string;
  readonly latestDir: string;
  readonly screenshotsDir: string;
  /** Secure-field memory: one file per window key (see rememberSecure). */
  readonly secureDir: string;

  constructor(readonly root: string) {
    this.snapshotsDir = join(root, "snapshots");
    this.latestDir = join(root, "latest");
    this.screenshotsDir = join(root, "screenshots");
    this.secureDir = join(root, "secure");
    for (const d of [this.snapshotsDir, this.latestDir, this.screenshotsDir, this.secureDir]) makePrivateDir(d);
  }

  /**
   * Every directory of the store must be a real directory: one replaced by a
   * symlink is refused (INTERNAL, details.reason "state-dir-symlink"), so
   * that nothing is written, read or deleted through it. Checked on every
   * use, not only at start: pause and resume, which need no store, keep
   * working while the store is refused.
   */
  checkDirs(): void {
    for (const d of [this.snapshotsDir, this.latestDir, this.screenshotsDir, this.secureDir]) checkPrivateDir(d);
  }

  /**
   * Remember the locators (path + identifier) of elements seen secure in a
   * window until `until` (capture time + snapshot TTL). Durable, like
   * snapshots: the next observation may be another process's. Entries seen
   * again are extended; expired ones are dropped.
   */
  rememberSecure(windowKey: string, seen: readonly SecureLocator[], until: number, now = Date.now()): void {
    if (seen.length === 0) return;
    this.checkDirs();
    const entries = this.readSecure(windowKey).filter((e) => e.until > now && !seen.some((s) => sameLocator(s, e)));
    for (const s of seen) entries.push({ path: [...s.path], identifier: s.identifier, until });
    const file: SecureMemoryFile = { windowKey, entries: entries.slice(-MAX_SECURE_PER_WINDOW) };
    writeFileAtomic(join(this.secureDir, `${slug(windowKey)}.json`), JSON.stringify(file));
    pruneDir(this.secureDir, KEEP_SECURE_WINDOWS, STORE_FILE_NAMES.keyed);
  }

  /** The locators remembered secure in a window and not expired at `now`. */
  secureLocators(windowKey: string, now = Date.now()): SecureLocator[] {
    this.checkDirs();
    return this.readSecure(windowKey)
      .filter((e) => e.until > now)
      .map((e) => ({ path: e.path, identifier: e.identifier }));
  }

  private readSecure(windowKey: string): SecureMemoryFile["entries"] {
    try {
      const f = JSON.parse(readFileSync(join(this.secureDir, `${slug(windowKey)}.json`), "utf8")) as SecureMemoryFile;
      if (f.windowKey !== windowKey || !Array.isArray(f.entries)) return [];
      return f.entries.filter((e) => Array.isArray(e.path) && e.path.every((p) => Number.isInteger(p)) && typeof e.identifier === "string" && typeof e.until === "number");
    } catch {
      return [];
    }
  }

  /** Persist the record, then point the app's latest at it. */
  save(snapshot: Snapshot): void {
    this.checkDirs();
    const json = JSON.stringify(snapshot);
    writeFileAtomic(join(this.snapshotsDir, `${snapshot.snapshotId}.json`), json, false);
    writeFileAtomic(join(this.latestDir, `${slug(snapshot.targetKey)}.json`), JSON.stringify({ snapshotId: snapshot.snapshotId, targetKey: snapshot.targetKey }), false);
    this.memory.set(snapshot.snapshotId, snapshot, json.length);
    this.latestMemory.set(snapshot.targetKey, snapshot.snapshotId);
    this.prune();
  }

  get(snapshotId: string): Snapshot | null {
    const cached = this.memory.get(snapshotId);
    // A horizon moves when another process pages the snapshot: such a record is read again.
    if (cached && cached.horizon === undefined) return cached;
    this.checkDirs();
    try {
      const json = readFileSync(join(this.snapshotsDir, `${snapshotId}.json`), "utf8");
      const s = JSON.parse(json) as Snapshot;
      // A record in an older format (before the neutral vocabulary) is not acted on: observe again.
      if (!isCurrentFormat(s)) return null;
      this.memory.set(snapshotId, s, json.length);
      return s;
    } catch {
      return null;
    }
  }

  /**
   * Record how far a snapshot with a horizon was shown: `position` the
   * furthest node shown (the horizon only grows), or null when its last page
   * was shown (no horizon left). A snapshot without a horizon was shown whole
   * and stays so.
   */
  showThrough(snapshotId: string, position: number | null): void {
    const s = this.get(snapshotId);
    if (!s || s.horizon === undefined) return;
    const horizon = position === null ? undefined : Math.max(position, s.horizon ?? -1);
    if (horizon === s.horizon) return;
    const next: Snapshot = { ...s };
    if (horizon === undefined) delete next.horizon;
    else next.horizon = horizon;
    this.checkDirs();
    const json = JSON.stringify(next);
    writeFileAtomic(join(this.snapshotsDir, `${snapshotId}.json`), json, false);
    this.memory.set(snapshotId, next, json.length);
  }

  /** The latest snapshot id for an app. Read from disk: another process may have observed since. */
  latestId(targetKey: string): string | null {
    this.checkDirs();
    try {
      const p = JSON.parse(readFileSync(join(this.latestDir, `${slug(targetKey)}.json`), "utf8")) as { snapshotId: string };
      return p.snapshotId;
    } catch {
      return this.latestMemory.peek(targetKey) ?? null;
    }
  }

  /** Where a screenshot named `name` is written, with its format's extension (png, jpg, webp). */
  screenshotPath(name: string, format: ImageFileFormat = "png"): string {
    this.checkDirs();
    return join(this.screenshotsDir, `${name}.${IMAGE_EXTENSION[format]}`);
  }

  /** Bounded retention: old snapshot records, screenshot files and latest pointers go (deckhand's files only). */
  private prune(): void {
    pruneDir(this.snapshotsDir, KEEP_SNAPSHOTS, STORE_FILE_NAMES.snapshot);
    pruneDir(this.screenshotsDir, KEEP_SCREENSHOTS, STORE_FILE_NAMES.screenshot);
    pruneDir(this.latestDir, KEEP_LATEST, STORE_FILE_NAMES.keyed);
  }

  /** Snapshots held in memory and their JSON bytes (tests: the bounds of a long session). */
  get memoryHeld(): { snapshots: number; bytes: number; latest: number } {
    return { snapshots: this.memory.size, bytes: this.memory.weight, latest: this.latestMemory.size };
  }
}

/** Whether a stored record has this version's element shape (neutral role beside the native one). */
function isCurrentFormat(s: Snapshot): boolean {
  return Array.isArray(s?.elements) && Array.isArray(s?.nodes) && s.elements.every((e) => typeof e?.nativeRole === "string" && Array.isArray(e.nativeActions) && typeof e.locator?.nativeRole === "string");
}

function stateDirError(dir: string, reason: "state-dir-symlink" | "state-dir-not-a-directory"): DeckhandError {
  const what = reason === "state-dir-symlink" ? "is a symlink; deckhand does not follow it" : "is not a directory";
  return new DeckhandError("INTERNAL", `the state directory ${dir} ${what}`, {
    remediation: `Remove ${dir}: deckhand recreates it (mode 0700) on its next run. Keep deckhand's state directory to deckhand.`,
    details: { reason, path: dir },
  });
}

/** mkdir 0700, not recursive (the root exists), never through a symlink; an existing entry is checked on use. */
function makePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") mkdirSync(dir, { recursive: true, mode: 0o700 });
    else if (code !== "EEXIST") throw err;
  }
}

/** A real directory (lstat: a symlink is not one); a missing one is made again. */
function checkPrivateDir(dir: string): void {
  let st;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    makePrivateDir(dir);
    st = lstatSync(dir);
  }
  if (st.isSymbolicLink()) throw stateDirError(dir, "state-dir-symlink");
  if (!st.isDirectory()) throw stateDirError(dir, "state-dir-not-a-directory");
}

/**
 * How many files over `keep` a directory may hold before it is pruned (back
 * to `keep`): a tenth of `keep`, at least 1. Retention stays bounded (at most
 * keep + slack files), and the scan that stats and sorts every file runs once
 * per `slack` writes instead of on every one (issue 15: with 200 records that
 * scan was a large part of each observation's own time).
 */
export function pruneSlack(keep: number): number {
  return Math.max(1, Math.floor(keep / 10));
}

/**
 * Keep the newest `keep` files of `dir` named like `pattern`, once there are
 * more than keep + pruneSlack(keep); delete the rest. Only regular files with
 * deckhand's names are candidates (lstat: a symlink is never followed, nor
 * deleted), and nothing is deleted at all when `dir` itself is not a real
 * directory.
 */
function pruneDir(dir: string, keep: number, pattern: RegExp): void {
  let names: string[];
  try {
    const st = lstatSync(dir);
    if (st.isSymbolicLink() || !st.isDirectory()) return;
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile() && pattern.test(e.name))
      .map((e) => e.name);
  } catch {
    return;
  }
  if (names.length <= keep + pruneSlack(keep)) return;
  const withTimes = names
    .map((n) => {
      try {
        const st = lstatSync(join(dir, n));
        return st.isFile() ? { n, t: st.mtimeMs } : null;
      } catch {
        return null;
      }
    })
    .filter((x): x is { n: string; t: number } => x !== null)
    .sort((a, b) => b.t - a.t);
  for (const { n } of withTimes.slice(keep)) {
    try {
      unlinkSync(join(dir, n)); // removes the name itself, never a symlink's target
    } catch {
      /* gone meanwhile */
    }
  }
}
