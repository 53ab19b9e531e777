// get-app-state --since: what changed between a base snapshot and a new one
// of the same window. Elements are matched by locator identity (path, role,
// the platform's role, identifier); a matched element keeps the base's index
// in the new snapshot, so an agent's indices stay good for what persists.
import type { Element, IndexReuse, Snapshot, StoredNode } from "./snapshot.ts";
import type { WireNode } from "../wire/messages.ts";
import { lineOf } from "./view.ts";

export type DiffReason = "snapshot_unknown" | "snapshot_expired" | "other_app" | "app_restarted" | "window_changed" | "too_many_changes";

export interface DiffEntry {
  index: number;
  line: string;
  changed?: string[];
  element?: Element;
}

export interface SnapshotDiff {
  since: string;
  applied: boolean;
  reason?: DiffReason;
  added: DiffEntry[];
  removed: DiffEntry[];
  changed: DiffEntry[];
  unchanged: number;
}

/** What identifies an element across two trees of one window. Name and value are not part of it: they are what changes. */
export function identityOf(l: { path: readonly number[]; role: string; nativeRole?: string; native_role?: string; identifier: string }): string {
  return `${l.path.join(".")}|${l.role}|${l.nativeRole ?? l.native_role ?? ""}|${l.identifier}`;
}

/** Index reuse for the new tree: the base's elements by identity. */
export function reuseFrom(base: Snapshot): IndexReuse {
  const byIdentity = new Map<string, number>();
  let max = -1;
  for (const e of base.elements) {
    byIdentity.set(identityOf(e.locator), e.index);
    if (e.index > max) max = e.index;
  }
  // New elements are numbered past every index the base used, and past every position of the new tree's nodes (set later): no index is given twice.
  return { indexOf: (n: WireNode) => byIdentity.get(identityOf({ path: n.path, role: n.role, native_role: n.native_role, identifier: n.identifier })), nextFree: Math.max(max + 1, base.nodes.length) };
}

/**
 * Why no diff against `base` is possible for an observation of `target`
 * (its app and window), or null when one is.
 */
export function diffBlocker(base: Snapshot | null, target: { targetKey: string; pid: number; startTime: number | null; windowId: number }, now = Date.now()): DiffReason | null {
  if (!base) return "snapshot_unknown";
  if (now >= Date.parse(base.expiresAt)) return "snapshot_expired";
  if (base.targetKey !== target.targetKey) return "other_app";
  if (base.app.pid !== target.pid || (base.app.startTime !== null && target.startTime !== null && base.app.startTime !== target.startTime)) return "app_restarted";
  if (base.window.windowId !== target.windowId) return "window_changed";
  return null;
}

/** The facts of an element that a diff reports as changed. */
function changedFacts(a: Element, b: Element, na: StoredNode | undefined, nb: StoredNode | undefined): string[] {
  const out: string[] = [];
  if (a.title !== b.title) out.push("title");
  if (a.value !== b.value) out.push("value");
  if (a.label !== b.label) out.push("label");
  if (a.enabled !== b.enabled) out.push("enabled");
  if (a.focused !== b.focused) out.push("focused");
  if (a.secure !== b.secure) out.push("secure");
  if (JSON.stringify(a.bounds) !== JSON.stringify(b.bounds)) out.push("bounds");
  if (a.actions.join() !== b.actions.join()) out.push("actions");
  // States shown in the line (checked, selected, expanded) and anything else the line says.
  if (out.length === 0 && na && nb && na.t !== nb.t) out.push("states");
  return out;
}

/**
 * The diff of `next` against `base` (same window, indices reused). Past
 * half of the new snapshot's elements changed, a diff says less than the
 * snapshot itself: not applied, reason too_many_changes.
 */
export function diffSnapshots(base: Snapshot, next: Snapshot, opts: { full: boolean; withBounds: boolean }): SnapshotDiff {
  const nodeOf = (s: Snapshot) => new Map(s.nodes.filter((n) => n.e !== undefined).map((n) => [n.e!, n]));
  const baseNodes = nodeOf(base);
  const nextNodes = nodeOf(next);
  const baseEls = new Map(base.elements.map((e) => [e.index, e]));
  const nextEls = new Map(next.elements.map((e) => [e.index, e]));
  const line = (n: StoredNode | undefined, el: Element) => (n ? lineOf(n, 0, el, opts.withBounds) : `[${el.index}] ${el.role}`);
  const added: DiffEntry[] = [];
  const changed: DiffEntry[] = [];
  const removed: DiffEntry[] = [];
  let unchanged = 0;
  for (const el of next.elements) {
    const before = baseEls.get(el.index);
    const n = nextNodes.get(el.index);
    // Same index, other identity cannot happen for a reused index; a new element's index is past the base's.
    if (!before || identityOf(before.locator) !== identityOf(el.locator)) {
      added.push({ index: el.index, line: line(n, el), ...(opts.full ? { element: el } : {}) });
      continue;
    }
    const facts = changedFacts(before, el, baseNodes.get(el.index), n);
    if (facts.length) changed.push({ index: el.index, line: line(n, el), changed: facts, ...(opts.full ? { element: el } : {}) });
    else unchanged++;
  }
  for (const el of base.elements) {
    const now = nextEls.get(el.index);
    if (!now || identityOf(now.locator) !== identityOf(el.locator)) removed.push({ index: el.index, line: line(baseNodes.get(el.index), el) });
  }
  const total = added.length + changed.length + removed.length;
  if (next.elements.length > 0 && total > next.elements.length / 2) {
    return { since: base.snapshotId, applied: false, reason: "too_many_changes", added: [], removed: [], changed: [], unchanged };
  }
  return { since: base.snapshotId, applied: true, added, removed, changed, unchanged };
}
