// Cancellation reaches the helper: a serve `cancel` or an MCP client's abort
// sends a wire `cancel` frame for the request in flight; a read answers
// CANCELLED at once, a mutation with the helper's receipt (never resent), and
// a program's `wait` step ends early.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { DeckhandError } from "../../src/protocol/errors.ts";
import { Supervisor } from "../../src/helpers/supervisor.ts";
import { BUN, cleanupSandboxes, FAKE, FIXTURE_WINDOW, MAIN, REPO, rejection, sandbox, ServeProcess, useSupervisors, waitFor, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);
const mutations = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");
const requestsOf = (sb: Sandbox, op: string) => sb.requests().filter((r) => r.op === op);

describe("Supervisor.request with an AbortSignal", () => {
  const start = useSupervisors();
  const supervise = (sb: Sandbox, mode: string, ambient?: () => AbortSignal | undefined, deadlines?: Record<string, number>): Supervisor =>
    start(sb, mode, { ambientSignal: ambient, deadlines });
  const HOLD = { steps: [{ kind: "key" as const, key: "shift", down: true }, { kind: "wait" as const, ms: 3000 }, { kind: "key" as const, key: "shift", down: false }], restore_pointer: false };

  it("already aborted: nothing is sent, CANCELLED not_dispatched", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "");
    await sup.start();
    const e = await rejection(sup.request("input", HOLD, { signal: AbortSignal.abort() }));
    expect(e.code).toBe("CANCELLED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(sb.ops()).toEqual([]);
  });

  it("a read in flight: cancel frame for its id, CANCELLED at once; the late answer is dropped without a restart", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "slow-on:get_tree:800");
    const ac = new AbortController();
    const p = sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 50, max_nodes: 50 }, { signal: ac.signal });
    await waitFor(() => sb.ops().includes("get_tree"), "get_tree sent");
    const t0 = performance.now();
    ac.abort();
    const e = await rejection(p);
    expect(performance.now() - t0).toBeLessThan(300);
    expect(e.code).toBe("CANCELLED");
    const id = sb.requests().find((r) => r.op === "get_tree")!.id;
    await waitFor(() => sb.cancels().includes(id), "the cancel frame");
    await new Promise((r) => setTimeout(r, 900));
    expect((await sup.request("list_apps", {})).result.apps.length).toBeGreaterThan(0);
    expect(sup.stats).toMatchObject({ spawns: 1, protocolErrors: 0 });
  });

  it("a cancelled read the helper drops without answering is given up at its deadline; the helper is not killed", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "hang-on:get_tree", undefined, { get_tree: 300 });
    const ac = new AbortController();
    const p = sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 50, max_nodes: 50 }, { signal: ac.signal });
    await waitFor(() => sb.ops().includes("get_tree"), "get_tree sent");
    const pid = sup.pid;
    ac.abort();
    expect((await rejection(p)).code).toBe("CANCELLED");
    await new Promise((r) => setTimeout(r, 800));
    expect(sup.pid).toBe(pid);
    expect(sup.stats).toMatchObject({ spawns: 1, timeouts: 0 });
    expect((await sup.request("list_apps", {})).result.apps.length).toBeGreaterThan(0);
  });

  it("a mutation in flight: cancel frame, then CANCELLED with the helper's receipt (delivery partial, keys released); never resent", async () => {
    const sb = sandbox();
    const sup = supervise(sb, "real-waits");
    const ac = new AbortController();
    const p = sup.request("input", HOLD, { signal: ac.signal });
    await waitFor(() => sb.ops().includes("input"), "input sent");
    await new Promise((r) => setTimeout(r, 100));
    ac.abort();
    const e = await rejection(p);
    expect(e.code).toBe("CANCELLED");
    expect(e.details).toMatchObject({ delivery: "partial", cancelled: true, op: "input" });
    expect((e as DeckhandError & { receipt?: { cleanup: { keys_released: boolean } } }).receipt?.cleanup.keys_released).toBe(true);
    expect(sb.ops().filter((o) => o === "input")).toEqual(["input"]);
    expect(sb.cancels()).toEqual([sb.requests().find((r) => r.op === "input")!.id]);
  });

  it("the ambient signal (the engine's cancel scope) applies to a request that names none; signal: null opts out", async () => {
    const sb = sandbox();
    const ac = new AbortController();
    const sup = supervise(sb, "slow-on:list_windows:300", () => ac.signal);
    const p = sup.request("list_windows", { pid: null });
    const q = sup.request("list_windows", { pid: null }, { signal: null });
    await waitFor(() => sb.ops().filter((o) => o === "list_windows").length === 2, "both sent");
    ac.abort();
    expect((await rejection(p)).code).toBe("CANCELLED");
    expect((await q).result.windows.length).toBeGreaterThan(0);
    expect(sb.cancels().length).toBe(1);
  });
});

