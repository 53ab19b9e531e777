// Menus by path (issue 13) against the scripted helper, whose fixture window
// has a menu bar (test/fixtures/helpers/fake-helper.mjs, "issue 13: menus"):
// File (New ctrl+n, Recent > One, Quit), View (Word Wrap: a check item,
// Print Preview: disabled, Legacy: a disabled submenu > Old Thing, Delete
// All). The oracle is the helper's request log: which element_action clicks
// reached the "app", in which order; for a refusal, that none did.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, observedSandbox, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const app = ["--app", "fixture-app"];
/** The element_action requests the fake received: each one's locator name and action. */
const actions = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action").map((r) => `${r.args.action}:${(r.args.locator as { name: string }).name}`);
const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input" || r.op === "menu_close");

/** A confirm hook that appends what it read on stdin to a file, then allows (or exits 1). */
function hook(sb: Sandbox, allow: boolean): { cmd: string; asked: () => any[] } {
  const script = join(sb.dir, "hook.sh");
  if (!existsSync(script)) {
    writeFileSync(script, '#!/bin/sh\ncat >> "$1"\nexit "${2:-0}"\n');
    chmodSync(script, 0o755);
  }
  const log = join(sb.dir, allow ? "allow.jsonl" : "deny.jsonl");
  return { cmd: `${script} ${log}${allow ? "" : " 1"}`, asked: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []) };
}

describe("menu list", () => {
  it("the menu bar as a tree: nested items, enabled, checked, shortcut, submenu; nothing sent but reads", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["menu", "list", ...app]), "menu-list");
    expect(r.source).toBe("menu_bar");
    expect(r.contextMenu).toBeNull();
    expect(r.itemCount).toBe(11);
    expect(r.truncated).toBe(false);
    const [file, view] = r.items;
    expect(file).toMatchObject({ name: "File", path: "File", submenu: true, enabled: true, checked: null });
    expect(file.children.map((c: any) => c.name)).toEqual(["New", "Recent", "Quit"]);
    expect(file.children[0]).toMatchObject({ path: "File>New", shortcut: "ctrl+n", submenu: false, children: [] });
    expect(file.children[1].children[0]).toMatchObject({ name: "One", path: "File>Recent>One" });
    const byName = Object.fromEntries(view.children.map((c: any) => [c.name, c]));
    expect(byName["Word Wrap"]).toMatchObject({ checked: false, shortcut: "ctrl+shift+w", enabled: true });
    expect(byName["Print Preview"]).toMatchObject({ enabled: false, checked: null });
    expect(byName["Legacy"]).toMatchObject({ enabled: false, submenu: true });
    expect(byName["Legacy"].children[0].path).toBe("View>Legacy>Old Thing");
    expect(mutations(sb)).toEqual([]);
    expect(sb.requests().find((q) => q.op === "menu_tree")!.args).toMatchObject({ root: null, max_nodes: 1000 });
  });

  it("--max-items is the helper's max_nodes", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["menu", "list", ...app, "--max-items", "3"]), "menu-list");
    expect(r.truncated).toBe(true);
    expect(r.itemCount).toBeLessThanOrEqual(3);
  });

  it("a window without a menu bar -> MENU_NOT_EXPOSED reason no-menu-bar", async () => {
    const sb = sandbox();
    sb.control({ noMenuBar: true } as never);
    const e = expectError(await cli(sb, ["menu", "list", ...app]), "menu-list", "MENU_NOT_EXPOSED");
    expect(e.details.reason).toBe("no-menu-bar");
  });

  it("a helper without menu_tree -> ACTION_UNSUPPORTED, nothing asked", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["menu", "list", ...app], { mode: "drop-cap:menu_tree" }), "menu-list", "ACTION_UNSUPPORTED");
    expect(e.details.capability).toBe("menu_tree");
    expect(sb.ops()).not.toContain("menu_tree");
  });

  it("a policy-denied app -> POLICY_DENIED before its menus are read", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["menu", "list", "--app", "xterm"]), "menu-list", "POLICY_DENIED");
    expect(sb.ops()).not.toContain("menu_tree");
  });

  it("a context menu of an element without show_menu -> MENU_NOT_EXPOSED reason no-show-menu-action, nothing sent", async () => {
    const sb = await observedSandbox();
    const e = expectError(await cli(sb, ["menu", "list", ...app, "--element-index", "1"]), "menu-list", "MENU_NOT_EXPOSED");
    expect(e.details).toMatchObject({ reason: "no-show-menu-action", elementIndex: 1, delivery: "not_dispatched" });
    expect(mutations(sb)).toEqual([]);
  });
});

