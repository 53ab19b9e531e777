import { chmodSync, lstatSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appendAudit, auditPath, readAudit, validateAuditRecord, type AuditRecordInput } from "../../../src/audit/log.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { tempDir } from "../policy/helpers.ts";

const t = tempDir("deckhand-audit-");
afterAll(t.cleanup);
let n = 0;
const freshEnv = () => ({ DECKHAND_STATE_DIR: join(t.dir, `state-${n++}`) });

const record: AuditRecordInput = {
  event: "action",
  session: "s_abc123",
  command: "click",
  app_id: "org.gnome.TextEditor",
  pid: 4242,
  window_id: 77,
  element_index: 12,
  decision: "allow",
  decision_source: "default",
  rule: "default:allow",
  outcome: "OK",
  delivery: "submitted",
};

function rejected(r: unknown): DeckhandError {
  try {
    validateAuditRecord(r as AuditRecordInput);
  } catch (e) {
    expect(e).toBeInstanceOf(DeckhandError);
    expect((e as DeckhandError).code).toBe("INTERNAL");
    return e as DeckhandError;
  }
  throw new Error("expected the record to be rejected");
}

describe("audit records", () => {
  it("appends one JSON line per record, every field present", () => {
    const env = freshEnv();
    appendAudit(record, env);
    appendAudit({ event: "decision", command: "policy-check", decision: "deny", decision_source: "builtin", rule: "builtin:terminal:xterm", outcome: "POLICY_DENIED" }, env);
    const lines = readFileSync(auditPath(env), "utf8").trim().split("\n");
    expect(lines).toHaveLength(2);
    const [a, b] = readAudit(env);
    expect(a).toMatchObject(record);
    expect(Date.parse(a!.time)).toBeGreaterThan(0);
    expect(b).toMatchObject({ session: null, app_id: null, pid: null, window_id: null, element_index: null, delivery: null, outcome: "POLICY_DENIED" });
    expect(auditPath(env)).toBe(join(env.DECKHAND_STATE_DIR, "audit.jsonl"));
  });

  it("uses XDG_STATE_HOME/deckhand without DECKHAND_STATE_DIR", () => {
    const env = { XDG_STATE_HOME: join(t.dir, "xdg") };
    appendAudit(record, env);
    expect(auditPath(env)).toBe(join(t.dir, "xdg", "deckhand", "audit.jsonl"));
    expect(readAudit(env)).toHaveLength(1);
  });

  it.each(["text", "value", "clipboard", "url", "title", "window_title", "typed", "password"])("a record with a %j field is rejected, naming the field but not the value", (field) => {
    const e = rejected({ ...record, [field]: "hunter2" });
    expect(e.message).toContain(field);
    expect(JSON.stringify({ m: e.message, d: e.details })).not.toContain("hunter2");
  });

  it("identifier fields cannot smuggle a URL, a path or free text", () => {
    rejected({ ...record, app_id: "https://bank.example/?token=x" });
    rejected({ ...record, app_id: "/home/u/secret.txt" });
    rejected({ ...record, app_id: "line\nbreak" });
    rejected({ ...record, rule: "*://*.bank.example/*" });
    rejected({ ...record, rule: "user typed hunter2 here" });
    rejected({ ...record, session: "s 1" });
    rejected({ ...record, command: "Click Here" });
    rejected({ ...record, outcome: "NOT_A_CODE" });
    rejected({ ...record, pid: -1 });
    rejected({ ...record, time: "yesterday" });
  });

  it("nothing is written for a rejected record", () => {
    const env = freshEnv();
    expect(() => appendAudit({ ...record, text: "hunter2" } as AuditRecordInput, env)).toThrow(DeckhandError);
    expect(readAudit(env)).toEqual([]);
  });

  it("the file is created with mode 0600, and a looser existing file is tightened", () => {
    const env = freshEnv();
    appendAudit(record, env);
    expect(statSync(auditPath(env)).mode & 0o777).toBe(0o600);
    chmodSync(auditPath(env), 0o644);
    appendAudit(record, env);
    expect(statSync(auditPath(env)).mode & 0o777).toBe(0o600);
  });

  it.runIf(process.platform !== "win32")("a symlinked audit path is refused (O_NOFOLLOW) and its target untouched", () => {
    const env = freshEnv();
    const target = join(t.dir, "victim.txt");
    writeFileSync(target, "original\n");
    auditPath(env); // creates the state dir
    symlinkSync(target, auditPath(env));
    try {
      appendAudit(record, env);
      expect.unreachable();
    } catch (e) {
      expect((e as DeckhandError).code).toBe("INTERNAL");
      expect((e as DeckhandError).details).toMatchObject({ reason: "audit_path_is_symlink" });
    }
    expect(readFileSync(target, "utf8")).toBe("original\n");
    expect(lstatSync(auditPath(env)).isSymbolicLink()).toBe(true);
    // A dangling symlink must not be created through either.
    const env2 = freshEnv();
    auditPath(env2);
    symlinkSync(join(t.dir, "would-be-created"), auditPath(env2));
    expect(() => appendAudit(record, env2)).toThrow(expect.objectContaining({ details: expect.objectContaining({ reason: "audit_path_is_symlink" }) }));
  });

  it("concurrent appends never interleave within a line", async () => {
    const env = freshEnv();
    await Promise.all(Array.from({ length: 200 }, (_, i) => Promise.resolve().then(() => appendAudit({ ...record, pid: i }, env))));
    const recs = readAudit(env);
    expect(recs).toHaveLength(200);
    expect(new Set(recs.map((r) => r.pid)).size).toBe(200);
  });
});
