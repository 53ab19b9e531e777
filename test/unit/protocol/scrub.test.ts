// Issue 10.2: a secret never leaves in an error, however a helper echoes it.
import { describe, expect, it } from "vitest";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { REDACTED, scrubError, scrubText, secretsOf } from "../../../src/protocol/scrub.ts";

describe("scrubText", () => {
  it.each([
    ['"S3cret-pass" is not a number', ["S3cret-pass"], `"${REDACTED}" is not a number`],
    ['"S3cre..." is not a number', ["S3cret-pass"], `"${REDACTED}..." is not a number`],
    ['"S3c..." is cut short', ["S3cret-pass"], '"S3c..." is cut short'],
    ['"a\\"b\\\\c" is not a number', ['a"b\\c'], `"${REDACTED}" is not a number`],
    ['"line1\\nline2" bad', ["line1\nline2"], `"${REDACTED}" bad`],
    ["value hunter2 and hunter2 again", ["hunter2"], `value ${REDACTED} and ${REDACTED} again`],
    ["nothing here", ["hunter2"], "nothing here"],
  ])("%j", (text, secrets, want) => {
    expect(scrubText(text, secrets)).toBe(want);
  });

  it("secretsOf drops empty and tiny values", () => {
    expect(secretsOf(["", undefined, null, "ab", "abc", "abc"])).toEqual(["abc"]);
  });
});

describe("scrubError", () => {
  it("message, remediation and details, in a new error of the same code", () => {
    const err = new DeckhandError("INVALID_ARGUMENTS", '"S3cret-pa..." is not a number', { details: { value: "S3cret-pass", n: 3, delivery: "not_dispatched" } });
    const out = scrubError(err, ["S3cret-pass"]) as DeckhandError;
    expect(out).toBeInstanceOf(DeckhandError);
    expect(out.code).toBe("INVALID_ARGUMENTS");
    expect(JSON.stringify({ m: out.message, d: out.details, r: out.remediation, s: out.stack })).not.toMatch(/S3cr/);
    expect(out.details).toMatchObject({ n: 3, delivery: "not_dispatched" });
  });

  it("an error with nothing to hide is the same object", () => {
    const err = new DeckhandError("TIMEOUT", "slow");
    expect(scrubError(err, ["hunter2"])).toBe(err);
  });
});
