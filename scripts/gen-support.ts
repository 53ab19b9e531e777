// docs/support.md from the acceptance matrix rows and the last run's results
// (.state/matrix-results.json, untracked, written by the live matrix run), so the documented support can never claim
// more than was run. `--check` fails when docs/support.md differs from what
// the rows and results produce, or when a row did not pass.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CAPABILITY_KEYS } from "../src/wire/messages.ts";
import { APP_SOURCE, APP_TOOLKIT, CAPABILITIES, ROWS, TOOLKITS, type MatrixApp, type MatrixRow, type Toolkit } from "../test/live/matrix/rows.ts";

const root = resolve(import.meta.dirname, "..");
const resultsPath = join(root, ".state", "matrix-results.json");
const docPath = join(root, "docs", "support.md");

type Results = {
  environment: string;
  results: Record<string, { status: string; ms: number; error?: string; metrics?: Record<string, number | string> }>;
  oracleChecks?: Record<string, { ok: boolean; at: string }>;
};
const last: Results = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, "utf8")) : { environment: "", results: {} };

function status(id: string): string {
  const r = last.results[id];
  if (!r) return "not run";
  return r.status === "passed" ? "passed" : "FAILED";
}

/**
 * The toolkit x capability table: each cell sums the rows of that toolkit
 * that prove that capability. "yes" only when every such row passed; a row
 * whose expected outcome is a refusal shows its code.
 */
function toolkitTable(): string[] {
  const out = [
    "## Toolkit x capability",
    "",
    "Each cell: the rows of that toolkit (its fixture and real apps) that prove the capability, and how many passed in the last run.",
    "`yes` = all passed; `FAILED` = at least one did not; `not run` = none ran; `-` = no row yet. A refusal is listed with its exact code.",
    "",
    `| toolkit | ${CAPABILITIES.join(" | ")} |`,
    `|---|${CAPABILITIES.map(() => "---").join("|")}|`,
  ];
  for (const tk of TOOLKITS) {
    const cells = CAPABILITIES.map((cap) => {
      const rows: MatrixRow[] = ROWS.filter((r) => APP_TOOLKIT[r.app] === tk && r.capability === cap);
      if (!rows.length) return "-";
      const states = rows.map((r) => status(r.id));
      const ok = states.filter((x) => x === "passed").length;
      const verdict = ok === rows.length ? "yes" : states.every((x) => x === "not run") ? "not run" : "FAILED";
      const codes = [...new Set(rows.filter((r) => r.expect !== "delivered").map((r) => `\`${r.expect}\``))];
      const ids = rows.map((r) => `${r.id}${status(r.id) === "passed" ? "" : ` (${status(r.id)})`}`).join(", ");
      return `${verdict} ${ok}/${rows.length}${codes.length ? ` (refused: ${codes.join(", ")})` : ""}<br><sub>${ids}</sub>`;
    });
    out.push(`| ${tk} | ${cells.join(" | ")} |`);
  }
  out.push("");
  // Observation times vary run to run, so they are printed (stderr), not
  // written here: docs/support.md must be reproducible for `--check`.
  return out;
}

function observationTimes(): [string, string, string][] {
  const out: [string, string, string][] = [];
  for (const r of ROWS) {
    const m = last.results[r.id]?.metrics ?? {};
    // The first observation of a row (observe_ms) or the harm rows' five in a row (observe_x5_ms).
    const ms = m.observe_ms ?? m.observe_x5_ms;
    if (ms !== undefined) out.push([APP_TOOLKIT[r.app], r.id, String(ms)]);
  }
  return out.sort((a, b) => TOOLKITS.indexOf(a[0] as Toolkit) - TOOLKITS.indexOf(b[0] as Toolkit));
}

// ---- issues 17/18: helpers this repository's CI cannot run
/**
 * The macOS and Windows helpers declare their hello capabilities in
 * helpers/<dir>/capabilities.json (their own native tests check the hello
 * agrees with it). Nothing of theirs runs on this machine, so every entry
 * must say `unverified`: a claim of `live` or `vectors` needs a run this
 * repository's CI does not make, and `--check` fails on it.
 */
const FOREIGN_HELPERS = [
  { dir: "macos-swift", title: "macOS" },
  { dir: "windows-dotnet", title: "Windows" },
] as const;
type CapabilityFile = { helper: string; platform: string; capabilities: Record<string, { supported: boolean; verified: string; note?: string }> };
const foreignProblems: string[] = [];

function readCapabilityFile(dir: string): CapabilityFile | null {
  const path = join(root, "helpers", dir, "capabilities.json");
  if (!existsSync(path)) return null;
  const file = JSON.parse(readFileSync(path, "utf8")) as CapabilityFile;
  const keys = Object.keys(file.capabilities ?? {});
  for (const k of CAPABILITY_KEYS) if (!keys.includes(k)) foreignProblems.push(`helpers/${dir}/capabilities.json: no entry for ${k}`);
  for (const k of keys) {
    if (!(CAPABILITY_KEYS as readonly string[]).includes(k)) foreignProblems.push(`helpers/${dir}/capabilities.json: unknown capability ${k}`);
    const c = file.capabilities[k]!;
    if (typeof c.supported !== "boolean") foreignProblems.push(`helpers/${dir}/capabilities.json: ${k}.supported is not a boolean`);
    if (c.verified !== "unverified") foreignProblems.push(`helpers/${dir}/capabilities.json: ${k} claims verified "${c.verified}", but no run of this repository's CI proves it`);
  }
  return file;
}

