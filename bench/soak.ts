// Memory soak of `deckhand serve` (issue 15, goal 4): N get-app-state
// requests (default screenshot, as agents send them) for gtk3-widget-factory
// on a private desktop; every SOAK_EVERY requests the resident memory of the
// serve process and of its helper. Goal: both flat between the 2000th and the
// Nth request, serve under 120 MB.
//   node_modules/.bin/bun bench/soak.ts            (needs dist/; scripts/build.sh)
//   SOAK_N=3000 SOAK_EVERY=250 node_modules/.bin/bun bench/soak.ts
// Reading /proc is fine here: this is bench code, not the orchestrator.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { startDesktop, type Desktop } from "../src/desktop/index.ts";
import { percentile, printTable, type Row } from "./stats.ts";

const root = resolve(import.meta.dirname, "..");
const deckhand = join(root, "dist", "deckhand");
const HELPER_NAME = "deckhand-helper-linux";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface SoakOptions {
  /** Requests in all (SOAK_N, default 10000). */
  n?: number;
  /** Sample every this many requests (SOAK_EVERY, default 500). */
  every?: number;
  /** The request from which growth is measured (after warm-up; default 2000, or n/3 for a short soak). */
  warm?: number;
  /** Progress lines on stderr. */
  log?: (line: string) => void;
  /** The deckhand binary (SOAK_DECKHAND; default dist/deckhand). */
  deckhand?: string;
  /** A full collection in serve before each of its memory lines (SOAK_GC=1; diagnostic: live heap vs garbage). */
  gc?: boolean;
}

export interface SoakSample {
  /** Requests answered so far. */
  requests: number;
  serveRssMb: number;
  helperRssMb: number;
  /** Median request round trip in the window that ended here (ms). */
  p50Ms: number;
  /** serve's own view (DECKHAND_TRACE_MEMORY), its latest line: JS heap used and reserved, external memory. */
  heapUsedMb?: number;
  heapTotalMb?: number;
  externalMb?: number;
  /** Full collections serve's pacer ran so far (src/frontend/gc-pacer.ts). */
  gcRuns?: number;
  /** Time serve spent asking for them (ms), in all. */
  gcMs?: number;
}

export interface SoakResult {
  samples: SoakSample[];
  warm: number;
  n: number;
  stateDir: { files: number; bytes: number };
  servePid: number;
  helperPid: number;
  /** Serve's stderr tail (diagnostics). */
  stderrTail: string[];
}

/** VmRSS of a process in MB, NaN when it is gone. */
export function rssMb(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The helper serve started: a child of serve named deckhand-helper-linux. */
export function helperPidOf(servePid: number): number | null {
  const kids: number[] = [];
  try {
    for (const t of readdirSync(`/proc/${servePid}/task`)) {
      try {
        for (const k of readFileSync(`/proc/${servePid}/task/${t}/children`, "utf8").trim().split(/\s+/)) if (k) kids.push(Number(k));
      } catch {
        /* thread gone */
      }
    }
  } catch {
    return null;
  }
  for (const pid of kids) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim().startsWith(HELPER_NAME.slice(0, 15))) return pid;
    } catch {
      /* gone */
    }
  }
  return null;
}

/** Files and bytes under a directory (recursive, no symlinks followed). */
function dirUsage(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      const u = dirUsage(p);
      files += u.files;
      bytes += u.bytes;
    } else if (e.isFile()) {
      files++;
      bytes += statSync(p).size;
    }
  }
  return { files, bytes };
}

