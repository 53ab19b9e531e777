// OCR wired through the CLI and the engine (issue 14 item 4), against the
// scripted desktop and a fake tesseract (test/fixtures/ocr/fake-tesseract.ts;
// test/live/ocr.test.ts runs the real one): automatic OCR of an app without a
// tree, --ocr beside a tree, a missing or stuck engine, a scaled image read
// at full resolution, and acting on OCR text (a click at its centre as
// foreground input; everything else refused, nothing sent).
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Engine } from "../../src/engine/engine.ts";
import { permissiveSafety } from "../../src/engine/safety.ts";
import { observe } from "../../src/engine/observe.ts";
import { resolveApp, resolveWindow } from "../../src/engine/resolve.ts";
import { noTreeWarning } from "../../src/engine/tree-advice.ts";
import { fakeTesseract, tsvOf, type FakeTesseract } from "../fixtures/ocr/fake-tesseract.ts";
import { cleanupSandboxes, cli, expectError, expectOk, FAKE, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);
const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

const QT_WINDOW = 0x740001;
/** qt-notes' window (fake helper): 400x300 at (1900, 540), no tree. */
const ORIGIN = { x: 1900, y: 540 };

/** What the fake engine reads, in image pixels. */
const TSV = tsvOf([
  [1, 1, 1, 20, 30, 80, 16, 96, "Meeting"],
  [1, 1, 1, 104, 30, 60, 16, 95, "notes"],
  [2, 1, 1, 20, 100, 60, 18, 96, "Open"],
  [2, 1, 1, 84, 100, 70, 18, 96, "Report"],
  [2, 1, 1, 250, 100, 60, 18, 96, "Delete"],
  [2, 1, 1, 314, 100, 50, 18, 95, "Draft"],
]);

function desktop(): Sandbox {
  const sb = sandbox();
  sb.control({ toolkits: true });
  return sb;
}

function withFake(sb: Sandbox, opts: Parameters<typeof fakeTesseract>[1] = { tsv: TSV }): { fake: FakeTesseract; env: Record<string, string> } {
  const fake = fakeTesseract(join(sb.dir, `tesseract-${Math.random().toString(36).slice(2, 8)}`), opts);
  return { fake, env: { DECKHAND_TESSERACT: fake.path } };
}

const ocrOf = (state: any) => (state.snapshot.elements ?? []).filter((e: any) => e.source === "ocr");

describe("automatic OCR of an app without a tree", () => {
  it("reads the window image: label elements with screen bounds, a compact tree text, the report; no tree read", async () => {
    const sb = desktop();
    const { fake, env } = withFake(sb);
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"], { env }), "get-app-state");
    expect(sb.ops()).not.toContain("get_tree");
    expect(state.ocr).toMatchObject({ engine: "tesseract 9.9.9", automatic: true, lines: 3 });
    expect(state.ocr.ms).toBeGreaterThanOrEqual(0);
    expect(state.ocrError).toBeUndefined();
    expect(state.snapshot.elementCount).toBe(3);
    expect(ocrOf(state).map((e: any) => [e.index, e.role, e.title, e.value, e.actions, e.bounds, e.locator.kind])).toEqual([
      [1, "label", "Meeting notes", null, [], { x: ORIGIN.x + 20, y: ORIGIN.y + 30, width: 144, height: 16 }, "ocr-box"],
      [2, "label", "Open Report", null, [], { x: ORIGIN.x + 20, y: ORIGIN.y + 100, width: 134, height: 18 }, "ocr-box"],
      [3, "label", "Delete Draft", null, [], { x: ORIGIN.x + 250, y: ORIGIN.y + 100, width: 114, height: 18 }, "ocr-box"],
    ]);
    // The engine read the observation's own image file.
    const size = String(statSync(state.screenshot.path).size);
    expect(fake.images()).toEqual([size, size]);
    expect(fake.runs()[1]![0]).toBe(state.screenshot.path);
    // Still the no-tree warning: there is no tree.
    expect(state.warnings).toEqual([noTreeWarning({ name: "qt-notes", toolkit: "qt5" })]);
    // The compact default shows the lines under the window line.
    const compact = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes", "--format", "compact", "--with-bounds"], { env }), "get-app-state");
    expect(compact.snapshot.treeText).toBe(
      ['window "Notes"', '  [1] label "Meeting notes" @1920,570 144x16 (ocr)', '  [2] label "Open Report" @1920,640 134x18 (ocr)', '  [3] label "Delete Draft" @2150,640 114x18 (ocr)'].join("\n"),
    );
  });

  it("the session's accessibility switch off: the text OCR read does not hide the ACCESSIBILITY_DISABLED warning", async () => {
    const sb = sandbox();
    sb.control({ toolkits: true, a11yOff: true });
    const { env } = withFake(sb);
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"], { env }), "get-app-state");
    expect(state.snapshot.elementCount).toBe(3);
    expect(state.warnings.map((w: any) => w.code)).toEqual(["NO_ACCESSIBILITY_TREE", "ACCESSIBILITY_DISABLED"]);
    expect(state.warnings[1].message).toContain("the tree is empty");
  });

  it("the engine missing: ok, no OCR elements, an OCR_UNAVAILABLE warning after the no-tree one", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"], { env: { DECKHAND_TESSERACT: join(sb.dir, "no-tesseract") } }), "get-app-state");
    expect(state.ocr).toBeUndefined();
    expect(state.ocrError).toBeUndefined();
    expect(state.snapshot.elementCount).toBe(0);
    expect(state.warnings.map((w: any) => w.code)).toEqual(["NO_ACCESSIBILITY_TREE", "OCR_UNAVAILABLE"]);
    expect(state.warnings[1].remediation).toContain("tesseract");
  });

  it("--no-screenshot: no image, no OCR; ocr:false turns the automatic OCR off", async () => {
    const sb = desktop();
    const { fake, env } = withFake(sb);
    const none = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes", "--no-screenshot"], { env }), "get-app-state");
    expect(none.ocr).toBeUndefined();
    expect(none.warnings.map((w: any) => w.code)).toEqual(["NO_ACCESSIBILITY_TREE"]);
    const serve = new ServeProcess(sb, [], { env });
    try {
      const line = await serve.request({ id: 1, command: "get-app-state", args: { app: "qt-notes", ocr: false } });
      expect(line.ok, JSON.stringify(line)).toBe(true);
      expect(line.result.ocr).toBeUndefined();
      expect(line.result.snapshot.elementCount).toBe(0);
    } finally {
      await serve.close();
    }
    expect(fake.runs()).toEqual([]);
  });

  it("a diff (--since) keeps the indices of text read again: unchanged, nothing added or removed", async () => {
    const sb = desktop();
    const { env } = withFake(sb);
    const base = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"], { env }), "get-app-state");
    const next = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes", "--since", base.snapshot.snapshotId], { env }), "get-app-state");
    expect(next.snapshot.diff).toMatchObject({ applied: true, added: [], removed: [], changed: [], unchanged: 3 });
    expect(next.snapshot.elementCount).toBe(3);
  });

  it("an action's final observation of it reads the text again", async () => {
    const sb = desktop();
    const { fake, env } = withFake(sb);
    const result = expectOk(await cli(sb, ["press-key", "--app", "qt-notes", "--key", "a", "--allow-foreground", "--state"], { env }), "press-key");
    expect(result.observation.ocr).toMatchObject({ automatic: true, lines: 3 });
    expect(result.observation.snapshot.treeText).toContain('label "Open Report"');
    expect(fake.images()).toHaveLength(2);
  });
});

