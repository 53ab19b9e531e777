// `deckhand helper check`: the fake helper and a conforming scripted helper
// pass; each way test/fixtures/helpers/broken-helper.mjs can break the wire
// contract fails the check it should, with a line naming what broke, and the
// helper is always gone at the end. CLI runs check exit codes and output; the
// failure matrix runs in-process (runHelperCheck) to keep the file fast.
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CHECK_NAMES, runHelperCheck, type CheckReport, type CheckRow } from "../../src/helpers/check.ts";
import { BUN, cleanupSandboxes, FAKE, isAlive, MAIN, REPO, sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const BROKEN = join(REPO, "test", "fixtures", "helpers", "broken-helper.mjs");

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cliRun(argv: string[], env: Record<string, string | undefined> = {}, timeoutMs = 60_000): Promise<Run> {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete full[k];
  return new Promise((resolve, reject) => {
    const child = spawn(BUN, [MAIN, ...argv], { cwd: REPO, env: full, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`deckhand ${argv.join(" ")} did not finish in ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function row(report: CheckReport, name: string): CheckRow {
  const r = report.checks.find((c) => c.name === name);
  if (!r) throw new Error(`no row ${name} in:\n${report.checks.map((c) => `${c.name} ${c.status} ${c.reason}`).join("\n")}`);
  return r;
}

/** The helper's pid, from the spawn row ("pid N, ..."). */
function helperPid(report: CheckReport): number {
  return Number(/pid (\d+)/.exec(row(report, "spawn").reason)![1]);
}

function check(mode: string, opts: { timeoutMs?: number; helloTimeoutMs?: number } = {}): Promise<CheckReport> {
  return runHelperCheck({ helperPath: BROKEN, env: { ...process.env, BROKEN_HELPER_MODE: mode }, ...opts });
}

/** The report of a helper that breaks one rule: that row fails with `reason`, and only failures listed in `alsoFail` join it. */
function expectOnlyFailure(report: CheckReport, name: string, reason: RegExp, alsoFail: string[] = []): void {
  const failed = report.checks.filter((c) => c.status === "fail").map((c) => c.name);
  expect(row(report, name).status, JSON.stringify(row(report, name))).toBe("fail");
  expect(row(report, name).reason).toMatch(reason);
  expect(failed.sort()).toEqual([name, ...alsoFail].sort());
  expect(report.ok).toBe(false);
  expect(isAlive(helperPid(report)), "the helper is killed at the end").toBe(false);
}

describe("deckhand helper check (CLI)", () => {
  it("the fake helper at protocol 2.0, run as the real helper behaves (frame limit enforced, waits in real time), passes: exit 0, every check pass or skip", async () => {
    const r = await cliRun(["helper", "check", "--helper", FAKE, "--json"], { DECKHAND_FAKE_MODE: "enforce-frame-limit,real-waits" });
    const report = JSON.parse(r.stdout) as CheckReport;
    const bad = report.checks.filter((c) => c.status === "fail");
    if (report.protocol.helper?.startsWith("1.")) {
      // The fake has not moved to 2.0 yet: the check must say exactly that.
      expect(r.code).toBe(1);
      expect(row(report, "handshake.protocol").reason).toMatch(/major differs/);
      return;
    }
    expect(bad, JSON.stringify(bad)).toEqual([]);
    expect(r.code).toBe(0);
    expect(report).toMatchObject({ schemaVersion: 1, command: "helper check", ok: true, helper: { name: "fake-helper" } });
    for (const name of CHECK_NAMES) expect(report.checks.map((c) => c.name)).toContain(name);
    for (const name of ["op.get_tree", "op.screenshot", "op.element_action", "op.input", "refuse.unknown_op", "tolerance.unknown_fields", "cancel.input", "cancel.read", "shutdown.eof", "frame_limit"]) {
      expect(row(report, name).status, name).toBe("pass");
    }
    expect(row(report, "frame_limit").reason).toMatch(/closed the connection \(exit code 4\)/);
    expect(isAlive(helperPid(report))).toBe(false);
  });

  it("a conforming helper: a table with one row per check, PASS, exit 0", async () => {
    const r = await cliRun(["helper", "check", "--helper", BROKEN], { BROKEN_HELPER_MODE: "max-frame:65536" });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^deckhand helper check: .*broken-helper\.mjs\nhelper: broken-helper 0\.0\.1 \(fake, scripted\), protocol 2\.0 \(deckhand 2\.3\)\n/);
    expect(r.stdout).toMatch(/\nCHECK +RESULT +REASON\n/);
    expect(r.stdout).toMatch(/\nop\.get_tree +pass +window \d+ "Broken Window": 4 nodes/);
    expect(r.stdout).toMatch(/\nop\.set_accessibility +skip +claimed; not sent/);
    expect(r.stdout).toMatch(/\nframe_limit +pass +a request of \d+ bytes \(max_frame_bytes 65536\): refused with INVALID_ARGUMENTS, and the helper answers on\n/);
    expect(r.stdout).toMatch(/\nPASS: \d+ passed, 0 failed, \d+ skipped in [\d.]+ s\n$/);
  });

  it("a helper of another major: exit 1, the protocol row names both versions, the rest is not run", async () => {
    const r = await cliRun(["helper", "check", "--helper", BROKEN], { BROKEN_HELPER_MODE: "wrong-major" });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\nhandshake\.protocol +fail +the helper speaks protocol 1\.2, deckhand 2\.3: the major differs/);
    expect(r.stdout).toMatch(/\nop\.list_apps +skip +not run: the protocol major differs\n/);
    expect(r.stdout).toMatch(/\nFAIL: /);
    expect(r.stdout).toMatch(/helper stderr \(last lines\):\n {2}broken-helper \d+ starting \(wrong-major\)/);
  });

  it("--json with a malformed result: one report object, ok false, exit 1", async () => {
    const r = await cliRun(["helper", "check", "--helper", BROKEN, "--json"], { BROKEN_HELPER_MODE: "malformed-result:list_windows" });
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    const report = JSON.parse(r.stdout) as CheckReport;
    expect(report.ok).toBe(false);
    expect(report.summary.fail).toBeGreaterThan(0);
    expect(row(report, "op.list_windows")).toMatchObject({ status: "fail", reason: expect.stringMatching(/list_windows result does not match the schema \(windows: /) });
  });

  it("a path that is not executable: the spawn row fails, exit 1", async () => {
    const sb = sandbox();
    const plain = join(sb.dir, "not-a-helper");
    writeFileSync(plain, "just text\n");
    chmodSync(plain, 0o644);
    const r = await cliRun(["helper", "check", "--helper", plain]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/\nspawn +fail +could not start .*not-a-helper: .*EACCES/);
  });

  it("usage errors exit 2; --help exits 0", async () => {
    const cases: [string[], RegExp][] = [
      [["helper"], /missing subcommand/],
      [["helper", "verify"], /unknown subcommand: verify/],
      [["helper", "check", "--helper"], /--helper needs a path/],
      [["helper", "check", "--helper", BROKEN, "--timeout", "soon"], /--timeout needs a number of seconds/],
      [["helper", "check", "--helper", BROKEN, "--frobnicate"], /unexpected argument: --frobnicate/],
    ];
    for (const [argv, why] of cases) {
      const r = await cliRun(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/usage: deckhand helper check/);
    }
    const j = await cliRun(["helper", "check", "--bogus", "--json"]);
    expect(j.code).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({ ok: false, command: "helper", error: { code: "INVALID_ARGUMENTS", message: "unexpected argument: --bogus" } });
    const h = await cliRun(["helper", "--help"]);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/usage: deckhand helper check \[--helper PATH\]/);
    const top = await cliRun(["--help"]);
    expect(top.stdout).toMatch(/\n {2}helper +check --helper PATH/);
  });

  it("is operator-only: refused in agent mode, the helper never spawned", async () => {
    const sb = sandbox();
    const r = await cliRun(["helper", "check", "--helper", BROKEN, "--json"], { DECKHAND_AGENT_MODE: "1", BROKEN_HELPER_MODE: "", DECKHAND_STATE_DIR: sb.stateDir });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, error: { code: "POLICY_DENIED", details: { reason: "operator-only" } } });
  });
});

describe("deckhand helper check: what each breakage fails", () => {
  it.concurrent("no hello: the hello row fails, nothing else runs", async () => {
    const report = await check("no-hello", { helloTimeoutMs: 500 });
    expectOnlyFailure(report, "handshake.hello", /no hello within 500 ms \(the helper runs but says nothing\)/);
    expect(row(report, "op.list_apps").reason).toBe("not run: no valid hello");
  });

  it.concurrent("exit before hello: named with its exit code", async () => {
    expectOnlyFailure(await check("exit-before-hello"), "handshake.hello", /exited before its hello \(exit code 3\)/);
  });

  it.concurrent("a hello without limits: not a valid hello, the field named", async () => {
    expectOnlyFailure(await check("bad-hello"), "handshake.hello", /the first frame is not a valid hello \(limits: /);
  });

  it.concurrent("text on stdout instead of frames", async () => {
    expectOnlyFailure(await check("not-a-frame"), "handshake.hello", /stdout is not a frame stream: frame of \d+ bytes exceeds the limit/);
  });

  it.concurrent("a frame limit too small to carry a tree", async () => {
    const report = await check("max-frame:1024");
    expect(row(report, "handshake.limits")).toMatchObject({ status: "fail", reason: expect.stringMatching(/max_frame_bytes 1024 is below 65536/) });
  });

  it.concurrent("a malformed get_tree result names the op and the field", async () => {
    expectOnlyFailure(await check("malformed-result:get_tree,max-frame:65536"), "op.get_tree", /get_tree result does not match the schema \(nodes: /);
  });

  it.concurrent("a crash on an op: that row names the exit, later rows are not run, the frame limit still runs on a fresh spawn", async () => {
    const report = await check("crash-on:get_tree,max-frame:65536");
    expectOnlyFailure(report, "op.get_tree", /the helper died during get_tree \(exit code 70\)/);
    expect(row(report, "op.screenshot").reason).toBe("not run: the helper exited during op.get_tree (exit code 70)");
    expect(row(report, "shutdown.eof").status).toBe("skip");
    expect(row(report, "frame_limit").status).toBe("pass");
  });

  it.concurrent("killed by a signal on an op", async () => {
    expectOnlyFailure(await check("kill-on:screenshot,max-frame:65536"), "op.screenshot", /died during screenshot \(killed by SIGKILL\)/);
  });

  it.concurrent("an op never answered: a timeout at its deadline, and the run goes on", async () => {
    const report = await check("hang-on:focused_element,max-frame:65536");
    expectOnlyFailure(report, "op.focused_element", /no answer to focused_element within \d+ ms/);
    expect(row(report, "op.settle").status).toBe("pass");
  });

  it.concurrent("an unknown op never answered", async () => {
    expectOnlyFailure(await check("ignore-unknown-op,max-frame:65536"), "refuse.unknown_op", /no answer to an unknown op within/);
  });

  it.concurrent("an unknown op answered ok", async () => {
    expectOnlyFailure(await check("accept-unknown-op,max-frame:65536"), "refuse.unknown_op", /answered ok; a helper answers INVALID_ARGUMENTS/);
  });

  it.concurrent("unknown fields refused", async () => {
    expectOnlyFailure(await check("strict-fields,max-frame:65536"), "tolerance.unknown_fields", /permissions with unknown fields in the frame and in args: permissions answered INVALID_ARGUMENTS/);
  });

  it.concurrent("a capability declared unsupported but served anyway", async () => {
    const report = await check("lie-unsupported:settle,max-frame:65536");
    expectOnlyFailure(report, "refuse.settle", /settle is declared unsupported, yet it was answered ok/);
    expect(row(report, "op.settle").reason).toBe("settle not claimed (see refuse.settle)");
  });

  it.concurrent("unsupported capabilities refused properly pass", async () => {
    const report = await check("drop-cap:settle,drop-cap:action.click,drop-cap:input.keyboard,max-frame:65536");
    expect(report.checks.filter((c) => c.status === "fail")).toEqual([]);
    expect(row(report, "refuse.settle").reason).toMatch(/^refused: ACTION_UNSUPPORTED \(/);
    expect(row(report, "refuse.action.click").reason).toMatch(/^refused: ACTION_UNSUPPORTED, not_dispatched/);
    expect(row(report, "refuse.input.keyboard").reason).toMatch(/^refused: ACTION_UNSUPPORTED, not_dispatched/);
    expect(row(report, "cancel.read").reason).toMatch(/^permissions cancelled/);
    expect(report.ok).toBe(true);
  });

  it.concurrent("mutations without a receipt", async () => {
    expectOnlyFailure(await check("no-receipt,max-frame:65536"), "op.input", /input answered without a receipt/, ["op.element_action", "cancel.input"]);
  });

  it.concurrent("a secure field's value in the tree", async () => {
    expectOnlyFailure(await check("leak-secure,max-frame:65536"), "op.get_tree", /secure node at path \[1\] carries a value/);
  });

  it.concurrent("no exit on EOF: the shutdown row fails and the helper is killed anyway", async () => {
    expectOnlyFailure(await check("ignore-eof,max-frame:65536"), "shutdown.eof", /still running 3000 ms after its stdin closed \(killed\)/);
  });

  it.concurrent("input that ignores a cancel within a wait", async () => {
    expectOnlyFailure(await check("deaf-cancel,max-frame:65536"), "cancel.input", /finished its 1500 ms wait and answered ok \d+ ms after the cancel/);
  });

  it.concurrent("a cancelled read left unanswered is allowed", async () => {
    const report = await check("drop-cancelled-reads,max-frame:65536");
    expect(report.checks.filter((c) => c.status === "fail")).toEqual([]);
    expect(row(report, "cancel.read").reason).toMatch(/no answer \(allowed for a cancelled read\); other requests answered meanwhile/);
  });

  it.concurrent("dying on a cancel frame", async () => {
    const report = await check("die-on-cancel,max-frame:65536");
    expect(row(report, "cancel.unknown_id")).toMatchObject({ status: "fail", reason: expect.stringMatching(/the helper died during permissions \(exit code 5\)/) });
    expect(row(report, "cancel.read").reason).toMatch(/^not run: the helper exited during cancel.unknown_id/);
  });

  it.concurrent("a response to an id never sent", async () => {
    expectOnlyFailure(await check("stray-response,max-frame:65536"), "stream", /a response to id 9999, which is not in flight/);
  });

  it.concurrent("frame limit: closing on an oversized request passes, as the contract allows", async () => {
    const report = await check("oversize:close,max-frame:65536");
    expect(row(report, "frame_limit")).toMatchObject({ status: "pass", reason: expect.stringMatching(/max_frame_bytes 65536\): closed the connection \(exit code 4\), as the contract allows/) });
    expect(report.ok).toBe(true);
  });

  it.concurrent("frame limit: crashing, accepting or ignoring an oversized request fails", async () => {
    const [crash, accept, ignore] = await Promise.all([check("oversize:crash,max-frame:65536"), check("oversize:accept,max-frame:65536"), check("oversize:ignore,max-frame:65536")]);
    expectOnlyFailure(crash, "frame_limit", /the helper was killed by SIGKILL \(a crash, not a close\)/);
    expectOnlyFailure(accept, "frame_limit", /was accepted and answered ok: a frame above the limit must be refused/);
    expectOnlyFailure(ignore, "frame_limit", /neither refused nor closed within \d+ ms/);
  });

  it.concurrent("the whole run is bounded: a helper that hangs everything fails within the budget, and is killed", async () => {
    const t = performance.now();
    const report = await check("hang-on:list_apps,hang-on:list_windows,hang-on:permissions", { timeoutMs: 6000 });
    expect(performance.now() - t).toBeLessThan(9000);
    expect(report.ok).toBe(false);
    expect(report.checks.some((c) => c.status === "fail" && /time budget of 6 s ran out/.test(c.reason))).toBe(true);
    expect(report.checks.some((c) => c.reason === "not run: the time budget ran out")).toBe(true);
    expect(isAlive(helperPid(report))).toBe(false);
  });
});
