// The clipboard (issue 13) against the scripted helper: clipboard get's
// refusals read no text (the helper is asked for metadata only), clipboard
// set is confirm-hook gated and PAUSED applies, the paste step is
// foreground input that never goes into a secure field and reports a target
// that never asked for the text as a failure; the text given by stdin is in
// no output, audit line or state file.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { cleanupSandboxes, cli, expectError, expectOk, observeFixture, observedSandbox, sandbox, ServeProcess, type CliResult, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const FIXTURE = 4242;
const XTERM = 4343;
const fg = ["--allow-foreground"];
const newSecret = () => `clip-s3cr3t-${randomBytes(8).toString("hex")}`;

/** Write the fake helper's control file (the clipboard fields are this suite's; see fake-helper.mjs). */
function control(sb: Sandbox, c: Record<string, unknown>): void {
  writeFileSync(sb.controlPath, JSON.stringify(c));
}

const audit = (sb: Sandbox): Record<string, unknown>[] => {
  const p = join(sb.stateDir, "audit.jsonl");
  return existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [];
};

const gets = (sb: Sandbox) => sb.requests().filter((q) => q.op === "clipboard_get");

/** A confirm hook that records what it was told and allows. */
function recordingHook(sb: Sandbox): { cmd: string; seen: () => string } {
  const out = join(sb.dir, "hook-input.jsonl");
  const path = join(sb.dir, "hook.sh");
  writeFileSync(path, `#!/bin/sh\ncat >> ${out}\nexit 0\n`);
  chmodSync(path, 0o755);
  return { cmd: path, seen: () => (existsSync(out) ? readFileSync(out, "utf8") : "") };
}

function expectNowhere(sb: Sandbox, secret: string, runs: CliResult[]): void {
  for (const r of runs) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
  for (const f of sb.stateFiles()) expect(f.data.includes(secret), f.path).toBe(false);
}

describe("clipboard set", () => {
  it("without a confirm hook: CONFIRM_REQUIRED, nothing set, the refusal audited", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["clipboard", "set", "--text", "hello"]);
    const e = expectError(r, "clipboard-set", "CONFIRM_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(sb.ops()).not.toContain("clipboard_set");
    expect(audit(sb)).toContainEqual(expect.objectContaining({ command: "clipboard-set", decision: "deny", decision_source: "confirm", rule: "command:set_clipboard", outcome: "CONFIRM_REQUIRED" }));
  });

  it("--text-stdin with a hook that allows: set, the hook and the audit see no text, stdin's text only on the wire", async () => {
    const sb = sandbox();
    const hook = recordingHook(sb);
    const secret = newSecret();
    const set = await cli(sb, ["clipboard", "set", "--text-stdin", "--confirm-cmd", hook.cmd], { stdin: secret + "\n" });
    expect(expectOk(set, "clipboard-set")).toEqual({ selection: "clipboard", set: true, cleared: false, bytes: Buffer.byteLength(secret), ownerPid: 9100 });
    expect(sb.requests().find((q) => q.op === "clipboard_set")!.args).toEqual({ selection: "clipboard", text: secret });
    const told = JSON.parse(hook.seen().trim());
    expect(told).toMatchObject({ command: "clipboard-set", action: "set_clipboard", reason: "setting the clipboard", app: { id: null, pid: null } });
    expect(hook.seen()).not.toContain(secret);
    expect(audit(sb).map((a) => [a.command, a.decision, a.outcome])).toEqual([
      ["clipboard-set", "allow", "OK"],
      ["clipboard-set", "allow", "OK"],
    ]);
    // Read back (the text is the caller's own: no secure field anywhere).
    const get = await cli(sb, ["clipboard", "get"]);
    expect(expectOk(get, "clipboard-get")).toMatchObject({ text: secret, bytes: secret.length, truncated: false, owner: { name: "deckhand-helper", pid: 9100 } });
    expectNowhere(sb, secret, [set]);
  });

  it("exactly one of --text, --text-stdin, --clear; --clear empties the selection", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["clipboard", "set", "--text", "a", "--clear", "--confirm-cmd", "/bin/true"]), "clipboard-set", "INVALID_ARGUMENTS");
    expect(e.message).toMatch(/exactly one of --text, --text-stdin and --clear/);
    expectError(await cli(sb, ["clipboard", "set", "--confirm-cmd", "/bin/true"]), "clipboard-set", "INVALID_ARGUMENTS");
    expect(sb.ops()).toEqual([]);
    expectOk(await cli(sb, ["clipboard", "set", "--selection", "primary", "--text", "p", "--confirm-cmd", "/bin/true"]), "clipboard-set");
    const cleared = expectOk(await cli(sb, ["clipboard", "set", "--selection", "primary", "--clear", "--confirm-cmd", "/bin/true"]), "clipboard-set");
    expect(cleared).toEqual({ selection: "primary", set: true, cleared: true, bytes: 0, ownerPid: null });
    expect(expectOk(await cli(sb, ["clipboard", "get", "--selection", "primary"]), "clipboard-get")).toMatchObject({ text: null, owner: null });
  });

  it("PAUSED applies: nothing set, no hook run", async () => {
    const sb = sandbox();
    const hook = recordingHook(sb);
    expectOk(await cli(sb, ["pause"]), "pause");
    expectError(await cli(sb, ["clipboard", "set", "--text", "x", "--confirm-cmd", hook.cmd]), "clipboard-set", "PAUSED");
    expect(sb.ops()).not.toContain("clipboard_set");
    expect(hook.seen()).toBe("");
  });

  it("a helper without clipboard.set: ACTION_UNSUPPORTED before the hook", async () => {
    const sb = sandbox();
    const hook = recordingHook(sb);
    expectError(await cli(sb, ["clipboard", "set", "--text", "x", "--confirm-cmd", hook.cmd], { mode: "drop-cap:clipboard.set" }), "clipboard-set", "ACTION_UNSUPPORTED");
    expect(hook.seen()).toBe("");
  });
});

