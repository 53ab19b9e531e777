#!/usr/bin/env bun
// Entry point of the deckhand binary. `--version` answers before the rest of
// deckhand is loaded: cold start is part of every agent's first call.
import { VERSION } from "./version.ts";
import { discardPrespawned, prespawnHelper, startsDefaultHelper } from "./helpers/prespawn.ts";

const INTERNAL = { schemaVersion: 1, ok: false, command: "deckhand", error: { code: "INTERNAL", message: "an unexpected error occurred", remediation: "This is a deckhand bug; the log on stderr has details.", details: {} } };

async function entry(argv: string[]): Promise<number> {
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // Start the helper now, so its start-up overlaps the loading of the rest (prespawn.ts).
  if (startsDefaultHelper(argv)) prespawnHelper();
  const { main } = await import("./cli/main.ts");
  return await main(argv);
}

entry(process.argv.slice(2)).then(
  (code) => {
    // A helper started early and never adopted (the command failed first, or
    // needed none) would keep this process alive: let it go.
    discardPrespawned();
    process.exitCode = code;
  },
  (err) => {
    discardPrespawned();
    process.stderr.write(`deckhand: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.stdout.write(JSON.stringify(INTERNAL) + "\n");
    process.exitCode = 1;
  },
);
