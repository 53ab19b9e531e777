// The engine in-process with a supervisor that has short deadlines: the
// envelope of a mutation that timed out says delivery unknown, and the next
// command runs on a fresh helper.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import { permissiveSafety } from "../../src/engine/safety.ts";
import { Supervisor, type SupervisorOptions } from "../../src/helpers/supervisor.ts";
import { runCommand } from "../../src/frontend/run-command.ts";
import { cleanupSandboxes, FAKE, isAlive, rejection, sandbox, waitFor, type Sandbox } from "./harness.ts";

const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});
afterAll(cleanupSandboxes);

/** A helper whose permission probe reports accessibility (a neutral id) as denied. */
class DenyingSupervisor extends Supervisor {
  override async request(...a: Parameters<Supervisor["request"]>): ReturnType<Supervisor["request"]> {
    if (a[0] === "permissions") {
      await this.start();
      return { result: { checks: [{ id: "accessibility", native_id: "bus", status: "denied", detail: "bus off", remediation: "enable accessibility" }] } } as never;
    }
    return await super.request(...a);
  }
}

function engineWith(sb: Sandbox, mode: string, opts: Partial<SupervisorOptions> = {}, foreground = false, Sup = Supervisor): Engine {
  const env = sb.env({ DECKHAND_FAKE_MODE: mode });
  const engine = new Engine({ helperPath: FAKE, env }, permissiveSafety(foreground));
  // Inject a supervisor with test deadlines in place of the default one.
  const sup = new Sup({ path: FAKE, env, ...opts });
  Object.assign(engine as unknown as Record<string, unknown>, { supervisor: sup, location: { path: FAKE, source: "flag" } });
  engines.push(engine);
  return engine;
}

const log = () => {};

describe("engine with short deadlines", () => {
  it("click that hangs -> TIMEOUT envelope, delivery unknown, helper restarted, element_action sent once", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "hang-on:element_action", { deadlines: { element_action: 150 }, graceMs: 50 });
    const state = await runCommand(engine, "get-app-state", { app: "fixture-app", noScreenshot: true }, {}, log);
    expect(state.ok).toBe(true);
    const oldPid = engine.currentSupervisor!.pid!;

    const env = await runCommand(engine, "click", { app: "fixture-app", elementIndex: 1 }, {}, log);
    expect(env).toMatchObject({ schemaVersion: 1, ok: false, command: "click", error: { code: "TIMEOUT", details: { delivery: "unknown" } } });
    await waitFor(() => !isAlive(oldPid), "the hung helper to be killed");

    const next = await runCommand(engine, "list-apps", {}, {}, log);
    expect(next.ok).toBe(true);
    expect(engine.currentSupervisor!.pid).not.toBe(oldPid);
    expect(sb.requests().filter((r) => r.op === "element_action")).toHaveLength(1);
  });

  it("a program whose first step hangs: failed with delivery unknown, the rest unattempted, no resend", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "hang-on:element_action", { deadlines: { element_action: 150 }, graceMs: 50 });
    await runCommand(engine, "get-app-state", { app: "fixture-app", noScreenshot: true }, {}, log);
    const { runProgramOutcome, runProgramValue } = await import("../../src/commands/index.ts");
    const program = { app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }, { action: "click", elementIndex: 6 }], observe: false };
    // A failed program is a failed request: the step's code, every receipt attached.
    const e = await rejection(runProgramValue(engine, program, {}));
    expect(e.code).toBe("TIMEOUT");
    expect(e.message).toMatch(/^step 0 \(click\): /);
    expect(e.details).toMatchObject({ step: 0, delivery: "unknown", stepsCompleted: 0 });
    const steps = e.program!.receipts as { status: string; delivery: string; error?: { code: string } }[];
    expect(steps.map((s) => s.status)).toEqual(["failed", "unattempted"]);
    expect(steps[0]).toMatchObject({ delivery: "unknown", error: { code: "TIMEOUT" } });
    expect(steps[1]!.delivery).toBe("not_dispatched");
    expect(sb.requests().filter((r) => r.op === "element_action")).toHaveLength(1);
    // The adapters' path gets the receipt itself next to the error (and nothing is resent by asking).
    const { receipt, failure } = await runProgramOutcome(engine, program, {});
    expect(failure).toMatchObject({ code: "TIMEOUT", details: { step: 0, delivery: "unknown" } });
    expect(receipt.firstFailure).toBe(0);
    expect(receipt.steps.map((s) => s.status)).toEqual(["failed", "unattempted"]);
    expect(receipt.steps[0]).toMatchObject({ delivery: "unknown", error: { code: "TIMEOUT" } });
    expect(sb.requests().filter((r) => r.op === "element_action")).toHaveLength(2);
  });

  it("a read that hangs inside get-app-state -> TIMEOUT envelope, no snapshot saved", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "hang-on:get_tree", { deadlines: { get_tree: 100 }, graceMs: 50 });
    const env = await runCommand(engine, "get-app-state", { app: "fixture-app", noScreenshot: true }, {}, log);
    expect(env).toMatchObject({ ok: false, error: { code: "TIMEOUT" } });
    const click = await runCommand(engine, "click", { app: "fixture-app", elementIndex: 1 }, {}, log);
    expect(click).toMatchObject({ ok: false, error: { code: "SNAPSHOT_REQUIRED" } });
  });
});

