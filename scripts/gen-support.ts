// docs/support.md from the acceptance matrix rows and the last run's results
// (.state/matrix-results.json, untracked, written by the live matrix run), so the documented support can never claim
// more than was run. `--check` fails when docs/support.md differs from what
// the rows and results produce, or when a row did not pass.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CAPABILITY_KEYS } from "../src/wire/messages.ts";
import { APP_SOURCE, APP_TOOLKIT, appliesOn, CAPABILITIES, DESKTOPS, ENVIRONMENTS, expectationOn, resultKey, ROWS, TOOLKITS, type MatrixApp, type MatrixDesktop, type MatrixRow, type Toolkit } from "../test/live/matrix/rows.ts";

const root = resolve(import.meta.dirname, "..");
const resultsPath = join(root, ".state", "matrix-results.json");
const docPath = join(root, "docs", "support.md");

type Results = {
  environment: string;
  results: Record<string, { status: string; ms: number; error?: string; metrics?: Record<string, number | string> }>;
  oracleChecks?: Record<string, { ok: boolean; at: string }>;
};
const last: Results = existsSync(resultsPath) ? JSON.parse(readFileSync(resultsPath, "utf8")) : { environment: "", results: {} };
const DESKTOP_TITLE: Record<MatrixDesktop, string> = { x11: "X11", wayland: "Wayland" };

/** A row's last result on a desktop where it applies: passed, FAILED or not run. */
function status(desktop: MatrixDesktop, id: string): string {
  const r = last.results[resultKey(desktop, id)];
  if (!r) return "not run";
  return r.status === "passed" ? "passed" : "FAILED";
}

/**
 * The toolkit x capability table of one desktop: each cell sums the rows of
 * that toolkit that prove that capability and apply there. "yes" only when
 * every such row passed; a row whose expected outcome is a refusal shows its
 * code; a cell whose rows are all pending or not applicable says so.
 */
