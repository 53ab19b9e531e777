// Issue 10.2 and 10.3 at the orchestrator's edge, against the scripted
// helper: under the grant, no keys and no paste while a secure field has
// focus anywhere in the target app (any window, pruned from the tree or not),
// read with the helper's focused_element op; no middle-button paste over a
// secure field; and a field once seen secure stays secure in later snapshots
// of its window (a "show password" toggle does not expose it).
// Fake fixture main window 0x200001: Password field at path [3], bounds
// {30, 130, 100x24}; Name at [2] {30, 100}. Second window 0x200002.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectNotDispatched, expectOk, failedProgram, FIXTURE_WINDOW, FIXTURE_WINDOW_2, observeFixture, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input" || r.op === "element_action");
const fg = ["--allow-foreground"];
const run = (sb: Sandbox, program: object, opts: { mode?: string } = {}) => cli(sb, ["run", ...fg], { stdin: JSON.stringify({ observe: false, ...program }), ...opts });

const KEYBOARD: [string, string[]][] = [
  ["type-text", ["type-text", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--text", "hunter2"]],
  ["press-key", ["press-key", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--key", "a"]],
  ["hotkey", ["hotkey", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--keys", "ctrl+a"]],
];

function expectSecureRefusal(e: { details: Record<string, unknown> }, reason: "focused-secure" | "paste"): void {
  expect(e.details).toMatchObject({ source: "builtin", rule: "builtin:secure_field", reason });
  expectNotDispatched(e as never);
}

describe("keys while a secure field has focus anywhere in the app", () => {
  it("the Password field of the target window: type-text, press-key, hotkey refused; hold-key too", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [3] } });
    for (const [name, argv] of KEYBOARD) {
      const e = expectError(await cli(sb, [...argv, ...fg]), name, "POLICY_DENIED");
      expectSecureRefusal(e, "focused-secure");
    }
    const hold = expectError(await run(sb, { app: "fixture-app", steps: [{ action: "hold-key", key: "a", ms: 10 }] }), "run", "POLICY_DENIED");
    expectSecureRefusal(hold, "focused-secure");
    expect(failedProgram(hold, 1).receipts[0]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "POLICY_DENIED", details: { rule: "builtin:secure_field" } } });
    expect(mutations(sb)).toEqual([]);
    // Read live with focused_element, not from a tree: once per step, and
    // once more for the program without a window, to choose its window
    // (the focused element's: src/program/key-window.ts).
    expect(sb.ops().filter((o) => o === "focused_element").length).toBe(5);
    expect(sb.ops()).not.toContain("get_tree");
  });

  it("a password field focused in the app's OTHER window, keys aimed at the main window: refused", async () => {
    const sb = sandbox();
    sb.control({ secondPassword: true, focused: { window_id: FIXTURE_WINDOW_2, path: [1] } });
    for (const [name, argv] of KEYBOARD) {
      const e = expectError(await cli(sb, [...argv, ...fg]), name, "POLICY_DENIED");
      expectSecureRefusal(e, "focused-secure");
      expect(e.details.windowId).toBe(FIXTURE_WINDOW_2);
    }
    expect(mutations(sb)).toEqual([]);
  });

  it("a focused password field the tree walk prunes (inside a scrolled-away container): refused", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [9, 0, 0], node: {} } });
    // The tree does not show it...
    const state = await observeFixture(sb, ["--no-screenshot"]);
    expect(state.snapshot.elements.some((e: { title: string }) => e.title === "Hidden password")).toBe(false);
    // ...focused_element does.
    const e = expectError(await cli(sb, [...KEYBOARD[0]![1], ...fg]), "type-text", "POLICY_DENIED");
    expectSecureRefusal(e, "focused-secure");
    expect(mutations(sb)).toEqual([]);
  });

  it("a helper without focused_element: the trees of every window of the app are read instead", async () => {
    const sb = sandbox();
    const mode = "drop-cap:focused_element";
    sb.control({ secondPassword: true, focused: { window_id: FIXTURE_WINDOW_2, path: [1] } });
    const e = expectError(await cli(sb, [...KEYBOARD[0]![1], ...fg], { mode }), "type-text", "POLICY_DENIED");
    expectSecureRefusal(e, "focused-secure");
    expect(sb.ops()).not.toContain("focused_element");
    expect(sb.requests().filter((r) => r.op === "get_tree").map((r) => r.args.window_id)).toEqual([FIXTURE_WINDOW, FIXTURE_WINDOW_2]);
    expect(mutations(sb)).toEqual([]);
  });

  it("focused_element finds nothing although the target window's tree shows the focused Password: the tree decides, refused", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [3] } });
    const e = expectError(await cli(sb, [...KEYBOARD[0]![1], ...fg], { mode: "blind-focus" }), "type-text", "POLICY_DENIED");
    expectSecureRefusal(e, "focused-secure");
    expect(sb.ops().filter((o) => o === "focused_element" || o === "get_tree")).toEqual(["focused_element", "get_tree"]);
    expect(mutations(sb)).toEqual([]);
  });

  it("a plain field with focus: keys go, with the focus guard", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [2] } });
    expectOk(await cli(sb, [...KEYBOARD[0]![1], ...fg]), "type-text");
    expect(mutations(sb)).toHaveLength(1);
  });
});

