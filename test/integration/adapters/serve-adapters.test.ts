// `deckhand serve --adapter openai|anthropic` (and per request) against the
// scripted fake helper, whose screenshots are real PNGs of the reported size,
// cropped and scaled as the screenshot op asks (region, max_width), each
// pixel coloured by the screen point it shows: a point the model picks in
// the image must map to the very screen point that pixel shows.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cleanupSandboxes, FIXTURE_WINDOW, REPO, sandbox, ServeProcess, type Sandbox } from "../harness.ts";
import { fakeScreenPoint, mutations, pngFromBase64, pngFromDataUrl } from "./common.ts";

afterAll(cleanupSandboxes);

const openaiFixtures = JSON.parse(readFileSync(join(REPO, "test", "fixtures", "vendor", "openai.json"), "utf8"));

const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});

function serve(sb: Sandbox, args: string[], mode?: string): ServeProcess {
  const p = new ServeProcess(sb, args, { mode });
  procs.push(p);
  return p;
}

/** The screenshot requests the helper got: what was asked of it. */
const shots = (sb: Sandbox) => sb.requests().filter((q) => q.op === "screenshot").map((q) => q.args);

let n = 0;
async function call(p: ServeProcess, body: Record<string, unknown>): Promise<any> {
  const id = `r${++n}`;
  return await p.request({ id, ...body } as never);
}

const cc = (action: unknown, extra: Record<string, unknown> = {}) => ({ call: { type: "computer_call", call_id: `call_${++n}`, action, pending_safety_checks: [], ...extra } });
const tu = (input: unknown) => ({ call: { type: "tool_use", id: `toolu_${++n}`, name: "computer", input } });

