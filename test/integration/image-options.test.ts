// Issue 14, screenshot options through the CLI and MCP with the scripted
// helper (test/fixtures/helpers/fake-helper.mjs): what is asked of the helper
// (region in screen pixels, max_width, format, quality), the file deckhand
// names (extension of the format), the image-to-screen map in the result,
// and the refusals: a region showing nothing of the window, window
// coordinates without a window, JPEG/WebP from a helper without
// screenshot.formats (drop-cap), all before anything is captured. The fake's
// PNG pixels say which screen point they show, so a crop is checked by its
// pixels; its JPEG / WebP files are that format's header before the PNG
// (test/live/image-options.test.ts decodes the real helper's files).
import { readFileSync } from "node:fs";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BUN, cleanupSandboxes, cli, expectError, expectOk, FAKE, FIXTURE_WINDOW, MAIN, REPO, sandbox, type Sandbox } from "./harness.ts";
import { decodePng, fakeScreenPoint, pngSize } from "./adapters/png-read.ts";

afterAll(cleanupSandboxes);

const shots = (sb: Sandbox) => sb.requests().filter((r) => r.op === "screenshot");
/** The fake fixture window's bounds (fake-helper.mjs windows()). */
const WIN = { x: 10, y: 20, width: 800, height: 600 };

describe("screenshot --region", () => {
  it("window coordinates (the default with an app): the helper is asked for the screen rectangle; the PNG shows exactly it", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "15,25,120,60"]), "screenshot");
    expect(shots(sb)).toHaveLength(1);
    expect(shots(sb)[0]!.args).toMatchObject({ window_id: FIXTURE_WINDOW, region: { x: 25, y: 45, width: 120, height: 60 } });
    expect(shots(sb)[0]!.args.format).toBeUndefined();
    expect(r.windowId).toBe(FIXTURE_WINDOW);
    expect(r.screenshot).toMatchObject({ width: 120, height: 60, scale: 1, origin: { x: 25, y: 45 }, format: "png", screenRect: { x: 25, y: 45, width: 120, height: 60 } });
    const img = decodePng(readFileSync(r.screenshot.path));
    expect(fakeScreenPoint(img, 0, 0)).toEqual({ x: 25, y: 45 });
    expect(fakeScreenPoint(img, 119, 59)).toEqual({ x: 144, y: 104 });
  });

  it("--region-coords screen: the rectangle as given; reaching out of the window it is clipped to it", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "0,0,50,40", "--region-coords", "screen"]), "screenshot");
    expect(shots(sb)[0]!.args.region).toEqual({ x: 10, y: 20, width: 40, height: 20 });
    expect(r.screenshot.screenRect).toEqual({ x: 10, y: 20, width: 40, height: 20 });
  });

  it("a region showing nothing of the window: INVALID_ARGUMENTS region-outside-window, nothing captured", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "800,0,10,10"]), "screenshot", "INVALID_ARGUMENTS");
    expect(e.details).toMatchObject({ flag: "--region", reason: "region-outside-window", regionCoords: "window", windowWidth: 800, windowHeight: 600 });
    const e2 = expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "0,0,10,20", "--region-coords", "screen"]), "screenshot", "INVALID_ARGUMENTS");
    expect(e2.details.reason).toBe("region-outside-window");
    expect(shots(sb)).toEqual([]);
  });

  it("policy first: a denied app's window is refused POLICY_DENIED, its bounds are not described", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["screenshot", "--app", "xterm", "--region", "5000,5000,10,10"]), "screenshot", "POLICY_DENIED");
    expect(JSON.stringify(e)).not.toContain("windowWidth");
    expect(shots(sb)).toEqual([]);
  });

  it("--window-index picks the window the region is relative to, and the capture is of that window", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--window-index", "1", "--region", "0,0,30,30"]), "screenshot");
    expect(r.windowId).toBe(0x200002);
    expect(shots(sb)[0]!.args).toMatchObject({ window_id: 0x200002, region: { x: 900, y: 20, width: 30, height: 30 } });
  });

  it("the whole screen: screen coordinates; window coordinates need --app; a region off the screen is INVALID_ARGUMENTS from the helper's clip", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--region", "100,200,300,100"]), "screenshot");
    const req = shots(sb).at(-1)!;
    expect(req.args).toMatchObject({ window_id: 0, region: { x: 100, y: 200, width: 300, height: 100 } });
    expect(r.screenshot).toMatchObject({ origin: { x: 100, y: 200 }, screenRect: { x: 100, y: 200, width: 300, height: 100 } });
    const n = shots(sb).length;
    const e = expectError(await cli(sb, ["screenshot", "--region", "0,0,10,10", "--region-coords", "window"]), "screenshot", "INVALID_ARGUMENTS");
    expect(e.details.reason).toBe("region-needs-window");
    expect(shots(sb)).toHaveLength(n);
    const off = expectError(await cli(sb, ["screenshot", "--region", "5000,5000,10,10"]), "screenshot", "INVALID_ARGUMENTS");
    expect(off.details).toMatchObject({ flag: "--region", reason: "region-outside-screen" });
  });

  it("--window-id without --app is still refused first", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["screenshot", "--window-id", "5", "--region", "0,0,10,10"]), "screenshot", "INVALID_ARGUMENTS");
    expect(shots(sb)).toEqual([]);
  });
});

