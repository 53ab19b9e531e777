// Menu paths (issue 13): how `--path` is split and its names matched, and how
// a helper's menu_tree answer becomes the tree `menu list` shows and the
// chain `menu click` walks (src/protocol/menus.ts, src/commands/menus.ts).
import { describe, expect, it } from "vitest";
import { escapeMenuName, matchMenuName, normalizeMenuName, parseMenuPath } from "../../../src/protocol/menus.ts";
import { __test } from "../../../src/commands/menus.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import type { OpResult, WireNode } from "../../../src/wire/messages.ts";

const { buildEntries, resolveMenuPath, toOut, requireReachableBar } = __test;
type Item = OpResult<"menu_tree">["items"][number];

function node(path: number[], name: string, role: WireNode["role"], states: WireNode["states"] = ["enabled", "visible"]): WireNode {
  return { path, role, native_role: "", name, description: "", value: null, states, bounds: null, actions: [{ name: "press", native: "click" }], identifier: "", secure: false, child_count: 0 };
}
const item = (n: WireNode, depth: number, kind: Item["kind"] = "item", extra: Partial<Item> = {}): Item => ({ node: n, depth, shortcut: null, kind, checkable: false, showing: false, ...extra });

describe("menu paths", () => {
  it("split on >, \\> a literal >, names trimmed", () => {
    expect(parseMenuPath("File>Save As…")).toEqual(["File", "Save As…"]);
    expect(parseMenuPath(" View > Zoom \\> 200% ")).toEqual(["View", "Zoom > 200%"]);
    expect(parseMenuPath("A\\>B")).toEqual(["A>B"]);
    expect(escapeMenuName("Zoom > 200%")).toBe("Zoom \\> 200%");
    for (const bad of ["File>>New", "File>", ">", " > x", "a>" + "b>".repeat(20) + "c"]) expect(() => parseMenuPath(bad), bad).toThrow(DeckhandError);
  });

  it("match exact, then trimmed, then loose (mnemonics, ellipsis, case, blanks)", () => {
    expect(normalizeMenuName(" Save _As… ")).toBe("save as...");
    expect(normalizeMenuName("&Open\tRecent")).toBe("open recent");
    const names = ["New      ", "Save As...      ", "save as", "Quit"];
    expect(matchMenuName("Quit", names)).toBe(3);
    expect(matchMenuName("New", names)).toBe(0);
    expect(matchMenuName("Save As…", names)).toBe(1);
    // An exact name wins over a loose one before it.
    expect(matchMenuName("save as", names)).toBe(2);
    expect(matchMenuName("_save as...", names)).toBe(1);
    expect(matchMenuName("Nope", names)).toBe(-1);
  });
});

