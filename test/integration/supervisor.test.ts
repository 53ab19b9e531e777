// Helper supervision, in-process against the scripted fake helper: handshake,
// deadlines, kill-and-restart, and "a mutation is never sent twice".
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { DeckhandError } from "../../src/protocol/errors.ts";
import { Supervisor, type SupervisorOptions } from "../../src/helpers/supervisor.ts";
import type { OpArgs } from "../../src/wire/messages.ts";
import { cleanupSandboxes, FAKE, FIXTURE_WINDOW, isAlive, rejection, sandbox, useSupervisors, waitFor, type Sandbox } from "./harness.ts";

const require = createRequire(import.meta.url);
const start = useSupervisors();
afterAll(cleanupSandboxes);

function supervise(sb: Sandbox, mode: string, opts: Partial<SupervisorOptions> = {}): { sup: Supervisor; env: NodeJS.ProcessEnv } {
  // Tests change env afterwards (the helper's next start sees it): the same object.
  const env = sb.env({ DECKHAND_FAKE_MODE: mode });
  return { sup: start(sb, mode, { env, ...opts }), env };
}

const CLICK_OK: OpArgs<"element_action"> = {
  pid: 4242,
  window_id: FIXTURE_WINDOW,
  locator: { path: [0], role: "button", native_role: "push button", name: "OK", identifier: "ok-button" },
  action: "click",
  text: null,
  start: null,
  end: null,
  action_name: null,
};

const count = (sb: Sandbox, op: string) => sb.requests().filter((r) => r.op === op).length;

describe("handshake", () => {
  it("hello: capabilities and limits are known after start", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "");
    const hello = await sup.start();
    expect(hello.protocol).toEqual([2, 3]);
    expect(hello.helper.name).toBe("fake-helper");
    expect(sup.isSupported("action.click")).toBe(true);
    expect(sup.isSupported("get_tree.cache_bulk")).toBe(false);
    expect(isAlive(sup.pid!)).toBe(true);
  });

  it("no hello within the bound -> HELPER_UNAVAILABLE, the silent helper is killed", async () => {
    const sb = sandbox();
    // 1.5 s: long enough for node to start the fake helper and print its
    // stderr line on a loaded 2-core machine, short enough to be a bound.
    const { sup } = supervise(sb, "no-hello", { helloTimeoutMs: 1500 });
    const started = Date.now();
    const p = sup.request("list_apps", {});
    await waitFor(() => sup.pid !== null, "spawn");
    const pid = sup.pid!;
    const err = await rejection(p);
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details.helloTimeoutMs).toBe(1500);
    expect(String(err.details.stderrTail)).toContain("fake-helper");
    expect(Date.now() - started).toBeLessThan(5000);
    await waitFor(() => !isAlive(pid), "the silent helper to die");
    expect(count(sb, "list_apps")).toBe(0);
  });

  it("DECKHAND_HELLO_TIMEOUT_MS in the supervisor's env bounds the wait", async () => {
    const sb = sandbox();
    const env = sb.env({ DECKHAND_FAKE_MODE: "no-hello", DECKHAND_HELLO_TIMEOUT_MS: "150" });
    const sup = start(sb, "", { path: FAKE, env, helloTimeoutMs: undefined }); // the env's bound, not the test default
    const err = await rejection(sup.start());
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details.helloTimeoutMs).toBe(150);
  });

  it("a slow hello within the bound is fine", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "slow-hello:100", { helloTimeoutMs: 2000 });
    const { result } = await sup.request("list_apps", {});
    expect(result.apps.length).toBe(4);
  });

  it("a 1.x helper (before the neutral vocabulary) -> HELPER_INCOMPATIBLE naming both versions, nothing dispatched", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "wrong-major");
    const err = await rejection(sup.request("element_action", CLICK_OK));
    expect(err.code).toBe("HELPER_INCOMPATIBLE");
    expect(err.message).toContain("1.2");
    expect(err.message).toContain("2.3");
    expect(err.details).toMatchObject({ helperProtocol: "1.2", deckhandProtocol: "2.3" });
    expect(sb.requests()).toEqual([]);
  });

  it("a newer major (3.0) -> HELPER_INCOMPATIBLE too, nothing dispatched", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "future-major");
    const err = await rejection(sup.request("list_apps", {}));
    expect(err.code).toBe("HELPER_INCOMPATIBLE");
    expect(err.details).toMatchObject({ helperProtocol: "3.0", deckhandProtocol: "2.3" });
    expect(sb.requests()).toEqual([]);
  });

  it("wrong major stays HELPER_INCOMPATIBLE on every attempt (not counted as crashes)", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "wrong-major", { maxCrashes: 2 });
    for (let i = 0; i < 4; i++) {
      const p = sup.request("list_apps", {});
      await waitFor(() => sup.pid !== null, "spawn");
      const pid = sup.pid!;
      const err = await rejection(p);
      expect(err.code).toBe("HELPER_INCOMPATIBLE");
      // Let its exit be seen before the next attempt: an exit must not count as a crash.
      await waitFor(() => !isAlive(pid), "the incompatible helper to die");
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(sup.stats.crashes).toBe(0);
  });

  it("a newer minor (2.4) whose hello has a field 2.3 does not know is accepted", async () => {
    const sb = sandbox();
    const script = join(sb.dir, "minor-helper.mjs");
    writeFileSync(
      script,
      `#!/usr/bin/env node
import { Packr } from ${JSON.stringify(require.resolve("msgpackr"))};
const packr = new Packr({ useRecords: false });
const send = (m) => { const b = packr.pack(m); const h = Buffer.alloc(4); h.writeUInt32BE(b.length); process.stdout.write(Buffer.concat([h, b])); };
send({ type: "hello", protocol: [2, 4], helper: { name: "minor", version: "2.4.0", platform: "fake", backend: "x" },
  capabilities: { list_apps: { supported: true, verified: "vectors" }, "future.cap": { supported: true, verified: "live" } },
  limits: { max_frame_bytes: 1048576, max_future: 1 }, session: { id: "new in 2.4" } });
process.stdin.on("data", () => {}); process.stdin.on("end", () => process.exit(0));
`,
    );
    chmodSync(script, 0o755);
    const sup = start(sb, "", { path: script, env: sb.env(), helloTimeoutMs: 3000 });
    const hello = await sup.start();
    expect(hello.protocol).toEqual([2, 4]);
  });

  it("a helper that is not executable -> HELPER_UNAVAILABLE", async () => {
    const sb = sandbox();
    const sup = start(sb, "", { path: sb.dir, env: sb.env() });
    const err = await rejection(sup.start());
    expect(err.code).toBe("HELPER_UNAVAILABLE");
  });
});

