// Building a snapshot from a helper's node list: sparse element indices,
// locators, tree text; secure values never kept; URLs lose query and fragment.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildTree, newSnapshotId, stripUrlQuery, targetKeyOf } from "../../../src/session/snapshot.ts";
import { ARGS } from "../../../src/protocol/commands.ts";
import type { WireNode } from "../../../src/wire/messages.ts";

function node(path: number[], role: string, name: string, extra: Partial<WireNode> = {}): WireNode {
  return { path, role, name, description: "", value: null, states: ["enabled", "showing"], bounds: { x: 0, y: 0, width: 10, height: 10 }, actions: [], identifier: "", secure: false, child_count: 0, ...extra };
}

const FIXTURE: WireNode[] = [
  node([], "frame", "win", { child_count: 4 }),
  node([0], "push button", "OK", { actions: ["click"], identifier: "ok" }),
  node([1], "password text", "Password", { secure: true, value: "hunter2" }),
  node([2], "panel", "", { child_count: 1 }),
  node([2, 0], "check box", "Subscribe", { actions: ["click"], states: ["enabled", "checked"] }),
  node([3], "text", "Homepage", { value: "https://example.com/a?token=SECRETQUERY#frag" }),
  node([4], "label", "", {}),
];

describe("buildTree", () => {
  const built = buildTree(FIXTURE, "scripted-path");

  it("indices are pre-order positions; structural and empty nodes get none", () => {
    expect(built.elements.map((e) => e.index)).toEqual([0, 1, 2, 4, 5]);
    expect(built.treeText.split("\n")).toEqual([
      '[0] frame "win"',
      '  [1] push button "OK"',
      '  [2] password text "Password" (secure)',
      "  panel",
      '    [4] check box "Subscribe" (checked)',
      '  [5] text "Homepage" value="https://example.com/a"',
      "  label",
    ]);
  });

  it("a secure value is never kept, even when a helper sends one", () => {
    const pw = built.elements.find((e) => e.secure)!;
    expect(pw.value).toBeNull();
    expect(JSON.stringify(built)).not.toContain("hunter2");
  });

  it("a URL value loses query and fragment everywhere", () => {
    expect(built.elements.find((e) => e.title === "Homepage")!.value).toBe("https://example.com/a");
    expect(JSON.stringify(built)).not.toContain("SECRETQUERY");
  });

  it("every element has a locator from the window root", () => {
    expect(built.elements.find((e) => e.index === 4)!.locator).toEqual({ kind: "scripted-path", path: [2, 0], role: "check box", identifier: "", name: "Subscribe" });
  });

  it("tree text is capped and marked truncated; elements stay complete", () => {
    const many = Array.from({ length: 50 }, (_, i) => node([i], "push button", `b${i}`, { actions: ["click"] }));
    const t = buildTree(many, "atspi-path", { maxLines: 10, maxChars: 10_000, maxValueChars: 20 });
    expect(t.truncated).toBe(true);
    expect(t.treeText.split("\n")).toHaveLength(10);
    expect(t.elements).toHaveLength(50);
    const long = buildTree([node([], "text", "x".repeat(500), { actions: ["a"] })], "atspi-path", { maxLines: 10, maxChars: 10_000, maxValueChars: 20 });
    expect(long.treeText.length).toBeLessThan(40);
  });

  it("property: no secure value and no URL query ever appears in the output", () => {
    const secret = "ZZSECRETZZ";
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            secure: fc.boolean(),
            value: fc.option(fc.oneof(fc.constant(`${secret}`), fc.webUrl({ withQueryParameters: true, withFragments: true }).map((u) => `${u}?q=${secret}`))),
            actions: fc.array(fc.constantFrom("click", "activate"), { maxLength: 2 }),
          }),
          { maxLength: 20 },
        ),
        (specs) => {
          const nodes = specs.map((s, i) => node([i], s.secure ? "password text" : "text", `n${i}`, { secure: s.secure, value: s.secure ? s.value ?? secret : s.value?.includes("://") ? s.value : null, actions: s.actions }));
          expect(JSON.stringify(buildTree(nodes, "atspi-path"))).not.toContain(secret);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("stripUrlQuery", () => {
  it.each([
    ["https://example.com/a?token=x#f", "https://example.com/a"],
    ["HTTP://EXAMPLE.com/?q", "HTTP://EXAMPLE.com/"],
    ["file:///home/u/doc.txt#x", "file:///home/u/doc.txt"],
    ["not a url ?x", "not a url ?x"],
    ["", ""],
  ])("%s -> %s", (input, out) => {
    expect(stripUrlQuery(input)).toBe(out);
  });
});

describe("ids and keys", () => {
  it("snapshot ids are unique and accepted by the public schema", () => {
    const ids = new Set(Array.from({ length: 500 }, newSnapshotId));
    expect(ids.size).toBe(500);
    for (const id of ids) expect(ARGS.click.shape.snapshotId.safeParse(id).success).toBe(true);
  });

  it("the target key prefers the executable, else the pid", () => {
    expect(targetKeyOf({ pid: 1, startTime: null, name: "a", executable: "/usr/bin/a", desktopId: null })).toBe("exe:/usr/bin/a");
    expect(targetKeyOf({ pid: 7, startTime: null, name: "a", executable: null, desktopId: null })).toBe("pid:7");
  });
});
