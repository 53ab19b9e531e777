// Shared by the session unit tests: temporary state dirs (removed after the
// file's tests) and a minimal valid snapshot.
import { afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newSnapshotId, type Snapshot } from "../../../src/session/snapshot.ts";

/** A fresh temporary directory factory; every directory it made is removed after the file's tests. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}

/** A minimal snapshot of window 1 of app /usr/bin/a, valid for a minute. */
export function snap(targetKey = "exe:/usr/bin/a"): Snapshot {
  const now = Date.now();
  return {
    snapshotId: newSnapshotId(),
    targetKey,
    windowKey: `${targetKey}#1`,
    app: { pid: 1, startTime: 5, name: "a", executable: "/usr/bin/a", desktopId: null },
    window: { windowId: 1, title: "w", bounds: { x: 0, y: 0, width: 1, height: 1 } },
    capturedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    elementCount: 0,
    truncated: false,
    elements: [],
    nodes: [],
    screenshot: null,
  };
}
