// Drives the real, compiled deckhand (dist/deckhand, with the real helper
// beside it) inside a private desktop: what an agent framework would run.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { desktopEnv, type DesktopLike } from "./harness.ts";
import { envelopeIssues } from "../../src/protocol/results.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const DECKHAND = process.env.DECKHAND_BIN ?? join(root, "dist", "deckhand");
export const HELPER = join(root, "dist", "deckhand-helper-linux");

export function requireBuild(): void {
  for (const p of [DECKHAND, HELPER]) {
    if (!existsSync(p)) throw new Error(`${p} is missing: run scripts/build.sh (scripts/test.sh does)`);
  }
}

export interface Envelope {
  ok: boolean;
  command: string;
  result?: any;
  error?: { code: string; message: string; remediation: string; details: Record<string, string | number | boolean> };
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  envelope: Envelope;
}

/**
 * Every envelope the live suites parse (CLI, serve, adapter serve) is checked
 * against the result contract (src/protocol/results.ts); a mismatch fails the
 * test with the zod issues.
 */
export function checkContract(where: string, envelope: unknown): void {
  const issues = envelopeIssues(envelope);
  if (!issues) return;
  const e = envelope as { ok?: unknown; command?: unknown };
  throw new Error(
    `${where}: the ${e?.ok === false ? "error envelope" : `${String(e?.command)} result`} does not match src/protocol/results.ts:\n${issues}\nenvelope: ${JSON.stringify(envelope).slice(0, 4000)}`,
  );
}

/** A serve line checked against the contract: the line itself, or the Error that fails the test. */
function checkedLine(line: any): any {
  // `id` and a replay's `replayed` mark the line, not the envelope (docs/serve.md).
  const { id, replayed: _replayed, ...envelope } = line;
  try {
    checkContract(`serve response ${JSON.stringify(id)}`, envelope);
    return line;
  } catch (err) {
    return Promise.reject(err);
  }
}

export function newStateDir(): string {
  return mkdtempSync(join(tmpdir(), "deckhand-live-state-"));
}

/**
 * The live tests read an observation's elements[]: get-app-state asks for
 * `--format full` unless the test names a format (or pages a stored
 * snapshot). The compact default has its own tests (test/live/observation.test.ts).
 */
export function fullByDefault(args: string[]): string[] {
  if (args[0] !== "get-app-state" || args.includes("--format") || args.includes("--snapshot-id")) return args;
  return [...args, "--format", "full"];
}

/** Serve's get-app-state args, full by default (see fullByDefault). */
export function fullArgsByDefault(command: string, args: Record<string, unknown>): Record<string, unknown> {
  if (command !== "get-app-state" || "format" in args || "snapshotId" in args) return args;
  return { ...args, format: "full" };
}

/** One CLI call with --json; resolves with the parsed envelope. */
export function deckhand(desktop: DesktopLike, args: string[], opts: { stateDir: string; stdin?: string; env?: Record<string, string> }): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(DECKHAND, [...fullByDefault(args), "--json"], {
      env: desktopEnv(desktop, { DECKHAND_STATE_DIR: opts.stateDir, ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      let envelope: Envelope;
      try {
        envelope = JSON.parse(stdout);
      } catch {
        reject(new Error(`deckhand ${args.join(" ")} printed no envelope (exit ${code}):\n${stdout}\n${stderr}`));
        return;
      }
      try {
        checkContract(`deckhand ${args.join(" ")}`, envelope);
      } catch (err) {
        reject(err);
        return;
      }
      resolveRun({ code: code ?? -1, stdout, stderr, envelope });
    });
    child.stdin.end(opts.stdin ?? "");
  });
}

/** Like deckhand() but fails the test unless ok. */
export async function ok(desktop: DesktopLike, args: string[], opts: { stateDir: string; stdin?: string; env?: Record<string, string> }): Promise<any> {
  const r = await deckhand(desktop, args, opts);
  if (!r.envelope.ok) throw new Error(`deckhand ${args.join(" ")} failed: ${JSON.stringify(r.envelope.error)}\n${r.stderr}`);
  return r.envelope.result;
}

