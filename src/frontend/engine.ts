// The engine of one front end's process (a CLI call, a serve or MCP
// session): the operator's options, and the safety seam built from them,
// the policy files and the environment.
import { Engine, type OperatorOptions } from "../engine/engine.ts";
import { createSafety, type SessionOptions } from "../engine/default-safety.ts";

export function openEngine(operator: OperatorOptions, session: SessionOptions = {}): Engine {
  return new Engine(operator, createSafety(operator, process.env, session));
}
