import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { auditPath } from "../../../src/audit/log.ts";
import { assertNotPaused, isPaused, pause, pausePath, resume } from "../../../src/audit/pause.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { tempDir } from "../policy/helpers.ts";

const t = tempDir("deckhand-pause-");
afterAll(t.cleanup);
let n = 0;
const freshEnv = () => ({ DECKHAND_STATE_DIR: join(t.dir, `state-${n++}`) });

describe("pause and resume", () => {
  it("starts unpaused", () => {
    const env = freshEnv();
    expect(isPaused(env)).toEqual({ paused: false });
    expect(() => assertNotPaused(env)).not.toThrow();
  });

  it("pause writes a 0600 flag beside the audit log; resume removes it", () => {
    const env = freshEnv();
    const s = pause(env, "operator stepped in");
    expect(s).toMatchObject({ paused: true, reason: "operator stepped in" });
    expect(pausePath(env)).toBe(join(env.DECKHAND_STATE_DIR, "paused.json"));
    expect(join(pausePath(env), "..")).toBe(join(auditPath(env), ".."));
    expect(statSync(pausePath(env)).mode & 0o777).toBe(0o600);
    expect(isPaused(env)).toEqual(s);
    expect(resume(env)).toEqual(s);
    expect(isPaused(env)).toEqual({ paused: false });
    expect(resume(env)).toEqual({ paused: false });
  });

  it("is shared across processes through the file (another env object, same dir)", () => {
    const env = freshEnv();
    pause(env, "x");
    expect(isPaused({ DECKHAND_STATE_DIR: env.DECKHAND_STATE_DIR }).paused).toBe(true);
  });

  it("pause is idempotent and keeps the first reason and time", () => {
    const env = freshEnv();
    const first = pause(env, "first");
    expect(pause(env, "second")).toEqual(first);
  });

  it("while paused, assertNotPaused throws PAUSED with since and reason", () => {
    const env = freshEnv();
    pause(env, "user input seen");
    try {
      assertNotPaused(env);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DeckhandError);
      expect((e as DeckhandError).code).toBe("PAUSED");
      expect((e as DeckhandError).details).toMatchObject({ reason: "user input seen" });
      expect(typeof (e as DeckhandError).details.since).toBe("string");
    }
  });

  it("a reason is cleaned of control characters and bounded", () => {
    const env = freshEnv();
    expect(pause(env, `a\nb\u0007c${"z".repeat(500)}`).reason).toMatch(/^a b cz{195}$/);
  });

  it("fails closed: a corrupt, odd or symlinked flag still means paused", () => {
    const a = freshEnv();
    writeFileSync(pausePath(a), "{not json");
    expect(isPaused(a)).toEqual({ paused: true });
    const b = freshEnv();
    mkdirSync(pausePath(b));
    expect(isPaused(b).paused).toBe(true);
    const c = freshEnv();
    symlinkSync(join(t.dir, "nowhere"), pausePath(c));
    expect(isPaused(c).paused).toBe(true);
    expect(() => assertNotPaused(c)).toThrow(expect.objectContaining({ code: "PAUSED" }));
  });

  it("pausing over a symlinked flag replaces the link, never writes its target", () => {
    const env = freshEnv();
    const victim = join(t.dir, "victim");
    writeFileSync(victim, "keep\n");
    pausePath(env);
    symlinkSync(victim, pausePath(env));
    // A symlink already reads as paused; resume removes the link itself.
    expect(resume(env).paused).toBe(true);
    pause(env, "fresh");
    expect(readFileSync(victim, "utf8")).toBe("keep\n");
    expect(isPaused(env).reason).toBe("fresh");
  });
});
