// Issue 10.1 at the orchestrator's edge, against the scripted helper: every
// pointer path (click, drag at every point, scroll, move / hover) is confined
// to the target app's windows that policy allows, frames and title bars
// included, with or without the grant. The helper gets the pointer guard
// with every pointer input; what can be known before dispatch is refused
// before anything is sent, and the helper refuses the rest.
// The fake desktop: fixture main 0x200001 {10, 20, 800x600} and "deckhand
// fixture 2" 0x200002 {900, 20, 300x200} (pid 4242); xterm 0x300001
// {0, 700, 640x300} (pid 4343, built-in denied), movable by control.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectNotDispatched, expectOk, failedProgram, FIXTURE_WINDOW, FIXTURE_WINDOW_2, sandbox, XTERM_WINDOW, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const inputs = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input");
const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input" || r.op === "element_action");
const fg = ["--allow-foreground"];
const BOTH = { pid: 4242, windows: [FIXTURE_WINDOW, FIXTURE_WINDOW_2] };
const run = (sb: Sandbox, program: object, extra: string[] = fg, opts: { mode?: string } = {}) => cli(sb, ["run", ...extra], { stdin: JSON.stringify({ observe: false, ...program }), ...opts });

function denySecondWindow(sb: Sandbox): string {
  const p = join(sb.dir, "policy.toml");
  writeFileSync(p, '[[deny]]\nwindow_title = "deckhand fixture 2"\n');
  return p;
}

describe("every pointer input carries the pointer guard (the target's allowed windows)", () => {
  for (const [name, argv] of [
    ["click", ["click", "--app", "fixture-app", "--x", "700", "--y", "500"]],
    ["drag", ["drag", "--app", "fixture-app", "--from-x", "100", "--from-y", "400", "--to-x", "300", "--to-y", "450"]],
    ["scroll", ["scroll", "--app", "fixture-app", "--direction", "down", "--x", "400", "--y", "300"]],
    ["scroll (at the pointer)", ["scroll", "--app", "fixture-app", "--direction", "down"]],
  ] as const) {
    it(name, async () => {
      const sb = sandbox();
      expectOk(await cli(sb, [...argv, ...fg]), argv[0]);
      const sent = inputs(sb);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.args.pointer_guard).toEqual(BOTH);
      expect(sent[0]!.args.focus).toBeUndefined();
    });
  }

  it("move (hover) carries it too", async () => {
    const sb = sandbox();
    const r = expectOk(await run(sb, { app: "fixture-app", steps: [{ action: "move", x: 400, y: 300 }] }), "run");
    expect(r.steps[0].status).toBe("completed");
    expect(inputs(sb)[0]!.args.pointer_guard).toEqual(BOTH);
  });

  it("keyboard-only input carries no pointer guard", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "hi", ...fg]), "type-text");
    expect(inputs(sb)[0]!.args.pointer_guard).toBeUndefined();
  });

  it("a window denied by a window_title rule is left out of the guard", async () => {
    const sb = sandbox();
    const policy = denySecondWindow(sb);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--policy", policy, ...fg]), "click");
    expect(inputs(sb)[0]!.args.pointer_guard).toEqual({ pid: 4242, windows: [FIXTURE_WINDOW] });
  });
});

describe("refused before dispatch: points known to be outside the allowed windows", () => {
  it("a coordinate click into a window of the target app denied by title: POLICY_DENIED with the rule, with or without the grant; the main window still works", async () => {
    const sb = sandbox();
    const policy = denySecondWindow(sb);
    for (const grant of [[], fg]) {
      const e = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "950", "--y", "60", "--policy", policy, ...grant]), "click", "POLICY_DENIED");
      expect(e.details).toMatchObject({ reason: "point-outside-target", pid: 4242, windowId: FIXTURE_WINDOW_2, source: "user", rule: "user:deny[0]" });
      expectNotDispatched(e);
    }
    // Its title bar too.
    const bar = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "950", "--y", "5", "--policy", policy, ...fg]), "click", "POLICY_DENIED");
    expect(bar.details).toMatchObject({ reason: "point-outside-target", windowId: FIXTURE_WINDOW_2, frame: true });
    expect(mutations(sb)).toEqual([]);
    // The OK button of the main window (background press), and an empty point (foreground input).
    expect(expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "50", "--policy", policy]), "click").route).toBe("accessibility");
    expect(expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--policy", policy, ...fg]), "click").route).toBe("foreground_input");
  });

  it("without that rule the second window is clickable", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "950", "--y", "60", ...fg]), "click");
    expect(inputs(sb)).toHaveLength(1);
  });

  for (const button of ["left", "middle"] as const) {
    it(`a ${button}-button drag ending over the denied terminal: POLICY_DENIED naming the point, nothing sent`, async () => {
      const sb = sandbox();
      const e = expectError(await cli(sb, ["drag", "--app", "fixture-app", "--from-x", "100", "--from-y", "400", "--to-x", "100", "--to-y", "800", "--button", button, ...fg]), "drag", "POLICY_DENIED");
      expect(e.details).toMatchObject({ reason: "point-outside-target", pid: 4343, windowId: XTERM_WINDOW, point: 1 });
      expectNotDispatched(e);
      expect(mutations(sb)).toEqual([]);
    });
  }

  it("a drag whose middle point crosses the terminal is refused too (every point)", async () => {
    const sb = sandbox();
    const program = { app: "fixture-app", steps: [{ action: "drag", path: [{ x: 100, y: 400 }, { x: 100, y: 800 }, { x: 300, y: 400 }] }] };
    const e = expectError(await run(sb, program), "run", "POLICY_DENIED");
    expect(e.details).toMatchObject({ step: 0, delivery: "not_dispatched", point: 1, pid: 4343 });
    const { receipts } = failedProgram(e, 1);
    expect(receipts[0]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "POLICY_DENIED", details: { point: 1, pid: 4343 } } });
    expect(mutations(sb)).toEqual([]);
  });

  it("a scroll at a point over the terminal, a move (hover) over it, and a click on its title bar: refused", async () => {
    const sb = sandbox();
    const scroll = expectError(await cli(sb, ["scroll", "--app", "fixture-app", "--direction", "up", "--x", "100", "--y", "800", ...fg]), "scroll", "POLICY_DENIED");
    expect(scroll.details).toMatchObject({ reason: "point-outside-target", pid: 4343 });
    const move = expectError(await run(sb, { app: "fixture-app", steps: [{ action: "move", x: 100, y: 800 }] }), "run", "POLICY_DENIED");
    expect(failedProgram(move, 1).receipts[0]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "POLICY_DENIED", details: { reason: "point-outside-target", pid: 4343 } } });
    // xterm's title bar lies above its client area (y 700): y 680 is over no client window.
    const bar = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "100", "--y", "680", ...fg]), "click", "POLICY_DENIED");
    expect(bar.details).toMatchObject({ reason: "point-outside-target", pid: 4343, frame: true });
    expect(mutations(sb)).toEqual([]);
  });

  it("a terminal placed over the target: its title bar, over the target's client area, is refused; so is its client area", async () => {
    const sb = sandbox();
    sb.control({ xterm: { bounds: { x: 200, y: 300, width: 300, height: 200 }, z_index: 5 } });
    for (const [x, y, frame] of [[250, 290, true], [300, 400, false]] as const) {
      for (const grant of [[], fg]) {
        const e = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", String(x), "--y", String(y), ...grant]), "click", "POLICY_DENIED");
        expect(e.details).toMatchObject({ reason: "point-outside-target", pid: 4343, windowId: XTERM_WINDOW, ...(frame ? { frame: true } : {}) });
      }
    }
    expect(mutations(sb)).toEqual([]);
  });
});

