// Observation: one window's tree and screenshot become an immutable, durable snapshot.
import { rmSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import { checkBrowserUrl, pageUrl } from "./page-url.ts";
import {
  applySecureMemory,
  buildTree,
  locatorKindOf,
  newSnapshotId,
  rememberedSecure,
  secureLocatorsOf,
  targetKeyOf,
  windowKeyOf,
  type ScreenshotInfo,
  type SecureLocator,
  type Snapshot,
  type SnapshotApp,
} from "../session/snapshot.ts";
import { DEFAULT_SNAPSHOT_TTL_MS, type SnapshotStore } from "../session/store.ts";
import type { Rect, WireNode, WireWindow } from "../wire/messages.ts";
import { requireCapability, type EnvPort, type HelperPort, type ImageSize, type SafetyPort, type ScreenshotOptions, type ScreenshotScope, type StorePort } from "./ports.ts";
import type { ResolvedApp } from "./resolve.ts";
import { auditAppId, type Safety } from "./safety.ts";
import { noTreeWarning, type ObservationWarning } from "./tree-advice.ts";

export interface ScreenshotOutcome {
  screenshot: ScreenshotInfo | null;
  screenshotError?: { code: string; message: string };
}

/** What an observation uses of the engine. */
export type Observer = HelperPort & StorePort & SafetyPort & ScreenshotScope & EnvPort;

/** The helper's least max_width (wire/messages.ts). */
const MIN_MAX_WIDTH = 16;
/** Areas captured lately, per store (one per engine) and window id (0: the screen): a plan's width for the next capture of it. */
const knownAreas = new WeakMap<SnapshotStore, Map<number, ImageSize>>();
const KNOWN_AREAS = 64;

function rememberArea(store: SnapshotStore, windowId: number, area: ImageSize): void {
  let m = knownAreas.get(store);
  if (!m) knownAreas.set(store, (m = new Map()));
  m.delete(windowId);
  m.set(windowId, area);
  if (m.size > KNOWN_AREAS) m.delete(m.keys().next().value!);
}

/**
 * The screen area a PNG shows, for choosing a width: its width exactly (the
 * helper scales by max_width / width), its height at most one image row more
 * (the helper rounds the height down), so a width chosen for it never yields
 * a taller image than planned.
 */
function areaShown(shot: { width: number; height: number; scale: number }): ImageSize {
  if (shot.scale >= 1) return { width: shot.width / shot.scale, height: shot.height / shot.scale };
  return { width: Math.round(shot.width / shot.scale), height: (shot.height + 1) / shot.scale };
}

function toInfo(result: { path: string; width: number; height: number; scale: number; origin: { x: number; y: number }; method: string; redacted: number }): ScreenshotInfo {
  return { path: result.path, width: result.width, height: result.height, scale: result.scale, origin: result.origin, method: result.method, redacted: result.redacted };
}

/**
 * Capture a window (0: the whole screen) with its secure fields and `redact`
 * (screen rectangles) blacked out. `options` (default: the engine's scope,
 * Engine.withScreenshotOptions) crop and scale it in the helper; `area` is the
 * window's size when the caller knows it (a plan's width is chosen for it).
 */
export async function captureWindow(
  engine: HelperPort & StorePort & ScreenshotScope,
  windowId: number,
  name: string,
  redact: Rect[] = [],
  options: ScreenshotOptions | undefined = engine.screenshotOptions,
  area?: ImageSize,
): Promise<ScreenshotOutcome> {
  const { supervisor, hello } = await engine.helper();
  if (!hello.capabilities.screenshot?.supported) {
    return { screenshot: null, screenshotError: { code: "ACTION_UNSUPPORTED", message: "helper cannot capture screenshots" } };
  }
  const scaled = options !== undefined && (options.region !== undefined || options.maxWidth !== undefined);
  if (scaled && !hello.capabilities["screenshot.scale"]?.supported) {
    const message = `helper ${hello.helper.name} ${hello.helper.version} cannot crop or scale a screenshot (no screenshot.scale)`;
    if (!options?.ifSupported) return { screenshot: null, screenshotError: { code: "ACTION_UNSUPPORTED", message } };
    options = undefined;
  }
  const region = options?.region;
  const plan = typeof options?.maxWidth === "object" ? options.maxWidth : null;
  const path = engine.store.screenshotPath(name);
  const take = async (maxWidth: number | undefined) => {
    const { result } = await supervisor.request("screenshot", {
      window_id: windowId,
      path,
      redact_secure: true,
      redact,
      ...(region ? { region } : {}),
      ...(maxWidth !== undefined ? { max_width: Math.max(MIN_MAX_WIDTH, Math.floor(maxWidth)) } : {}),
    });
    return result;
  };
  let written = false;
  try {
    if (!plan) return { screenshot: toInfo(await take(options?.maxWidth as number | undefined)) };
    let sizedFor = region ? { width: region.width, height: region.height } : (area ?? knownAreas.get(engine.store)?.get(windowId) ?? null);
    let result = await take(plan.widthFor(sizedFor));
    written = true;
    if (!plan.fits(result)) {
      // The area was not known, or not what was captured (a window partly off the screen): once more, sized by what it showed.
      sizedFor = areaShown(result);
      result = await take(plan.widthFor(sizedFor));
      if (!plan.fits(result)) {
        rmSync(path, { force: true });
        return { screenshot: null, screenshotError: { code: "SCREENSHOT_FAILED", message: `the helper's ${result.width}x${result.height} image does not fit the image caps` } };
      }
    }
    // The next capture of this window asks for the width that fitted straight away.
    if (!region) rememberArea(engine.store, windowId, sizedFor ?? areaShown(result));
    return { screenshot: toInfo(result) };
  } catch (err) {
    // A first image that was to be taken again is not kept.
    if (written) rmSync(path, { force: true });
    if (err instanceof DeckhandError) {
      return { screenshot: null, screenshotError: { code: err.code === "TIMEOUT" ? "TIMEOUT" : "SCREENSHOT_FAILED", message: err.message } };
    }
    throw err;
  }
}

/**
 * Blocked URLs apply to observation too (docs/policy.md): a browser window
 * on a blocked page (or whose URL cannot be read while URLs are blocked) is
 * BLOCKED_URL before anything of it is captured. The refusal is audited.
 */
export async function checkPageObservable(engine: HelperPort & SafetyPort, app: ResolvedApp, windowId: number, command: string): Promise<void> {
  try {
    await checkBrowserUrl(engine, app, windowId);
  } catch (err) {
    if (err instanceof DeckhandError && err.code === "BLOCKED_URL") auditBlockedPage(engine.safety, app, windowId, command, err);
    throw err;
  }
}

function auditBlockedPage(safety: Safety, app: ResolvedApp, windowId: number, command: string, err: DeckhandError): void {
  const source = typeof err.details.source === "string" ? err.details.source : undefined;
  const rule = typeof err.details.rule === "string" ? err.details.rule : "blocked_urls:url_unreadable";
  try {
    safety.audit({ event: "decision", command, appId: auditAppId(app), pid: app.pid, windowId, decision: "deny", decisionSource: source, rule, outcome: "BLOCKED_URL", delivery: "not_dispatched" });
  } catch (auditErr) {
    process.stderr.write(`deckhand: audit write failed: ${(auditErr as Error).message}\n`);
  }
}

export async function observe(
  engine: Observer,
  app: ResolvedApp,
  window: WireWindow,
  opts: { noScreenshot?: boolean; maxNodes?: number; /** For the audit of a refusal (default get-app-state). */ command?: string },
): Promise<Snapshot> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "get_tree", "reading an accessibility tree");
  const command = opts.command ?? "get-app-state";
  await checkPageObservable(engine, app, window.window_id, command);
  const snapshotId = newSnapshotId();
  const appRecord: SnapshotApp = {
    pid: app.pid,
    startTime: app.startTime,
    name: app.name,
    executable: app.executable,
    desktopId: app.desktopId,
    ...(app.processName !== undefined ? { processName: app.processName } : {}),
    ...(app.executableDeleted !== undefined ? { executableDeleted: app.executableDeleted } : {}),
    ...(app.bundleId !== undefined ? { bundleId: app.bundleId } : {}),
  };
  const windowKey = windowKeyOf(appRecord, window.window_id);
  // Elements seen secure earlier in this window stay secure (src/session/store.ts).
  const remembered = engine.store.secureLocators(windowKey);
  // An app without a tree (its toolkit's bridge off, or none at all) is
  // observed as its screenshot alone: nothing is asked of it over
  // accessibility, and the snapshot says why it has no elements.
  const treeless = !app.accessible;
  const treeP: Promise<{ result: { nodes: WireNode[]; truncated: boolean } }> = treeless
    ? Promise.resolve({ result: { nodes: [], truncated: false } })
    : supervisor.request("get_tree", {
        pid: app.pid,
        window_id: window.window_id,
        max_depth: 64,
        max_children: 1000,
        max_nodes: opts.maxNodes ?? 2000,
      });
  // Tree and pixels are independent: ask for both at once. Unless a field
  // once secure may now show its text (the helper redacts only what it sees
  // as secure): then the tree first, and those fields blacked out too.
  const shotP: Promise<ScreenshotOutcome> = opts.noScreenshot
    ? Promise.resolve({ screenshot: null })
    : remembered.length === 0
      ? captureWindow(engine, window.window_id, snapshotId, [], undefined, window.bounds)
      : treeP.then(({ result }) => captureWindow(engine, window.window_id, snapshotId, revealedBounds(result.nodes, remembered), undefined, window.bounds));
  const [{ result: rawTree }, shot] = await Promise.all([treeP, shotP]);
  const tree = { ...rawTree, nodes: applySecureMemory(rawTree.nodes, remembered) };
  // The page may have changed since the check: the tree read with the pixels
  // decides too. Nothing of a blocked page is kept.
  const seen = engine.safety.checkUrl && engine.safety.hasBlockedUrls?.() ? pageUrl(tree.nodes) : null;
  if (seen !== null) {
    try {
      engine.safety.checkUrl!(app, seen);
    } catch (err) {
      if (shot.screenshot) rmSync(shot.screenshot.path, { force: true });
      if (err instanceof DeckhandError) auditBlockedPage(engine.safety, app, window.window_id, command, err);
      throw err;
    }
  }
  const built = buildTree(tree.nodes, locatorKindOf(hello.helper.platform));
  const now = Date.now();
  const ttl = Number(engine.env.DECKHAND_SNAPSHOT_TTL_MS || DEFAULT_SNAPSHOT_TTL_MS);
  const targetKey = targetKeyOf(appRecord);
  engine.store.rememberSecure(windowKey, secureLocatorsOf(tree.nodes), now + ttl, now);
  const snapshot: Snapshot & { screenshotError?: { code: string; message: string }; warnings?: ObservationWarning[] } = {
    snapshotId,
    targetKey,
    windowKey,
    app: appRecord,
    window: { windowId: window.window_id, title: window.title, bounds: window.bounds },
    capturedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttl).toISOString(),
    treeText: built.treeText,
    elementCount: built.elements.length,
    truncated: built.truncated || tree.truncated,
    elements: built.elements,
    screenshot: shot.screenshot,
    ...(Object.keys(built.actionPairs).length ? { actionPairs: built.actionPairs } : {}),
  };
  if (shot.screenshotError) snapshot.screenshotError = shot.screenshotError;
  engine.store.save(snapshot);
  // Not part of the stored snapshot: how this observation went.
  if (treeless) snapshot.warnings = [noTreeWarning(app)];
  return snapshot;
}