describe("clipboard get: refusals read no text", () => {
  const owned = (owner: number, extra: Record<string, unknown> = {}) => ({ clipboard: { clipboard: { text: "copied text", owner_pid: owner, ...extra } } });

  it("a secure field has focus: POLICY_DENIED secure-focus; the helper was asked for metadata only", async () => {
    const sb = sandbox();
    control(sb, { ...owned(FIXTURE), focused: { window_id: 0x200001, path: [3] } });
    const e = expectError(await cli(sb, ["clipboard", "get"]), "clipboard-get", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "secure-focus", rule: "builtin:secure_field" });
    expect(e.message).not.toContain("copied text");
    expect(gets(sb).map((q) => q.args.read_text)).toEqual([false]);
    expect(audit(sb)).toContainEqual(expect.objectContaining({ command: "clipboard-get", decision: "deny", outcome: "POLICY_DENIED", rule: "builtin:secure_field", app_id: "org.deckhand.Fixture" }));
  });

  it("the owner marks its content secret (a password manager): POLICY_DENIED secret-hint, no text read", async () => {
    const sb = sandbox();
    control(sb, owned(9100, { secret: true }));
    expect(expectError(await cli(sb, ["clipboard", "get"]), "clipboard-get", "POLICY_DENIED").details.reason).toBe("secret-hint");
    expect(gets(sb).map((q) => q.args.read_text)).toEqual([false]);
  });

  it("policy denies the owner app (a terminal): POLICY_DENIED owner-denied, no text read", async () => {
    const sb = sandbox();
    control(sb, owned(XTERM));
    const e = expectError(await cli(sb, ["clipboard", "get"]), "clipboard-get", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "owner-denied" });
    expect(gets(sb).map((q) => q.args.read_text)).toEqual([false]);
  });

  it("the owner app has a secure field focused (the copy likely came from it): POLICY_DENIED secure-source", async () => {
    const sb = sandbox();
    // Keyboard focus in the terminal (no tree to ask), the fixture's Password focused in its own window.
    control(sb, { ...owned(FIXTURE), focused: { window_id: 0x200001, path: [3] }, focusWindow: { window_id: 0x300001, pid: XTERM } });
    expect(expectError(await cli(sb, ["clipboard", "get"]), "clipboard-get", "POLICY_DENIED").details.reason).toBe("secure-source");
    expect(gets(sb).map((q) => q.args.read_text)).toEqual([false]);
  });

  it("allowed: the text of the checked owner (expect_owner), cut at --max-bytes, audited without it", async () => {
    const sb = sandbox();
    control(sb, { ...owned(FIXTURE), focused: { window_id: 0x200001, path: [2] } });
    const r = expectOk(await cli(sb, ["clipboard", "get", "--max-bytes", "6"]), "clipboard-get");
    expect(r).toEqual({ selection: "clipboard", text: "copied", bytes: 11, truncated: true, owner: { name: "fixture-app", pid: FIXTURE }, targets: ["TARGETS", "UTF8_STRING"] });
    expect(gets(sb).map((q) => [q.args.read_text, q.args.expect_owner ?? null])).toEqual([
      [false, null],
      [true, 0x910001],
    ]);
    const lines = audit(sb);
    expect(lines.at(-1)).toMatchObject({ command: "clipboard-get", app_id: "org.deckhand.Fixture", pid: FIXTURE, decision: "allow", outcome: "OK" });
    expect(JSON.stringify(lines)).not.toContain("copied");
  });

  it("an empty clipboard: text null, owner null", async () => {
    const sb = sandbox();
    expect(expectOk(await cli(sb, ["clipboard", "get"]), "clipboard-get")).toEqual({ selection: "clipboard", text: null, bytes: 0, truncated: false, owner: null, targets: [] });
  });

  it("serve: clipboard-get and clipboard-set (the hook is the serve's operator's)", async () => {
    const sb = sandbox();
    const s = new ServeProcess(sb, ["--confirm-cmd", "/bin/true"]);
    try {
      expect((await s.request({ id: 1, command: "clipboard-set", args: { text: "from serve" } })).ok).toBe(true);
      const got = await s.request({ id: 2, command: "clipboard-get", args: {} });
      expect(got.result.text).toBe("from serve");
      // No stdin in serve: the stdin flag is refused, nothing set.
      const e = await s.request({ id: 3, command: "clipboard-set", args: { textStdin: true } });
      expect(e.error.code).toBe("INVALID_ARGUMENTS");
    } finally {
      await s.close();
    }
  });
});

