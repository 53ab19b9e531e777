// `deckhand <command> [flags]`: argv in, one envelope (--json) or readable
// text out, exit 0 on success and 1 on any failure. Diagnostics on stderr.
import { z } from "zod";
import { COMMAND_SUMMARY, COMMANDS, ARGS } from "../protocol/commands.ts";
import { DeckhandError } from "../protocol/errors.ts";
import type { Engine } from "../engine/engine.ts";
import { openEngine } from "../frontend/engine.ts";
import { VERSION } from "../version.ts";
import { fail } from "../frontend/envelope.ts";
import { helpText, parseFlags, validateFlags } from "./flags.ts";
import { humanOutput } from "../frontend/human.ts";
import { isCommand, runCommand } from "../frontend/run-command.ts";
import { cliCaller, operatorOnlyError, OPERATOR_ONLY_COMMANDS } from "../protocol/caller.ts";
import { appendAudit } from "../audit/log.ts";
import { flushTrace, mark } from "../startup-trace.ts";
import { checkTraceDir } from "../program/trace-dir.ts";
import { isActionCommand } from "../protocol/actions.ts";
import { engineProgress, stderrProgress } from "./progress.ts";

mark("loaded");

const log = (m: string) => process.stderr.write(`deckhand: ${m}\n`);

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.length));
  return [
    `deckhand ${VERSION} — see and operate desktop applications for AI agents`,
    "",
    "Usage: deckhand <command> [flags] [--json]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.padEnd(width)}  ${COMMAND_SUMMARY[c]}`),
    `  ${"serve".padEnd(width)}  NDJSON requests on stdin, envelopes on stdout (--adapter native|openai|anthropic)`,
    `  ${"desktop".padEnd(width)}  a private virtual desktop: run -- CMD... | start | stop | env (operator-only)`,
    `  ${"helper".padEnd(width)}  check --helper PATH: a helper's conformance to the wire protocol (operator-only)`,
    `  ${"trace".padEnd(width)}  show DIR [--out FILE] [--open]: a recorded trace as one HTML file (operator-only)`,
    `  ${"mcp".padEnd(width)}  MCP server on stdio (--helper, --allow-foreground, --confirm-cmd, --policy, --trace DIR, --max-width)`,
    "",
    "`deckhand <command> --help` lists a command's flags.",
  ].join("\n");
}

async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function print(json: boolean, envelope: ReturnType<typeof fail> | { ok: true; command: string; result: unknown }): number {
  if (json) {
    process.stdout.write(JSON.stringify(envelope) + "\n");
  } else if (envelope.ok) {
    process.stdout.write(humanOutput(envelope.command, envelope.result) + "\n");
  } else {
    process.stderr.write(`error: ${envelope.error.code}: ${envelope.error.message}\n`);
    if (envelope.error.remediation) process.stderr.write(`hint: ${envelope.error.remediation}\n`);
  }
  return envelope.ok ? 0 : 1;
}

/**
 * Command groups spelled as two words on the CLI (`deckhand clipboard get`,
 * `deckhand menu click`): the command is the words joined by "-"
 * (clipboard-get), which is also its name in serve, MCP and the docs.
 */
const COMMAND_GROUPS = ["clipboard", "menu"];

export function joinCommandGroup(argv: string[]): string[] {
  const [first, second, ...rest] = argv;
  if (first && second && COMMAND_GROUPS.includes(first) && /^[a-z]+$/.test(second)) return [`${first}-${second}`, ...rest];
  return argv;
}

