import { describe, expect, it } from "vitest";
import { assertNotSecureTarget, isSecureElement, SECURE_REFUSED_ACTIONS } from "../../../src/policy/secure.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

const password = { role: "secure_text_field", secure: true };

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
    expect(() => assertNotSecureTarget("type_text", { role: "text_field", secure: false })).not.toThrow();
    expect(() => assertNotSecureTarget("type_text", null)).not.toThrow();
  });

  it("the neutral secure role or state counts even if the secure flag was lost", () => {
    expect(isSecureElement({ role: "secure_text_field", secure: false })).toBe(true);
    expect(isSecureElement({ role: "text_field", secure: false, states: ["editable", "secure"] })).toBe(true);
    expect(() => assertNotSecureTarget("set_value", { role: "secure_text_field", secure: false })).toThrow(DeckhandError);
  });

  it("only neutral words decide: a native role name is not read", () => {
    // A helper maps its platform's password role to secure_text_field; the native name alone decides nothing.
    expect(isSecureElement({ role: "text_field", secure: false, states: ["editable"] })).toBe(false);
    expect(isSecureElement({ role: "other", secure: false })).toBe(false);
  });
});
