// Operator flags of long-running sessions (serve, mcp): set once when the
// session starts, never by a request or a tool call.
import { DeckhandError } from "../protocol/errors.ts";
import type { OperatorOptions } from "../engine/engine.ts";
import { isAgentMode, operatorOnlyError, OPERATOR_FLAGS } from "../protocol/caller.ts";
import { checkTraceDir } from "../program/trace-dir.ts";

export interface SessionFlags extends OperatorOptions {
  /** Caps of images handed to a model (src/adapters/coords.ts adapterFit). */
  maxWidth?: number;
  maxSide?: number;
  maxPixels?: number;
}

/**
 * Parses the flags every session mode shares (--allow-foreground, --helper,
 * --confirm-cmd, --policy, --trace, --max-width, --max-side, --max-pixels); `extra` handles a mode's own flags
 * and returns false for a flag it does not know. In agent mode
 * (DECKHAND_AGENT_MODE in `env`) argv is the agent's: the operator flags are
 * refused (POLICY_DENIED, reason operator-only).
 */
export function parseSessionFlags<T extends SessionFlags>(
  argv: string[],
  mode: string,
  opts: T,
  extra: (flag: string, value: () => string) => boolean = () => false,
  env: NodeJS.ProcessEnv = process.env,
): T {
  const agent = isAgentMode(env);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (agent && OPERATOR_FLAGS.includes(a)) throw operatorOnlyError(a, "agent_cli");
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new DeckhandError("INVALID_ARGUMENTS", `${a} needs a value`, { details: { flag: a } });
      return v;
    };
    if (a === "--allow-foreground") opts.allowForeground = true;
    else if (a === "--helper") opts.helperPath = value();
    else if (a === "--confirm-cmd") opts.confirmCmd = value();
    else if (a === "--policy") opts.policyPath = value();
    else if (a === "--trace") {
      // issue 16: every program of the session is recorded in one trace.
      opts.traceDir = checkTraceDir(value());
      opts.traceMode = mode === "mcp" ? "mcp" : "serve";
    }
    else if (a === "--max-width") {
      const v = Number(value());
      if (!Number.isInteger(v) || v < 16 || v > 10000) throw new DeckhandError("INVALID_ARGUMENTS", "--max-width must be an integer from 16 to 10000", { details: { flag: a } });
      opts.maxWidth = v;
    } else if (a === "--max-side") {
      // The longest side of an image handed to a model (default 1568: Anthropic downsizes larger ones).
      const v = Number(value());
      if (!Number.isInteger(v) || v < 16 || v > 10000) throw new DeckhandError("INVALID_ARGUMENTS", "--max-side must be an integer from 16 to 10000", { details: { flag: a } });
      opts.maxSide = v;
    } else if (a === "--max-pixels") {
      // width x height of an image handed to a model (default 1200000: Anthropic's ~1,600-token budget).
      const v = Number(value());
      if (!Number.isInteger(v) || v < 256 || v > 100_000_000) throw new DeckhandError("INVALID_ARGUMENTS", "--max-pixels must be an integer from 256 to 100000000", { details: { flag: a } });
      opts.maxPixels = v;
    } else if (!extra(a, value)) throw new DeckhandError("INVALID_ARGUMENTS", `unknown ${mode} flag ${a}`, { details: { flag: a } });
  }
  return opts;
}
