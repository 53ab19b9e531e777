// serve's input limits (issue 9, A5), through the real serve loop: a request
// line over the cap gets a stable error and is discarded without stopping the
// session; requests beyond the in-flight cap are refused at once.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { cleanupSandboxes, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});
afterAll(cleanupSandboxes);

function serve(sb: Sandbox, args: string[] = [], opts: { mode?: string } = {}): ServeProcess {
  const p = new ServeProcess(sb, args, opts);
  procs.push(p);
  return p;
}

/** The answer with this id, without sending anything. */
async function answer(s: ServeProcess, id: string | number, timeoutMs = 15000): Promise<any> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const hit = s.lines.find((l) => l.id === id);
    if (hit) return hit;
    if (Date.now() > until) throw new Error(`serve: no answer for ${id}; lines: ${JSON.stringify(s.lines).slice(0, 2000)}; stderr: ${s.stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Write a large line in pieces, as a client streaming it would. */
function writeBig(s: ServeProcess, head: string, padBytes: number, tail: string): void {
  s.child.stdin!.write(head);
  const piece = "x".repeat(256 * 1024);
  for (let left = padBytes; left > 0; left -= piece.length) s.child.stdin!.write(left >= piece.length ? piece : piece.slice(0, left));
  s.child.stdin!.write(tail);
}

describe("serve line cap", () => {
  it("default 8 MiB: an oversized line -> INVALID_ARGUMENTS line-too-long with the limit; the next lines are served", async () => {
    const sb = sandbox();
    const s = serve(sb);
    // The next request rides in the same write as the oversized line's end.
    writeBig(s, '{"id":"big","command":"list-apps","args":{"pad":"', 8 * 1024 * 1024 + 10, '"}}\n{"id":"after","command":"list-apps"}\n');
    const big = await answer(s, "big");
    const after = await answer(s, "after");
    expect(big).toMatchObject({
      id: "big",
      ok: false,
      command: "deckhand",
      error: { code: "INVALID_ARGUMENTS", details: { reason: "line-too-long", limit: 8 * 1024 * 1024 } },
    });
    expect(big.error.message).toMatch(/longer than 8388608 bytes/);
    expect(after).toMatchObject({ id: "after", ok: true, command: "list-apps" });
    // The oversized request never ran.
    expect(sb.requests().filter((r) => r.op === "list_apps")).toHaveLength(1);
  }, 30_000);

  it("--max-line-bytes: several oversized lines, each answered once; id null when id is not the first key", async () => {
    const sb = sandbox();
    const s = serve(sb, ["--max-line-bytes", "4096"]);
    writeBig(s, '{"id":1,"command":"list-apps","args":{"p":"', 100_000, '"}}\n');
    writeBig(s, '{"command":"list-apps","id":2,"args":{"p":"', 5000, '"}}\n');
    s.send({ id: 3, command: "list-apps", args: { p: "y".repeat(3000) } }, { id: 4, command: "list-apps" });
    const lines = await s.waitLines(4);
    expect(lines.filter((l) => l.error?.details?.reason === "line-too-long").map((l) => l.id).sort()).toEqual([1, null]);
    // A line under the cap is parsed as usual (here: an unknown field).
    expect(lines.find((l) => l.id === 3)).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
    expect(lines.find((l) => l.id === 3).error.details.reason).toBeUndefined();
    expect(lines.find((l) => l.id === 4)).toMatchObject({ ok: true });
    for (const l of lines) if (!l.ok) expect(l.error.details.limit === undefined || l.error.details.limit === 4096).toBe(true);
    expect(await s.close()).toEqual({ code: 0, signal: null });
  });

  it("a bad --max-line-bytes is refused at start", async () => {
    const sb = sandbox();
    const s = serve(sb, ["--max-line-bytes", "12"]);
    expect((await s.exited).code).toBe(1);
    expect(s.lines[0]).toMatchObject({ id: null, ok: false, error: { code: "INVALID_ARGUMENTS", details: { flag: "--max-line-bytes" } } });
  });
});

describe("serve in-flight cap", () => {
  it("requests beyond --max-inflight are refused at once with their id; cancel still gets through; capacity returns", async () => {
    const sb = sandbox();
    const s = serve(sb, ["--max-inflight", "2"], { mode: "slow-on:list_apps:1500" });
    // Warm the helper up so that the slow requests are the only thing in flight.
    expect((await s.request({ id: "warm", command: "capabilities" })).ok).toBe(true);
    s.send({ id: "a", command: "list-apps" }, { id: "b", command: "list-apps" }, { id: "c", command: "list-apps" }, { id: "d", command: "cancel", args: { id: "nobody" } });
    const c = await answer(s, "c");
    expect(c).toMatchObject({
      id: "c",
      ok: false,
      command: "list-apps",
      error: { code: "INVALID_ARGUMENTS", details: { reason: "too-many-in-flight", limit: 2, delivery: "not_dispatched" } },
    });
    expect(c.error.remediation).toMatch(/at most 2/);
    const d = await answer(s, "d");
    expect(d).toMatchObject({ ok: true, command: "cancel", result: { cancelled: false } });
    const a = await answer(s, "a");
    const b = await answer(s, "b");
    expect([a.ok, b.ok]).toEqual([true, true]);
    // "c" was answered at once, before the slow ones, and never reached the helper.
    const at = (id: string) => s.lines.findIndex((l) => l.id === id);
    expect(at("c")).toBeLessThan(Math.min(at("a"), at("b")));
    expect(sb.requests().filter((r) => r.op === "list_apps")).toHaveLength(2);
    const e = await s.request({ id: "e", command: "list-apps" });
    expect(e.ok).toBe(true);
  }, 20_000);
});
