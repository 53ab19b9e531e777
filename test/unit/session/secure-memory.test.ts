// Issue 10.3: an element once seen secure stays secure for its snapshot's
// lifetime. A password revealed by the app's "show password" toggle (role
// secure_text_field -> text_field) is still treated as secure by a later snapshot
// of the same window: value dropped, secure flag set, nothing of it stored.
import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SnapshotStore } from "../../../src/session/store.ts";
import { applySecureMemory, buildTree, isSecureNode, secureLocatorsOf, windowKeyOf } from "../../../src/session/snapshot.ts";
import type { WireNode } from "../../../src/wire/messages.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "deckhand-secure-"));
  dirs.push(d);
  return d;
}

import { node } from "../nodes.ts";

const APP = { pid: 7, startTime: 1, name: "app", executable: "/usr/bin/app", desktopId: null };
const KEY = windowKeyOf(APP, 77);
const HIDDEN: WireNode[] = [
  node([], "window", "win", { child_count: 2 }),
  node([0], "secure_text_field", "Password", { secure: true, identifier: "password_entry" }),
  node([1], "text_field", "Name", { value: "Ada", identifier: "name_entry" }),
];
// The same window after the app's "show password" toggle: plain text with the password in it.
const REVEALED: WireNode[] = [HIDDEN[0]!, node([0], "text_field", "Password", { value: "hunter2", identifier: "password_entry" }), HIDDEN[2]!];

describe("secure-field memory (SnapshotStore)", () => {
  it("remembers the locators seen secure per window key, until the TTL; another store (process) sees them", () => {
    const root = tmp();
    const a = new SnapshotStore(root);
    const now = 1_000_000;
    a.rememberSecure(KEY, secureLocatorsOf(HIDDEN), now + 60_000, now);
    const b = new SnapshotStore(root);
    expect(b.secureLocators(KEY, now + 1)).toEqual([{ path: [0], identifier: "password_entry" }]);
    // Per window: another window of the same app remembers nothing.
    expect(b.secureLocators(windowKeyOf(APP, 78), now + 1)).toEqual([]);
    // After the TTL the memory lapses.
    expect(b.secureLocators(KEY, now + 60_000)).toEqual([]);
    // Files are 0600, in a 0700 directory, and hold locators only.
    expect(statSync(a.secureDir).mode & 0o777).toBe(0o700);
    for (const f of readdirSync(a.secureDir)) {
      expect(statSync(join(a.secureDir, f)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(a.secureDir, f), "utf8")).not.toContain("hunter2");
    }
  });

  it("seeing a locator again extends it; expired entries are dropped on the next write", () => {
    const store = new SnapshotStore(tmp());
    store.rememberSecure(KEY, [{ path: [0], identifier: "a" }], 100, 0);
    store.rememberSecure(KEY, [{ path: [1], identifier: "b" }], 200, 50);
    expect(store.secureLocators(KEY, 60)).toEqual([
      { path: [0], identifier: "a" },
      { path: [1], identifier: "b" },
    ]);
    store.rememberSecure(KEY, [{ path: [0], identifier: "a" }], 300, 150);
    expect(store.secureLocators(KEY, 250)).toEqual([{ path: [0], identifier: "a" }]);
  });

  it("a corrupt memory file reads as empty, not as a crash", () => {
    const store = new SnapshotStore(tmp());
    store.rememberSecure(KEY, [{ path: [0], identifier: "a" }], Date.now() + 60_000);
    const [f] = readdirSync(store.secureDir);
    writeFileSync(join(store.secureDir, f!), "{not json");
    expect(store.secureLocators(KEY)).toEqual([]);
  });
});

describe("applySecureMemory: a later snapshot of the window", () => {
  it("treats a remembered field as secure although the helper now reports plain text: value dropped, flagged, not in the text", () => {
    const store = new SnapshotStore(tmp());
    const now = Date.now();
    store.rememberSecure(KEY, secureLocatorsOf(HIDDEN), now + 60_000, now);
    const nodes = applySecureMemory(REVEALED, store.secureLocators(KEY));
    expect(nodes[1]).toMatchObject({ role: "text_field", secure: true, value: null });
    expect(nodes[2]).toMatchObject({ secure: false, value: "Ada" });
    const built = buildTree(nodes, "atspi-path");
    const pw = built.elements.find((e) => e.title === "Password")!;
    expect(pw).toMatchObject({ secure: true, value: null });
    expect(built.treeText).toContain('text_field "Password" (secure)');
    expect(JSON.stringify(built)).not.toContain("hunter2");
    // Without the memory, the same tree would expose it: that is what the memory is for.
    expect(JSON.stringify(buildTree(REVEALED, "atspi-path"))).toContain("hunter2");
  });

  it("matches path and identifier: another element at the same path (another identifier) is not secure", () => {
    const other = [HIDDEN[0]!, node([0], "text_field", "Search", { value: "query", identifier: "search_entry" })];
    const nodes = applySecureMemory(other, [{ path: [0], identifier: "password_entry" }]);
    expect(nodes[1]).toMatchObject({ secure: false, value: "query" });
  });

  it("the secure role is secure even when a helper's flag says otherwise", () => {
    const n = node([3], "secure_text_field", "PIN", { value: "1234", secure: false });
    expect(isSecureNode(n)).toBe(true);
    expect(applySecureMemory([n], [])[0]).toMatchObject({ secure: true, value: null });
    expect(secureLocatorsOf([n])).toEqual([{ path: [3], identifier: "" }]);
  });
});
