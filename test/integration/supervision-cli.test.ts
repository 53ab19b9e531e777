// Helper misbehaviour seen from the one-shot CLI: always exactly one envelope,
// the right code and delivery axis, never a deckhand crash, nothing sent twice,
// and no helper process left behind.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, isAlive, observedSandbox, sandbox, waitFor, type CliResult, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const count = (sb: Sandbox, op: string) => sb.requests().filter((r) => r.op === op).length;

/** deckhand did not crash and left no helper running. */
async function clean(sb: Sandbox, r: CliResult) {
  expect(r.signal).toBeNull();
  expect(r.stderr).not.toMatch(/fatal|internal error/i);
  if (!r.envelope.ok) expect(r.envelope.error!.code).not.toBe("INTERNAL");
  const pids = [...new Set(sb.requests().map((q) => q.pid))];
  for (const pid of pids) await waitFor(() => !isAlive(pid), `helper ${pid} to be gone`, 3000);
}

describe("supervision through the CLI", () => {
  it("no hello (DECKHAND_HELLO_TIMEOUT_MS low) -> HELPER_UNAVAILABLE quickly", async () => {
    const sb = sandbox();
    const started = Date.now();
    const r = await cli(sb, ["list-apps"], { mode: "no-hello", env: { DECKHAND_HELLO_TIMEOUT_MS: "200" } });
    const e = expectError(r, "list-apps", "HELPER_UNAVAILABLE");
    expect(e.details.helloTimeoutMs).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    await clean(sb, r);
  });

  it("a 1.x helper (wrong major) -> HELPER_INCOMPATIBLE naming both versions", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app"], { mode: "wrong-major" });
    const e = expectError(r, "get-app-state", "HELPER_INCOMPATIBLE");
    expect(e.message).toMatch(/1\.2.*2\.3/);
    expect(e.details).toMatchObject({ helperProtocol: "1.2", deckhandProtocol: "2.3" });
  });

  it("crash once on get_tree -> get-app-state succeeds; two get_tree from two helpers", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { mode: "crash-once-on:get_tree" });
    expectOk(r, "get-app-state");
    const trees = sb.requests().filter((q) => q.op === "get_tree");
    expect(trees).toHaveLength(2);
    expect(trees[0]!.pid).not.toBe(trees[1]!.pid);
    await clean(sb, r);
  });

  it("a helper that exits after every response: get-app-state still succeeds", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { mode: "exit-after-response" });
    expectOk(r, "get-app-state");
    // How many helpers it took depends on timing (the fake exits 5 ms after
    // answering); every request was answered and none is left running.
    expect(sb.ops()).toEqual(expect.arrayContaining(["permissions", "list_apps", "list_windows", "get_tree"]));
    await clean(sb, r);
  });

  it("crash on element_action -> ACTION_FAILED, delivery unknown, sent once", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"], { mode: "crash-on:element_action" });
    const e = expectError(r, "click", "ACTION_FAILED");
    expect(e.details.delivery).toBe("unknown");
    expect(count(sb, "element_action")).toBe(1);
    await clean(sb, r);
  });

  it("no receipt on a click -> delivery unknown, sent once", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"], { mode: "no-receipt" });
    const e = expectError(r, "click", "ACTION_FAILED");
    expect(e.details.delivery).toBe("unknown");
    expect(count(sb, "element_action")).toBe(1);
    await clean(sb, r);
  });

  for (const mode of ["garbage", "oversized", "unknown-id"]) {
    it(`${mode} on reads -> HELPER_UNAVAILABLE envelope, no crash, helpers killed`, async () => {
      const sb = sandbox();
      const r = await cli(sb, ["list-apps"], { mode });
      expectError(r, "list-apps", "HELPER_UNAVAILABLE");
      expect(count(sb, "list_apps")).toBe(2);
      await clean(sb, r);
    });
  }

  it("repeated crashes -> HELPER_UNAVAILABLE with the helper's last stderr lines in details", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["list-apps"], { mode: "crash-on:list_apps" });
    const e = expectError(r, "list-apps", "HELPER_UNAVAILABLE");
    expect(String(e.details.stderrTail)).toMatch(/fake-helper \d+ starting \(crash-on:list_apps\)/);
    await clean(sb, r);
  });

  it("flood of stderr: capabilities' helperStderr is bounded and deckhand keeps working", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["capabilities"], { mode: "flood-stderr" });
    const result = expectOk(r, "capabilities");
    expect(result.helperStderr.length).toBeLessThanOrEqual(20);
    for (const line of result.helperStderr) expect(line.length).toBeLessThanOrEqual(2001);
    expect(r.stdout.length).toBeLessThan(200_000);
    const next = await cli(sb, ["list-apps"], { mode: "flood-stderr" });
    expectOk(next, "list-apps");
  });

  it("permissions reports each check", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["permissions"]);
    const result = expectOk(r, "permissions");
    expect(result.allGranted).toBe(true);
    // Neutral ids; the platform's own travel beside them.
    expect(result.checks.map((c: { id: string }) => c.id)).toEqual(["accessibility", "display"]);
    expect(result.checks.map((c: { nativeId?: string }) => c.nativeId)).toEqual(["scripted_tree", "scripted_display"]);
  });

  it("a denied gating permission (neutral id) stops observation: PERMISSION_DENIED naming it", async () => {
    const sb = sandbox();
    sb.control({ deniedPermission: "display" });
    const e = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app"]), "get-app-state", "PERMISSION_DENIED");
    expect(e.details.permission).toBe("display");
    expect(sb.ops()).not.toContain("get_tree");
  });

  it("a denied permission the orchestrator does not gate on is shown, not enforced", async () => {
    const sb = sandbox();
    sb.control({ deniedPermission: "screen_capture_fast" });
    expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
  });
});