describe("deadlines", () => {
  it("hang on a mutation -> TIMEOUT, delivery unknown, group killed, restarted next time, sent once", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "hang-on:element_action", { deadlines: { element_action: 150 }, graceMs: 50 });
    await sup.start();
    const oldPid = sup.pid!;
    const started = Date.now();
    const err = await rejection(sup.request("element_action", CLICK_OK));
    expect(err.code).toBe("TIMEOUT");
    expect(err.details.delivery).toBe("unknown");
    expect(err.details.op).toBe("element_action");
    expect(Date.now() - started).toBeLessThan(2000);
    await waitFor(() => !isAlive(oldPid), "the hung helper to be killed");
    expect(sup.stats.timeouts).toBe(1);

    const { result } = await sup.request("list_apps", {});
    expect(result.apps.length).toBe(4);
    expect(sup.pid).not.toBe(oldPid);
    expect(count(sb, "element_action")).toBe(1);
    const pids = new Set(sb.requests().map((r) => r.pid));
    expect(pids).toEqual(new Set([oldPid, sup.pid]));
  });

  it("a timeout kills the helper's whole process group (its children too)", async () => {
    const sb = sandbox();
    const script = join(sb.dir, "forking-helper.sh");
    const childPidFile = join(sb.dir, "grandchild.pid");
    writeFileSync(script, `#!/bin/sh\nsleep 300 &\necho $! > '${childPidFile}'\nexec node '${FAKE}'\n`);
    chmodSync(script, 0o755);
    const sup = start(sb, "", { path: script, env: sb.env({ DECKHAND_FAKE_MODE: "hang-on:element_action" }), deadlines: { element_action: 100 }, graceMs: 50 });
    await sup.start();
    const grandchild = Number(readFileSync(childPidFile, "utf8"));
    expect(isAlive(grandchild)).toBe(true);
    const err = await rejection(sup.request("element_action", CLICK_OK));
    expect(err.code).toBe("TIMEOUT");
    await waitFor(() => !isAlive(grandchild), "the helper's child to be killed with its group");
  });

  it("hang on a read -> TIMEOUT (not retried: a hung helper is not a crashed one)", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "hang-on:get_tree", { deadlines: { get_tree: 100 }, graceMs: 50 });
    const err = await rejection(sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 100, max_nodes: 100 }));
    expect(err.code).toBe("TIMEOUT");
    expect(count(sb, "get_tree")).toBe(1);
  });

  it("a read in flight when another request times out is retried on the fresh helper, not failed as TIMEOUT", async () => {
    const sb = sandbox();
    const { sup, env } = supervise(sb, "hang-on:screenshot,hang-on:get_tree", { deadlines: { screenshot: 150, get_tree: 5000 }, graceMs: 50 });
    await sup.start();
    const tree = sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 100, max_nodes: 100 });
    const shot = sup.request("screenshot", { window_id: FIXTURE_WINDOW, path: join(sb.dir, "s.png"), redact_secure: true, redact: [] });
    await waitFor(() => count(sb, "get_tree") === 1 && count(sb, "screenshot") === 1, "both requests to reach the helper");
    env.DECKHAND_FAKE_MODE = ""; // the next helper answers
    const shotErr = await rejection(shot);
    expect(shotErr.code).toBe("TIMEOUT");
    // get_tree's own deadline has not passed: it was lost with the killed helper, and is a read.
    const { result } = await tree;
    expect(result.nodes.length).toBeGreaterThan(0);
    expect(count(sb, "get_tree")).toBe(2);
  });

  it("the deadline is sent to the helper", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "", { deadlines: { list_apps: 1234 } });
    await sup.request("list_apps", {});
    await sup.request("list_windows", { pid: null }, { deadlineMs: 777 });
    // The fake logs args only; the deadline travels beside them. Prove the request went through.
    expect(sb.ops()).toEqual(["list_apps", "list_windows"]);
  });
});

