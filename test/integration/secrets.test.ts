// Secrets travel by stdin only: never in the helper's argv or environment,
// deckhand's stdout/stderr, error text, snapshot files or the state dir.
import { afterAll, describe, expect, it } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { cleanupSandboxes, cli, expectError, expectOk, failedProgram, observeFixture, observedSandbox, recordingHelper, sandbox, ServeProcess, type CliResult, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const newSecret = () => `s3cr3t-${randomBytes(8).toString("hex")}`;

function expectNowhere(sb: Sandbox, secret: string, results: CliResult[], helper?: { argvLog: string; envLog: string }) {
  for (const r of results) {
    expect(r.stdout).not.toContain(secret);
    expect(r.stderr).not.toContain(secret);
  }
  for (const f of sb.stateFiles()) expect(f.data.includes(secret), f.path).toBe(false);
  if (helper) {
    for (const p of [helper.argvLog, helper.envLog]) {
      expect(existsSync(p), p).toBe(true);
      expect(readFileSync(p, "utf8")).not.toContain(secret);
    }
  }
}

describe("--value-stdin / --text-stdin", () => {
  it("set-value --value-stdin: delivered to the helper only, stored nowhere (audit log included)", async () => {
    const sb = sandbox();
    const helper = recordingHelper(sb);
    const secret = newSecret();
    const observed = await cli(sb, ["get-app-state", "--app", "fixture-app"], { helper: helper.path });
    expectOk(observed, "get-app-state");
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin"], { helper: helper.path, stdin: secret + "\n" });
    const result = expectOk(r, "set-value");
    expect(result.delivery).toBe("submitted");
    // It did reach the helper (exactly once, trailing newline stripped), over the wire only.
    const sent = sb.requests().filter((q) => q.op === "element_action");
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args.text).toBe(secret);
    expectNowhere(sb, secret, [observed, r], helper);
  });

  it("set-value --value-stdin into the password field -> POLICY_DENIED, not dispatched, secret nowhere", async () => {
    const sb = sandbox();
    const secret = newSecret();
    await observeFixture(sb);
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "4", "--value-stdin"], { stdin: secret });
    const e = expectError(r, "set-value", "POLICY_DENIED");
    expect(e.details).toMatchObject({ rule: "builtin:secure_field", delivery: "not_dispatched" });
    expect(sb.requests().filter((q) => q.op === "element_action")).toEqual([]);
    const after = await cli(sb, ["get-app-state", "--app", "fixture-app"]);
    expect(expectOk(after, "get-app-state").snapshot.elements.find((x: { index: number }) => x.index === 4).value).toBeNull();
    expectNowhere(sb, secret, [r, after]);
  });

  it("type-text --text-stdin into an element: nowhere but the wire", async () => {
    const sb = sandbox();
    const helper = recordingHelper(sb);
    const secret = newSecret();
    await observeFixture(sb, ["--no-screenshot"], { helper: helper.path });
    const r = await cli(sb, ["type-text", "--app", "fixture-app", "--element-index", "3", "--text-stdin"], { helper: helper.path, stdin: secret });
    expect(expectOk(r, "type-text").delivery).toBe("submitted");
    expect(sb.requests().find((q) => q.op === "element_action")!.args.text).toBe(secret);
    expectNowhere(sb, secret, [r], helper);
  });

  it("a failing set-value (unknown element) reads the secret and leaks it nowhere", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "999", "--value-stdin"], { stdin: secret });
    const e = expectError(r, "set-value", "ELEMENT_INDEX_NOT_FOUND");
    expect(JSON.stringify(e)).not.toContain(secret);
    expect(sb.requests().filter((q) => q.op === "element_action")).toEqual([]);
    expectNowhere(sb, secret, [r]);
  });

  it("a failing set-value whose helper crashes mid-action: delivery unknown, no secret in the error", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin"], { stdin: secret, mode: "crash-on:element_action" });
    const e = expectError(r, "set-value", "ACTION_FAILED");
    expect(e.details.delivery).toBe("unknown");
    expect(sb.requests().filter((q) => q.op === "element_action")).toHaveLength(1);
    expectNowhere(sb, secret, [r]);
  });

  it("a failing set-value on a changed element (helper refuses): no secret in the error", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    sb.control({ replaced: ["2"] });
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin"], { stdin: secret });
    const e = expectError(r, "set-value", "ELEMENT_UNRESOLVABLE");
    expect(e.details.delivery).toBe("not_dispatched");
    expectNowhere(sb, secret, [r]);
  });

  it("--value together with --value-stdin -> INVALID_ARGUMENTS without echoing either", async () => {
    const sb = sandbox();
    const secret = newSecret();
    const argvValue = newSecret();
    await observeFixture(sb, ["--no-screenshot"]);
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin", "--value", argvValue], { stdin: secret });
    expectError(r, "set-value", "INVALID_ARGUMENTS");
    expect(sb.requests().filter((q) => q.op === "element_action")).toEqual([]);
    expectNowhere(sb, secret, [r]);
    expectNowhere(sb, argvValue, [r]);
  });

  it("a secret on stdin with a schema error elsewhere is not echoed", async () => {
    const sb = sandbox();
    const secret = newSecret();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "-1", "--value-stdin"], { stdin: secret });
    expectError(r, "set-value", "INVALID_ARGUMENTS");
    expectNowhere(sb, secret, [r]);
  });

  it("serve: a value in a request reaches the helper but not the state dir (audit included) or the response", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const s = new ServeProcess(sb);
    try {
      const ok = await s.request({ id: 1, command: "set-value", args: { app: "fixture-app", elementIndex: 3, value: secret } });
      expect(ok).toMatchObject({ ok: true, result: { delivery: "submitted" } });
      const bad = await s.request({ id: 2, command: "set-value", args: { app: "fixture-app", elementIndex: 999, value: secret } });
      expect(bad).toMatchObject({ ok: false, error: { code: "ELEMENT_INDEX_NOT_FOUND" } });
      expect(await s.close()).toEqual({ code: 0, signal: null });
    } finally {
      s.kill();
    }
    expect(JSON.stringify(s.lines)).not.toContain(secret);
    expect(s.stderr).not.toContain(secret);
    for (const f of sb.stateFiles()) expect(f.data.includes(secret), f.path).toBe(false);
  });
});

