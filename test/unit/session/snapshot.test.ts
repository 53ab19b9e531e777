// Building a snapshot from a helper's node list: sparse element indices,
// locators, tree text; secure values never kept; URLs lose query and fragment.
// Only neutral words decide and show in the tree text; the native ones are
// carried beside them.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { buildTree, elementOf, isSecureNode, locatorKindOf, newSnapshotId, resolveNativeAction, stripUrlQuery, targetKeyOf } from "../../../src/session/snapshot.ts";
import { ARGS } from "../../../src/protocol/commands.ts";
import type { WireNode } from "../../../src/wire/messages.ts";
import { acts, node } from "../nodes.ts";

const FIXTURE: WireNode[] = [
  node([], "window", "win", { child_count: 4 }),
  node([0], "button", "OK", { actions: acts("click"), identifier: "ok", states: ["enabled", "focused"] }),
  node([1], "secure_text_field", "Password", { secure: true, value: "hunter2" }),
  node([2], "container", "", { child_count: 1 }),
  node([2, 0], "checkbox", "Subscribe", { actions: acts("click"), states: ["enabled", "checked"] }),
  node([3], "text_field", "Homepage", { value: "https://example.com/a?token=SECRETQUERY#frag" }),
  node([4], "label", "", {}),
];

describe("buildTree", () => {
  const built = buildTree(FIXTURE, "scripted-path");

  it("indices are pre-order positions; structural and empty nodes get none", () => {
    expect(built.elements.map((e) => e.index)).toEqual([0, 1, 2, 4, 5]);
    expect(built.treeText.split("\n")).toEqual([
      '[0] window "win"',
      '  [1] button "OK" (focused)',
      '  [2] secure_text_field "Password" (secure)',
      "  container",
      '    [4] checkbox "Subscribe" (checked)',
      '  [5] text_field "Homepage" value="https://example.com/a"',
      "  label",
    ]);
  });

  it("an element carries the neutral role and actions, the native ones beside them", () => {
    expect(built.elements.find((e) => e.index === 1)).toEqual({
      index: 1,
      role: "button",
      nativeRole: "push button",
      title: "OK",
      value: null,
      label: "",
      enabled: true,
      focused: true,
      secure: false,
      bounds: { x: 0, y: 0, width: 10, height: 10 },
      actions: ["press"],
      nativeActions: ["click"],
      locator: { kind: "scripted-path", path: [0], role: "button", nativeRole: "push button", identifier: "ok", name: "OK" },
    });
  });

  it("a container (the structural role) is an element only with a value, an action or focus, never by its name alone", () => {
    const t = buildTree(
      [node([], "container", "Toolbar area"), node([0], "container", ""), node([1], "container", "", { actions: acts("click") }), node([2], "group", "Options")],
      "scripted-path",
    );
    expect(t.elements.map((e) => e.index)).toEqual([2, 3]);
  });

  it("enabled is the neutral enabled state: without it an element is disabled", () => {
    const t = buildTree([node([], "button", "Go", { actions: acts("click"), states: ["visible", "focusable"] })], "scripted-path");
    expect(t.elements[0]!.enabled).toBe(false);
    expect(t.treeText).toBe('[0] button "Go" (disabled)');
  });

  it("neutral actions are de-duplicated in the platform's order; natives keep one entry per advertised action", () => {
    const n = node([], "button", "Tools", { actions: acts("click", "activate", "purge", "toggle") });
    const t = buildTree([n], "scripted-path");
    expect(t.elements[0]).toMatchObject({ actions: ["press", "other", "toggle"], nativeActions: ["click", "activate", "purge", "toggle"] });
    // The pairing is kept aside (not in the element) where de-duplication broke the correspondence.
    expect(t.actionPairs).toEqual({ "0": n.actions });
    expect(buildTree(FIXTURE, "scripted-path").actionPairs).toEqual({});
  });

  it("secure: the helper's flag, or the neutral secure role or state", () => {
    expect(isSecureNode(node([], "secure_text_field", "PIN"))).toBe(true);
    expect(isSecureNode(node([], "text_field", "PIN", { states: ["editable", "secure"] }))).toBe(true);
    expect(isSecureNode(node([], "text_field", "PIN", { secure: true }))).toBe(true);
    expect(isSecureNode(node([], "text_field", "Name", { native_role: "password text" }))).toBe(false);
    const t = buildTree([node([], "text_field", "PIN", { states: ["enabled", "secure"], value: "1234" })], "scripted-path");
    expect(t.elements[0]).toMatchObject({ secure: true, value: null });
    expect(JSON.stringify(t)).not.toContain("1234");
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
    expect(built.elements.find((e) => e.index === 4)!.locator).toEqual({ kind: "scripted-path", path: [2, 0], role: "checkbox", nativeRole: "check box", identifier: "", name: "Subscribe" });
  });

  it("the locator kind follows the helper's platform", () => {
    expect(locatorKindOf("linux")).toBe("atspi-path");
    expect(locatorKindOf("macos")).toBe("ax-path");
    expect(locatorKindOf("windows")).toBe("uia-path");
    expect(locatorKindOf("fake")).toBe("scripted-path");
    expect(elementOf(FIXTURE[1]!, -1, "ax-path").locator.kind).toBe("ax-path");
  });

  it("tree text is capped and marked truncated; elements stay complete", () => {
    const many = Array.from({ length: 50 }, (_, i) => node([i], "button", `b${i}`, { actions: acts("click") }));
    const t = buildTree(many, "atspi-path", { maxLines: 10, maxChars: 10_000, maxValueChars: 20 });
    expect(t.truncated).toBe(true);
    expect(t.treeText.split("\n")).toHaveLength(10);
    expect(t.elements).toHaveLength(50);
    const long = buildTree([node([], "text_field", "x".repeat(500), { actions: acts("a") })], "atspi-path", { maxLines: 10, maxChars: 10_000, maxValueChars: 20 });
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
          const nodes = specs.map((s, i) => node([i], s.secure ? "secure_text_field" : "text_field", `n${i}`, { secure: s.secure, value: s.secure ? s.value ?? secret : s.value?.includes("://") ? s.value : null, actions: acts(...s.actions) }));
          expect(JSON.stringify(buildTree(nodes, "atspi-path"))).not.toContain(secret);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("resolveNativeAction", () => {
  const el = (n: WireNode) => buildTree([n], "scripted-path");
  it("a native name is taken as named; a neutral one becomes its native", () => {
    const t = el(node([], "checkbox", "Subscribe", { actions: acts("click", "toggle-extra") }));
    const e = t.elements[0]!;
    expect(resolveNativeAction(e, "toggle-extra")).toBe("toggle-extra");
    expect(resolveNativeAction(e, "click")).toBe("click");
    expect(resolveNativeAction(e, "press")).toBe("click");
    expect(resolveNativeAction(e, "other")).toBe("toggle-extra");
    expect(resolveNativeAction(e, "toggle")).toBeNull();
    expect(resolveNativeAction(e, "explode")).toBeNull();
  });

  it("a native name in another case is the native as advertised (a localized spelling, \"Activate\")", () => {
    const e = el(node([], "text_field", "Reason", { actions: [{ name: "other", native: "activate" }] })).elements[0]!;
    expect(resolveNativeAction(e, "Activate")).toBe("activate");
    expect(resolveNativeAction(e, "ACTIVATE")).toBe("activate");
    // Two natives that differ only in case: the caller must name one exactly.
    const two = el(node([], "button", "B", { actions: [{ name: "other", native: "Run" }, { name: "other", native: "run" }] })).elements[0]!;
    expect(resolveNativeAction(two, "RUN")).toBeNull();
    expect(resolveNativeAction(two, "run")).toBe("run");
  });

  it("with duplicate neutral names it needs the snapshot's pairing, and takes the first native", () => {
    const t = el(node([], "button", "Tools", { actions: acts("purge", "click", "activate", "zap") }));
    const e = t.elements[0]!;
    const pairs = t.actionPairs["0"];
    expect(resolveNativeAction(e, "press", pairs)).toBe("click");
    // "other" names two natives: ambiguous, the caller must name one.
    expect(resolveNativeAction(e, "other", pairs)).toBeNull();
    expect(resolveNativeAction(e, "zap", pairs)).toBe("zap");
    // Without the pairing only native names resolve.
    expect(resolveNativeAction(e, "press")).toBeNull();
    expect(resolveNativeAction(e, "activate")).toBe("activate");
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