describe("refused by the helper's guard: points only the helper knows", () => {
  it("a scroll at the pointer's position while the pointer rests over the terminal: POLICY_DENIED from the helper, nothing delivered", async () => {
    const sb = sandbox();
    sb.control({ pointer: { x: 100, y: 800 } });
    const e = expectError(await cli(sb, ["scroll", "--app", "fixture-app", "--direction", "down", ...fg]), "scroll", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "point-outside-target", delivery: "not_dispatched" });
    const sent = inputs(sb);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args.pointer_guard).toEqual(BOTH);
    // The audit records the refusal as a denial.
    const { readFileSync } = await import("node:fs");
    const audit = readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(audit.at(-1)).toMatchObject({ command: "scroll", decision: "deny", outcome: "POLICY_DENIED" });
  });

  it("over the terminal's title bar (its frame), the helper refuses too", async () => {
    const sb = sandbox();
    sb.control({ pointer: { x: 100, y: 690 } });
    const e = expectError(await cli(sb, ["scroll", "--app", "fixture-app", "--direction", "down", ...fg]), "scroll", "POLICY_DENIED");
    expect(e.details.reason).toBe("point-outside-target");
  });

  it("over a window of the target denied by title, the helper refuses (it is not in the guard)", async () => {
    const sb = sandbox();
    const policy = denySecondWindow(sb);
    sb.control({ pointer: { x: 950, y: 60 } });
    const e = expectError(await cli(sb, ["scroll", "--app", "fixture-app", "--direction", "down", "--policy", policy, ...fg]), "scroll", "POLICY_DENIED");
    expect(e.details.reason).toBe("point-outside-target");
    expect(inputs(sb)[0]!.args.pointer_guard).toEqual({ pid: 4242, windows: [FIXTURE_WINDOW] });
  });
});

describe("a helper without input.pointer_guard is refused pointer input", () => {
  const mode = "drop-cap:input.pointer_guard";
  it("drag, scroll, move and a click that must be input: ACTION_UNSUPPORTED naming the capability, nothing sent", async () => {
    const sb = sandbox();
    for (const argv of [
      ["drag", "--app", "fixture-app", "--from-x", "100", "--from-y", "400", "--to-x", "300", "--to-y", "450"],
      ["scroll", "--app", "fixture-app", "--direction", "down", "--x", "400", "--y", "300"],
      ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--button", "right"],
      // A left click at a point over no element: it turns out to be input after the hit test.
      ["click", "--app", "fixture-app", "--x", "700", "--y", "500"],
    ]) {
      const e = expectError(await cli(sb, [...argv, ...fg], { mode }), argv[0]!, "ACTION_UNSUPPORTED");
      expect(String(e.details.capability)).toContain("input.pointer_guard");
    }
    const move = expectError(await run(sb, { app: "fixture-app", steps: [{ action: "move", x: 400, y: 300 }] }, fg, { mode }), "run", "ACTION_UNSUPPORTED");
    expect(String(move.details.capability)).toContain("input.pointer_guard");
    expect(mutations(sb)).toEqual([]);
  });

  it("a point click that presses an element through accessibility sends no pointer event: still allowed", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "50", "--y", "50"], { mode }), "click");
    expect(r.route).toBe("accessibility");
    expect(mutations(sb).map((m) => m.op)).toEqual(["element_action"]);
  });
});
