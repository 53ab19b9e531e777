// The trace viewer's generator (src/viewer) on synthetic traces: what is read
// (every line checked, a bad or truncated line skipped and counted; images
// only from img/<hex>.jpg|png), what is written (one page, 0600, the trace as
// escaped JSON that hostile text cannot break out of, each image once), and
// the `trace show` command's outputs. The page in a browser:
// test/integration/trace-viewer-browser.test.ts.
import { afterAll, describe, expect, it } from "vitest";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildPageData, loadImage, parseTraceText, PAGE_CSP, readTrace, renderPage, scriptSafeJson, type PageData } from "../../../src/viewer/index.ts";
import { writeTracePage } from "../../../src/viewer/index.ts";
import { PAGE_SCRIPT } from "../../../src/viewer/page-script.ts";
import { PAGE_CSS } from "../../../src/viewer/page-style.ts";
import { traceMain } from "../../../src/cli/trace.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { TRACE_LIMITS } from "../../../src/protocol/trace.ts";
import { envelopeIssues } from "../../../src/protocol/results.ts";
import { HOSTILE, traceLines, windowPng, writeSyntheticTrace } from "../../support/trace-fixture.ts";

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "deckhand-viewer-"));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** The page's JSON block, parsed back. */
function embedded(html: string): PageData {
  const m = /<script type="application\/json" id="trace-data">([\s\S]*?)<\/script>/.exec(html);
  if (!m) throw new Error("no data block");
  return JSON.parse(m[1]!);
}

async function synthetic(opts: Parameters<typeof writeSyntheticTrace>[1] = {}) {
  const dir = join(tmp(), "trace");
  const t = await writeSyntheticTrace(dir, opts);
  const data = buildPageData(readTrace(dir), dir, { viewer: "test", now: new Date(0) });
  return { t, dir, data, html: renderPage(data) };
}

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (s: string) => void out.push(s), err: (s: string) => void err.push(s) }, out, err };
}

describe("reading trace.jsonl", () => {
  const session = { type: "session", version: 1, mode: "serve", deckhand: "0.1.0", helper: null, startedAt: "2026-12-02T12:00:00.000Z", pid: 1 };
  const end = (program: string) => ({ type: "program-end", program, firstFailure: null, error: null, durationMs: 1, settle: null, observationError: null });

  it("a last line cut short (a crash mid-write) is skipped, counted and named truncated; every whole line before it is kept", () => {
    const text = traceLines([session, end("p1")]) + '{"type":"program-end","program":"p2","firstFai';
    const t = parseTraceText(text);
    expect(t.sessions).toHaveLength(1);
    expect(t.programs.map((p) => p.id)).toEqual(["p1"]);
    expect(t.skippedCount).toBe(1);
    expect(t.truncatedLastLine).toBe(true);
    expect(t.skipped).toEqual([{ line: 3, reason: expect.stringMatching(/^truncated last line/) }]);
  });

  it("a bad line elsewhere (not JSON, or JSON that is not a trace event) is skipped and counted with its line number; it is not a truncation", () => {
    const text = traceLines([session]) + "garbage\n" + JSON.stringify({ type: "step", program: "p1" }) + "\n" + JSON.stringify({ ...session, version: 99 }) + "\n" + traceLines([end("p1")]);
    const t = parseTraceText(text);
    expect(t.skippedCount).toBe(3);
    expect(t.truncatedLastLine).toBe(false);
    expect(t.skipped.map((s) => s.line)).toEqual([2, 3, 4]);
    expect(t.skipped[0]!.reason).toBe("not JSON");
    expect(t.skipped[1]!.reason).toMatch(/^not a trace event: /);
    expect(t.programs.map((p) => p.end !== null)).toEqual([true]);
  });

  it("a whole last line without its newline is kept (the crash came after the event, before the newline); an invalid one with its newline is not a truncation", () => {
    expect(parseTraceText(JSON.stringify(session)).sessions).toHaveLength(1);
    const t = parseTraceText(traceLines([session]) + "{}\n");
    expect(t.skippedCount).toBe(1);
    expect(t.truncatedLastLine).toBe(false);
  });

  it("steps whose program line is missing still show, under a program marked as such; steps are put in index order", () => {
    const step = (index: number) => ({
      type: "step", program: "p7", index, action: "click", request: { action: "click" }, status: "completed",
      decision: { verdict: "allow", source: null, rule: null, code: null, remediation: null }, receipt: {}, error: null,
      startedAt: "2026-12-02T12:00:00.000Z", durationMs: 1, marks: {}, after: null, treeDiff: null,
    });
    const t = parseTraceText(traceLines([session, step(1), step(0)]));
    expect(t.programs).toHaveLength(1);
    expect(t.programs[0]!.start).toBeNull();
    expect(t.programs[0]!.steps.map((s) => s.index)).toEqual([0, 1]);
    const data = buildPageData(t, "/nowhere", { viewer: "test" });
    expect(data.programs[0]!.missingStart).toBe(true);
    expect(data.programs[0]!.steps.map((s) => s.status)).toEqual(["completed", "completed"]);
  });

  it("a step index is not a loop bound: a hostile index adds one card", () => {
    const step = { type: "step", program: "p1", index: 1_000_000_000, action: "click", request: {}, status: "completed", decision: { verdict: "allow", source: null, rule: null, code: null, remediation: null }, receipt: {}, error: null, startedAt: "x", durationMs: 1, marks: {}, after: null, treeDiff: null };
    const data = buildPageData(parseTraceText(traceLines([session, step])), "/nowhere", { viewer: "test" });
    expect(data.programs[0]!.steps).toHaveLength(1);
  });

  it("no trace.jsonl: INVALID_ARGUMENTS, reason no-trace, saying how to record one", () => {
    let e: unknown;
    try {
      readTrace(tmp());
    } catch (err) {
      e = err;
    }
    expect(e).toBeInstanceOf(DeckhandError);
    expect((e as DeckhandError).code).toBe("INVALID_ARGUMENTS");
    expect((e as DeckhandError).details.reason).toBe("no-trace");
    expect((e as DeckhandError).remediation).toContain("--trace DIR");
  });
});