describe("menu trees", () => {
  // GTK-like: a "menu" node holds its items; Qt-like: an item holds a group holding the items.
  const tree: OpResult<"menu_tree"> = {
    roots: [node([0, 0], "", "menu_bar")],
    items: [
      item(node([0, 0, 0], "File", "menu"), 0, "submenu"),
      item(node([0, 0, 0, 0], "New      ", "menu_item"), 1, "item", { shortcut: "ctrl+n" }),
      item(node([0, 0, 0, 1], "Recent", "menu_item"), 1, "submenu"),
      item(node([0, 0, 0, 1, 0], "", "menu", ["enabled"]), 2, "group"),
      item(node([0, 0, 0, 1, 0, 0], "A>B", "menu_item"), 3),
      item(node([0, 0, 1], "View", "menu"), 0, "submenu"),
      item(node([0, 0, 1, 0], "Wrap", "menu_item"), 1, "item", { checkable: true }),
      item(node([0, 0, 1, 1], "Grid", "menu_item", ["enabled", "checked"]), 1),
      item(node([0, 0, 1, 2], "Print", "menu_item", ["visible"]), 1),
      item(node([0, 0, 1, 3], "Old", "menu", ["visible"]), 1, "submenu"),
      item(node([0, 0, 1, 3, 0], "Thing", "menu_item"), 2),
      // An item whose parent the bounds cut: left out, not misplaced.
      item(node([0, 0, 7, 0], "Orphan", "menu_item"), 1),
    ],
    truncated: true,
    calls: 40,
  };

  it("items under their parents, groups folded, paths escaped, states read", () => {
    const out = buildEntries(tree).map(toOut);
    expect(out.map((e) => e.name)).toEqual(["File", "View"]);
    const [file, view] = out;
    expect(file!.children.map((c) => c.path)).toEqual(["File>New", "File>Recent"]);
    expect(file!.children[0]).toMatchObject({ name: "New", shortcut: "ctrl+n", submenu: false, checked: null });
    expect(file!.children[1]!.children).toEqual([expect.objectContaining({ name: "A>B", path: "File>Recent>A\\>B" })]);
    expect(view!.children.map((c) => [c.name, c.enabled, c.checked])).toEqual([
      ["Wrap", true, false],
      ["Grid", true, true],
      ["Print", false, null],
      ["Old", false, null],
    ]);
    expect(JSON.stringify(out)).not.toContain("Orphan");
  });

  it("a path resolves level by level; missing, not a submenu, a submenu at the end, disabled: each its code", () => {
    const top = buildEntries(tree);
    expect(resolveMenuPath(top, ["File", "Recent", "A>B"]).map((e) => e.item.node.name)).toEqual(["File", "Recent", "A>B"]);
    const code = (levels: string[]) => {
      try {
        resolveMenuPath(top, levels);
        return null;
      } catch (e) {
        return [(e as DeckhandError).code, (e as DeckhandError).details];
      }
    };
    expect(code(["File", "Nope"])).toEqual(["MENU_ITEM_NOT_FOUND", expect.objectContaining({ level: 2, available: "New | Recent", availableCount: 2 })]);
    expect(code(["File", "New", "X"])).toEqual(["MENU_ITEM_NOT_FOUND", expect.objectContaining({ reason: "not-a-submenu", level: 3 })]);
    expect(code(["File", "Recent"])).toEqual(["MENU_ITEM_NOT_FOUND", expect.objectContaining({ reason: "ends-at-submenu", available: "A>B" })]);
    expect(code(["View", "Print"])).toEqual(["MENU_ITEM_DISABLED", expect.objectContaining({ level: 2, name: "Print" })]);
    expect(code(["View", "Old", "Thing"])).toEqual(["MENU_ITEM_DISABLED", expect.objectContaining({ level: 2, name: "Old" })]);
    // A missing name is reported before a disabled submenu above it would be.
    expect(code(["View", "Old", "Nothing"])![0]).toBe("MENU_ITEM_NOT_FOUND");
  });

  // GTK 4.8's PopoverMenuBar: each top item holds its caption label, advertises
  // no action, and its menu is not in the tree until the pointer opens it.
  const gtk4: OpResult<"menu_tree"> = {
    roots: [node([0, 0], "", "menu_bar")],
    items: [
      item({ ...node([0, 0, 0], "File", "menu_item"), actions: [] }, 0),
      item({ ...node([0, 0, 0, 0], "File", "label"), actions: [] }, 1),
      item({ ...node([0, 0, 1], "View", "menu_item"), actions: [] }, 0),
      item({ ...node([0, 0, 1, 0], "View", "label"), actions: [] }, 1),
    ],
    truncated: false,
    calls: 6,
  };

  it("a menu item's caption label is not an item of it", () => {
    expect(buildEntries(gtk4).map(toOut)).toEqual([expect.objectContaining({ name: "File", children: [] }), expect.objectContaining({ name: "View", children: [] })]);
  });

  it("a menu bar nothing in which can be opened or activated is MENU_NOT_EXPOSED; one reachable item is enough", () => {
    let err: DeckhandError | undefined;
    try {
      requireReachableBar(buildEntries(gtk4), "app", "Win", 7, "not_dispatched");
    } catch (e) {
      err = e as DeckhandError;
    }
    expect(err?.code).toBe("MENU_NOT_EXPOSED");
    expect(err?.details).toMatchObject({ reason: "no-open-action", windowId: 7, available: "File | View", delivery: "not_dispatched" });
    expect(() => requireReachableBar(buildEntries(tree), "app", "Win", 7)).not.toThrow();
    const oneAction = { ...gtk4, items: [item(node([0, 0, 0], "File", "menu_item"), 0), ...gtk4.items.slice(1)] };
    expect(() => requireReachableBar(buildEntries(oneAction), "app", "Win", 7)).not.toThrow();
  });
});
