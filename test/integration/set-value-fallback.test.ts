// Wire 1.2 contract, item 4: set-value's typing fallback. When element_action
// set_value fails with VERIFICATION_FAILED (sent, read back wrong) or
// ACTION_UNSUPPORTED reason "no-editable-text", and the operator granted
// foreground input, and the element is not secure: focus it (element_action
// focus), check focused_element is that element (role + name) and not secure,
// send [tap ctrl+a, type text] under the focus guard, read the focused
// element's value back. Receipt: fallback "focus+select-all+type",
// fallbackFrom, route foreground_input. Without the grant the error stands.
// Fake fixture main window 0x200001: Name is element 3 (path [2]), Password
// element 4 (path [3], secure).
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, failedProgram, FIXTURE_WINDOW, observedSandbox, type LogEntry, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const fg = ["--allow-foreground"];
const NAME = { path: [2], role: "text_field", native_role: "text", name: "Name", identifier: "name-entry" };
const setName = (value: string, extra: string[] = []) => ["set-value", "--app", "fixture-app", "--element-index", "3", "--value", value, ...extra];
/** What the fallback and the accessibility route sent: element_action, focused_element and input, in order. */
const sent = (sb: Sandbox) => sb.requests().filter((r) => ["element_action", "input", "focused_element"].includes(r.op));
const brief = (r: LogEntry) => (r.op === "element_action" ? `element_action:${r.args.action}` : r.op);

/** The exact input the fallback sends: select all, then the text, under the focus guard, pointer untouched. */
function expectFallbackInput(r: LogEntry | undefined, text: string, activate = true): void {
  expect(r?.op).toBe("input");
  expect(r!.args).toEqual({
    steps: [
      { kind: "tap", keys: ["ctrl", "a"], repeat: 1 },
      { kind: "type", text },
    ],
    restore_pointer: false,
    focus: { window_id: FIXTURE_WINDOW, pid: 4242, activate },
  });
}

