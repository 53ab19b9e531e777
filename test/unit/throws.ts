// Shared by unit tests: the DeckhandError a synchronous call throws.
import { expect } from "vitest";
import { DeckhandError, type ErrorCode } from "../../src/protocol/errors.ts";

/** Calls fn, expects it to throw a DeckhandError with `code`, and returns it. */
export function thrown(fn: () => unknown, code: ErrorCode = "INVALID_ARGUMENTS"): DeckhandError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DeckhandError);
    expect((err as DeckhandError).code).toBe(code);
    return err as DeckhandError;
  }
  throw new Error(`expected ${code}`);
}
