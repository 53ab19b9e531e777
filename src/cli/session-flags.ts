// Operator flags of long-running sessions (serve, mcp): set once when the
// session starts, never by a request or a tool call.
import { DeckhandError } from "../protocol/errors.ts";
import type { OperatorOptions } from "../engine/engine.ts";

export interface SessionFlags extends OperatorOptions {
  maxWidth?: number;
}

/**
 * Parses the flags every session mode shares (--allow-foreground, --helper,
 * --confirm-cmd, --policy, --max-width); `extra` handles a mode's own flags
 * and returns false for a flag it does not know.
 */
export function parseSessionFlags<T extends SessionFlags>(
  argv: string[],
  mode: string,
  opts: T,
  extra: (flag: string, value: () => string) => boolean = () => false,
): T {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new DeckhandError("INVALID_ARGUMENTS", `${a} needs a value`, { details: { flag: a } });
      return v;
    };
    if (a === "--allow-foreground") opts.allowForeground = true;
    else if (a === "--helper") opts.helperPath = value();
    else if (a === "--confirm-cmd") opts.confirmCmd = value();
    else if (a === "--policy") opts.policyPath = value();
    else if (a === "--max-width") {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 16 || v > 10000) throw new DeckhandError("INVALID_ARGUMENTS", "--max-width must be an integer from 16 to 10000", { details: { flag: a } });
      opts.maxWidth = v;
    } else if (!extra(a, value)) throw new DeckhandError("INVALID_ARGUMENTS", `unknown ${mode} flag ${a}`, { details: { flag: a } });
  }
  return opts;
}
