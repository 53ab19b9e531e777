// `deckhand serve`: NDJSON requests in, one envelope with the same id out per
// request, pipelined; programs; clean shutdown on EOF.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectFlatDetails, expectOk, isAlive, observeFixture, sandbox, ServeProcess, waitFor, type Sandbox } from "./harness.ts";

const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});
afterAll(cleanupSandboxes);

function serve(sb: Sandbox, args: string[] = [], opts: { mode?: string; env?: Record<string, string> } = {}): ServeProcess {
  const p = new ServeProcess(sb, args, opts);
  procs.push(p);
  return p;
}

/** Live processes started with this sandbox's fake-helper log in their environment: its fake helpers. */
function fakeHelpersOf(sb: Sandbox): number[] {
  const mark = `DECKHAND_FAKE_LOG=${sb.logPath}`;
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/environ`, "latin1").split("\0").includes(mark) && readFileSync(`/proc/${d}/cmdline`, "latin1").includes("fake-helper");
      } catch {
        return false; // gone, or not ours to read
      }
    })
    .map(Number);
}

function expectLineEnvelope(line: any, command: string) {
  expect(line.schemaVersion).toBe(1);
  expect(line.command).toBe(command);
  expect(Object.keys(line).sort()).toEqual(line.ok ? ["command", "id", "ok", "result", "schemaVersion"] : ["command", "error", "id", "ok", "schemaVersion"]);
  if (!line.ok) expectFlatDetails(line.error.details);
}

describe("serve", () => {
  it("one request -> one envelope with the same id", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const line = await s.request({ id: 7, command: "list-apps", args: {} });
    expectLineEnvelope(line, "list-apps");
    expect(line.ok).toBe(true);
    expect(line.result.apps).toHaveLength(4);
  });

  it("pipelined requests are all answered, ids match", async () => {
    const sb = sandbox();
    const s = serve(sb);
    s.send(
      { id: 1, command: "list-apps", args: {} },
      { id: "two", command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } },
      { id: 3, command: "capabilities", args: {} },
      { id: 4, command: "list-windows", args: { app: "fixture-app" } },
      { id: 5, command: "click", args: { app: "no-such-app", elementIndex: 1 } },
    );
    const lines = await s.waitLines(5);
    const byId = new Map(lines.map((l) => [l.id, l]));
    expect([...byId.keys()].sort((a, b) => String(a).localeCompare(String(b)))).toEqual([1, 3, 4, 5, "two"]);
    expect(byId.get(1)).toMatchObject({ ok: true, command: "list-apps" });
    expect(byId.get("two")).toMatchObject({ ok: true, command: "get-app-state" });
    expect(byId.get(3)).toMatchObject({ ok: true, command: "capabilities" });
    expect(byId.get(4).result.windows).toHaveLength(2);
    expect(byId.get(5)).toMatchObject({ ok: false, command: "click", error: { code: "APP_NOT_FOUND" } });
    for (const l of lines) expectLineEnvelope(l, l.command);
    // One helper for the whole session.
    expect(new Set(sb.requests().map((r) => r.pid)).size).toBe(1);
  });

  it("invalid JSON -> error envelope with id null; the session goes on", async () => {
    const sb = sandbox();
    const s = serve(sb);
    s.send("{not json", "[1,2]");
    const lines = await s.waitLines(2);
    for (const l of lines) {
      expect(l).toMatchObject({ id: null, ok: false, command: "deckhand", error: { code: "INVALID_ARGUMENTS" } });
      expectLineEnvelope(l, "deckhand");
    }
    const next = await s.request({ id: "after", command: "list-apps" });
    expect(next.ok).toBe(true);
  });

  it("unknown command and invalid args -> INVALID_ARGUMENTS with the request's id", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const a = await s.request({ id: "u", command: "frobnicate", args: {} });
    expect(a).toMatchObject({ id: "u", ok: false, command: "deckhand", error: { code: "INVALID_ARGUMENTS" } });
    const b = await s.request({ id: "v", command: "click", args: { app: "fixture-app", elementIndex: "one" } });
    expect(b).toMatchObject({ id: "v", ok: false, command: "click", error: { code: "INVALID_ARGUMENTS" } });
    expect(sb.requests().filter((r) => r.op === "element_action")).toEqual([]);
  });

  it("foreground cannot be granted from a request", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const a = await s.request({ id: 1, command: "click", args: { app: "fixture-app", x: 700, y: 500, allowForeground: true } });
    expect(a.ok).toBe(false);
    expect(["INVALID_ARGUMENTS", "FOREGROUND_REQUIRED"]).toContain(a.error.code);
    const b = await s.request({ id: 2, command: "click", args: { app: "fixture-app", x: 700, y: 500 } });
    expect(b).toMatchObject({ ok: false, error: { code: "FOREGROUND_REQUIRED" } });
    expect(sb.requests().filter((r) => r.op === "input")).toEqual([]);
  });

  it("run program: per-step receipts (completed, failed, unattempted), firstFailure, one final observation", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const state = await s.request({ id: "obs", command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
    expect(state.ok).toBe(true);
    const treesBefore = sb.requests().filter((r) => r.op === "get_tree").length;
    const run = await s.request({
      id: "prog",
      command: "run",
      args: {
        program: {
          app: "fixture-app",
          noScreenshot: true,
          steps: [
            { action: "click", elementIndex: 1 },
            { action: "set-value", elementIndex: 3, value: "Ada" },
            { action: "click", elementIndex: 999 },
            { action: "click", elementIndex: 6 },
          ],
        },
      },
    });
    expectLineEnvelope(run, "run");
    // A failed step makes the request fail: its code, "step N (action): ...", and the evidence in details.
    expect(run.ok).toBe(false);
    expect(run.error).toMatchObject({ code: "ELEMENT_INDEX_NOT_FOUND", details: { step: 2, delivery: "not_dispatched", stepsCompleted: 2, elementIndex: 999 } });
    expect(run.error.message).toMatch(/^step 2 \(click\): /);
    const r = { steps: run.error.details.receipts, observation: run.error.details.observation, settle: run.error.details.settle };
    expect(r.steps.map((x: { status: string }) => x.status)).toEqual(["completed", "completed", "failed", "unattempted"]);
    expect(r.steps.map((x: { delivery: string }) => x.delivery)).toEqual(["submitted", "submitted", "not_dispatched", "not_dispatched"]);
    expect(r.steps[2].error.code).toBe("ELEMENT_INDEX_NOT_FOUND");
    expect(r.steps[1].verification.verified).toBe(true);
    // Two steps were sent: the final observation waited for the app to settle first.
    expect(r.settle).toEqual({ waitedMs: 100, events: 0, settled: true });
    expect(r.observation.snapshot.snapshotId).not.toBe(state.result.snapshot.snapshotId);
    // Exactly two actions sent, and exactly one tree read for the final observation.
    const log = sb.requests();
    expect(log.filter((q) => q.op === "element_action").map((q) => (q.args.locator as { name: string }).name)).toEqual(["OK", "Name"]);
    expect(log.filter((q) => q.op === "get_tree").length - treesBefore).toBe(1);
  });

  it("run program that fails validation -> INVALID_ARGUMENTS, nothing dispatched", async () => {
    const sb = sandbox();
    const s = serve(sb);
    await s.request({ id: 0, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
    const run = await s.request({
      id: "bad",
      command: "run",
      args: { program: { app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }, { action: "explode" }] } },
    });
    expect(run).toMatchObject({ id: "bad", ok: false, command: "run", error: { code: "INVALID_ARGUMENTS" } });
    expect(run.error.details.path).toBe("steps.1.action");
    expect(sb.requests().filter((q) => q.op === "element_action" || q.op === "input")).toEqual([]);
  });

  it("snapshots are shared between serve and the one-shot CLI (same state dir)", async () => {
    const sb = sandbox();
    const s = serve(sb);
    const state = await s.request({ id: 1, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
    const click = await s.request({ id: 2, command: "click", args: { app: "fixture-app", snapshotId: state.result.snapshot.snapshotId, elementIndex: 1 } });
    expect(click).toMatchObject({ ok: true, result: { delivery: "submitted", route: "accessibility" } });
    const oneShot = await cli(sb, ["click", "--app", "fixture-app", "--snapshot-id", state.result.snapshot.snapshotId, "--element-index", "6"]);
    expect(expectOk(oneShot, "click").delivery).toBe("submitted");
    // A newer one-shot observation supersedes serve's snapshot, also inside serve.
    await observeFixture(sb, ["--no-screenshot"]);
    const stale = await s.request({ id: 3, command: "click", args: { app: "fixture-app", snapshotId: state.result.snapshot.snapshotId, elementIndex: 1 } });
    expect(stale).toMatchObject({ ok: false, error: { code: "SNAPSHOT_STALE", details: { reason: "superseded" } } });
  });

  it("an incompatible helper is reported as such on every request, not as a crash loop; none is left running", async () => {
    const sb = sandbox();
    const s = serve(sb, [], { mode: "wrong-major" });
    for (let i = 0; i < 6; i++) {
      const line = await s.request({ id: i, command: "list-apps" });
      expect(line).toMatchObject({ ok: false, error: { code: "HELPER_INCOMPATIBLE", details: { helperProtocol: "1.2", deckhandProtocol: "2.3" } } });
    }
    // Each refused helper is killed (stopped, its tree walked, SIGKILLed): serve's end waits for none of them to be
    // left, stopped or not. (Killed with SIGKILL mid-way, serve left one stopped: one per full test run.)
    expect(await s.close()).toEqual({ code: 0, signal: null });
    await waitFor(() => fakeHelpersOf(sb).length === 0, "no fake helper of this sandbox left", 3000);
  });

  it("EOF: in-flight requests finish, exit 0, and the helper is gone", async () => {
    const sb = sandbox();
    const s = serve(sb);
    s.send({ id: 1, command: "list-apps", args: {} }, { id: 2, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
    const { code, signal } = await s.close();
    expect(signal).toBeNull();
    expect(code).toBe(0);
    expect(s.lines.map((l) => l.id).sort()).toEqual([1, 2]);
    const pids = new Set(sb.requests().map((r) => r.pid));
    expect(pids.size).toBe(1);
    for (const pid of pids) await waitFor(() => !isAlive(pid), `helper ${pid} to exit`, 3000);
  });

  it("a helper crash in serve: the mutation reports delivery unknown, the next request gets a fresh helper", async () => {
    const sb = sandbox();
    const s = serve(sb, [], { mode: "crash-on:element_action" });
    await s.request({ id: 1, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } });
    const click = await s.request({ id: 2, command: "click", args: { app: "fixture-app", elementIndex: 1 } });
    expect(click).toMatchObject({ ok: false, error: { code: "ACTION_FAILED", details: { delivery: "unknown" } } });
    const next = await s.request({ id: 3, command: "list-apps" });
    expect(next.ok).toBe(true);
    const log = sb.requests();
    expect(log.filter((q) => q.op === "element_action")).toHaveLength(1);
    expect(new Set(log.map((q) => q.pid)).size).toBe(2);
    expect(await s.close()).toEqual({ code: 0, signal: null });
  });

  it("an unknown serve flag -> one error envelope, exit 1", async () => {
    const sb = sandbox();
    const s = serve(sb, ["--bogus"]);
    const { code } = await s.exited;
    expect(code).toBe(1);
    expect(s.lines).toHaveLength(1);
    expect(s.lines[0]).toMatchObject({ id: null, ok: false, error: { code: "INVALID_ARGUMENTS" } });
  });
});
