// The readable output (no --json) of the issue-13 commands.
import { describe, expect, it } from "vitest";
import { humanOutput } from "../../../src/frontend/human.ts";

describe("humanOutput", () => {
  it("list-apps --all: an installed app that is not running has no pid", () => {
    const out = humanOutput("list-apps", {
      apps: [
        { name: "Mousepad", pid: 42, accessible: true, windowCount: 1, executable: "/usr/bin/mousepad", running: true },
        { name: "Firefox ESR", pid: null, accessible: false, windowCount: 0, executable: "/usr/bin/firefox-esr", running: false, installed: true },
      ],
    });
    expect(out).toMatch(/^Mousepad\s+42\s+yes\s+1\s+\/usr\/bin\/mousepad$/m);
    expect(out).toMatch(/^Firefox ESR\s+-\s+installed\s+-\s+\/usr\/bin\/firefox-esr$/m);
  });

  it("quit that did not exit names the windows left", () => {
    const out = humanOutput("quit", { app: { name: "Mousepad", pid: 42 }, exited: false, windowsClosed: 0, windowsLeft: [{ windowId: 7, title: "Save Changes" }], waitedMs: 5000 });
    expect(out).toContain("did NOT exit");
    expect(out).toContain('7 "Save Changes"');
  });

  it("clipboard get prints the text itself (empty for no text)", () => {
    expect(humanOutput("clipboard-get", { selection: "clipboard", text: "hello\nworld", bytes: 11, truncated: false, owner: null, targets: [] })).toBe("hello\nworld");
    expect(humanOutput("clipboard-get", { selection: "clipboard", text: null, bytes: 0, truncated: false, owner: null, targets: [] })).toBe("");
  });

  it("menu list is an indented tree with states and shortcuts", () => {
    const out = humanOutput("menu-list", {
      app: { name: "Fixture", pid: 1 },
      itemCount: 3,
      truncated: false,
      items: [{ name: "File", enabled: true, checked: null, shortcut: null, submenu: true, children: [{ name: "Save As…", enabled: true, checked: null, shortcut: "ctrl+shift+s", submenu: false, children: [] }, { name: "Print", enabled: false, checked: null, shortcut: null, submenu: false, children: [] }] }],
    });
    expect(out.split("\n")).toEqual(["Fixture: 3 items", "File >", "  Save As…  (ctrl+shift+s)", "  Print  (disabled)"]);
  });

  it("menu click says what was activated and what was read back", () => {
    expect(humanOutput("menu-click", { app: { name: "Fixture", pid: 1 }, path: "View>Panels>Sidebar", verification: { verified: true, predicate: "checked false -> true" } })).toBe("Fixture: activated View>Panels>Sidebar, verified (checked false -> true)");
  });

  // issue 14
  const state = (snapshot: Record<string, unknown>) => ({
    app: { name: "Editor", pid: 42 },
    window: { windowId: 7, title: "Doc" },
    snapshot: { snapshotId: "cs_A", elementCount: 9, format: "compact", offset: 0, truncated: false, expiresAt: "t", treeText: '[1] button "OK"', ...snapshot },
    screenshot: null,
  });
  it("get-app-state: a cut page says how to read the next one", () => {
    const out = humanOutput("get-app-state", state({ truncated: true, nextOffset: 40 }));
    expect(out).toContain("more: --snapshot-id cs_A --offset 40");
    expect(out).toContain('[1] button "OK"');
  });
  it("get-app-state --since: the changes, marked; a refused diff says why and shows the tree", () => {
    const diff = { since: "cs_0", applied: true, added: [{ index: 12, line: '[12] button "New"' }], changed: [{ index: 3, line: '[3] text_field "Name" value="Ada"', changed: ["value"] }], removed: [{ index: 5, line: '[5] label "Old"' }], unchanged: 4 };
    const out = humanOutput("get-app-state", state({ treeText: "", diff }));
    expect(out).toContain("1 added, 1 changed, 1 removed, 4 unchanged");
    expect(out).toContain('+ [12] button "New"');
    expect(out).toContain('~ [3] text_field "Name" value="Ada"  (value)');
    expect(out).toContain('- [5] label "Old"');
    const refused = humanOutput("get-app-state", state({ diff: { since: "cs_0", applied: false, reason: "window_changed", added: [], changed: [], removed: [], unchanged: 0 } }));
    expect(refused).toContain("no diff since cs_0 (window_changed)");
    expect(refused).toContain('[1] button "OK"');
  });
});
