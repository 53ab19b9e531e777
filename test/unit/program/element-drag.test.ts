// Element drag (src/program/element-drag.ts): the motion a drag sends, and
// the rule that verifies a drop from the target's tree (changed: verified;
// the same: verified false; unreadable: null), against a scripted tree.
import { describe, expect, it } from "vitest";
import { dragMotion, verifyDrop, type DropCheck } from "../../../src/program/element-drag.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import type { WireNode } from "../../../src/wire/messages.ts";

function node(path: number[], name: string, extra: Partial<WireNode> = {}): WireNode {
  return { path, role: "label", native_role: "label", name, description: "", value: null, states: ["enabled"], bounds: { x: 0, y: 0, width: 10, height: 10 }, actions: [], identifier: "", secure: false, child_count: 0, ...extra };
}

/** An engine whose helper answers get_tree from `trees` in turn (the last one repeats), or throws `fail`. */
function engineOf(trees: WireNode[][], fail?: DeckhandError) {
  let i = 0;
  const supervisor = {
    async request(op: string) {
      if (op !== "get_tree") throw new Error(`unexpected ${op}`);
      if (fail) throw fail;
      const nodes = trees[Math.min(i++, trees.length - 1)]!;
      return { result: { nodes, truncated: false, source: "walk" } };
    },
  };
  return { engine: { helper: async () => ({ supervisor, hello: {} }) as never, cancelSignal: undefined }, reads: () => i };
}

const before = [node([], "window", { role: "window", native_role: "frame" }), node([0], "Drop here", { child_count: 1 }), node([0, 0], "hint")];
const drop = (): DropCheck => ({
  pid: 1,
  windowId: 2,
  from: { index: 3, role: "button", title: "Apple", point: { x: 5, y: 5 } },
  to: { index: 1, role: "label", title: "Drop here", point: { x: 50, y: 50 } },
  targetPath: [0],
  targetNativeRole: "label",
  before: { name: "Drop here", value: null, description: "", subtree: '"0" "label" "hint" null ""' },
});

describe("dragMotion", () => {
  it("press at A, past the threshold in small steps, over B a few times, release at B; pauses between", () => {
    const steps = dragMotion({ x: 100, y: 100 }, { x: 400, y: 100 }, "left");
    expect(steps[0]).toEqual({ kind: "move", x: 100, y: 100 });
    const down = steps.findIndex((s) => s.kind === "button" && s.down);
    const up = steps.findIndex((s) => s.kind === "button" && !s.down);
    expect(down).toBeGreaterThan(0);
    const moves = steps.slice(down, up).filter((s) => s.kind === "move") as { x: number; y: number }[];
    // The first moves stay within a few pixels (past GTK's 8 px threshold by 16 px).
    expect(moves.slice(0, 4).map((m) => m.x - 100)).toEqual([3, 6, 10, 16]);
    // Several moves over the target, the last one at its centre.
    expect(moves.filter((m) => Math.abs(m.x - 400) <= 2 && Math.abs(m.y - 100) <= 2).length).toBeGreaterThanOrEqual(5);
    expect(moves.at(-1)).toEqual({ kind: "move", x: 400, y: 100 });
    expect(steps[up]).toEqual({ kind: "button", button: "left", down: false });
    // Every move is followed by a pause.
    steps.forEach((s, i) => {
      if (s.kind === "move" || s.kind === "button") expect(steps[i + 1]?.kind).toBe("wait");
    });
    expect(steps.filter((s) => s.kind === "button")).toHaveLength(2);
    // After the release: a 1 px stir and back, so the app under the pointer sees it there (Qt 5 on Wayland).
    const after = steps.slice(up + 1).filter((s) => s.kind === "move");
    expect(after).toEqual([
      { kind: "move", x: 401, y: 100 },
      { kind: "move", x: 400, y: 100 },
    ]);
  });
});

describe("verifyDrop: the drop read back from the target's tree", () => {
  it("its name changed: verified true, name", async () => {
    const { engine } = engineOf([[before[0]!, node([0], "Dropped: Apple", { child_count: 1 }), before[2]!]]);
    const r = await verifyDrop(engine, drop());
    expect(r.verification.verified).toBe(true);
    expect(r.drag.targetChanged).toEqual(["name"]);
    expect(r.drag.from.title).toBe("Apple");
  });

  it("something under it changed (after a first read that did not yet show it): children", async () => {
    const { engine, reads } = engineOf([before, [before[0]!, before[1]!, node([0, 0], "Apple")]]);
    const r = await verifyDrop(engine, drop());
    expect(r.drag.targetChanged).toEqual(["children"]);
    expect(reads()).toBe(2);
  });

  it("the same for the whole watch: verified false, nothing changed, the detail says so", async () => {
    const { engine, reads } = engineOf([before]);
    const t0 = Date.now();
    const r = await verifyDrop(engine, drop());
    expect(r.verification).toEqual({ verified: false, predicate: expect.stringContaining("drop target") });
    expect(r.drag.targetChanged).toEqual([]);
    expect(r.drag.detail).toMatch(/did not change/);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(reads()).toBeGreaterThan(5);
  });

  it("gone from its place only when a second read agrees: removed", async () => {
    const gone = [before[0]!];
    const flicker = engineOf([gone, before]);
    expect((await verifyDrop(flicker.engine, drop())).drag.targetChanged).not.toContain("removed");
    const { engine } = engineOf([gone]);
    const r = await verifyDrop(engine, drop());
    expect(r.verification.verified).toBe(true);
    expect(r.drag.targetChanged).toEqual(["removed"]);
  });

  it("unreadable: verified null, never a failure of the delivered drag", async () => {
    const { engine } = engineOf([], new DeckhandError("APP_EXITED", "gone"));
    const r = await verifyDrop(engine, drop());
    expect(r.verification).toEqual({ verified: null, predicate: null });
    expect(r.drag.detail).toMatch(/APP_EXITED/);
  });
});