describe("--ocr beside a tree", () => {
  it("OCR lines after the tree's nodes, indexed past every tree index and position; nothing taken from over a secure field", async () => {
    const sb = sandbox();
    const { env } = withFake(sb);
    const plain = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app"], { env }), "get-app-state");
    expect(plain.ocr).toBeUndefined();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--ocr"], { env }), "get-app-state");
    // "Open Report" lies over the fixture's password field (30,130 100x24): not taken, though the engine read it.
    expect(state.ocr).toMatchObject({ automatic: false, lines: 2 });
    const tree = state.snapshot.elements.filter((e: any) => e.source !== "ocr");
    expect(tree.map((e: any) => e.title)).toEqual(plain.snapshot.elements.map((e: any) => e.title));
    const maxTree = Math.max(...tree.map((e: any) => e.index));
    const ocr = ocrOf(state);
    expect(ocr.map((e: any) => [e.index, e.title])).toEqual([
      [8, "Meeting notes"],
      [9, "Delete Draft"],
    ]);
    expect(ocr[0].index).toBeGreaterThan(maxTree);
    // The fixture window is at (10, 20): the image's origin.
    expect(ocr[0].bounds).toEqual({ x: 30, y: 50, width: 144, height: 16 });
    expect(state.snapshot.treeText.split("\n").slice(-2)).toEqual(['  [8] label "Meeting notes" (ocr)', '  [9] label "Delete Draft" (ocr)']);
  });

  it("the engine missing or stuck: ok, with ocrError; a stuck engine is stopped at its deadline", async () => {
    const sb = sandbox();
    const missing = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--ocr"], { env: { DECKHAND_TESSERACT: join(sb.dir, "none") } }), "get-app-state");
    expect(missing.ocrError).toMatchObject({ code: "OCR_UNAVAILABLE", message: expect.stringContaining("was not found") });
    expect(missing.snapshot.elementCount).toBe(7);
    const { fake, env } = withFake(sb, { sleepS: 30 });
    const t0 = Date.now();
    const stuck = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--ocr"], { env: { ...env, DECKHAND_OCR_TIMEOUT_MS: "300" } }), "get-app-state");
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(stuck.ocrError).toMatchObject({ code: "OCR_UNAVAILABLE", message: expect.stringContaining("did not finish within 300 ms") });
    expect(fake.pids()).toHaveLength(4);
  });

  it("--ocr needs the image: with --no-screenshot it is INVALID_ARGUMENTS", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--ocr", "--no-screenshot"]), "get-app-state", "INVALID_ARGUMENTS");
  });
});

