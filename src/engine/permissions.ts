// PERMISSION_UNVERIFIED (the reference contract's rule for an unknown
// probe): when the helper could not tell whether a gating permission is
// granted, deckhand attempts the request rather than refusing it; if the
// request then fails the way a missing permission does (PERMISSION_DENIED
// from the helper), the answer is PERMISSION_UNVERIFIED, naming the
// permissions that were unknown. Any other failure stays what it was.
import { DeckhandError } from "../protocol/errors.ts";

export function asUnverified(err: unknown, unknown: readonly string[]): unknown {
  if (!unknown.length || !(err instanceof DeckhandError) || err.code !== "PERMISSION_DENIED") return err;
  const out = new DeckhandError("PERMISSION_UNVERIFIED", `${err.message} (not verified before the request: ${unknown.join(", ")} could not be determined)`, {
    details: { ...err.details, permissions: unknown.join(","), helperCode: "PERMISSION_DENIED" },
  });
  // What callers read besides the fields (a receipt, a program's evidence) travels on.
  for (const [k, v] of Object.entries(err)) if (!(k in out)) (out as unknown as Record<string, unknown>)[k] = v;
  if (err.program) out.program = err.program;
  return out;
}
