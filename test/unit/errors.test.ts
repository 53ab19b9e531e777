import { describe, expect, it } from "vitest";
import { DEFAULT_REMEDIATION, DeckhandError, ERROR_CODES } from "../../src/protocol/errors.ts";
import { asUnverified } from "../../src/engine/permissions.ts";

/**
 * Every code ever published, in order. Agents match on these strings: a code
 * may be appended (add it here too), never renamed, reordered or removed.
 */
const PUBLISHED = [
  "UNSUPPORTED_PLATFORM", "PERMISSION_DENIED", "INVALID_ARGUMENTS", "APP_NOT_FOUND", "AMBIGUOUS_APP", "WINDOW_NOT_FOUND",
  "SNAPSHOT_REQUIRED", "SNAPSHOT_STALE", "ELEMENT_INDEX_NOT_FOUND", "ELEMENT_UNRESOLVABLE", "ACTION_UNSUPPORTED", "ACTION_FAILED",
  "SCREENSHOT_FAILED", "TIMEOUT", "INTERNAL", "HELPER_UNAVAILABLE", "HELPER_INCOMPATIBLE", "HELPER_PROTOCOL_ERROR", "POLICY_DENIED",
  "BLOCKED_URL", "CONFIRM_REQUIRED", "CONFIRM_DENIED", "FOREGROUND_REQUIRED", "PAUSED", "CANCELLED", "SCREENSHOT_REQUIRED",
  "COORDINATE_OUT_OF_BOUNDS", "FOCUS_MISMATCH", "HELPER_ERROR", "VERIFICATION_FAILED", "APP_EXITED", "PERMISSION_UNVERIFIED",
];

describe("error codes", () => {
  it("every code has a remediation", () => {
    for (const code of ERROR_CODES) expect(DEFAULT_REMEDIATION[code]).toBeTruthy();
  });

  it("are append-only: every published code is still there, in its place", () => {
    expect(ERROR_CODES.slice(0, PUBLISHED.length)).toEqual(PUBLISHED);
  });

  it("have no duplicates", () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });
});

describe("PERMISSION_UNVERIFIED", () => {
  const denied = () => Object.assign(new DeckhandError("PERMISSION_DENIED", "AT-SPI refused the call", { details: { delivery: "not_dispatched" } }), { receipt: { delivery: "not_dispatched" } });

  it("a permission-shaped failure after an unknown probe", () => {
    const e = asUnverified(denied(), ["accessibility"]) as DeckhandError & { receipt?: unknown };
    expect(e.code).toBe("PERMISSION_UNVERIFIED");
    expect(e.details).toMatchObject({ permissions: "accessibility", delivery: "not_dispatched", helperCode: "PERMISSION_DENIED" });
    expect(e.receipt, "the receipt travels on").toEqual({ delivery: "not_dispatched" });
  });

  it("stays PERMISSION_DENIED when every permission was known, and other failures stay what they were", () => {
    expect((asUnverified(denied(), []) as DeckhandError).code).toBe("PERMISSION_DENIED");
    const t = new DeckhandError("TIMEOUT", "slow");
    expect(asUnverified(t, ["accessibility"])).toBe(t);
  });
});
