// Shared helpers for the integration suite: a sandbox per test (state dir,
// fake-helper request log, control file), the CLI as a child process, and
// envelope checks. The fake helper is test/fixtures/helpers/fake-helper.mjs.
import { fakeTesseract } from "../fixtures/ocr/fake-tesseract.ts";
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect } from "vitest";
import { DeckhandError } from "../../src/protocol/errors.ts";
import { Supervisor, type SupervisorOptions } from "../../src/helpers/supervisor.ts";
import { envelopeIssues } from "../../src/protocol/results.ts";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BUN = join(REPO, "node_modules", ".bin", "bun");
export const MAIN = join(REPO, "src", "main.ts");
export const FAKE = join(REPO, "test", "fixtures", "helpers", "fake-helper.mjs");

export const FIXTURE_WINDOW = 0x200001;
export const FIXTURE_WINDOW_2 = 0x200002;
export const XTERM_WINDOW = 0x300001;

export interface LogEntry {
  pid: number;
  id: number;
  op: string;
  args: Record<string, unknown>;
}

export interface Sandbox {
  dir: string;
  stateDir: string;
  logPath: string;
  controlPath: string;
  fakeState: string;
  /** Environment for deckhand (and through it, the fake helper). */
  env(extra?: Record<string, string | undefined>): NodeJS.ProcessEnv;
  requests(): LogEntry[];
  ops(): string[];
  /** Ids named by the cancel frames the fake helper received. */
  cancels(): number[];
  control(c: {
    replaced?: string[];
    goneWindows?: number[];
    fixturePid?: number;
    fixtureStart?: number;
    browser?: boolean;
    url?: string;
    a11yOff?: boolean;
    /** Where the pointer rests (the fake's pointer guard). */
    pointer?: { x: number; y: number };
    /** Move / restack the xterm window. */
    xterm?: { bounds?: { x: number; y: number; width: number; height: number }; z_index?: number };
    /** What focused_element answers; `node`: a node of its own, in no tree. */
    focused?: { window_id: number; path: number[]; node?: Record<string, unknown> };
    secondPassword?: boolean;
    revealed?: boolean;
    /** A "Delete file?" dialog (0x200003) whose default button is Delete; "no-default": no default state. */
    dialog?: boolean | "no-default";
    /** Apps as real desktops list them: Thunderbird (thunderbird-bin, a popup listed first), soffice.bin, Firefox, qt-notes (qt5, no tree), canvas-app (no tree, no toolkit). */
    toolkits?: boolean;
    /** What settle answers (default: quiet already). */
    settle?: { waited_ms: number; events: number; settled: boolean };
    /** A gating permission check the helper reports as "unknown" (PERMISSION_UNVERIFIED tests). */
    unknownPermission?: string;
    /** A permission check the helper reports as "denied" (a neutral id: display, accessibility, ...). */
    deniedPermission?: string;
    /** A "Tools" button (path [6]) with natives click + activate (both press) and delete-all (other). */
    menuButton?: boolean;
    /** hit_test answers an unnamed, actionless part of the control under the point (issue 15). */
    hitLeaf?: boolean;
    // ---- issue 15: click
    /** point_click / hit_test see these names instead of the tree's, by path ("1": the Delete button). */
    pointNames?: Record<string, string>;
    // ---- end click
    /** process_name per pid (list_apps), overriding the executable's basename. */
    processNames?: Record<string, string | null>;
    /** Pids whose executable the helper reports deleted. */
    deletedExecutables?: number[];
  }): void;
  /** Every file under the state dir: path, mode and bytes. */
  stateFiles(): { path: string; mode: number; data: Buffer }[];
  cleanup(): void;
}

const sandboxes: Sandbox[] = [];

/** A fake tesseract that reads no text, made once per sandbox (lazily: most tests never run OCR). */
function quietTesseract(dir: string): string {
  const path = join(dir, "quiet-tesseract", "tesseract");
  if (!existsSync(path)) fakeTesseract(join(dir, "quiet-tesseract"));
  return path;
}

