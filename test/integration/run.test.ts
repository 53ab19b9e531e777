// `deckhand run`: a program as JSON on stdin, validated whole before any step
// is dispatched.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, failedProgram, observeFixture, observedSandbox, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

describe("run from stdin", () => {
  it("runs every step and returns receipts and one final observation", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "wait", ms: 1 }, { action: "focus", elementIndex: 3 }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    const result = expectOk(r, "run");
    expect(result.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed", "completed"]);
    expect(result.firstFailure).toBeNull();
    expect(result.observation.snapshot.elementCount).toBe(7);
    expect(mutations(sb).map((m) => m.args.action)).toEqual(["click", "focus"]);
  });

  it("a failing step stops the program: failed, then unattempted, with firstFailure", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", observe: false, steps: [{ action: "click", elementIndex: 5 }, { action: "click", elementIndex: 1 }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    // ok:false with the failing step's code; every step's receipt in details.receipts.
    const e = expectError(r, "run", "ELEMENT_INDEX_NOT_FOUND");
    expect(e.message).toMatch(/^step 0 \(click\): /);
    expect(e.details).toMatchObject({ step: 0, delivery: "not_dispatched", stepsCompleted: 0, elementIndex: 5 });
    const { receipts, observation } = failedProgram(e, 2);
    expect(receipts.map((s) => s.status)).toEqual(["failed", "unattempted"]);
    expect(receipts[0]!.error!.code).toBe("ELEMENT_INDEX_NOT_FOUND");
    // observe: false -> no observation, and no settle (nothing was sent).
    expect(observation).toBeUndefined();
    expect(e.details.settle).toBeUndefined();
    expect(mutations(sb)).toEqual([]);
  });

  it("an invalid step anywhere -> INVALID_ARGUMENTS and nothing is dispatched", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }, { action: "set-value", elementIndex: 3 }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    const e = expectError(r, "run", "INVALID_ARGUMENTS");
    expect(e.details.path).toBe("steps.1.value");
    expect(mutations(sb)).toEqual([]);
  });

  it("a step with an unknown field -> INVALID_ARGUMENTS, nothing dispatched", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", steps: [{ action: "click", elementIndex: 1, allowForeground: true }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    expectError(r, "run", "INVALID_ARGUMENTS");
    expect(mutations(sb)).toEqual([]);
  });

  it("a click step with both an element and a point -> INVALID_ARGUMENTS before the first step runs", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", steps: [{ action: "click", elementIndex: 6 }, { action: "click", elementIndex: 1, x: 50, y: 50 }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    // The single command refuses this combination; a program step must too.
    expectError(r, "run", "INVALID_ARGUMENTS");
    expect(mutations(sb)).toEqual([]);
  });

  it("a foreground step later in the program without the grant -> refused before step 0 is sent", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", observe: false, steps: [{ action: "click", elementIndex: 1 }, { action: "hotkey", keys: ["ctrl", "s"] }] };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program) });
    const refused = r.envelope.ok ? r.envelope.result.steps[0].status !== "completed" : r.envelope.error!.code === "FOREGROUND_REQUIRED";
    expect(refused, JSON.stringify(r.envelope)).toBe(true);
    expect(mutations(sb)).toEqual([]);
  });

  it("not JSON -> INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["run"], { stdin: "{ steps: [" });
    expectError(r, "run", "INVALID_ARGUMENTS");
    expect(mutations(sb)).toEqual([]);
  });

  it("empty steps -> INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["run"], { stdin: JSON.stringify({ app: "fixture-app", steps: [] }) });
    expectError(r, "run", "INVALID_ARGUMENTS");
  });
});
