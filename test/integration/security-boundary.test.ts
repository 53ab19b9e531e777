// Issue 10: the security boundary holds against an adversarial agent.
// 1. The kill switch belongs to the operator: serve, MCP, the adapters and a
//    CLI in agent mode (DECKHAND_AGENT_MODE) cannot resume or use operator-only
//    commands and flags; the audit records the true source of every pause and
//    resume.
// 2. Abuse is bounded: a request over the helper's frame limit is refused
//    before it is sent; a drag path is capped at validation.
// 3. The state directory: a subdirectory replaced by a symlink is refused and
//    nothing behind it is deleted.
// Serve's in-flight cap under 6,400 pipelined requests is in serve-memory.test.ts.
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { readAudit } from "../../src/audit/log.ts";
import {
  BUN,
  cleanupSandboxes,
  cli,
  expectEnvelope,
  expectError,
  expectOk,
  FAKE,
  MAIN,
  observedSandbox,
  rejection,
  REPO,
  sandbox,
  ServeProcess,
  useSupervisors,
  waitFor,
  type Sandbox,
} from "./harness.ts";

afterAll(cleanupSandboxes);
const procs: ServeProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.kill();
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
});

function serve(sb: Sandbox, args: string[] = [], opts: { mode?: string; env?: Record<string, string | undefined>; helper?: string | null } = {}): ServeProcess {
  const p = new ServeProcess(sb, args, opts);
  procs.push(p);
  return p;
}

const pausedFlag = (sb: Sandbox) => join(sb.stateDir, "paused.json");
const audit = (sb: Sandbox) => readAudit({ DECKHAND_STATE_DIR: sb.stateDir });
const pauseRecords = (sb: Sandbox) =>
  audit(sb)
    .filter((r) => r.event === "pause" || r.event === "resume")
    .map((r) => ({ event: r.event, source: r.decision_source, decision: r.decision, outcome: r.outcome, session: r.session }));
const mutations = (sb: Sandbox) => sb.ops().filter((o) => o === "element_action" || o === "input");
/** Agent mode: the framework's environment; the helper comes from DECKHAND_HELPER, not a flag. */
const AGENT = { DECKHAND_AGENT_MODE: "1", DECKHAND_HELPER: FAKE };

