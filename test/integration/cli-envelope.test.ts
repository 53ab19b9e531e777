// The one-shot CLI contract: one envelope on stdout, exit 0/1, and the fixed
// failure order (the first failing stage wins).
import { afterAll, describe, expect, it } from "vitest";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { cleanupSandboxes, cli, expectEnvelope, expectError, expectNotDispatched, expectOk, FAKE, observeFixture, observedSandbox, sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const mutations = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");

describe("envelope", () => {
  it("success: exactly one object {schemaVersion, ok, command, result} and exit 0", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["list-apps"]);
    const result = expectOk(r, "list-apps");
    expect(r.envelope).toEqual({ schemaVersion: 1, ok: true, command: "list-apps", result: expect.any(Object) });
    expect(result.apps.map((a: { name: string }) => a.name)).toEqual(["fixture-app", "twin", "twin", "xterm"]);
  });

  it("click on an element: one envelope with delivery and route", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]);
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ action: "click", delivery: "submitted", route: "accessibility", elementIndex: 1, performed: true });
  });

  it("failure: {schemaVersion, ok:false, command, error{code,message,remediation,details}}, exit 1, nothing else on stdout", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1"]);
    const e = expectError(r, "click", "APP_NOT_FOUND");
    expect(e.details).toEqual({ app: "no-such-app", delivery: "not_dispatched" });
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
  });

  it("unknown command -> INVALID_ARGUMENTS with command deckhand", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["frobnicate", "--app", "x"]);
    const e = expectError(r, "deckhand", "INVALID_ARGUMENTS");
    expect(e.details.stage).toBe("routing");
    expect(sb.requests()).toEqual([]);
  });

  it("bad flag -> INVALID_ARGUMENTS naming the flag; the helper is never started", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--bogus", "1"]);
    const e = expectError(r, "click", "INVALID_ARGUMENTS");
    expect(e.details.flag).toBe("--bogus");
    expect(sb.requests()).toEqual([]);
  });

  it("a bad flag value -> INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "one"]);
    expectError(r, "click", "INVALID_ARGUMENTS");
    expect(sb.requests()).toEqual([]);
  });

  it("schema violation (negative index) -> INVALID_ARGUMENTS before any helper request", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "-3"]);
    const e = expectError(r, "click", "INVALID_ARGUMENTS");
    expect(e.details.field).toBe("elementIndex");
    expect(sb.requests()).toEqual([]);
  });

  it("without --json: readable text on stdout, the error on stderr, exit 1", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1"], { json: false });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("APP_NOT_FOUND");
  });
});

