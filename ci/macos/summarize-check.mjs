// Renders a `deckhand helper check --json` report as a Markdown table (the
// job summary), with why each skipped check was skipped.
// usage: node ci/macos/summarize-check.mjs REPORT.json OUT.md
import { appendFileSync, readFileSync } from "node:fs";

const [reportPath, outPath] = process.argv.slice(2);
let report;
try {
  report = JSON.parse(readFileSync(reportPath, "utf8"));
} catch (e) {
  appendFileSync(outPath, `helper check produced no JSON report (${e.message})\n`);
  process.exit(0);
}
const esc = (s) => String(s ?? "").replaceAll("|", "\\|").replaceAll("\n", " ");
const lines = [
  "## deckhand helper check (macOS)",
  "",
  `helper: ${esc(report.helper?.name)} ${esc(report.helper?.version)} (${esc(report.helper?.backend)}), protocol ${esc(report.protocol?.helper)}`,
  "",
  `summary: ${report.summary?.pass ?? 0} passed, ${report.summary?.fail ?? 0} failed, ${report.summary?.skip ?? 0} skipped`,
  "",
  "| check | result | reason |",
  "|---|---|---|",
  ...(report.checks ?? []).map((c) => `| ${esc(c.name)} | ${esc(c.status)} | ${esc(c.reason)} |`),
  "",
];
if (report.stderrTail?.length) lines.push("helper stderr (last lines):", "", "```", ...report.stderrTail.slice(-30), "```", "");
appendFileSync(outPath, lines.join("\n") + "\n");