class Serve {
  private waiters = new Map<number, (m: any) => void>();
  private id = 1;
  readonly stderr: string[] = [];
  /** serve's latest DECKHAND_TRACE_MEMORY line. */
  memory: Pick<SoakSample, "heapUsedMb" | "heapTotalMb" | "externalMb" | "gcRuns" | "gcMs"> | null = null;
  readonly child: ChildProcess;
  constructor(d: Desktop, stateDir: string, bin: string, every: number, gc: boolean) {
    const trace = { DECKHAND_TRACE_MEMORY: String(every), DECKHAND_TRACE_MEMORY_GC: gc ? "1" : "0" };
    this.child = spawn(bin, ["serve"], { env: { ...process.env, ...d.env, DECKHAND_STATE_DIR: stateDir, ...trace }, stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout! }).on("line", (l) => {
      const m = JSON.parse(l);
      const w = this.waiters.get(m.id);
      this.waiters.delete(m.id);
      w?.(m);
    });
    createInterface({ input: this.child.stderr! }).on("line", (l) => {
      const m = /^deckhand serve memory: (\{.*\})$/.exec(l);
      if (m) {
        const t = JSON.parse(m[1]!);
        this.memory = { heapUsedMb: t.heapUsedMb, heapTotalMb: t.heapTotalMb, externalMb: t.externalMb, gcRuns: t.gcRuns, gcMs: t.gcMs };
        return;
      }
      this.stderr.push(l);
      if (this.stderr.length > 50) this.stderr.shift();
    });
  }
  async send(command: string, args: Record<string, unknown>): Promise<any> {
    // Every request carries an id, as agents' clients send them (serve journals it for safe retries).
    const id = this.id++;
    const p = new Promise<any>((r) => this.waiters.set(id, r));
    this.child.stdin!.write(JSON.stringify({ id, command, args }) + "\n");
    return await p;
  }
  close() {
    this.child.stdin!.end();
  }
}