describe("serve --adapter openai", () => {
  it("a coordinate before any screenshot: SCREENSHOT_REQUIRED, nothing dispatched", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    const r = await call(p, cc({ type: "click", button: "left", x: 5, y: 5 }));
    expect(r).toMatchObject({ ok: false, command: "computer", adapter: "openai", output: null, error: { code: "SCREENSHOT_REQUIRED" } });
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("screenshot of the target window: a computer_call_output with a real PNG and its map", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app"]);
    const r = await call(p, cc({ type: "screenshot" }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(Object.keys(r.output).sort()).toEqual(["call_id", "output", "type"]);
    expect(r.output.type).toBe("computer_call_output");
    expect(r.output.output.type).toBe("computer_screenshot");
    const img = pngFromDataUrl(r.output.output.image_url);
    expect([img.width, img.height]).toEqual([800, 600]);
    expect(fakeScreenPoint(img, 100, 7)).toEqual({ x: 110, y: 27 }); // the window at 1:1
    expect(r.image.map).toMatchObject({ width: 800, height: 600, origin: { x: 10, y: 20 }, scaleX: 1, scaleY: 1, windowId: FIXTURE_WINDOW, app: "fixture-app" });
    // The helper was asked for the image caps' width; never up, so the window came at its own size.
    expect(shots(sb)).toEqual([expect.objectContaining({ window_id: FIXTURE_WINDOW, max_width: 1440 })]);
    expect(shots(sb)[0]).not.toHaveProperty("region");
  });

  it("click at an image pixel: mapped to the screen, run as a program (background press of the element under it)", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app"]);
    await call(p, cc({ type: "screenshot" }));
    const r = await call(p, cc({ type: "click", button: "left", x: 30, y: 30 }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.steps).toEqual([{ action: "click", x: 40, y: 50, button: "left" }]);
    expect(r.receipt.steps[0]).toMatchObject({ status: "completed", delivery: "submitted", route: "accessibility" });
    expect(r.output.type).toBe("computer_call_output");
    const hit = sb.requests().find((q) => q.op === "hit_test");
    expect(hit?.args).toEqual({ x: 40, y: 50 });
    expect(sb.requests().find((q) => q.op === "element_action")?.args).toMatchObject({ window_id: FIXTURE_WINDOW, action: "click" });
  });

  it("a point outside the last screenshot: COORDINATE_OUT_OF_BOUNDS, nothing dispatched", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, cc({ type: "screenshot" }));
    const r = await call(p, cc({ type: "click", button: "left", x: 800, y: 0 }));
    expect(r.error.code).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(r.error.details).toMatchObject({ x: 800, y: 0, width: 800, height: 600 });
    const edge = await call(p, cc({ type: "double_click", x: 799, y: 599 }));
    expect(edge.ok, JSON.stringify(edge.error)).toBe(true);
    expect(edge.steps).toEqual([{ action: "click", x: 809, y: 619, button: "left", count: 2 }]);
    expect(sb.requests().filter((q) => q.op === "input").map((q) => q.args.steps)).toEqual([[{ kind: "click", x: 809, y: 619, button: "left", count: 2, modifiers: [] }]]);
  });

  it("foreground input without the operator's grant is refused by the executor, as for native commands", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app"]);
    const r = await call(p, cc({ type: "type", text: "hello" }));
    expect(r).toMatchObject({ ok: false, error: { code: "FOREGROUND_REQUIRED" } });
    // The whole program is refused before any step runs (validated up front).
    expect(r.receipt?.steps?.some((s: any) => s.status === "completed") ?? false).toBe(false);
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("batched actions[] run as one program; keypress names become xdotool names", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, cc({ type: "screenshot" }));
    const r = await call(p, {
      call: {
        type: "computer_call",
        call_id: "call_batch",
        actions: [
          { type: "click", button: "right", x: 400, y: 300 },
          { type: "type", text: "deckhand" },
          { type: "keypress", keys: ["CTRL", "S"] },
          { type: "drag", path: [{ x: 0, y: 0 }, { x: 10, y: 10 }] },
        ],
        pending_safety_checks: [],
      },
    });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.receipt.steps.map((s: any) => s.status)).toEqual(["completed", "completed", "completed", "completed"]);
    expect(r.output.call_id).toBe("call_batch");
    // Drags carry short pauses between points (toolkits compress bursts); the pointer path is what matters here.
    const inputs = sb.requests().filter((q) => q.op === "input").map((q) => (q.args.steps as any[]).filter((s: any) => s.kind !== "wait"));
    expect(inputs).toEqual([
      [{ kind: "click", x: 410, y: 320, button: "right", count: 1, modifiers: [] }],
      [{ kind: "type", text: "deckhand" }],
      [{ kind: "tap", keys: ["ctrl", "s"], repeat: 1 }],
      [{ kind: "move", x: 10, y: 20 }, { kind: "button", button: "left", down: true }, { kind: "move", x: 20, y: 30 }, { kind: "button", button: "left", down: false }],
    ]);
  });

  it("pending_safety_checks: CONFIRM_REQUIRED until acknowledged, then echoed in the output", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app"]);
    await call(p, cc({ type: "screenshot" }));
    const flagged = openaiFixtures.safety_check_call;
    const refused = await call(p, { call: flagged });
    expect(refused.error.code).toBe("CONFIRM_REQUIRED");
    expect(refused.error.details.codes).toBe("malicious_instructions");
    expect(mutations(sb.ops())).toEqual([]);
    const acked = await call(p, { call: flagged, acknowledged_safety_checks: [{ id: "cu_sc_67cb" }] });
    expect(acked.ok, JSON.stringify(acked.error)).toBe(true);
    expect(acked.output.acknowledged_safety_checks).toEqual(flagged.pending_safety_checks);
  });

  it("without an app: the whole screen, scaled by the helper to 1440 wide, each pixel showing where the map says", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai"]);
    const r = await call(p, cc({ type: "screenshot" }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    const img = pngFromDataUrl(r.output.output.image_url);
    expect([img.width, img.height]).toEqual([1440, 810]);
    expect(r.image).toMatchObject({ width: 1440, height: 810 });
    expect(r.image.map).toMatchObject({ windowId: 0, app: null, origin: { x: 0, y: 0 }, screenWidth: 1920, screenHeight: 1080, scaleX: 0.75, scaleY: 0.75 });
    expect(shots(sb)).toEqual([expect.objectContaining({ window_id: 0, max_width: 1440 })]);
    // Image pixel 30 covers screen x [40, 41.33): it shows screen pixel 40.
    expect(fakeScreenPoint(img, 30, 60)).toEqual({ x: 40, y: 80 });
    expect(fakeScreenPoint(img, 1439, 809)).toEqual({ x: 1919, y: 1079 });
    // Actions need a target app.
    const click = await call(p, cc({ type: "click", button: "left", x: 1, y: 1 }));
    expect(click.error.code).toBe("INVALID_ARGUMENTS");
    expect(click.error.details.field).toBe("app");
  });

  it("--max-width is honoured", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--max-width", "400"]);
    const r = await call(p, cc({ type: "screenshot" }));
    const img = pngFromDataUrl(r.output.output.image_url);
    expect([img.width, img.height]).toEqual([400, 225]);
    expect(r.image.map).toMatchObject({ width: 400, height: 225, scaleX: 400 / 1920 });
  });

  it("the window of the last screenshot is gone: SCREENSHOT_REQUIRED", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, cc({ type: "screenshot" }));
    sb.control({ goneWindows: [FIXTURE_WINDOW] });
    const r = await call(p, cc({ type: "click", button: "left", x: 5, y: 5 }));
    expect(r.error.code).toBe("SCREENSHOT_REQUIRED");
    expect(r.error.details.reason).toBe("window-gone");
    expect(mutations(sb.ops())).toEqual([]);
  });

  it("unknown action: INVALID_ARGUMENTS naming it; move is foreground input", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app"]);
    const bad = await call(p, cc({ type: "teleport" }));
    expect(bad.error.code).toBe("INVALID_ARGUMENTS");
    expect(bad.error.message).toContain("teleport");
    await call(p, cc({ type: "screenshot" }));
    const move = await call(p, cc({ type: "move", x: 1, y: 1 }));
    expect(move.error.code).toBe("FOREGROUND_REQUIRED");
  });
});

