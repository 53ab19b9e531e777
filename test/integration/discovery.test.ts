// Helper discovery order: --helper, DECKHAND_HELPER, beside the executable, repo build.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoverHelper, HELPER_NAMES } from "../../src/helpers/discovery.ts";
import { DeckhandError } from "../../src/protocol/errors.ts";
import { cleanupSandboxes, FAKE, sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

function refused(fn: () => unknown): DeckhandError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DeckhandError);
    return err as DeckhandError;
  }
  throw new Error("expected a DeckhandError");
}

describe("discoverHelper", () => {
  it("--helper wins over DECKHAND_HELPER", () => {
    const sb = sandbox();
    const other = join(sb.dir, "other");
    writeFileSync(other, "#!/bin/sh\n");
    chmodSync(other, 0o755);
    expect(discoverHelper({ flag: FAKE, env: { DECKHAND_HELPER: other } })).toEqual({ path: FAKE, source: "flag" });
    expect(discoverHelper({ env: { DECKHAND_HELPER: other } })).toEqual({ path: other, source: "env" });
  });

  it("an explicit path that is missing, not executable, or a directory -> HELPER_UNAVAILABLE naming it", () => {
    const sb = sandbox();
    const plain = join(sb.dir, "plain");
    writeFileSync(plain, "x");
    const dir = join(sb.dir, "a-dir");
    mkdirSync(dir);
    for (const p of [join(sb.dir, "missing"), plain, dir]) {
      const e = refused(() => discoverHelper({ flag: p, env: {} }));
      expect(e.code).toBe("HELPER_UNAVAILABLE");
      expect(e.details).toMatchObject({ source: "flag", path: p });
    }
  });

  it("a compiled deckhand finds the helper beside itself", () => {
    const sb = sandbox();
    const exe = join(sb.dir, "deckhand");
    const helper = join(sb.dir, HELPER_NAMES.linux!);
    writeFileSync(helper, "#!/bin/sh\n");
    chmodSync(helper, 0o755);
    expect(discoverHelper({ env: {}, platform: "linux", execPath: exe })).toEqual({ path: helper, source: "beside-executable" });
  });

  it("no helper anywhere -> HELPER_UNAVAILABLE listing where it looked; unknown platform -> UNSUPPORTED_PLATFORM", () => {
    const sb = sandbox();
    let found;
    try {
      found = discoverHelper({ env: {}, platform: "linux", execPath: join(sb.dir, "deckhand") });
    } catch (err) {
      expect((err as DeckhandError).code).toBe("HELPER_UNAVAILABLE");
      expect(String((err as DeckhandError).details.searched)).toContain(sb.dir);
    }
    // With a helper built in this checkout, the repo build is the last resort.
    if (found) expect(found.source).toBe("repo-build");
    expect(refused(() => discoverHelper({ env: {}, platform: "aix" })).code).toBe("UNSUPPORTED_PLATFORM");
  });
});
