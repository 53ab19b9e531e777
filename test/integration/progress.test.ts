// Progress on a terminal (issue 16 item 4): the real CLI with its stderr on
// a pseudo-terminal (test/fixtures/pty-stderr.py) and its stdout on a pipe,
// against the scripted fake helper. Progress text reaches a TTY stderr and
// nothing else: not a piped stderr, not stdout (whose envelope is the same
// either way), not serve's stderr, and not with DECKHAND_PROGRESS=0. Which
// events a program emits, in order, is checked in-process.
import { spawn } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import type { ProgressEvent } from "../../src/engine/ports.ts";
import { permissiveSafety } from "../../src/engine/safety.ts";
import { createSafety } from "../../src/engine/default-safety.ts";
import { runCommand } from "../../src/frontend/run-command.ts";
import { BUN, cleanupSandboxes, cli, contractViolation, expectOk, FAKE, MAIN, observedSandbox, REPO, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const PTY = join(REPO, "test", "fixtures", "pty-stderr.py");
const ERASE = "\r\x1b[2K";

const PROGRAM = {
  app: "fixture-app",
  noScreenshot: true,
  steps: [
    { action: "click", elementIndex: 1 },
    { action: "wait", ms: 1 },
    { action: "focus", elementIndex: 3 },
  ],
};

interface PtyRun {
  code: number;
  stdout: string;
  /** As written (the pty's line discipline may turn "\n" into "\r\n"). */
  stderr: string;
  stderrIsPty: boolean;
}

/** `bun src/main.ts ARGV --helper FAKE` with stdin `stdin`, stdout a pipe and stderr a pty (or a pipe). */
function ptyCli(sb: Sandbox, argv: string[], opts: { stdin?: string; stderr: "pty" | "pipe"; env?: Record<string, string> }): Promise<PtyRun> {
  const args = [PTY, ...(opts.stderr === "pipe" ? ["--pipe"] : []), "--", BUN, MAIN, ...argv, "--helper", FAKE];
  return new Promise((resolve, reject) => {
    const child = spawn("python3", args, { cwd: REPO, env: sb.env(opts.env), stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`pty run of ${argv.join(" ")} did not finish\n${err}`));
    }, 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`pty-stderr.py exited ${code}: ${err}`));
      const r = JSON.parse(out) as PtyRun;
      // Bytes as they came (latin-1, so none is lost), read back as UTF-8.
      const utf8 = (s: string) => Buffer.from(s, "latin1").toString("utf8");
      resolve({ ...r, stdout: utf8(r.stdout), stderr: utf8(r.stderr) });
    });
    child.stdin.end(opts.stdin ?? "");
  });
}

/** The one JSON envelope of stdout, checked against the result contract. */
function oneEnvelope(r: PtyRun): Record<string, any> {
  expect(r.stdout.endsWith("\n")).toBe(true);
  const lines = r.stdout.split("\n").filter(Boolean);
  expect(lines).toHaveLength(1);
  const envelope = JSON.parse(lines[0]!);
  expect(contractViolation("run", envelope)).toBeNull();
  return envelope;
}

/**
 * What differs between two runs of the same program from the same state:
 * the new observation's snapshot id and its times (capturedAt, expiresAt,
 * any *Ms), blanked. The rest must be byte for byte the same.
 */
function normalized(text: string): string {
  return text
    .replace(/"snapshotId":"cs_[A-Za-z0-9]+"/g, '"snapshotId":"<id>"')
    .replace(/"(capturedAt|expiresAt)":"[^"]+"/g, '"$1":"<time>"')
    .replace(/"(\w+Ms)":\d+/g, '"$1":0');
}

/** The human output's varying parts, blanked the same way. */
function normalizedHuman(text: string): string {
  return text
    .replace(/cs_[A-Za-z0-9]+/g, "<id>")
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, "<time>")
    .replace(/\d+ ms/g, "<ms>");
}

const hasProgressBytes = (s: string) => s.includes("\x1b[2K") || /step \d+\/\d+|observing|settling|reading tree/.test(s);

/**
 * The fake's "Delete file?" dialog, observed: clicking its Reason entry
 * presses the default button Delete, which asks the confirm hook. The hook
 * prompts on stderr as an interactive one would ("confirm? ", then the
 * answer), reads the description and allows.
 */
