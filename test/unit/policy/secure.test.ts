import { describe, expect, it } from "vitest";
import { assertNotSecureTarget, isSecureElement, SECURE_REFUSED_ACTIONS } from "../../../src/policy/secure.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

const password = { role: "password text", secure: true };

describe("secure fields", () => {
  it.each([...SECURE_REFUSED_ACTIONS, "set-value", "type-text", "select-text", "press-key"])("%s into a password field is POLICY_DENIED", (action) => {
    try {
      assertNotSecureTarget(action, password);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DeckhandError);
      expect((e as DeckhandError).code).toBe("POLICY_DENIED");
      expect((e as DeckhandError).details).toMatchObject({ source: "builtin", rule: "builtin:secure_field" });
    }
  });

  it("clicking or focusing a password field is allowed", () => {
    expect(() => assertNotSecureTarget("click", password)).not.toThrow();
    expect(() => assertNotSecureTarget("focus", password)).not.toThrow();
  });

  it("ordinary text fields are allowed", () => {
    expect(() => assertNotSecureTarget("type_text", { role: "entry", secure: false })).not.toThrow();
    expect(() => assertNotSecureTarget("type_text", null)).not.toThrow();
  });

  it("a password role counts even if the secure flag was lost", () => {
    expect(isSecureElement({ role: "password text", secure: false })).toBe(true);
    expect(isSecureElement({ role: "AXSecureTextField", secure: false })).toBe(true);
    expect(() => assertNotSecureTarget("set_value", { role: "Password Text", secure: false })).toThrow(DeckhandError);
  });
});
