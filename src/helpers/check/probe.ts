// One check: a name and a function that says pass, fail or skip, and why.
import type { CheckContext } from "./context.ts";
import type { CheckStatus } from "./report.ts";

export interface Outcome {
  status: CheckStatus;
  reason: string;
}

export interface Probe {
  name: string;
  run: (ctx: CheckContext) => Promise<Outcome>;
  /** Reads only the hello: runs even when the helper is gone. */
  offline?: boolean;
}

export const pass = (reason: string): Outcome => ({ status: "pass", reason });
export const fail = (reason: string): Outcome => ({ status: "fail", reason });
export const skip = (reason: string): Outcome => ({ status: "skip", reason });
