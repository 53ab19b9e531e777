// Issue 15 (memory): what a serve session holds stays bounded however many
// observations it answers. 400 get-app-state requests (default screenshot,
// each with an id, as agents send them) through a real serve process and the
// fake helper; serve's memory trace (DECKHAND_TRACE_MEMORY) reports what it
// holds: at most MEMORY_SNAPSHOTS snapshots in memory (it was 200), the
// journal within its caps, and full collections run by the pacer (headroom
// 1 MB here so that the fake's small answers reach it). The RSS curve itself
// is bench/soak.ts's job (real helper, 10,000 requests).
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { MEMORY_SNAPSHOTS } from "../../src/session/store.ts";
import { cleanupSandboxes, sandbox, ServeProcess } from "./harness.ts";

afterAll(cleanupSandboxes);
const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});

const REQUESTS = 400;

describe("serve memory over many observations (issue 15)", () => {
  it(`${REQUESTS} get-app-state with screenshots: at most ${MEMORY_SNAPSHOTS} snapshots held, journal bounded, collections paced`, async () => {
    const sb = sandbox();
    const s = new ServeProcess(sb, [], { env: { DECKHAND_TRACE_MEMORY: "100", DECKHAND_GC_HEADROOM_MB: "1" } });
    procs.push(s);
    for (let i = 1; i <= REQUESTS; i++) {
      const m = await s.request({ id: i, command: "get-app-state", args: { app: "fixture-app" } });
      expect(m.ok).toBe(true);
    }
    // Each trace line follows its answer: wait for the last one.
    const end = Date.now() + 5000;
    const trace = () => [...s.stderr.matchAll(/^deckhand serve memory: (\{.*\})$/gm)].map((m) => JSON.parse(m[1]!));
    while (trace().length < REQUESTS / 100 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    const lines = trace();
    expect(lines.map((l) => l.requests)).toEqual([100, 200, 300, 400]);
    for (const l of lines) {
      expect(l.snapshotsHeld).toBeGreaterThan(0);
      expect(l.snapshotsHeld).toBeLessThanOrEqual(MEMORY_SNAPSHOTS);
    }
    const last = lines.at(-1)!;
    // Every id is remembered (under the 1000 cap), each answer once, as bytes.
    expect(last.journalIds).toBe(REQUESTS);
    expect(last.journalBytes).toBeGreaterThan(0);
    expect(last.journalBytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    // Bun runs the pacer's full collections (Node has none to call: it would be off).
    expect(last.gcRuns).toBeGreaterThan(0);
    expect(s.violations).toEqual([]);
    expect(await s.close()).toEqual({ code: 0, signal: null });
  }, 120_000);
});