describe("1. the kill switch belongs to the operator", () => {
  it("a serve client cannot lift the operator's pause: POLICY_DENIED operator-only, still paused, audited as serve_client", async () => {
    const sb = await observedSandbox();
    expectOk(await cli(sb, ["pause", "--reason", "operator stepped in"]), "pause");
    const s = serve(sb);
    const r = await s.request({ id: 1, command: "resume", args: {} });
    expect(r).toMatchObject({
      id: 1,
      ok: false,
      command: "resume",
      error: { code: "POLICY_DENIED", details: { reason: "operator-only", caller: "serve", command: "resume" } },
    });
    expect(r.error.remediation).toMatch(/operator/);
    expect(existsSync(pausedFlag(sb))).toBe(true);
    // A native request with an explicit adapter field is the same request.
    const r2 = await s.request({ id: 2, command: "resume", adapter: "native" } as never);
    expect(r2.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "operator-only" } });
    // Still paused: the next mutation is refused and nothing reaches the helper.
    const click = await s.request({ id: 3, command: "click", args: { app: "fixture-app", elementIndex: 1 } });
    expect(click.error.code).toBe("PAUSED");
    expect(mutations(sb)).toEqual([]);

    const records = pauseRecords(sb);
    expect(records[0]).toMatchObject({ event: "pause", source: "operator", session: null, outcome: "OK" });
    const refused = records.filter((x) => x.event === "resume");
    expect(refused).toHaveLength(2);
    for (const x of refused) {
      expect(x).toMatchObject({ source: "serve_client", decision: "deny", outcome: "POLICY_DENIED" });
      expect(x.session).toMatch(/^serve-/);
    }
    // The operator's own resume works, and says so.
    expectOk(await cli(sb, ["resume"]), "resume");
    expect(existsSync(pausedFlag(sb))).toBe(false);
    expect(pauseRecords(sb).at(-1)).toMatchObject({ event: "resume", source: "operator", outcome: "OK", session: null });
  });

  it("a serve client may pause (stopping is always allowed); the audit names serve_client, not the operator", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const r = await s.request({ id: "p", command: "pause", args: { reason: "agent saw something odd" } });
    expect(r).toMatchObject({ ok: true, command: "pause", result: { paused: true, reason: "agent saw something odd" } });
    expect(existsSync(pausedFlag(sb))).toBe(true);
    expect(pauseRecords(sb)).toEqual([{ event: "pause", source: "serve_client", decision: null, outcome: "OK", session: expect.stringMatching(/^serve-/) }]);
    expect((await s.request({ id: "r", command: "resume" })).error.code).toBe("POLICY_DENIED");
    expect(existsSync(pausedFlag(sb))).toBe(true);
  });

  it("the adapters cannot resume either: an adapter-mode serve treats `resume` as a computer call, and refuses a native one", async () => {
    for (const adapter of ["openai", "anthropic"]) {
      const sb = sandbox();
      expectOk(await cli(sb, ["pause"]), "pause");
      const s = serve(sb, ["--adapter", adapter, "--app", "fixture-app"]);
      const viaAdapter = await s.request({ id: 1, command: "resume", args: {} });
      expect(viaAdapter.ok, adapter).toBe(false);
      const native = await s.request({ id: 2, command: "resume", adapter: "native" } as never);
      expect(native.error, adapter).toMatchObject({ code: "POLICY_DENIED", details: { reason: "operator-only" } });
      expect(existsSync(pausedFlag(sb)), adapter).toBe(true);
    }
  });

  it("MCP: no resume or desktop tool; the pause tool pauses, audited as mcp_client", async () => {
    const sb = sandbox();
    const env = Object.fromEntries(Object.entries(sb.env()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE], env, cwd: REPO, stderr: "pipe" });
    const client = new Client({ name: "deckhand-test", version: "0.0.0" });
    await client.connect(transport);
    clients.push(client);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("pause");
    for (const n of ["resume", "desktop"]) expect(names).not.toContain(n);

    expectOk(await cli(sb, ["pause", "--reason", "operator"]), "pause");
    const resume = await client.callTool({ name: "resume", arguments: {} }).catch((e: Error) => ({ isError: true, content: [{ type: "text", text: e.message }] }));
    expect(resume.isError).toBe(true);
    expect(existsSync(pausedFlag(sb))).toBe(true);

    expectOk(await cli(sb, ["resume"]), "resume");
    const p = await client.callTool({ name: "pause", arguments: { reason: "mcp client stops" } });
    expect(p.isError).toBe(false);
    expect((p.structuredContent as any).result).toMatchObject({ paused: true, reason: "mcp client stops" });
    expect(existsSync(pausedFlag(sb))).toBe(true);
    expect(pauseRecords(sb).map((r) => r.source)).toEqual(["operator", "operator", "mcp_client"]);
    expect(pauseRecords(sb).at(-1)!.session).toMatch(/^mcp-/);
  });

  it("the kill switch (real user input) is recorded as user_input, and a serve client still cannot lift it", async () => {
    const sb = sandbox();
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, "pause_on_user_input = true\n");
    const s = serve(sb, ["--policy", policy], { mode: "emit-user-input" });
    expect((await s.request({ id: 1, command: "list-apps" })).ok).toBe(true);
    await waitFor(() => existsSync(pausedFlag(sb)), "the pause flag");
    expect((await s.request({ id: 2, command: "resume" })).error.details.reason).toBe("operator-only");
    expect(existsSync(pausedFlag(sb))).toBe(true);
    const records = pauseRecords(sb);
    expect(records[0]).toMatchObject({ event: "pause", source: "user_input", outcome: "OK" });
    expect(records[1]).toMatchObject({ event: "resume", source: "serve_client", decision: "deny", outcome: "POLICY_DENIED" });
  });
});