describe("images", () => {
  it("only img/<hex>.jpg|png is read: traversal, absolute, odd names and symlinks are refused, and shown as missing", async () => {
    const root = tmp();
    const dir = join(root, "trace");
    mkdirSync(join(dir, "img"), { recursive: true });
    const png = await windowPng(4, 4);
    writeFileSync(join(root, "secret.png"), png);
    writeFileSync(join(root, "0123456789abcdef.png"), png);
    writeFileSync(join(dir, "img", "0123456789abcdef.png"), png);
    symlinkSync(join(root, "secret.png"), join(dir, "img", "aaaaaaaaaaaaaaaa.png"));
    expect(loadImage(dir, "img/0123456789abcdef.png")).toMatchObject({ dataUri: expect.stringMatching(/^data:image\/png;base64,/) });
    for (const bad of ["../secret.png", "img/../../secret.png", "img/../../0123456789abcdef.png", `${root}/secret.png`, "img/0123456789ABCDEF.png", "img/0123456789abcdef.png/..", "img/0123456789abcdef.gif", "img/sub/0123456789abcdef.png", "img/0123456789abcdef.png\n"]) {
      expect(loadImage(dir, bad), bad).toEqual({ missing: "not a trace image path (refused)" });
    }
    expect(loadImage(dir, "img/aaaaaaaaaaaaaaaa.png")).toEqual({ missing: "image file is a symlink (refused)" });
    expect(loadImage(dir, "img/bbbbbbbbbbbbbbbb.png")).toEqual({ missing: "image file not found" });
    writeFileSync(join(dir, "img", "cccccccccccccccc.jpg"), png);
    expect(loadImage(dir, "img/cccccccccccccccc.jpg")).toEqual({ missing: "image file is not a JPG" });
    // A JPEG (its SOI marker) named .jpg is embedded as image/jpeg.
    writeFileSync(join(dir, "img", "dddddddddddddddd.jpg"), Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]));
    expect(loadImage(dir, "img/dddddddddddddddd.jpg")).toEqual({ dataUri: "data:image/jpeg;base64,/9j/4AAQ", bytes: 6 });
  });

  it("a step's image outside the trace dir is never embedded: the page says refused and holds no byte of the file", async () => {
    const { data, html } = await synthetic();
    // The fixture's p2 names ../../../etc/passwd as its after image.
    const p2 = data.programs.find((p) => p.id === "p2")!;
    expect(p2.steps[0]!.after).toEqual({ missing: "not a trace image path (refused)" });
    expect(html).not.toContain(readFileSync("/etc/passwd").toString("base64").slice(0, 40));
    expect(Object.values(data.images).every((u) => u.startsWith("data:image/png;base64,"))).toBe(true);
  });

  it("an image used by several steps is embedded once, every use referring to the same data", async () => {
    const { t, data, html, dir } = await synthetic();
    expect(Object.keys(data.images)).toHaveLength(2);
    const p1 = data.programs.find((p) => p.id === "p1")!;
    const p3 = data.programs.find((p) => p.id === "p3")!;
    const refOf = (img: unknown) => (img && typeof img === "object" && "ref" in img ? (img as { ref: string }).ref : null);
    const shared = refOf(p1.steps[0]!.after);
    expect(shared).not.toBeNull();
    expect(refOf(p1.steps[1]!.after)).toBe(shared);
    expect(refOf(p3.steps[0]!.before)).toBe(shared);
    const b64 = readFileSync(join(dir, t.images.afterClick.file)).toString("base64");
    expect(html.split(b64)).toHaveLength(2);
  });

  it("a step's before image is the previous step's after, the first step's the program's; a missing one keeps its reason", async () => {
    const { data } = await synthetic();
    const [p1, p2, p3] = data.programs;
    expect(p1!.steps[0]!.before).toMatchObject({ file: expect.any(String), origin: { x: 100, y: 50 }, scale: 0.5, width: 200, height: 150 });
    expect(p1!.steps[1]!.before).toEqual(p1!.steps[0]!.after);
    expect(p1!.steps[2]!.before).toEqual(p1!.steps[1]!.after);
    expect(p2!.steps[0]!.before).toEqual({ missing: "the app has no window" });
    expect(p3!.steps[0]!.after).toEqual({ missing: "the trace's image budget was spent" });
  });

  it("a step asked for without a step line: not-reached when its program ended (refused up front), not-recorded when it never did", async () => {
    const { data } = await synthetic();
    const p4 = data.programs.find((p) => p.id === "p4")!;
    expect(p4.error?.code).toBe("APP_NOT_FOUND");
    expect(p4.steps.map((s) => [s.index, s.action, s.status])).toEqual([[0, "click", "not-reached"]]);
    const cut = parseTraceText(readFileSync(join(data.dir, "trace.jsonl"), "utf8").split("\n").filter((l) => !l.includes('"program-end","program":"p4"')).join("\n") + "\n");
    expect(buildPageData(cut, data.dir, { viewer: "test" }).programs.find((p) => p.id === "p4")!.steps[0]!.status).toBe("not-recorded");
  });
});

