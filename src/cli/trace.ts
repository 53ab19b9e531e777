// `deckhand trace show DIR [--out FILE] [--open] [--json]`: writes a recorded
// trace's page (src/viewer). Operator-only: the page is the operator's view of
// what an agent did, and --out writes wherever it is told.
import { resolve } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import { isAgentMode, operatorOnlyError } from "../protocol/caller.ts";
import { fail, ok, type Envelope } from "../frontend/envelope.ts";
import { writeTracePage } from "../viewer/index.ts";
import { VERSION } from "../version.ts";
import type { z } from "zod";
import type { EXTRA_RESULTS } from "../protocol/results.ts";

export const TRACE_USAGE = [
  "Usage: deckhand trace show DIR [--out FILE] [--open] [--json]",
  "",
  "Writes DIR's trace (recorded with --trace DIR on run, serve or mcp) as one",
  "self-contained HTML file: DIR/trace.html unless --out FILE. Nothing is served",
  "and no browser is started.",
  "",
  "  --out FILE  where to write the page (mode 0600)",
  "  --open      print only the page's path on stdout, to hand to a browser",
  "  --json      print the envelope: {path, programs, steps, failed, skippedLines}",
].join("\n");

interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}

const stdio: Io = {
  out: (t) => process.stdout.write(t),
  err: (t) => process.stderr.write(t),
};

function usageError(why: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", `trace: ${why}`, { remediation: "Run `deckhand trace show DIR [--out FILE] [--open] [--json]`.", details: { stage: "routing" } });
}

function report(io: Io, json: boolean, envelope: Envelope): number {
  if (json) io.out(JSON.stringify(envelope) + "\n");
  else if (!envelope.ok) {
    io.err(`error: ${envelope.error.code}: ${envelope.error.message}\n`);
    if (envelope.error.remediation) io.err(`hint: ${envelope.error.remediation}\n`);
  }
  return envelope.ok ? 0 : 1;
}

export async function traceMain(args: string[], io: Io = stdio, environment: NodeJS.ProcessEnv = process.env): Promise<number> {
  const json = args.includes("--json");
  if (isAgentMode(environment)) return report(io, json, fail("trace", operatorOnlyError("trace", "agent_cli")));
  const [sub, ...rest] = args;
  if (sub === "-h" || sub === "--help" || sub === "help" || (sub === "show" && rest.some((a) => a === "-h" || a === "--help"))) {
    io.out(`${TRACE_USAGE}\n`);
    return 0;
  }
  if (sub !== "show") return report(io, json, fail("trace", usageError(sub === undefined || sub === "--json" ? "missing subcommand (show)" : `unknown subcommand ${JSON.stringify(sub.slice(0, 60))}`)));
  let dir: string | undefined;
  let out: string | undefined;
  let open = false;
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    if (a === "--json") continue;
    if (a === "--open") open = true;
    else if (a === "--out") {
      const v = rest[++i];
      if (v === undefined || v.startsWith("--")) return report(io, json, fail("trace", usageError("--out needs a file path")));
      out = v;
    } else if (a.startsWith("--out=")) out = a.slice("--out=".length);
    else if (a.startsWith("-")) return report(io, json, fail("trace", usageError(`unknown flag ${JSON.stringify(a.slice(0, 60))}`)));
    else if (dir === undefined) dir = a;
    else return report(io, json, fail("trace", usageError("one trace directory at a time")));
  }
  if (dir === undefined) return report(io, json, fail("trace", usageError("show needs the trace directory: deckhand trace show DIR")));
  if (out === "") return report(io, json, fail("trace", usageError("--out needs a file path")));
  let written;
  try {
    written = writeTracePage(dir, { out, viewer: VERSION });
  } catch (err) {
    return report(io, json, fail("trace", err, (m) => io.err(`deckhand: ${m}\n`)));
  }
  const path = resolve(written.path);
  const result: z.infer<typeof EXTRA_RESULTS.trace> = { ...written, path };
  if (json) return report(io, true, ok("trace", result));
  if (open) io.out(`${path}\n`);
  else {
    const skipped = written.skippedLines ? `, ${written.skippedLines} unreadable line${written.skippedLines === 1 ? "" : "s"} skipped` : "";
    io.out(`wrote ${path}: ${written.programs} program${written.programs === 1 ? "" : "s"}, ${written.steps} step${written.steps === 1 ? "" : "s"}, ${written.failed} failed${skipped}\n`);
  }
  return 0;
}
