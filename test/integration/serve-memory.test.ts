// Issue 10.2: serve's in-flight cap bounds memory under a flood. 6,400
// pipelined requests of 64 KiB each (420 MB in all, written as fast as the
// pipe takes them) while the helper is slow: every request is answered (run,
// or refused at once with too-many-in-flight), and serve's peak resident size
// stays far below what holding the requests would take.
import { readFileSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, sandbox, ServeProcess } from "./harness.ts";

afterAll(cleanupSandboxes);
const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});

/** Resident and peak resident size of a process, in MiB. */
function memory(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { rss: kb("VmRSS") / 1024, peak: kb("VmHWM") / 1024 };
}

const REQUESTS = 6400;
const PAYLOAD = 64 * 1024;
const BOUND_MIB = 300;

describe.skipIf(process.platform !== "linux")("serve under a flood of pipelined requests", () => {
  it(`${REQUESTS} requests of 64 KiB: all answered, at most --max-inflight (64) in flight, peak RSS under ${BOUND_MIB} MiB`, async () => {
    const sb = sandbox();
    // Resolving the app waits 1.5 s in the helper: requests pile up against the cap.
    const s = new ServeProcess(sb, [], { mode: "slow-on:list_apps:1500" });
    procs.push(s);
    expect((await s.request({ id: "warm", command: "capabilities" })).ok).toBe(true);
    const pid = s.child.pid!;
    const before = memory(pid);

    const value = "v".repeat(PAYLOAD);
    const t0 = performance.now();
    let peakSeen = before.rss;
    const sampler = setInterval(() => {
      try {
        peakSeen = Math.max(peakSeen, memory(pid).rss);
      } catch {
        /* exited */
      }
    }, 25);
    try {
      const stdin = s.child.stdin!;
      for (let i = 0; i < REQUESTS; i++) {
        const line = `{"id":${i},"command":"set-value","args":{"app":"fixture-app","elementIndex":3,"value":"${value}"}}\n`;
        if (!stdin.write(line)) await new Promise<void>((r) => stdin.once("drain", () => r()));
      }
      await s.waitLines(REQUESTS + 1, 120_000);
    } finally {
      clearInterval(sampler);
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = memory(pid);
    const answers = s.lines.filter((l) => typeof l.id === "number");
    expect(new Set(answers.map((l) => l.id)).size).toBe(REQUESTS);
    const refused = answers.filter((l) => l.error?.details?.reason === "too-many-in-flight");
    const ran = answers.length - refused.length;
    for (const l of refused) expect(l.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { limit: 64, delivery: "not_dispatched" } });
    // No answer echoes the 64 KiB value.
    expect(answers.every((l) => !JSON.stringify(l).includes("vvvvvvvvvvvvvvvv"))).toBe(true);
    const stats = {
      requests: REQUESTS,
      mib: +((REQUESTS * PAYLOAD) / 2 ** 20).toFixed(0),
      seconds: +seconds.toFixed(1),
      ran,
      refused: refused.length,
      rssBeforeMiB: +before.rss.toFixed(1),
      rssAfterMiB: +after.rss.toFixed(1),
      peakRssMiB: +Math.max(after.peak, peakSeen).toFixed(1),
    };
    console.log(`serve flood: ${JSON.stringify(stats)}`);
    expect(refused.length).toBeGreaterThan(0);
    expect(stats.peakRssMiB).toBeLessThan(BOUND_MIB);
    expect(stats.peakRssMiB - stats.rssBeforeMiB).toBeLessThan(200);
    // Still serving afterwards.
    expect((await s.request({ id: "after", command: "list-apps" })).ok).toBe(true);
    expect(await s.close()).toEqual({ code: 0, signal: null });
  }, 180_000);
});