describe("the page", () => {
  it("hostile text (a window title, an app name, a tree line) cannot end the data block or add markup: every < > & in the data is escaped, and it reads back intact", async () => {
    const { data, html } = await synthetic();
    expect(JSON.stringify(data)).toContain(HOSTILE);
    expect(html).not.toContain(HOSTILE);
    expect(html).not.toContain("<img");
    expect(html).not.toContain("onerror=alert(1)>");
    // Only the page's own two script elements close.
    expect(html.match(/<\/script/gi)).toHaveLength(2);
    expect(embedded(html)).toEqual(data);
    expect(embedded(html).programs[1]!.app!.name).toBe(HOSTILE);
    expect(scriptSafeJson({ s: "<!--</script>&\u2028" })).toBe('{"s":"\\u003c!--\\u003c/script\\u003e\\u0026\\u2028"}');
  });

  it("the page script builds the DOM without parsing trace text as HTML", () => {
    for (const sink of ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "srcdoc", "setAttribute(\"on"]) expect(PAGE_SCRIPT, sink).not.toContain(sink);
  });

  it("self-contained: the CSP allows inline style and script and data: images only, first in <head>; nothing names a URL but the SVG namespace", async () => {
    const { html } = await synthetic();
    expect(PAGE_CSP).toBe("default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'");
    const head = html.slice(html.indexOf("<head>"), html.indexOf("</head>"));
    expect(head.indexOf(`<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}">`)).toBeGreaterThan(0);
    expect(head.indexOf("Content-Security-Policy")).toBeLessThan(head.indexOf("<style>"));
    const urls = html.match(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]*/gi) ?? [];
    expect([...new Set(urls)]).toEqual(["http://www.w3.org/2000/svg"]);
    for (const s of ["<link", "@import", "@font-face", "<iframe", "<base"]) expect(html, s).not.toContain(s);
    expect(PAGE_CSS).not.toMatch(/url\(/);
    expect(html.match(/<script/g)).toHaveLength(2);
  });

  it("counts: programs, recorded steps, failed and refused steps, skipped lines (the truncated tail included)", async () => {
    const { data } = await synthetic({ extraLines: "not json\n", truncatedTail: '{"type":"ste' });
    expect(data.counts).toEqual({ programs: 4, steps: 5, failed: 2, refused: 1, failedPrograms: 3 });
    expect(data.skipped).toMatchObject({ count: 2, truncatedLastLine: true });
    expect(data.sessions).toHaveLength(1);
  });
});