/** A long-running `deckhand serve` session. */
export class Serve {
  private waiters = new Map<string, (e: any) => void>();
  private nextId = 1;
  readonly child;
  stderr = "";
  /** `wrapArgv`: how deckhand's argv is run (the Wayland desk: as the apps' user, desk.asApps). */
  constructor(desktop: DesktopLike, opts: { stateDir: string; args?: string[]; env?: Record<string, string>; wrapArgv?: (argv: string[]) => string[] }) {
    const [cmd, ...argv] = (opts.wrapArgv ?? ((a: string[]) => a))([DECKHAND, "serve", ...(opts.args ?? [])]);
    this.child = spawn(cmd!, argv, {
      env: desktopEnv(desktop, { DECKHAND_STATE_DIR: opts.stateDir, ...opts.env }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.stderr.on("data", (d) => (this.stderr = (this.stderr + d).slice(-20000)));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const msg = JSON.parse(line);
      const w = this.waiters.get(String(msg.id));
      if (w) {
        this.waiters.delete(String(msg.id));
        // A line that breaks the result contract rejects its request.
        w(checkedLine(msg));
      }
    });
  }

  request(command: string, args: Record<string, unknown> = {}): Promise<Envelope & { id: number }> {
    const id = this.nextId++;
    const p = new Promise<any>((r) => this.waiters.set(String(id), r));
    this.child.stdin.write(JSON.stringify({ id, command, args: fullArgsByDefault(command, args) }) + "\n");
    return p;
  }

  /** A request under an id of the caller's choosing (e.g. to `cancel` it later). */
  requestAs(id: string, command: string, args: Record<string, unknown> = {}): Promise<Envelope & { id: string }> {
    const p = new Promise<any>((r) => this.waiters.set(id, r));
    this.child.stdin.write(JSON.stringify({ id, command, args: fullArgsByDefault(command, args) }) + "\n");
    return p;
  }

  async ok(command: string, args: Record<string, unknown> = {}): Promise<any> {
    const r = await this.request(command, args);
    if (!r.ok) throw new Error(`serve ${command} failed: ${JSON.stringify(r.error)}\n${this.stderr}`);
    return r.result;
  }

  async close(): Promise<number | null> {
    this.child.stdin.end();
    return await new Promise((r) => this.child.on("exit", (code) => r(code)));
  }
}

export function element(state: any, role: string, title: string): any {
  const el = state.snapshot.elements.find((e: any) => e.role === role && e.title === title);
  if (!el) throw new Error(`no ${role} "${title}" in the snapshot:\n${state.snapshot.treeText}`);
  return el;
}

/** One adapter-mode serve (--adapter openai|anthropic), request by request; fails the test on a refused request. */
export class AdapterServe {
  private waiters = new Map<string, (m: any) => void>();
  private n = 1;
  child;
  constructor(desktop: DesktopLike, stateDir: string, args: string[]) {
    this.child = spawn(DECKHAND, ["serve", ...args], { env: desktopEnv(desktop, { DECKHAND_STATE_DIR: stateDir }), stdio: ["pipe", "pipe", "inherit"] });
    createInterface({ input: this.child.stdout }).on("line", (l) => {
      const m = JSON.parse(l);
      this.waiters.get(String(m.id))?.(checkedLine(m));
    });
  }
  async send(body: Record<string, unknown>): Promise<any> {
    const id = `r${this.n++}`;
    const p = new Promise<any>((r) => this.waiters.set(id, r));
    this.child.stdin.write(JSON.stringify({ id, ...body }) + "\n");
    const m = await p;
    if (!m.ok) throw new Error(`adapter request failed: ${JSON.stringify(m.error)}`);
    return m;
  }
  close() {
    this.child.stdin.end();
  }
}