export async function runSoak(opts: SoakOptions = {}): Promise<SoakResult> {
  const n = opts.n ?? 10_000;
  const every = opts.every ?? 500;
  const warm = opts.warm ?? Math.min(2000, Math.max(every, Math.floor(n / 3 / every) * every));
  const log = opts.log ?? (() => {});
  const d = await startDesktop();
  const stateDir = mkdtempSync(join(tmpdir(), "dh-soak-"));
  let wf: ChildProcess | null = null;
  let serve: Serve | null = null;
  try {
    wf = spawn("/usr/bin/gtk3-widget-factory", [], { env: { ...process.env, ...d.env }, stdio: "ignore", detached: true });
    serve = new Serve(d, stateDir, opts.deckhand ?? deckhand, every, opts.gc === true);
    const app = `pid:${wf.pid}`;
    // Wait until the app's window is observable.
    const end = Date.now() + 30_000;
    for (;;) {
      const m = await serve.send("get-app-state", { app, noScreenshot: true });
      if (m.ok) break;
      if (Date.now() > end) throw new Error(`widget-factory never became observable: ${JSON.stringify(m.error)}`);
      await sleep(200);
    }
    await sleep(500); // its first layout
    const servePid = serve.child.pid!;
    const helperPid = helperPidOf(servePid);
    if (!helperPid) throw new Error("serve's helper process was not found under /proc");
    const samples: SoakSample[] = [{ requests: 0, serveRssMb: rssMb(servePid), helperRssMb: rssMb(helperPid), p50Ms: NaN }];
    log(`soak: serve pid ${servePid}, helper pid ${helperPid}, ${n} requests, sample every ${every}`);
    let window: number[] = [];
    // serve counts the warm-up requests too: its memory lines come every `every`
    // of its own requests, so a sample shows the latest line, at most `every` old.
    for (let i = 1; i <= n; i++) {
      const t0 = performance.now();
      const m = await serve.send("get-app-state", { app });
      window.push(performance.now() - t0);
      if (!m.ok) throw new Error(`request ${i}: ${JSON.stringify(m.error)}`);
      if (i % every === 0 || i === n) {
        await sleep(5); // its memory line follows the answer
        const s: SoakSample = { requests: i, serveRssMb: rssMb(servePid), helperRssMb: rssMb(helperPid), p50Ms: percentile(window, 50), ...(serve.memory ?? {}) };
        samples.push(s);
        window = [];
        const heap = s.heapUsedMb === undefined ? "" : `  (heap ${s.heapUsedMb} / ${s.heapTotalMb} MB, external ${s.externalMb} MB, full gc ${s.gcRuns ?? "-"}, ${s.gcMs ?? "-"} ms)`;
        log(`soak: ${String(i).padStart(6)}  serve ${s.serveRssMb.toFixed(1)} MB${heap}  helper ${s.helperRssMb.toFixed(1)} MB  p50 ${s.p50Ms.toFixed(1)} ms`);
      }
    }
    const usage = dirUsage(stateDir);
    serve.close();
    await new Promise((r) => serve!.child.once("exit", r));
    return { samples, warm, n, stateDir: usage, servePid, helperPid, stderrTail: serve.stderr.slice(-10) };
  } finally {
    if (serve && serve.child.exitCode === null) serve.child.kill("SIGTERM");
    if (wf?.pid) {
      try {
        process.kill(-wf.pid, "SIGTERM");
      } catch {
        /* gone */
      }
    }
    await d.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

/** The sample at (or first after) request `at`. */
function sampleAt(samples: SoakSample[], at: number): SoakSample {
  return samples.find((s) => s.requests >= at) ?? samples[samples.length - 1]!;
}

/** Summary rows (bench/stats.ts Row): start after warm-up, end, growth, max, per process; state-dir size. */
export function soakRows(r: SoakResult): Row[] {
  const start = sampleAt(r.samples, r.warm);
  const last = r.samples[r.samples.length - 1]!;
  const after = r.samples.filter((s) => s.requests >= r.warm);
  // A sample lands anywhere in a collection cycle: the halves' means show the trend better than two points.
  const mid = Math.floor(after.length / 2);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const row = (who: string, pick: (s: SoakSample) => number, goal: string): Row => {
    const max = Math.max(...after.map(pick));
    const growth = pick(last) - pick(start);
    const first = mean(after.slice(0, mid).map(pick));
    const second = mean(after.slice(mid).map(pick));
    return {
      name: `${who} RSS after ${r.n} get-app-state (with screenshot) through serve`,
      p50: pick(last),
      unit: "MB",
      note: `at request ${start.requests} ${pick(start).toFixed(1)} MB -> at ${last.requests} ${pick(last).toFixed(1)} MB (growth ${growth >= 0 ? "+" : ""}${growth.toFixed(1)} MB, max ${max.toFixed(1)} MB after warm-up; mean of the first / second half after warm-up ${first.toFixed(1)} / ${second.toFixed(1)} MB; at 0 ${pick(r.samples[0]!).toFixed(1)} MB); ${goal}`,
    };
  };
  const p50s = r.samples.filter((s) => !Number.isNaN(s.p50Ms)).map((s) => s.p50Ms);
  return [
    row("serve (orchestrator)", (s) => s.serveRssMb, "goal: flat after warm-up, < 120 MB"),
    row("helper", (s) => s.helperRssMb, "goal: flat after warm-up"),
    { name: "get-app-state p50 over the soak (per-window medians: first / last)", p50: percentile(p50s, 50), unit: "ms", note: `${p50s[0]?.toFixed(1)} / ${p50s[p50s.length - 1]?.toFixed(1)} ms` },
    { name: "state dir at the end of the soak", p50: r.stateDir.bytes / 1024 / 1024, unit: "MB", note: `${r.stateDir.files} files (retention keeps it bounded)` },
    ...(last.gcRuns !== undefined
      ? [{ name: "full collections run by serve's pacer (src/frontend/gc-pacer.ts)", p50: last.gcRuns, unit: "runs", note: `${last.gcMs} ms in all, ${((last.gcMs ?? 0) / r.n).toFixed(2)} ms per request on average` }]
      : []),
  ];
}

/** The curve as a Markdown table. */
export function curveTable(r: SoakResult): string {
  const lines = ["| requests | serve RSS MB | serve JS heap used / reserved MB | serve external MB | full GCs (ms in all) | helper RSS MB | p50 ms (window) |", "|---:|---:|---:|---:|---:|---:|---:|"];
  const dash = (v: number | undefined, f: (v: number) => string = String) => (v === undefined ? "-" : f(v));
  for (const s of r.samples) {
    lines.push(
      `| ${s.requests} | ${s.serveRssMb.toFixed(1)} | ${dash(s.heapUsedMb)} / ${dash(s.heapTotalMb)} | ${dash(s.externalMb)} | ${dash(s.gcRuns)} (${dash(s.gcMs)}) | ${s.helperRssMb.toFixed(1)} | ${Number.isNaN(s.p50Ms) ? "-" : s.p50Ms.toFixed(1)} |`,
    );
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const n = Number(process.env.SOAK_N || 10_000);
  const every = Number(process.env.SOAK_EVERY || 500);
  const r = await runSoak({ n, every, deckhand: process.env.SOAK_DECKHAND || undefined, gc: process.env.SOAK_GC === "1", log: (l) => process.stderr.write(l + "\n") });
  console.log(`## Memory soak: ${n} get-app-state through serve (widget-factory, default screenshot)\n`);
  console.log(curveTable(r) + "\n");
  printTable(`Memory soak summary (growth from request ${r.warm} to ${r.n})`, soakRows(r));
  if (r.stderrTail.length) console.log(`serve stderr (tail):\n${r.stderrTail.join("\n")}`);
}