describe("writing the page", () => {
  it("DIR/trace.html by default, mode 0600 even over an existing file; --out elsewhere", async () => {
    const dir = join(tmp(), "trace");
    await writeSyntheticTrace(dir);
    writeFileSync(join(dir, "trace.html"), "old");
    chmodSync(join(dir, "trace.html"), 0o644);
    const w = writeTracePage(dir, { viewer: "test" });
    expect(w).toEqual({ path: join(dir, "trace.html"), programs: 4, steps: 5, failed: 2, skippedLines: 0 });
    expect(statSync(w.path).mode & 0o777).toBe(0o600);
    expect(readFileSync(w.path, "utf8")).toMatch(/^<!DOCTYPE html>/);
    const out = join(tmp(), "page.html");
    expect(writeTracePage(dir, { viewer: "test", out }).path).toBe(out);
    expect(statSync(out).mode & 0o777).toBe(0o600);
  });

  it("an --out that cannot be written is INVALID_ARGUMENTS, reason out-not-writable", async () => {
    const dir = join(tmp(), "trace");
    await writeSyntheticTrace(dir);
    expect(() => writeTracePage(dir, { viewer: "test", out: join(dir, "no", "such", "dir", "x.html") })).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENTS", details: expect.objectContaining({ reason: "out-not-writable" }) }));
  });
});

describe("deckhand trace show", () => {
  it("--open prints only the page's path; plain prints one summary line; --json the envelope", async () => {
    const dir = join(tmp(), "trace");
    await writeSyntheticTrace(dir, { truncatedTail: "{" });
    let c = io();
    expect(await traceMain(["show", dir, "--open"], c.io, {})).toBe(0);
    expect(c.out).toEqual([`${join(dir, "trace.html")}\n`]);
    c = io();
    expect(await traceMain(["show", dir], c.io, {})).toBe(0);
    expect(c.out).toEqual([`wrote ${join(dir, "trace.html")}: 4 programs, 5 steps, 2 failed, 1 unreadable line skipped\n`]);
    c = io();
    const out = join(tmp(), "x.html");
    expect(await traceMain(["show", dir, "--out", out, "--json"], c.io, {})).toBe(0);
    expect(JSON.parse(c.out.join(""))).toEqual({ schemaVersion: 1, ok: true, command: "trace", result: { path: out, programs: 4, steps: 5, failed: 2, skippedLines: 1 } });
    expect(envelopeIssues(JSON.parse(c.out.join("")))).toBeNull();
  });

  it("no trace: the no-trace envelope and exit 1; a bad flag or subcommand: INVALID_ARGUMENTS", async () => {
    let c = io();
    expect(await traceMain(["show", tmp(), "--json"], c.io, {})).toBe(1);
    expect(JSON.parse(c.out.join(""))).toMatchObject({ ok: false, command: "trace", error: { code: "INVALID_ARGUMENTS", details: { reason: "no-trace" } } });
    for (const argv of [["show", "--bogus"], ["show"], ["list"], ["show", "a", "b"], ["show", "a", "--out"]]) {
      c = io();
      expect(await traceMain([...argv, "--json"], c.io, {}), argv.join(" ")).toBe(1);
      expect(JSON.parse(c.out.join("")).error.code, argv.join(" ")).toBe("INVALID_ARGUMENTS");
    }
  });

  it("agent mode: refused as operator-only, and nothing is written", async () => {
    const dir = join(tmp(), "trace");
    await writeSyntheticTrace(dir);
    const c = io();
    expect(await traceMain(["show", dir, "--json"], c.io, { DECKHAND_AGENT_MODE: "1" })).toBe(1);
    expect(JSON.parse(c.out.join(""))).toMatchObject({ ok: false, command: "trace", error: { code: "POLICY_DENIED", details: { reason: "operator-only", command: "trace" } } });
    expect(() => statSync(join(dir, "trace.html"))).toThrow();
  });
});

describe("docs/trace.md", () => {
  it("the size table is TRACE_LIMITS, row for row", () => {
    const doc = readFileSync(join(__dirname, "..", "..", "..", "docs", "trace.md"), "utf8");
    const table = /<!-- limits:start -->([\s\S]*?)<!-- limits:end -->/.exec(doc)![1]!;
    const rows = [...table.matchAll(/^\| `(\w+)` \| (\d+) \|/gm)].map((m) => [m[1], Number(m[2])]);
    expect(Object.fromEntries(rows)).toEqual({ ...TRACE_LIMITS });
  });
});
