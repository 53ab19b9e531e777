import { describe, expect, it } from "vitest";
import { assertForeground, foregroundDecision, foregroundGranted } from "../../../src/policy/foreground.ts";
import { EMPTY_POLICY, failClosedLayer } from "../../../src/policy/load.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { policyOf } from "./helpers.ts";

describe("foreground grant", () => {
  it("is off by default", () => {
    expect(foregroundGranted({ flag: false, sessionGrant: false, policy: EMPTY_POLICY })).toBe(false);
    expect(() => assertForeground({ flag: false, sessionGrant: false, policy: EMPTY_POLICY })).toThrow(
      expect.objectContaining({ code: "FOREGROUND_REQUIRED" }),
    );
  });

  it("the operator's flag, a session option or a policy grants it", () => {
    expect(foregroundDecision({ flag: true, sessionGrant: false, policy: EMPTY_POLICY })).toEqual({ granted: true, source: "flag" });
    expect(foregroundDecision({ flag: false, sessionGrant: true, policy: EMPTY_POLICY })).toEqual({ granted: true, source: "session" });
    expect(foregroundDecision({ flag: false, sessionGrant: false, policy: policyOf(null, `foreground = "allow"`) })).toEqual({ granted: true, source: "user" });
  });

  it("a policy's foreground = deny beats every grant; the admin's beats the user's allow", () => {
    const p = policyOf(`foreground = "deny"`, `foreground = "allow"`);
    expect(foregroundDecision({ flag: true, sessionGrant: true, policy: p })).toEqual({ granted: false, source: "admin" });
    try {
      assertForeground({ flag: true, sessionGrant: true, policy: p });
      expect.unreachable();
    } catch (e) {
      expect((e as DeckhandError).code).toBe("FOREGROUND_REQUIRED");
      expect((e as DeckhandError).details).toEqual({ source: "admin" });
    }
    const broken = { admin: failClosedLayer("/etc/deckhand/policy.toml", "bad", 1), user: null };
    expect(foregroundGranted({ flag: true, sessionGrant: false, policy: broken })).toBe(false);
  });

  it("truthy non-boolean values from a payload do not grant", () => {
    const payload = JSON.parse('{"flag": "true", "sessionGrant": 1}');
    expect(foregroundGranted({ ...payload, policy: EMPTY_POLICY })).toBe(false);
  });
});