describe("serve cancel", () => {
  it("a slow read in flight: the helper gets a cancel frame for its id, the request answers CANCELLED at once, the late answer is dropped", async () => {
    const sb = sandbox();
    const p = new ServeProcess(sb, [], { mode: "slow-on:list_windows:1500" });
    try {
      p.send({ id: "lw", command: "list-windows", args: { app: "fixture-app" } });
      await waitFor(() => requestsOf(sb, "list_windows").length === 1, "list_windows to reach the helper");
      const t0 = performance.now();
      p.send({ id: "stop", command: "cancel", args: { id: "lw" } });
      const lines = await p.waitLines(2);
      const ms = performance.now() - t0;
      expect(lines.find((l) => l.id === "stop").result).toEqual({ id: "lw", cancelled: true });
      const lw = lines.find((l) => l.id === "lw");
      expect(lw.ok).toBe(false);
      expect(lw.error.code).toBe("CANCELLED");
      expect(ms, "answered before the helper's 1500 ms").toBeLessThan(1000);
      const [req] = requestsOf(sb, "list_windows");
      await waitFor(() => sb.cancels().includes(req!.id), "the cancel frame");
      expect(sb.cancels()).toEqual([req!.id]);
      // The helper answers list_windows late: dropped, not a protocol error, no restart.
      await new Promise((r) => setTimeout(r, 1700));
      const after = await p.request({ id: "apps", command: "list-apps", args: {} });
      expect(after.ok).toBe(true);
      expect(new Set(sb.requests().map((r) => r.pid)).size, "one helper process throughout").toBe(1);
      expect(p.stderr).not.toContain("protocol error");
    } finally {
      await p.close();
    }
  });

  it("a hold-key in flight: cancel frame, the step CANCELLED with the helper's receipt (partial, keys released), sent once", async () => {
    const sb = sandbox();
    const p = new ServeProcess(sb, ["--allow-foreground"], { mode: "real-waits" });
    try {
      const program = { app: "fixture-app", steps: [{ action: "hold-key", key: "shift", ms: 3000 }, { action: "press-key", key: "a" }], observe: false };
      const t0 = performance.now();
      p.send({ id: "hold", command: "run", args: { program } });
      await waitFor(() => requestsOf(sb, "input").length === 1, "the hold-key input to reach the helper");
      await new Promise((r) => setTimeout(r, 200));
      p.send({ id: "stop", command: "cancel", args: { id: "hold" } });
      const lines = await p.waitLines(2);
      const ms = performance.now() - t0;
      expect(lines.find((l) => l.id === "stop").result).toEqual({ id: "hold", cancelled: true });
      const run = lines.find((l) => l.id === "hold");
      // A failed program is a failed request: the step's code, its receipts in details.
      expect(run).toMatchObject({ ok: false, error: { code: "CANCELLED", details: { step: 0, delivery: "partial", stepsCompleted: 0, cancelled: true } } });
      expect(run.error.message).toMatch(/^step 0 \(hold-key\): /);
      expect(run.error.details.receipts).toHaveLength(2);
      const [step, next] = run.error.details.receipts;
      expect(step.status).toBe("failed");
      expect(step.error.code).toBe("CANCELLED");
      expect(step.error.details.cancelled).toBe(true);
      expect(step.delivery).toBe("partial");
      expect(step.route).toBe("foreground_input");
      expect(step.cleanup.keys_released).toBe(true);
      expect(next.status).toBe("unattempted");
      expect(ms, "ended well before the 3000 ms hold").toBeLessThan(2500);
      const [input] = requestsOf(sb, "input");
      expect(sb.cancels()).toEqual([input!.id]);
      expect(mutations(sb.ops()), "never resent").toEqual(["input"]);
    } finally {
      await p.close();
    }
  });

  it("a program's wait step ends early on cancel: the step fails CANCELLED, nothing is sent", async () => {
    const sb = sandbox();
    const p = new ServeProcess(sb);
    try {
      const program = { app: "fixture-app", steps: [{ action: "wait", ms: 5000 }, { action: "wait", ms: 10 }], observe: false };
      // Resolved first, so the cancel lands inside the wait.
      expect((await p.request({ id: "warm", command: "list-windows", args: { app: "fixture-app" } })).ok).toBe(true);
      p.send({ id: "w", command: "run", args: { program } });
      await new Promise((r) => setTimeout(r, 300));
      const t0 = performance.now();
      p.send({ id: "stop", command: "cancel", args: { id: "w" } });
      const lines = await p.waitLines(3);
      const w = lines.find((l) => l.id === "w");
      expect(performance.now() - t0, "the 5000 ms wait did not run out").toBeLessThan(1500);
      expect(w).toMatchObject({ ok: false, error: { code: "CANCELLED", details: { step: 0, delivery: "not_dispatched", stepsCompleted: 0 } } });
      const steps = w.error.details.receipts;
      expect(steps.map((s: any) => s.status)).toEqual(["failed", "unattempted"]);
      expect(steps[0].error.code).toBe("CANCELLED");
      expect(steps[0].delivery).toBe("not_dispatched");
      expect(mutations(sb.ops())).toEqual([]);
    } finally {
      await p.close();
    }
  });
});