describe("paste routes", () => {
  it("paste chords (ctrl+v, shift+Insert, ctrl+shift+v) while a secure field has focus: refused as paste", async () => {
    const sb = sandbox();
    sb.control({ secondPassword: true, focused: { window_id: FIXTURE_WINDOW_2, path: [1] } });
    for (const keys of ["ctrl+v", "shift+Insert", "ctrl+shift+v"]) {
      const e = expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", keys, ...fg]), "hotkey", "POLICY_DENIED");
      expectSecureRefusal(e, "paste");
    }
    const pk = expectError(await cli(sb, ["press-key", "--app", "fixture-app", "--key", "shift+Insert", ...fg]), "press-key", "POLICY_DENIED");
    expectSecureRefusal(pk, "paste");
    expect(mutations(sb)).toEqual([]);
  });

  it("a paste chord into a plain focused field is allowed", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [2] } });
    expectOk(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+v", ...fg]), "hotkey");
  });

  it("a middle-button click over a secure field (hit test at the point): refused, with nothing focused", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "140", "--button", "middle", ...fg]), "click", "POLICY_DENIED");
    expectSecureRefusal(e, "paste");
    expect(mutations(sb)).toEqual([]);
    // A left click on it (focusing it) is allowed, as documented.
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "140", ...fg]), "click");
  });

  it("a middle-button drag released over a secure field: refused", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["drag", "--app", "fixture-app", "--from-x", "400", "--from-y", "400", "--to-x", "50", "--to-y", "140", "--button", "middle", ...fg]), "drag", "POLICY_DENIED");
    expectSecureRefusal(e, "paste");
    expect(mutations(sb)).toEqual([]);
    // The same drag with the left button selects, it does not paste.
    expectOk(await cli(sb, ["drag", "--app", "fixture-app", "--from-x", "400", "--from-y", "400", "--to-x", "50", "--to-y", "140", ...fg]), "drag");
  });

  it("a middle-button click or drag anywhere while a secure field has focus: refused", async () => {
    const sb = sandbox();
    sb.control({ secondPassword: true, focused: { window_id: FIXTURE_WINDOW_2, path: [1] } });
    const click = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--button", "middle", ...fg]), "click", "POLICY_DENIED");
    expectSecureRefusal(click, "paste");
    const drag = expectError(await cli(sb, ["drag", "--app", "fixture-app", "--from-x", "400", "--from-y", "400", "--to-x", "700", "--to-y", "500", "--button", "middle", ...fg]), "drag", "POLICY_DENIED");
    expectSecureRefusal(drag, "paste");
    expect(mutations(sb)).toEqual([]);
    // Middle click with a plain field focused: allowed.
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [2] } });
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--button", "middle", ...fg]), "click");
  });
});

describe("once secure, secure for the snapshot's lifetime (show-password toggle)", () => {
  it("a password revealed after a snapshot saw it secure: later snapshots keep it secure, its text is neither returned nor stored, screenshots black it out", async () => {
    const sb = sandbox();
    const first = await observeFixture(sb, ["--no-screenshot"]);
    expect(first.snapshot.elements.find((e: { title: string }) => e.title === "Password")).toMatchObject({ secure: true, value: null });
    sb.control({ revealed: true });
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app"]);
    const second = expectOk(r, "get-app-state");
    const pw = second.snapshot.elements.find((e: { title: string }) => e.title === "Password");
    expect(pw).toMatchObject({ role: "text_field", secure: true, value: null });
    expect(second.snapshot.treeText).toContain('text_field "Password" (secure)');
    expect(r.stdout).not.toContain("hunter2");
    for (const f of sb.stateFiles()) expect(f.data.includes("hunter2"), f.path).toBe(false);
    // The helper no longer sees it as secure: deckhand names its bounds to black out.
    const shot = sb.requests().filter((q) => q.op === "screenshot").at(-1)!;
    expect(shot.args.redact).toEqual([{ x: 30, y: 130, width: 100, height: 24 }]);
    // So does a window screenshot (screenshot --app, and the adapters' screenshots).
    expectOk(await cli(sb, ["screenshot", "--app", "fixture-app"]), "screenshot");
    expect(sb.requests().filter((q) => q.op === "screenshot").at(-1)!.args.redact).toEqual([{ x: 30, y: 130, width: 100, height: 24 }]);
    // Acting on it is refused as on any secure field.
    const idx = String(pw.index);
    for (const argv of [["type-text", "--text", "x"], ["set-value", "--value", "x"], ["select-text", "--start", "0", "--end", "3"]]) {
      const e = expectError(await cli(sb, [argv[0]!, "--app", "fixture-app", "--element-index", idx, ...argv.slice(1)]), argv[0]!, "POLICY_DENIED");
      expect(e.details.rule).toBe("builtin:secure_field");
    }
    // Focused and revealed: keys are refused too (the memory applies to focus).
    sb.control({ revealed: true, focused: { window_id: FIXTURE_WINDOW, path: [3] } });
    const keys = expectError(await cli(sb, [...KEYBOARD[0]![1], ...fg]), "type-text", "POLICY_DENIED");
    expectSecureRefusal(keys, "focused-secure");
    expect(mutations(sb)).toEqual([]);
  });

  it("the memory lasts as long as a snapshot (DECKHAND_SNAPSHOT_TTL_MS): after it, the field is what the helper says", async () => {
    const sb = sandbox();
    const env = { DECKHAND_SNAPSHOT_TTL_MS: "2000" };
    await observeFixture(sb, ["--no-screenshot"], { env });
    sb.control({ revealed: true });
    const within = await observeFixture(sb, ["--no-screenshot"], { env });
    expect(within.snapshot.elements.find((e: { title: string }) => e.title === "Password")).toMatchObject({ secure: true, value: null });
    await new Promise((r) => setTimeout(r, 2200));
    const after = await observeFixture(sb, ["--no-screenshot"], { env });
    // Refreshed by the snapshot "within" (which still saw it as secure): only lapsed once that too expired.
    expect(after.snapshot.elements.find((e: { title: string }) => e.title === "Password")).toMatchObject({ secure: false, value: "hunter2" });
  });
});
