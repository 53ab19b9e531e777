// Issue 9.1 and 9.2 at the orchestrator's edge, against the scripted helper:
// every keyboard input carries the focus guard for the target window, a
// helper without the guard is refused keyboard input before anything is
// sent, FOCUS_MISMATCH comes back with what was sent, and an accessibility
// flag that is off is a warning, not a gate.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, FIXTURE_WINDOW, FIXTURE_WINDOW_2, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const inputs = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input");
const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input" || r.op === "element_action");
const fg = ["--allow-foreground"];

describe("focus guard on keyboard input", () => {
  for (const [name, argv] of [
    ["type-text", ["type-text", "--app", "fixture-app", "--text", "hello"]],
    ["press-key", ["press-key", "--app", "fixture-app", "--key", "Return"]],
    ["hotkey", ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s"]],
  ] as const) {
    it(`${name} sends its keys with focus = the target window, activation allowed under the grant`, async () => {
      const sb = sandbox();
      expectOk(await cli(sb, [...argv, ...fg]), name);
      const sent = inputs(sb);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.args.focus).toEqual({ window_id: FIXTURE_WINDOW, pid: 4242, activate: true });
    });
  }

  // Keys without an element go where the app's keyboard focus is
  // (src/program/key-window.ts): on sway an accessibility focus moves into a
  // window the compositor does not bring to the front.
  for (const [name, argv] of [
    ["type-text", ["type-text", "--app", "fixture-app", "--text", "hello"]],
    ["press-key", ["press-key", "--app", "fixture-app", "--key", "Return"]],
    ["hotkey", ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s"]],
  ] as const) {
    it(`${name} with no element and no window goes to the window holding the app's focused element, not its front-most`, async () => {
      const sb = sandbox();
      sb.control({ focused: { window_id: FIXTURE_WINDOW_2, path: [0] } });
      expectOk(await cli(sb, [...argv, ...fg]), name);
      expect(inputs(sb).map((r) => r.args.focus)).toEqual([{ window_id: FIXTURE_WINDOW_2, pid: 4242, activate: true }]);
    });
  }

  it("a window the caller names, a program with pointer steps, or nothing focused: the keys keep the named or front-most window", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW_2, path: [0] } });
    expectOk(await cli(sb, ["type-text", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--text", "a", ...fg]), "type-text");
    const mixed = { app: "fixture-app", steps: [{ action: "click", x: 700, y: 500 }, { action: "type-text", text: "b" }] };
    expectOk(await cli(sb, ["run", ...fg], { stdin: JSON.stringify(mixed) }), "run");
    const guards = inputs(sb).map((r) => r.args.focus).filter(Boolean);
    expect(guards).toEqual([
      { window_id: FIXTURE_WINDOW, pid: 4242, activate: true },
      { window_id: FIXTURE_WINDOW, pid: 4242, activate: true },
    ]);
    const none = sandbox();
    expectOk(await cli(none, ["type-text", "--app", "fixture-app", "--text", "c", ...fg]), "type-text");
    expect(inputs(none).map((r) => r.args.focus)).toEqual([{ window_id: FIXTURE_WINDOW, pid: 4242, activate: true }]);
  });

  it("the focus is asked only of an app policy allows, under the grant: a denied terminal and an ungranted call make no focused_element request", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW_2, path: [0] } });
    expectError(await cli(sb, ["type-text", "--app", "xterm", "--text", "ls", ...fg]), "type-text", "POLICY_DENIED");
    expectError(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "a"]), "type-text", "FOREGROUND_REQUIRED");
    expect(sb.ops()).not.toContain("focused_element");
    expect(inputs(sb)).toEqual([]);
  });

  it("type-text reports how many characters were sent", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["run", ...fg], { stdin: JSON.stringify({ app: "fixture-app", steps: [{ action: "type-text", text: "héllo" }] }) }), "run");
    expect(r.steps[0]).toMatchObject({ status: "completed", charsSent: 5 });
  });

  it("pointer-only input carries no focus guard", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", ...fg]), "click");
    expect(inputs(sb)[0]!.args.focus).toBeUndefined();
  });

  it("a helper without input.focus_guard is refused keyboard input: ACTION_UNSUPPORTED, nothing sent", async () => {
    const sb = sandbox();
    const mode = "drop-cap:input.focus_guard";
    for (const argv of [["type-text", "--app", "fixture-app", "--text", "x"], ["press-key", "--app", "fixture-app", "--key", "Return"], ["hotkey", "--app", "fixture-app", "--keys", "ctrl+q"]]) {
      const e = expectError(await cli(sb, [...argv, ...fg], { mode }), argv[0]!, "ACTION_UNSUPPORTED");
      expect(String(e.details.capability)).toContain("input.focus_guard");
    }
    // Pointer input still works with that helper.
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", ...fg], { mode }), "click");
    expect(mutations(sb).map((m) => m.op)).toEqual(["input"]);
  });
});

describe("accessibility flag off (advisory)", () => {
  it("get-app-state proceeds; permissions reports a warning with the fix", async () => {
    const sb = sandbox();
    sb.control({ a11yOff: true });
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    expect(state.snapshot.elementCount).toBeGreaterThan(1);
    expect(state.warnings).toBeUndefined(); // a full tree: the flag did not matter here
    const p = expectOk(await cli(sb, ["permissions"]), "permissions");
    expect(p.allGranted).toBe(false);
    expect(p.warnings).toEqual([expect.objectContaining({ id: "accessibility_enabled" })]);
    expect(p.checks.find((c: { id: string }) => c.id === "accessibility_enabled")).toMatchObject({ advisory: true, granted: false });
  });

  it("permissions --enable-accessibility asks the helper to switch the flag on and says apps must restart", async () => {
    const sb = sandbox();
    sb.control({ a11yOff: true });
    const p = expectOk(await cli(sb, ["permissions", "--enable-accessibility"]), "permissions");
    expect(p.enableAccessibility).toMatchObject({ enabled: true, previous: false });
    expect(p.enableAccessibility.note).toMatch(/restart/);
    const sent = sb.requests().filter((r) => r.op === "set_accessibility");
    expect(sent.map((r) => r.args)).toEqual([{ enabled: true }]);
  });

  it("a helper without set_accessibility refuses --enable-accessibility with ACTION_UNSUPPORTED", async () => {
    const sb = sandbox();
    const mode = "drop-cap:set_accessibility";
    expectError(await cli(sb, ["permissions", "--enable-accessibility"], { mode }), "permissions", "ACTION_UNSUPPORTED");
    expect(sb.requests().filter((r) => r.op === "set_accessibility")).toEqual([]);
  });
});
