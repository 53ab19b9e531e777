// Foreground input (the real pointer and keyboard focus) is off by default.
// Only the operator can grant it: a CLI flag on this invocation
// (--allow-foreground), an option fixed when a serve / MCP session starts, or
// a policy file. Never an agent: this function deliberately takes no request,
// program or tool-call payload, and callers must not derive `flag` or
// `sessionGrant` from one.
import { DeckhandError } from "../protocol/errors.ts";
import { layers, type Policy } from "./load.ts";

export type ForegroundGrantInput = {
  /** The operator's CLI flag on this invocation. */
  flag: boolean;
  /** Set once when a serve / MCP session starts (its own CLI flag); immutable afterwards. */
  sessionGrant: boolean;
  policy: Policy;
};

export type ForegroundDecision = { granted: boolean; source: "admin" | "user" | "flag" | "session" | "default" };

/**
 * Whether foreground input is granted, and by what. A policy layer with
 * `foreground = "deny"` (or a broken admin file) forbids it whatever the
 * flags say; `foreground = "allow"` in a layer grants it without a flag.
 */
export function foregroundDecision(input: ForegroundGrantInput): ForegroundDecision {
  const ls = layers(input.policy);
  const refusing = ls.find((l) => l.foreground === "deny");
  if (refusing) return { granted: false, source: refusing.source };
  if (input.flag === true) return { granted: true, source: "flag" };
  if (input.sessionGrant === true) return { granted: true, source: "session" };
  const granting = ls.find((l) => l.foreground === "allow");
  if (granting) return { granted: true, source: granting.source };
  return { granted: false, source: "default" };
}

export function foregroundGranted(input: ForegroundGrantInput): boolean {
  return foregroundDecision(input).granted;
}

/** Throw FOREGROUND_REQUIRED unless foreground input is granted. */
export function assertForeground(input: ForegroundGrantInput): ForegroundDecision {
  const d = foregroundDecision(input);
  if (!d.granted) {
    const denied = d.source === "admin" || d.source === "user";
    throw new DeckhandError(
      "FOREGROUND_REQUIRED",
      denied ? `foreground input is forbidden by the ${d.source} policy` : "foreground input needs an operator grant",
      {
        ...(denied ? { remediation: `The ${d.source} policy sets foreground = "deny"; use semantic (background) actions.` } : {}),
        details: { source: d.source },
      },
    );
  }
  return d;
}
