// Supervisor hygiene (issue 9, B): the capability gate covers every op; a
// helper that misbehaves (crash loop, protocol breaches, timeouts, no hello)
// is told apart from one that is missing, with a remediation that fits; the
// stderr tail holds only the helper's own lines; an unknown error code from
// the helper (golden vector 19) reaches the caller as HELPER_ERROR.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_REMEDIATION } from "../../src/protocol/errors.ts";
import { requiredCapabilities, type Supervisor } from "../../src/helpers/supervisor.ts";
import { OPS, type OpArgs, type OpName } from "../../src/wire/messages.ts";
import { cleanupSandboxes, FAKE, FIXTURE_WINDOW, isAlive, rejection, sandbox, useSupervisors, type Sandbox } from "./harness.ts";

const supervise = useSupervisors();
afterAll(cleanupSandboxes);

const INSTALL = DEFAULT_REMEDIATION.HELPER_UNAVAILABLE;

/** Valid args for every op (the fake helper answers all of them). */
function argsFor(sb: Sandbox): { [O in OpName]: OpArgs<O> } {
  return {
    permissions: {},
    list_apps: {},
    list_windows: { pid: null },
    get_tree: { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 100, max_nodes: 100 },
    screenshot: { window_id: FIXTURE_WINDOW, path: join(sb.dir, "s.png"), redact_secure: true, redact: [] },
    hit_test: { x: 50, y: 60 },
    element_action: { pid: 4242, window_id: FIXTURE_WINDOW, locator: { path: [0], role: "button", native_role: "push button", name: "OK", identifier: "ok-button" }, action: "click", text: null, start: null, end: null, action_name: null },
    input: { steps: [{ kind: "move", x: 1, y: 1 }], restore_pointer: true },
    watch_user_input: { enabled: false },
    set_accessibility: { enabled: true },
    focused_element: { pid: 4242 },
    settle: { pid: 4242, quiet_ms: 50, max_ms: 200 },
    // ---- issue 13: clipboard
    clipboard_get: { selection: "clipboard", read_text: false, max_bytes: 1024 },
    clipboard_set: { selection: "clipboard", text: null },
    paste: { selection: "clipboard", text: "x", chord: ["ctrl", "v"], focus: { window_id: FIXTURE_WINDOW, pid: 4242, activate: false }, restore: true, wait_ms: 100 },
    // ---- end clipboard
    // ---- issue 13: menus
    menu_tree: { pid: 4242, window_id: FIXTURE_WINDOW, root: null, max_nodes: 10, max_depth: 4 },
    menu_close: { pid: 4242, window_id: FIXTURE_WINDOW, opener: { path: [9, 0], role: "menu", native_role: "menu", name: "File", identifier: "menu-file" } },
    // ---- end menus
    // ---- issue 13: app lifecycle
    list_installed: {},
    launch: { executable: "/usr/bin/fixture-app", args: [], desktop_id: null },
    launch_status: { pid: 4242 },
    window_op: { window_id: FIXTURE_WINDOW, op: "activate" },
    // ---- end lifecycle
    // ---- issue 15: click
    point_click: { x: 700, y: 500, pid: 4242, button: "left", count: 1, windows: [FIXTURE_WINDOW], press: null, hold_words: [], expect: null, restore_pointer: true },
    // ---- end click
  };
}