describe("serve --adapter anthropic, and per request", () => {
  it("tool_use screenshot -> tool_result with a base64 image block", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app"]);
    const r = await call(p, tu({ action: "screenshot" }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.output.type).toBe("tool_result");
    expect(r.output.tool_use_id).toMatch(/^toolu_/);
    expect(r.output.content).toHaveLength(1);
    expect(r.output.content[0]).toMatchObject({ type: "image", source: { type: "base64", media_type: "image/png" } });
    const img = pngFromBase64(r.output.content[0].source.data);
    expect([img.width, img.height]).toEqual([800, 600]);
  });

  it("left_click, key ctrl+s, scroll: mapped and run; errors come back as is_error tool_results", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--allow-foreground"]);
    const early = await call(p, tu({ action: "left_click", coordinate: [30, 30] }));
    expect(early.error.code).toBe("SCREENSHOT_REQUIRED");
    expect(early.output).toMatchObject({ type: "tool_result", is_error: true, content: [{ type: "text", text: expect.stringContaining("SCREENSHOT_REQUIRED") }] });
    await call(p, tu({ action: "screenshot" }));
    const click = await call(p, tu({ action: "left_click", coordinate: [30, 30] }));
    expect(click.ok, JSON.stringify(click.error)).toBe(true);
    expect(click.receipt.steps[0].route).toBe("accessibility");
    const key = await call(p, tu({ action: "key", text: "ctrl+s" }));
    expect(key.ok, JSON.stringify(key.error)).toBe(true);
    const scroll = await call(p, tu({ action: "scroll", coordinate: [100, 100], scroll_direction: "up", scroll_amount: 2 }));
    expect(scroll.ok, JSON.stringify(scroll.error)).toBe(true);
    const triple = await call(p, tu({ action: "triple_click", coordinate: [700, 500], text: "shift" }));
    expect(triple.ok, JSON.stringify(triple.error)).toBe(true);
    // Drags carry short pauses between points (toolkits compress bursts); the pointer path is what matters here.
    const inputs = sb.requests().filter((q) => q.op === "input").map((q) => (q.args.steps as any[]).filter((s: any) => s.kind !== "wait"));
    expect(inputs).toEqual([
      [{ kind: "tap", keys: ["ctrl", "s"], repeat: 1 }],
      [{ kind: "scroll", x: 110, y: 120, dx: 0, dy: -2 }],
      [{ kind: "click", x: 710, y: 520, button: "left", count: 3, modifiers: ["shift"] }],
    ]);
  });

  it("zoom: the helper crops the region at the capture's own resolution; the screenshot's map is kept", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app"]);
    const shot = await call(p, tu({ action: "screenshot" }));
    const r = await call(p, tu({ action: "zoom", region: [100, 50, 300, 200] }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    const img = pngFromBase64(r.output.content[0].source.data);
    // 200x150 screen pixels, never enlarged: the helper does not scale up.
    expect([img.width, img.height]).toEqual([200, 150]);
    expect(r.image).toMatchObject({ width: 200, height: 150, zoom: { x: 110, y: 70, width: 200, height: 150 } });
    // Image pixel (0, 0) shows screen pixel (110, 70): the region's corner in the 1:1 screenshot at (10, 20).
    expect(fakeScreenPoint(img, 0, 0)).toEqual({ x: 110, y: 70 });
    expect(fakeScreenPoint(img, 199, 149)).toEqual({ x: 309, y: 219 });
    expect(shots(sb)[1]).toMatchObject({ window_id: FIXTURE_WINDOW, region: { x: 110, y: 70, width: 200, height: 150 } });
    expect(shots(sb)[1]!.max_width).toBeGreaterThanOrEqual(200);
    expect(r.image.map.capturedAt).toBe(shot.image.map.capturedAt);
    const outside = await call(p, tu({ action: "zoom", region: [0, 0, 801, 10] }));
    expect(outside.error.code).toBe("COORDINATE_OUT_OF_BOUNDS");
  });

  it("zoom into a scaled whole-screen shot: the region's screen pixels at full resolution, scaled to the caps only when over them", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--max-width", "800"]);
    const shot = await call(p, tu({ action: "screenshot" }));
    expect(shot.image).toMatchObject({ width: 800, height: 450 });
    // The bottom-right quarter of the 800x450 image: screen [960, 1920) x [540, 1080), 960x540 screen pixels: over 800 wide.
    const r = await call(p, tu({ action: "zoom", region: [400, 225, 800, 450] }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    const img = pngFromBase64(r.output.content[0].source.data);
    expect([img.width, img.height]).toEqual([800, 450]);
    expect(r.image.zoom).toEqual({ x: 960, y: 540, width: 960, height: 540 });
    expect(fakeScreenPoint(img, 0, 0)).toEqual({ x: 960, y: 540 });
    expect(fakeScreenPoint(img, 799, 449)).toEqual({ x: 1919, y: 1079 });
    // A small region comes at its own size: 30 image pixels of the 0.4167 shot are 72 screen pixels.
    const small = await call(p, tu({ action: "zoom", region: [0, 0, 30, 30] }));
    expect(small.image).toMatchObject({ width: 72, height: 72, zoom: { x: 0, y: 0, width: 72, height: 72 } });
    expect(shots(sb).map((a) => a.region ?? null)).toEqual([null, { x: 960, y: 540, width: 960, height: 540 }, { x: 0, y: 0, width: 72, height: 72 }]);
  });

  it("cursor_position and left_mouse_down are refused as ACTION_UNSUPPORTED", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app"]);
    for (const input of [{ action: "cursor_position" }, { action: "left_mouse_down" }]) {
      const r = await call(p, tu(input));
      expect(r.error.code, input.action).toBe("ACTION_UNSUPPORTED");
      expect(r.output.is_error).toBe(true);
    }
  });

  it("per request: adapter and app in the request; native requests keep working in the same session", async () => {
    const sb = sandbox();
    const p = serve(sb, []);
    const r = await call(p, { adapter: "anthropic", app: "pid:4242", action: { action: "screenshot" } });
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.output.tool_use_id).toBe(`deckhand_r${n}`);
    const o = await call(p, { adapter: "openai", app: "pid:4242", action: { type: "screenshot" } });
    expect(o.output.type).toBe("computer_call_output");
    const native = await call(p, { command: "list-apps" });
    expect(native).toMatchObject({ ok: true, command: "list-apps" });
    const bad = await call(p, { adapter: "gemini", action: {} });
    expect(bad).toMatchObject({ ok: false, error: { code: "INVALID_ARGUMENTS" } });
  });

  it("with --adapter set, adapter:native switches one request back", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic"]);
    const native = await call(p, { adapter: "native", command: "list-apps" });
    expect(native).toMatchObject({ ok: true, command: "list-apps" });
  });
});