describe("1. a CLI in agent mode (DECKHAND_AGENT_MODE=1)", () => {
  it("resume is refused (POLICY_DENIED operator-only, caller agent_cli); pause is allowed and audited as agent_cli", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["pause"], { helper: null }), "pause");
    const r = await cli(sb, ["resume"], { helper: null, env: AGENT });
    const e = expectError(r, "resume", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "operator-only", caller: "agent_cli", command: "resume" });
    expect(existsSync(pausedFlag(sb))).toBe(true);
    expectOk(await cli(sb, ["resume"], { helper: null }), "resume");
    expectOk(await cli(sb, ["pause", "--reason", "agent"], { helper: null, env: AGENT }), "pause");
    expect(existsSync(pausedFlag(sb))).toBe(true);
    // The operator's pause, the operator's resume, the agent's pause (its refused resume is recorded too).
    expect(pauseRecords(sb).map((x) => `${x.event}:${x.source}:${x.outcome}`)).toEqual([
      "pause:operator:OK",
      "resume:agent_cli:POLICY_DENIED",
      "resume:operator:OK",
      "pause:agent_cli:OK",
    ]);
  });

  it("`desktop run -- CMD` is refused and CMD never runs; so are start, stop and env", async () => {
    const sb = sandbox();
    const marker = join(sb.dir, "ran");
    const r = await cli(sb, ["desktop", "run", "--", "touch", marker], { helper: null, env: AGENT });
    const e = expectError(r, "desktop", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "operator-only", command: "desktop" });
    expect(existsSync(marker)).toBe(false);
    for (const sub of ["start", "stop", "env"]) {
      expectError(await cli(sb, ["desktop", sub], { helper: null, env: AGENT }), "desktop", "POLICY_DENIED");
    }
    expect(existsSync(join(sb.stateDir, "desktop.json"))).toBe(false);
    // Without --json: a readable refusal on stderr, exit 1.
    const plain = await cli(sb, ["desktop", "run", "--", "touch", marker], { helper: null, env: AGENT, json: false });
    expect(plain.code).toBe(1);
    expect(plain.stderr).toMatch(/POLICY_DENIED.*operator-only/);
    expect(existsSync(marker)).toBe(false);
  });

  it("`trace show` is refused at routing and writes no page (--out could name any file)", async () => {
    const sb = sandbox();
    const out = join(sb.dir, "page.html");
    mkdirSync(join(sb.dir, "trace"));
    writeFileSync(join(sb.dir, "trace", "trace.jsonl"), "");
    const r = await cli(sb, ["trace", "show", join(sb.dir, "trace"), "--out", out], { helper: null, env: AGENT });
    const e = expectError(r, "trace", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "operator-only", command: "trace" });
    expect(existsSync(out)).toBe(false);
    // The operator's own shell may: the same call without agent mode writes the page.
    expectOk(await cli(sb, ["trace", "show", join(sb.dir, "trace"), "--out", out], { helper: null }), "trace");
    expect(existsSync(out)).toBe(true);
  });

  it("operator flags on argv are refused: --allow-foreground, --helper, --confirm-cmd, --policy; nothing reaches a helper", async () => {
    const sb = sandbox();
    writeFileSync(join(sb.dir, "mine.toml"), 'default = "allow"\n');
    const hook = join(sb.dir, "approve.sh");
    writeFileSync(hook, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const cases: [string, string[]][] = [
      ["--allow-foreground", ["click", "--app", "fixture-app", "--x", "100", "--y", "100", "--allow-foreground"]],
      ["--helper", ["list-apps", "--helper", "/bin/sh"]],
      ["--confirm-cmd", ["click", "--app", "fixture-app", "--element-index", "2", "--confirm-cmd", hook]],
      ["--policy", ["list-apps", "--policy", join(sb.dir, "mine.toml")]],
    ];
    for (const [flag, argv] of cases) {
      const r = await cli(sb, argv, { helper: null, env: AGENT });
      const e = expectError(r, argv[0]!, "POLICY_DENIED");
      expect(e.details, flag).toMatchObject({ reason: "operator-only", caller: "agent_cli", flag });
    }
    expect(sb.ops()).toEqual([]);
    // The same commands without the flags run in agent mode (the helper from DECKHAND_HELPER).
    expectOk(await cli(sb, ["list-apps"], { helper: null, env: AGENT }), "list-apps");
    // The operator's own shell keeps its flags.
    expectOk(await cli(sb, ["list-apps", "--policy", join(sb.dir, "mine.toml")]), "list-apps");
  });

  it("serve and mcp started in agent mode refuse operator flags (an agent cannot start itself a granted session)", async () => {
    const sb = sandbox();
    for (const [flag, extra] of [["--allow-foreground", []], ["--confirm-cmd", ["/bin/true"]], ["--policy", ["/tmp/p.toml"]], ["--helper", [FAKE]]] as const) {
      const s = serve(sb, [flag, ...extra], { env: AGENT, helper: null });
      expect((await s.exited).code, flag).toBe(1);
      expect(s.lines[0]).toMatchObject({ id: null, ok: false, command: "serve", error: { code: "POLICY_DENIED", details: { reason: "operator-only", flag } } });
    }
    // mcp: nothing on stdout (it is the protocol's), the refusal on stderr.
    const mcp = await cli(sb, ["mcp", "--allow-foreground"], { helper: null, json: false, env: { DECKHAND_AGENT_MODE: "1" } });
    expect(mcp.code).toBe(1);
    expect(mcp.stdout).toBe("");
    expect(mcp.stderr).toMatch(/POLICY_DENIED.*operator-only/);
    // Agent mode without operator flags: a serve session runs (and still cannot resume).
    const ok = serve(sb, [], { env: AGENT, helper: null });
    expect((await ok.request({ id: 1, command: "list-apps" })).ok).toBe(true);
    expect((await ok.request({ id: 2, command: "resume" })).error.details).toMatchObject({ reason: "operator-only", caller: "serve" });
  });

  it("DECKHAND_AGENT_MODE unset, empty, 0, false, no or off is the operator's shell; any other value is agent mode", async () => {
    const sb = sandbox();
    for (const v of ["", "0", "false", "no", "OFF"]) {
      expectOk(await cli(sb, ["pause"], { helper: null, env: { DECKHAND_AGENT_MODE: v } }), "pause");
      expectOk(await cli(sb, ["resume"], { helper: null, env: { DECKHAND_AGENT_MODE: v } }), "resume");
    }
    for (const v of ["1", "true", "yes", "agent", " 1 "]) {
      expectError(await cli(sb, ["resume"], { helper: null, env: { DECKHAND_AGENT_MODE: v } }), "resume", "POLICY_DENIED");
    }
  });
});