describe("capability gate", () => {
  const gated = (Object.keys(OPS) as OpName[]).filter((op) => OPS[op].capability !== null);

  it("covers every op that names a capability", () => {
    expect(gated.sort()).toEqual(
      [
        "focused_element", "get_tree", "hit_test", "list_apps", "list_windows", "permissions", "screenshot", "set_accessibility", "settle", "watch_user_input",
        // ---- issue 13: clipboard
        "clipboard_get", "clipboard_set", "paste",
        // ---- end clipboard
        // ---- issue 13: menus
        "menu_close", "menu_tree",
        // ---- end menus
        // ---- issue 13: app lifecycle
        "launch", "launch_status", "list_installed", "window_op",
        // ---- end lifecycle
        "point_click", // issue 15: click
      ].sort(),
    );
  });

  for (const op of gated) {
    it(`${op}: a helper without ${OPS[op].capability} -> ACTION_UNSUPPORTED, nothing sent`, async () => {
      const sb = sandbox();
      const cap = OPS[op].capability!;
      const sup = supervise(sb, `drop-cap:${cap}`);
      const err = await rejection(sup.request(op, argsFor(sb)[op] as never));
      expect(err.code).toBe("ACTION_UNSUPPORTED");
      expect(err.details).toMatchObject({ op, capability: cap });
      expect(sb.requests()).toEqual([]);
      // The helper is fine otherwise: other ops still go through.
      const other = op === "list_apps" ? "list_windows" : "list_apps";
      await sup.request(other, argsFor(sb)[other] as never);
      expect(sb.ops()).toEqual([other]);
    });
  }

  it("element_action and input: by action and by step kind, and the focus guard", async () => {
    const sb = sandbox();
    const args = argsFor(sb);
    expect(requiredCapabilities("element_action", { ...args.element_action, action: "set_value" })).toEqual(["action.set_value"]);
    expect(requiredCapabilities("input", { steps: [{ kind: "type", text: "x" }, { kind: "wait", ms: 1 }], restore_pointer: false, focus: { window_id: 1, pid: 2, activate: false } }).sort()).toEqual(["input.focus_guard", "input.keyboard"]);
    expect(requiredCapabilities("input", { steps: [{ kind: "click", x: 1, y: 1, button: "left", count: 1, modifiers: ["ctrl"] }], restore_pointer: true }).sort()).toEqual(["input.keyboard", "input.pointer"]);
    expect(requiredCapabilities("input", { steps: [{ kind: "wait", ms: 1 }], restore_pointer: false })).toEqual([]);

    const noClick = supervise(sb, "drop-cap:action.click");
    expect((await rejection(noClick.request("element_action", args.element_action))).details).toMatchObject({ op: "element_action", capability: "action.click", delivery: "not_dispatched" });
    const noPointer = supervise(sb, "drop-cap:input.pointer");
    expect((await rejection(noPointer.request("input", args.input))).details.capability).toBe("input.pointer");
    const noGuard = supervise(sb, "drop-cap:input.focus_guard");
    const keys: OpArgs<"input"> = { steps: [{ kind: "tap", keys: ["ctrl", "s"], repeat: 1 }], restore_pointer: false, focus: { window_id: FIXTURE_WINDOW, pid: 4242, activate: false } };
    expect((await rejection(noGuard.request("input", keys))).details.capability).toBe("input.focus_guard");
    expect(sb.requests()).toEqual([]);
    // Without a guard in the request, the same helper takes keyboard input.
    await noGuard.request("input", { ...keys, focus: null });
    expect(sb.ops()).toEqual(["input"]);
  });
});