describe("paste step", () => {
  it("without the foreground grant: FOREGROUND_REQUIRED, nothing sent", async () => {
    const sb = await observedSandbox();
    const e = expectError(await cli(sb, ["paste", "--app", "fixture-app", "--text", "x"]), "paste", "FOREGROUND_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(sb.ops()).not.toContain("paste");
  });

  it("into a secure element: POLICY_DENIED before the clipboard is touched (no focus, no paste)", async () => {
    const sb = sandbox();
    await observeFixture(sb);
    const e = expectError(await cli(sb, ["paste", "--app", "fixture-app", "--element-index", "4", "--text", "hunter2", ...fg]), "paste", "POLICY_DENIED");
    expect(e.details).toMatchObject({ rule: "builtin:secure_field", delivery: "not_dispatched" });
    expect(sb.ops().filter((o) => o === "paste" || o === "element_action")).toEqual([]);
  });

  it("with no element while a secure field has focus: POLICY_DENIED, no paste", async () => {
    const sb = await observedSandbox();
    control(sb, { focused: { window_id: 0x200001, path: [3] } });
    expect(expectError(await cli(sb, ["paste", "--app", "fixture-app", "--text", "x", ...fg]), "paste", "POLICY_DENIED").details.reason).toBe("paste");
    expect(sb.ops()).not.toContain("paste");
  });

  it("into an element: focus, paste under the focus guard, read back; the result names chars, served, restored", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["paste", "--app", "fixture-app", "--element-index", "3", "--text", "pasted ✓", ...fg], { mode: "track-focus" });
    const result = expectOk(r, "paste");
    expect(result).toMatchObject({ delivery: "submitted", route: "foreground_input", paste: { chars: 8, served: 1, restored: "cleared" }, verification: { verified: true } });
    const sent = sb.requests().find((q) => q.op === "paste")!.args;
    expect(sent).toEqual({ selection: "clipboard", text: "pasted ✓", chord: ["ctrl", "v"], focus: { window_id: 0x200001, pid: FIXTURE, activate: true }, restore: true, wait_ms: 2000 });
    // The element was focused first, through accessibility.
    expect(sb.ops().indexOf("element_action")).toBeLessThan(sb.ops().indexOf("paste"));
  });

  it("into an element of a window the toolkit cannot raise (Wayland): the window activated once, the element focused again, then the paste", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["paste", "--app", "fixture-app", "--element-index", "3", "--text", "pasted", ...fg], { mode: "track-focus,focus-needs-activation" });
    expect(expectOk(r, "paste")).toMatchObject({ paste: { served: 1 }, verification: { verified: true } });
    const ops = sb.ops().filter((o) => ["element_action", "window_op", "paste"].includes(o));
    expect(ops).toEqual(["element_action", "window_op", "element_action", "paste"]);
    expect(sb.requests().find((q) => q.op === "window_op")!.args).toEqual({ window_id: 0x200001, op: "activate" });
  });

  it("once the program's activation was used by an earlier key step, an element that does not take the focus is ACTION_FAILED: no second activation, nothing pasted", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", steps: [{ action: "press-key", key: "shift" }, { action: "paste", elementIndex: 3, text: "x" }], observe: false };
    const r = await cli(sb, ["run", ...fg], { stdin: JSON.stringify(program), mode: "track-focus,focus-needs-activation" });
    expect(r.envelope.ok).toBe(false);
    expect(JSON.stringify(r.envelope)).toContain("focus-elsewhere");
    expect(sb.ops().filter((o) => o === "window_op" || o === "paste")).toEqual([]);
  });

  it("a program step with the previous clipboard restored and a chosen chord", async () => {
    const sb = await observedSandbox();
    control(sb, { clipboard: { clipboard: { text: "old", owner_pid: 9100 } } });
    const program = { app: "fixture-app", steps: [{ action: "paste", text: "new", chord: "shift+Insert" }], observe: false };
    const r = expectOk(await cli(sb, ["run", ...fg], { stdin: JSON.stringify(program) }), "run");
    expect(r.steps[0]).toMatchObject({ action: "paste", status: "completed", paste: { chars: 3, served: 1, restored: "text" } });
    expect(sb.requests().find((q) => q.op === "paste")!.args.chord).toEqual(["shift", "Insert"]);
  });

  it("--restore=false leaves the pasted text on the clipboard (restored: skipped)", async () => {
    const sb = await observedSandbox();
    const r = expectOk(await cli(sb, ["paste", "--app", "fixture-app", "--text", "kept", "--restore=false", ...fg]), "paste");
    expect(r.paste).toEqual({ chars: 4, served: 1, restored: "skipped" });
    expect(sb.requests().find((q) => q.op === "paste")!.args.restore).toBe(false);
    expect(expectOk(await cli(sb, ["clipboard", "get"]), "clipboard-get").text).toBe("kept");
  });

  it("only paste chords: another chord is INVALID_ARGUMENTS before anything", async () => {
    const sb = await observedSandbox();
    expectError(await cli(sb, ["paste", "--app", "fixture-app", "--text", "x", "--chord", "ctrl+q", ...fg]), "paste", "INVALID_ARGUMENTS");
    expect(sb.ops()).not.toContain("paste");
  });

  it("the target never asked for the text: VERIFICATION_FAILED, delivery submitted (not ok)", async () => {
    const sb = await observedSandbox();
    control(sb, { pasteServed: 0 });
    const e = expectError(await cli(sb, ["paste", "--app", "fixture-app", "--text", "x", ...fg]), "paste", "VERIFICATION_FAILED");
    expect(e.details).toMatchObject({ reason: "not-requested", served: 0, delivery: "submitted" });
  });

  it("focus elsewhere: FOCUS_MISMATCH from the helper, nothing sent", async () => {
    const sb = await observedSandbox();
    control(sb, { focusWindow: { window_id: 0x300001, pid: XTERM } });
    const e = expectError(await cli(sb, ["paste", "--app", "fixture-app", "--text", "x", ...fg]), "paste", "FOCUS_MISMATCH");
    expect(e.details.delivery).toBe("not_dispatched");
  });

  it("--text-stdin: a helper that echoes the text has it scrubbed from the error; nowhere in outputs, audit or state", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const r = await cli(sb, ["paste", "--app", "fixture-app", "--text-stdin", ...fg], { stdin: secret, mode: "echo-text" });
    const e = expectError(r, "paste", "INVALID_ARGUMENTS");
    expect(JSON.stringify(e)).not.toContain(secret.slice(0, 8));
    expect(sb.requests().find((q) => q.op === "paste")!.args.text).toBe(secret);
    const ok = await cli(sb, ["paste", "--app", "fixture-app", "--text-stdin", ...fg], { stdin: secret });
    expect(expectOk(ok, "paste").paste.chars).toBe(secret.length);
    expectNowhere(sb, secret, [r, ok]);
  });
});