/** A drag path of n points inside the fixture's main window (10,20 800x600). */
const dragPath = (n: number) => Array.from({ length: n }, (_, i) => ({ x: 100 + (i % 600), y: 300 }));

describe("2. abuse is bounded", () => {
  const supervisor = useSupervisors();

  it("the supervisor refuses any request over the helper's max_frame_bytes before writing it; the helper is not restarted", async () => {
    const sb = sandbox();
    const sup = supervisor(sb, "max-frame:4096,enforce-frame-limit");
    const hello = await sup.start();
    expect(hello.limits.max_frame_bytes).toBe(4096);
    const e = await rejection(sup.request("input", { steps: [{ kind: "type", text: "secret ".repeat(1000) }], restore_pointer: false }));
    expect(e.code).toBe("INVALID_ARGUMENTS");
    expect(e.details).toEqual({ reason: "request-too-large", limit: 4096, op: "input", delivery: "not_dispatched" });
    expect(e.message + e.remediation).not.toContain("secret");
    const e2 = await rejection(sup.request("list_windows", { pid: 1, pad: "p".repeat(5000) } as never));
    expect(e2.details.reason).toBe("request-too-large");
    expect(sb.ops()).toEqual([]);
    expect((await sup.request("input", { steps: [{ kind: "type", text: "fits" }], restore_pointer: false })).result.steps_completed).toBe(1);
    expect(sup.stats).toMatchObject({ spawns: 1, crashes: 0, protocolErrors: 0 });
  });

  it("a 20 MB set-value (CLI, --value-stdin) is refused before sending: INVALID_ARGUMENTS request-too-large with the limit; the helper lives on", async () => {
    const sb = await observedSandbox();
    const value = "S3CRET-".repeat(3_000_000); // 21 MB
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value-stdin"], { stdin: value, mode: "enforce-frame-limit", timeoutMs: 60_000 });
    const e = expectError(r, "set-value", "INVALID_ARGUMENTS");
    expect(e.details).toMatchObject({ reason: "request-too-large", limit: 16 * 1024 * 1024, delivery: "not_dispatched" });
    expect(JSON.stringify(r.envelope) + r.stderr).not.toContain("S3CRET");
    expect(sb.ops()).not.toContain("element_action");
    // One helper process, never restarted.
    expect(new Set(sb.requests().map((q) => q.pid)).size).toBe(1);
  }, 90_000);

  it("the limit is the helper's own (hello.limits.max_frame_bytes): serve refuses a 100 KB value under a 64 KiB helper and goes on with the same helper", async () => {
    const sb = await observedSandbox();
    const s = serve(sb, [], { mode: "max-frame:65536,enforce-frame-limit" });
    const r = await s.request({ id: 1, command: "set-value", args: { app: "fixture-app", elementIndex: 3, value: "v".repeat(100_000) } });
    expect(r.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { reason: "request-too-large", limit: 65536, delivery: "not_dispatched" } });
    expect(r.error.message).not.toContain("vvvv");
    // A program step the same way; the steps before it ran.
    const prog = await s.request({
      id: 2,
      command: "run",
      args: { program: { app: "fixture-app", observe: false, steps: [{ action: "set-value", elementIndex: 3, value: "short" }, { action: "set-value", elementIndex: 3, value: "w".repeat(100_000) }] } },
    });
    expect(prog.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { step: 1, stepsCompleted: 1, delivery: "not_dispatched", reason: "request-too-large", limit: 65536 } });
    expect(prog.error.message).not.toContain("wwww");
    const steps = prog.error.details.receipts;
    expect(steps.map((x: any) => x.status)).toEqual(["completed", "failed"]);
    expect(steps[1].error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { reason: "request-too-large", limit: 65536 } });
    expect(steps[1].delivery).toBe("not_dispatched");
    const small = await s.request({ id: 3, command: "set-value", args: { app: "fixture-app", elementIndex: 3, value: "fits" } });
    expect(small.ok, JSON.stringify(small.error)).toBe(true);
    expect(sb.requests().filter((q) => q.op === "element_action").map((q) => (q.args as any).text)).toEqual(["short", "fits"]);
    expect(new Set(sb.requests().map((q) => q.pid)).size).toBe(1);
  });

  it("a drag path over 1000 points is INVALID_ARGUMENTS at validation: nothing is resolved or sent (CLI, serve, a program, the OpenAI adapter)", async () => {
    const sb = await observedSandbox();
    const long = dragPath(1001);
    const r = await cli(sb, ["drag", "--app", "fixture-app", "--path", JSON.stringify(long), "--allow-foreground"]);
    const e = expectError(r, "drag", "INVALID_ARGUMENTS");
    expect(e.message).toMatch(/--path must have at most 1000 items/);
    expect(sb.ops()).toEqual([]);

    const s = serve(sb, ["--allow-foreground"]);
    const viaServe = await s.request({ id: 1, command: "drag", args: { app: "fixture-app", path: long } });
    expect(viaServe.error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(viaServe.error.message).toMatch(/path must have at most 1000 items/);
    const program = await s.request({ id: 2, command: "run", args: { program: { app: "fixture-app", steps: [{ action: "drag", path: long }] } } });
    expect(program.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { path: "steps.0.path" } });
    expect(sb.ops()).toEqual([]);

    const openai = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    const a = await openai.request({ id: 3, action: { type: "drag", path: long } } as never);
    expect(a.error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(a.error.message).toMatch(/at most 1000 points/);
    expect(sb.ops()).toEqual([]);
  });

  it("a drag of exactly 1000 points is accepted and sent as one input", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["drag", "--app", "fixture-app", "--path", JSON.stringify(dragPath(1000)), "--allow-foreground"]);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const input = sb.requests().filter((q) => q.op === "input");
    expect(input).toHaveLength(1);
    expect((input[0]!.args as any).steps.filter((st: any) => st.kind === "move")).toHaveLength(1000);
  });
});

