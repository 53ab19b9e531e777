// A helper's descendants that left its process group (setsid'd children)
// die with it: the supervisor walks the helper's tree (tree-kill) before it
// kills the group, whenever it gives up on a live helper: no hello, a
// timeout, a protocol breach, a helper that lingers at shutdown.
import { readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { SupervisorOptions } from "../../src/helpers/supervisor.ts";
import { FIXTURE_WINDOW, REPO, cleanupSandboxes, isAlive, rejection, sandbox, useSupervisors, waitFor, type Sandbox } from "./harness.ts";

const DETACHED = join(REPO, "test", "fixtures", "helpers", "detached-child-helper.mjs");
const start = useSupervisors();
const pidFiles: string[] = [];

afterAll(() => {
  // Whatever a failed test left behind.
  for (const f of pidFiles) for (const pid of grandchildren(f)) if (isAlive(pid)) process.kill(pid, "SIGKILL");
  cleanupSandboxes();
});

function grandchildren(pidFile: string): number[] {
  if (!existsSync(pidFile)) return [];
  return readFileSync(pidFile, "utf8").split("\n").filter(Boolean).map(Number);
}

/** The process group of a live process. */
function pgrp(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

function detachedHelper(sb: Sandbox, env: Record<string, string>, opts: Partial<SupervisorOptions> = {}) {
  const pidFile = join(sb.dir, "grandchildren.pids");
  pidFiles.push(pidFile);
  const sup = start(sb, "", { path: DETACHED, args: [pidFile], env: sb.env(env), ...opts });
  return { sup, pidFile };
}

async function expectAllGone(pidFile: string, count: number): Promise<void> {
  const pids = grandchildren(pidFile);
  expect(pids).toHaveLength(count);
  await waitFor(() => pids.every((p) => !isAlive(p)), `grandchildren ${pids.join(", ")} to be killed`);
}

describe.runIf(process.platform === "linux")("a helper's descendants outside its process group", () => {
  it("no hello: the helper is given up on and its setsid'd grandchild dies too", async () => {
    const sb = sandbox();
    const { sup, pidFile } = detachedHelper(sb, {}, { helloTimeoutMs: 1500 });
    const p = sup.start();
    await waitFor(() => grandchildren(pidFile).length === 1, "the grandchild's pid");
    const [grandchild] = grandchildren(pidFile);
    expect(isAlive(grandchild!)).toBe(true);
    expect(pgrp(grandchild!)).not.toBe(pgrp(sup.pid!)); // out of the helper's group: a group kill alone misses it
    const err = await rejection(p);
    expect(err.code).toBe("HELPER_UNAVAILABLE");
    expect(err.details.reason).toBe("no-hello");
    await expectAllGone(pidFile, 1);
  });

  it("shutdown: a helper that ignores EOF is killed after its grace, with its grandchild", async () => {
    const sb = sandbox();
    const { sup, pidFile } = detachedHelper(sb, {}, { helloTimeoutMs: 30_000 });
    const p = sup.start().catch((e: unknown) => e);
    await waitFor(() => grandchildren(pidFile).length === 1, "the grandchild's pid");
    const helper = sup.pid!;
    const started = Date.now();
    await sup.stop();
    expect(Date.now() - started).toBeLessThan(4000);
    // stop() returns once the tree walk is done and every SIGKILL is sent (dying takes the kernel a moment).
    await waitFor(() => !isAlive(helper), "the helper to die");
    await expectAllGone(pidFile, 1);
    await p;
  });

  it("a timeout: the hung helper and its grandchild are killed", async () => {
    const sb = sandbox();
    const { sup, pidFile } = detachedHelper(sb, { DECKHAND_DETACHED_THEN: "fake", DECKHAND_FAKE_MODE: "hang-on:get_tree" }, { deadlines: { get_tree: 100 }, graceMs: 50 });
    await sup.start();
    expect(grandchildren(pidFile).filter(isAlive)).toHaveLength(1);
    const err = await rejection(sup.request("get_tree", { pid: 4242, window_id: FIXTURE_WINDOW, max_depth: 8, max_children: 100, max_nodes: 100 }));
    expect(err.code).toBe("TIMEOUT");
    await expectAllGone(pidFile, 1);
  });

  it("a protocol breach: each broken helper's grandchild is killed (the read is retried once on a fresh helper)", async () => {
    const sb = sandbox();
    const { sup, pidFile } = detachedHelper(sb, { DECKHAND_DETACHED_THEN: "fake", DECKHAND_FAKE_MODE: "garbage" });
    const err = await rejection(sup.request("list_apps", {}));
    expect(["HELPER_UNAVAILABLE", "HELPER_PROTOCOL_ERROR"]).toContain(err.code);
    expect(sup.stats.protocolErrors).toBe(2);
    await expectAllGone(pidFile, 2);
  });
});