describe("acting on OCR text", () => {
  async function observed(): Promise<{ sb: Sandbox; env: Record<string, string>; byTitle: (t: string) => any }> {
    const sb = desktop();
    const { env } = withFake(sb);
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"], { env }), "get-app-state");
    return { sb, env, byTitle: (t) => ocrOf(state).find((e: any) => e.title === t) };
  }

  it("click --element-index, granted: one pointer click at the centre of its box, inside the pointer guard", async () => {
    const { sb, env, byTitle } = await observed();
    const open = byTitle("Open Report");
    const before = sb.requests().length;
    const result = expectOk(await cli(sb, ["click", "--app", "qt-notes", "--element-index", String(open.index), "--allow-foreground", "--state"], { env }), "click");
    expect(result).toMatchObject({ performed: true, route: "foreground_input", delivery: "submitted", elementIndex: open.index });
    const sent = sb.requests().slice(before);
    expect(sent.filter((r) => r.op === "element_action")).toEqual([]);
    const inputs = sent.filter((r) => r.op === "input");
    expect(inputs).toHaveLength(1);
    expect(inputs[0]!.args).toMatchObject({
      steps: [{ kind: "click", x: 1987, y: 649, button: "left", count: 1, modifiers: [] }],
      restore_pointer: true,
      pointer_guard: { windows: [QT_WINDOW] },
    });
    // The final observation read the text again.
    expect(result.observation.ocr.lines).toBe(3);
  });

  it("click --element-index without the grant: FOREGROUND_REQUIRED, nothing sent", async () => {
    const { sb, env, byTitle } = await observed();
    const before = sb.requests().length;
    const e = expectError(await cli(sb, ["click", "--app", "qt-notes", "--element-index", String(byTitle("Open Report").index)], { env }), "click", "FOREGROUND_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    const ops = sb.requests().slice(before).map((r) => r.op);
    expect(ops).not.toContain("input");
    expect(ops).not.toContain("element_action");
  });

  it("every other element action is ACTION_UNSUPPORTED ocr-point-only, nothing sent", async () => {
    const { sb, env, byTitle } = await observed();
    const i = String(byTitle("Meeting notes").index);
    for (const argv of [
      ["set-value", "--element-index", i, "--value", "x"],
      ["type-text", "--element-index", i, "--text", "x"],
      ["focus", "--element-index", i],
      ["perform-secondary-action", "--element-index", i, "--action", "press"],
      ["scroll", "--element-index", i],
    ]) {
      const before = sb.requests().length;
      const e = expectError(await cli(sb, [argv[0]!, "--app", "qt-notes", ...argv.slice(1), "--allow-foreground"], { env }), argv[0]!, "ACTION_UNSUPPORTED");
      expect(e.details, argv[0]).toMatchObject({ reason: "ocr-point-only", elementIndex: Number(i), delivery: "not_dispatched" });
      const ops = sb.requests().slice(before).map((r) => r.op);
      expect(ops, argv[0]).not.toContain("input");
      expect(ops, argv[0]).not.toContain("element_action");
    }
  });

  it("policy applies as to any click: sensitive text read there needs the confirm hook (CONFIRM_REQUIRED without one), nothing sent", async () => {
    const { sb, env, byTitle } = await observed();
    const before = sb.requests().length;
    const e = expectError(await cli(sb, ["click", "--app", "qt-notes", "--element-index", String(byTitle("Delete Draft").index), "--allow-foreground"], { env }), "click", "CONFIRM_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(sb.requests().slice(before).map((r) => r.op)).not.toContain("input");
  });
});

describe("a scaled image is read at full resolution", () => {
  it("observe with a max width: the engine reads a second, full-size capture (then removed); bounds map at scale 1", async () => {
    const sb = desktop();
    const { fake, env } = withFake(sb);
    const engine = new Engine({ helperPath: FAKE, env: sb.env(env) }, permissiveSafety(false));
    engines.push(engine);
    const app = await resolveApp(engine, "qt-notes");
    const { window } = await resolveWindow(engine, app, {});
    const o = await observe(engine, app, window, { image: { maxWidth: 200 } });
    expect(o.screenshot).toMatchObject({ width: 200, scale: 0.5 });
    const shots = sb.requests().filter((r) => r.op === "screenshot");
    expect(shots.map((r) => r.args.max_width ?? null)).toEqual([200, null]);
    const fullPath = String(shots[1]!.args.path);
    expect(fake.runs()[1]![0]).toBe(fullPath);
    expect(existsSync(fullPath)).toBe(false);
    expect(existsSync(o.screenshot!.path)).toBe(true);
    expect(o.elements.find((e) => e.title === "Open Report")!.bounds).toEqual({ x: 1920, y: 640, width: 134, height: 18 });
    expect(o.ocr).toMatchObject({ automatic: true, lines: 3 });
    // Nothing of the second capture is left in the store.
    expect(readdirSync(join(sb.stateDir, "screenshots")).filter((f) => f.includes("ocr"))).toEqual([]);
  });
});