describe("3. the state directory", () => {
  /** `sub` of the state dir replaced by a symlink to a directory of 40 old PNGs and a canary. */
  function plant(sb: Sandbox, sub: string): string {
    const elsewhere = join(sb.dir, `elsewhere-${sub}`);
    mkdirSync(elsewhere);
    const old = Date.now() / 1000 - 100_000;
    for (let i = 0; i < 40; i++) {
      const p = join(elsewhere, `shot_${i.toString(36)}_abcdef.png`);
      writeFileSync(p, "");
      utimesSync(p, old + i, old + i);
    }
    writeFileSync(join(elsewhere, "canary.png"), "precious");
    utimesSync(join(elsewhere, "canary.png"), old - 10, old - 10);
    mkdirSync(sb.stateDir, { recursive: true });
    rmSync(join(sb.stateDir, sub), { recursive: true, force: true });
    symlinkSync(elsewhere, join(sb.stateDir, sub));
    return elsewhere;
  }

  it("screenshots/ replaced by a symlink: get-app-state fails INTERNAL state-dir-symlink; nothing behind the link is written or deleted; pause still works", async () => {
    const sb = sandbox();
    const elsewhere = plant(sb, "screenshots");
    const before = readdirSync(elsewhere).sort();
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app"]);
    const e = expectError(r, "get-app-state", "INTERNAL");
    expect(e.details).toMatchObject({ reason: "state-dir-symlink", path: join(sb.stateDir, "screenshots") });
    expect(e.message).toMatch(/symlink/);
    expect(readdirSync(elsewhere).sort()).toEqual(before);
    expect(sb.ops()).not.toContain("screenshot");
    // The kill switch needs no store: it works while the store is refused.
    expectOk(await cli(sb, ["pause"]), "pause");
    expectOk(await cli(sb, ["resume"]), "resume");
    // Removing the link is the fix: deckhand makes a real directory again.
    rmSync(join(sb.stateDir, "screenshots"));
    expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app"]), "get-app-state");
    expect(readdirSync(elsewhere).sort()).toEqual(before);
  });

  it("snapshots/ replaced by a symlink: an action is refused the same way, nothing dispatched", async () => {
    const sb = await observedSandbox();
    plant(sb, "snapshots");
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]);
    expectEnvelope(r, "click");
    expect(r.envelope.error).toMatchObject({ code: "INTERNAL", details: { reason: "state-dir-symlink" } });
    expect(mutations(sb)).toEqual([]);
  });
});
