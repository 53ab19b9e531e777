// Coordinate clicks and keyboard input: background through accessibility when
// the point hits an element of the target, otherwise foreground input that
// only the operator can grant; never a point over another application.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectNotDispatched, expectOk, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

describe("coordinate click", () => {
  // (700, 500) is inside the fixture window (10,20 800x600) but over no actionable node.
  it("empty point without the grant -> FOREGROUND_REQUIRED, no input sent", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500"]);
    const e = expectError(r, "click", "FOREGROUND_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(sb.ops()).toContain("hit_test");
    expect(mutations(sb)).toEqual([]);
  });

  it("empty point with --allow-foreground -> route foreground_input, one input op", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--allow-foreground"]);
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ delivery: "submitted", route: "foreground_input", cleanup: { pointer_restored: true } });
    const sent = mutations(sb);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.op).toBe("input");
    expect(sent[0]!.args).toMatchObject({ steps: [{ kind: "click", x: 700, y: 500, button: "left", count: 1, modifiers: [] }] });
  });

  it("a point over the OK button hit-tests to it -> accessibility, no grant needed", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "50"]);
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ delivery: "submitted", route: "accessibility" });
    const sent = mutations(sb);
    expect(sent.map((s) => s.op)).toEqual(["element_action"]);
    expect(sent[0]!.args).toMatchObject({ action: "click", locator: { path: [0], name: "OK", identifier: "ok-button" } });
  });

  it("a right click over the OK button is foreground input (no semantic equivalent)", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "50", "--button", "right"]);
    expectError(r, "click", "FOREGROUND_REQUIRED");
    expect(mutations(sb)).toEqual([]);
  });

  it("a point over the xterm window -> POLICY_DENIED point-outside-target, even with the grant", async () => {
    const sb = sandbox();
    for (const grant of [[], ["--allow-foreground"]]) {
      const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "100", "--y", "800", ...grant]);
      const e = expectError(r, "click", "POLICY_DENIED");
      expect(e.details).toMatchObject({ reason: "point-outside-target", pid: 4343 });
      expectNotDispatched(e);
    }
    expect(mutations(sb)).toEqual([]);
  });

  it("a point over no window at all is outside the target too: refused even with the grant", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "1500", "--y", "900", "--allow-foreground"]);
    expect(r.envelope.ok, JSON.stringify(r.envelope)).toBe(false);
    expect(["POLICY_DENIED", "COORDINATE_OUT_OF_BOUNDS"]).toContain(r.envelope.error!.code);
    expect(mutations(sb)).toEqual([]);
  });

  it("--x without --y -> INVALID_ARGUMENTS before anything is asked of the helper", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "100"]);
    expectError(r, "click", "INVALID_ARGUMENTS");
    expect(sb.ops()).not.toContain("hit_test");
  });
});

describe("keyboard and pointer input", () => {
  it("hotkey without the grant -> FOREGROUND_REQUIRED, no input sent", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s"]);
    const e = expectError(r, "hotkey", "FOREGROUND_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(mutations(sb)).toEqual([]);
  });

  it("hotkey with the grant -> one input op with the combo", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+shift+t", "--allow-foreground"]);
    expect(expectOk(r, "hotkey").route).toBe("foreground_input");
    const sent = mutations(sb);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args).toMatchObject({ steps: [{ kind: "tap", keys: ["ctrl", "shift", "t"], repeat: 1 }] });
  });

  it("hotkey on a helper without input.keyboard -> ACTION_UNSUPPORTED, even with the grant", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s", "--allow-foreground"], { mode: "drop-cap:input.keyboard" });
    expectError(r, "hotkey", "ACTION_UNSUPPORTED");
    expect(mutations(sb)).toEqual([]);
  });

  it("type-text without an element and without the grant -> FOREGROUND_REQUIRED", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["type-text", "--app", "fixture-app", "--text", "hello"]);
    expectError(r, "type-text", "FOREGROUND_REQUIRED");
    expect(mutations(sb)).toEqual([]);
  });

  it("drag without the grant -> FOREGROUND_REQUIRED", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["drag", "--app", "fixture-app", "--from-x", "100", "--from-y", "100", "--to-x", "200", "--to-y", "200"]);
    expectError(r, "drag", "FOREGROUND_REQUIRED");
    expect(mutations(sb)).toEqual([]);
  });
});
