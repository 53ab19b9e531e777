// Set-of-marks through the CLI, MCP and adapter serve, against the fake
// helper (its screenshots are real PNGs, each pixel coloured by the screen
// point it shows: a pixel the marks did not paint must still show its own
// point, so the map is provably unchanged).
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BUN, cleanupSandboxes, cli, expectError, expectOk, FAKE, FIXTURE_WINDOW, MAIN, REPO, sandbox, ServeProcess, type Sandbox } from "./harness.ts";
import { decodePng } from "../../src/engine/png.ts";
import { inkOn, layoutMarks, markColour, markedElements, markScale, type PlacedMark } from "../../src/engine/marks.ts";
import { readLabel, rgbAt, type Pixels } from "../fixtures/images/read-label.ts";
import { fakeScreenPoint, pngFromBase64, pngFromDataUrl } from "./adapters/common.ts";

afterAll(cleanupSandboxes);

/** The fake fixture window's interactive elements: OK, Delete, Name, Password, Subscribe, and Homepage (a text field: a control role counts, whatever states it reports). */
const INTERACTIVE = [1, 2, 3, 4, 6, 7];

async function png(path: string): Promise<Pixels> {
  return await decodePng(readFileSync(path));
}

const inside = (r: { x0: number; y0: number; x1: number; y1: number }, x: number, y: number) => x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;

/**
 * The oracles of a marks image against its screenshot: same size; every
 * pixel that differs lies in a box band or a label; each box's pixels that
 * no other box or label covers carry its colour; each label reads back as
 * its element's index. Returns the layout.
 */
function checkMarks(shot: Pixels, marked: Pixels, placed: PlacedMark[]): void {
  expect([marked.width, marked.height]).toEqual([shot.width, shot.height]);
  const covered = (x: number, y: number, except?: PlacedMark) => placed.some((p) => p !== except && (p.edges.some((e) => inside(e, x, y)) || inside(p.label, x, y)));
  let changed = 0;
  for (let y = 0; y < shot.height; y++) {
    for (let x = 0; x < shot.width; x++) {
      const [a, b] = [rgbAt(shot, x, y), rgbAt(marked, x, y)];
      if (a[0] === b[0] && a[1] === b[1] && a[2] === b[2]) continue;
      changed++;
      if (!covered(x, y)) throw new Error(`pixel (${x}, ${y}) changed outside every box and label`);
    }
  }
  expect(changed).toBeGreaterThan(0);
  for (const p of placed) {
    let own = 0;
    for (const e of p.edges) {
      for (let y = e.y0; y < e.y1; y++) {
        for (let x = e.x0; x < e.x1; x++) {
          if (covered(x, y, p)) continue;
          expect(rgbAt(marked, x, y), `box ${p.index} at (${x}, ${y})`).toEqual([...p.colour]);
          own++;
        }
      }
    }
    expect(own, `box ${p.index} shows nowhere`).toBeGreaterThan(0);
    expect(readLabel(marked, p.label, inkOn(p.colour), markScale(marked.width, marked.height)), `label of ${p.index}`).toBe(String(p.index));
  }
}

/** The layout the marks image should have, from the stored snapshot (its nodes carry the interactive and compact flags). */
function expectedLayout(sb: Sandbox, snapshotId: string, shot: any, lastPosition?: number, format: "compact" | "full" = "compact"): PlacedMark[] {
  const stored = JSON.parse(readFileSync(`${sb.stateDir}/snapshots/${snapshotId}.json`, "utf8"));
  const page = { offset: 0, lastPosition: lastPosition ?? stored.nodes.length - 1, format };
  return layoutMarks(markedElements(stored, page, shot), shot.width, shot.height);
}

