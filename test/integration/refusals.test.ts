// Refusal codes that other suites do not provoke: a helper whose first frame
// is not a hello, a program cancelled mid-way, a failed capture.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, observedSandbox, sandbox, ServeProcess } from "./harness.ts";

afterAll(cleanupSandboxes);
const actions = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");

describe("refusals", () => {
  it("a first frame that is not a hello -> HELPER_PROTOCOL_ERROR", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["list-apps"], { mode: "bad-hello" }), "list-apps", "HELPER_PROTOCOL_ERROR");
    expect(e.details.type).toBe("response");
    expect(sb.ops()).toEqual([]);
  });

  it("a cancel request stops a running program before its next step -> CANCELLED, the rest unattempted", async () => {
    const sb = await observedSandbox();
    const p = new ServeProcess(sb);
    try {
      const program = { app: "fixture-app", steps: [{ action: "wait", ms: 600 }, { action: "click", elementIndex: 1 }, { action: "click", elementIndex: 6 }], observe: false };
      p.send({ id: "prog", command: "run", args: { program } });
      await new Promise((r) => setTimeout(r, 150));
      p.send({ id: "stop", command: "cancel", args: { id: "prog" } });
      const lines = await p.waitLines(2);
      const cancel = lines.find((l) => l.id === "stop");
      expect(cancel.result).toEqual({ id: "prog", cancelled: true });
      const run = lines.find((l) => l.id === "prog");
      // Under load the cancel may even land before the wait starts: either way
      // the first step not completed is CANCELLED and nothing after it runs.
      expect(run).toMatchObject({ ok: false, error: { code: "CANCELLED" } });
      const steps = run.error.details.receipts;
      const k = run.error.details.step;
      expect(steps).toHaveLength(3);
      expect(k === 0 || k === 1).toBe(true);
      expect(steps[k].error.code).toBe("CANCELLED");
      expect(steps[k].delivery).toBe("not_dispatched");
      expect(steps.slice(0, k).every((s: any) => s.status === "completed")).toBe(true);
      expect(steps.slice(k + 1).every((s: any) => s.status === "unattempted")).toBe(true);
      expect(actions(sb.ops())).toEqual([]);
    } finally {
      await p.close();
    }
  });

  it("a failed capture: get-app-state keeps the tree and says screenshotError SCREENSHOT_FAILED; screenshot fails with it", async () => {
    const sb = sandbox();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app"], { mode: "fail-screenshot" }), "get-app-state");
    expect(state.screenshot).toBeNull();
    expect(state.screenshotError.code).toBe("SCREENSHOT_FAILED");
    expect(state.snapshot.elementCount).toBeGreaterThan(0);
    expectError(await cli(sb, ["screenshot", "--app", "fixture-app"], { mode: "fail-screenshot" }), "screenshot", "SCREENSHOT_FAILED");
  });
});
