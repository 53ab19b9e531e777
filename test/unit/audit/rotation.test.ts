// Audit log rotation at a size cap: renames only, N old files kept, and no
// line lost to rotation, even with several processes appending at once.
import { spawn } from "node:child_process";
import { existsSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendAudit, auditFiles, auditLimits, auditPath, DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_MAX_BYTES, readAudit, type AuditRecordInput } from "../../../src/audit/log.ts";
import { tempDir } from "../policy/helpers.ts";

const t = tempDir("deckhand-audit-rot-");
afterAll(t.cleanup);
let n = 0;
const freshEnv = (extra: Record<string, string> = {}) => ({ DECKHAND_STATE_DIR: join(t.dir, `state-${n++}`), ...extra });

const record = (pid: number, session = "s_rot"): AuditRecordInput => ({
  event: "action",
  session,
  command: "click",
  app_id: "org.gnome.TextEditor",
  pid,
  window_id: 77,
  element_index: 12,
  decision: "allow",
  decision_source: "default",
  rule: "default:allow",
  outcome: "OK",
  delivery: "submitted",
});

/** Every line of every file of the log, oldest file first. */
function allLines(env: NodeJS.ProcessEnv): string[] {
  return auditFiles(env).flatMap((p) => (existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : []));
}

describe("audit log rotation", () => {
  it("defaults: 10 MiB, 3 old files; the operator's environment and options override", () => {
    expect(auditLimits({})).toEqual({ maxBytes: DEFAULT_AUDIT_MAX_BYTES, keep: DEFAULT_AUDIT_KEEP });
    expect(DEFAULT_AUDIT_MAX_BYTES).toBe(10 * 1024 * 1024);
    expect(DEFAULT_AUDIT_KEEP).toBe(3);
    expect(auditLimits({ DECKHAND_AUDIT_MAX_BYTES: "65536", DECKHAND_AUDIT_KEEP: "5" })).toEqual({ maxBytes: 65536, keep: 5 });
    expect(auditLimits({ DECKHAND_AUDIT_MAX_BYTES: "lots" })).toEqual({ maxBytes: DEFAULT_AUDIT_MAX_BYTES, keep: 3 });
    // A cap below one record's size limit is raised to it.
    expect(auditLimits({}, { maxBytes: 10 }).maxBytes).toBe(4096);
  });

  it("writing past the cap rotates by rename; every line is in some file, in order, each file within the cap", () => {
    const env = freshEnv();
    const maxBytes = 8192;
    const total = 60; // about 2.5 caps: current + .1 + .2
    for (let i = 0; i < total; i++) appendAudit(record(i), env, { maxBytes });
    const files = auditFiles(env).filter(existsSync);
    expect(files.length).toBeGreaterThanOrEqual(3);
    for (const f of files) {
      expect(statSync(f).size).toBeLessThanOrEqual(maxBytes);
      expect(statSync(f).mode & 0o777).toBe(0o600);
    }
    const lines = allLines(env);
    expect(lines).toHaveLength(total);
    expect(readAudit(env).map((r) => r.pid)).toEqual(Array.from({ length: total }, (_, i) => i));
    expect(existsSync(`${auditPath(env)}.lock`)).toBe(false);
  });

  it("keeps N old files: the oldest beyond N is dropped, the newest lines are all there", () => {
    const env = freshEnv({ DECKHAND_AUDIT_MAX_BYTES: "4096", DECKHAND_AUDIT_KEEP: "2" });
    const total = 100; // far more than 3 files of 4 KiB hold
    for (let i = 0; i < total; i++) appendAudit(record(i), env);
    const path = auditPath(env);
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(existsSync(`${path}.2`)).toBe(true);
    expect(existsSync(`${path}.3`)).toBe(false);
    const pids = readAudit(env).map((r) => r.pid!);
    // A contiguous run ending with the last record written.
    expect(pids.at(-1)).toBe(total - 1);
    expect(pids).toEqual(Array.from({ length: pids.length }, (_, i) => total - pids.length + i));
  });

  it.runIf(process.platform !== "win32")("rotation renames links, never writes through them", () => {
    const env = freshEnv();
    const path = auditPath(env);
    const victim = join(t.dir, `victim-${n}.txt`);
    writeFileSync(victim, "original\n");
    appendAudit(record(0), env);
    symlinkSync(victim, `${path}.1`);
    for (let i = 1; i < 40; i++) appendAudit(record(i), env, { maxBytes: 4096 });
    expect(readFileSync(victim, "utf8")).toBe("original\n");
    // The planted link moved down the chain as a link.
    expect(lstatSync(`${path}.2`).isSymbolicLink() || lstatSync(`${path}.3`).isSymbolicLink() || !existsSync(`${path}.3`)).toBe(true);
  });

  it("several processes appending past the cap at once: no line is lost or torn", async () => {
    const env = freshEnv({ DECKHAND_AUDIT_MAX_BYTES: "16384" });
    const writers = 3;
    const perWriter = 80; // 240 lines of ~330 bytes: about 5 rotations at 16 KiB; keep 20 so that no old file is dropped
    const script = join(t.dir, `writer-${n}.ts`);
    const log = resolve(__dirname, "../../../src/audit/log.ts");
    writeFileSync(
      script,
      `import { appendAudit } from ${JSON.stringify(log)};
const [w, count] = process.argv.slice(2).map(Number);
const base = ${JSON.stringify(record(0))};
for (let i = 0; i < count; i++) appendAudit({ ...base, pid: w * 100000 + i, session: "w" + w }, process.env, { keep: 20 });
`,
    );
    const bun = resolve(__dirname, "../../../node_modules/.bin/bun");
    await Promise.all(
      Array.from(
        { length: writers },
        (_, w) =>
          new Promise<void>((done, fail) => {
            const c = spawn(bun, [script, String(w), String(perWriter)], { env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
            let err = "";
            c.stderr.on("data", (d) => (err += d));
            c.on("close", (code) => (code === 0 ? done() : fail(new Error(`writer ${w} exited ${code}: ${err}`))));
          }),
      ),
    );
    const lines = auditFiles(env, { keep: 20 }).flatMap((p) => (existsSync(p) ? readFileSync(p, "utf8").split("\n").filter(Boolean) : []));
    expect(lines).toHaveLength(writers * perWriter);
    const recs = lines.map((l) => JSON.parse(l) as { pid: number; session: string });
    expect(new Set(recs.map((r) => r.pid)).size).toBe(writers * perWriter);
    // Each writer's own lines stay in its order across the files.
    for (let w = 0; w < writers; w++) {
      const mine = recs.filter((r) => r.session === `w${w}`).map((r) => r.pid - w * 100000);
      expect(mine).toEqual(Array.from({ length: perWriter }, (_, i) => i));
    }
    expect(existsSync(join(env.DECKHAND_STATE_DIR, "audit.jsonl.1"))).toBe(true);
  }, 30_000);
});
