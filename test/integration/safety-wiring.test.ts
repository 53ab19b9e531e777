// Safety rules as the engine applies them (the rules themselves are unit
// tested in test/unit/policy): blocked URLs for browsers, and the kill switch
// that pauses deckhand when the helper sees real user input.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, sandbox, ServeProcess, waitFor } from "./harness.ts";

afterAll(cleanupSandboxes);
const actions = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");

describe("blocked URLs", () => {
  it("an action in a browser whose page URL matches a blocked glob is BLOCKED_URL; nothing is dispatched", async () => {
    const sb = sandbox();
    // Observed on an allowed page (observing a blocked one is refused: see below),
    // then the page changes to a blocked one before the click.
    sb.control({ browser: true, url: "https://docs.example.org/start?session=SECRET" });
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, 'blocked_urls = ["*://*.blocked.example/*"]\n');
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy]), "get-app-state");
    // The URL's query (a session token) never reaches the snapshot.
    expect(JSON.stringify(state)).not.toContain("SECRET");
    const reload = state.snapshot.elements.find((e: any) => e.title === "Reload");
    sb.control({ browser: true });
    const r = await cli(sb, ["click", "--app", "firefox-esr", "--element-index", String(reload.index), "--policy", policy]);
    const e = expectError(r, "click", "BLOCKED_URL");
    expect(JSON.stringify(e)).not.toContain("blocked.example/account");
    expect(actions(sb.ops())).toEqual([]);
    const audit = readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8");
    expect(audit).not.toContain("blocked.example");
  });

  it("a page that matches no glob is acted on", async () => {
    const sb = sandbox();
    sb.control({ browser: true, url: "https://docs.example.org/start" });
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, 'blocked_urls = ["*://*.blocked.example/*"]\n');
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy]), "get-app-state");
    const reload = state.snapshot.elements.find((e: any) => e.title === "Reload");
    expectOk(await cli(sb, ["click", "--app", "firefox-esr", "--element-index", String(reload.index), "--policy", policy]), "click");
    expect(actions(sb.ops())).toEqual(["element_action"]);
  });
});

describe("kill switch: pause_on_user_input", () => {
  it("real user input seen by the helper pauses a serve session and every other process; read-only commands still work", async () => {
    const sb = sandbox();
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, "pause_on_user_input = true\n");
    const p = new ServeProcess(sb, ["--policy", policy], { mode: "emit-user-input" });
    try {
      const st = await p.request({ id: 1, command: "get-app-state", args: { app: "fixture-app" } });
      expect(st.ok).toBe(true);
      expect(sb.ops()).toContain("watch_user_input");
      await waitFor(() => existsSync(join(sb.stateDir, "paused.json")), "the pause flag");
      const r = await p.request({ id: 2, command: "click", args: { app: "fixture-app", elementIndex: 1 } });
      expect(r.error.code).toBe("PAUSED");
      expect(actions(sb.ops())).toEqual([]);
      // Another process sees the same pause; reading still works.
      expectError(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]), "click", "PAUSED");
      expect((await p.request({ id: 3, command: "list-apps", args: {} })).ok).toBe(true);
      expectOk(await cli(sb, ["resume"]), "resume");
      expect((await p.request({ id: 4, command: "click", args: { app: "fixture-app", elementIndex: 1 } })).ok).toBe(true);
    } finally {
      await p.close();
    }
  });

  it("a running program stops at its next step when user input pauses deckhand", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app"]), "get-app-state");
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, "pause_on_user_input = true\n");
    const p = new ServeProcess(sb, ["--policy", policy], { mode: "emit-user-input" });
    try {
      const program = { app: "fixture-app", steps: [{ action: "wait", ms: 400 }, { action: "click", elementIndex: 1 }, { action: "click", elementIndex: 6 }], observe: false };
      const r = await p.request({ id: 1, command: "run", args: { program } });
      expect(r).toMatchObject({ ok: false, error: { code: "PAUSED", details: { step: 1, delivery: "not_dispatched", stepsCompleted: 1 } } });
      const steps = r.error.details.receipts;
      expect(steps.map((s: any) => s.status)).toEqual(["completed", "failed", "unattempted"]);
      expect(steps[1].error.code).toBe("PAUSED");
      expect(actions(sb.ops())).toEqual([]);
    } finally {
      await p.close();
    }
  });
});