describe("failure order: the first failing stage wins", () => {
  const missingHelper = "/nonexistent/deckhand-helper";

  it("routing beats flag parsing", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["frobnicate", "--bogus"], { helper: missingHelper });
    expectError(r, "deckhand", "INVALID_ARGUMENTS");
  });

  it("bad flags + missing helper -> INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "nope", "--bogus"], { helper: missingHelper });
    expectError(r, "click", "INVALID_ARGUMENTS");
  });

  it("contradictory flags (element and point) + missing helper -> INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1", "--x", "5", "--y", "5"], { helper: missingHelper });
    expectError(r, "click", "INVALID_ARGUMENTS");
  });

  it("--value with --value-stdin + missing helper -> INVALID_ARGUMENTS, stdin not read", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "3", "--value", "x", "--value-stdin"], {
      helper: missingHelper,
      stdinOpen: true,
      timeoutMs: 8000,
    });
    expectError(r, "set-value", "INVALID_ARGUMENTS");
  });

  it("missing helper + unknown app -> HELPER_UNAVAILABLE", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1"], { helper: missingHelper });
    const e = expectError(r, "click", "HELPER_UNAVAILABLE");
    expect(e.details).toMatchObject({ source: "flag", path: missingHelper });
  });

  it("a helper path that is not executable -> HELPER_UNAVAILABLE", async () => {
    const sb = sandbox();
    const plain = join(sb.dir, "not-executable");
    writeFileSync(plain, "#!/bin/sh\n", { mode: 0o644 });
    const r = await cli(sb, ["list-apps"], { helper: plain });
    expect(expectError(r, "list-apps", "HELPER_UNAVAILABLE").details.path).toBe(plain);
  });

  it("dropped capability + --value-stdin -> ACTION_UNSUPPORTED and stdin is not read", async () => {
    const sb = sandbox();
    // stdin stays open: a command that read it would hang until the harness kills it.
    const r = await cli(sb, ["set-value", "--app", "no-such-app", "--element-index", "3", "--value-stdin"], {
      mode: "drop-cap:action.set_value",
      stdinOpen: true,
      timeoutMs: 8000,
    });
    const e = expectError(r, "set-value", "ACTION_UNSUPPORTED");
    expect(e.details.capability).toBe("action.set_value");
    expect(mutations(sb.ops())).toEqual([]);
    expect(sb.ops()).not.toContain("list_apps");
  });

  it("dropped action.click + element click with no snapshot and unknown app -> ACTION_UNSUPPORTED", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1"], { mode: "drop-cap:action.click" });
    expectError(r, "click", "ACTION_UNSUPPORTED");
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("dropped action.click + an element click on an observed app -> ACTION_UNSUPPORTED, no element_action", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"], { mode: "drop-cap:action.click" });
    const e = expectError(r, "click", "ACTION_UNSUPPORTED");
    expectNotDispatched(e);
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("unknown app + no snapshot -> APP_NOT_FOUND", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1"]);
    expectError(r, "click", "APP_NOT_FOUND");
  });

  it("unknown app + unknown window -> APP_NOT_FOUND", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--window-id", "12345", "--element-index", "1"]);
    expectError(r, "click", "APP_NOT_FOUND");
  });

  it("ambiguous app -> AMBIGUOUS_APP naming the candidates", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "twin", "--element-index", "1"]);
    const e = expectError(r, "click", "AMBIGUOUS_APP");
    expect(String(e.details.candidates)).toContain("pid:5001");
    expect(String(e.details.candidates)).toContain("pid:5002");
  });

  it("unknown window + no snapshot -> WINDOW_NOT_FOUND", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--window-id", "12345", "--element-index", "1"]);
    expectError(r, "click", "WINDOW_NOT_FOUND");
  });

  it("no snapshot + unknown element index -> SNAPSHOT_REQUIRED", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "999"]);
    const e = expectError(r, "click", "SNAPSHOT_REQUIRED");
    expectNotDispatched(e);
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("stale snapshot + unknown element index -> SNAPSHOT_STALE", async () => {
    const sb = sandbox();
    await observeFixture(sb, ["--no-screenshot"], { env: { DECKHAND_SNAPSHOT_TTL_MS: "1" } });
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "999"]);
    expect(expectError(r, "click", "SNAPSHOT_STALE").details.reason).toBe("expired");
  });

  it("unknown element index + changed element -> ELEMENT_INDEX_NOT_FOUND", async () => {
    const sb = await observedSandbox();
    sb.control({ replaced: ["0"] });
    const r = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "999"]);
    expectError(r, "click", "ELEMENT_INDEX_NOT_FOUND");
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("invalid combination of flags (element and point) -> INVALID_ARGUMENTS before app resolution", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["click", "--app", "no-such-app", "--element-index", "1", "--x", "5", "--y", "5"]);
    expectError(r, "click", "INVALID_ARGUMENTS");
    expect(sb.ops()).not.toContain("list_apps");
  });

  it("the same input gives the same envelope every time", async () => {
    const sb = sandbox();
    const a = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "999"]);
    const b = await cli(sb, ["click", "--app", "fixture-app", "--element-index", "999"]);
    expect(a.envelope).toEqual(b.envelope);
  });
});

describe("helper discovery", () => {
  it("DECKHAND_HELPER is used when --helper is absent", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["capabilities"], { helper: null, env: { DECKHAND_HELPER: FAKE } });
    const result = expectOk(r, "capabilities");
    expect(result.helper).toMatchObject({ name: "fake-helper", source: "env", path: FAKE });
  });

  it("capabilities lists dropped capabilities as unsupported actions", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["capabilities"], { mode: "drop-cap:action.set_value" });
    const result = expectOk(r, "capabilities");
    expect(result.unsupportedActions).toContain("set-value");
    expect(result.actions).toContain("click");
    expect(result.capabilities["action.set_value"].supported).toBe(false);
  });

  it("the envelope is the same shape for a helper failure", async () => {
    const sb = sandbox();
    const r = await cli(sb, ["list-apps"], { mode: "wrong-major" });
    expectEnvelope(r, "list-apps");
    expect(r.envelope.ok).toBe(false);
  });
});