describe("get-app-state --marks", () => {
  it("writes <snapshot>-marks.png: the screenshot's size and map, one numbered box per interactive element, nothing else painted", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks", "--format", "compact"]), "get-app-state");
    const { screenshot, marks } = r;
    expect(r.marksError).toBeUndefined();
    expect(marks.path).toBe(screenshot.path.replace(/\.png$/, "-marks.png"));
    expect(marks.path.endsWith(`${r.snapshot.snapshotId}-marks.png`)).toBe(true);
    const { path: _a, method: _b, count, ...map } = marks;
    const { path: _c, method: _d, ...shotMap } = screenshot;
    expect(map).toEqual(shotMap);
    expect(marks.format).toBe("png");
    expect(count).toBe(INTERACTIVE.length);
    const [plain, marked] = [await png(screenshot.path), await png(marks.path)];
    const placed = expectedLayout(sb, r.snapshot.snapshotId, screenshot);
    expect(placed.map((p) => p.index)).toEqual(INTERACTIVE);
    checkMarks(plain, marked, placed);
    // OK (screen 30,40 100x24) in the window image at (10, 20): its box's top-left pixel is (20, 20).
    expect(rgbAt(marked, 20, 20)).toEqual([...markColour(1)]);
    expect(rgbAt(marked, 21, 30)).toEqual([...markColour(1)]);
    // A pixel nothing painted still shows its own screen point: the map did not move.
    expect(fakeScreenPoint({ width: marked.width, height: marked.height, data: rgbOnly(marked) }, 400, 300)).toEqual({ x: 410, y: 320 });
  });

  it("full format numbers the same interactive elements; a page cut by --max-nodes numbers only what it shows", async () => {
    const sb = sandbox();
    const full = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks", "--format", "full"]), "get-app-state");
    expect(full.marks.count).toBe(INTERACTIVE.length);
    // --max-nodes 3: three nodes read and shown (the page budget's own cut is tested on real apps: test/live/marks.test.ts).
    const cut = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks", "--format", "full", "--max-nodes", "3"]), "get-app-state");
    expect(cut.snapshot.truncated).toBe(true);
    // Nodes 0-2 shown: OK (1) and Delete (2).
    expect(cut.marks.count).toBe(2);
    const placed = expectedLayout(sb, cut.snapshot.snapshotId, cut.screenshot, 2, "full");
    expect(placed.map((p) => p.index)).toEqual([1, 2]);
    checkMarks(await png(cut.screenshot.path), await png(cut.marks.path), placed);
  });

  it("the number read off the image is the element index: clicking it presses that element", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks"]), "get-app-state");
    const marked = await png(r.marks.path);
    const placed = expectedLayout(sb, r.snapshot.snapshotId, r.screenshot);
    const sub = placed.find((p) => p.index === 6)!;
    const read = readLabel(marked, sub.label, inkOn(sub.colour), markScale(marked.width, marked.height));
    expect(read).toBe("6");
    const click = expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", read!, "--snapshot-id", r.snapshot.snapshotId]), "click");
    expect(click).toMatchObject({ delivery: "submitted", route: "accessibility", elementIndex: 6 });
    expect(sb.requests().find((q) => q.op === "element_action")!.args).toMatchObject({ locator: { name: "Subscribe" } });
  });

  it("an app without a tree: zero boxes, the image equals the screenshot", async () => {
    const sb = sandbox();
    sb.control({ toolkits: true });
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "canvas-app", "--marks"]), "get-app-state");
    expect(r.marks.count).toBe(0);
    const [a, b] = [await png(r.screenshot.path), await png(r.marks.path)];
    expect(Buffer.from(a.data).equals(Buffer.from(b.data))).toBe(true);
  });

  it("no screenshot: the observation stands, with marksError instead of marks", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks"], { mode: "fail-screenshot" }), "get-app-state");
    expect(r.screenshot).toBeNull();
    expect(r.marks).toBeUndefined();
    expect(r.marksError).toEqual({ code: "SCREENSHOT_FAILED", message: expect.stringContaining("no window image to draw the marks on") });
    expect(r.snapshot.snapshotId).toMatch(/^cs_/);
  });

  it("refusals before the helper is asked anything: --marks with --no-screenshot, with --image-format jpeg", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks", "--no-screenshot"]), "get-app-state", "INVALID_ARGUMENTS");
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--marks", "--image-format", "jpeg"]), "get-app-state", "INVALID_ARGUMENTS");
    expect(sb.ops()).toEqual([]);
  });

  it("without --marks nothing is drawn and no marks file is written", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app"]), "get-app-state");
    expect(r.marks).toBeUndefined();
    expect(existsSync(r.screenshot.path.replace(/\.png$/, "-marks.png"))).toBe(false);
  });
});

describe("screenshot --marks", () => {
  it("observes (a stored snapshot), returns snapshotId and marks beside the screenshot; the numbers are actionable", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--marks"]), "screenshot");
    expect(r).toMatchObject({ app: { name: "fixture-app" }, windowId: FIXTURE_WINDOW, snapshotId: expect.stringMatching(/^cs_/), marks: { count: INTERACTIVE.length, width: 800, height: 600 } });
    expect(sb.ops()).toContain("get_tree");
    const placed = expectedLayout(sb, r.snapshotId, r.screenshot);
    checkMarks(await png(r.screenshot.path), await png(r.marks.path), placed);
    const click = expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1", "--snapshot-id", r.snapshotId]), "click");
    expect(click).toMatchObject({ snapshotId: r.snapshotId, elementIndex: 1, delivery: "submitted" });
  });

  it("without --app: INVALID_ARGUMENTS (marks need one app's tree), the helper never asked", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["screenshot", "--marks"]), "screenshot", "INVALID_ARGUMENTS");
    expect(e.message).toMatch(/--marks needs --app/);
    expect(sb.ops()).toEqual([]);
  });

  it("the window cannot be captured: SCREENSHOT_FAILED", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--marks"], { mode: "fail-screenshot" }), "screenshot", "SCREENSHOT_FAILED");
  });

  it("a policy-denied app (xterm: a terminal) is refused before anything of it is read", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["screenshot", "--app", "xterm", "--marks"]), "screenshot", "POLICY_DENIED");
    expect(sb.ops()).not.toContain("get_tree");
    expect(sb.ops()).not.toContain("screenshot");
  });

  it("a browser on a blocked page: BLOCKED_URL, no image and no marks written", async () => {
    const sb = sandbox();
    sb.control({ browser: true });
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, 'blocked_urls = ["*://*.blocked.example/*"]\n');
    expectError(await cli(sb, ["screenshot", "--app", "firefox-esr", "--marks", "--policy", policy]), "screenshot", "BLOCKED_URL");
    expect(sb.stateFiles().filter((f) => f.path.endsWith(".png"))).toEqual([]);
  });
});

