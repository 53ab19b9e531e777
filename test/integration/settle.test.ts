// Wire 1.2 contract, item 3: after a program's actions the final observation
// first asks the helper to wait for the app to settle (op `settle`, 100 ms
// quiet, at most 500 ms), and the receipt reports what the helper said:
// receipt.settle {waitedMs, events, settled} (single commands: result.settle).
// A helper without `settle`, or a settle that fails, costs no wait and does
// not fail the program.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectOk, FIXTURE_WINDOW, observedSandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const PROGRAM = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "set-value", elementIndex: 3, value: "Ada" }] };
const run = (sb: Sandbox, program: object, mode?: string) => cli(sb, ["run"], { stdin: JSON.stringify(program), mode });
const settles = (sb: Sandbox) => sb.requests().filter((r) => r.op === "settle");

describe("settle before the final observation", () => {
  it("one settle request for the target's pid, after the last action and before the observation's tree", async () => {
    const sb = await observedSandbox();
    const result = expectOk(await run(sb, PROGRAM), "run");
    expect(result.settle).toEqual({ waitedMs: 100, events: 0, settled: true });
    expect(settles(sb).map((r) => r.args)).toEqual([{ pid: 4242, quiet_ms: 100, max_ms: 500 }]);
    const ops = sb.ops();
    const lastAction = ops.lastIndexOf("element_action");
    const settleAt = ops.indexOf("settle");
    const treeAt = ops.indexOf("get_tree", lastAction);
    expect(lastAction).toBeGreaterThanOrEqual(0);
    expect(settleAt, ops.join(",")).toBeGreaterThan(lastAction);
    expect(treeAt, ops.join(",")).toBeGreaterThan(settleAt);
    expect(result.observation.snapshot.elementCount).toBe(7);
  });

  it("the report is the helper's answer, passed through (an app still busy at the bound: settled false)", async () => {
    const sb = await observedSandbox();
    sb.control({ settle: { waited_ms: 500, events: 37, settled: false } });
    const result = expectOk(await run(sb, PROGRAM), "run");
    expect(result.settle).toEqual({ waitedMs: 500, events: 37, settled: false });
    // Still observed: a busy app does not fail the program.
    expect(result.firstFailure).toBeNull();
    expect(result.observation.snapshot.snapshotId).toMatch(/^cs_/);
  });

  it("a single command observing its result (--state) reports result.settle; without --state no settle is asked", async () => {
    const sb = await observedSandbox();
    const withState = expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1", "--state"]), "click");
    expect(withState.settle).toEqual({ waitedMs: 100, events: 0, settled: true });
    expect(withState.observation.snapshot.snapshotId).toMatch(/^cs_/);
    expect(settles(sb)).toHaveLength(1);
    const plain = expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]), "click");
    expect(plain.settle).toBeUndefined();
    expect(plain.observation).toBeNull();
    expect(settles(sb)).toHaveLength(1);
  });

  it("observe:false -> no settle request and no report", async () => {
    const sb = await observedSandbox();
    const result = expectOk(await run(sb, { ...PROGRAM, observe: false }), "run");
    expect(result.settle).toBeUndefined();
    expect(settles(sb)).toEqual([]);
  });

  it("get-app-state (no action) never waits for settle", async () => {
    const sb = await observedSandbox();
    expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--window-id", String(FIXTURE_WINDOW)]), "get-app-state");
    expect(settles(sb)).toEqual([]);
  });

  it("a helper without the settle capability: no request, reported as no wait (settled false), observed anyway", async () => {
    const sb = await observedSandbox();
    const result = expectOk(await run(sb, PROGRAM, "drop-cap:settle"), "run");
    expect(result.settle).toEqual({ waitedMs: 0, events: 0, settled: false });
    expect(settles(sb)).toEqual([]);
    expect(result.observation.snapshot.elementCount).toBe(7);
  });

  it("a settle that fails (the app exited mid-wait) does not fail the program: no wait reported, observed anyway, nothing resent", async () => {
    const sb = await observedSandbox();
    const result = expectOk(await run(sb, PROGRAM, "error-on:settle:APP_EXITED"), "run");
    expect(result.firstFailure).toBeNull();
    expect(result.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed"]);
    expect(result.settle).toEqual({ waitedMs: 0, events: 0, settled: false });
    expect(settles(sb)).toHaveLength(1);
    expect(result.observation.snapshot.elementCount).toBe(7);
    expect(sb.ops().filter((o) => o === "element_action")).toHaveLength(2);
  });
});