export function sandbox(): Sandbox {
  const dir = mkdtempSync(join(tmpdir(), "deckhand-it-"));
  const stateDir = join(dir, "state");
  const logPath = join(dir, "fake.log");
  const controlPath = join(dir, "control.json");
  const fakeState = join(dir, "fake-state");
  mkdirSync(stateDir, { mode: 0o700 });
  const sb: Sandbox = {
    dir,
    stateDir,
    logPath,
    controlPath,
    fakeState,
    env(extra = {}) {
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: dir,
        DECKHAND_STATE_DIR: stateDir,
        DECKHAND_FAKE_LOG: logPath,
        DECKHAND_FAKE_CONTROL: controlPath,
        DECKHAND_FAKE_STATE: fakeState,
        // An app without a tree is read with OCR automatically: the integration tests get a
        // tesseract that reads nothing (test/fixtures/ocr/fake-tesseract.ts), never the machine's.
        DECKHAND_TESSERACT: quietTesseract(dir),
      };
      for (const [k, v] of Object.entries(extra)) {
        if (v === undefined) delete env[k];
        else env[k] = v;
      }
      return env;
    },
    requests() {
      if (!existsSync(logPath)) return [];
      return readFileSync(logPath, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as LogEntry);
    },
    ops() {
      return sb.requests().map((r) => r.op);
    },
    cancels() {
      return sb.requests().filter((r) => r.op === "cancel").map((r) => r.id);
    },
    control(c) {
      writeFileSync(controlPath, JSON.stringify(c));
    },
    stateFiles() {
      const out: { path: string; mode: number; data: Buffer }[] = [];
      const walk = (d: string) => {
        for (const name of readdirSync(d)) {
          const p = join(d, name);
          const st = statSync(p);
          if (st.isDirectory()) walk(p);
          else out.push({ path: p, mode: st.mode & 0o777, data: readFileSync(p) });
        }
      };
      walk(stateDir);
      return out;
    },
    cleanup() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
  sandboxes.push(sb);
  return sb;
}

export function cleanupSandboxes(): void {
  for (const sb of sandboxes.splice(0)) sb.cleanup();
}

/**
 * The result contract (src/protocol/results.ts): every envelope a test
 * parses, CLI or serve, is checked against it. ok:true against
 * RESULTS[command], ok:false against the error envelope, adapter responses
 * against AdapterResponse. A mismatch fails the test with the zod issues.
 */
export function contractViolation(where: string, envelope: unknown): string | null {
  const issues = envelopeIssues(envelope);
  if (!issues) return null;
  const e = envelope as { ok?: unknown; command?: unknown };
  return `${where}: the ${e?.ok === false ? "error envelope" : `${String(e?.command)} result`} does not match src/protocol/results.ts:\n${issues}\nenvelope: ${JSON.stringify(envelope).slice(0, 4000)}`;
}

/** Violations seen outside a test's own await (serve lines): each fails the test it happened in. */
const pendingViolations: string[] = [];
afterEach(() => {
  const v = pendingViolations.splice(0);
  if (v.length) throw new Error(v.join("\n\n"));
});

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** The one JSON envelope on stdout (asserted to be exactly one line). */
  envelope: Envelope;
}

export interface Envelope {
  schemaVersion: number;
  ok: boolean;
  command: string;
  result?: any;
  /** details: flat facts; a failed program adds receipts / observation / settle (see expectFlatDetails). */
  error?: { code: string; message: string; remediation: string; details: Record<string, any> };
}

export interface CliOptions {
  /** DECKHAND_FAKE_MODE */
  mode?: string;
  env?: Record<string, string | undefined>;
  /** Written to stdin, then stdin is closed. */
  stdin?: string;
  /** Keep stdin open and never write to it: a command that reads stdin would hang. */
  stdinOpen?: boolean;
  /** Helper path; null to pass no --helper flag. */
  helper?: string | null;
  json?: boolean;
  timeoutMs?: number;
  /** The argv exactly as given: no `--format full` added to get-app-state. */
  asGiven?: boolean;
}