describe("crashes", () => {
  it("crash during a mutation -> delivery unknown, never resent", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "crash-on:element_action");
    const err = await rejection(sup.request("element_action", CLICK_OK));
    expect(err.code).toBe("ACTION_FAILED");
    expect(err.details.delivery).toBe("unknown");
    expect(err.message).toContain("not retried");
    expect(count(sb, "element_action")).toBe(1);
    // The next request gets a fresh helper.
    await sup.request("list_apps", {});
    expect(count(sb, "element_action")).toBe(1);
  });

  it("crash once during a read -> retried once on a fresh helper and succeeds", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "crash-once-on:get_tree");
    const { result } = await sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 100, max_nodes: 100 });
    expect(result.nodes[1]!.name).toBe("OK");
    const trees = sb.requests().filter((r) => r.op === "get_tree");
    expect(trees).toHaveLength(2);
    expect(trees[0]!.pid).not.toBe(trees[1]!.pid);
    expect(isAlive(trees[0]!.pid)).toBe(false);
    expect(sup.stats.crashes).toBe(1);
  });

  it("a helper that dies between requests is restarted transparently (read and mutation)", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "exit-after-response");
    await sup.request("list_apps", {});
    const first = sb.requests()[0]!.pid;
    await waitFor(() => sup.pid === null && !isAlive(first), "the helper to exit");
    const reply = await sup.request("element_action", CLICK_OK);
    expect(reply.receipt!.delivery).toBe("submitted");
    const log = sb.requests();
    expect(log.map((r) => r.op)).toEqual(["list_apps", "element_action"]);
    expect(log[1]!.pid).not.toBe(first);
  });

  it("a helper that keeps exiting between requests is not a crash loop: every request succeeds", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "exit-after-response", { maxCrashes: 3 });
    for (let i = 0; i < 6; i++) {
      const { result } = await sup.request("list_apps", {});
      expect(result.apps).toHaveLength(4);
      const pid = sb.requests().at(-1)!.pid;
      await waitFor(() => sup.pid === null && !isAlive(pid), "the helper to exit");
    }
    expect(new Set(sb.requests().map((r) => r.pid)).size).toBe(6);
  });

  it("repeated crashes in a short window -> HELPER_UNAVAILABLE with the helper's last stderr lines", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "crash-on:list_apps", { maxCrashes: 3 });
    const first = await rejection(sup.request("list_apps", {}));
    expect(first.code).toBe("HELPER_UNAVAILABLE");
    expect(String(first.details.stderrTail)).toMatch(/fake-helper \d+ starting/);
    expect(count(sb, "list_apps")).toBe(2); // a read: retried once
    let last: DeckhandError = first;
    for (let i = 0; i < 4 && !/giving up/.test(last.message); i++) last = await rejection(sup.request("list_apps", {}));
    expect(last.code).toBe("HELPER_UNAVAILABLE");
    expect(last.message).toMatch(/giving up/);
    expect(String(last.details.stderrTail)).toMatch(/fake-helper \d+ starting \(crash-on:list_apps\)/);
    expect(Number(last.details.crashes)).toBeGreaterThanOrEqual(3);
  });
});

