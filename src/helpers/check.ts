// `deckhand helper check [--helper PATH] [--json] [--timeout SECONDS]`: the
// conformance check a helper author runs on their own OS (Linux, macOS,
// Windows). Exit 0 when every check passes (skips allowed), 1 when one fails,
// 2 for a usage error. Operator-only: it runs the program it is given.
// The checks themselves are in ./check/; docs/helper-check.md lists them.
import { isAgentMode, operatorOnlyError } from "../protocol/caller.ts";
import { discoverHelper } from "./discovery.ts";
import { renderTable, type CheckReport } from "./check/report.ts";
import { runHelperCheck } from "./check/run.ts";

export { runHelperCheck, CHECK_NAMES, type HelperCheckOptions } from "./check/run.ts";
export type { CheckReport, CheckRow, CheckStatus } from "./check/report.ts";

const USAGE = `usage: deckhand helper check [--helper PATH] [--json] [--timeout SECONDS] [--hello-timeout MS]

  Spawns the helper (PATH, else DECKHAND_HELPER, else the one deckhand would
  find) and checks it against wire protocol: handshake, every claimed op with
  read-only arguments against the apps running, refusals, unknown fields,
  cancel, shutdown and the frame limit. One row per check; --json prints one
  report object. Exit 0: all passed (skips allowed); 1: a check failed; 2: usage.`;

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

function usageError(io: Io, json: boolean, why: string): number {
  if (json) {
    io.out(
      JSON.stringify({
        schemaVersion: 1,
        ok: false,
        command: "helper",
        error: { code: "INVALID_ARGUMENTS", message: why, remediation: USAGE.split("\n")[0]!, details: { stage: "usage" } },
      }) + "\n",
    );
  } else io.err(`deckhand helper: ${why}\n${USAGE}\n`);
  return 2;
}

export async function helperMain(args: string[], io: Io = stdio, environment: NodeJS.ProcessEnv = process.env): Promise<number> {
  const json = args.includes("--json");
  if (isAgentMode(environment)) {
    const e = operatorOnlyError("helper", "agent_cli");
    if (json) io.out(JSON.stringify({ schemaVersion: 1, ok: false, command: "helper", error: { code: e.code, message: e.message, remediation: e.remediation, details: e.details } }) + "\n");
    else io.err(`deckhand helper: ${e.code}: ${e.message}\nhint: ${e.remediation}\n`);
    return 1;
  }
  const [sub, ...rest] = args;
  if (sub === "-h" || sub === "--help" || sub === "help") {
    io.out(`${USAGE}\n`);
    return 0;
  }
  if (sub !== "check") return usageError(io, json, sub === undefined || sub === "--json" ? "missing subcommand (check)" : `unknown subcommand: ${sub}`);
  let helper: string | undefined;
  let timeoutMs: number | undefined;
  let helloTimeoutMs: number | undefined;
  for (let i = 0; i < rest.length; i++) {
    const f = rest[i]!;
    const value = () => {
      const v = rest[++i];
      return v === undefined || v.startsWith("--") ? undefined : v;
    };
    if (f === "--json") continue;
    if (f === "-h" || f === "--help") {
      io.out(`${USAGE}\n`);
      return 0;
    }
    if (f === "--helper") {
      helper = value();
      if (!helper) return usageError(io, json, "--helper needs a path");
    } else if (f === "--timeout") {
      const n = Number(value());
      if (!Number.isFinite(n) || n < 5 || n > 600) return usageError(io, json, "--timeout needs a number of seconds from 5 to 600");
      timeoutMs = n * 1000;
    } else if (f === "--hello-timeout") {
      const n = Number(value());
      if (!Number.isInteger(n) || n < 100 || n > 60_000) return usageError(io, json, "--hello-timeout needs milliseconds from 100 to 60000");
      helloTimeoutMs = n;
    } else return usageError(io, json, `unexpected argument: ${f}`);
  }
  let path: string;
  try {
    path = discoverHelper({ flag: helper, env: environment }).path;
  } catch (err) {
    // Not found or not executable: the run is a failed spawn, reported like any other.
    path = helper ?? environment.DECKHAND_HELPER ?? "";
    if (!path) return usageError(io, json, `${(err as Error).message}: pass --helper PATH`);
  }
  const report: CheckReport = await runHelperCheck({ helperPath: path, env: environment, timeoutMs, helloTimeoutMs });
  io.out(json ? JSON.stringify(report) + "\n" : renderTable(report) + "\n");
  return report.ok ? 0 : 1;
}