// Issue 20: the adapters current with the SDKs (openai 6.x, @anthropic-ai/sdk with computer_toolset_20260801).
const ts = (name: string, input: unknown, extra: Record<string, unknown> = {}) => ({
  call: { type: "tool_use", id: `toolu_ts${++n}`, name, toolset_name: "computer", caller: { type: "direct" }, input, ...extra },
});
const nonWait = (sb: Sandbox) => sb.requests().filter((q) => q.op === "input").map((q) => (q.args.steps as any[]).filter((s: any) => s.kind !== "wait"));

describe("serve --adapter openai: every SDK field", () => {
  it("keys held during scroll, drag and move: key down, the pointer steps, key up, in one input with the focus guard", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, cc({ type: "screenshot" }));
    for (const action of [
      { type: "scroll", x: 100, y: 100, scroll_x: 0, scroll_y: 200, keys: ["CTRL"] },
      { type: "drag", path: [{ x: 0, y: 0 }, { x: 10, y: 10 }], keys: ["SHIFT"] },
      { type: "move", x: 5, y: 5, keys: ["ALT"] },
    ]) {
      const r = await call(p, cc(action));
      expect(r.ok, `${action.type}: ${JSON.stringify(r.error)}`).toBe(true);
    }
    expect(nonWait(sb)).toEqual([
      [{ kind: "key", key: "ctrl", down: true }, { kind: "scroll", x: 110, y: 120, dx: 0, dy: 2 }, { kind: "key", key: "ctrl", down: false }],
      [
        { kind: "key", key: "shift", down: true },
        { kind: "move", x: 10, y: 20 },
        { kind: "button", button: "left", down: true },
        { kind: "move", x: 20, y: 30 },
        { kind: "button", button: "left", down: false },
        { kind: "key", key: "shift", down: false },
      ],
      [{ kind: "key", key: "alt", down: true }, { kind: "move", x: 15, y: 25 }, { kind: "key", key: "alt", down: false }],
    ]);
    // Keys go only to the target window: every one of these inputs carries the focus guard.
    const inputs = sb.requests().filter((q) => q.op === "input");
    for (const q of inputs) expect(q.args.focus, JSON.stringify(q.args.steps)).toMatchObject({ window_id: FIXTURE_WINDOW });
    expect(inputs.map((q) => q.args.restore_pointer)).toEqual([true, true, false]); // a hover leaves the pointer
  });

  it("an incomplete computer_call is not run; an in_progress one is; fractional pixels are rounded through the map", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, cc({ type: "screenshot" }));
    const incomplete = await call(p, cc({ type: "click", button: "left", x: 5, y: 5 }, { id: "cu_1", status: "incomplete" }));
    expect(incomplete).toMatchObject({ ok: false, output: null, error: { code: "INVALID_ARGUMENTS", details: { field: "status" } } });
    expect(mutations(sb.ops())).toEqual([]);
    const frac = await call(p, cc({ type: "double_click", x: 99.6, y: 0.2, keys: null }, { id: "cu_2", status: "in_progress" }));
    expect(frac.ok, JSON.stringify(frac.error)).toBe(true);
    expect(frac.steps).toEqual([{ action: "click", x: 110, y: 20, button: "left", count: 2 }]);
  });
});

