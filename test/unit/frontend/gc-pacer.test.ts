// serve's collection pacer (issue 15, memory): a full collection once the JS
// memory is `headroom` above what the last one left, after the answer went
// out, never two queued at once; off where the runtime has none.
import { describe, expect, it } from "vitest";
import { DEFAULT_GC_HEADROOM_BYTES, GcPacer } from "../../../src/frontend/gc-pacer.ts";

const MB = 1024 * 1024;

/** A fake runtime: memory grows by `perRequest` MB of dead objects per request; a collection drops to `live`. */
function fake(live: number, perRequest: number) {
  const rt = { used: live * MB, collections: 0, queued: [] as (() => void)[] };
  const pacer = new GcPacer({
    headroomBytes: 16 * MB,
    measure: () => rt.used,
    collect: () => {
      rt.collections++;
      rt.used = live * MB;
    },
    schedule: (fn) => rt.queued.push(fn),
  });
  const request = () => {
    rt.used += perRequest * MB;
    pacer.afterRequest();
  };
  const runQueued = () => {
    for (const fn of rt.queued.splice(0)) fn();
  };
  return { rt, pacer, request, runQueued };
}

describe("GcPacer", () => {
  it("schedules one full collection once 16 MB of dead objects piled up; memory stays within live + headroom + one request", () => {
    const { rt, pacer, request, runQueued } = fake(20, 0.25);
    let peak = 0;
    for (let i = 0; i < 10_000; i++) {
      request();
      runQueued();
      peak = Math.max(peak, rt.used);
    }
    expect(peak).toBeLessThanOrEqual((20 + 16 + 0.25) * MB);
    // 10,000 requests x 0.25 MB / ~16 MB per collection.
    expect(rt.collections).toBeGreaterThanOrEqual(150);
    expect(rt.collections).toBeLessThanOrEqual(160);
    expect(pacer.collections).toBe(rt.collections);
  });

  it("runs it later (after the answer went out), and queues no second one while one is pending", () => {
    const { rt, request, runQueued } = fake(20, 20);
    request(); // the first measure is the baseline
    expect(rt.queued).toHaveLength(0);
    request();
    expect(rt.queued).toHaveLength(1);
    expect(rt.collections).toBe(0);
    request();
    request();
    expect(rt.queued).toHaveLength(1);
    runQueued();
    expect(rt.collections).toBe(1);
  });

  it("measures from what the collection left: a larger live set is not collected over and over", () => {
    let used = 100 * MB;
    let collections = 0;
    const pacer = new GcPacer({ headroomBytes: 16 * MB, measure: () => used, collect: () => void collections++, schedule: (fn) => fn() });
    // The live set itself is 100 MB and nothing is freed: one request of 1 MB
    // garbage each; a collection frees nothing; it runs about every 16 requests, not every one.
    for (let i = 0; i < 160; i++) {
      used += MB;
      pacer.afterRequest();
    }
    expect(collections).toBeLessThanOrEqual(10);
  });

  it("off under a runtime without a collector to call, or with DECKHAND_GC_HEADROOM_MB=0; the headroom is configurable", () => {
    let measured = 0;
    const off = new GcPacer({ collect: null, measure: () => ++measured });
    off.afterRequest();
    expect(measured).toBe(0);
    expect(off.enabled).toBe(false);
    expect(GcPacer.fromEnv({ DECKHAND_GC_HEADROOM_MB: "0" }, { collect: () => {} }).enabled).toBe(false);
    expect(GcPacer.fromEnv({ DECKHAND_GC_HEADROOM_MB: "8" }, { collect: () => {} }).headroomBytes).toBe(8 * MB);
    expect(GcPacer.fromEnv({ DECKHAND_GC_HEADROOM_MB: "lots" }, { collect: () => {} }).headroomBytes).toBe(DEFAULT_GC_HEADROOM_BYTES);
    expect(GcPacer.fromEnv({}, { collect: () => {} }).enabled).toBe(true);
  });
});
