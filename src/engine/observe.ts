// Observation: one window's tree and screenshot become an immutable, durable snapshot.
import { DeckhandError } from "../protocol/errors.ts";
import { buildTree, newSnapshotId, targetKeyOf, type ScreenshotInfo, type Snapshot } from "../session/snapshot.ts";
import { DEFAULT_SNAPSHOT_TTL_MS } from "../session/store.ts";
import type { WireWindow } from "../wire/messages.ts";
import type { Engine } from "./engine.ts";
import type { ResolvedApp } from "./resolve.ts";

export interface ScreenshotOutcome {
  screenshot: ScreenshotInfo | null;
  screenshotError?: { code: string; message: string };
}

export async function captureWindow(engine: Engine, windowId: number, name: string): Promise<ScreenshotOutcome> {
  const { supervisor, hello } = await engine.helper();
  if (!hello.capabilities.screenshot?.supported) {
    return { screenshot: null, screenshotError: { code: "ACTION_UNSUPPORTED", message: "helper cannot capture screenshots" } };
  }
  try {
    const { result } = await supervisor.request("screenshot", {
      window_id: windowId,
      path: engine.store.screenshotPath(name),
      redact_secure: true,
      redact: [],
    });
    return {
      screenshot: {
        path: result.path,
        width: result.width,
        height: result.height,
        scale: result.scale,
        origin: result.origin,
        method: result.method,
        redacted: result.redacted,
      },
    };
  } catch (err) {
    if (err instanceof DeckhandError) {
      return { screenshot: null, screenshotError: { code: err.code === "TIMEOUT" ? "TIMEOUT" : "SCREENSHOT_FAILED", message: err.message } };
    }
    throw err;
  }
}

export async function observe(
  engine: Engine,
  app: ResolvedApp,
  window: WireWindow,
  opts: { noScreenshot?: boolean; maxNodes?: number },
): Promise<Snapshot> {
  const { supervisor, hello } = await engine.helper();
  engine.requireCapability(hello, "get_tree", "reading an accessibility tree");
  const snapshotId = newSnapshotId();
  const treeP = supervisor.request("get_tree", {
    pid: app.pid,
    window_id: window.window_id,
    max_depth: 64,
    max_children: 1000,
    max_nodes: opts.maxNodes ?? 2000,
  });
  // Tree and pixels are independent: ask for both at once.
  const shotP: Promise<ScreenshotOutcome> = opts.noScreenshot
    ? Promise.resolve({ screenshot: null })
    : captureWindow(engine, window.window_id, snapshotId);
  const [{ result: tree }, shot] = await Promise.all([treeP, shotP]);
  const kind = hello.helper.platform === "linux" ? "atspi-path" : hello.helper.platform === "fake" ? "scripted-path" : hello.helper.platform === "macos" ? "ax-path" : "uia-path";
  const built = buildTree(tree.nodes, kind);
  const now = Date.now();
  const ttl = Number(engine.env.DECKHAND_SNAPSHOT_TTL_MS || DEFAULT_SNAPSHOT_TTL_MS);
  const appRecord = { pid: app.pid, startTime: app.startTime, name: app.name, executable: app.executable, desktopId: app.desktopId };
  const targetKey = targetKeyOf(appRecord);
  const snapshot: Snapshot & { screenshotError?: { code: string; message: string } } = {
    snapshotId,
    targetKey,
    windowKey: `${targetKey}#${window.window_id}`,
    app: appRecord,
    window: { windowId: window.window_id, title: window.title, bounds: window.bounds },
    capturedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + ttl).toISOString(),
    treeText: built.treeText,
    elementCount: built.elements.length,
    truncated: built.truncated || tree.truncated,
    elements: built.elements,
    screenshot: shot.screenshot,
  };
  if (shot.screenshotError) snapshot.screenshotError = shot.screenshotError;
  engine.store.save(snapshot);
  return snapshot;
}

/** The public get-app-state result shape. */
export function appStateResult(s: Snapshot & { screenshotError?: { code: string; message: string } }, app: ResolvedApp) {
  const { screenshot, screenshotError, app: _a, window, ...snap } = s;
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
  };
}