describe("serve --adapter anthropic: the computer toolset (computer_toolset_20260801)", () => {
  it("each action its own tool, its input without action; every tool_result carries toolset_name and the call's id", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--allow-foreground"]);
    const shot = await call(p, ts("screenshot", {}));
    expect(shot.ok, JSON.stringify(shot.error)).toBe(true);
    expect(shot.output).toMatchObject({ type: "tool_result", toolset_name: "computer", content: [{ type: "image", source: { type: "base64", media_type: "image/png" } }] });
    expect(shot.output.tool_use_id).toMatch(/^toolu_ts/);
    expect([pngFromBase64(shot.output.content[0].source.data).width, shot.image.height]).toEqual([800, 600]);
    const click = await call(p, ts("left_click", { coordinate: [30, 30] }));
    expect(click.ok, JSON.stringify(click.error)).toBe(true);
    expect(click.steps).toEqual([{ action: "click", x: 40, y: 50, button: "left" }]);
    expect(click.output.toolset_name).toBe("computer");
    const scroll = await call(p, ts("scroll", { coordinate: [100, 100], scroll_direction: "down", scroll_amount: 1, text: "shift" }));
    expect(scroll.ok, JSON.stringify(scroll.error)).toBe(true);
    const key = await call(p, ts("key", { text: "Down", repeat: 3 }));
    expect(key.ok, JSON.stringify(key.error)).toBe(true);
    expect(nonWait(sb).slice(-2)).toEqual([
      [{ kind: "key", key: "shift", down: true }, { kind: "scroll", x: 110, y: 120, dx: 0, dy: 1 }, { kind: "key", key: "shift", down: false }],
      [{ kind: "tap", keys: ["Down"], repeat: 3 }],
    ]);
    const zoom = await call(p, ts("zoom", { region: [0, 0, 400, 300] }));
    expect(zoom.ok, JSON.stringify(zoom.error)).toBe(true);
    expect(zoom.output.toolset_name).toBe("computer");
    // A refused call still answers its own tool_use, in its toolset.
    const id = "toolu_refused";
    const bad = await call(p, ts("left_click", { action: "left_click", coordinate: [1, 1] }, { id }));
    expect(bad.error).toMatchObject({ code: "INVALID_ARGUMENTS", details: { field: "action" } });
    expect(bad.output).toMatchObject({ type: "tool_result", tool_use_id: id, toolset_name: "computer", is_error: true });
  });

  it("the pointer deckhand left: cursor_position and clicks without a coordinate, refused while it is not known", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--allow-foreground"]);
    await call(p, ts("screenshot", {}));
    for (const [name, input] of [["cursor_position", {}], ["left_click", {}]] as const) {
      const r = await call(p, ts(name, input));
      expect(r.error, name).toMatchObject({ code: "ACTION_UNSUPPORTED", details: { reason: "pointer-unknown" } });
      expect(r.output).toMatchObject({ is_error: true, toolset_name: "computer" });
    }
    expect(mutations(sb.ops())).toEqual([]);
    const move = await call(p, ts("mouse_move", { coordinate: [100, 200] }));
    expect(move.steps).toEqual([{ action: "move", x: 110, y: 220 }]);
    const where = await call(p, ts("cursor_position", {}));
    expect(where.ok, JSON.stringify(where.error)).toBe(true);
    expect(where.output).toEqual({ type: "tool_result", tool_use_id: where.output.tool_use_id, toolset_name: "computer", content: [{ type: "text", text: "X=100,Y=200" }] });
    expect(where.pointer).toEqual({ x: 100, y: 200, screen: { x: 110, y: 220 } });
    // A click restores the pointer: it is still where the move left it.
    const dbl = await call(p, ts("double_click", { text: "ctrl" }));
    expect(dbl.ok, JSON.stringify(dbl.error)).toBe(true);
    expect(dbl.steps).toEqual([{ action: "click", x: 110, y: 220, button: "left", count: 2, modifiers: ["ctrl"] }]);
    // The single tool answers the same way, without toolset_name.
    const single = await call(p, tu({ action: "cursor_position" }));
    expect(single.output).toEqual({ type: "tool_result", tool_use_id: single.output.tool_use_id, content: [{ type: "text", text: "X=100,Y=200" }] });
    // A native command that may move the pointer: deckhand no longer claims to know where it is.
    await call(p, { adapter: "native", command: "move", args: { app: "fixture-app", x: 50, y: 60 } });
    const after = await call(p, ts("cursor_position", {}));
    expect(after.error).toMatchObject({ code: "ACTION_UNSUPPORTED", details: { reason: "pointer-unknown" } });
  });
});

