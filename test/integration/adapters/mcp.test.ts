// `deckhand mcp` driven by the MCP SDK's own client over stdio.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BUN, cleanupSandboxes, FIXTURE_WINDOW, isAlive, MAIN, REPO, sandbox, waitFor, type Sandbox } from "../harness.ts";
import { fakeScreenPoint, mutations, PNG_HELPER, pngFromBase64 } from "./common.ts";

afterAll(cleanupSandboxes);

const open: { client: Client; transport: StdioClientTransport }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) await o.client.close().catch(() => undefined);
});

async function connect(sb: Sandbox, flags: string[] = [], mode?: string): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string; protocolErrors: Error[] }> {
  const env = Object.fromEntries(Object.entries(sb.env({ DECKHAND_FAKE_MODE: mode })).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", PNG_HELPER, ...flags], env, cwd: REPO, stderr: "pipe" });
  let err = "";
  transport.stderr?.on("data", (d) => (err += String(d)));
  const client = new Client({ name: "deckhand-test", version: "0.0.0" });
  const protocolErrors: Error[] = [];
  client.onerror = (e) => protocolErrors.push(e);
  await client.connect(transport);
  open.push({ client, transport });
  return { client, transport, stderr: () => err, protocolErrors };
}

type Content = { type: string; text?: string; data?: string; mimeType?: string };

describe("deckhand mcp", () => {
  it("lists a tool per command, with JSON Schemas derived from the command schemas", async () => {
    const { client } = await connect(sandbox());
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ["list_apps", "get_app_state", "click", "set_value", "type_text", "press_key", "hotkey", "scroll", "drag", "select_text", "perform_secondary_action", "screenshot", "run_program"]) {
      expect(names).toContain(n);
    }
    const click = tools.find((t) => t.name === "click")!;
    expect(click.inputSchema.type).toBe("object");
    expect(Object.keys(click.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["app", "elementIndex", "x", "y", "button"]));
    expect(click.inputSchema.required).toEqual(["app"]);
    expect(JSON.stringify(tools.find((t) => t.name === "run_program")!.inputSchema)).not.toContain("oneOf");
    expect(tools.find((t) => t.name === "list_apps")!.annotations?.readOnlyHint).toBe(true);
  });

  it("get_app_state: structured content (the envelope) plus a text summary with the tree, and the screenshot as an image", async () => {
    const { client } = await connect(sandbox());
    const r = await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app" } });
    expect(r.isError).toBe(false);
    const s = r.structuredContent as any;
    expect(s).toMatchObject({ schemaVersion: 1, ok: true, command: "get-app-state" });
    expect(s.result.snapshot.snapshotId).toMatch(/^cs_/);
    expect(s.result.window.windowId).toBe(FIXTURE_WINDOW);
    const content = r.content as Content[];
    expect(content[0]!.type).toBe("text");
    expect(content[0]!.text).toContain(`button "OK"`);
    expect(content[0]!.text).toContain(s.result.snapshot.snapshotId);
    const image = content.find((c) => c.type === "image")!;
    expect(image.mimeType).toBe("image/png");
    const img = pngFromBase64(image.data!);
    expect([img.width, img.height]).toEqual([800, 600]);
    expect(s.image).toMatchObject({ width: 800, height: 600, origin: { x: 10, y: 20 } });
  });

  it("screenshot returns image content the helper scaled to 1440 wide; the result describes that very PNG", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    const r = await client.callTool({ name: "screenshot", arguments: {} });
    expect(r.isError).toBe(false);
    const image = (r.content as Content[]).find((c) => c.type === "image")!;
    const img = pngFromBase64(image.data!);
    expect([img.width, img.height]).toEqual([1440, 810]);
    expect(fakeScreenPoint(img, 30, 60)).toEqual({ x: 40, y: 80 });
    expect((r.structuredContent as any).result.screenshot).toMatchObject({ width: 1440, height: 810, scale: 0.75, origin: { x: 0, y: 0 } });
    expect((r.structuredContent as any).image).toEqual({ width: 1440, height: 810, origin: { x: 0, y: 0 }, scaleX: 0.75, scaleY: 0.75 });
    expect(sb.requests().filter((q) => q.op === "screenshot").map((q) => q.args.max_width)).toEqual([1440]);
  });

  it("--max-width: an observation's screenshot is taken at that width (the window's size known, one capture)", async () => {
    const sb = sandbox();
    const { client } = await connect(sb, ["--max-width", "400"]);
    const r = await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app" } });
    expect(r.isError).toBe(false);
    const img = pngFromBase64((r.content as Content[]).find((c) => c.type === "image")!.data!);
    expect([img.width, img.height]).toEqual([400, 300]);
    expect((r.structuredContent as any).result.screenshot).toMatchObject({ width: 400, height: 300, scale: 0.5, origin: { x: 10, y: 20 } });
    // Image pixel (ix, iy) shows screen origin + (ix, iy) / scale, as the summary says.
    expect(fakeScreenPoint(img, 123, 45)).toEqual({ x: 10 + Math.floor(123.5 / 0.5), y: 20 + Math.floor(45.5 / 0.5) });
    expect((r.content as Content[])[0]!.text).toContain("image 400x300: screen x = 10 + image x / 0.5");
    expect(sb.requests().filter((q) => q.op === "screenshot").map((q) => q.args.max_width)).toEqual([400]);
  });

  it("a helper without screenshot.scale: screenshots at its own size, attached only when inside the caps, and said so when not", async () => {
    const sb = sandbox();
    const { client } = await connect(sb, [], "drop-cap:screenshot.scale");
    const state = await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app" } });
    expect(state.isError).toBe(false);
    const img = pngFromBase64((state.content as Content[]).find((c) => c.type === "image")!.data!);
    expect([img.width, img.height]).toEqual([800, 600]);
    const screen = await client.callTool({ name: "screenshot", arguments: {} });
    expect(screen.isError).toBe(false);
    expect((screen.content as Content[]).some((c) => c.type === "image")).toBe(false);
    expect((screen.content as Content[])[0]!.text).toMatch(/screenshot not attached: the 1920x1080 image is over the image caps, and the helper cannot scale screenshots \(screenshot.scale\)/);
    expect((screen.structuredContent as any).result.screenshot).toMatchObject({ width: 1920, height: 1080, scale: 1 });
    expect((screen.structuredContent as any).image).toBeUndefined();
  });

  it("click with an element index presses it (background, no foreground grant needed)", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", noScreenshot: true } });
    const r = await client.callTool({ name: "click", arguments: { app: "fixture-app", elementIndex: 1 } });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    expect((r.structuredContent as any).result).toMatchObject({ action: "click", delivery: "submitted", route: "accessibility", elementIndex: 1 });
    expect((r.content as Content[])[0]!.text).toContain("click: delivery submitted via accessibility");
    expect(sb.ops()).toContain("element_action");
  });

  it("--trace DIR (operator flag): a tool call's program is recorded, mode mcp", async () => {
    const sb = sandbox();
    const dir = join(sb.dir, "trace");
    const { client } = await connect(sb, ["--trace", dir]);
    await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", noScreenshot: true } });
    const r = await client.callTool({ name: "click", arguments: { app: "fixture-app", elementIndex: 1 } });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    const events = readFileSync(join(dir, "trace.jsonl"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(events.map((e) => e.type)).toEqual(["session", "program", "step", "program-end"]);
    expect(events[0]).toMatchObject({ mode: "mcp" });
    expect(events[2]).toMatchObject({ action: "click", status: "completed", receipt: { delivery: "submitted" } });
  });

  it("set_value and type_text take their text in the arguments", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", noScreenshot: true } });
    const r = await client.callTool({ name: "set_value", arguments: { app: "fixture-app", elementIndex: 3, value: "Ada" } });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    expect(sb.requests().find((q) => q.op === "element_action" && q.args.action === "set_value")?.args.text).toBe("Ada");
    const stdin = await client.callTool({ name: "set_value", arguments: { app: "fixture-app", elementIndex: 3, valueStdin: true } });
    expect(stdin.isError).toBe(true);
  });

  it("invalid input is an error result, and nothing reaches the desktop", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    const r = await client.callTool({ name: "click", arguments: { app: 5, elementIndex: -1 } });
    expect(r.isError).toBe(true);
    expect((r.content as Content[])[0]!.text).toMatch(/app|elementIndex/);
    const extra = await client.callTool({ name: "click", arguments: { app: "fixture-app", elementIndex: 1, allowForeground: true } });
    expect(extra.isError).toBe(true);
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("a deckhand refusal is an error result with the envelope as structured content", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    const r = await client.callTool({ name: "click", arguments: { app: "no-such-app", elementIndex: 1 } });
    expect(r.isError).toBe(true);
    expect((r.structuredContent as any).error.code).toBe("APP_NOT_FOUND");
    expect((r.content as Content[])[0]!.text).toMatch(/^APP_NOT_FOUND: /);
    const fg = await client.callTool({ name: "click", arguments: { app: "fixture-app", x: 500, y: 500 } });
    expect((fg.structuredContent as any).error.code).toBe("FOREGROUND_REQUIRED");
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("--allow-foreground is the operator's: a coordinate click then runs", async () => {
    const sb = sandbox();
    const { client } = await connect(sb, ["--allow-foreground"]);
    const r = await client.callTool({ name: "click", arguments: { app: "fixture-app", x: 500, y: 500 } });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    expect(sb.requests().find((q) => q.op === "input")?.args.steps).toEqual([{ kind: "click", x: 500, y: 500, button: "left", count: 1, modifiers: [] }]);
  });

  it("run_program runs the steps and returns receipts plus the final observation", async () => {
    const sb = sandbox();
    const { client } = await connect(sb);
    await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app", noScreenshot: true } });
    const r = await client.callTool({ name: "run_program", arguments: { app: "fixture-app", steps: [{ action: "set-value", elementIndex: 3, value: "x" }, { action: "click", elementIndex: 1 }], noScreenshot: true } });
    expect(r.isError, JSON.stringify(r.content)).toBe(false);
    const res = (r.structuredContent as any).result;
    expect(res.steps.map((s: any) => s.status)).toEqual(["completed", "completed"]);
    expect((r.content as Content[])[0]!.text).toContain("2/2 steps completed");
    expect((r.content as Content[])[0]!.text).toContain(`button "OK"`);
    const bad = await client.callTool({ name: "run_program", arguments: { app: "fixture-app", steps: [{ action: "teleport" }] } });
    expect(bad.isError).toBe(true);
  });

  it("stdout carries only the protocol, and the server exits with its client", async () => {
    const sb = sandbox();
    const { client, transport, stderr, protocolErrors } = await connect(sb);
    await client.callTool({ name: "list_apps", arguments: {} });
    await client.callTool({ name: "get_app_state", arguments: { app: "fixture-app" } });
    // Anything but JSON-RPC on stdout would surface here as a parse error.
    expect(protocolErrors).toEqual([]);
    const pid = transport.pid!;
    expect(isAlive(pid)).toBe(true);
    await client.close();
    open.length = 0;
    await waitFor(() => !isAlive(pid), "mcp server exit", 5000);
    expect(stderr()).not.toContain("fatal");
  });
});
