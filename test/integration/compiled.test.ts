// The shipped artifact: `bun build --compile` output (dist/deckhand) run as
// an agent framework would, against the scripted fake helper.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, FAKE, REPO, sandbox } from "./harness.ts";

const BIN = join(REPO, "dist", "deckhand");
afterAll(cleanupSandboxes);

function run(args: string[], env: NodeJS.ProcessEnv, input = "") {
  const r = spawnSync(BIN, args, { env, input, encoding: "utf8", timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("compiled dist/deckhand", () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: scripts/build.sh builds it (scripts/test.sh runs it first)`);
  });

  it("--version answers", () => {
    const sb = sandbox();
    const r = run(["--version"], sb.env());
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("capabilities, get-app-state and an element click against the fake helper", () => {
    const sb = sandbox();
    const caps = run(["capabilities", "--json", "--helper", FAKE], sb.env());
    expect(caps.code, caps.stderr).toBe(0);
    const env = JSON.parse(caps.stdout);
    expect(env).toMatchObject({ schemaVersion: 1, ok: true, command: "capabilities" });
    expect(env.result.helper).toMatchObject({ name: "fake-helper", source: "flag" });
    const state = JSON.parse(run(["get-app-state", "--app", "fixture-app", "--json", "--helper", FAKE], sb.env()).stdout);
    expect(state.ok).toBe(true);
    const click = run(["click", "--app", "fixture-app", "--element-index", "1", "--json", "--helper", FAKE], sb.env());
    expect(click.code).toBe(0);
    expect(JSON.parse(click.stdout).result).toMatchObject({ delivery: "submitted", route: "accessibility" });
    expect(sb.ops().filter((o) => o === "element_action")).toHaveLength(1);
  });

  it("serve: NDJSON in, envelopes with ids out, clean exit on EOF", () => {
    const sb = sandbox();
    const lines = [
      { id: 1, command: "list-apps", args: {} },
      { id: 2, command: "no-such-command", args: {} },
    ].map((l) => JSON.stringify(l)).join("\n");
    const r = run(["serve", "--helper", FAKE], sb.env(), lines + "\n");
    expect(r.code).toBe(0);
    const out = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(out.map((o) => o.id).sort()).toEqual([1, 2]);
    expect(out.find((o) => o.id === 1).ok).toBe(true);
    expect(out.find((o) => o.id === 2).error.code).toBe("INVALID_ARGUMENTS");
  });

  it("a failure is one envelope on stdout and exit 1", () => {
    const sb = sandbox();
    const r = run(["click", "--app", "fixture-app", "--element-index", "1", "--json", "--helper", join(sb.dir, "missing")], sb.env());
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout).error.code).toBe("HELPER_UNAVAILABLE");
  });
});
