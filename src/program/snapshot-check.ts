// Snapshot resolution before an element step: the snapshot must exist, be the
// app's latest, unexpired, for the same process and a live, matching window.
import { DeckhandError } from "../protocol/errors.ts";
import { targetKeyOf, type Element, type Snapshot } from "../session/snapshot.ts";
import type { SnapshotStore } from "../session/store.ts";
import { positionOf } from "../session/view.ts";
import type { WireWindow } from "../wire/messages.ts";
import type { ResolvedApp } from "../engine/resolve.ts";

function stale(reason: string, message: string, extra: Record<string, string | number | boolean> = {}): DeckhandError {
  return new DeckhandError("SNAPSHOT_STALE", message, { details: { reason, ...extra } });
}

export function resolveSnapshot(
  store: SnapshotStore,
  app: ResolvedApp,
  opts: { snapshotId?: string; windowId?: number; windowIndex?: number; windows: WireWindow[]; windowsKnown?: boolean; now?: number },
): Snapshot {
  const targetKey = targetKeyOf(app);
  const latest = store.latestId(targetKey);
  let snapshot: Snapshot | null;
  if (opts.snapshotId) {
    snapshot = store.get(opts.snapshotId);
    if (!snapshot) throw stale("not-found", `snapshot ${opts.snapshotId} does not exist`);
    if (snapshot.targetKey !== targetKey) throw stale("window-mismatch", `snapshot ${opts.snapshotId} belongs to another app`);
    if (latest && latest !== snapshot.snapshotId) throw stale("superseded", `snapshot ${opts.snapshotId} was superseded by a newer capture`);
  } else {
    if (!latest) throw new DeckhandError("SNAPSHOT_REQUIRED", `no snapshot exists for ${app.name}`, { details: { app: app.name } });
    snapshot = store.get(latest);
    if (!snapshot) throw new DeckhandError("SNAPSHOT_REQUIRED", `the latest snapshot for ${app.name} is gone`, { details: { app: app.name } });
  }
  checkCurrent(snapshot, app, opts);
  return snapshot;
}

/** Re-checked before every step of a program. */
export function checkCurrent(
  snapshot: Snapshot,
  app: ResolvedApp,
  opts: { windowId?: number; windowIndex?: number; windows: WireWindow[]; windowsKnown?: boolean; now?: number },
): void {
  const now = opts.now ?? Date.now();
  if (now >= Date.parse(snapshot.expiresAt)) throw stale("expired", "snapshot expired", { expiresAt: snapshot.expiresAt });
  if (snapshot.app.pid !== app.pid || (snapshot.app.startTime !== null && app.startTime !== null && snapshot.app.startTime !== app.startTime)) {
    throw stale("pid-changed", "the app was restarted since the snapshot", { snapshotPid: snapshot.app.pid, pid: app.pid });
  }
  if (opts.windowId !== undefined && opts.windowId !== snapshot.window.windowId) {
    throw stale("window-mismatch", "the snapshot is of another window", { snapshotWindowId: snapshot.window.windowId });
  }
  if (opts.windowIndex !== undefined && opts.windows[opts.windowIndex]?.window_id !== snapshot.window.windowId) {
    throw stale("window-mismatch", "the snapshot is of another window", { snapshotWindowId: snapshot.window.windowId });
  }
  // Without a window listing (element-only programs) the helper checks the window itself.
  if (opts.windowsKnown !== false && !opts.windows.some((w) => w.window_id === snapshot.window.windowId)) {
    throw stale("window-gone", "the snapshot's window is gone", { snapshotWindowId: snapshot.window.windowId });
  }
}

/**
 * The element of a snapshot by index. Refused ELEMENT_BEYOND_HORIZON when
 * the agent cannot have seen it: past the furthest node a truncated page
 * showed (page on), or past the cut of a tree read cut short (observe again
 * with a larger budget).
 */
export function lookupElement(snapshot: Snapshot, index: number): Element {
  const el = snapshot.elements.find((e) => e.index === index);
  if (el && snapshot.horizon !== undefined) {
    const pos = positionOf(snapshot, index);
    if (pos > snapshot.horizon) {
      throw new DeckhandError("ELEMENT_BEYOND_HORIZON", `element ${index} of snapshot ${snapshot.snapshotId} lies beyond the page shown (nodes up to ${snapshot.horizon}); page on or observe again`, {
        details: { elementIndex: index, snapshotId: snapshot.snapshotId, reason: "page", nextOffset: snapshot.horizon + 1 },
      });
    }
  }
  if (!el) {
    const maxIndex = snapshot.elements.reduce((m, e) => Math.max(m, e.index), -1);
    if (snapshot.truncated && index > maxIndex) {
      throw new DeckhandError("ELEMENT_BEYOND_HORIZON", `snapshot ${snapshot.snapshotId} was cut at ${snapshot.nodes.length} nodes and has no element ${index}; observe again with a larger --max-nodes`, {
        details: { elementIndex: index, snapshotId: snapshot.snapshotId, reason: "tree-truncated", nodesRead: snapshot.nodes.length },
      });
    }
    throw new DeckhandError("ELEMENT_INDEX_NOT_FOUND", `snapshot ${snapshot.snapshotId} has no element ${index}`, {
      details: { elementIndex: index, snapshotId: snapshot.snapshotId },
    });
  }
  return el;
}