describe("image caps on every side", () => {
  it("--max-side and --max-pixels are honoured", async () => {
    const sb = sandbox();
    const side = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--max-side", "500"]);
    const a = await call(side, tu({ action: "screenshot" }));
    const img = pngFromBase64(a.output.content[0].source.data);
    expect([img.width, img.height]).toEqual([500, 375]);
    expect(a.image.map).toMatchObject({ width: 500, height: 375, scaleX: 0.625, scaleY: 0.625 });
    const area = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--max-pixels", "100000"]);
    const b = await call(area, cc({ type: "screenshot" }));
    const img2 = pngFromDataUrl(b.output.output.image_url);
    expect([img2.width, img2.height]).toEqual([365, 273]);
    expect(img2.width * img2.height).toBeLessThanOrEqual(100_000);
  });

  it("a window whose size was not known: taken once more at the width that fits, and that width asked for straight away next time", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--max-pixels", "100000"]);
    await call(p, cc({ type: "screenshot" }));
    // 1440 (the width cap) gave the 800x600 window at its own size, over the area cap: again at 365.
    expect(shots(sb).map((a) => a.max_width)).toEqual([1440, 365]);
    await call(p, cc({ type: "screenshot" }));
    expect(shots(sb).map((a) => a.max_width)).toEqual([1440, 365, 365]);
    // Every file the session kept is one the model saw: the oversized first take is gone.
    const pngs = sb.stateFiles().filter((f) => f.path.endsWith(".png"));
    expect(pngs).toHaveLength(2);
  });
});