describe("screenshot --max-width, --image-format, --quality", () => {
  it("--max-width: the helper scales; the map reads screen = origin + image / scale", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--max-width", "200"]), "screenshot");
    expect(shots(sb)[0]!.args.max_width).toBe(200);
    expect(r.screenshot).toMatchObject({ width: 200, height: 150, scale: 0.25, origin: { x: 10, y: 20 }, screenRect: WIN });
    const img = decodePng(readFileSync(r.screenshot.path));
    // Image pixel (50, 30) shows screen point origin + (50.5, 30.5) / 0.25.
    expect(fakeScreenPoint(img, 50, 30)).toEqual({ x: 10 + 202, y: 20 + 122 });
  });

  it("region and width together: the crop, then the scale", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "100,100,400,200", "--max-width", "100"]), "screenshot");
    expect(shots(sb)[0]!.args).toMatchObject({ region: { x: 110, y: 120, width: 400, height: 200 }, max_width: 100 });
    expect(r.screenshot).toMatchObject({ width: 100, height: 50, scale: 0.25, screenRect: { x: 110, y: 120, width: 400, height: 200 } });
  });

  it("JPEG and WebP: the helper is asked for the format and quality; the file has the format's extension and bytes; the result names it", async () => {
    const sb = sandbox();
    const j = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--image-format", "jpeg", "--quality", "50"]), "screenshot");
    expect(shots(sb)[0]!.args).toMatchObject({ format: "jpeg", quality: 50 });
    expect(j.screenshot.format).toBe("jpeg");
    expect(j.screenshot.path).toMatch(/\/screenshots\/shot_[0-9a-z]+_[0-9a-z]+\.jpg$/);
    expect([...readFileSync(j.screenshot.path).subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const w = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--image-format", "webp"]), "screenshot");
    expect(shots(sb)[1]!.args.format).toBe("webp");
    expect(shots(sb)[1]!.args.quality).toBeUndefined();
    expect(w.screenshot).toMatchObject({ format: "webp", width: 800, height: 600 });
    expect(w.screenshot.path).toMatch(/\.webp$/);
    expect(readFileSync(w.screenshot.path).toString("latin1", 0, 4)).toBe("RIFF");
    // The whole screen too.
    const s = expectOk(await cli(sb, ["screenshot", "--image-format", "jpeg", "--max-width", "480"]), "screenshot");
    expect(shots(sb).at(-1)!.args).toMatchObject({ window_id: 0, format: "jpeg", max_width: 480 });
    expect(s.screenshot).toMatchObject({ format: "jpeg", width: 480, scale: 0.25 });
    expect(s.screenshot.path).toMatch(/\.jpg$/);
  });

  it("png named explicitly is sent as png; --quality with png is refused", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--image-format", "png"]), "screenshot");
    expect(shots(sb)[0]!.args.format).toBe("png");
    expect(expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--quality", "40"]), "screenshot", "INVALID_ARGUMENTS").details.flag).toBe("--quality");
    expect(shots(sb)).toHaveLength(1);
  });
});

describe("an older helper (no screenshot.formats)", () => {
  const mode = "drop-cap:screenshot.formats";

  it("screenshot and get-app-state --image-format jpeg/webp: ACTION_UNSUPPORTED naming the capability, nothing captured", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--image-format", "webp"], { mode }), "screenshot", "ACTION_UNSUPPORTED");
    expect(e.details).toMatchObject({ capability: "screenshot.formats", flag: "--image-format" });
    expect(e.message).toContain("writes PNG only");
    expectError(await cli(sb, ["screenshot", "--image-format", "jpeg"], { mode }), "screenshot", "ACTION_UNSUPPORTED");
    const g = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--image-format", "jpeg"], { mode }), "get-app-state", "ACTION_UNSUPPORTED");
    expect(g.details.capability).toBe("screenshot.formats");
    expect(shots(sb)).toEqual([]);
  });

  it("PNG still works, crop and all; the result says png though the helper named no format", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot", "--app", "fixture-app", "--region", "0,0,100,100"], { mode }), "screenshot");
    expect(r.screenshot).toMatchObject({ format: "png", screenRect: { x: 10, y: 20, width: 100, height: 100 } });
    expect(r.screenshot.path).toMatch(/\.png$/);
  });
});

