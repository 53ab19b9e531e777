// serve's request journal (src/cli/request-journal.ts): what a repeated id
// gets, and the bounds that keep it small (a window, a count, bytes).
import { describe, expect, it } from "vitest";
import { DEFAULT_REPLAY_MAX_BYTES, fingerprintOf, RequestJournal } from "../../../src/cli/request-journal.ts";

const env = (ok: boolean, extra: Record<string, unknown> = {}) => (ok ? { schemaVersion: 1, ok, command: "click", result: { ...extra } } : { schemaVersion: 1, ok, command: "click", error: { code: "APP_NOT_FOUND", ...extra } });

describe("fingerprintOf", () => {
  it("the same request whatever its key order, id or deadline; another request differs", () => {
    const a = fingerprintOf({ id: 1, command: "click", args: { app: "x", elementIndex: 2 } });
    expect(fingerprintOf({ args: { elementIndex: 2, app: "x" }, command: "click", id: "other", deadlineMs: 5 })).toBe(a);
    expect(fingerprintOf({ id: 1, command: "click", args: { app: "x", elementIndex: 3 } })).not.toBe(a);
    expect(fingerprintOf({ id: 1, command: "click", args: { app: "x", elementIndex: 2 }, adapter: "openai" })).not.toBe(a);
    expect(fingerprintOf({ command: "run", args: { program: { steps: [1, 2] } } })).not.toBe(fingerprintOf({ command: "run", args: { program: { steps: [2, 1] } } }));
  });
});

describe("RequestJournal", () => {
  it("new, then in flight (settles with the first answer), then done; another request under the id is reused", async () => {
    const j = new RequestJournal();
    expect(j.lookup("a", "f1")).toEqual({ kind: "new" });
    const finish = j.begin("a", "click", "f1");
    const seen = j.lookup("a", "f1");
    expect(seen.kind).toBe("inflight");
    expect(j.lookup("a", "f2")).toEqual({ kind: "reused", command: "click" });
    finish(env(true));
    await expect((seen as { answer: Promise<unknown> }).answer).resolves.toEqual(env(true));
    expect(j.lookup("a", "f1")).toEqual({ kind: "done", envelope: env(true) });
    expect(j.lookup(1, "f1")).toEqual({ kind: "new" });
  });

  it("forgets an id once its window passed (counted from when it finished); never while in flight", () => {
    let now = 1_000;
    const j = new RequestJournal({ windowMs: 100, now: () => now });
    const finishA = j.begin("a", "click", "f");
    j.begin("b", "click", "f");
    now += 500;
    expect(j.lookup("b", "f").kind).toBe("inflight");
    finishA(env(true));
    now += 100;
    expect(j.lookup("a", "f").kind).toBe("done");
    now += 1;
    expect(j.lookup("a", "f")).toEqual({ kind: "new" });
    expect(j.lookup("b", "f").kind).toBe("inflight");
  });

  it("remembers at most maxIds finished ids, the oldest forgotten first", () => {
    const j = new RequestJournal({ maxIds: 3 });
    for (const id of ["a", "b", "c", "d"]) j.begin(id, "click", "f")(env(true));
    expect(j.lookup("a", "f")).toEqual({ kind: "new" });
    for (const id of ["b", "c", "d"]) expect(j.lookup(id, "f").kind).toBe("done");
    expect(j.size.ids).toBe(3);
  });

  it("bounded in bytes: past the cap the oldest answers go, their ids stay (a retry is refused, never run)", () => {
    const big = "x".repeat(1000);
    const j = new RequestJournal({ maxBytes: 2500 });
    for (const id of ["a", "b", "c"]) j.begin(id, "click", "f")(env(true, { big }));
    expect(j.size.bytes).toBeLessThanOrEqual(2500);
    expect(j.lookup("a", "f")).toMatchObject({ kind: "answer-dropped", command: "click", ok: true, code: null });
    expect(j.lookup("c", "f").kind).toBe("done");
    // An answer over the per-answer cap is never stored.
    const k = new RequestJournal({ maxAnswerBytes: 500 });
    k.begin("z", "click", "f")(env(false, { big }));
    expect(k.lookup("z", "f")).toMatchObject({ kind: "answer-dropped", ok: false, code: "APP_NOT_FOUND" });
    expect(k.size.bytes).toBe(0);
  });

  it("recent: finished requests, newest first, with the code of failures", () => {
    let now = Date.parse("2030-01-01T00:00:00Z");
    const j = new RequestJournal({ now: () => now });
    const a = j.begin("a", "click", "f");
    const b = j.begin(2, "list-apps", "g");
    j.begin("c", "run", "h");
    b(env(false));
    now += 10;
    a(env(true));
    expect(j.recent()).toEqual([
      { id: "a", command: "click", ok: true, finishedAt: "2030-01-01T00:00:00.010Z" },
      { id: 2, command: "list-apps", ok: false, code: "APP_NOT_FOUND", finishedAt: "2030-01-01T00:00:00.000Z" },
    ]);
  });

  it("issue 15 (memory): an answer is stored as its UTF-8 JSON, a copy: the answer object is not held (a change to it after does not show)", () => {
    const j = new RequestJournal();
    const answer = env(true, { text: "é…", nested: { n: 1 } }) as unknown as { result: { nested: { n: number } } };
    j.begin("a", "get-app-state", "f")(answer);
    answer.result.nested.n = 2;
    expect(j.lookup("a", "f")).toEqual({ kind: "done", envelope: env(true, { text: "é…", nested: { n: 1 } }) });
    expect(j.size.bytes).toBe(Buffer.byteLength(JSON.stringify(env(true, { text: "é…", nested: { n: 1 } }))));
  });

  it("issue 15 (memory): 5000 requests keep at most maxIds ids and maxBytes of answers; ids in flight are never dropped", () => {
    const j = new RequestJournal({ maxIds: 100, maxBytes: 50_000 });
    const slow = j.begin("slow", "click", "f");
    for (let i = 0; i < 5000; i++) {
      expect(j.lookup(i, "g")).toEqual({ kind: "new" });
      j.begin(i, "get-app-state", "g")(env(true, { text: "x".repeat(1000) }));
      expect(j.size.ids).toBeLessThanOrEqual(101);
      expect(j.size.bytes).toBeLessThanOrEqual(50_000);
    }
    expect(j.lookup("slow", "f").kind).toBe("inflight");
    expect(j.lookup(4999, "g").kind).toBe("done");
    expect(j.lookup(4899, "g")).toEqual({ kind: "new" });
    slow(env(true));
    expect(j.size.ids).toBe(100);
  });

  it("issue 15 (memory): the default byte cap fits serve's memory budget (under 120 MB resident)", () => {
    expect(DEFAULT_REPLAY_MAX_BYTES).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(new RequestJournal().maxBytes).toBe(DEFAULT_REPLAY_MAX_BYTES);
  });
});
