#!/usr/bin/env bun
// Entry point of the deckhand binary.
import { main } from "./cli/main.ts";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`deckhand: fatal: ${err instanceof Error ? err.message : String(err)}\n`);
    process.stdout.write(JSON.stringify({ schemaVersion: 1, ok: false, command: "deckhand", error: { code: "INTERNAL", message: "an unexpected error occurred", remediation: "This is a deckhand bug; the log on stderr has details.", details: {} } }) + "\n");
    process.exitCode = 1;
  },
);