function rgbOnly(p: Pixels): Uint8Array {
  if (p.channels === 3) return p.data;
  const out = new Uint8Array(p.width * p.height * 3);
  for (let i = 0; i < p.width * p.height; i++) out.set(p.data.subarray(i * p.channels, i * p.channels + 3), i * 3);
  return out;
}

describe("adapters", () => {
  const open: { client: Client }[] = [];
  const procs: ServeProcess[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) await o.client.close().catch(() => undefined);
    for (const p of procs.splice(0)) p.kill();
  });

  it("MCP get_app_state / screenshot with marks: true attach the marks PNG (same size and map)", async () => {
    const sb = sandbox();
    const env = Object.fromEntries(Object.entries(sb.env({})).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE, "--max-width", "400"], env, cwd: REPO, stderr: "pipe" });
    const client = new Client({ name: "deckhand-test", version: "0.0.0" });
    await client.connect(transport);
    open.push({ client });
    for (const tool of ["get_app_state", "screenshot"]) {
      const r = await client.callTool({ name: tool, arguments: { app: "fixture-app", marks: true } });
      expect(r.isError, JSON.stringify(r.content)).toBe(false);
      const s = r.structuredContent as any;
      const marks = s.result.marks;
      // Scaled by the helper to the MCP caps (--max-width 400): the marks are drawn on that image.
      expect([marks.width, marks.height, marks.scale]).toEqual([400, 300, 0.5]);
      const content = r.content as { type: string; text?: string; data?: string }[];
      const image = content.find((c) => c.type === "image")!;
      const attached = Buffer.from(image.data!, "base64");
      expect(attached.equals(readFileSync(marks.path))).toBe(true);
      expect(s.image).toEqual({ width: 400, height: 300, origin: { x: 10, y: 20 }, scaleX: 0.5, scaleY: 0.5 });
      expect(content[0]!.text).toContain(`${marks.count} numbered boxes`);
      const img = pngFromBase64(image.data!);
      // OK at screen (30, 40): image ((30 - 10) / 2, (40 - 20) / 2) = (10, 10) carries its box colour.
      expect([...img.data.subarray((10 * 400 + 10) * 3, (10 * 400 + 10) * 3 + 3)]).toEqual([...markColour(1)]);
    }
    // Without marks: the plain screenshot is attached.
    const plain = await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app" } });
    const img = pngFromBase64((plain.content as any[]).find((c) => c.type === "image").data);
    // Pixel (10, 10) at scale 0.5 shows screen (floor(10 + 10.5 / 0.5), floor(20 + 10.5 / 0.5)).
    expect(fakeScreenPoint(img, 10, 10)).toEqual({ x: 31, y: 41 });
  });

  it("serve --adapter openai --marks: the screenshot handed to the model is the marks image, with the same map", async () => {
    const sb = sandbox();
    const p = new ServeProcess(sb, ["--adapter", "openai", "--app", "fixture-app", "--marks"]);
    procs.push(p);
    const r = await p.request({ id: "s1", call: { type: "computer_call", call_id: "call_1", action: { type: "screenshot" }, pending_safety_checks: [] } } as never);
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.image.map).toMatchObject({ width: 800, height: 600, origin: { x: 10, y: 20 }, scaleX: 1, scaleY: 1, windowId: FIXTURE_WINDOW });
    expect(r.image.marks).toEqual({ count: INTERACTIVE.length, snapshotId: expect.stringMatching(/^cs_/) });
    const img = pngFromDataUrl(r.output.output.image_url);
    expect([...img.data.subarray((20 * 800 + 20) * 3, (20 * 800 + 20) * 3 + 3)]).toEqual([...markColour(1)]);
    expect(fakeScreenPoint(img, 400, 300)).toEqual({ x: 410, y: 320 });
    // The numbers are the snapshot's element indices: a native request in the same session acts on one.
    const click = await p.request({ id: "n1", adapter: "native", command: "click", args: { app: "fixture-app", elementIndex: 1, snapshotId: r.image.marks.snapshotId } } as never);
    expect(click.ok, JSON.stringify(click.error)).toBe(true);
    expect(sb.requests().find((q) => q.op === "element_action")!.args).toMatchObject({ locator: { name: "OK" } });
  });

  it("serve --adapter anthropic without --marks: the plain screenshot, no marks in the image info", async () => {
    const sb = sandbox();
    const p = new ServeProcess(sb, ["--adapter", "anthropic", "--app", "fixture-app"]);
    procs.push(p);
    const r = await p.request({ id: "s1", call: { type: "tool_use", id: "toolu_1", name: "computer", input: { action: "screenshot" } } } as never);
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.image.marks).toBeUndefined();
    expect(sb.ops()).not.toContain("get_tree");
  });
});