/** Runs `bun src/main.ts <argv> --json --helper FAKE` and parses its one envelope. */
export function cli(sb: Sandbox, argv: string[], opts: CliOptions = {}): Promise<CliResult> {
  const helper = opts.helper === undefined ? FAKE : opts.helper;
  // The tests read an observation's elements[]: get-app-state is --format full unless a test names a format (test/integration/observation.test.ts tests the compact default).
  const observed = !opts.asGiven && argv[0] === "get-app-state" && !argv.includes("--format") && !argv.includes("--snapshot-id") ? [...argv, "--format", "full"] : argv;
  const full = [MAIN, ...observed, ...(opts.json === false ? [] : ["--json"]), ...(helper ? ["--helper", helper] : [])];
  const env = sb.env({ DECKHAND_FAKE_MODE: opts.mode, ...opts.env });
  return new Promise((resolvePromise, reject) => {
    const child = spawn(BUN, full, { cwd: REPO, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d) => (stderr += d));
    child.stdin.on("error", () => {});
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`deckhand ${argv.join(" ")} did not finish within ${opts.timeoutMs ?? 15000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 15000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      let envelope: Envelope = undefined as never;
      if (opts.json !== false) {
        const lines = stdout.split("\n").filter((l) => l.length > 0);
        if (lines.length !== 1 || !stdout.endsWith("\n")) {
          reject(new Error(`expected exactly one JSON line on stdout, got ${lines.length}:\n${stdout}\nstderr: ${stderr}`));
          return;
        }
        try {
          envelope = JSON.parse(lines[0]!);
        } catch {
          reject(new Error(`stdout is not JSON: ${stdout}`));
          return;
        }
        const violation = contractViolation(`deckhand ${argv.join(" ")}`, envelope);
        if (violation) {
          reject(new Error(`${violation}\nstderr: ${stderr.slice(-2000)}`));
          return;
        }
      }
      if (!opts.stdinOpen) child.stdin.destroy();
      resolvePromise({ code, signal, stdout, stderr, envelope });
    });
    if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
    else if (!opts.stdinOpen) child.stdin.end();
  });
}

/** The envelope contract: exact keys, schemaVersion 1, flat details, exit code. */
export function expectEnvelope(r: CliResult, command: string): Envelope {
  const e = r.envelope;
  expect(e.schemaVersion).toBe(1);
  expect(e.command).toBe(command);
  if (e.ok) {
    expect(Object.keys(e).sort()).toEqual(["command", "ok", "result", "schemaVersion"]);
    expect(r.code).toBe(0);
  } else {
    expect(Object.keys(e).sort()).toEqual(["command", "error", "ok", "schemaVersion"]);
    expect(Object.keys(e.error!).sort()).toEqual(["code", "details", "message", "remediation"]);
    expect(typeof e.error!.message).toBe("string");
    expect(e.error!.remediation.length).toBeGreaterThan(0);
    expectFlatDetails(e.error!.details);
    expect(r.code).toBe(1);
  }
  return e;
}

/** The keys of a failed program's structured evidence: the one exception to flat details. */
export const EVIDENCE_KEYS = ["receipts", "observation", "settle"] as const;

/**
 * Error details are flat (string, number, boolean), except a failed program's
 * evidence: receipts (an array of step receipts), observation (an object) and
 * settle (an object). Only those three keys may be structured.
 */
export function expectFlatDetails(details: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(details)) {
    if (k === "receipts") expect(Array.isArray(v), "details.receipts is an array").toBe(true);
    else if (k === "observation" || k === "settle") expect(v !== null && typeof v === "object" && !Array.isArray(v), `details.${k} is an object`).toBe(true);
    else expect(["string", "number", "boolean"], `details.${k}`).toContain(typeof v);
  }
}

/** A failed program's receipts (details.receipts), asserted present and one per step. */
export function failedProgram(e: NonNullable<Envelope["error"]>, steps?: number): { receipts: StepReceipt[]; observation?: any; settle?: any } {
  const d = e.details as Record<string, any>;
  expect(Array.isArray(d.receipts), `details.receipts in ${JSON.stringify(e)}`).toBe(true);
  if (steps !== undefined) expect(d.receipts).toHaveLength(steps);
  expect(d.receipts[d.step]?.status, "the receipt at details.step is the failed one").toBe("failed");
  expect(d.stepsCompleted).toBe(d.receipts.filter((x: StepReceipt) => x.status === "completed").length);
  return { receipts: d.receipts, observation: d.observation, settle: d.settle };
}

/** A step receipt as it travels in a result or in details.receipts. */
export interface StepReceipt {
  index: number;
  action: string;
  status: "completed" | "failed" | "unattempted";
  delivery: string;
  route: string | null;
  elementIndex: number | null;
  verification: { verified: boolean | null; predicate: string | null };
  cleanup: Record<string, boolean | null> | null;
  charsSent?: number;
  nativeAction?: string;
  fallback?: string;
  fallbackFrom?: string;
  error?: { code: string; message: string; details: Record<string, any> };
}

export function expectOk(r: CliResult, command: string): any {
  if (!r.envelope.ok) throw new Error(`expected ok, got ${JSON.stringify(r.envelope.error)}\nstderr: ${r.stderr}`);
  expectEnvelope(r, command);
  return r.envelope.result;
}

export function expectError(r: CliResult, command: string, code: string): NonNullable<Envelope["error"]> {
  expectEnvelope(r, command);
  if (r.envelope.ok) throw new Error(`expected ${code}, got ok: ${JSON.stringify(r.envelope.result).slice(0, 400)}`);
  expect(r.envelope.error!.code, JSON.stringify(r.envelope.error)).toBe(code);
  return r.envelope.error!;
}

/**
 * The delivery axis of a refusal before dispatch. Refusals inside the program
 * loop carry details.delivery "not_dispatched"; those raised before the loop
 * (app, window, snapshot resolution) carry none, which means the same thing.
 */
export function expectNotDispatched(e: NonNullable<Envelope["error"]>): void {
  expect([undefined, "not_dispatched"]).toContain(e.details.delivery);
}

/** get-app-state of the fixture app without a screenshot; returns the result. */
export async function observeFixture(sb: Sandbox, extra: string[] = [], opts: CliOptions = {}): Promise<any> {
  const r = await cli(sb, ["get-app-state", "--app", "fixture-app", ...extra], opts);
  return expectOk(r, "get-app-state");
}

let template: Promise<string> | null = null;

/**
 * A sandbox whose state dir already holds a get-app-state snapshot of the
 * fixture app (no screenshot), made by one earlier CLI process and copied:
 * saves a process per test. Its fake log starts empty.
 */
export async function observedSandbox(): Promise<Sandbox> {
  template ??= (async () => {
    const t = sandbox();
    await observeFixture(t, ["--no-screenshot"]);
    return t.stateDir;
  })();
  const from = await template;
  const sb = sandbox();
  cpSync(from, sb.stateDir, { recursive: true });
  return sb;
}

/** A process is alive unless it is gone or a zombie. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

export async function waitFor(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A wrapper helper that records its argv and environment, then runs the fake. */
export function recordingHelper(sb: Sandbox): { path: string; argvLog: string; envLog: string } {
  const path = join(sb.dir, "recording-helper.sh");
  const argvLog = join(sb.dir, "helper-argv.log");
  const envLog = join(sb.dir, "helper-env.log");
  writeFileSync(
    path,
    `#!/bin/sh\nprintf '%s\\n' "$0" "$@" >> '${argvLog}'\nenv >> '${envLog}'\nexec node '${FAKE}' "$@"\n`,
  );
  chmodSync(path, 0o755);
  return { path, argvLog, envLog };
}

/** A long-running `deckhand serve` with line-oriented I/O. */
export class ServeProcess {
  readonly child: ChildProcess;
  private buf = "";
  readonly lines: any[] = [];
  /** Response lines that break the result contract (see contractViolation). */
  readonly violations: string[] = [];
  stderr = "";
  private waiters: (() => void)[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  /** opts.helper: the --helper flag (default the fake helper; null for none: DECKHAND_HELPER or discovery). */
  constructor(sb: Sandbox, args: string[] = [], opts: { mode?: string; env?: Record<string, string | undefined>; helper?: string | null } = {}) {
    const helper = opts.helper === undefined ? FAKE : opts.helper;
    this.child = spawn(BUN, [MAIN, "serve", ...(helper ? ["--helper", helper] : []), ...args], {
      cwd: REPO,
      env: sb.env({ DECKHAND_FAKE_MODE: opts.mode, ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      this.buf += d;
      let i: number;
      while ((i = this.buf.indexOf("\n")) >= 0) {
        const line = this.buf.slice(0, i);
        this.buf = this.buf.slice(i + 1);
        const msg = JSON.parse(line);
        this.lines.push(msg);
        // `id` and a replay's `replayed` mark the line, not the envelope (docs/serve.md).
        const { id: _id, replayed: _replayed, ...envelope } = msg;
        const violation = contractViolation(`serve response ${JSON.stringify(_id)}`, envelope);
        if (violation) {
          this.violations.push(violation);
          pendingViolations.push(violation);
        }
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr!.setEncoding("utf8").on("data", (d: string) => (this.stderr += d));
    this.exited = new Promise((r) => this.child.on("close", (code, signal) => r({ code, signal })));
  }

  send(...requests: (object | string)[]): void {
    this.child.stdin!.write(requests.map((r) => (typeof r === "string" ? r : JSON.stringify(r)) + "\n").join(""));
  }

  /** Wait until at least n response lines arrived in total. */
  async waitLines(n: number, timeoutMs = 10000): Promise<any[]> {
    const until = Date.now() + timeoutMs;
    while (this.lines.length < n) {
      this.throwViolations();
      const left = until - Date.now();
      if (left <= 0) throw new Error(`serve: expected ${n} lines, got ${this.lines.length}: ${JSON.stringify(this.lines)}\nstderr: ${this.stderr}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
    this.throwViolations();
    return this.lines;
  }

  /** Fails the calling test at once when a response broke the result contract. */
  private throwViolations(): void {
    if (!this.violations.length) return;
    const v = this.violations.splice(0);
    for (const x of v) pendingViolations.splice(pendingViolations.indexOf(x), 1);
    throw new Error(v.join("\n\n"));
  }

  async request(req: { id: string | number; command: string; args?: unknown }): Promise<any> {
    this.send(req);
    const until = Date.now() + 10000;
    for (;;) {
      const hit = this.lines.find((l) => l.id === req.id);
      if (hit) {
        this.throwViolations();
        return hit;
      }
      if (Date.now() > until) throw new Error(`serve: no answer for ${req.id}; stderr: ${this.stderr}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin!.end();
    return await this.exited;
  }

  kill(): void {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}

/**
 * In-process supervisors of the fake helper for one test file: the returned
 * function starts one in DECKHAND_FAKE_MODE `mode`; all are stopped after each test.
 */
export function useSupervisors(): (sb: Sandbox, mode: string, opts?: Partial<SupervisorOptions>) => Supervisor {
  const running: Supervisor[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((s) => s.stop()));
  });
  return (sb, mode, opts = {}) => {
    const sup = new Supervisor({ path: FAKE, env: sb.env({ DECKHAND_FAKE_MODE: mode }), helloTimeoutMs: 3000, ...opts });
    running.push(sup);
    return sup;
  };
}

/** The DeckhandError a promise rejects with (fails the test if it resolves). */
export async function rejection(p: Promise<unknown>): Promise<DeckhandError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(DeckhandError);
    return err as DeckhandError;
  }
  throw new Error("expected a rejection");
}