async function confirmSandbox(): Promise<{ sb: Sandbox; reason: number; hook: string }> {
  const sb = sandbox();
  sb.control({ dialog: true });
  const state = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--window-id", String(0x200003), "--no-screenshot"]), "get-app-state");
  const reason = state.snapshot.elements.find((e: { title: string }) => e.title === "Reason").index as number;
  const hook = join(sb.dir, "confirm.sh");
  writeFileSync(hook, "#!/bin/sh\nprintf 'confirm? ' >&2\ncat >/dev/null\nprintf 'yes\\n' >&2\n");
  chmodSync(hook, 0o755);
  return { sb, reason, hook };
}

describe("progress on the CLI's stderr", () => {
  it("a TTY stderr shows the steps and ends erased; a piped stderr gets none; stdout is the same one envelope either way", async () => {
    // Two sandboxes with the same observation: both runs start from the same state.
    const tty = await ptyCli(await observedSandbox(), ["run", "--json"], { stdin: JSON.stringify(PROGRAM), stderr: "pty" });
    const pipe = await ptyCli(await observedSandbox(), ["run", "--json"], { stdin: JSON.stringify(PROGRAM), stderr: "pipe" });
    expect(tty.stderrIsPty).toBe(true);
    expect(tty.code).toBe(0);
    expect(pipe.code).toBe(0);

    // The first event is drawn at once (the throttle lets the first through), so step 1 always shows.
    expect(tty.stderr).toContain(`${ERASE}step 1/3 click…`);
    // Every progress text is on one line, erased before the next one and at the end: no newline, no leftovers.
    expect(tty.stderr.endsWith(ERASE)).toBe(true);
    expect(tty.stderr.replaceAll(ERASE, "\n").split("\n").filter(Boolean).every((l) => /^(step \d+\/3 (click|wait|focus)|settling|observing|reading tree of fixture-app)…$/.test(l))).toBe(true);

    expect(pipe.stderr).toBe("");
    expect(hasProgressBytes(pipe.stdout) || hasProgressBytes(tty.stdout)).toBe(false);

    const a = oneEnvelope(tty);
    const b = oneEnvelope(pipe);
    expect(a).toMatchObject({ ok: true, command: "run" });
    expect(a.result.steps.map((s: { status: string }) => s.status)).toEqual(["completed", "completed", "completed"]);
    expect(normalized(tty.stdout)).toBe(normalized(pipe.stdout));
  });

  it("human output on stdout is the same with and without a TTY stderr", async () => {
    const tty = await ptyCli(await observedSandbox(), ["run"], { stdin: JSON.stringify(PROGRAM), stderr: "pty" });
    const pipe = await ptyCli(await observedSandbox(), ["run"], { stdin: JSON.stringify(PROGRAM), stderr: "pipe" });
    expect(tty.stderr).toContain("step 1/3 click…");
    expect(pipe.stderr).toBe("");
    expect(tty.stdout.length).toBeGreaterThan(0);
    expect(hasProgressBytes(tty.stdout)).toBe(false);
    expect(normalizedHuman(tty.stdout)).toBe(normalizedHuman(pipe.stdout));
  });

  it("DECKHAND_PROGRESS=0 turns it off on a TTY", async () => {
    const sb = await observedSandbox();
    const r = await ptyCli(sb, ["run", "--json"], { stdin: JSON.stringify(PROGRAM), stderr: "pty", env: { DECKHAND_PROGRESS: "0" } });
    expect(r.stderrIsPty).toBe(true);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(oneEnvelope(r)).toMatchObject({ ok: true, command: "run" });
  });

  it("a diagnostic on stderr is never glued to a progress text", async () => {
    const sb = await observedSandbox();
    // A step that fails: its error is printed (without --json) on stderr after the progress.
    const program = { ...PROGRAM, steps: [{ action: "click", elementIndex: 1 }, { action: "click", elementIndex: 999 }] };
    const r = await ptyCli(sb, ["run"], { stdin: JSON.stringify(program), stderr: "pty" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("step 1/2 click…");
    const error = r.stderr.indexOf("error: ELEMENT_INDEX_NOT_FOUND");
    expect(error).toBeGreaterThan(0);
    // What precedes the error message is an erase: the message starts its own clean line.
    expect(r.stderr.slice(0, error).endsWith(ERASE)).toBe(true);
  });

  it("the line is erased before the operator's confirm hook runs: its prompt on the terminal starts clean", async () => {
    const sb = await confirmSandbox();
    const r = await ptyCli(sb.sb, ["click", "--app", "fixture-app", "--element-index", String(sb.reason), "--confirm-cmd", sb.hook, "--json"], { stderr: "pty" });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`${ERASE}step 1/1 click…`);
    // The hook's prompt (no newline before its answer) follows an erase, never the progress text.
    const prompt = r.stderr.indexOf("confirm? yes");
    expect(prompt).toBeGreaterThan(0);
    expect(r.stderr.slice(0, prompt).endsWith(ERASE)).toBe(true);
    expect(oneEnvelope(r)).toMatchObject({ ok: true, command: "click" });
  });

  it("serve never draws progress, even with a TTY stderr (its stderr is a log)", async () => {
    const sb = await observedSandbox();
    const requests = [{ id: 1, command: "run", args: { program: PROGRAM } }, { id: 2, command: "get-app-state", args: { app: "fixture-app", noScreenshot: true } }];
    const r = await ptyCli(sb, ["serve"], { stdin: requests.map((q) => JSON.stringify(q)).join("\n") + "\n", stderr: "pty" });
    expect(r.stderrIsPty).toBe(true);
    expect(hasProgressBytes(r.stderr)).toBe(false);
    const lines = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    // serve answers in completion order: sorted by id.
    expect(lines.map((l) => [l.id, l.ok]).sort()).toEqual([
      [1, true],
      [2, true],
    ]);
  });
});

describe("progress events of the engine", () => {
  const engines: Engine[] = [];
  afterEach(async () => {
    await Promise.all(engines.splice(0).map((e) => e.close()));
  });

  function recordingEngine(sb: Sandbox, events: ProgressEvent[]): Engine {
    const engine = new Engine({ helperPath: FAKE, env: sb.env(), progress: (e) => events.push(e) }, permissiveSafety(false));
    engines.push(engine);
    return engine;
  }

  it("a program: each step as it starts, then settling, observing and the final tree read", async () => {
    const sb = await observedSandbox();
    const events: ProgressEvent[] = [];
    const engine = recordingEngine(sb, events);
    const env = await runCommand(engine, "run", {}, { readStdin: async () => JSON.stringify(PROGRAM) }, () => {});
    expect(env.ok).toBe(true);
    expect(events).toEqual([
      { kind: "step", index: 0, total: 3, action: "click" },
      { kind: "step", index: 1, total: 3, action: "wait" },
      { kind: "step", index: 2, total: 3, action: "focus" },
      { kind: "settle" },
      { kind: "observe" },
      { kind: "tree", app: "fixture-app" },
    ]);
  });

  it("a single action is a one-step program (observed only on request); get-app-state reports its tree read", async () => {
    const sb = await observedSandbox();
    const events: ProgressEvent[] = [];
    const engine = recordingEngine(sb, events);
    expect((await runCommand(engine, "get-app-state", { app: "fixture-app", noScreenshot: true }, {}, () => {})).ok).toBe(true);
    expect(events).toEqual([{ kind: "tree", app: "fixture-app" }]);
    events.length = 0;
    expect((await runCommand(engine, "click", { app: "fixture-app", elementIndex: 1 }, {}, () => {})).ok).toBe(true);
    expect(events).toEqual([{ kind: "step", index: 0, total: 1, action: "click" }]);
  });

  it("a confirm hook's run is an event of its own (the line is erased for its prompt)", async () => {
    const { sb, reason, hook } = await confirmSandbox();
    const events: ProgressEvent[] = [];
    const env = sb.env();
    const operator = { helperPath: FAKE, env, confirmCmd: hook, progress: (e: ProgressEvent) => events.push(e) };
    const engine = new Engine(operator, createSafety(operator, env));
    engines.push(engine);
    expect((await runCommand(engine, "click", { app: "fixture-app", elementIndex: reason }, {}, () => {})).ok).toBe(true);
    expect(events).toEqual([{ kind: "step", index: 0, total: 1, action: "click" }, { kind: "confirm" }]);
  });

  it("no sink, no events: an engine without the operator's progress option runs the same", async () => {
    const sb = sandbox();
    const engine = new Engine({ helperPath: FAKE, env: sb.env() }, permissiveSafety(false));
    engines.push(engine);
    expect(engine.progress).toBeUndefined();
    expect((await runCommand(engine, "get-app-state", { app: "fixture-app", noScreenshot: true }, {}, () => {})).ok).toBe(true);
  });
});
