// Core benchmarks (issue: orchestrator overhead and cold start).
//   bun bench/core.ts
// Needs dist/deckhand (npm run build) and builds dist/fake-helper from the
// scripted fake helper so that helper start-up does not hide ours.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { encodeFrame, FrameDecoder } from "../src/wire/codec.ts";
import { percentile, printTable, type Row } from "./stats.ts";

const root = resolve(import.meta.dirname, "..");
const deckhand = join(root, "dist", "deckhand");
const fake = join(root, "dist", "fake-helper");
const N = Number(process.env.BENCH_N || 3000);

function buildFake(): void {
  const r = spawnSync(join(root, "node_modules/.bin/bun"), ["build", "--compile", "--bytecode", "--minify", join(root, "test/fixtures/helpers/fake-helper.mjs"), "--outfile", fake], { stdio: "inherit" });
  if (r.status !== 0) throw new Error("could not compile the fake helper");
}

/** Round trips straight to the helper: the floor under deckhand's numbers. */
async function directRtt(n: number): Promise<number[]> {
  const child = spawn(fake, [], { stdio: ["pipe", "pipe", "ignore"] });
  const dec = new FrameDecoder();
  const waiters: ((f: Record<string, unknown>) => void)[] = [];
  child.stdout.on("data", (c: Buffer) => {
    for (const f of dec.push(c)) waiters.shift()?.(f);
  });
  const next = () => new Promise<Record<string, unknown>>((r) => waiters.push(r));
  await next(); // hello
  const times: number[] = [];
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    const p = next();
    child.stdin.write(encodeFrame({ type: "request", id: i, op: "permissions", deadline_ms: 5000, args: {} }));
    await p;
    times.push(performance.now() - t0);
  }
  child.stdin.end();
  return times;
}

/** Round trips through `deckhand serve`, one request at a time. */
async function serveRtt(n: number): Promise<{ times: number[]; own: { ownP50Us: number; ownP99Us: number } }> {
  const env = { ...process.env, DECKHAND_STATE_DIR: mkdtempSync(join(tmpdir(), "dh-bench-")), DECKHAND_TRACE_TIMING: "1" };
  const child = spawn(deckhand, ["serve", "--helper", fake], { stdio: ["pipe", "pipe", "pipe"], env });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const rl = createInterface({ input: child.stdout });
  const waiters: ((l: string) => void)[] = [];
  rl.on("line", (l) => waiters.shift()?.(l));
  const ask = (i: number) => {
    const p = new Promise<string>((r) => waiters.push(r));
    child.stdin.write(JSON.stringify({ id: i, command: "permissions", args: {} }) + "\n");
    return p;
  };
  await ask(0); // warm: helper spawned and handshaken
  const times: number[] = [];
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    const line = await ask(i);
    times.push(performance.now() - t0);
    if (i === 1 && !JSON.parse(line).ok) throw new Error(`serve failed: ${line}`);
  }
  child.stdin.end();
  await new Promise((r) => child.on("exit", r));
  const m = /deckhand serve timing: (\{.*\})/.exec(stderr);
  if (!m) throw new Error(`serve printed no timing summary:\n${stderr}`);
  return { times, own: JSON.parse(m[1]!) };
}

function coldStart(args: string[], runs = 30): number[] {
  const env = { ...process.env, DECKHAND_STATE_DIR: mkdtempSync(join(tmpdir(), "dh-bench-")) };
  const times: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    const r = spawnSync(args[0]!, args.slice(1), { env, stdio: ["ignore", "pipe", "pipe"] });
    const dt = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${args.join(" ")} failed: ${r.stdout}${r.stderr}`);
    if (i >= 3) times.push(dt); // first runs warm the page cache
  }
  return times;
}

export async function runCoreBench(): Promise<Row[]> {
  buildFake();
  const direct = await directRtt(N);
  const { times: serve, own } = await serveRtt(N);
  const rows: Row[] = [];
  const d50 = percentile(direct, 50);
  const s50 = percentile(serve, 50);
  rows.push({ name: "helper round trip, direct (floor)", p50: d50, p99: percentile(direct, 99), unit: "ms", note: `${N} requests` });
  rows.push({ name: "round trip through deckhand serve", p50: s50, p99: percentile(serve, 99), unit: "ms", note: `${N} requests` });
  rows.push({ name: "orchestrator's own time per request", p50: own.ownP50Us, p99: own.ownP99Us, unit: "us", note: "measured inside serve (DECKHAND_TRACE_TIMING), helper time excluded; goal p50 <= 100 us" });
  rows.push({ name: "serve round trip minus direct round trip", p50: (s50 - d50) * 1000, p99: (percentile(serve, 99) - percentile(direct, 99)) * 1000, unit: "us", note: "adds a second pipe hop and a third process on 2 cores" });
  const bunBare = coldStart([join(root, "node_modules/.bin/bun"), "-e", "0"]);
  const version = coldStart([deckhand, "--version"]);
  const caps = coldStart([deckhand, "capabilities", "--json", "--helper", fake]);
  rows.push({ name: "bun -e 0 (reference)", p50: percentile(bunBare, 50), p99: percentile(bunBare, 99), unit: "ms", note: "process start floor" });
  rows.push({ name: "cold start: deckhand --version", p50: percentile(version, 50), p99: percentile(version, 99), unit: "ms", note: "goal <= 60 ms" });
  rows.push({ name: "cold start: capabilities --json (fake helper)", p50: percentile(caps, 50), p99: percentile(caps, 99), unit: "ms", note: "includes spawning the compiled fake helper; goal <= 60 ms" });
  return rows;
}

if (import.meta.main) {
  printTable("deckhand core", await runCoreBench());
}
