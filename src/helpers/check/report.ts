// The conformance report of `deckhand helper check`: one row per check, a
// readable table or one JSON object.
import type { Hello } from "../../wire/messages.ts";

export type CheckStatus = "pass" | "fail" | "skip";

export interface CheckRow {
  /** Stable, dotted: handshake.protocol, op.get_tree, cancel.input, frame_limit ... */
  name: string;
  status: CheckStatus;
  /** One short line: what was seen, or what broke. */
  reason: string;
  ms: number;
}

export interface CheckReport {
  schemaVersion: 1;
  command: "helper check";
  /** No check failed (skips allowed). */
  ok: boolean;
  helperPath: string;
  helper: Hello["helper"] | null;
  protocol: { helper: string | null; deckhand: string };
  checks: CheckRow[];
  summary: { pass: number; fail: number; skip: number };
  durationMs: number;
  /** The helper's own last stderr lines (both spawns). */
  stderrTail: string[];
}

export function summarize(rows: CheckRow[]): CheckReport["summary"] {
  return {
    pass: rows.filter((r) => r.status === "pass").length,
    fail: rows.filter((r) => r.status === "fail").length,
    skip: rows.filter((r) => r.status === "skip").length,
  };
}

/** The human table: header, one row per check, a summary line, and the stderr tail on failure. */
export function renderTable(report: CheckReport): string {
  const lines: string[] = [];
  lines.push(`deckhand helper check: ${report.helperPath}`);
  if (report.helper) {
    const h = report.helper;
    lines.push(`helper: ${h.name} ${h.version} (${h.platform}, ${h.backend}), protocol ${report.protocol.helper} (deckhand ${report.protocol.deckhand})`);
  } else if (report.protocol.helper) {
    lines.push(`helper: protocol ${report.protocol.helper} (deckhand ${report.protocol.deckhand})`);
  }
  lines.push("");
  const width = Math.max(5, ...report.checks.map((r) => r.name.length));
  lines.push(`${"CHECK".padEnd(width)}  RESULT  REASON`);
  for (const r of report.checks) lines.push(`${r.name.padEnd(width)}  ${r.status.padEnd(6)}  ${r.reason}`);
  lines.push("");
  const s = report.summary;
  lines.push(`${report.ok ? "PASS" : "FAIL"}: ${s.pass} passed, ${s.fail} failed, ${s.skip} skipped in ${(report.durationMs / 1000).toFixed(1)} s`);
  if (!report.ok && report.stderrTail.length) {
    lines.push("", "helper stderr (last lines):", ...report.stderrTail.map((l) => `  ${l}`));
  }
  return lines.join("\n");
}
