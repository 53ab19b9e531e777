// What an agent reads of a snapshot (issue 14): the compact view keeps every
// interactive element, headings, the texts beside controls and the landmarks
// around them; pages are cut at node positions within a budget; a diff keeps
// the indices of what persists.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildTree, type Snapshot } from "../../../src/session/snapshot.ts";
import { renderPage, positionOf, type ViewOptions } from "../../../src/session/view.ts";
import { diffBlocker, diffSnapshots, reuseFrom } from "../../../src/session/diff.ts";
import type { WireNode } from "../../../src/wire/messages.ts";
import { acts, node } from "../nodes.ts";

const at = (x: number, y: number) => ({ bounds: { x, y, width: 50, height: 20 } });
const TREE: WireNode[] = [
  node([], "window", "Editor", { child_count: 4 }),
  node([0], "container", "", { child_count: 3 }),
  node([0, 0], "label", "Name:", {}),
  node([0, 1], "text_field", "", { states: ["enabled", "editable", "focusable"], ...at(60, 10) }),
  node([0, 2], "container", "", { child_count: 0 }),
  node([1], "toolbar", "", { child_count: 2 }),
  node([1, 0], "button", "Bold", { actions: acts("press"), states: ["enabled"], ...at(0, 40) }),
  node([1, 1], "toggle_button", "Italic", { actions: acts("press"), states: ["enabled", "checked"], ...at(50, 40) }),
  node([2], "container", "", { child_count: 2 }),
  node([2, 0], "label", "A paragraph far from any control", {}),
  node([2, 1], "heading", "Chapter 1", {}),
  node([3], "list", "", { child_count: 2 }),
  node([3, 0], "list_item", "", {}),
  node([3, 1], "list_item", "Second", { actions: acts("select"), states: ["enabled"], ...at(0, 90) }),
];

const full = (o: Partial<ViewOptions> = {}): ViewOptions => ({ format: "full", maxNodes: null, maxBytes: null, offset: 0, withBounds: false, ...o });
const compact = (o: Partial<ViewOptions> = {}): ViewOptions => ({ ...full(o), format: "compact", ...o });

function snapshotOf(nodes: WireNode[], reuse?: ReturnType<typeof reuseFrom>): Snapshot {
  const b = buildTree(nodes, "scripted-path", undefined, reuse);
  const now = Date.now();
  return {
    snapshotId: "cs_TESTTESTTESTTESTTEST",
    targetKey: "exe:/usr/bin/a",
    windowKey: "exe:/usr/bin/a#1",
    app: { pid: 1, startTime: 5, name: "a", executable: "/usr/bin/a", desktopId: null },
    window: { windowId: 1, title: "Editor", bounds: { x: 0, y: 0, width: 800, height: 600 } },
    capturedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    elementCount: b.elements.length,
    truncated: false,
    elements: b.elements,
    nodes: b.nodes,
    screenshot: null,
  };
}