describe("coordinates through a scaled image, to the screen point its pixel shows", () => {
  it("every point of a drag across a 0.5 image lands on the screen pixel the model saw there", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground", "--max-width", "400"]);
    const shot = await call(p, cc({ type: "screenshot" }));
    expect(shot.image.map).toMatchObject({ width: 400, height: 300, origin: { x: 10, y: 20 }, scaleX: 0.5, scaleY: 0.5 });
    const img = pngFromDataUrl(shot.output.output.image_url);
    const points = [[0, 0], [1, 1], [123, 77], [200, 150], [398, 298], [399, 299], [0, 299], [399, 0]].map(([x, y]) => ({ x: x!, y: y! }));
    const r = await call(p, cc({ type: "drag", path: points }));
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.steps[0].path).toEqual(points.map((q) => fakeScreenPoint(img, q.x, q.y)));
    expect(r.steps[0].path.at(-3)).toEqual({ x: 809, y: 619 }); // the last pixel: the window's last screen pixel
  });

  it("the same through an area-capped, odd scale (632/800), for clicks", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--allow-foreground", "--max-pixels", "300000"]);
    const shot = await call(p, tu({ action: "screenshot" }));
    expect(shot.ok, JSON.stringify(shot.error)).toBe(true);
    // The widest image of the 800x600 window with at most 300,000 pixels, as the helper rounds its height (down).
    expect(shot.image).toMatchObject({ width: 632, height: 474 });
    expect(shot.image.map.scaleX).toBe(632 / 800);
    const img = pngFromBase64(shot.output.content[0].source.data);
    for (const [x, y] of [[0, 0], [1, 1], [316, 237], [500, 123], [631, 473]] as const) {
      const r = await call(p, tu({ action: "left_click", coordinate: [x, y] }));
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect({ x: r.steps[0].x, y: r.steps[0].y }, `image (${x}, ${y})`).toEqual(fakeScreenPoint(img, x, y));
    }
  });
});

describe("a helper that cannot scale screenshots (no screenshot.scale)", () => {
  it("vendor adapters refuse with ACTION_UNSUPPORTED before anything runs, rather than hand over an image of any size", async () => {
    const sb = sandbox();
    const p = serve(sb, ["--adapter", "anthropic", "--app", "fixture-app", "--allow-foreground"], "drop-cap:screenshot.scale");
    const shot = await call(p, tu({ action: "screenshot" }));
    expect(shot).toMatchObject({ ok: false, error: { code: "ACTION_UNSUPPORTED", details: { capability: "screenshot.scale", helper: "fake-helper" } } });
    expect(shot.error.message).toContain("screenshot.scale");
    expect(shot.output).toMatchObject({ type: "tool_result", is_error: true, content: [{ type: "text", text: expect.stringContaining("ACTION_UNSUPPORTED") }] });
    // An action whose reply could carry no image is not run at all.
    const key = await call(p, tu({ action: "key", text: "ctrl+s" }));
    expect(key.error.code).toBe("ACTION_UNSUPPORTED");
    const openai = serve(sb, ["--adapter", "openai", "--app", "fixture-app", "--allow-foreground"], "drop-cap:screenshot.scale");
    const o = await call(openai, cc({ type: "type", text: "hello" }));
    expect(o).toMatchObject({ ok: false, output: null, error: { code: "ACTION_UNSUPPORTED", details: { capability: "screenshot.scale" } } });
    expect(mutations(sb.ops())).toEqual([]);
    expect(sb.ops()).not.toContain("screenshot");
    // Native requests in the same session are unaffected.
    const native = await call(p, { adapter: "native", command: "screenshot", args: { app: "fixture-app" } });
    expect(native).toMatchObject({ ok: true, result: { screenshot: { width: 800, height: 600, scale: 1 } } });
  });
});
