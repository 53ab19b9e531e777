// `deckhand helper check`: spawn a helper, hold it to the wire contract, and
// report one row per check. The run is bounded in time (every request has a
// deadline, the whole run a budget) and always kills the helper at the end.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CAPABILITY_KEYS, DEFAULT_MAX_FRAME_BYTES, PROTOCOL_VERSION, type Hello } from "../../wire/messages.ts";
import { HelperConnection, type HelloOutcome } from "./connection.ts";
import { CONTRACT_PROBES, frameLimit, refusalProbes, shutdown, stream } from "./contract.ts";
import { Budget, exitText, OutOfTime, type CheckContext } from "./context.ts";
import { fail, pass, skip, type Outcome, type Probe } from "./probe.ts";
import { MUTATION_PROBES, READ_PROBES } from "./reads.ts";
import { summarize, type CheckReport, type CheckRow } from "./report.ts";

export interface HelperCheckOptions {
  helperPath: string;
  /** The helper's environment (default: deckhand's own, as the supervisor gives it). */
  env?: NodeJS.ProcessEnv;
  /** The whole run's budget (default 60 s). */
  timeoutMs?: number;
  /** How long to wait for the hello (default DECKHAND_HELLO_TIMEOUT_MS or 5 s). */
  helloTimeoutMs?: number;
}

/** Below this a helper cannot carry a real tree or app list. */
export const MIN_FRAME_BYTES = 64 * 1024;

const HANDSHAKE = ["spawn", "handshake.hello", "handshake.protocol", "handshake.limits", "handshake.capabilities"];
const LATER = [...READ_PROBES, ...MUTATION_PROBES].map((p) => p.name).concat("refuse.unknown_op", ...CONTRACT_PROBES.map((p) => p.name).filter((n) => n !== "refuse.unknown_op"), "stream", "shutdown.eof", "frame_limit");
/** Every check's name in run order (refuse.<capability> rows are added per helper). */
export const CHECK_NAMES: readonly string[] = Object.freeze([...new Set([...HANDSHAKE, ...LATER])]);

function helloRow(o: HelloOutcome, timeoutMs: number): Outcome {
  switch (o.kind) {
    case "hello":
      return pass(`a valid hello in ${o.ms} ms`);
    case "timeout":
      return fail(`no hello within ${timeoutMs} ms (the helper runs but says nothing)`);
    case "exited":
      return fail(`the helper exited before its hello (${exitText(o.exit)})`);
    case "invalid":
      return fail(o.message);
    case "broken":
      return fail(o.message);
    case "spawn-failed":
      return skip("not run: the helper did not start");
  }
}

function protocolRow(hello: Hello): Outcome {
  const [major, minor] = hello.protocol;
  const ours = PROTOCOL_VERSION.join(".");
  if (major !== PROTOCOL_VERSION[0]) return fail(`the helper speaks protocol ${major}.${minor}, deckhand ${ours}: the major differs, deckhand refuses it (HELPER_INCOMPATIBLE)`);
  const note = minor > PROTOCOL_VERSION[1] ? " (a newer minor: its additions are ignored)" : minor < PROTOCOL_VERSION[1] ? " (an older minor: features it lacks are refused by capability)" : "";
  return pass(`${major}.${minor}, deckhand ${ours}${note}`);
}

function limitsRow(hello: Hello): Outcome {
  const n = hello.limits.max_frame_bytes;
  if (n < MIN_FRAME_BYTES) return fail(`max_frame_bytes ${n} is below ${MIN_FRAME_BYTES}: a window's tree or an app list would not fit`);
  if (n > DEFAULT_MAX_FRAME_BYTES) return pass(`max_frame_bytes ${n}; deckhand caps frames at ${DEFAULT_MAX_FRAME_BYTES}`);
  return pass(`max_frame_bytes ${n}`);
}

function capabilitiesRow(hello: Hello): Outcome {
  const caps = hello.capabilities;
  const known = CAPABILITY_KEYS as readonly string[];
  const claimed = known.filter((k) => caps[k]?.supported === true);
  const absent = known.filter((k) => !(k in caps));
  const extra = Object.keys(caps).filter((k) => !known.includes(k));
  const parts = [`${claimed.length} of ${known.length} claimed`];
  if (absent.length) parts.push(`absent (read as unsupported): ${absent.join(", ")}`);
  if (extra.length) parts.push(`unknown to deckhand (ignored): ${extra.join(", ")}`);
  const unverified = claimed.filter((k) => caps[k]!.verified === "unverified");
  if (unverified.length) parts.push(`unverified: ${unverified.join(", ")}`);
  return pass(parts.join("; "));
}