function foreignTable(): string[] {
  const files = FOREIGN_HELPERS.map((h) => ({ ...h, file: readCapabilityFile(h.dir) }));
  const out = [
    "## macOS and Windows",
    "",
    "These helpers are built and tested only by their own GitHub Actions workflows (`.github/workflows`);",
    "no run of them is recorded here, so every capability they declare is `unverified`.",
    "A cell: `unverified` (the helper implements it, untested on its OS by this repository), or `no` (refused with ACTION_UNSUPPORTED before anything is sent).",
    "",
  ];
  if (files.every((f) => !f.file)) return [...out, "No macOS or Windows helper exists yet.", ""];
  out.push(`| capability | ${files.map((f) => `${f.title} (\`helpers/${f.dir}\`)`).join(" | ")} |`, `|---|${files.map(() => "---").join("|")}|`);
  const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");
  for (const key of CAPABILITY_KEYS) {
    const cells = files.map((f) => {
      if (!f.file) return "no helper";
      const c = f.file.capabilities[key];
      if (!c) return "missing";
      return cell(`${c.supported ? c.verified : "no"}${c.note ? `: ${c.note}` : ""}`);
    });
    out.push(`| \`${key}\` | ${cells.join(" | ")} |`);
  }
  out.push("");
  return out;
}
// ---- end helpers this repository's CI cannot run

function render(): string {
  const lines = [
    "# What deckhand supports (verified)",
    "",
    "GENERATED by `scripts/gen-support.ts` from the acceptance matrix",
    "(`test/live/matrix/rows.ts`) and the results of its last run",
    "(`.state/matrix-results.json`, written row by row by `test/live/matrix.test.ts`",
    "for GTK3 and `test/live/toolkits-*.test.ts` for the other toolkits).",
    "A run's rows count only after it proved its own oracles",
    "(`test/live/matrix/oracles.ts`): a focus steal, a pointer nudge and stray",
    "keystrokes injected on purpose must each be caught by the focus, pointer",
    "and app-log oracles, and nothing be reported when nothing was injected.",
    "A row is support only when its status is `passed`: every row runs live on a",
    "private desktop (Xvfb + openbox + D-Bus + AT-SPI) through the compiled",
    "`dist/deckhand` and the real Linux helper, and checks its oracles against",
    "what the target application itself recorded or shows.",
    "",
    "macOS and Windows: see [the last section](#macos-and-windows); nothing is verified there.",
    "",
  ];
  const passed = ROWS.filter((r) => status(r.id) === "passed").length;
  lines.push(`Rows: ${ROWS.length}; passed in the last run: ${passed}.`, "");
  // Sorted: the test files finish in any order, the page must not change with it.
  const checks = Object.entries(last.oracleChecks ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (checks.length) {
    lines.push(`Oracle self-checks of the runs: ${checks.map(([file, c]) => `\`${file}\` ${c.ok ? "proved" : "FAILED"}`).join(", ")}.`, "");
  }
  lines.push(...toolkitTable());
  const apps = [...new Set(ROWS.map((r) => r.app))] as MatrixApp[];
  for (const app of apps) {
    const rows = ROWS.filter((r) => r.app === app);
    lines.push(`## ${app === "fixture" ? "Fixture app (test/fixtures/apps/fixture_app.py, GTK3)" : `${app} (${APP_TOOLKIT[app]})`}`, "");
    if (app !== "fixture") lines.push(`Runs: ${APP_SOURCE[app]}.`, "");
    lines.push("| row | action | route | grant | expected | oracles | status |", "|---|---|---|---|---|---|---|");
    for (const r of rows) {
      lines.push(`| \`${r.id}\` | ${r.action} | ${r.route} | ${r.grant} | ${r.expect === "delivered" ? "delivered" : `refused: \`${r.expect}\``} | ${r.oracles.join("; ")} | ${status(r.id)} |`);
    }
    lines.push("");
  }
  lines.push(`Environment: ${ROWS[0]!.environment}.`, "");
  lines.push(...foreignTable());
  return lines.join("\n");
}

const text = render();
const times = observationTimes();
if (times.length) {
  console.error("observation times of the last run (get-app-state, no screenshot, through deckhand serve; harm rows: five in a row):");
  for (const [tk, id, ms] of times) console.error(`  ${tk.padEnd(12)} ${id.padEnd(30)} ${ms} ms`);
}
if (process.argv.includes("--check")) {
  const failing = ROWS.filter((r) => status(r.id) !== "passed").map((r) => `${r.id} (${status(r.id)})`);
  const current = existsSync(docPath) ? readFileSync(docPath, "utf8") : "";
  let bad = false;
  if (failing.length) {
    console.error(`matrix rows not passing in the last run: ${failing.join(", ")}`);
    bad = true;
  }
  if (foreignProblems.length) {
    console.error(foreignProblems.join("\n"));
    bad = true;
  }
  if (current !== text) {
    console.error("docs/support.md does not match the matrix rows and the last run: run `bun scripts/gen-support.ts`");
    bad = true;
  }
  if (bad) process.exit(1);
  console.error(`docs/support.md matches the matrix (${ROWS.length} rows, all passed)`);
} else {
  writeFileSync(docPath, text);
  console.error(`wrote docs/support.md (${ROWS.length} rows)`);
}
