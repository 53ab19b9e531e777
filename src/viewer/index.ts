// `deckhand trace show DIR`: a recorded trace (src/protocol/trace.ts) as one
// self-contained HTML page, for the operator to look at. A tool of its own,
// like the private desktop: only the CLI dispatches to it (src/cli/trace.ts).
import { chmodSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import { buildPageData } from "./page-data.ts";
import { renderPage } from "./html.ts";
import { readTrace } from "./read.ts";

export { parseTraceText, readTrace, loadImage, IMAGE_PATH, type ParsedTrace } from "./read.ts";
export { buildPageData, type PageData } from "./page-data.ts";
export { renderPage, scriptSafeJson, PAGE_CSP } from "./html.ts";

export const DEFAULT_PAGE = "trace.html";

export interface WrittenPage {
  path: string;
  programs: number;
  steps: number;
  failed: number;
  skippedLines: number;
}

/**
 * Reads DIR's trace and writes its page to `out` (default DIR/trace.html),
 * mode 0600 like the trace itself: written beside it and renamed into place,
 * so the mode holds even over an existing file and a reader never sees half.
 */
export function writeTracePage(dir: string, opts: { out?: string; viewer: string; now?: Date }): WrittenPage {
  const trace = readTrace(dir);
  const data = buildPageData(trace, dir, { viewer: opts.viewer, now: opts.now });
  const html = renderPage(data);
  const path = opts.out ?? join(dir, DEFAULT_PAGE);
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    // A leftover of a run that died here (same pid, later boot) is ours to replace; "wx" then never writes through a link.
    rmSync(tmp, { force: true });
    writeFileSync(tmp, html, { mode: 0o600, flag: "wx" });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    const code = (err as NodeJS.ErrnoException).code ?? "unknown";
    throw new DeckhandError("INVALID_ARGUMENTS", `cannot write the trace page ${path} (${code})`, {
      remediation: "Pass --out FILE in a directory you can write to.",
      details: { reason: "out-not-writable", errno: code },
    });
  }
  return { path, programs: data.counts.programs, steps: data.counts.steps, failed: data.counts.failed, skippedLines: data.skipped.count };
}
