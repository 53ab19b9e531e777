// Recording a trace (issue 16): `deckhand run --trace DIR` and serve's
// --trace, against the scripted fake helper. What is checked: every line is
// a valid TraceEvent in order; secrets appear as lengths only (the secret's
// bytes are in no file of the trace); files 0600, the directory 0700;
// images deduplicated; a refusal's code and remediation recorded; the
// captures are bounded (two reads per dispatched step) and there are none
// without --trace.
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { TraceEvent, TRACE_FILE } from "../../src/protocol/trace.ts";
import { cleanupSandboxes, cli, expectError, observedSandbox, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

function readTrace(dir: string): TraceEvent[] {
  return readFileSync(join(dir, TRACE_FILE), "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => TraceEvent.parse(JSON.parse(l)));
}

/** Every file under dir, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

const captures = (sb: Sandbox) => sb.requests().filter((r) => r.op === "screenshot" || r.op === "get_tree").length;

describe("deckhand run --trace DIR", () => {
  it("records each step: request (secret as its length), decision, receipt, images and tree diff; 0600 files in a 0700 dir", async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    const secret = "Tr4ce-s3cret-value";
    const program = { app: "fixture-app", steps: [{ action: "set-value", elementIndex: 3, value: secret }, { action: "click", elementIndex: 1 }, { action: "wait", ms: 1 }] };
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify(program) });
    expect(r.envelope.ok, JSON.stringify(r.envelope)).toBe(true);
    const events = readTrace(dir);
    expect(events.map((e) => e.type)).toEqual(["session", "program", "step", "step", "step", "program-end"]);
    const [session, prog, s0, s1, s2, end] = events as [any, any, any, any, any, any];
    expect(session).toMatchObject({ mode: "cli", version: 1 });
    expect(prog).toMatchObject({ id: "p1", command: "run", app: { name: expect.any(String) } });
    expect(prog.steps[0].value).toEqual({ redacted: true, length: secret.length });
    expect(s0).toMatchObject({ program: "p1", index: 0, action: "set-value", status: "completed", decision: { verdict: "allow" }, request: { value: { redacted: true, length: secret.length } } });
    expect(s0.receipt).toMatchObject({ delivery: "submitted", route: expect.any(String) });
    expect(s0.marks.box).not.toBeNull();
    expect(s1.marks.points[0]).toMatchObject({ kind: "click" });
    expect(s1.treeDiff).not.toBeNull();
    expect(s2).toMatchObject({ action: "wait", status: "completed" });
    expect(end).toMatchObject({ type: "program-end", program: "p1", firstFailure: null, error: null });
    // Images: files of the trace, each named once (the fake's window does not change: one file for all).
    const images = [prog.before, s0.after, s1.after, s2.after].map((i: any) => i.file);
    for (const f of images) expect(existsSync(join(dir, f)), f).toBe(true);
    expect(readdirSync(join(dir, "img"))).toHaveLength(new Set(images).size);
    // Secrets: nowhere in the trace's bytes.
    for (const f of filesUnder(dir)) {
      expect(readFileSync(f).includes(Buffer.from(secret)), f).toBe(false);
      expect(statSync(f).mode & 0o777, f).toBe(0o600);
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, "img")).mode & 0o777).toBe(0o700);
  });

  it("costs the app two reads per dispatched step and one pair up front; nothing without --trace", async () => {
    const program = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "focus", elementIndex: 3 }] };
    const plain = await observedSandbox();
    expect((await cli(plain, ["run"], { stdin: JSON.stringify(program) })).envelope.ok).toBe(true);
    const traced = await observedSandbox();
    expect((await cli(traced, ["run", "--trace", join(traced.dir, "t")], { stdin: JSON.stringify(program) })).envelope.ok).toBe(true);
    // (1 before + 2 steps) x (screenshot + get_tree)
    expect(captures(traced) - captures(plain)).toBe(6);
    expect(existsSync(join(plain.dir, "t"))).toBe(false);
  });

  it("a refused step: decision deny with its code, rule and remediation; the next step unattempted", async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    const program = { app: "fixture-app", steps: [{ action: "set-value", elementIndex: 4, value: "hunter22" }, { action: "click", elementIndex: 1 }] };
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify(program) });
    expectError(r, "run", "POLICY_DENIED");
    const steps = readTrace(dir).filter((e) => e.type === "step") as any[];
    expect(steps.map((s) => s.status)).toEqual(["failed", "unattempted"]);
    expect(steps[0].decision).toMatchObject({ verdict: "deny", code: "POLICY_DENIED", rule: "builtin:secure_field", remediation: expect.stringMatching(/\w/) });
    expect(steps[0].error).toMatchObject({ code: "POLICY_DENIED" });
    expect(steps[0].request.value).toEqual({ redacted: true, length: 8 });
    // Nothing was sent: no capture after it, its "after" is its "before".
    expect(steps[0].treeDiff).toBeNull();
    const end = readTrace(dir).at(-1) as any;
    expect(end).toMatchObject({ type: "program-end", firstFailure: 0, error: { code: "POLICY_DENIED" } });
    for (const f of filesUnder(dir)) expect(readFileSync(f).includes(Buffer.from("hunter22")), f).toBe(false);
  });

  it("a program refused before any step (no such app) is recorded with its error", async () => {
    const sb = sandbox();
    const dir = join(sb.dir, "trace");
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify({ app: "no-such-app", steps: [{ action: "click", elementIndex: 1 }] }) });
    expect(r.envelope.ok).toBe(false);
    const events = readTrace(dir);
    expect(events.map((e) => e.type)).toEqual(["session", "program", "program-end"]);
    expect((events[1] as any).app).toEqual({ name: "no-such-app", pid: 0 });
    expect((events[2] as any).error.code).toBe(r.envelope.error!.code);
  });

  it("a program refused before it runs (a foreground step without the grant; a single action's refusal) is in the trace with its code", async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify({ app: "fixture-app", steps: [{ action: "hotkey", keys: ["ctrl", "s"] }] }) });
    const code = r.envelope.error!.code;
    expect(code).toBe("FOREGROUND_REQUIRED");
    const hotkey = await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "ctrl+s", "--trace", dir]);
    expect(hotkey.envelope.error!.code).toBe("FOREGROUND_REQUIRED");
    const events = readTrace(dir) as any[];
    // Each one-shot call is a session of its own.
    expect(events.map((e) => e.type)).toEqual(["session", "program", "program-end", "session", "program", "program-end"]);
    expect(events.filter((e) => e.type === "program").map((e) => [e.command, e.app.name])).toEqual([
      ["run", "fixture-app"],
      ["hotkey", "fixture-app"],
    ]);
    for (const end of events.filter((e) => e.type === "program-end")) expect(end.error).toMatchObject({ code: "FOREGROUND_REQUIRED", remediation: expect.stringMatching(/\w/) });
    // Nothing was sent, nothing was captured.
    expect(sb.requests().filter((q) => q.op === "input" || q.op === "screenshot")).toEqual([]);
  });

  it("--trace is refused where it records nothing, on a file, and in agent mode", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--trace", join(sb.dir, "t")]), "get-app-state", "INVALID_ARGUMENTS");
    const file = join(sb.dir, "a-file");
    writeFileSync(file, "x");
    expectError(await cli(sb, ["run", "--trace", file], { stdin: "{}" }), "run", "INVALID_ARGUMENTS");
    const agent = await cli(sb, ["run", "--trace", join(sb.dir, "t")], { stdin: "{}", env: { DECKHAND_AGENT_MODE: "1" } });
    expect(agent.envelope.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "operator-only" } });
    expect(existsSync(join(sb.dir, "t"))).toBe(false);
  });

  it("trace.jsonl stops growing at its bound (DECKHAND_TRACE_MAX_BYTES), says so on stderr, and the program runs on", async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    const program = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "focus", elementIndex: 3 }, { action: "click", elementIndex: 1 }] };
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify(program), env: { DECKHAND_TRACE_MAX_BYTES: "2500" } });
    expect(r.envelope.ok, JSON.stringify(r.envelope)).toBe(true);
    expect(r.envelope.result.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed", "completed"]);
    expect(statSync(join(dir, "trace.jsonl")).size).toBeLessThanOrEqual(2500);
    expect(r.stderr).toMatch(/reached 2500 bytes; nothing more is recorded/);
    // What is there is whole lines, each a valid event.
    expect(readTrace(dir).length).toBeGreaterThan(0);
  });

  it("appends to an existing trace: new program ids, images reused; an existing directory keeps its mode", async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const program = JSON.stringify({ app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }] });
    await cli(sb, ["run", "--trace", dir], { stdin: program });
    await cli(sb, ["run", "--trace", dir], { stdin: program });
    const programs = readTrace(dir).filter((e) => e.type === "program") as any[];
    expect(programs.map((p) => p.id)).toEqual(["p1", "p2"]);
    expect(readdirSync(join(dir, "img"))).toHaveLength(1);
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    for (const f of filesUnder(dir)) expect(statSync(f).mode & 0o777, f).toBe(0o600);
  });
});

describe("serve --trace DIR", () => {
  it("records every program of the session in one file", async () => {
    const sb = sandbox();
    const dir = join(sb.dir, "trace");
    const serve = new ServeProcess(sb, ["--trace", dir]);
    try {
      serve.send({ id: 1, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
      await serve.waitLines(1);
      serve.send({ id: 2, command: "click", args: { app: "fixture-app", elementIndex: 1 } });
      // One after the other: serve runs requests concurrently, and program ids follow their start.
      await serve.waitLines(2);
      serve.send({ id: 3, command: "run", args: { program: { app: "fixture-app", steps: [{ action: "focus", elementIndex: 3 }] } } });
      const lines = await serve.waitLines(3);
      expect(lines.slice(1).every((l) => l.ok), JSON.stringify(lines)).toBe(true);
    } finally {
      serve.child.stdin!.end();
      await serve.exited;
    }
    const events = readTrace(dir);
    expect(events.filter((e) => e.type === "session")).toHaveLength(1);
    expect((events[0] as any).mode).toBe("serve");
    const programs = events.filter((e) => e.type === "program") as any[];
    expect(programs.map((p) => [p.id, p.command])).toEqual([
      ["p1", "click"],
      ["p2", "run"],
    ]);
  });
});
