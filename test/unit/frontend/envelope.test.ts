// The JSON envelope: one shape for success and failure, flat details, and
// unexpected errors redacted to INTERNAL (the stack goes to the log only).
import { describe, expect, it } from "vitest";
import { fail, ok, SCHEMA_VERSION } from "../../../src/frontend/envelope.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

describe("envelope", () => {
  it("ok", () => {
    expect(ok("click", { a: 1 })).toEqual({ schemaVersion: 1, ok: true, command: "click", result: { a: 1 } });
    expect(SCHEMA_VERSION).toBe(1);
  });

  it("a DeckhandError keeps code, message, remediation and flat details", () => {
    const err = new DeckhandError("SNAPSHOT_STALE", "snapshot expired", { details: { reason: "expired", n: 3, b: true } });
    expect(fail("click", err)).toEqual({
      schemaVersion: 1,
      ok: false,
      command: "click",
      error: { code: "SNAPSHOT_STALE", message: "snapshot expired", remediation: err.remediation, details: { reason: "expired", n: 3, b: true } },
    });
  });

  it("nested or null details are dropped: details stay a flat map", () => {
    const err = new DeckhandError("INTERNAL", "x", { details: { keep: "y", nested: { a: 1 } as never, nil: null as never, list: [1] as never } });
    expect(fail("c", err).error.details).toEqual({ keep: "y" });
  });

  it("an unexpected error becomes INTERNAL without its message; the stack goes to the log", () => {
    const logged: string[] = [];
    const env = fail("click", new Error("secret-bearing internal message"), (m) => logged.push(m));
    expect(env.error.code).toBe("INTERNAL");
    expect(JSON.stringify(env)).not.toContain("secret-bearing");
    expect(logged.join("\n")).toContain("secret-bearing");
    expect(fail("click", "a string").error.code).toBe("INTERNAL");
  });
});