describe("menu click", () => {
  it("opens each level through its own action, then activates exactly the item", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["menu", "click", ...app, "--path", "File>Recent>One"]), "menu-click");
    expect(r).toMatchObject({ path: "File>Recent>One", item: { name: "One", role: "menu_item" }, opened: ["File", "Recent"], activated: true, delivery: "submitted", route: "accessibility" });
    expect(r.verification.menuClosed).toBe(true);
    expect(actions(sb)).toEqual(["click:File", "click:Recent", "click:One"]);
  });

  it("names match loosely: case, blanks, mnemonics and an ellipsis", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["menu", "click", ...app, "--path", " file > RECENT >_one"]), "menu-click");
    expect(actions(sb).at(-1)).toBe("click:One");
  });

  it("a check item: its state read back before and after (one helper process: serve)", async () => {
    const sb = sandbox();
    const s = new ServeProcess(sb);
    try {
      const r = await s.request({ id: 1, command: "menu-click", args: { app: "fixture-app", path: "View>Word Wrap" } });
      expect(r.result.verification).toMatchObject({ verified: true, checked: { before: false, after: true } });
      const listed = await s.request({ id: 2, command: "menu-list", args: { app: "fixture-app" } });
      expect(listed.result.items[1].children[0]).toMatchObject({ name: "Word Wrap", checked: true });
      const again = await s.request({ id: 3, command: "menu-click", args: { app: "fixture-app", path: "View>Word Wrap" } });
      expect(again.result.verification.checked).toEqual({ before: true, after: false });
    } finally {
      await s.close();
    }
  });

  it("a missing item -> MENU_ITEM_NOT_FOUND naming the level and what is there; nothing opened or activated", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["menu", "click", ...app, "--path", "File>Recent>Three"]), "menu-click", "MENU_ITEM_NOT_FOUND");
    expect(e.details).toMatchObject({ level: 3, name: "Three", available: "One", availableCount: 1, delivery: "not_dispatched" });
    const top = expectError(await cli(sb, ["menu", "click", ...app, "--path", "Tools>Sort"]), "menu-click", "MENU_ITEM_NOT_FOUND");
    expect(top.details).toMatchObject({ level: 1, available: "File | View" });
    const past = expectError(await cli(sb, ["menu", "click", ...app, "--path", "File>New>Blank"]), "menu-click", "MENU_ITEM_NOT_FOUND");
    expect(past.details).toMatchObject({ level: 3, reason: "not-a-submenu" });
    const sub = expectError(await cli(sb, ["menu", "click", ...app, "--path", "File>Recent"]), "menu-click", "MENU_ITEM_NOT_FOUND");
    expect(sub.details).toMatchObject({ reason: "ends-at-submenu", available: "One" });
    expect(mutations(sb)).toEqual([]);
  });

  it("a disabled item, or a disabled submenu on the way -> MENU_ITEM_DISABLED; nothing opened or activated", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["menu", "click", ...app, "--path", "View>Print Preview"]), "menu-click", "MENU_ITEM_DISABLED");
    expect(e.details).toMatchObject({ level: 2, name: "Print Preview", delivery: "not_dispatched" });
    const via = expectError(await cli(sb, ["menu", "click", ...app, "--path", "View>Legacy>Old Thing"]), "menu-click", "MENU_ITEM_DISABLED");
    expect(via.details).toMatchObject({ level: 2, name: "Legacy" });
    expect(mutations(sb)).toEqual([]);
  });

  it("a sensitive item needs the confirm hook, asked before any menu opens: none -> CONFIRM_REQUIRED, refused -> CONFIRM_DENIED, allowed -> activated once", async () => {
    const sb = sandbox();
    const argv = ["menu", "click", ...app, "--path", "View>Delete All"];
    expectError(await cli(sb, argv), "menu-click", "CONFIRM_REQUIRED");
    expect(mutations(sb)).toEqual([]);
    const deny = hook(sb, false);
    expectError(await cli(sb, [...argv, "--confirm-cmd", deny.cmd]), "menu-click", "CONFIRM_DENIED");
    expect(mutations(sb)).toEqual([]);
    expect(deny.asked()).toHaveLength(1);
    const allow = hook(sb, true);
    expectOk(await cli(sb, [...argv, "--confirm-cmd", allow.cmd]), "menu-click");
    expect(actions(sb)).toEqual(["click:View", "click:Delete All"]);
    expect(allow.asked()).toHaveLength(1);
    expect(allow.asked()[0]).toMatchObject({ version: 1, command: "menu-click", action: "click", route: "element", element: { name: "Delete All", role: "menu_item", index: null } });
    // Quit is quitting: the same rule.
    expectError(await cli(sb, ["menu", "click", ...app, "--path", "File>Quit"]), "menu-click", "CONFIRM_REQUIRED");
    expect(actions(sb)).toHaveLength(2);
  });

  it("paused -> PAUSED, nothing read or sent", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["pause", "--reason", "menus"]), "pause");
    expectError(await cli(sb, ["menu", "click", ...app, "--path", "File>New"]), "menu-click", "PAUSED");
    expect(sb.ops().filter((o) => o === "menu_tree" || o === "element_action")).toEqual([]);
    // Listing the menu bar reads only: it is not refused.
    expectOk(await cli(sb, ["menu", "list", ...app]), "menu-list");
  });

  it("an empty level or a bare separator -> INVALID_ARGUMENTS before a helper is asked", async () => {
    const sb = sandbox();
    for (const path of ["File>>New", "File>", ">"]) {
      const e = expectError(await cli(sb, ["menu", "click", ...app, "--path", path]), "menu-click", "INVALID_ARGUMENTS");
      expect(e.details.field).toBe("path");
    }
    expect(sb.ops().filter((o) => o === "menu_tree")).toEqual([]);
  });

  it("serve: menu-list and menu-click requests", async () => {
    const sb = sandbox();
    const s = new ServeProcess(sb);
    try {
      const list = await s.request({ id: 1, command: "menu-list", args: { app: "fixture-app" } });
      expect(list.ok, JSON.stringify(list.error)).toBe(true);
      expect(list.result.itemCount).toBe(11);
      const click = await s.request({ id: 2, command: "menu-click", args: { app: "fixture-app", path: "File>New" } });
      expect(click.ok, JSON.stringify(click.error)).toBe(true);
      expect(click.result.item.name).toBe("New");
      const missing = await s.request({ id: 3, command: "menu-click", args: { app: "fixture-app", path: "File>Nope" } });
      expect(missing.error.code).toBe("MENU_ITEM_NOT_FOUND");
    } finally {
      await s.close();
    }
    expect(actions(sb)).toEqual(["click:File", "click:New"]);
  });
});
