// Observation: one window's tree and screenshot become an immutable, durable snapshot.
import { rmSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import { checkBrowserUrl, pageUrl } from "./page-url.ts";
import {
  applySecureMemory,
  buildTree,
  DEFAULT_TREE_CAPS,
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
import { DEFAULT_COMPACT_MAX_BYTES } from "../protocol/commands.ts";
import { diffBlocker, diffSnapshots, reuseFrom, type SnapshotDiff } from "../session/diff.ts";
import { renderPage, type Page, type ViewOptions } from "../session/view.ts";
import type { Rect, WireNode, WireWindow } from "../wire/messages.ts";
import { requireCapability, type EnvPort, type HelperPort, type ImageSize, type ProgressPort, type SafetyPort, type ScreenshotOptions, type ScreenshotScope, type StorePort } from "./ports.ts";
import type { ResolvedApp } from "./resolve.ts";
import { auditAppId, type Safety } from "./safety.ts";
import { noTreeWarning, type ObservationWarning } from "./tree-advice.ts";
// ---- issue 14: set-of-marks
import { marksFor, type MarksInfo } from "./marks.ts";
// ---- end set-of-marks
// ---- issue 14: OCR
import { addOcr, applyOcrOutcome, ocrResultFields, type OcrReport } from "./ocr-snapshot.ts";
import { isSecureNode } from "../session/snapshot.ts";
// ---- end OCR

export interface ScreenshotOutcome {
  screenshot: ScreenshotInfo | null;
  screenshotError?: { code: string; message: string };
}

/** What an observation uses of the engine. */
export type Observer = HelperPort & StorePort & SafetyPort & ScreenshotScope & EnvPort & ProgressPort;

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

/** The screen rectangle an image shows: its origin, and its size in screen pixels. */
export function screenRectOf(shot: { width: number; height: number; scale: number; origin: { x: number; y: number } }): Rect {
  return { x: shot.origin.x, y: shot.origin.y, width: Math.round(shot.width / shot.scale), height: Math.round(shot.height / shot.scale) };
}

export function toInfo(result: { path: string; width: number; height: number; scale: number; origin: { x: number; y: number }; method: string; redacted: number; format?: "png" | "jpeg" | "webp" }): ScreenshotInfo {
  return {
    path: result.path,
    width: result.width,
    height: result.height,
    scale: result.scale,
    origin: result.origin,
    method: result.method,
    redacted: result.redacted,
    // A helper before screenshot.formats writes PNG only.
    format: result.format ?? "png",
    screenRect: screenRectOf(result),
  };
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
  // ---- issue 14: screenshot options: JPEG and WebP need screenshot.formats (never dropped, whatever ifSupported says)
  const format = options?.format ?? "png";
  if (format !== "png" && !hello.capabilities["screenshot.formats"]?.supported) {
    return { screenshot: null, screenshotError: { code: "ACTION_UNSUPPORTED", message: formatsUnsupported(hello, format) } };
  }
  const encoding = options?.format !== undefined && hello.capabilities["screenshot.formats"]?.supported ? { format, ...(options.quality !== undefined ? { quality: options.quality } : {}) } : {};
  // ---- end screenshot options
  const scaled = options !== undefined && (options.region !== undefined || options.maxWidth !== undefined);
  if (scaled && !hello.capabilities["screenshot.scale"]?.supported) {
    const message = `helper ${hello.helper.name} ${hello.helper.version} cannot crop or scale a screenshot (no screenshot.scale)`;
    if (!options?.ifSupported) return { screenshot: null, screenshotError: { code: "ACTION_UNSUPPORTED", message } };
    options = { ...options, region: undefined, maxWidth: undefined };
  }
  const region = options?.region;
  const plan = typeof options?.maxWidth === "object" ? options.maxWidth : null;
  const path = engine.store.screenshotPath(name, format);
  const take = async (maxWidth: number | undefined) => {
    const { result } = await supervisor.request("screenshot", {
      window_id: windowId,
      path,
      redact_secure: true,
      redact,
      ...(region ? { region } : {}),
      ...(maxWidth !== undefined ? { max_width: Math.max(MIN_MAX_WIDTH, Math.floor(maxWidth)) } : {}),
      ...encoding,
    });
    // A helper that names another format than asked for wrote a file its path and result would misname.
    if ((result.format ?? "png") !== format) {
      rmSync(path, { force: true });
      throw new DeckhandError("SCREENSHOT_FAILED", `helper ${hello.helper.name} wrote ${result.format ?? "png"} where ${format} was asked for`);
    }
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
      // ---- issue 14: a region that shows nothing of the window (or screen) is the caller's argument
      if (region && err.code === "INVALID_ARGUMENTS" && err.details.reason === "region-outside-window") {
        return { screenshot: null, screenshotError: { code: "INVALID_ARGUMENTS", message: err.message } };
      }
      // ---- end screenshot options
      return { screenshot: null, screenshotError: { code: err.code === "TIMEOUT" ? "TIMEOUT" : "SCREENSHOT_FAILED", message: err.message } };
    }
    throw err;
  }
}

// ---- issue 14: screenshot options
function formatsUnsupported(hello: { helper: { name: string; version: string } }, format: string): string {
  return `helper ${hello.helper.name} ${hello.helper.version} writes PNG only (no screenshot.formats): --image-format ${format} needs a newer helper (protocol 2.2); leave --image-format at png`;
}
// ---- end screenshot options

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

/** Nodes read from the app when no larger --max-nodes asks for more: a bound on the calls into it. */
export const DEFAULT_READ_NODES = 2000;

/** How an observation is taken and shown (get-app-state's flags; an action's --state takes the defaults). */
export interface ObserveOptions {
  noScreenshot?: boolean;
  /** Most nodes shown in the page; the app is read for at least DEFAULT_READ_NODES. */
  maxNodes?: number;
  /** For the audit of a refusal (default get-app-state). */
  command?: string;
  /** The page shown (default: compact, DEFAULT_COMPACT_MAX_BYTES). */
  view?: Partial<ViewOptions>;
  /** A base snapshot id: report what changed since it, its indices kept (src/session/diff.ts). */
  since?: string;
  /** Crop, scale and encoding of the window image (default: the engine's scope). */
  image?: ScreenshotOptions;
  // ---- issue 14: OCR options
  /** Read the window image's text (src/engine/ocr-snapshot.ts): true asks for it, false turns off the automatic OCR of an app without a tree. */
  ocr?: boolean;
  // ---- end OCR options
  // ---- issue 14: set-of-marks options
  /** Also write the set-of-marks PNG: the window image with a numbered box on each actionable element shown (src/engine/marks.ts). */
  marks?: boolean;
  // ---- end set-of-marks options
}

/** An observation: the stored snapshot, the page shown of it, and how it went. */
export type Observation = Snapshot & {
  screenshotError?: { code: string; message: string };
  warnings?: ObservationWarning[];
  page: Page;
  diff?: SnapshotDiff;
  // ---- issue 14: OCR result
  ocr?: OcrReport;
  ocrError?: { code: string; message: string };
  // ---- end OCR result
  // ---- issue 14: set-of-marks result
  marks?: MarksInfo;
  marksError?: { code: string; message: string };
  // ---- end set-of-marks result
};

/** The view options with their defaults: compact within DEFAULT_COMPACT_MAX_BYTES; full without a budget. */
export function viewOptions(v: Partial<ViewOptions> | undefined): ViewOptions {
  const format = v?.format ?? "compact";
  return {
    format,
    maxNodes: v?.maxNodes ?? null,
    maxBytes: v?.maxBytes ?? (format === "compact" ? DEFAULT_COMPACT_MAX_BYTES : null),
    offset: v?.offset ?? 0,
    withBounds: v?.withBounds ?? false,
  };
}

/**
 * A further page of a stored snapshot. A snapshot whose first page was cut
 * has a horizon (the furthest node shown; an element past it is refused
 * ELEMENT_BEYOND_HORIZON): this page moves it on, or lifts it on the last
 * page. A snapshot shown whole has none, and a small page does not add one.
 */
export function showPage(store: SnapshotStore, snapshot: Snapshot, view: ViewOptions): Page {
  const page = renderPage(snapshot, view);
  if (snapshot.horizon !== undefined) store.showThrough(snapshot.snapshotId, page.nextOffset === undefined ? null : page.lastPosition);
  return page;
}

export async function observe(engine: Observer, app: ResolvedApp, window: WireWindow, opts: ObserveOptions): Promise<Observation> {
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
  if (!treeless) engine.progress?.({ kind: "tree", app: app.name });
  const treeP: Promise<{ result: { nodes: WireNode[]; truncated: boolean } }> = treeless
    ? Promise.resolve({ result: { nodes: [], truncated: false } })
    : supervisor.request("get_tree", {
        pid: app.pid,
        window_id: window.window_id,
        max_depth: 64,
        max_children: 1000,
        max_nodes: Math.max(DEFAULT_READ_NODES, opts.maxNodes ?? 0),
      });
  // Tree and pixels are independent: ask for both at once. Unless a field
  // once secure may now show its text (the helper redacts only what it sees
  // as secure): then the tree first, and those fields blacked out too.
  const shotP: Promise<ScreenshotOutcome> = opts.noScreenshot
    ? Promise.resolve({ screenshot: null })
    : remembered.length === 0
      ? captureWindow(engine, window.window_id, snapshotId, [], opts.image, window.bounds)
      : treeP.then(({ result }) => captureWindow(engine, window.window_id, snapshotId, revealedBounds(result.nodes, remembered), opts.image, window.bounds));
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
  const targetKey = targetKeyOf(appRecord);
  // A diff keeps the base's indices for what persists: decided before the tree is numbered.
  const base = opts.since !== undefined ? engine.store.get(opts.since) : null;
  const blocker = opts.since !== undefined ? diffBlocker(base, { targetKey, pid: app.pid, startTime: app.startTime, windowId: window.window_id }) : null;
  const reuse = base && blocker === null ? reuseFrom(base) : undefined;
  if (reuse) reuse.nextFree = Math.max(reuse.nextFree, tree.nodes.length);
  const built = buildTree(tree.nodes, locatorKindOf(hello.helper.platform), DEFAULT_TREE_CAPS, reuse);
  const now = Date.now();
  const ttl = Number(engine.env.DECKHAND_SNAPSHOT_TTL_MS || DEFAULT_SNAPSHOT_TTL_MS);
  engine.store.rememberSecure(windowKey, secureLocatorsOf(tree.nodes), now + ttl, now);
  const snapshot: Snapshot = {
    snapshotId,
    targetKey,
    windowKey,
    app: appRecord,
    window: { windowId: window.window_id, title: window.title, bounds: window.bounds },
    capturedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttl).toISOString(),
    elementCount: built.elements.length,
    truncated: tree.truncated,
    elements: built.elements,
    nodes: built.nodes,
    screenshot: shot.screenshot,
    ...(Object.keys(built.actionPairs).length ? { actionPairs: built.actionPairs } : {}),
  };
  // ---- issue 14: OCR (before the snapshot is stored: its elements are part of it)
  const ocrOutcome = await addOcr({
    snapshot,
    screenshot: shot.screenshot,
    asked: opts.ocr,
    treeless,
    secure: tree.nodes.filter((n) => isSecureNode(n) && n.bounds).map((n) => n.bounds!),
    base: reuse ? base : null,
    env: engine.env,
    signal: (engine as { cancelSignal?: AbortSignal }).cancelSignal,
    // The same window and region at full size, the same fields blacked out; never kept.
    fullResolution: async () =>
      (await captureWindow(engine, window.window_id, `shot_${Date.now().toString(36)}_ocr${Math.random().toString(36).slice(2, 8)}`, remembered.length ? revealedBounds(rawTree.nodes, remembered) : [], { region: (opts.image ?? engine.screenshotOptions)?.region, ifSupported: true }, window.bounds)).screenshot,
  });
  // ---- end OCR
  const view = viewOptions(opts.view);
  const page = renderPage(snapshot, view);
  const diff: SnapshotDiff | undefined =
    opts.since === undefined
      ? undefined
      : base && blocker === null
        ? diffSnapshots(base, snapshot, { full: view.format === "full", withBounds: view.withBounds })
        : { since: opts.since, applied: false, reason: blocker!, added: [], removed: [], changed: [], unchanged: 0 };
  // The horizon: how far the agent was shown this snapshot. An applied diff
  // shows the changes against a base the agent read: the base's horizon
  // carries over (none when the base was shown whole, else this page's).
  const cut = page.nextOffset !== undefined;
  if (diff?.applied ? base!.horizon !== undefined && cut : cut) snapshot.horizon = page.lastPosition;
  engine.store.save(snapshot);
  const observation: Observation = { ...snapshot, page };
  if (diff) observation.diff = diff;
  // ---- issue 14: set-of-marks (after the page: only what the agent is shown is numbered)
  if (opts.marks) Object.assign(observation, await marksFor(engine.store, snapshot, observation.page, shot.screenshot, shot.screenshotError));
  // ---- end set-of-marks
  // Not part of the stored snapshot: how this observation went.
  if (shot.screenshotError) observation.screenshotError = shot.screenshotError;
  if (treeless) observation.warnings = [noTreeWarning(app)];
  // ---- issue 14: OCR report (after the warnings: an automatic OCR that could not run adds one)
  applyOcrOutcome(observation, ocrOutcome);
  // ---- end OCR report
  return observation;
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

/** rememberedSecureRects from a tree already read (a trace's capture reads the tree once for both). */
export function rememberedSecureRectsIn(engine: StorePort, app: ResolvedApp, windowId: number, nodes: readonly WireNode[]): Rect[] {
  const remembered = engine.store.secureLocators(windowKeyOf(app, windowId));
  return remembered.length === 0 ? [] : revealedBounds(nodes, remembered);
}

/** Screen bounds of remembered-secure fields the helper no longer reports as secure. */
function revealedBounds(nodes: readonly WireNode[], remembered: readonly SecureLocator[]): Rect[] {
  return nodes.filter((n) => !n.secure && n.bounds && rememberedSecure(n, remembered)).map((n) => n.bounds!);
}

/**
 * The public get-app-state result shape. An applied diff shows only what
 * changed (diff.added / changed / removed): the tree text and elements are
 * left empty; otherwise the page.
 */
export function appStateResult(s: Observation, app: ResolvedApp) {
  const { screenshot, screenshotError, warnings, window, page, diff } = s;
  const applied = diff?.applied === true;
  return {
    app: { name: app.name, pid: app.pid, executable: app.executable, desktopId: app.desktopId },
    window: { windowId: window.windowId, title: window.title, bounds: window.bounds },
    snapshot: {
      snapshotId: s.snapshotId,
      targetKey: s.targetKey,
      windowKey: s.windowKey,
      capturedAt: s.capturedAt,
      expiresAt: s.expiresAt,
      treeText: applied ? "" : page.treeText,
      elementCount: s.elementCount,
      truncated: page.truncated,
      format: page.format,
      offset: page.offset,
      ...(page.nextOffset !== undefined && !applied ? { nextOffset: page.nextOffset } : {}),
      budget: page.budget,
      ...(diff ? { diff } : {}),
      ...(page.elements && !applied ? { elements: page.elements } : page.elements ? { elements: [] } : {}),
    },
    screenshot,
    ...(screenshotError ? { screenshotError } : {}),
    // ---- issue 14: OCR and set-of-marks in the result
    ...(s.marks ? { marks: s.marks } : s.marksError ? { marksError: s.marksError } : {}), // marks
    ...ocrResultFields(s), // ocr
    // ---- end OCR and set-of-marks in the result
    ...(warnings?.length ? { warnings } : {}),
  };
}

/** A stored snapshot's page, as get-app-state --snapshot-id --offset shows it (no new observation). */
export function pageResult(store: SnapshotStore, s: Snapshot, app: ResolvedApp, view: ViewOptions) {
  return appStateResult({ ...s, page: showPage(store, s, view) }, app);
}
