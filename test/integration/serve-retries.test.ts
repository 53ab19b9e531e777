// Safe retries in serve (docs/serve.md), against the scripted helper, which
// logs every request it receives: a repeated id runs its helper op once (in
// flight: answered when the first finishes; finished: the stored answer),
// both marked `replayed`; the same id asking something else is refused
// (id-reused), nothing run; `status` lists what is in flight and what
// finished; a request's own deadlineMs cancels it (TIMEOUT, client-deadline,
// its delivery known, the helper's op cancelled by a wire cancel).
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, observedSandbox, sandbox, ServeProcess, waitFor, type Sandbox } from "./harness.ts";

const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});
afterAll(cleanupSandboxes);

function serve(sb: Sandbox, args: string[] = [], mode?: string): ServeProcess {
  const p = new ServeProcess(sb, args, { mode });
  procs.push(p);
  return p;
}
const ops = (sb: Sandbox, op: string) => sb.requests().filter((r) => r.op === op);
const linesOf = (s: ServeProcess, id: unknown) => s.lines.filter((l) => l.id === id);
const CLICK_OK = { command: "click", args: { app: "fixture-app", elementIndex: 1 } };
/** A line without its replay mark: what the first answer was. */
const unmarked = ({ replayed: _r, ...rest }: any) => rest;

describe("serve: a request id is run at most once", () => {
  it("a finished request sent again under its id: the stored envelope, marked replayed; the helper op ran once", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    const first = await s.request({ id: "c1", ...CLICK_OK });
    expect(first.ok, JSON.stringify(first.error)).toBe(true);
    expect(first.replayed).toBeUndefined();
    s.send({ id: "c1", ...CLICK_OK });
    const lines = await s.waitLines(2);
    const again = lines[1];
    expect(again).toMatchObject({ id: "c1", replayed: true });
    expect(unmarked(again)).toEqual(first);
    expect(ops(sb, "element_action")).toHaveLength(1);
    // Key order and a changed deadline do not make it another request.
    s.send({ args: { elementIndex: 1, app: "fixture-app" }, command: "click", id: "c1", deadlineMs: 5000 });
    const third = (await s.waitLines(3))[2];
    expect(third).toMatchObject({ id: "c1", replayed: true, ok: true });
    expect(ops(sb, "element_action")).toHaveLength(1);
  });

  it("a duplicate while the first is in flight waits for it and gets the same envelope", async () => {
    const sb = await observedSandbox();
    const s = serve(sb, [], "slow-on:element_action:600");
    s.send({ id: 7, ...CLICK_OK }, { id: 7, ...CLICK_OK });
    await s.waitLines(2);
    const [a, b] = linesOf(s, 7);
    expect(a.replayed).toBeUndefined();
    expect(b.replayed).toBe(true);
    expect(a.ok).toBe(true);
    expect(unmarked(b)).toEqual(a);
    expect(ops(sb, "element_action")).toHaveLength(1);
  });

  it("numbers and strings are different ids", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    await s.request({ id: 5, ...CLICK_OK });
    const b = await s.request({ id: "5", ...CLICK_OK });
    expect(b.replayed).toBeUndefined();
    expect(ops(sb, "element_action")).toHaveLength(2);
  });

  it("the same id asking something else: INVALID_ARGUMENTS id-reused, nothing run", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    await s.request({ id: "r", ...CLICK_OK });
    s.send({ id: "r", command: "click", args: { app: "fixture-app", elementIndex: 2 } });
    const refused = (await s.waitLines(2))[1];
    expect(refused).toMatchObject({ id: "r", ok: false, command: "click", error: { code: "INVALID_ARGUMENTS", details: { reason: "id-reused", field: "id", firstCommand: "click", delivery: "not_dispatched" } } });
    expect(refused.replayed).toBeUndefined();
    expect(ops(sb, "element_action")).toHaveLength(1);
    // Also while the first is in flight, and for another command.
    s.send({ id: "r", command: "list-apps", args: {} });
    expect((await s.waitLines(3))[2]).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS", details: { reason: "id-reused" } } });
  });

  it("requests without an id are not journaled: each runs", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    s.send(CLICK_OK, CLICK_OK);
    const lines = await s.waitLines(2);
    expect(lines.map((l) => [l.id, l.ok, l.replayed])).toEqual([
      [null, true, undefined],
      [null, true, undefined],
    ]);
    expect(ops(sb, "element_action")).toHaveLength(2);
  });

  it("a request refused as too many in flight was not run: its retry runs", async () => {
    const sb = await observedSandbox();
    const s = serve(sb, ["--max-inflight", "1"], "slow-on:element_action:400");
    s.send({ id: "slow", ...CLICK_OK }, { id: "x", ...CLICK_OK });
    await s.waitLines(2);
    expect(linesOf(s, "x")[0]).toMatchObject({ ok: false, error: { details: { reason: "too-many-in-flight" } } });
    const retry = await s.request({ id: "x2", command: "list-apps", args: {} });
    expect(retry.ok).toBe(true);
    s.send({ id: "x", ...CLICK_OK });
    await waitFor(() => linesOf(s, "x").length === 2, "the retry's answer");
    expect(linesOf(s, "x")[1]).toMatchObject({ ok: true });
    expect(linesOf(s, "x")[1].replayed).toBeUndefined();
  });
});

