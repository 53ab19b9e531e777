// Shared steps of the per-toolkit live rows (test/live/toolkits-*.test.ts):
// timed observations, element lookup, and the harm oracle (the target is
// alive and its CPU time and memory did not jump while deckhand observed and
// acted on it).
import { expect } from "vitest";
import { alivePid, treeUsage } from "../harness.ts";
import type { Serve } from "../deckhand.ts";
import { metric } from "./results.ts";

/** Harm bounds: what observing 5 times and acting may cost the target. Not a speed threshold. HARM_CPU_S (and why 5 s) lives with the rows that quote it. */
import { HARM_CPU_S } from "./rows.ts";
export { HARM_CPU_S };
export const HARM_RSS_BYTES = 50 * 1024 * 1024;
/** After the actions, an idle second: a target still burning CPU then was hurt (e.g. a runaway child walk). */
export const IDLE_CPU_S = 0.5;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Observation {
  st: any;
  ms: number;
}

/** get-app-state through a serve session, timed; the time goes into the row's metrics. */
export async function observeTimed(s: Serve, args: Record<string, unknown>, row?: string): Promise<Observation> {
  const t0 = performance.now();
  const r = await s.request("get-app-state", { noScreenshot: true, ...args });
  const ms = Math.round(performance.now() - t0);
  if (!r.ok) throw new Error(`get-app-state ${JSON.stringify(args)} failed after ${ms} ms: ${JSON.stringify(r.error)}`);
  if (row) metric(row, "observe_ms", ms);
  return { st: r.result, ms };
}

export function findEl(st: any, role: RegExp, title: string | RegExp): any {
  const match = (t: string) => (typeof title === "string" ? t === title : title.test(t ?? ""));
  const el = st.snapshot.elements.find((e: any) => role.test(e.role) && match(e.title));
  if (!el) throw new Error(`no ${role} ${String(title)} in the snapshot:\n${String(st.snapshot.treeText).slice(0, 4000)}`);
  return el;
}

/** Element bounds lie inside the observed window's bounds (screen coordinates, 2 px slack for borders). */
export function expectInsideWindow(st: any, el: any): void {
  const w = st.window.bounds;
  const b = el.bounds;
  expect(b, `${el.role} "${el.title}" has bounds`).toBeTruthy();
  const inside = b.width > 0 && b.height > 0 && b.x >= w.x - 2 && b.y >= w.y - 2 && b.x + b.width <= w.x + w.width + 2 && b.y + b.height <= w.y + w.height + 2;
  expect(inside, `${el.role} "${el.title}" bounds ${JSON.stringify(b)} inside window ${JSON.stringify(w)}`).toBe(true);
}

export interface HarmReport {
  cpuSeconds: number;
  rssGrowthBytes: number;
  idleCpuSeconds: number;
  alive: boolean;
}

/**
 * The harm oracle: measures the target's processes (utime+stime from
 * /proc/PID/stat, VmRSS from /proc/PID/status) around `body` (which observes
 * 5 times and acts), then over one idle second, and requires the main pid
 * alive, CPU < HARM_CPU_S, RSS growth < HARM_RSS_BYTES, idle CPU < IDLE_CPU_S.
 */
export async function expectNoHarm(row: string, mainPid: number, pids: () => number[], body: () => Promise<void>): Promise<HarmReport> {
  const before = treeUsage(pids());
  let failure: unknown;
  try {
    await body();
  } catch (err) {
    failure = err;
  }
  const alive = alivePid(mainPid);
  const after = treeUsage(before.pids);
  await sleep(1000);
  const idle = treeUsage(before.pids);
  const report: HarmReport = {
    cpuSeconds: +(after.cpuSeconds - before.cpuSeconds).toFixed(2),
    rssGrowthBytes: after.rssBytes - before.rssBytes,
    idleCpuSeconds: +(idle.cpuSeconds - after.cpuSeconds).toFixed(2),
    alive,
  };
  metric(row, "cpu_s", report.cpuSeconds);
  metric(row, "rss_growth_mb", +(report.rssGrowthBytes / 1048576).toFixed(1));
  metric(row, "idle_cpu_s", report.idleCpuSeconds);
  if (!alive) metric(row, "alive", "no");
  console.log(`[harm] ${row}: ${JSON.stringify(report)}${failure ? ` (the actions failed: ${(failure as Error).message.slice(0, 300)})` : ""}`);
  // Every harm found is reported together, with the actions' own failure:
  // a dead or overloaded target is the finding, whatever code deckhand gave.
  const harms: string[] = [];
  if (!alive) harms.push(`the target (pid ${mainPid}) died while deckhand observed or acted on it`);
  if (report.cpuSeconds >= HARM_CPU_S) harms.push(`the target spent ${report.cpuSeconds} s CPU (bound ${HARM_CPU_S} s)`);
  if (report.rssGrowthBytes >= HARM_RSS_BYTES) harms.push(`the target's RSS grew by ${(report.rssGrowthBytes / 1048576).toFixed(1)} MB (bound ${HARM_RSS_BYTES / 1048576} MB)`);
  if (report.idleCpuSeconds >= IDLE_CPU_S) harms.push(`the target was still busy afterwards: ${report.idleCpuSeconds} s CPU in the idle second (bound ${IDLE_CPU_S} s)`);
  if (harms.length) throw new Error(`${harms.join("; ")}${failure ? `; the actions reported: ${(failure as Error).message}` : ""}`);
  if (failure) throw failure;
  return report;
}

/** Observes n times (the harm oracle's load), returning the times. */
export async function observeN(s: Serve, args: Record<string, unknown>, n = 5, row?: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) times.push((await observeTimed(s, args)).ms);
  if (row) metric(row, "observe_x5_ms", times.join(", "));
  return times;
}

/**
 * Waits until list-apps shows the pid as accessible (an app registers on the
 * AT-SPI bus some time after its window maps: GTK4 and browsers are slow).
 * Start-up, not observation: observation times are measured after this.
 */
export async function waitAccessible(s: Serve, pid: number, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  let all: unknown;
  for (;;) {
    const r = await s.request("list-apps", {});
    last = r.ok ? r.result.apps.find((a: any) => a.pid === pid) : r.error;
    all = r.ok ? r.result.apps.map((a: any) => `${a.name}:${a.pid}:${a.accessible}`) : r.error;
    if (last?.accessible === true) return last;
    // What was listed instead says whether the app never registered or registered under another pid.
    if (Date.now() > deadline) throw new Error(`pid ${pid} never became accessible within ${timeoutMs} ms; list-apps says ${JSON.stringify(last)} (listed: ${JSON.stringify(all)})`);
    await sleep(250);
  }
}
