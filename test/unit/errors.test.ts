import { describe, expect, it } from "vitest";
import { DEFAULT_REMEDIATION, ERROR_CODES } from "../../src/protocol/errors.ts";

describe("error codes", () => {
  it("every code has a remediation", () => {
    for (const code of ERROR_CODES) expect(DEFAULT_REMEDIATION[code]).toBeTruthy();
  });
});