describe("failure order around the permission gate and stdin (in-process)", () => {
  function stdinSpy(value = "s3cret") {
    const spy = { calls: 0, readStdin: async () => { spy.calls++; return value; } };
    return spy;
  }

  it("denied permission + unknown app -> PERMISSION_DENIED; stdin not read", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "", {}, false, DenyingSupervisor);
    const stdin = stdinSpy();
    const env = await runCommand(engine, "set-value", { app: "no-such-app", elementIndex: 3, valueStdin: true }, { readStdin: stdin.readStdin }, log);
    expect(env).toMatchObject({ ok: false, error: { code: "PERMISSION_DENIED", details: { permission: "accessibility" } } });
    expect(stdin.calls).toBe(0);
    expect(sb.ops()).not.toContain("list_apps");
  });

  it("denied permission + dropped capability -> ACTION_UNSUPPORTED (action support comes first)", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "drop-cap:action.set_value", {}, false, DenyingSupervisor);
    const env = await runCommand(engine, "set-value", { app: "fixture-app", elementIndex: 3, value: "x" }, {}, log);
    expect(env).toMatchObject({ ok: false, error: { code: "ACTION_UNSUPPORTED" } });
  });

  it("dropped capability + --value-stdin -> ACTION_UNSUPPORTED, stdin not read", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "drop-cap:action.set_value");
    const stdin = stdinSpy();
    const env = await runCommand(engine, "set-value", { app: "fixture-app", elementIndex: 3, valueStdin: true }, { readStdin: stdin.readStdin }, log);
    expect(env).toMatchObject({ ok: false, error: { code: "ACTION_UNSUPPORTED" } });
    expect(stdin.calls).toBe(0);
  });

  it("stdin is read before app resolution: --value-stdin + unknown app reads stdin once, then APP_NOT_FOUND", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "");
    const stdin = stdinSpy();
    const env = await runCommand(engine, "set-value", { app: "no-such-app", elementIndex: 3, valueStdin: true }, { readStdin: stdin.readStdin }, log);
    expect(env).toMatchObject({ ok: false, error: { code: "APP_NOT_FOUND" } });
    expect(stdin.calls).toBe(1);
    expect(JSON.stringify(env)).not.toContain("s3cret");
  });

  it("in serve-like modes without stdin, --value-stdin is INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const engine = engineWith(sb, "");
    const env = await runCommand(engine, "set-value", { app: "fixture-app", elementIndex: 3, valueStdin: true }, {}, log);
    expect(env).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
    expect(sb.ops()).not.toContain("element_action");
  });
});