/** Run every check against the helper at opts.helperPath. Never throws for a misbehaving helper. */
export async function runHelperCheck(opts: HelperCheckOptions): Promise<CheckReport> {
  const t0 = performance.now();
  const env = opts.env ?? process.env;
  const totalMs = opts.timeoutMs ?? 60_000;
  const helloTimeoutMs = opts.helloTimeoutMs ?? (Number(env.DECKHAND_HELLO_TIMEOUT_MS) || 5000);
  const budget = new Budget(totalMs);
  const rows: CheckRow[] = [];
  const connections: HelperConnection[] = [];
  const connect = () => {
    const c = new HelperConnection(opts.helperPath, env);
    connections.push(c);
    return c;
  };
  let aborted = false;
  // The safety net: whatever a check waits on, the helpers die at the budget's end.
  const hardStop = setTimeout(() => {
    aborted = true;
    for (const c of connections) c.kill();
  }, totalMs + 2000);
  const tmp = mkdtempSync(join(tmpdir(), "deckhand-helper-check-"));
  const add = (name: string, o: Outcome, ms = 0) => rows.push({ name, status: o.status, reason: o.reason, ms });
  const notRun = (names: readonly string[], why: string) => {
    for (const n of names) if (!rows.some((r) => r.name === n)) add(n, skip(`not run: ${why}`));
  };
  let hello: Hello | null = null;
  const conn = connect();
  try {
    const o = await conn.start(helloTimeoutMs);
    add("spawn", o.kind === "spawn-failed" ? fail(`could not start ${opts.helperPath}: ${o.message}`) : pass(`pid ${conn.pid}, argv only (no shell)`), o.ms);
    add("handshake.hello", helloRow(o, helloTimeoutMs), o.ms);
    if (o.kind !== "hello") {
      notRun(CHECK_NAMES, o.kind === "spawn-failed" ? "the helper did not start" : "no valid hello");
    } else {
      hello = o.hello;
      const protocol = protocolRow(hello);
      add("handshake.protocol", protocol);
      add("handshake.limits", limitsRow(hello));
      add("handshake.capabilities", capabilitiesRow(hello));
      if (protocol.status === "fail") notRun(CHECK_NAMES, "the protocol major differs");
      else await runProbes({ conn, hello, budget, tmp, targets: { apps: null, windows: null, window: null, pid: null }, reserveMs: Math.min(10_000, Math.round(totalMs / 4)) });
    }
  } finally {
    clearTimeout(hardStop);
    for (const c of connections) c.kill();
    // The run ends once every helper it started is gone (SIGKILL is not instant).
    await Promise.all(connections.map((c) => c.waitExit(2000)));
    rmSync(tmp, { recursive: true, force: true });
  }

  async function runProbes(ctx: CheckContext): Promise<void> {
    let outOfTime = false;
    let gone: string | null = null;
    const probes: Probe[] = [...READ_PROBES, ...MUTATION_PROBES, ...CONTRACT_PROBES.slice(0, 1), ...refusalProbes(ctx), ...CONTRACT_PROBES.slice(1)];
    const runOne = async (p: Probe, needsHelper: boolean, reserve: boolean) => {
      if (outOfTime) return add(p.name, skip("not run: the time budget ran out"));
      if (needsHelper && gone) return add(p.name, skip(`not run: ${gone}`));
      const t = performance.now();
      let outcome: Outcome;
      try {
        ctx.reserveMs = reserve ? ctx.reserveMs : 0;
        outcome = await p.run(ctx);
      } catch (err) {
        if (err instanceof OutOfTime) {
          outOfTime = true;
          outcome = fail(`the run's time budget of ${Math.round(totalMs / 1000)} s ran out during this check`);
        } else outcome = fail(`the check itself failed: ${(err as Error).message}`);
      }
      if (aborted) outcome = fail(`the run's time budget of ${Math.round(totalMs / 1000)} s ran out during this check`);
      add(p.name, outcome, Math.round(performance.now() - t));
      if (!gone && ctx.conn.exit) gone = `the helper exited during ${p.name} (${exitText(ctx.conn.exit)})`;
      if (!gone && ctx.conn.broken) gone = `the helper's stdout broke during ${p.name}`;
    };
    for (const p of probes) await runOne(p, !p.offline, true);
    await runOne(stream, false, false);
    await runOne(shutdown, false, false);
    await runOne({ name: "frame_limit", run: (c) => frameLimit(c, connect, helloTimeoutMs) }, false, false);
  }

  const stderrTail = [...connections[0]!.stderr.tail(20), ...(connections[1] ? connections[1].stderr.tail(10).map((l) => `[frame_limit spawn] ${l}`) : [])];
  const summary = summarize(rows);
  return {
    schemaVersion: 1,
    command: "helper check",
    ok: summary.fail === 0,
    helperPath: opts.helperPath,
    helper: hello?.helper ?? null,
    protocol: { helper: hello ? hello.protocol.join(".") : null, deckhand: PROTOCOL_VERSION.join(".") },
    checks: rows,
    summary,
    durationMs: Math.round(performance.now() - t0),
    stderrTail,
  };
}
