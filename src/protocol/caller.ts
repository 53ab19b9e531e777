// Who is asking. The operator (the person at their own shell, through flags,
// environment, policy files and the confirm hook) sets the limits; an agent
// (anything it can put in a request, a tool call or, when an agent framework
// runs the CLI for it, in argv) lives inside them. See docs/security.md,
// "Threat model".
//
// An agent reaches deckhand through `serve` (native requests and the
// OpenAI / Anthropic adapters), `mcp`, or a CLI started with
// DECKHAND_AGENT_MODE=1 in its environment (what an agent framework sets when
// it spawns deckhand for an agent; the operator's own shell does not). From
// any of them, operator-only commands and operator flags are refused with
// POLICY_DENIED, details.reason "operator-only". Stopping is always allowed:
// an agent may `pause`, never `resume`.
//
// Part of the protocol, below every layer that refuses what is the
// operator's: the front ends (src/frontend, src/cli, src/adapters), the
// commands (`resume`), `helper check` and `desktop`.
import { DeckhandError } from "./errors.ts";

/** The environment variable that marks a CLI as spawned for an agent. */
export const AGENT_MODE_ENV = "DECKHAND_AGENT_MODE";

/**
 * Where a command came from. `operator`: the CLI without agent mode.
 * `agent_cli`: the CLI with DECKHAND_AGENT_MODE set. `serve` / `mcp`: a
 * request of a serve client (adapters included) or a tool call of an MCP client.
 */
export type Caller = "operator" | "agent_cli" | "serve" | "mcp";

/** The audit's decision_source for a pause / resume from this caller. */
export function auditSourceOf(caller: Caller | undefined): "operator" | "agent_cli" | "serve_client" | "mcp_client" {
  switch (caller) {
    case "operator":
      return "operator";
    case "serve":
      return "serve_client";
    case "mcp":
      return "mcp_client";
    default:
      // Unknown callers are counted as agents: the record never overstates authority.
      return "agent_cli";
  }
}

/**
 * DECKHAND_AGENT_MODE is on unless it is unset, empty, or one of 0 / false /
 * no / off (any other value turns it on: a typo never yields operator rights).
 */
export function isAgentMode(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[AGENT_MODE_ENV];
  if (v === undefined) return false;
  return !["", "0", "false", "no", "off"].includes(v.trim().toLowerCase());
}

/** The CLI's caller: the operator, unless the environment says an agent spawned it. */
export function cliCaller(env: NodeJS.ProcessEnv = process.env): Caller {
  return isAgentMode(env) ? "agent_cli" : "operator";
}

/**
 * Commands only the operator may run: `resume` lifts the operator's pause
 * (or the kill switch's); `desktop` starts and stops the operator's private
 * desktop and `desktop run -- CMD` runs any program; `trace show` writes
 * the operator's view of a run wherever --out says.
 */
export const OPERATOR_ONLY_COMMANDS: readonly string[] = Object.freeze(["resume", "desktop", "helper", "trace"]);

/**
 * Flags that set the operator's limits: the helper binary (a program
 * deckhand runs), the foreground grant, the confirm hook (a program that
 * approves sensitive actions) and the user policy file. Refused on argv in
 * agent mode; the operator sets them through the environment
 * (DECKHAND_HELPER, DECKHAND_CONFIRM_CMD) and policy files (`foreground`,
 * `[confirm]`) instead, or on the command line of a serve / mcp session
 * they start themselves.
 */
export const OPERATOR_FLAGS: readonly string[] = Object.freeze(["--helper", "--allow-foreground", "--confirm-cmd", "--policy", "--trace"]);

const WHO: Record<Caller, string> = {
  operator: "the operator",
  agent_cli: `a CLI started with ${AGENT_MODE_ENV}`,
  serve: "a serve client",
  mcp: "an MCP client",
};

/** POLICY_DENIED, reason operator-only: `what` (a command or a flag) is the operator's, not this caller's. */
export function operatorOnlyError(what: string, caller: Caller, extra: Record<string, string> = {}): DeckhandError {
  const isFlag = what.startsWith("--");
  return new DeckhandError("POLICY_DENIED", `${isFlag ? `the flag ${what}` : `\`${what}\``} is operator-only; ${WHO[caller]} cannot use it`, {
    remediation: isFlag
      ? `Operator flags are set by the operator, never by an agent: in agent mode use the environment (DECKHAND_HELPER, DECKHAND_CONFIRM_CMD) or the policy files (foreground, [confirm]), or start serve / mcp with the flag from the operator's own shell.`
      : what === "resume"
        ? "Only the operator lifts a pause: they run `deckhand resume` in their own shell. An agent may pause, never resume."
        : `Only the operator runs \`deckhand ${what}\`, from their own shell (without ${AGENT_MODE_ENV}).`,
    details: { reason: "operator-only", caller, ...(isFlag ? { flag: what } : { command: what }), ...extra },
  });
}