/**
 * For a window screenshot without a tree read (`screenshot --app`, the
 * adapters): the bounds of fields remembered secure in that window that the
 * helper no longer reports as secure, to black out with the rest. Reads the
 * window's tree only when the store remembers something there.
 */
export async function rememberedSecureRects(engine: HelperPort & StorePort, app: ResolvedApp, windowId: number): Promise<Rect[]> {
  const remembered = engine.store.secureLocators(windowKeyOf(app, windowId));
  if (remembered.length === 0) return [];
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 64, max_children: 1000, max_nodes: 5000 });
  return revealedBounds(result.nodes, remembered);
}

/** Screen bounds of remembered-secure fields the helper no longer reports as secure. */
function revealedBounds(nodes: readonly WireNode[], remembered: readonly SecureLocator[]): Rect[] {
  return nodes.filter((n) => !n.secure && n.bounds && rememberedSecure(n, remembered)).map((n) => n.bounds!);
}

/** The public get-app-state result shape. */
export function appStateResult(s: Snapshot & { screenshotError?: { code: string; message: string }; warnings?: ObservationWarning[] }, app: ResolvedApp) {
  const { screenshot, screenshotError, warnings, app: _a, window, actionPairs: _p, ...snap } = s;
  return {
    app: { name: app.name, pid: app.pid, executable: app.executable, desktopId: app.desktopId },
    window: { windowId: window.windowId, title: window.title, bounds: window.bounds },
    snapshot: {
      snapshotId: snap.snapshotId,
      targetKey: snap.targetKey,
      windowKey: snap.windowKey,
      capturedAt: snap.capturedAt,
      expiresAt: snap.expiresAt,
      treeText: snap.treeText,
      elementCount: snap.elementCount,
      truncated: snap.truncated,
      elements: snap.elements,
    },
    screenshot,
    ...(screenshotError ? { screenshotError } : {}),
    ...(warnings?.length ? { warnings } : {}),
  };
}
