// The confirm hook run by the shipped artifact (dist/deckhand, `bun build
// --compile`): the hook's child handling (execa, loaded on first use) must
// work inside the single binary as it does from source. Allow, refuse with a
// reason, and a timeout that kills the hook's whole process group.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, FAKE, isAlive, REPO, sandbox, waitFor, type Sandbox } from "./harness.ts";

const BIN = process.env.DECKHAND_BIN ?? join(REPO, "dist", "deckhand");
afterAll(cleanupSandboxes);

function run(sb: Sandbox, args: string[]) {
  const r = spawnSync(BIN, [...args, "--json", "--helper", FAKE], { env: sb.env(), encoding: "utf8", timeout: 20_000 });
  return { code: r.status, stderr: r.stderr, envelope: JSON.parse(r.stdout) };
}

/** get-app-state, then the argv of a click on the fake's Delete button (sensitive: its name says delete). */
function clickDelete(sb: Sandbox): string[] {
  const state = run(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--format", "full"]);
  expect(state.envelope.ok, state.stderr).toBe(true);
  const index = state.envelope.result.snapshot.elements.find((e: { title: string }) => e.title === "Delete").index;
  return ["click", "--app", "fixture-app", "--element-index", String(index)];
}

function script(sb: Sandbox, name: string, body: string): string {
  const path = join(sb.dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const clicks = (sb: Sandbox) => sb.ops().filter((o) => o === "element_action").length;

describe("compiled dist/deckhand: the confirm hook", () => {
  beforeAll(() => {
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: scripts/build.sh builds it (scripts/test.sh runs it first)`);
  });

  it("allows: the description arrives on stdin, argv is passed without a shell", () => {
    const sb = sandbox();
    const out = join(sb.dir, "asked.json");
    const hook = script(sb, "allow.sh", `cat > "$1"\nprintf '%s\\n' "$2" > "$1.args"\nexit 0`);
    const r = run(sb, [...clickDelete(sb), "--confirm-cmd", `${hook} ${out} '$HOME; x'`]);
    expect(r.envelope.ok, JSON.stringify(r.envelope)).toBe(true);
    expect(clicks(sb)).toBe(1);
    expect(JSON.parse(readFileSync(out, "utf8"))).toMatchObject({ version: 1, command: "click", action: "click", element: { name: "Delete" } });
    expect(readFileSync(`${out}.args`, "utf8")).toBe("$HOME; x\n");
  });

  it("refuses: CONFIRM_DENIED with the exit code and the hook's first stdout line; nothing is sent", () => {
    const sb = sandbox();
    const hook = script(sb, "deny.sh", "cat >/dev/null\necho 'operator said no'\necho more\nexit 3");
    const r = run(sb, [...clickDelete(sb), "--confirm-cmd", hook]);
    expect(r.code).toBe(1);
    expect(r.envelope.error).toMatchObject({ code: "CONFIRM_DENIED", details: { reason: "exit", exit_code: 3, hook_message: "operator said no" } });
    expect(clicks(sb)).toBe(0);
  });

  it("a hook past its timeout is denied and its process group killed", () => {
    const sb = sandbox();
    const pids = join(sb.dir, "hang.pids");
    const hook = script(sb, "hang.sh", `sleep 300 &\necho "$$ $!" > '${pids}'\nwait`);
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, `[confirm]\ncommand = ["${hook}"]\ntimeout_ms = 500\n`);
    const started = Date.now();
    const r = run(sb, [...clickDelete(sb), "--policy", policy]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.envelope.error, JSON.stringify(r.envelope)).toMatchObject({ code: "CONFIRM_DENIED", details: { reason: "timeout", timeout_ms: 500 } });
    expect(clicks(sb)).toBe(0);
    const [shell, sleeper] = readFileSync(pids, "utf8").trim().split(" ").map(Number);
    return waitFor(() => !isAlive(shell!) && !isAlive(sleeper!), "the hook and its child to be killed");
  });
});
