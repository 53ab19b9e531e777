// An adapter session: vendor computer-tool calls in, vendor tool outputs out.
// Every action becomes one deckhand Program run by the one executor (policy,
// foreground grant, confirm and audit apply exactly as for native commands);
// every reply carries a fresh screenshot that the helper scaled to fit
// inside the image caps (adapterFit: width, longest side, area; the
// screenshot op's max_width), whose map — the result's origin and scale as
// the helper gave them — the next call's coordinates are read through. The
// session also remembers where deckhand itself left the pointer (a hover
// move; input otherwise restores it), for clicks without a coordinate and
// Anthropic's cursor_position.
import { readFileSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import { HANDLERS, runProgramOutcome, type CallContext } from "../commands/index.ts";
import type { Engine } from "../engine/engine.ts";
import type { HelperPort } from "../engine/ports.ts";
import { appWindows, resolveApp } from "../engine/resolve.ts";
import type { ProgramReceipt } from "../program/executor.ts";
import type { ScreenshotInfo } from "../session/snapshot.ts";
import { fail } from "../frontend/envelope.ts";
import type { ScreenshotOptions } from "../engine/ports.ts";
import { adapterFit, imagePlan, imageRegionToScreen, makeMap, screenInImage, screenToImage, type FitOptions, type ImageMap } from "./coords.ts";
import { openaiOutput, translateOpenAICall, type OpenAICall } from "./openai.ts";
import { anthropicCallIds, anthropicCursorResult, anthropicErrorResult, anthropicImageResult, translateAnthropicCall } from "./anthropic.ts";
import { ADAPTERS, buildProgram, invalid, isObject, needsMap, pointerUnknown, toScreenSteps, type AdapterName, type TranslateOptions, type Translation } from "./translate.ts";

export interface AdapterOptions extends FitOptions, TranslateOptions {
  /** Target app selector set by the operator (`--app`); a request's `app` overrides it. */
  app?: string;
  /** serve's `--adapter`: the adapter of requests that name none (default native). */
  defaultAdapter?: "native" | AdapterName;
  // ---- issue 14: set-of-marks
  /**
   * serve's `--marks`: a target app's screenshot handed to the model is the
   * set-of-marks image (numbered boxes on its actionable elements, same
   * pixels and map otherwise); each one reads the window's tree and stores a
   * snapshot whose element indices the numbers are (docs/marks.md).
   */
  marks?: boolean;
  // ---- end set-of-marks
}

/** The map of the last screenshot of one target, plus what it was taken of. */
export interface StoredMap extends ImageMap {
  app: string | null;
  windowId: number;
  /** The window's bounds right after the capture; a moved window invalidates the map. */
  bounds: { x: number; y: number; width: number; height: number } | null;
  capturedAt: string;
}

export interface ImageInfo {
  width: number;
  height: number;
  /** For a screenshot: the map coordinates are read through. For a zoom: the screen area shown. */
  map: StoredMap | null;
  zoom?: { x: number; y: number; width: number; height: number };
  // ---- issue 14: set-of-marks
  /** serve --marks: the image is the set-of-marks one: boxes drawn, and the snapshot whose element indices the numbers are. */
  marks?: { count: number; snapshotId: string };
  // ---- end set-of-marks
}

/** One adapter response (a serve line without its id). */
export interface AdapterResponse {
  schemaVersion: 1;
  ok: boolean;
  command: "computer";
  adapter: AdapterName;
  /** The vendor item to hand back to the model: computer_call_output / tool_result (null when there is none). */
  output: Record<string, unknown> | null;
  /** The deckhand steps that ran, in screen pixels. */
  steps: Step[] | null;
  receipt: ProgramReceipt | null;
  image: ImageInfo | null;
  /** cursor_position: where deckhand left the pointer, in pixels of the last screenshot and on the screen. */
  pointer?: { x: number; y: number; screen: { x: number; y: number } };
  error?: ReturnType<typeof fail>["error"];
}

/** Native serve commands that may move the pointer without this session seeing where to. */
const POINTER_COMMANDS = new Set(["click", "scroll", "drag", "move", "run"]);

export function isAdapterName(v: unknown): v is AdapterName {
  return typeof v === "string" && (ADAPTERS as readonly string[]).includes(v);
}

/**
 * Vendor images are cropped and scaled by the helper (capability
 * screenshot.scale). One without it would hand the model an image of any
 * size, which its API may rescale behind the map's back: refused instead.
 */
export async function requireImageScaling(engine: HelperPort, what: string): Promise<void> {
  const { hello } = await engine.helper();
  if (hello.capabilities["screenshot.scale"]?.supported) return;
  throw new DeckhandError("ACTION_UNSUPPORTED", `${what} needs a helper that crops and scales screenshots (screenshot.scale); helper ${hello.helper.name} ${hello.helper.version} does not`, {
    details: { capability: "screenshot.scale", helper: hello.helper.name },
    remediation: "Use a helper that claims screenshot.scale (deckhand capabilities lists what a helper claims), or the native commands, which take screenshots at the helper's own size.",
  });
}

export class AdapterSession {
  private maps = new Map<string, StoredMap>();
  /**
   * Where deckhand itself last left the pointer (screen pixels), or null when
   * it does not know: nothing moved it yet in this session, or input that
   * moved it may not have put it back. Pointer input restores the pointer
   * (pointer_restored in its receipt); a hover move leaves it where it was
   * moved. A person moving the mouse is not seen.
   */
  private pointer: { x: number; y: number } | null = null;

  constructor(
    readonly engine: Engine,
    readonly opts: AdapterOptions = {},
  ) {}

  /** The last screenshot's map for a target (tests and cursor bookkeeping). */
  lastMap(app: string | undefined): StoredMap | null {
    return this.maps.get(app ?? "") ?? null;
  }

  /**
   * A serve line: an adapter response for an adapter request (its `adapter`
   * field, else the serve default), null for a native request.
   */
  async serveRequest(req: Record<string, unknown>, ctx: CallContext): Promise<AdapterResponse | ReturnType<typeof fail> | null> {
    let adapter: AdapterName | null;
    try {
      adapter = adapterFor(req, this.opts.defaultAdapter);
    } catch (err) {
      return fail("computer", err);
    }
    // A native command may move the pointer: from then on its position is not known here.
    if (!adapter && typeof req.command === "string" && POINTER_COMMANDS.has(req.command)) this.pointer = null;
    return adapter ? await this.handle(adapter, req, ctx) : null;
  }

  /**
   * One request: {id, adapter?, app?, call} or {id, adapter?, app?, action},
   * where call is a computer_call item / tool_use block and action is the
   * bare OpenAI action object / Anthropic tool input.
   */
  async handle(adapter: AdapterName, req: Record<string, unknown>, ctx: CallContext = {}): Promise<AdapterResponse> {
    const fallbackId = typeof req.id === "string" || typeof req.id === "number" ? `deckhand_${req.id}` : "deckhand_call";
    let vendorId = fallbackId;
    let toolsetName: string | null = null;
    const steps: Step[] | null = null;
    const response = (partial: Partial<AdapterResponse>): AdapterResponse => ({ schemaVersion: 1, ok: true, command: "computer", adapter, output: null, steps, receipt: null, image: null, ...partial });
    try {
      const app = req.app ?? this.opts.app;
      if (app !== undefined && (typeof app !== "string" || !app)) throw invalid("app must be a non-empty app selector", "app");
      const raw = req.call ?? req.action;
      if (req.call !== undefined && req.action !== undefined) throw invalid("send either call or action, not both", "call");
      if (raw === undefined) throw invalid(`an ${adapter} request needs call (the vendor item) or action`, "call");
      if (adapter === "anthropic") {
        // An error reply to a call that does not translate still answers its tool_use (and toolset).
        const ids = anthropicCallIds(raw);
        vendorId = ids.toolUseId ?? vendorId;
        toolsetName = ids.toolsetName;
      }
      let translation: Translation;
      let pending: OpenAICall["pendingSafetyChecks"] = [];
      if (adapter === "openai") {
        const c = translateOpenAICall(raw, fallbackId, this.opts);
        vendorId = c.callId;
        translation = c.translation;
        pending = c.pendingSafetyChecks;
        this.checkSafetyAcknowledged(pending, req.acknowledged_safety_checks);
      } else {
        const c = translateAnthropicCall(raw, fallbackId, this.opts);
        vendorId = c.toolUseId;
        toolsetName = c.toolsetName;
        translation = c.translation;
      }
      // Every reply but cursor_position carries an image: refused before anything runs when it cannot be made.
      if (translation.kind !== "cursor") await requireImageScaling(this.engine, `the ${adapter} adapter`);
      // One request at a time per target: a map must not change under a running action.
      return await this.engine.serialized(`adapter:${app ?? ""}`, async () => {
        if (translation.kind === "cursor") {
          const pointer = await this.cursor(app as string | undefined);
          return response({ output: anthropicCursorResult(vendorId, pointer, toolsetName), pointer });
        }
        const result = await this.run(translation, app as string | undefined, ctx);
        const data = result.png.toString("base64");
        const output = adapter === "openai" ? openaiOutput(vendorId, data, pending) : anthropicImageResult(vendorId, data, toolsetName);
        return response({ output, steps: result.steps, receipt: result.receipt, image: result.image });
      });
    } catch (err) {
      const envelope = fail("computer", err, (m) => process.stderr.write(`deckhand adapter: ${m}\n`));
      const receipt = (err as { adapterReceipt?: ProgramReceipt }).adapterReceipt ?? null;
      const ranSteps = (err as { adapterSteps?: Step[] }).adapterSteps ?? null;
      const output = adapter === "anthropic" ? anthropicErrorResult(vendorId, `${envelope.error.code}: ${envelope.error.message}`, toolsetName) : null;
      return { ...response({ ok: false, output, receipt, steps: ranSteps }), error: envelope.error };
    }
  }

  private checkSafetyAcknowledged(pending: OpenAICall["pendingSafetyChecks"], acknowledged: unknown): void {
    if (!pending.length) return;
    const acked = new Set(
      (Array.isArray(acknowledged) ? acknowledged : []).map((a) => (typeof a === "string" ? a : isObject(a) && typeof a.id === "string" ? a.id : "")),
    );
    const missing = pending.filter((p) => !acked.has(p.id));
    if (missing.length) {
      throw new DeckhandError("CONFIRM_REQUIRED", `OpenAI flagged this action (${missing.map((m) => m.code ?? m.id).join(", ")}); a human must acknowledge it before it runs`, {
        details: { safetyChecks: missing.map((m) => m.id).join(","), codes: missing.map((m) => m.code ?? "").join(",") },
        remediation: "Show the pending_safety_checks to the user; if they approve, resend the request with acknowledged_safety_checks listing their ids.",
      });
    }
  }

  private async run(t: Translation, app: string | undefined, ctx: CallContext): Promise<{ png: Buffer; steps: Step[] | null; receipt: ProgramReceipt | null; image: ImageInfo }> {
    if (t.kind === "screenshot") return { ...(await this.screenshot(app)), steps: null, receipt: null };
    if (t.kind === "zoom") return { ...(await this.zoom(app, t.region)), steps: null, receipt: null };
    if (t.kind === "cursor") throw new DeckhandError("INTERNAL", "cursor_position is answered without a program");
    if (!t.steps.length) return { ...(await this.screenshot(app)), steps: [], receipt: null };
    if (app === undefined) {
      throw invalid("adapter actions need a target app: start serve with --app <selector> or send app in the request", "app");
    }
    const map = this.maps.get(app) ?? null;
    const screenSteps = toScreenSteps(t.steps, map, this.pointer);
    if (map && needsMap(t.steps)) await this.checkWindowUnchanged(app, map);
    const program = buildProgram(app, map?.windowId, screenSteps);
    // A failed step is the program's `run` error (scrubbed, "step N (action): ..."); the
    // receipt travels in the response's own `receipt`, not again in the error's details.
    const { receipt, failure } = await runProgramOutcome(this.engine, program, ctx);
    this.trackPointer(screenSteps, receipt);
    if (failure) {
      delete failure.program;
      throw Object.assign(failure, { adapterReceipt: receipt, adapterSteps: screenSteps });
    }
    return { ...(await this.screenshot(app)), steps: screenSteps, receipt };
  }

  /**
   * Where the pointer is after a program, as far as deckhand knows: a hover
   * move that ran puts it at its point; pointer input that may have moved it
   * without putting it back (its receipt does not say pointer_restored, or
   * says it failed) makes it unknown; input through accessibility, keys and
   * waits leave it as it was.
   */
  private trackPointer(steps: Step[], receipt: ProgramReceipt): void {
    receipt.steps.forEach((r, i) => {
      const step = steps[i];
      if (!step || r.status === "unattempted" || r.delivery === "not_dispatched") return;
      if (step.action === "move" && r.status === "completed") {
        this.pointer = { x: step.x, y: step.y };
        return;
      }
      const pointerInput = step.action === "click" || step.action === "scroll" || step.action === "drag" || step.action === "move";
      if (!pointerInput || r.route === "accessibility" || r.route === "synthetic") return;
      const restored = r.cleanup?.pointer_restored;
      if (restored === true || (restored === null && r.status === "completed")) return;
      this.pointer = null;
    });
  }

  /** cursor_position: where deckhand left the pointer, in pixels of the target's last screenshot. */
  private async cursor(app: string | undefined): Promise<{ x: number; y: number; screen: { x: number; y: number } }> {
    const p = this.pointer;
    if (!p) throw pointerUnknown("cursor_position");
    const map = this.maps.get(app ?? "");
    if (!map) throw new DeckhandError("SCREENSHOT_REQUIRED", "take a screenshot first: cursor_position answers in pixels of the last screenshot, and there is none");
    if (app !== undefined) await this.checkWindowUnchanged(app, map);
    if (!screenInImage(map, p.x, p.y)) {
      throw new DeckhandError("COORDINATE_OUT_OF_BOUNDS", `the pointer (screen ${p.x}, ${p.y}) is outside the last screenshot`, {
        details: { reason: "pointer-outside-screenshot", screenX: p.x, screenY: p.y, width: map.width, height: map.height },
      });
    }
    return { ...screenToImage(map, p.x, p.y), screen: { ...p } };
  }

  /** Capture the target (its window, or with no app the whole screen), scaled by the helper to fit the image caps; remember its map. */
  async screenshot(app: string | undefined): Promise<{ png: Buffer; image: ImageInfo }> {
    // ---- issue 14: set-of-marks (a target app's window only: a whole-screen image has no one tree to number)
    const withMarks = this.opts.marks === true && app !== undefined;
    const { shot, windowId, marks } = await this.capture(app, { maxWidth: imagePlan(adapterFit(this.opts)) }, undefined, withMarks);
    // The marks image has the screenshot's size, origin and scale: the map below is the same for either.
    const png = readFileSync(marks ? marks.path : shot.path);
    // ---- end set-of-marks
    const bounds = app !== undefined ? await this.windowBounds(app, windowId) : null;
    const map: StoredMap = { ...makeMap(shot), app: app ?? null, windowId, bounds, capturedAt: new Date().toISOString() };
    this.maps.set(app ?? "", map);
    return { png, image: { width: shot.width, height: shot.height, map, ...(marks ? { marks: { count: marks.count, snapshotId: marks.snapshotId } } : {}) } };
  }

  /**
   * A region [x1, y1, x2, y2] of the last screenshot, captured afresh: the
   * helper crops the window (or screen) to the screen pixels it covers and
   * scales it to fit the image caps, never up (the region at the capture's
   * own resolution, when it fits). The map is not replaced: coordinates
   * still refer to the last full screenshot.
   */
  async zoom(app: string | undefined, region: unknown): Promise<{ png: Buffer; image: ImageInfo }> {
    const map = this.maps.get(app ?? "");
    if (!map) throw new DeckhandError("SCREENSHOT_REQUIRED", "take a screenshot first: a zoom region is in pixels of the last screenshot, and there is none");
    const screen = imageRegionToScreen(map, region);
    if (app !== undefined) await this.checkWindowUnchanged(app, map);
    // The whole screen pixels the region covers (an edge within float error of a pixel boundary is on it).
    const snap = (v: number) => (Math.abs(v - Math.round(v)) < 1e-6 ? Math.round(v) : v);
    const x0 = Math.floor(snap(screen.x));
    const y0 = Math.floor(snap(screen.y));
    const rect = { x: x0, y: y0, width: Math.max(1, Math.ceil(snap(screen.x + screen.width)) - x0), height: Math.max(1, Math.ceil(snap(screen.y + screen.height)) - y0) };
    const { shot } = await this.capture(app, { region: rect, maxWidth: imagePlan(adapterFit(this.opts)) }, map.windowId);
    const png = readFileSync(shot.path);
    // The screen area the PNG shows, read from its result as for a screenshot's map.
    const shown = makeMap(shot);
    return { png, image: { width: shot.width, height: shot.height, map, zoom: { ...shown.origin, width: shown.screenWidth, height: shown.screenHeight } } };
  }

  /** The screenshot command (its policy checks and redaction) with the helper cropping and scaling as `options` say; a zoom stays on the map's window. */
  private async capture(app: string | undefined, options: ScreenshotOptions, windowId?: number, marks = false): Promise<{ shot: ScreenshotInfo; windowId: number; marks?: { path: string; count: number; snapshotId: string } }> {
    const args = app !== undefined ? { app, ...(windowId !== undefined && windowId !== 0 ? { windowId } : {}), ...(marks ? { marks: true } : {}) } : {};
    const r = (await this.engine.withScreenshotOptions(options, () => HANDLERS.screenshot(this.engine, args, {}))) as {
      windowId: number;
      screenshot: ScreenshotInfo;
      marks?: { path: string; count: number };
      snapshotId?: string;
    };
    return { shot: r.screenshot, windowId: r.windowId, ...(r.marks && r.snapshotId ? { marks: { path: r.marks.path, count: r.marks.count, snapshotId: r.snapshotId } } : {}) };
  }

  private async windowBounds(app: string, windowId: number): Promise<StoredMap["bounds"]> {
    const resolved = await resolveApp(this.engine, app);
    const w = (await appWindows(this.engine, resolved.pid)).find((x) => x.window_id === windowId);
    return w ? { ...w.bounds } : null;
  }

  /** The window the map was taken of must still be where it was, or the coordinates mean something else. */
  private async checkWindowUnchanged(app: string, map: StoredMap): Promise<void> {
    if (!map.bounds) return;
    const now = await this.windowBounds(app, map.windowId).catch((err) => {
      if (err instanceof DeckhandError && err.code === "APP_NOT_FOUND") return null;
      throw err;
    });
    if (!now) {
      this.maps.delete(app);
      throw new DeckhandError("SCREENSHOT_REQUIRED", "the window of the last screenshot is gone; take a new screenshot", { details: { reason: "window-gone", windowId: map.windowId } });
    }
    const b = map.bounds;
    if (now.x !== b.x || now.y !== b.y || now.width !== b.width || now.height !== b.height) {
      this.maps.delete(app);
      throw new DeckhandError("SCREENSHOT_REQUIRED", "the window moved or was resized since the last screenshot; take a new screenshot", {
        details: { reason: "window-moved", windowId: map.windowId },
      });
    }
  }
}

/** Which adapter a serve request uses: its own `adapter` field, else the serve default; null = native. */
export function adapterFor(req: Record<string, unknown>, serveDefault: string | undefined): AdapterName | null {
  const a = req.adapter ?? serveDefault ?? "native";
  if (a === "native") return null;
  if (isAdapterName(a)) return a;
  throw invalid(`adapter must be native, openai or anthropic (got ${JSON.stringify(String(a).slice(0, 40))})`, "adapter");
}
