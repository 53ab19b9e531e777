// Durable snapshots across CLI processes, and every refusal to act on one
// that is no longer current. A refusal never reaches the helper as an action.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectNotDispatched, expectOk, FIXTURE_WINDOW, FIXTURE_WINDOW_2, observeFixture, observedSandbox, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const actions = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

async function refused(sb: Sandbox, argv: string[], code: string, opts = {}) {
  const r = await cli(sb, argv, opts);
  const e = expectError(r, argv[0]!, code);
  expectNotDispatched(e);
  expect(actions(sb)).toEqual([]);
  return e;
}

/**
 * Refused by the helper before any OS call: the request (with the recorded
 * window and locator) reaches it, and it answers not_dispatched. Element-only
 * programs skip the window listing and let the helper check the window.
 */
async function refusedByHelper(sb: Sandbox, argv: string[], code: string) {
  const r = await cli(sb, argv);
  const e = expectError(r, argv[0]!, code);
  expect(e.details.delivery).toBe("not_dispatched");
  expect(actions(sb).length).toBeLessThanOrEqual(1);
  return e;
}

describe("snapshots across processes", () => {
  it("an element click asks the helper for the app list once and the window list not at all", async () => {
    const sb = await observedSandbox();
    const before = sb.ops().length;
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]), "click");
    expect(sb.ops().slice(before)).toEqual(["permissions", "list_apps", "element_action"]);
  });

  it("get-app-state then click --element-index 1 in a separate process: accessibility, submitted", async () => {
    const sb = sandbox();
    const state = await observeFixture(sb);
    expect(state.snapshot.snapshotId).toMatch(/^cs_[A-Za-z0-9]{10,40}$/);
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]);
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ delivery: "submitted", route: "accessibility", snapshotId: state.snapshot.snapshotId, windowId: FIXTURE_WINDOW });
    const sent = actions(sb);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args).toMatchObject({ action: "click", window_id: FIXTURE_WINDOW, locator: { path: [0], role: "button", native_role: "push button", name: "OK", identifier: "ok-button" } });
    // The two processes had two helpers.
    expect(new Set(sb.requests().map((q) => q.pid)).size).toBe(2);
  });

  it("an explicit --snapshot-id that is the latest works", async () => {
    const sb = sandbox();
    const state = await observeFixture(sb, ["--no-screenshot"]);
    const r = await cli(sb, ["click", "--app", "fixture-app", "--snapshot-id", state.snapshot.snapshotId, "--element-index", "6"]);
    expect(expectOk(r, "click").delivery).toBe("submitted");
  });

  it("--state returns one fresh observation that becomes the latest", async () => {
    const sb = sandbox();
    const first = await observeFixture(sb, ["--no-screenshot"]);
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1", "--state"]);
    const result = expectOk(r, "click");
    const next = result.observation.snapshot.snapshotId;
    expect(next).not.toBe(first.snapshot.snapshotId);
    // The old one is now superseded, the new one works.
    const again = await cli(sb, ["click", "--app", "fixture-app", "--snapshot-id", next, "--element-index", "1"]);
    expectOk(again, "click");
  });

  it("set-value reads the value back (verification axis)", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value", "Ada"]);
    const result = expectOk(r, "set-value");
    expect(result.verification).toEqual({ verified: true, predicate: "value read back equals the request" });
  });
});