describe("a helper that writes another format than asked for", () => {
  it("is SCREENSHOT_FAILED naming both formats, and its file is not kept", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["screenshot", "--app", "fixture-app", "--image-format", "webp"], { mode: "ignore-format" }), "screenshot", "SCREENSHOT_FAILED");
    expect(e.message).toContain("wrote png where webp was asked for");
    expect(shots(sb)).toHaveLength(1);
    expect(sb.stateFiles().filter((f) => f.path.includes("/screenshots/"))).toEqual([]);
  });
});

describe("get-app-state image options", () => {
  it("region, format and quality reach the window's capture; the snapshot's screenshot carries the map", async () => {
    const sb = sandbox();
    const s = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--region", "20,10,300,200", "--image-format", "webp", "--quality", "30"]), "get-app-state");
    expect(shots(sb)[0]!.args).toMatchObject({ window_id: FIXTURE_WINDOW, region: { x: 30, y: 30, width: 300, height: 200 }, format: "webp", quality: 30 });
    expect(s.screenshot).toMatchObject({ format: "webp", origin: { x: 30, y: 30 }, screenRect: { x: 30, y: 30, width: 300, height: 200 } });
    expect(s.screenshot.path).toMatch(new RegExp(`/${s.snapshot.snapshotId}\\.webp$`));
    // The tree is the whole window's: the region crops the image only.
    expect(s.snapshot.elementCount).toBeGreaterThan(3);
  });

  it("--max-width scales the snapshot's image; a region outside the window is refused before anything is read", async () => {
    const sb = sandbox();
    const s = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--max-width", "400"]), "get-app-state");
    expect(s.screenshot).toMatchObject({ width: 400, scale: 0.5, screenRect: WIN });
    const n = sb.requests().length;
    const e = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--region", "900,0,5,5"]), "get-app-state", "INVALID_ARGUMENTS");
    expect(e.details.reason).toBe("region-outside-window");
    expect(sb.requests().slice(n).filter((r) => r.op === "get_tree" || r.op === "screenshot")).toEqual([]);
  });

  it("--no-screenshot with an image flag is a conflict", async () => {
    const sb = sandbox();
    expect(expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--max-width", "100"]), "get-app-state", "INVALID_ARGUMENTS").details.conflictsWith).toBe("--max-width");
  });
});

describe("MCP: the image content's MIME type is the file's format", () => {
  const open: Client[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close().catch(() => undefined);
  });
  async function connect(sb: Sandbox, flags: string[] = []): Promise<Client> {
    const env = Object.fromEntries(Object.entries(sb.env()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE, ...flags], env, cwd: REPO, stderr: "pipe" });
    const client = new Client({ name: "deckhand-test", version: "0.0.0" });
    await client.connect(transport);
    open.push(client);
    return client;
  }
  type Content = { type: string; data?: string; mimeType?: string };
  const image = (r: Record<string, unknown>) => (r.content as Content[]).find((c) => c.type === "image")!;

  it("screenshot as JPEG, get_app_state as WebP, PNG by default", async () => {
    const sb = sandbox();
    const client = await connect(sb);
    const j = await client.callTool({ name: "screenshot", arguments: { app: "fixture-app", imageFormat: "jpeg", quality: 70 } });
    expect(j.isError).toBe(false);
    expect(image(j).mimeType).toBe("image/jpeg");
    expect([...Buffer.from(image(j).data!, "base64").subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect((j.structuredContent as any).result.screenshot.format).toBe("jpeg");
    const w = await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", imageFormat: "webp" } });
    expect(image(w).mimeType).toBe("image/webp");
    const p = await client.callTool({ name: "screenshot", arguments: { app: "fixture-app" } });
    expect(image(p).mimeType).toBe("image/png");
  });

  it("a tool's --max-width and region live under the server's caps: the smaller width wins", async () => {
    const sb = sandbox();
    const client = await connect(sb, ["--max-width", "300"]);
    const small = await client.callTool({ name: "screenshot", arguments: { app: "fixture-app", maxWidth: 200 } });
    expect((small.structuredContent as any).result.screenshot.width).toBe(200);
    const big = await client.callTool({ name: "screenshot", arguments: { app: "fixture-app", maxWidth: 600, region: "0,0,400,300" } });
    const shot = (big.structuredContent as any).result.screenshot;
    expect(shot).toMatchObject({ width: 300, origin: { x: 10, y: 20 }, screenRect: { x: 10, y: 20, width: 400, height: 300 } });
    expect(pngSize(Buffer.from(image(big).data!, "base64"))).toEqual({ width: 300, height: 225 });
    const widths = shots(sb).map((r) => r.args.max_width);
    expect(widths).toEqual([200, 300]);
  });
});
