// Row results of live runs, merged into .state/matrix-results.json (untracked:
// a test run never modifies tracked files). Several test files run rows
// (matrix.test.ts for GTK3, toolkits-*.test.ts for the other toolkits), so
// each writes only its own rows and keeps the others'. A row counts as passed
// only when this run's oracle self-check (oracles.ts) passed first.
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { oracleProof, type OracleProof } from "./oracles.ts";
import { resultKey, type MatrixDesktop } from "./rows.ts";
import { waylandOracleProof } from "./wayland-oracles.ts";

export const RESULTS_PATH = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", ".state", "matrix-results.json");

export interface RowResult {
  status: "passed" | "failed";
  ms: number;
  error?: string;
  /** When it ran (ISO time) and which file ran it. */
  at?: string;
  file?: string;
  /** Measurements the row made (observation times, CPU and memory deltas...). */
  metrics?: Record<string, number | string>;
}

export interface ResultsFile {
  environment: string;
  results: Record<string, RowResult>;
  /** The oracle self-check of the run that last wrote each file. */
  oracleChecks?: Record<string, { ok: boolean; at: string }>;
}

export function readResults(): ResultsFile {
  if (!existsSync(RESULTS_PATH)) return { environment: "linux-x11 (Xvfb + openbox + AT-SPI)", results: {} };
  try {
    return JSON.parse(readFileSync(RESULTS_PATH, "utf8")) as ResultsFile;
  } catch {
    return { environment: "linux-x11 (Xvfb + openbox + AT-SPI)", results: {} };
  }
}

/**
 * Read-modify-write under a lock directory: vitest runs test files in
 * parallel workers, and two unlocked writers would drop each other's rows.
 */
function save(update: (r: ResultsFile) => void): void {
  mkdirSync(dirname(RESULTS_PATH), { recursive: true });
  const lock = `${RESULTS_PATH}.lock`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // A lock older than 30 s belongs to a worker that died holding it.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 30_000) rmdirSync(lock);
      } catch {
        // released meanwhile
      }
      if (Date.now() > deadline) throw new Error(`could not lock ${lock} within 10 s`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    const data = readResults();
    update(data);
    const tmp = `${RESULTS_PATH}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(data, null, 2) + "\n");
    renameSync(tmp, RESULTS_PATH);
  } finally {
    rmdirSync(lock);
  }
}

/** Per-row metrics collected while a row runs (record() stores them). */
const pending = new Map<string, Record<string, number | string>>();
export function metric(id: string, name: string, value: number | string): void {
  const m = pending.get(id) ?? {};
  m[name] = value;
  pending.set(id, m);
}

/** The oracle self-check of this run on that desktop (each desktop proves its own oracles). */
function proofOn(desktop: MatrixDesktop): OracleProof | undefined {
  return desktop === "x11" ? oracleProof() : waylandOracleProof();
}

/**
 * Runs a row and records its outcome on the desktop (X11 unless said);
 * rethrows so the test fails too. It counts as passed only when that
 * desktop's oracle self-check passed in this run.
 */
export async function record(id: string, file: string, fn: () => Promise<void>, desktop: MatrixDesktop = "x11"): Promise<void> {
  const t0 = Date.now();
  let result: RowResult;
  let error: unknown;
  try {
    await fn();
    const proof = proofOn(desktop);
    if (!proof?.ok) throw new Error(`the ${desktop} oracle self-check did not pass in this run: the row cannot count`);
    result = { status: "passed", ms: Date.now() - t0 };
  } catch (err) {
    error = err;
    result = { status: "failed", ms: Date.now() - t0, error: String((err as Error).message).slice(0, 800) };
  }
  result.at = new Date().toISOString();
  result.file = file;
  const m = pending.get(id);
  if (m) result.metrics = m;
  pending.delete(id);
  save((r) => {
    r.results[resultKey(desktop, id)] = result;
    const proof = proofOn(desktop);
    if (proof) (r.oracleChecks ??= {})[file] = { ok: proof.ok, at: proof.at };
  });
  if (error) throw error;
}
