// `--trace DIR` (issue 16), checked where the flag is parsed: kept apart from
// the recorder so a one-shot command's start loads nothing of it.
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";

/** An existing path must be a directory (it is created 0700 on the first program); the absolute path. */
export function checkTraceDir(dir: string, flag = "--trace"): string {
  if (dir === "" || (existsSync(dir) && !statSync(dir).isDirectory())) {
    throw new DeckhandError("INVALID_ARGUMENTS", `${flag} needs a directory: ${JSON.stringify(dir.slice(0, 200))} is not one`, { details: { flag } });
  }
  return resolve(dir);
}
