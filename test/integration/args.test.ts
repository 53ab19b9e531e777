// Argument errors at every front end (issue 9, A1 and A3): --window-id with
// --window-index is INVALID_ARGUMENTS in the CLI, serve and programs; a
// missing flag is named; a single command's errors never speak of "step 0".
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, FIXTURE_WINDOW, observedSandbox, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});
afterAll(cleanupSandboxes);

const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

describe("--window-id with --window-index", () => {
  it("CLI: INVALID_ARGUMENTS naming both flags, before any helper request", async () => {
    const sb = sandbox();
    for (const argv of [
      ["get-app-state", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--window-index", "0"],
      ["click", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--window-index", "1", "--element-index", "1"],
      ["screenshot", "--app", "fixture-app", "--window-index", "0", "--window-id", String(FIXTURE_WINDOW)],
    ]) {
      const e = expectError(await cli(sb, argv), argv[0]!, "INVALID_ARGUMENTS");
      expect(e.message).toMatch(/--window-id and --window-index/);
    }
    expect(sb.requests()).toEqual([]);
  });

  it("serve: INVALID_ARGUMENTS with the request's id, naming both fields; a program too", async () => {
    const sb = sandbox();
    const s = new ServeProcess(sb);
    procs.push(s);
    const a = await s.request({ id: 1, command: "get-app-state", args: { app: "fixture-app", windowId: FIXTURE_WINDOW, windowIndex: 0 } });
    expect(a).toMatchObject({ id: 1, ok: false, command: "get-app-state", error: { code: "INVALID_ARGUMENTS", details: { field: "windowIndex" } } });
    expect(a.error.message).toMatch(/windowId and windowIndex/);
    const b = await s.request({ id: 2, command: "run", args: { program: { app: "fixture-app", windowId: FIXTURE_WINDOW, windowIndex: 0, steps: [{ action: "click", elementIndex: 1 }] } } });
    expect(b).toMatchObject({ id: 2, ok: false, command: "run", error: { code: "INVALID_ARGUMENTS", details: { path: "windowIndex" } } });
    expect(mutations(sb)).toEqual([]);
    expect(sb.requests().filter((r) => r.op === "get_tree")).toEqual([]);
  });

  it("run (stdin program): INVALID_ARGUMENTS, nothing dispatched", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", windowId: FIXTURE_WINDOW, windowIndex: 0, steps: [{ action: "click", elementIndex: 1 }] };
    const e = expectError(await cli(sb, ["run"], { stdin: JSON.stringify(program) }), "run", "INVALID_ARGUMENTS");
    expect(e.message).toMatch(/windowId and windowIndex/);
    expect(mutations(sb)).toEqual([]);
  });
});

describe("missing flags and single-command wording", () => {
  it("a missing required flag says which flag", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["click", "--element-index", "1"]), "click", "INVALID_ARGUMENTS");
    expect(e.message).toBe("--app is required");
    expect(e.details.flag).toBe("--app");
    const s = new ServeProcess(sb);
    procs.push(s);
    const line = await s.request({ id: "m", command: "click", args: { elementIndex: 1 } });
    expect(line.error).toMatchObject({ code: "INVALID_ARGUMENTS", message: "app is required", details: { field: "app" } });
    expect(sb.requests()).toEqual([]);
  });

  it("a single command's shape, capability and foreground refusals never mention step 0", async () => {
    const sb = sandbox();
    const shape = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "5"]), "click", "INVALID_ARGUMENTS");
    expect(shape.message).toBe("click: a point needs both x and y");
    const unsupported = expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s", "--allow-foreground"], { mode: "drop-cap:input.keyboard" }), "hotkey", "ACTION_UNSUPPORTED");
    const foreground = expectError(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "x"]), "type-text", "FOREGROUND_REQUIRED");
    const badChord = expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+", "--allow-foreground"]), "hotkey", "INVALID_ARGUMENTS");
    for (const e of [shape, unsupported, foreground, badChord]) {
      expect(e.message).not.toMatch(/step 0/);
      expect(e.details.step).toBeUndefined();
    }
    expect(unsupported.message).toMatch(/^hotkey needs /);
    expect(foreground.message).toMatch(/^type-text needs /);
    const s = new ServeProcess(sb);
    procs.push(s);
    const line = await s.request({ id: 1, command: "click", args: { app: "fixture-app", elementIndex: 1, x: 3, y: 4 } });
    expect(line.error.code).toBe("INVALID_ARGUMENTS");
    expect(line.error.message).not.toMatch(/step 0/);
    expect(mutations(sb)).toEqual([]);
  });

  it("a program still names its steps", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", steps: [{ action: "wait", ms: 1 }, { action: "click", x: 5 }] };
    const e = expectError(await cli(sb, ["run"], { stdin: JSON.stringify(program) }), "run", "INVALID_ARGUMENTS");
    expect(e.message).toMatch(/^step 1 \(click\): /);
    expect(e.details.step).toBe(1);
  });
});
