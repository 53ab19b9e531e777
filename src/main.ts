#!/usr/bin/env bun
// Entry point of the deckhand binary. `--version` answers before the rest of
// deckhand is loaded: cold start is part of every agent's first call.
import { VERSION } from "./version.ts";

const INTERNAL = { schemaVersion: 1, ok: false, command: "deckhand", error: { code: "INTERNAL", message: "an unexpected error occurred", remediation: "This is a deckhand bug; the log on stderr has details.", details: {} } };

async function entry(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  const { main } = await import("./cli/main.ts");
  return await main(argv);
}

entry(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`deckhand: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.stdout.write(JSON.stringify(INTERNAL) + "\n");
    process.exitCode = 1;
  },
);