// Issue 10.2: a helper that echoes what it was sent in its error (the real
// one says `"S3cret" is not a number` for a value element) never gets the
// secret, or a cut piece of it, into deckhand's errors: the fake helper's
// echo-text mode puts the text, and its first 9 and 6 characters, in the
// message and details.
describe("errors that echo a secret are scrubbed on the way out", () => {
  const pieces = (secret: string) => [secret, secret.slice(0, 9), secret.slice(0, 6), secret.slice(0, 4)];
  const expectScrubbed = (text: string, secret: string) => {
    for (const p of pieces(secret)) expect(text, p).not.toContain(p);
  };

  it("set-value --value-stdin on a value element: the helper's echo is redacted in message and details", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin"], { stdin: secret, mode: "echo-text" });
    const e = expectError(r, "set-value", "INVALID_ARGUMENTS");
    expect(e.message).toContain("[redacted]");
    expect(e.message).toMatch(/is not a number/);
    expect(e.details.value).toBe("[redacted]");
    expectScrubbed(r.stdout + r.stderr, secret);
    expectNowhere(sb, secret, [r]);
    for (const f of sb.stateFiles()) expectScrubbed(f.data.toString("latin1"), secret);
  });

  it("type-text --text-stdin, into an element and as keys", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const into = await cli(sb, ["type-text", "--app", "fixture-app", "--element-index", "3", "--text-stdin"], { stdin: secret, mode: "echo-text" });
    expectError(into, "type-text", "INVALID_ARGUMENTS");
    const keys = await cli(sb, ["type-text", "--app", "fixture-app", "--text-stdin", "--allow-foreground"], { stdin: secret, mode: "echo-text" });
    expectError(keys, "type-text", "INVALID_ARGUMENTS");
    for (const r of [into, keys]) expectScrubbed(r.stdout + r.stderr, secret);
    expectNowhere(sb, secret, [into, keys]);
  });

  it("a program on stdin (run): its step errors never carry its values", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const program = { app: "fixture-app", steps: [{ action: "set-value", elementIndex: 3, value: secret }], observe: false };
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(program), mode: "echo-text" });
    const e = expectError(r, "run", "INVALID_ARGUMENTS");
    // The envelope's own message and details, and the receipt's, all scrubbed.
    expect(e.message).toContain("[redacted]");
    const { receipts } = failedProgram(e, 1);
    expect(receipts[0]).toMatchObject({ status: "failed", error: { code: "INVALID_ARGUMENTS" } });
    expect(receipts[0]!.error!.message).toContain("[redacted]");
    expectScrubbed(r.stdout + r.stderr, secret);
    expectNowhere(sb, secret, [r]);
  });

  it("serve: a value given in a request is not echoed back in its error", async () => {
    const sb = await observedSandbox();
    const secret = newSecret();
    const s = new ServeProcess(sb, [], { mode: "echo-text" });
    try {
      const bad = await s.request({ id: 1, command: "set-value", args: { app: "fixture-app", elementIndex: 3, value: secret } });
      expect(bad).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
      const run = await s.request({ id: 2, command: "run", args: { program: { app: "fixture-app", steps: [{ action: "type-text", elementIndex: 3, text: secret }], observe: false } } });
      expect(run).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS", details: { step: 0 } } });
      expect(run.error.details.receipts[0].error.code).toBe("INVALID_ARGUMENTS");
      expect(await s.close()).toEqual({ code: 0, signal: null });
    } finally {
      s.kill();
    }
    expectScrubbed(JSON.stringify(s.lines) + s.stderr, secret);
    for (const f of sb.stateFiles()) expectScrubbed(f.data.toString("latin1"), secret);
  });
});
