// Issue 12 (one contract, three platforms): the orchestrator's logic reads
// only the neutral vocabulary (src/wire/vocabulary.ts). No file under src/
// reads /proc or names an AT-SPI role, state or Linux permission id, except
// the one Linux module (src/platform/linux.ts) and the private desktop runner
// (src/desktop/, Linux-only by design). Comments count too: they may name a
// platform, not its words.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const SRC = join(ROOT, "src");

/** Where Linux words belong. */
const EXEMPT = ["src/platform/linux.ts", "src/desktop/"];
/**
 * The wire contract documents what its native fields carry (native_role
 * "push button", native_id "atspi_bus"): its comments may quote platform
 * words, its code may not.
 */
const CODE_ONLY = ["src/wire/messages.ts", "src/wire/vocabulary.ts"];
/** Golden frames as the Linux helper sends them (native roles and ids are data there, never decided on). */
const DATA = ["src/wire/vectors.ts"];

const FORBIDDEN: readonly [string, RegExp][] = [
  ["a /proc path", /\/proc(?:\/|\b)/i],
  // AT-SPI role names (the neutral ones are snake_case: button, checkbox, text_field...).
  ...[
    "push button",
    "password text",
    "toggle button",
    "check box",
    "radio button",
    "page tab",
    "menu item",
    "combo box",
    "spin button",
    "scroll pane",
    "layered pane",
    "split pane",
    "redundant object",
    "document web",
    "document frame",
  ].map((w): [string, RegExp] => [`AT-SPI role "${w}"`, new RegExp(w.replace(" ", "\\s+"), "i")]),
  // AT-SPI states the vocabulary does not have (enabled, default, multi_line are its words).
  ["AT-SPI state \"sensitive\"", /["'`]sensitive["'`]/i],
  ["AT-SPI state \"showing\"", /["'`]showing["'`]/i],
  ["AT-SPI state \"is-default\"", /is[-\s]default/i],
  ["AT-SPI state \"single line\"", /["'`](?:single|multi)[\s-]line["'`]/i],
  // The Linux helper's own permission probe ids (the neutral ones: accessibility, display, input_injection...).
  ["Linux permission id atspi_bus", /atspi_bus/i],
  ["Linux permission id x_display", /x_display/i],
  ["Linux permission id mit_shm", /mit_shm/i],
  ["Linux permission id xtest / composite", /["'`](?:xtest|composite)["'`]/i],
];

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return /\.(?:ts|mts|js|mjs)$/.test(name) ? [p] : [];
  });
}

/** The code of a TypeScript file without its comments (string and template literals kept). */
export function stripComments(text: string): string {
  let out = "";
  let i = 0;
  let quote: string | null = null;
  while (i < text.length) {
    const ch = text[i]!;
    if (quote) {
      out += ch;
      if (ch === "\\") {
        out += text[i + 1] ?? "";
        i += 2;
        continue;
      }
      if (ch === quote) quote = null;
      i++;
      continue;
    }
    if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (ch === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    if (ch === '"' || ch === "'" || ch === "`") quote = ch;
    out += ch;
    i++;
  }
  return out;
}

function findings(rel: string, text: string): string[] {
  const body = CODE_ONLY.includes(rel) ? stripComments(text) : text;
  const out: string[] = [];
  body.split("\n").forEach((line, n) => {
    for (const [what, re] of FORBIDDEN) if (re.test(line)) out.push(`${rel}:${n + 1}: ${what}: ${line.trim().slice(0, 160)}`);
  });
  return out;
}

describe("platform-neutral orchestrator", () => {
  const files = tsFiles(SRC).map((p) => relative(ROOT, p).split(sep).join("/"));

  it("scans the orchestrator's sources", () => {
    expect(files).toContain("src/session/snapshot.ts");
    expect(files).toContain("src/platform/linux.ts");
    expect(files.length).toBeGreaterThan(40);
  });

  it("no /proc, AT-SPI role or state, or Linux permission id outside src/platform/linux.ts and src/desktop/", () => {
    const hits = files
      .filter((f) => !EXEMPT.some((e) => f === e || (e.endsWith("/") && f.startsWith(e))) && !DATA.includes(f))
      .flatMap((f) => findings(f, readFileSync(join(ROOT, f), "utf8")));
    expect(hits, hits.join("\n")).toEqual([]);
  });

  it("the check catches what it looks for, in code and in comments", () => {
    expect(findings("src/x.ts", 'const r = readFileSync(`/proc/${pid}/stat`);')).toHaveLength(1);
    expect(findings("src/x.ts", "// a PUSH  BUTTON is pressed")).toHaveLength(1);
    expect(findings("src/x.ts", 'if (n.states.includes("sensitive")) {}')).toHaveLength(1);
    expect(findings("src/x.ts", 'checks.find((c) => c.id === "x_display")')).toHaveLength(1);
    expect(findings("src/x.ts", 'role === "button" && states.includes("enabled") // neutral')).toEqual([]);
    // The contract's comments may quote native words; its code may not.
    expect(findings("src/wire/messages.ts", '/** native_role: "push button" */\nrole: z.string(),')).toEqual([]);
    expect(findings("src/wire/messages.ts", 'const x = "push button"; // a default')).toHaveLength(1);
    expect(stripComments('const u = "https://x"; // c\n/* d */ const v = 1;')).toBe('const u = "https://x"; \n const v = 1;');
  });

  it("/proc is read only by src/platform/linux.ts", () => {
    const readers = files.filter((f) => !f.startsWith("src/desktop/") && /\/proc(?:\/|\b)/.test(stripComments(readFileSync(join(ROOT, f), "utf8"))) && !DATA.includes(f));
    expect(readers).toEqual(["src/platform/linux.ts"]);
  });
});
