// The cross-process foreground lease through the real CLI and serve, against
// the scripted helper (its log is shared by every process of a sandbox): a
// foreground input waits for a live holder and then fails FOREGROUND_BUSY
// naming it, sending nothing; a dead holder is taken over; background
// (accessibility) actions never wait; a program holds the lease from its
// first foreground request to its end, so another process cannot slip
// input between its steps.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, observedSandbox, sandbox, waitFor, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);
const sleepers: ChildProcess[] = [];
afterEach(() => {
  for (const p of sleepers.splice(0)) p.kill("SIGKILL");
});

const fg = ["--allow-foreground"];
const inputs = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input");
const leasePath = (sb: Sandbox) => join(sb.stateDir, "foreground.lease");
const readLease = (sb: Sandbox) => (existsSync(leasePath(sb)) ? JSON.parse(readFileSync(leasePath(sb), "utf8")) : null);

/** A live process to hold the lease: a `sleep` the test owns. */
function liveHolder(): number {
  const p = spawn("sleep", ["30"], { stdio: "ignore" });
  sleepers.push(p);
  return p.pid!;
}

function holdLease(sb: Sandbox, pid: number, command = "deckhand run"): string {
  const since = new Date().toISOString();
  writeFileSync(leasePath(sb), JSON.stringify({ pid, startTime: null, command, acquiredAt: since, expiresAt: new Date(Date.now() + 60_000).toISOString(), token: "held-by-test" }));
  return since;
}

describe("the foreground lease across processes", () => {
  it("a live holder: a granted point click waits, then FOREGROUND_BUSY naming the holder; nothing sent", async () => {
    const sb = sandbox();
    const pid = liveHolder();
    const since = holdLease(sb, pid);
    const t0 = Date.now();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--button", "right", ...fg], { env: { DECKHAND_FOREGROUND_WAIT_MS: "400" } });
    const e = expectError(r, "click", "FOREGROUND_BUSY");
    expect(e.details).toMatchObject({ holderPid: pid, holderCommand: "deckhand run", holderSince: since, delivery: "not_dispatched" });
    expect(e.details.waitedMs as number).toBeGreaterThanOrEqual(400);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
    expect(inputs(sb)).toEqual([]);
    // The holder's lease is untouched.
    expect(readLease(sb).token).toBe("held-by-test");
  });

  it("background (accessibility) actions never wait for it", async () => {
    const sb = await observedSandbox();
    holdLease(sb, liveHolder());
    const t0 = Date.now();
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"], { env: { DECKHAND_FOREGROUND_WAIT_MS: "5000" } }), "click");
    expect(Date.now() - t0).toBeLessThan(4000);
    expect(sb.ops()).toContain("element_action");
  });

  it("a holder that died is taken over; the lease is released after", async () => {
    const sb = sandbox();
    const holder = spawn("sleep", ["0"], { stdio: "ignore" });
    await new Promise((r) => holder.on("exit", r));
    holdLease(sb, holder.pid!);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", "700", "--y", "500", "--button", "right", ...fg], { env: { DECKHAND_FOREGROUND_WAIT_MS: "0" } }), "click");
    expect(inputs(sb)).toHaveLength(1);
    expect(readLease(sb)).toBeNull();
  });

  it("a program holds it from its first foreground request to its end: another process gets FOREGROUND_BUSY naming it", async () => {
    const sb = sandbox();
    const program = { app: "fixture-app", observe: false, steps: [{ action: "type-text", text: "a" }, { action: "wait", ms: 1500 }, { action: "type-text", text: "b" }] };
    const first = cli(sb, ["run", ...fg], { stdin: JSON.stringify(program) });
    // Between its steps (the wait), the lease names the program.
    await waitFor(() => inputs(sb).length === 1, "the program's first input", 10_000);
    const held = readLease(sb);
    expect(held).toMatchObject({ command: "deckhand run" });
    const second = await cli(sb, ["type-text", "--app", "fixture-app", "--text", "x", ...fg], { env: { DECKHAND_FOREGROUND_WAIT_MS: "300" } });
    const e = expectError(second, "type-text", "FOREGROUND_BUSY");
    expect(e.details).toMatchObject({ holderPid: held.pid, holderCommand: "deckhand run" });
    const r = expectOk(await first, "run");
    expect(r.steps.map((s: any) => s.status)).toEqual(["completed", "completed", "completed"]);
    // Only the program's two inputs were sent, and the lease is free again.
    expect(inputs(sb).map((i) => (i.args.steps as { text?: string }[]).find((s) => s.text)?.text)).toEqual(["a", "b"]);
    expect(readLease(sb)).toBeNull();
  });

  it("a second process that waits long enough runs after the first", async () => {
    const sb = sandbox();
    const program = { app: "fixture-app", observe: false, steps: [{ action: "type-text", text: "a" }, { action: "wait", ms: 800 }, { action: "type-text", text: "b" }] };
    const first = cli(sb, ["run", ...fg], { stdin: JSON.stringify(program) });
    await waitFor(() => inputs(sb).length === 1, "the program's first input", 10_000);
    const second = cli(sb, ["type-text", "--app", "fixture-app", "--text", "x", ...fg], { env: { DECKHAND_FOREGROUND_WAIT_MS: "8000" } });
    expectOk(await first, "run");
    expectOk(await second, "type-text");
    expect(inputs(sb).map((i) => (i.args.steps as { text?: string }[]).find((s) => s.text)?.text)).toEqual(["a", "b", "x"]);
  });
});