describe("the compact view", () => {
  const s = snapshotOf(TREE);
  const text = renderPage(s, compact()).treeText;

  it("keeps every interactive element, the label beside a control, headings and framing landmarks", () => {
    expect(text).toBe(
      [
        '[0] window "Editor"',
        '  [2] label "Name:"',
        "  [3] text_field",
        "  toolbar",
        '    [6] button "Bold"',
        '    [7] toggle_button "Italic" (checked)',
        '  [10] heading "Chapter 1"',
        // An unnamed list is no landmark: its item sits under the window.
        '  [13] list_item "Second"',
      ].join("\n"),
    );
  });

  it("leaves out unnamed fillers, texts far from any control and empty rows; full keeps them", () => {
    expect(text).not.toContain("A paragraph far");
    expect(text).not.toContain("container");
    const all = renderPage(s, full()).treeText;
    expect(all).toContain("A paragraph far");
    expect(all.split("\n")).toHaveLength(TREE.length);
  });

  it("every element with an action, or that takes focus or text, is in the compact view (property)", () => {
    const roles = ["button", "label", "container", "text_field", "list_item", "heading", "group", "toolbar"] as const;
    const arbNode = fc.record({ role: fc.constantFrom(...roles), name: fc.constantFrom("", "x", "Save"), action: fc.boolean(), editable: fc.boolean(), depth: fc.integer({ min: 1, max: 4 }) });
    fc.assert(
      fc.property(fc.array(arbNode, { maxLength: 40 }), (spec) => {
        // Build a valid pre-order tree: each node's depth is at most one more than the previous one's.
        const nodes: WireNode[] = [node([], "window", "w", {})];
        const path: number[] = [];
        const counts: number[] = [0];
        for (const n of spec) {
          const d = Math.min(n.depth, path.length + 1);
          path.length = d - 1;
          counts.length = d;
          const i = counts[d - 1]!;
          counts[d - 1] = i + 1;
          counts[d] = 0;
          const p = [...path, i];
          path.push(i);
          nodes.push(node(p, n.role, n.name, { actions: n.action ? acts("press") : [], states: n.editable ? ["enabled", "editable"] : ["enabled"] }));
        }
        const snap = snapshotOf(nodes);
        const shown = new Set([...renderPage(snap, compact()).treeText.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
        for (const [i, n] of nodes.entries()) {
          if (n.actions.length > 0 || n.states.includes("editable")) expect(shown.has(i)).toBe(true);
        }
      }),
    );
  });

  it("--with-bounds: lines carry screen bounds and neutral actions", () => {
    const t = renderPage(s, compact({ withBounds: true })).treeText;
    expect(t).toContain('[6] button "Bold" @0,40 50x20 [press]');
    expect(t).toContain("[3] text_field @60,10 50x20");
  });
});

describe("pages", () => {
  const s = snapshotOf(TREE);

  it("a node budget cuts at a node position; the next page starts there; pages add up to the whole view", () => {
    const p1 = renderPage(s, compact({ maxNodes: 3 }));
    expect(p1.treeText.split("\n")).toHaveLength(3);
    expect(p1.truncated).toBe(true);
    expect(p1.nextOffset).toBe(5); // the toolbar's position
    const p2 = renderPage(s, compact({ maxNodes: 3, offset: p1.nextOffset! }));
    const p3 = renderPage(s, compact({ maxNodes: 3, offset: p2.nextOffset! }));
    expect(p3.nextOffset).toBeUndefined();
    expect(p3.truncated).toBe(false);
    expect([p1, p2, p3].map((p) => p.treeText).join("\n").replace(/^ +/gm, "")).toBe(renderPage(s, compact()).treeText.replace(/^ +/gm, ""));
  });

  it("a byte budget: never over it (but one line always), nextOffset set", () => {
    for (const maxBytes of [10, 60, 120, 400]) {
      const p = renderPage(s, full({ maxBytes }));
      const bytes = p.treeText.split("\n").reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) + (p.elements ?? []).reduce((n, e) => n + Buffer.byteLength(JSON.stringify(e)) + 1, 0);
      if (p.treeText.split("\n").length > 1) expect(bytes).toBeLessThanOrEqual(maxBytes);
      expect(p.treeText.length).toBeGreaterThan(0);
      if (p.nextOffset !== undefined) expect(p.truncated).toBe(true);
    }
  });

  it("full pages carry their elements only; a snapshot cut by the helper is truncated with no next page", () => {
    const p = renderPage(s, full({ maxNodes: 4 }));
    expect(p.elements!.map((e) => e.index)).toEqual([0, 2, 3]);
    const cut = renderPage({ ...s, truncated: true }, full());
    expect(cut.truncated).toBe(true);
    expect(cut.nextOffset).toBeUndefined();
  });

  it("positionOf finds an element's node", () => {
    expect(positionOf(s, 13)).toBe(13);
    expect(positionOf(s, 99)).toBe(-1);
  });
});

describe("diffs", () => {
  const base = snapshotOf(TREE);

  it("an inserted node keeps the indices of what persists; the new element is numbered past the base; changes are named", () => {
    // A new button at the toolbar's front shifts its siblings' paths: Bold and Italic are new identities there.
    const next: WireNode[] = TREE.map((n) => (n.name === "Chapter 1" ? { ...n, name: "Chapter One" } : n.path.join(".") === "0.1" ? { ...n, value: "Ada" } : n));
    next.push(node([4], "button", "Save", { actions: acts("press"), states: ["enabled"] }));
    const reuse = reuseFrom(base);
    reuse.nextFree = Math.max(reuse.nextFree, next.length);
    const s = snapshotOf(next, reuse);
    const d = diffSnapshots(base, s, { full: false, withBounds: false });
    expect(d.applied).toBe(true);
    // Past every index of the base and every position of the new tree.
    expect(d.added.map((e) => e.line)).toEqual([`[${next.length}] button "Save"`]);
    expect(d.changed.map((e) => [e.index, e.changed])).toEqual([
      [3, ["value"]],
      [10, ["title"]],
    ]);
    expect(d.removed).toEqual([]);
    // Every persisting element kept its index.
    for (const e of base.elements) expect(s.elements.find((x) => x.locator.path.join() === e.locator.path.join())?.index).toBe(e.index);
  });

  it("a removed element is listed as last seen; too many changes make a full snapshot", () => {
    const fewer = TREE.filter((n) => n.name !== "Second");
    const s = snapshotOf(fewer, reuseFrom(base));
    const d = diffSnapshots(base, s, { full: true, withBounds: false });
    expect(d.removed.map((e) => e.line)).toEqual(['[13] list_item "Second"']);
    const other = snapshotOf([node([], "window", "Other", {}), node([0], "button", "A", { actions: acts("press") }), node([1], "button", "B", { actions: acts("press") })], reuseFrom(base));
    expect(diffSnapshots(base, other, { full: false, withBounds: false })).toMatchObject({ applied: false, reason: "too_many_changes" });
  });

  it("why no diff: unknown, expired, other app, restarted, other window", () => {
    const t = { targetKey: base.targetKey, pid: 1, startTime: 5, windowId: 1 };
    expect(diffBlocker(null, t)).toBe("snapshot_unknown");
    expect(diffBlocker(base, t, Date.parse(base.expiresAt) + 1)).toBe("snapshot_expired");
    expect(diffBlocker(base, { ...t, targetKey: "exe:/usr/bin/b" })).toBe("other_app");
    expect(diffBlocker(base, { ...t, startTime: 6 })).toBe("app_restarted");
    expect(diffBlocker(base, { ...t, windowId: 2 })).toBe("window_changed");
    expect(diffBlocker(base, t)).toBeNull();
  });
});

describe("the horizon (lookupElement)", () => {
  it("past a truncated page: ELEMENT_BEYOND_HORIZON reason page with the next offset; past a tree read cut short: reason tree-truncated; else ELEMENT_INDEX_NOT_FOUND", async () => {
    const { lookupElement } = await import("../../../src/program/snapshot-check.ts");
    const s = snapshotOf(TREE);
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as { code: string; details: Record<string, unknown> };
      }
      throw new Error("not refused");
    };
    expect(lookupElement({ ...s, horizon: 7 }, 7).index).toBe(7);
    expect(refused(() => lookupElement({ ...s, horizon: 7 }, 13))).toMatchObject({ code: "ELEMENT_BEYOND_HORIZON", details: { reason: "page", nextOffset: 8 } });
    expect(refused(() => lookupElement({ ...s, truncated: true }, 40))).toMatchObject({ code: "ELEMENT_BEYOND_HORIZON", details: { reason: "tree-truncated", nodesRead: TREE.length } });
    expect(refused(() => lookupElement({ ...s, truncated: true }, 5))).toMatchObject({ code: "ELEMENT_INDEX_NOT_FOUND" });
    expect(refused(() => lookupElement(s, 40))).toMatchObject({ code: "ELEMENT_INDEX_NOT_FOUND" });
  });
});