describe("protocol breaches", () => {
  const cases = [
    ["garbage", "malformed"],
    ["oversized", "oversized"],
    ["unknown-id", "unknown request id"],
  ] as const;

  for (const [mode] of cases) {
    it(`${mode} on a read -> retried once on a fresh helper, then HELPER_UNAVAILABLE; both helpers killed`, async () => {
      const sb = sandbox();
      const { sup, env } = supervise(sb, mode);
      const err = await rejection(sup.request("list_apps", {}));
      expect(err.code).toBe("HELPER_UNAVAILABLE");
      const log = sb.requests();
      expect(log.map((r) => r.op)).toEqual(["list_apps", "list_apps"]);
      expect(log[0]!.pid).not.toBe(log[1]!.pid);
      await waitFor(() => log.every((r) => !isAlive(r.pid)), "both helpers to be killed");
      expect(sup.stats.protocolErrors).toBe(2);
      // deckhand keeps working once the helper behaves.
      env.DECKHAND_FAKE_MODE = "";
      const { result } = await sup.request("list_apps", {});
      expect(result.apps.length).toBe(4);
    });

    it(`${mode} on a mutation -> ACTION_FAILED, delivery unknown, sent once, helper killed`, async () => {
      const sb = sandbox();
      const { sup, env } = supervise(sb, mode);
      await sup.start();
      const pid = sup.pid!;
      const err = await rejection(sup.request("element_action", CLICK_OK));
      expect(["ACTION_FAILED", "TIMEOUT"]).toContain(err.code);
      expect(err.details.delivery).toBe("unknown");
      expect(count(sb, "element_action")).toBe(1);
      await waitFor(() => !isAlive(pid), "the helper to be killed");
      env.DECKHAND_FAKE_MODE = "";
      await sup.request("list_apps", {});
      expect(count(sb, "element_action")).toBe(1);
    });
  }

  it("no receipt on a mutation -> delivery unknown, not resent", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "no-receipt");
    const err = await rejection(sup.request("element_action", CLICK_OK));
    expect(err.code).toBe("ACTION_FAILED");
    expect(err.details.delivery).toBe("unknown");
    expect(count(sb, "element_action")).toBe(1);
    // Reads need no receipt.
    await sup.request("list_apps", {});
  });

  it("a helper error on a mutation keeps the helper's receipt", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "");
    const err = await rejection(sup.request("element_action", { ...CLICK_OK, locator: { ...CLICK_OK.locator, name: "Cancel" } }));
    expect(err.code).toBe("ELEMENT_UNRESOLVABLE");
    expect(err.details.delivery).toBe("not_dispatched");
    expect(sup.stats.protocolErrors).toBe(0);
  });

  it("flood of stderr -> bounded buffer, the helper keeps working", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "flood-stderr", { helloTimeoutMs: 10000 });
    const { result } = await sup.request("list_apps", {});
    expect(result.apps.length).toBe(4);
    const tail = sup.stderr.tail(10_000);
    const bytes = tail.reduce((n, l) => n + l.length, 0);
    expect(bytes).toBeLessThanOrEqual(64 * 1024 + 4096);
    expect(tail.length).toBeLessThanOrEqual(201);
    expect(sup.stderr.dropped).toBeGreaterThan(0);
    await waitFor(() => /fake-helper \d+ starting/.test(sup.stderr.tail(1)[0] ?? ""), "the helper's last stderr line");
  });
});

describe("concurrency and shutdown", () => {
  it("pipelined requests on one helper are matched by id", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "");
    const replies = await Promise.all([
      sup.request("list_apps", {}),
      sup.request("list_windows", { pid: 4343 }),
      sup.request("permissions", {}),
      sup.request("list_windows", { pid: 4242 }),
    ]);
    expect(replies[0]!.result.apps).toHaveLength(4);
    expect(replies[1]!.result.windows.map((w) => w.title)).toEqual(["xterm"]);
    expect(replies[2]!.result.checks[0]!.status).toBe("granted");
    expect(replies[3]!.result.windows).toHaveLength(2);
    expect(new Set(sb.requests().map((r) => r.pid)).size).toBe(1);
  });

  it("a crash fails every request in flight; reads are retried, the mutation is not", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "crash-on:element_action");
    const [read, mutation] = await Promise.allSettled([sup.request("list_apps", {}), sup.request("element_action", CLICK_OK)]);
    expect(read.status).toBe("fulfilled");
    expect(mutation.status).toBe("rejected");
    expect(((mutation as PromiseRejectedResult).reason as DeckhandError).details.delivery).toBe("unknown");
    expect(count(sb, "element_action")).toBe(1);
  });

  it("stop closes stdin and the helper exits; requests after stop are refused", async () => {
    const sb = sandbox();
    const { sup } = supervise(sb, "");
    await sup.start();
    const pid = sup.pid!;
    await sup.stop();
    expect(isAlive(pid)).toBe(false);
    const err = await rejection(sup.request("list_apps", {}));
    expect(err.code).toBe("HELPER_UNAVAILABLE");
  });
});