describe("MCP cancellation", () => {
  const open: Client[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close().catch(() => undefined);
  });

  async function connect(sb: Sandbox, mode: string, flags: string[] = []): Promise<Client> {
    const env = Object.fromEntries(Object.entries(sb.env({ DECKHAND_FAKE_MODE: mode })).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE, ...flags], env, cwd: REPO, stderr: "pipe" });
    const client = new Client({ name: "deckhand-test", version: "0.0.0" });
    await client.connect(transport);
    open.push(client);
    return client;
  }

  it("a tool call the client aborts sends the helper a cancel frame for its request in flight", async () => {
    const sb = sandbox();
    const client = await connect(sb, "slow-on:get_tree:3000");
    const ac = new AbortController();
    const call = client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", noScreenshot: true } }, undefined, { signal: ac.signal });
    await waitFor(() => requestsOf(sb, "get_tree").length === 1, "get_tree to reach the helper", 10_000);
    ac.abort("the user changed their mind");
    await expect(call).rejects.toThrow();
    const [req] = requestsOf(sb, "get_tree");
    await waitFor(() => sb.cancels().includes(req!.id), "the cancel frame for get_tree", 2000);
    // The session goes on with the same helper.
    const r = await client.callTool({ name: "list_apps", arguments: {} });
    expect(r.isError).toBe(false);
    expect(new Set(sb.requests().map((x) => x.pid)).size).toBe(1);
  });

  it("an aborted run_program stops its hold-key in the helper (cancel frame), sent once", async () => {
    const sb = sandbox();
    const client = await connect(sb, "real-waits", ["--allow-foreground"]);
    const ac = new AbortController();
    const program = { app: "fixture-app", steps: [{ action: "hold-key", key: "shift", ms: 3000 }], observe: false };
    const call = client.callTool({ name: "run_program", arguments: program }, undefined, { signal: ac.signal });
    await waitFor(() => requestsOf(sb, "input").length === 1, "the input to reach the helper", 10_000);
    const t0 = performance.now();
    ac.abort();
    await expect(call).rejects.toThrow();
    const [input] = requestsOf(sb, "input");
    await waitFor(() => sb.cancels().includes(input!.id), "the cancel frame for input", 2000);
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(mutations(sb.ops())).toEqual(["input"]);
  });
});
