// Durable snapshots: one JSON file per snapshot and one "latest" pointer per
// app, written atomically with mode 0600, so that a separate CLI process can
// act on what an earlier one observed.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Snapshot } from "./snapshot.ts";

export const DEFAULT_SNAPSHOT_TTL_MS = 5 * 60_000;
const KEEP_SNAPSHOTS = 200;
const KEEP_SCREENSHOTS = 30;

export function writeFileAtomic(path: string, data: string | Buffer): void {
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  const fd = openSync(tmp, "wx", 0o600);
  try {
    if (typeof data === "string") writeSync(fd, data);
    else writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

function slug(key: string): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 32);
}

export class SnapshotStore {
  private readonly memory = new Map<string, Snapshot>();
  private readonly latestMemory = new Map<string, string>();
  readonly snapshotsDir: string;
  readonly latestDir: string;
  readonly screenshotsDir: string;

  constructor(readonly root: string) {
    this.snapshotsDir = join(root, "snapshots");
    this.latestDir = join(root, "latest");
    this.screenshotsDir = join(root, "screenshots");
    for (const d of [this.snapshotsDir, this.latestDir, this.screenshotsDir]) mkdirSync(d, { recursive: true, mode: 0o700 });
  }

  /** Persist the record, then point the app's latest at it. */
  save(snapshot: Snapshot): void {
    writeFileAtomic(join(this.snapshotsDir, `${snapshot.snapshotId}.json`), JSON.stringify(snapshot));
    writeFileAtomic(join(this.latestDir, `${slug(snapshot.targetKey)}.json`), JSON.stringify({ snapshotId: snapshot.snapshotId, targetKey: snapshot.targetKey }));
    this.memory.set(snapshot.snapshotId, snapshot);
    this.latestMemory.set(snapshot.targetKey, snapshot.snapshotId);
    this.prune();
  }

  get(snapshotId: string): Snapshot | null {
    const cached = this.memory.get(snapshotId);
    if (cached) return cached;
    try {
      const s = JSON.parse(readFileSync(join(this.snapshotsDir, `${snapshotId}.json`), "utf8")) as Snapshot;
      this.memory.set(snapshotId, s);
      return s;
    } catch {
      return null;
    }
  }

  /** The latest snapshot id for an app. Read from disk: another process may have observed since. */
  latestId(targetKey: string): string | null {
    try {
      const p = JSON.parse(readFileSync(join(this.latestDir, `${slug(targetKey)}.json`), "utf8")) as { snapshotId: string };
      return p.snapshotId;
    } catch {
      return this.latestMemory.get(targetKey) ?? null;
    }
  }

  screenshotPath(name: string): string {
    return join(this.screenshotsDir, `${name}.png`);
  }

  /** Bounded retention: old snapshot records and screenshot files go. */
  private prune(): void {
    pruneDir(this.snapshotsDir, KEEP_SNAPSHOTS, ".json");
    pruneDir(this.screenshotsDir, KEEP_SCREENSHOTS, ".png");
    if (this.memory.size > KEEP_SNAPSHOTS) {
      const first = this.memory.keys().next().value;
      if (first) this.memory.delete(first);
    }
  }
}

function pruneDir(dir: string, keep: number, ext: string): void {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(ext));
  } catch {
    return;
  }
  if (names.length <= keep) return;
  const withTimes = names
    .map((n) => {
      try {
        return { n, t: statSync(join(dir, n)).mtimeMs };
      } catch {
        return { n, t: 0 };
      }
    })
    .sort((a, b) => b.t - a.t);
  for (const { n } of withTimes.slice(keep)) rmSync(join(dir, n), { force: true });
}