export async function main(argvIn: string[]): Promise<number> {
  const argv = joinCommandGroup(argvIn);
  const [first, ...rest] = argv;
  const wantsJson = argv.includes("--json");
  if (first === "--version" || first === "-v" || first === "version") {
    process.stdout.write(wantsJson ? JSON.stringify({ schemaVersion: 1, ok: true, command: "version", result: { version: VERSION } }) + "\n" : `${VERSION}\n`);
    return 0;
  }
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    process.stdout.write(usage() + "\n");
    return first === undefined ? 1 : 0;
  }
  // Agent mode (DECKHAND_AGENT_MODE): argv is the agent's. Operator-only
  // commands are refused at routing, operator flags at flag parsing.
  const caller = cliCaller(process.env);
  if (caller !== "operator" && OPERATOR_ONLY_COMMANDS.includes(first)) {
    if (first === "resume") {
      // Every attempt to lift a pause is on the record, with its true source.
      try {
        appendAudit({ event: "resume", command: "resume", decision: "deny", decision_source: "agent_cli", rule: "operator-only", outcome: "POLICY_DENIED", delivery: "not_dispatched" });
      } catch {
        /* refused either way */
      }
    }
    return print(wantsJson, fail(first, operatorOnlyError(first, caller)));
  }
  if (first === "desktop") {
    const { desktopMain } = await import("../desktop/index.ts");
    const line = stderrProgress();
    try {
      // A Wayland desktop's seat keyboard and pointer are the helper's (no helper found: an empty seat).
      const seat = rest.includes("--wayland") ? await seatDevicesHelper() : undefined;
      return await desktopMain(rest, undefined, process.env, line ? (text) => (text === null ? line.clear() : line.show(text)) : undefined, seat);
    } finally {
      line?.dispose();
    }
  }
  if (first === "helper") {
    const { helperMain } = await import("../helpers/check.ts");
    return await helperMain(rest);
  }
  if (first === "trace") {
    const { traceMain } = await import("./trace.ts");
    return await traceMain(rest);
  }
  if (first === "mcp") {
    const { mcpMain } = await import("../adapters/mcp.ts");
    return await mcpMain(rest);
  }
  if (first === "serve") {
    const { serveMain } = await import("./serve.ts");
    return await serveMain(rest);
  }
  // A one-shot call parses each schema about once: zod's compiled fast path
  // (generated per object schema on its first parse) costs more than it
  // saves here, ~1 ms per schema (issue 15). serve and mcp, above, keep it.
  z.config({ jitless: true });
  if (!isCommand(first)) {
    return print(wantsJson, fail("deckhand", new DeckhandError("INVALID_ARGUMENTS", `unknown command ${JSON.stringify(first.slice(0, 60))}`, { details: { stage: "routing" } })));
  }
  let parsed;
  try {
    parsed = parseFlags(ARGS[first], rest);
  } catch (err) {
    return print(wantsJson, fail(first, err, log));
  }
  if (caller !== "operator") {
    const o = parsed.operator;
    const flag = o.helper !== undefined ? "--helper" : o.allowForeground ? "--allow-foreground" : o.confirmCmd !== undefined ? "--confirm-cmd" : o.policy !== undefined ? "--policy" : o.trace !== undefined ? "--trace" : null;
    if (flag) return print(o.json, fail(first, operatorOnlyError(flag, caller)));
  }
  if (parsed.operator.help) {
    process.stdout.write(helpText(first, COMMAND_SUMMARY[first], ARGS[first]) + "\n");
    return 0;
  }
  try {
    validateFlags(ARGS[first], parsed.args);
  } catch (err) {
    return print(parsed.operator.json, fail(first, err, log));
  }
  // issue 16: a trace records programs: `run` and the action commands.
  let traceDir: string | undefined;
  if (parsed.operator.trace !== undefined) {
    try {
      if (first !== "run" && !isActionCommand(first)) {
        throw new DeckhandError("INVALID_ARGUMENTS", `--trace records programs: run and the action commands, not ${first}`, { details: { flag: "--trace" } });
      }
      traceDir = checkTraceDir(parsed.operator.trace);
    } catch (err) {
      return print(parsed.operator.json, fail(first, err, log));
    }
  }
  // Progress on stderr when it is a terminal (src/cli/progress.ts), erased before the output.
  const line = stderrProgress();
  const operator = {
    helperPath: parsed.operator.helper,
    allowForeground: parsed.operator.allowForeground,
    confirmCmd: parsed.operator.confirmCmd,
    policyPath: parsed.operator.policy,
    ...(traceDir !== undefined ? { traceDir, traceMode: "cli" as const } : {}),
    ...(line ? { progress: engineProgress(line) } : {}),
  };
  let engine: Engine | null = null;
  mark("parsed");
  try {
    engine = openEngine(operator);
    mark("engine");
    const envelope = await runCommand(engine, first, parsed.args, { readStdin: readAllStdin, caller }, log);
    mark("command");
    line?.dispose();
    return print(parsed.operator.json, envelope);
  } catch (err) {
    line?.dispose();
    return print(parsed.operator.json, fail(first, err, log));
  } finally {
    line?.dispose();
    await engine?.close();
    mark("closed");
    flushTrace();
  }
}

/** The helper's path for a Wayland desktop's seat devices; undefined when none is found (the seat then stays empty). */
async function seatDevicesHelper(): Promise<string | undefined> {
  const { discoverHelper } = await import("../helpers/discovery.ts");
  try {
    return discoverHelper({}).path;
  } catch {
    return undefined;
  }
}
