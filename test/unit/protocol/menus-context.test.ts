// Context menus as Chromium exposes them (issue 13): its popup's menu_tree
// answer (wrappers reported as groups by the helper) folds into one list of
// items; names carrying shortcut text ("Select all Ctrl+A") are matched by
// the name alone; an item whose default action is "select" is activated by
// that action, one with neither a press nor that is refused.
import { describe, expect, it } from "vitest";
import { matchMenuName, withoutShortcutText } from "../../../src/protocol/menus.ts";
import { __test } from "../../../src/commands/menus.ts";
import type { OpResult, WireNode } from "../../../src/wire/messages.ts";

const { buildEntries, resolveMenuPath, toOut, activationOf } = __test;
type Item = OpResult<"menu_tree">["items"][number];

function node(path: number[], name: string, role: WireNode["role"], actions: WireNode["actions"], states: WireNode["states"] = ["enabled", "visible"]): WireNode {
  return { path, role, native_role: "", name, description: "", value: null, states, bounds: null, actions, identifier: "", secure: false, child_count: 0 };
}
const item = (n: WireNode, depth: number, kind: Item["kind"] = "item"): Item => ({ node: n, depth, shortcut: null, kind, checkable: false, showing: true });
const SELECT = [{ name: "select", native: "select" }, { name: "show_menu", native: "showContextMenu" }] as WireNode["actions"];
const DEFAULT = [{ name: "press", native: "doDefault" }, { name: "show_menu", native: "showContextMenu" }] as WireNode["actions"];

describe("Chromium's context menu", () => {
  // frame > menu bar (root) > panel > panel > unnamed menu > items
  const tree: OpResult<"menu_tree"> = {
    roots: [node([0], "", "menu_bar", DEFAULT)],
    items: [
      item(node([0, 0], "", "container", DEFAULT), 0, "group"),
      item(node([0, 0, 1], "", "container", DEFAULT), 1, "group"),
      item(node([0, 0, 1, 0], "", "menu", DEFAULT), 2, "group"),
      item(node([0, 0, 1, 0, 0], "Cut Ctrl+X", "menu_item", DEFAULT, ["visible"]), 3),
      item(node([0, 0, 1, 0, 1], "Select all Ctrl+A", "menu_item", SELECT), 3),
      item(node([0, 0, 1, 0, 2], "Copy link address", "menu_item", SELECT), 3),
    ],
    truncated: false,
    calls: 30,
  };

  it("the wrappers fold away: the items are the top level", () => {
    const top = buildEntries(tree);
    expect(top.map(toOut).map((e) => [e.name, e.path, e.enabled])).toEqual([
      ["Cut Ctrl+X", "Cut Ctrl+X", false],
      ["Select all Ctrl+A", "Select all Ctrl+A", true],
      ["Copy link address", "Copy link address", true],
    ]);
    expect(resolveMenuPath(top, ["Select all"]).map((e) => e.item.node.name)).toEqual(["Select all Ctrl+A"]);
    expect(() => resolveMenuPath(top, ["Cut"])).toThrow(expect.objectContaining({ code: "MENU_ITEM_DISABLED" }));
  });

  it("shortcut text is matched away only at the end, after every other rule", () => {
    expect(withoutShortcutText("Select all Ctrl+A")).toBe("Select all");
    expect(withoutShortcutText("Paste as plain text Ctrl+Shift+V")).toBe("Paste as plain text");
    expect(withoutShortcutText("Open in reading mode Alt+Shift+R")).toBe("Open in reading mode");
    expect(withoutShortcutText("Copy link address")).toBe("Copy link address");
    expect(withoutShortcutText("Zoom +")).toBe("Zoom +");
    const names = ["Paste Ctrl+V", "Paste as plain text Ctrl+Shift+V", "Paste"];
    // The exact name wins over one with shortcut text before it.
    expect(matchMenuName("Paste", names)).toBe(2);
    expect(matchMenuName("paste as plain text", names)).toBe(1);
    expect(matchMenuName("Paste Ctrl+V", names)).toBe(0);
    expect(matchMenuName("Paste as", names)).toBe(-1);
    expect(matchMenuName("Paste", ["Paste Ctrl+V"])).toBe(0);
  });

  it("activated by its press, else a menu item's default \"select\", else nothing", () => {
    expect(activationOf(node([0], "Save", "menu_item", [{ name: "press", native: "click" }]))).toEqual({ action: "click", native: null });
    expect(activationOf(node([0], "Select all", "menu_item", SELECT))).toEqual({ action: "secondary", native: "select" });
    // "select" that is not the default action, or not on a menu item: not an activation.
    expect(activationOf(node([0], "x", "menu_item", [SELECT[1]!, SELECT[0]!]))).toBeNull();
    expect(activationOf(node([0], "Row", "list_item", SELECT))).toBeNull();
    expect(activationOf(node([0], "Spell check", "menu_item", [{ name: "other", native: "open" }]))).toBeNull();
  });
});