describe("refusals", () => {
  it("no snapshot -> SNAPSHOT_REQUIRED", async () => {
    const sb = sandbox();
    await refused(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_REQUIRED");
  });

  it("superseded: an old --snapshot-id after a new get-app-state", async () => {
    const sb = sandbox();
    const old = await observeFixture(sb, ["--no-screenshot"]);
    await observeFixture(sb, ["--no-screenshot"]);
    const e = await refused(sb, ["click", "--app", "fixture-app", "--snapshot-id", old.snapshot.snapshotId, "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("superseded");
  });

  it("expired (DECKHAND_SNAPSHOT_TTL_MS=1)", async () => {
    const sb = sandbox();
    await observeFixture(sb, ["--no-screenshot"], { env: { DECKHAND_SNAPSHOT_TTL_MS: "1" } });
    const e = await refused(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("expired");
  });

  it("pid-changed: the app was restarted under another pid", async () => {
    const sb = await observedSandbox();
    sb.control({ fixturePid: 999 });
    const e = await refused(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details).toMatchObject({ reason: "pid-changed", snapshotPid: 4242, pid: 999 });
  });

  it("pid-changed: same pid, another process start time", async () => {
    const sb = await observedSandbox();
    sb.control({ fixtureStart: 5 });
    const e = await refused(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("pid-changed");
  });

  it("window-gone: the snapshot's window closed", async () => {
    const sb = await observedSandbox();
    sb.control({ goneWindows: [FIXTURE_WINDOW] });
    const e = await refusedByHelper(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("window-gone");
  });

  it("window-gone: the app has no window left at all", async () => {
    const sb = await observedSandbox();
    sb.control({ goneWindows: [FIXTURE_WINDOW, FIXTURE_WINDOW_2] });
    const e = await refusedByHelper(sb, ["click", "--app", "fixture-app", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("window-gone");
  });

  it("window-mismatch: --window-id of another window", async () => {
    const sb = await observedSandbox();
    const e = await refused(sb, ["click", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW_2), "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("window-mismatch");
  });

  it("window-mismatch: --window-index of another window", async () => {
    const sb = await observedSandbox();
    const e = await refused(sb, ["click", "--app", "fixture-app", "--window-index", "1", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("window-mismatch");
  });

  it("not-found: a well-formed id that does not exist", async () => {
    const sb = await observedSandbox();
    const e = await refused(sb, ["click", "--app", "fixture-app", "--snapshot-id", "cs_AAAAAAAAAAAAAAAAAAAA", "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("not-found");
  });

  it("a malformed --snapshot-id -> INVALID_ARGUMENTS (never a path)", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--snapshot-id", "../../etc/passwd", "--element-index", "1"]);
    expectError(r, "click", "INVALID_ARGUMENTS");
    expect(sb.requests()).toEqual([]);
  });

  it("a snapshot of another app -> SNAPSHOT_STALE window-mismatch", async () => {
    const sb = sandbox();
    const fixture = await observeFixture(sb, ["--no-screenshot"]);
    const e = await refused(sb, ["click", "--app", "pid:5001", "--snapshot-id", fixture.snapshot.snapshotId, "--element-index", "1"], "SNAPSHOT_STALE");
    expect(e.details.reason).toBe("window-mismatch");
  });

  it("ELEMENT_INDEX_NOT_FOUND: index 5 is a panel (no element)", async () => {
    const sb = sandbox();
    const state = await observeFixture(sb, ["--no-screenshot"]);
    expect(state.snapshot.elements.map((e: { index: number }) => e.index)).not.toContain(5);
    const e = await refused(sb, ["click", "--app", "fixture-app", "--element-index", "5"], "ELEMENT_INDEX_NOT_FOUND");
    expect(e.details).toMatchObject({ elementIndex: 5, snapshotId: state.snapshot.snapshotId, delivery: "not_dispatched" });
  });

  it("ELEMENT_INDEX_NOT_FOUND: index 999", async () => {
    const sb = await observedSandbox();
    const e = await refused(sb, ["click", "--app", "fixture-app", "--element-index", "999"], "ELEMENT_INDEX_NOT_FOUND");
    expect(e.details.elementIndex).toBe(999);
  });

  it("ELEMENT_UNRESOLVABLE: element 1 changed identity since the snapshot; nothing is performed", async () => {
    const sb = await observedSandbox();
    sb.control({ replaced: ["0"] });
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]);
    const e = expectError(r, "click", "ELEMENT_UNRESOLVABLE");
    expect(e.details.delivery).toBe("not_dispatched");
    // Replay happens in the helper, atomically with the action (no window
    // between a check and the act): the request carries the recorded locator
    // and the helper refuses it before any OS call.
    const sent = actions(sb);
    expect(sent).toHaveLength(1);
    expect((sent[0] as any).args.locator).toEqual({ path: [0], role: "button", native_role: "push button", name: "OK", identifier: "ok-button" });
  });

  it("perform-secondary-action with an action the element does not advertise -> ACTION_UNSUPPORTED, nothing sent", async () => {
    const sb = await observedSandbox();
    const e = await refused(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", "6", "--action", "explode"], "ACTION_UNSUPPORTED");
    // The neutral names the element advertises.
    expect(e.details.available).toBe("press,other");
    const ok = await cli(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", "6", "--action", "toggle-extra"]);
    expect(expectOk(ok, "perform-secondary-action").delivery).toBe("submitted");
    expect(actions(sb).at(-1)!.args).toMatchObject({ action: "secondary", action_name: "toggle-extra" });
  });

  it("perform-secondary-action by a neutral name: the helper is sent the native name", async () => {
    const sb = await observedSandbox();
    expectOk(await cli(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", "6", "--action", "other"]), "perform-secondary-action");
    expectOk(await cli(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", "6", "--action", "press"]), "perform-secondary-action");
    expect(actions(sb).map((r) => (r.args as any).action_name)).toEqual(["toggle-extra", "click"]);
  });

  it("two natives with one neutral name: the first is sent; a native name is sent as named", async () => {
    const sb = sandbox();
    sb.control({ menuButton: true });
    const state = await observeFixture(sb, ["--no-screenshot"]);
    const tools = state.snapshot.elements.find((e: any) => e.title === "Tools");
    expect(tools).toMatchObject({ role: "button", nativeRole: "push button", actions: ["press", "other"], nativeActions: ["click", "activate", "delete-all"] });
    const run = (name: string) => cli(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", String(tools.index), "--action", name]);
    expectOk(await run("press"), "perform-secondary-action");
    expectOk(await run("activate"), "perform-secondary-action");
    expect(actions(sb).map((r) => (r.args as any).action_name)).toEqual(["click", "activate"]);
    // "other" names delete-all: its native words are judged too (a sensitive word: confirm first, nothing sent).
    expectError(await run("other"), "perform-secondary-action", "CONFIRM_REQUIRED");
    expect(actions(sb)).toHaveLength(2);
  });
});

describe("what is stored", () => {
  it("snapshot files are 0600 in 0700 dirs; the URL loses its query; the password value is null", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app"]);
    const state = expectOk(r, "get-app-state");
    const url = state.snapshot.elements.find((e: { title: string }) => e.title === "Homepage");
    expect(url.value).toBe("https://example.com/a");
    const password = state.snapshot.elements.find((e: { title: string }) => e.title === "Password");
    expect(password).toMatchObject({ secure: true, value: null, index: 4 });
    expect(state.snapshot.treeText).toContain('[4] secure_text_field "Password" (secure)');
    expect(state.screenshot.path.startsWith(sb.stateDir)).toBe(true);
    expect(r.stdout).not.toContain("SECRETQUERY");
    expect(r.stdout).not.toContain("token=");

    const files = sb.stateFiles();
    expect(files.map((f) => f.path.slice(sb.stateDir.length + 1).split("/")[0])).toEqual(expect.arrayContaining(["latest", "screenshots", "snapshots"]));
    for (const f of files) {
      expect(f.mode, f.path).toBe(0o600);
      expect(f.data.includes("SECRETQUERY"), f.path).toBe(false);
    }
    const { statSync } = await import("node:fs");
    for (const d of ["snapshots", "latest", "screenshots"]) expect(statSync(`${sb.stateDir}/${d}`).mode & 0o777).toBe(0o700);
    const record = JSON.parse(files.find((f) => f.path.includes("/snapshots/"))!.data.toString());
    expect(record.elements.find((e: { secure: boolean }) => e.secure).value).toBeNull();
    expect(record.app).toMatchObject({ pid: 4242, startTime: 1000 });
  });
});
