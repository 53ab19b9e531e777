// A one-shot CLI call starts the default helper before deckhand's modules
// load (src/helpers/prespawn.ts) and the supervisor adopts it: one helper
// process per call, never a second one; none for commands that need no
// helper; never a helper the caller named with --helper; and a call that
// fails before it needs the helper still exits at once (the unadopted helper
// would otherwise hold the process open).
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startsDefaultHelper } from "../../src/helpers/prespawn.ts";
import { cleanupSandboxes, cli, expectError, expectOk, recordingHelper, sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

/** How many helper processes the recording helper saw start (one argv block each: "$0" then its args, none here). */
function starts(argvLog: string): number {
  return existsSync(argvLog) ? readFileSync(argvLog, "utf8").split("\n").filter(Boolean).length : 0;
}

describe("startsDefaultHelper (which argv start the helper early)", () => {
  it("commands that use the helper do; help, --helper, helperless commands and front doors do not", () => {
    expect(startsDefaultHelper(["list-apps", "--json"])).toBe(true);
    expect(startsDefaultHelper(["click", "--app", "x", "--element-index", "3"])).toBe(true);
    expect(startsDefaultHelper(["menu", "list", "--app", "x"])).toBe(true);
    for (const argv of [[], ["--version"], ["pause"], ["resume"], ["serve"], ["mcp"], ["desktop", "run"], ["helper", "check"], ["list-apps", "--help"], ["list-apps", "-h"], ["list-apps", "--helper", "/x"], ["list-apps", "--helper=/x"]]) {
      expect(startsDefaultHelper(argv), argv.join(" ")).toBe(false);
    }
  });
});

describe("the early helper through the real CLI (helper from DECKHAND_HELPER)", () => {
  it("list-apps: one helper process, adopted, answers", async () => {
    const sb = sandbox();
    const rec = recordingHelper(sb);
    const r = await cli(sb, ["list-apps"], { helper: null, env: { DECKHAND_HELPER: rec.path } });
    expectOk(r, "list-apps");
    expect(starts(rec.argvLog)).toBe(1);
    expect(sb.ops()).toEqual(["list_apps"]);
  });

  it("get-app-state: one helper process for the gate, the resolution and the tree", async () => {
    const sb = sandbox();
    const rec = recordingHelper(sb);
    const r = await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { helper: null, env: { DECKHAND_HELPER: rec.path } });
    expectOk(r, "get-app-state");
    expect(starts(rec.argvLog)).toBe(1);
    expect(sb.ops()).toContain("get_tree");
  });

  it("pause needs no helper: none is started", async () => {
    const sb = sandbox();
    const rec = recordingHelper(sb);
    expectOk(await cli(sb, ["pause"], { helper: null, env: { DECKHAND_HELPER: rec.path } }), "pause");
    expectOk(await cli(sb, ["resume"], { helper: null, env: { DECKHAND_HELPER: rec.path } }), "resume");
    expect(starts(rec.argvLog)).toBe(0);
  });

  it("a call refused at flag parsing exits at once, sends nothing, and its early helper goes", async () => {
    const sb = sandbox();
    const rec = recordingHelper(sb);
    const t0 = Date.now();
    const r = await cli(sb, ["click", "--app", "fixture-app", "--bogus", "1"], { helper: null, env: { DECKHAND_HELPER: rec.path }, timeoutMs: 10_000 });
    expectError(r, "click", "INVALID_ARGUMENTS");
    // Bounded by the harness's timeout: a helper holding the process open would hit it.
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(sb.ops()).toEqual([]);
  });

  it("--helper names the helper: the default one is not started early", async () => {
    const sb = sandbox();
    const byEnv = recordingHelper(sb);
    const named = join(sb.dir, "named-helper.sh");
    const namedLog = join(sb.dir, "named-argv.log");
    writeFileSync(named, `#!/bin/sh\nprintf '%s\\n' "$0" >> '${namedLog}'\nexec node '${join(__dirname, "..", "fixtures", "helpers", "fake-helper.mjs")}' "$@"\n`);
    chmodSync(named, 0o755);
    const r = await cli(sb, ["list-apps"], { helper: named, env: { DECKHAND_HELPER: byEnv.path } });
    expectOk(r, "list-apps");
    expect(starts(byEnv.argvLog)).toBe(0);
    expect(starts(namedLog)).toBe(1);
  });

  it("an early helper that dies at once is not adopted: the normal start reports why", async () => {
    const sb = sandbox();
    const dying = join(sb.dir, "dying-helper.sh");
    const log = join(sb.dir, "dying.log");
    writeFileSync(dying, `#!/bin/sh\nprintf 'x\\n' >> '${log}'\necho 'no display here' >&2\nexit 3\n`);
    chmodSync(dying, 0o755);
    const r = await cli(sb, ["list-apps"], { helper: null, env: { DECKHAND_HELPER: dying, DECKHAND_HELLO_TIMEOUT_MS: "8000" }, timeoutMs: 7000 });
    const e = expectError(r, "list-apps", "HELPER_UNAVAILABLE");
    expect(e.details).toMatchObject({ reason: "exited-before-hello" });
    expect(String(e.details.stderrTail)).toContain("no display here");
    // The early one and the supervisor's own.
    expect(starts(log)).toBe(2);
  });
});