function toolkitTable(desktop: MatrixDesktop): string[] {
  const out = [
    `## Toolkit x capability: ${DESKTOP_TITLE[desktop]}`,
    "",
    `Each cell: the rows of that toolkit (its fixture and real apps) that prove the capability on ${DESKTOP_TITLE[desktop]}, and how many passed in the last run.`,
    "`yes` = all passed; `FAILED` = at least one did not; `not run` = none ran; `-` = no row yet; `pending` = rows that apply but have no run on this desktop yet; `n/a` = the rows cannot apply here. A refusal is listed with its exact code.",
    "",
    `| toolkit | ${CAPABILITIES.join(" | ")} |`,
    `|---|${CAPABILITIES.map(() => "---").join("|")}|`,
  ];
  for (const tk of TOOLKITS) {
    const cells = CAPABILITIES.map((cap) => {
      const all: MatrixRow[] = ROWS.filter((r) => APP_TOOLKIT[r.app] === tk && r.capability === cap);
      if (!all.length) return "-";
      const rows = all.filter((r) => appliesOn(r, desktop));
      if (!rows.length) return all.some((r) => "pending" in expectationOn(r, desktop)) ? `pending<br><sub>${all.map((r) => r.id).join(", ")}</sub>` : "n/a";
      const states = rows.map((r) => status(desktop, r.id));
      const ok = states.filter((x) => x === "passed").length;
      const verdict = ok === rows.length ? "yes" : states.every((x) => x === "not run") ? "not run" : "FAILED";
      const codes = [...new Set(rows.map((r) => expectationOn(r, desktop)).flatMap((e) => ("expect" in e && e.expect !== "delivered" ? [`\`${e.expect}\``] : [])))];
      const ids = rows.map((r) => `${r.id}${status(desktop, r.id) === "passed" ? "" : ` (${status(desktop, r.id)})`}`).join(", ");
      const pending = all.filter((r) => "pending" in expectationOn(r, desktop)).length;
      const na = all.length - rows.length - pending;
      const others = [pending ? `${pending} pending` : "", na ? `${na} n/a` : ""].filter(Boolean).join(", ");
      return `${verdict} ${ok}/${rows.length}${codes.length ? ` (refused: ${codes.join(", ")})` : ""}${others ? ` (+${others})` : ""}<br><sub>${ids}</sub>`;
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
  for (const desktop of DESKTOPS) {
    for (const r of ROWS) {
      const m = last.results[resultKey(desktop, r.id)]?.metrics ?? {};
      // The first observation of a row (observe_ms) or the harm rows' five in a row (observe_x5_ms).
      const ms = m.observe_ms ?? m.observe_x5_ms;
      if (ms !== undefined) out.push([APP_TOOLKIT[r.app], resultKey(desktop, r.id), String(ms)]);
    }
  }
  return out.sort((a, b) => TOOLKITS.indexOf(a[0] as Toolkit) - TOOLKITS.indexOf(b[0] as Toolkit));
}

/**
 * A row's cell for one desktop in the per-app tables: its status where it
 * applies (with the code of a refusal that desktop forces), else `n/a` or
 * `pending` with a note number; the notes are listed under the table.
 */
function desktopCell(r: MatrixRow, desktop: MatrixDesktop, notes: string[]): string {
  const e = expectationOn(r, desktop);
  const note = (text: string) => {
    if (!notes.includes(text)) notes.push(text);
    return `[${notes.indexOf(text) + 1}]`;
  };
  if ("notApplicable" in e) return `n/a ${note(e.notApplicable)}`;
  if ("pending" in e) return `pending ${note(e.pending)}`;
  const forced = desktop === "wayland" && typeof r.wayland === "object" && "expect" in r.wayland ? ` (refused: \`${r.wayland.expect}\` ${note(r.wayland.why)})` : "";
  return `${status(desktop, r.id)}${forced}`;
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
    "for GTK3 and `test/live/toolkits-*.test.ts` for the other toolkits on X11,",
    "and by `test/live/matrix-wayland.test.ts` on Wayland).",
    "A run's rows count only after it proved its own oracles: on X11",
    "(`test/live/matrix/oracles.ts`) a focus steal, a pointer nudge and stray",
    "keystrokes injected on purpose must each be caught by the focus, pointer",
    "and app-log oracles, and nothing be reported when nothing was injected;",
    "on Wayland (`test/live/matrix/wayland-oracles.ts`) a focus steal (swaymsg),",
    "a stray keystroke (wtype), a pointer nudge (a virtual pointer) and a tree",
    "change (swaymsg) must each be caught by sway's focus, the app's log, the",
    "app's own pointer log (no Wayland client can read the pointer: it stands",
    "for the pointer oracle) and sway's tree (it stands for the stacking order).",
    "A row is support only when its status is `passed`: every row runs live on a",
    "private desktop (X11: Xvfb + openbox + D-Bus + AT-SPI; Wayland: headless",
    "sway + D-Bus + AT-SPI) through the compiled `dist/deckhand` and the real",
    "Linux helper, and checks its oracles against what the target application",
    "itself recorded or shows.",
    "",
    "macOS and Windows: see [the last section](#macos-and-windows); nothing is verified there.",
    "",
  ];
  for (const desktop of DESKTOPS) {
    const applies = ROWS.filter((r) => appliesOn(r, desktop));
    const passed = applies.filter((r) => status(desktop, r.id) === "passed").length;
    const pending = ROWS.filter((r) => "pending" in expectationOn(r, desktop)).length;
    const na = ROWS.length - applies.length - pending;
    lines.push(`${DESKTOP_TITLE[desktop]}: rows that apply: ${applies.length}; passed in the last run: ${passed}${pending ? `; pending (no run there yet): ${pending}` : ""}${na ? `; not applicable: ${na}` : ""}.`, "");
  }
  // Sorted: the test files finish in any order, the page must not change with it.
  const checks = Object.entries(last.oracleChecks ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (checks.length) {
    lines.push(`Oracle self-checks of the runs: ${checks.map(([file, c]) => `\`${file}\` ${c.ok ? "proved" : "FAILED"}`).join(", ")}.`, "");
  }
  for (const desktop of DESKTOPS) lines.push(...toolkitTable(desktop));
  const apps = [...new Set(ROWS.map((r) => r.app))] as MatrixApp[];
  for (const app of apps) {
    const rows = ROWS.filter((r) => r.app === app);
    lines.push(`## ${app === "fixture" ? "Fixture app (test/fixtures/apps/fixture_app.py, GTK3)" : `${app} (${APP_TOOLKIT[app]})`}`, "");
    if (app !== "fixture") lines.push(`Runs: ${APP_SOURCE[app]}.`, "");
    lines.push("| row | action | route | grant | expected | oracles | X11 | Wayland |", "|---|---|---|---|---|---|---|---|");
    const notes: string[] = [];
    for (const r of rows) {
      const cells = DESKTOPS.map((d) => desktopCell(r, d, notes));
      lines.push(`| \`${r.id}\` | ${r.action} | ${r.route} | ${r.grant} | ${r.expect === "delivered" ? "delivered" : `refused: \`${r.expect}\``} | ${r.oracles.join("; ")} | ${cells.join(" | ")} |`);
    }
    lines.push("");
    if (notes.length) lines.push(...notes.map((n, i) => `${i + 1}. ${n}`), "");
  }
  lines.push(...DESKTOPS.map((d) => `Environment (${DESKTOP_TITLE[d]}): ${ENVIRONMENTS[d]}.`), "");
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
  // Every row that applies on a desktop must have passed there (pending and n/a rows claim nothing).
  const failing = DESKTOPS.flatMap((d) => ROWS.filter((r) => appliesOn(r, d) && status(d, r.id) !== "passed").map((r) => `${resultKey(d, r.id)} (${status(d, r.id)})`));
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
  console.error(`docs/support.md matches the matrix (${ROWS.length} rows, every one that applies passed on X11 and on Wayland)`);
} else {
  writeFileSync(docPath, text);
  console.error(`wrote docs/support.md (${ROWS.length} rows)`);
}