describe("set-value falls back to focus + select-all + typing under the grant", () => {
  for (const [why, code] of [
    ["verification", "VERIFICATION_FAILED"],
    ["no-editable-text", "ACTION_UNSUPPORTED"],
  ] as const) {
    it(`${code}${why === "no-editable-text" ? " (no-editable-text)" : ""}: focus, check focus, [ctrl+a, type], read back; the receipt says so`, async () => {
      const sb = await observedSandbox();
      const result = expectOk(await cli(sb, setName("Ada Lovelace", fg), { mode: `set-value-fails:${why},track-focus` }), "set-value");
      expect(result).toMatchObject({
        delivery: "submitted",
        route: "foreground_input",
        fallback: "focus+select-all+type",
        fallbackFrom: code,
        verification: { verified: true },
        cleanup: { keys_released: true },
      });
      const log = sent(sb);
      expect(log.map(brief)).toEqual(["element_action:set_value", "element_action:focus", "focused_element", "input", "focused_element"]);
      expect(log[0]!.args).toMatchObject({ action: "set_value", text: "Ada Lovelace", locator: NAME });
      expect(log[1]!.args).toMatchObject({ action: "focus", window_id: FIXTURE_WINDOW, locator: NAME, text: null });
      expectFallbackInput(log[3], "Ada Lovelace");
    });

    it(`${code} without the grant: the accessibility route's error stands, no focus, no keys`, async () => {
      const sb = await observedSandbox();
      const e = expectError(await cli(sb, setName("Ada"), { mode: `set-value-fails:${why},track-focus` }), "set-value", code);
      expect(e.details.delivery).toBe(why === "verification" ? "submitted" : "not_dispatched");
      if (why === "no-editable-text") expect(e.details.reason).toBe("no-editable-text");
      expect(e.details.fallback).toBeUndefined();
      expect(sent(sb).map(brief)).toEqual(["element_action:set_value"]);
    });
  }

  it("ACTION_UNSUPPORTED for another reason: no fallback, even with the grant", async () => {
    const sb = await observedSandbox();
    const e = expectError(await cli(sb, setName("Ada", fg), { mode: "set-value-fails:unsupported,track-focus" }), "set-value", "ACTION_UNSUPPORTED");
    expect(e.details.fallback).toBeUndefined();
    expect(sent(sb).map(brief)).toEqual(["element_action:set_value"]);
  });

  it("a secure target element: refused (builtin secure_field) before anything is sent, no fallback, even with the grant", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "4", "--value", "hunter2", ...fg], { mode: "set-value-fails:no-editable-text,track-focus" });
    const e = expectError(r, "set-value", "POLICY_DENIED");
    expect(e.details).toMatchObject({ rule: "builtin:secure_field", delivery: "not_dispatched" });
    expect(e.details.fallback).toBeUndefined();
    expect(sent(sb)).toEqual([]);
  });

  it("focus does not land on the element: ACTION_FAILED focus-elsewhere, no keys; the set_value already sent stays submitted", async () => {
    for (const [why, code, delivery] of [
      ["verification", "VERIFICATION_FAILED", "submitted"],
      ["no-editable-text", "ACTION_UNSUPPORTED", "not_dispatched"],
    ] as const) {
      const sb = await observedSandbox();
      // No track-focus: focusing does not move the scripted keyboard focus.
      const e = expectError(await cli(sb, setName("Ada", fg), { mode: `set-value-fails:${why}` }), "set-value", "ACTION_FAILED");
      expect(e.details).toMatchObject({ reason: "focus-elsewhere", fallback: "focus+select-all+type", fallbackFrom: code, delivery });
      // focused_element is polled (bounded) while focus has not landed; never an input op.
      const ops = sent(sb).map(brief);
      expect(ops.slice(0, 3)).toEqual(["element_action:set_value", "element_action:focus", "focused_element"]);
      expect(new Set(ops.slice(2))).toEqual(new Set(["focused_element"]));
    }
  });

  it("focus is on a secure field: POLICY_DENIED secure-field-focused, no keys", async () => {
    const sb = await observedSandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [3] } });
    const e = expectError(await cli(sb, setName("Ada", fg), { mode: "set-value-fails:no-editable-text,track-focus" }), "set-value", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "secure-field-focused", fallbackFrom: "ACTION_UNSUPPORTED", delivery: "not_dispatched" });
    expect(sent(sb).some((q) => q.op === "input")).toBe(false);
  });

  it("the typed value does not read back: VERIFICATION_FAILED from the fallback, keys sent once, not retried", async () => {
    const sb = await observedSandbox();
    const e = expectError(await cli(sb, setName("Ada Lovelace", fg), { mode: "set-value-fails:verification,track-focus,garble-typing" }), "set-value", "VERIFICATION_FAILED");
    expect(e.details).toMatchObject({ delivery: "submitted", fallback: "focus+select-all+type", fallbackFrom: "VERIFICATION_FAILED", readBackLength: 11 });
    expect(JSON.stringify(e)).not.toContain("Lovelace");
    expect(sent(sb).filter((q) => q.op === "input")).toHaveLength(1);
    expect(sent(sb).filter((q) => q.args.action === "set_value")).toHaveLength(1);
  });

  it("a helper without focused_element: no focus and no keys (the check cannot be made)", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, setName("Ada", fg), { mode: "set-value-fails:verification,track-focus,drop-cap:focused_element" });
    const e = expectError(r, "set-value", "ACTION_UNSUPPORTED");
    // The set_value itself was sent (VERIFICATION_FAILED): still submitted.
    expect(e.details).toMatchObject({ capability: "focused_element", delivery: "submitted" });
    expect(sent(sb).map(brief)).toEqual(["element_action:set_value"]);
  });

  it("in a program: the step's receipt carries the fallback; the next keys reuse the focus guard without a second activation", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", noScreenshot: true, format: "full", steps: [{ action: "set-value", elementIndex: 3, value: "Ada" }, { action: "press-key", key: "Tab" }] };
    const result = expectOk(await cli(sb, ["run", ...fg], { stdin: JSON.stringify(program), mode: "set-value-fails:no-editable-text,track-focus" }), "run");
    expect(result.steps[0]).toMatchObject({
      status: "completed",
      delivery: "submitted",
      route: "foreground_input",
      fallback: "focus+select-all+type",
      fallbackFrom: "ACTION_UNSUPPORTED",
      verification: { verified: true },
    });
    expect(result.steps[1]).toMatchObject({ status: "completed", route: "foreground_input" });
    const inputs = sent(sb).filter((q) => q.op === "input");
    expect(inputs).toHaveLength(2);
    expectFallbackInput(inputs[0], "Ada", true);
    expect((inputs[1]!.args.focus as { activate: boolean }).activate).toBe(false);
    // The observation after the program shows the typed value.
    expect(result.observation.snapshot.elements.find((x: { title: string }) => x.title === "Name").value).toBe("Ada");
  });

  it("in a failed program: the fallback's failure is the program's error, with the receipts", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "set-value", elementIndex: 3, value: "Ada" }, { action: "click", elementIndex: 6 }] };
    const e = expectError(await cli(sb, ["run", ...fg], { stdin: JSON.stringify(program), mode: "set-value-fails:verification" }), "run", "ACTION_FAILED");
    expect(e.message).toMatch(/^step 1 \(set-value\): /);
    expect(e.details).toMatchObject({ step: 1, stepsCompleted: 1, delivery: "submitted", reason: "focus-elsewhere", fallbackFrom: "VERIFICATION_FAILED" });
    const { receipts } = failedProgram(e, 3);
    expect(receipts.map((x) => [x.status, x.delivery])).toEqual([
      ["completed", "submitted"],
      ["failed", "submitted"],
      ["unattempted", "not_dispatched"],
    ]);
    expect(sent(sb).some((q) => q.op === "input")).toBe(false);
  });
});