describe("serve: status", () => {
  it("lists requests in flight, then the finished ones; answered at once, never journaled", async () => {
    const sb = await observedSandbox();
    const s = serve(sb, [], "slow-on:element_action:800");
    s.send({ id: "slow", ...CLICK_OK });
    await waitFor(() => ops(sb, "element_action").length === 1, "the click in flight");
    const t0 = Date.now();
    const st = await s.request({ id: "st1", command: "status" });
    expect(Date.now() - t0).toBeLessThan(500);
    expect(st).toMatchObject({ ok: true, command: "status" });
    expect(st.result.inflight).toEqual([{ id: "slow", command: "click", startedAt: expect.any(String), elapsedMs: expect.any(Number) }]);
    expect(st.result.recent).toEqual([]);
    await waitFor(() => linesOf(s, "slow").length === 1, "the click's answer", 5000);
    // A failed one too, with its code.
    await s.request({ id: "bad", command: "click", args: { app: "no-such-app", elementIndex: 1 } });
    s.send({ id: "st1", command: "status" });
    await waitFor(() => linesOf(s, "st1").length === 2, "the second status");
    const st2 = linesOf(s, "st1")[1];
    expect(st2.replayed).toBeUndefined();
    expect(st2.result.inflight).toEqual([]);
    expect(st2.result.recent).toEqual([
      { id: "bad", command: "click", ok: false, code: "APP_NOT_FOUND", finishedAt: expect.any(String) },
      { id: "slow", command: "click", ok: true, finishedAt: expect.any(String) },
    ]);
    expect(Date.parse(st2.result.recent[0].finishedAt)).toBeGreaterThanOrEqual(Date.parse(st2.result.recent[1].finishedAt));
  });

  it("is answered even at the in-flight cap", async () => {
    const sb = await observedSandbox();
    const s = serve(sb, ["--max-inflight", "1"], "slow-on:element_action:600");
    s.send({ id: "slow", ...CLICK_OK }, { id: "st", command: "status" });
    await waitFor(() => linesOf(s, "st").length === 1, "status");
    expect(linesOf(s, "st")[0]).toMatchObject({ ok: true, result: { inflight: [{ id: "slow" }] } });
  });
});

describe("serve: a client deadline per request", () => {
  it("expiry cancels the request: TIMEOUT, reason client-deadline, the delivery known, the helper op cancelled", async () => {
    const sb = sandbox();
    const s = serve(sb, ["--allow-foreground"], "input-ms:5000");
    // The helper started and the target resolved once: the deadline then covers the typing.
    await s.request({ id: "warm", command: "list-windows", args: { app: "fixture-app" } });
    const t0 = Date.now();
    const line = await s.request({ id: "d", command: "type-text", args: { app: "fixture-app", text: "a long text" }, deadlineMs: 1000 } as never);
    const took = Date.now() - t0;
    expect(line).toMatchObject({ id: "d", ok: false, command: "type-text", error: { code: "TIMEOUT", details: { reason: "client-deadline", deadlineMs: 1000, delivery: "partial", cancelled: true } } });
    expect(took).toBeGreaterThanOrEqual(990);
    expect(took).toBeLessThan(4000);
    const input = ops(sb, "input");
    expect(input).toHaveLength(1);
    expect(sb.cancels()).toContain(input[0]!.id);
    // Its retry is answered from it: never run again.
    s.send({ id: "d", command: "type-text", args: { app: "fixture-app", text: "a long text" }, deadlineMs: 1000 });
    await waitFor(() => linesOf(s, "d").length === 2, "the retry");
    expect(linesOf(s, "d")[1]).toMatchObject({ replayed: true, error: { code: "TIMEOUT" } });
    expect(ops(sb, "input")).toHaveLength(1);
  });

  it("expiry while waiting for the foreground lease: TIMEOUT client-deadline, nothing sent", async () => {
    const sb = sandbox();
    const { writeFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    // A live holder (this test's process) with a lease that does not expire.
    writeFileSync(join(sb.stateDir, "foreground.lease"), JSON.stringify({ pid: process.pid, startTime: null, command: "deckhand run", acquiredAt: new Date().toISOString(), expiresAt: new Date(Date.now() + 60_000).toISOString(), token: "t" }));
    const s = serve(sb, ["--allow-foreground"]);
    await s.request({ id: "warm", command: "list-windows", args: { app: "fixture-app" } });
    const line = await s.request({ id: "w", command: "type-text", args: { app: "fixture-app", text: "hi" }, deadlineMs: 1500 } as never);
    expect(line).toMatchObject({ ok: false, error: { code: "TIMEOUT", details: { reason: "client-deadline", delivery: "not_dispatched", waitingFor: "foreground-lease" } } });
    expect(ops(sb, "input")).toEqual([]);
  });

  it("a request that finishes in time is answered as usual", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    const line = await s.request({ id: "ok", ...CLICK_OK, deadlineMs: 10_000 } as never);
    expect(line).toMatchObject({ ok: true, command: "click" });
  });

  it("a bad deadlineMs: INVALID_ARGUMENTS naming it, nothing run, not journaled", async () => {
    const sb = await observedSandbox();
    const s = serve(sb);
    for (const deadlineMs of [0, -5, 1.5, "100"]) {
      const line = await s.request({ id: `b${String(deadlineMs)}`, ...CLICK_OK, deadlineMs } as never);
      expect(line).toMatchObject({ ok: false, command: "click", error: { code: "INVALID_ARGUMENTS", details: { field: "deadlineMs", reason: "bad-deadline" } } });
    }
    expect(ops(sb, "element_action")).toEqual([]);
    // The same id with a good deadline then runs.
    s.send({ id: "b0", ...CLICK_OK, deadlineMs: 5000 });
    await waitFor(() => linesOf(s, "b0").length === 2, "the fixed request");
    expect(linesOf(s, "b0")[1]).toMatchObject({ ok: true });
    expect(ops(sb, "element_action")).toHaveLength(1);
  });
});