describe("a misbehaving helper is not a missing one", () => {
  it("not found -> HELPER_UNAVAILABLE spawn-failed, with the install remediation", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "", { path: join(sb.dir, "no-such-helper"), env: sb.env() });
    const err = await rejection(sup.request("list_apps", {}));
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "spawn-failed", errno: "ENOENT" });
    expect(err.remediation).toBe(INSTALL);
    // Never ran, so never a crash: asking again says the same, not "giving up".
    for (let i = 0; i < 5; i++) expect((await rejection(sup.request("list_apps", {}))).details.reason).toBe("spawn-failed");
  });

  it("crashes repeatedly -> HELPER_UNAVAILABLE crash-loop: path, count, window, stderr tail of its own lines only", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "crash-on:list_apps", { maxCrashes: 3 });
    let last = await rejection(sup.request("list_apps", {}));
    for (let i = 0; i < 5 && last.details.reason !== "crash-loop"; i++) last = await rejection(sup.request("list_apps", {}));
    expect(last.code).toBe("HELPER_UNAVAILABLE");
    expect(last.details).toMatchObject({ reason: "crash-loop", helperPath: FAKE, windowS: 30 });
    expect(last.message).toMatch(/giving up/);
    expect(last.remediation).not.toBe(INSTALL);
    expect(last.remediation).toContain(FAKE);
    expect(last.remediation).toMatch(/keeps failing \(\d+ crash(es)? in \d+ s\)/);
    expect(last.remediation).toContain("details.stderrTail");
    const tail = String(last.details.stderrTail);
    expect(tail).toMatch(/fake-helper \d+ starting \(crash-on:list_apps\)/);
    for (const line of tail.split("\n")) expect(line).toMatch(/^fake-helper \d+ starting/);
    expect(String(last.details.lastDiagnostic)).toMatch(/exited with 1 request\(s\) in flight/);
  });

  it("breaks the protocol (garbage) on a read twice -> HELPER_UNAVAILABLE lost, protocol; diagnostics kept apart from its stderr", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "garbage");
    const err = await rejection(sup.request("list_apps", {}));
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "lost", lost: "protocol", op: "list_apps", helperPath: FAKE });
    expect(err.remediation).not.toBe(INSTALL);
    expect(err.remediation).toMatch(/broke the wire protocol during list_apps twice/);
    expect(String(err.details.lastDiagnostic)).toMatch(/protocol error: bad frame from helper/);
    // The helper's stderr holds the helper's lines only; deckhand's notes are in diagnostics.
    expect(sup.stderr.tail(1000).some((l) => l.includes("[deckhand]") || l.includes("protocol error"))).toBe(false);
    expect(String(err.details.stderrTail)).not.toMatch(/protocol error/);
    expect(sup.diagnostics.tail(10).filter((l) => l.includes("protocol error"))).toHaveLength(2);
  });

  it("a mutation lost to a crash: ACTION_FAILED, delivery unknown, a remediation about the unknown outcome", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "crash-on:element_action");
    const err = await rejection(sup.request("element_action", argsFor(sb).element_action));
    expect(err.code).toBe("ACTION_FAILED");
    expect(err.details.delivery).toBe("unknown");
    expect(err.remediation).toMatch(/died during the action.*re-observe/);
    expect(String(err.details.stderrTail)).toMatch(/fake-helper \d+ starting/);
  });

  it("times out again and again -> TIMEOUT each time, then crash-loop naming the timeouts", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "hang-on:list_apps", { maxCrashes: 2, deadlines: { list_apps: 50 }, graceMs: 20 });
    expect((await rejection(sup.request("list_apps", {}))).code).toBe("TIMEOUT");
    expect((await rejection(sup.request("list_apps", {}))).code).toBe("TIMEOUT");
    const last = await rejection(sup.request("list_apps", {}));
    expect(last.code).toBe("HELPER_UNAVAILABLE");
    expect(last.details).toMatchObject({ reason: "crash-loop", failures: "2 timeouts" });
    expect(last.remediation).toMatch(/keeps failing \(2 timeouts in \d+ s\)/);
    expect(String(last.details.lastDiagnostic)).toMatch(/did not answer list_apps within 50 ms/);
  });

  it("no hello -> HELPER_UNAVAILABLE no-hello: started but silent", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "no-hello", { helloTimeoutMs: 150 });
    const err = await rejection(sup.start());
    expect(err.details).toMatchObject({ reason: "no-hello", helperPath: FAKE, helloTimeoutMs: 150 });
    expect(err.remediation).toMatch(/started but sent no hello within 150 ms/);
  });

  it("exits before its hello -> HELPER_UNAVAILABLE exited-before-hello with its last stderr line", async () => {
    const sb = sandbox();
    const script = join(sb.dir, "dying-helper.sh");
    writeFileSync(script, "#!/bin/sh\necho 'cannot open display :99' >&2\nexit 3\n");
    chmodSync(script, 0o755);
    const sup = supervise(sb, "", { path: script, env: sb.env() });
    const err = await rejection(sup.start());
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "exited-before-hello", exitCode: 3, helperPath: script });
    expect(err.details.stderrTail).toBe("cannot open display :99");
    expect(err.remediation).toMatch(/started but exited before its hello \(code 3/);
  });

  it("a first frame that is not a hello -> HELPER_PROTOCOL_ERROR saying it is not a deckhand helper", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "bad-hello");
    const err = await rejection(sup.start());
    expect(err.code).toBe("HELPER_PROTOCOL_ERROR");
    expect(err.remediation).toMatch(/not a deckhand helper/);
    expect(err.details.helperPath).toBe(FAKE);
  });
});

describe("unknown error code from the helper (golden vector 19)", () => {
  it("reaches the caller as HELPER_ERROR with details.helperCode; the helper is kept", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "vector-error:list_apps");
    await sup.start();
    const pid = sup.pid!;
    const err = await rejection(sup.request("list_apps", {}));
    expect(err.code).toBe("HELPER_ERROR");
    expect(err.message).toBe("a future refusal");
    expect(err.details).toMatchObject({ helperCode: "QUOTA_EXCEEDED", limit: 3 });
    expect(sup.stats.protocolErrors).toBe(0);
    expect(sup.pid).toBe(pid);
    expect(isAlive(pid)).toBe(true);
    // Not retried (it is an answer, not a lost helper), and the helper keeps serving.
    expect(sb.ops()).toEqual(["list_apps"]);
    const { result } = await sup.request("list_windows", { pid: 4242 });
    expect(result.windows).toHaveLength(2);
  });
});
