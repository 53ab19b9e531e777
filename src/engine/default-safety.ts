// Builds the Safety seam for a process from operator options and the
// environment. Policy, confirm hook, audit and pause live in their folders.
import type { OperatorOptions } from "./engine.ts";
import { permissiveSafety, type Safety } from "./safety.ts";

export function createSafety(operator: OperatorOptions, _env: NodeJS.ProcessEnv): Safety {
  return permissiveSafety(operator.allowForeground === true);
}
