// issue 13 (lifecycle): --restore-window / a program's restoreWindow. Before
// the first step, a minimized target window is un-minimized (helper
// window_op restore) and the wait lasts until the window list shows it
// shown again (bounded). Without the flag nothing here runs.
import { DeckhandError } from "../protocol/errors.ts";
import type { WireWindow } from "../wire/messages.ts";
import { requireCapability, type CancelSignal, type HelperPort, type SafetyPort } from "../engine/ports.ts";
import { appWindows, type ResolvedApp } from "../engine/resolve.ts";
import { auditAppId } from "../engine/safety.ts";

/** Longest the window list is watched for the restored window (shown, and still). */
const RESTORE_WAIT_MS = 3000;
const POLL_MS = 50;

/**
 * Un-minimize window `windowId` of `app` when it is minimized; the window
 * objects in `known` that describe it are updated in place with what the
 * window list shows afterwards. True when it was restored, false when it
 * was not minimized (nothing sent).
 */
export async function restoreTargetWindow(
  engine: HelperPort & SafetyPort & CancelSignal,
  app: ResolvedApp,
  windowId: number | null,
  known: readonly (WireWindow | null)[],
  command: string,
  /** The policy layer that allowed acting on the app (the audit line's decision source). */
  decisionSource: string,
): Promise<boolean> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "window_op", "--restore-window");
  if (windowId === null) return false;
  const find = async () => (await appWindows(engine, app.pid)).find((w) => w.window_id === windowId);
  const current = await find();
  if (!current) throw new DeckhandError("WINDOW_NOT_FOUND", `app ${app.name} has no window ${windowId}`, { details: { windowId, delivery: "not_dispatched" } });
  if (!current.minimized) return false;
  engine.safety.checkPaused(command);
  const { result, receipt } = await supervisor.request("window_op", { window_id: windowId, op: "restore" });
  const sent = receipt?.delivery ?? "unknown";
  engine.safety.audit({ command, appId: auditAppId(app), pid: app.pid, windowId, decision: "allow", decisionSource, rule: "restore-window", outcome: result.done ? "OK" : "VERIFICATION_FAILED", delivery: sent });
  // Shown again, and where it stays: window managers animate a
  // de-iconify (openbox slides the window in over ~150 ms), and a point
  // judged against a moving window would miss it.
  const deadline = Date.now() + RESTORE_WAIT_MS;
  const same = (a: WireWindow | undefined, b: WireWindow | undefined) =>
    !!a && !!b && a.bounds.x === b.bounds.x && a.bounds.y === b.bounds.y && a.bounds.width === b.bounds.width && a.bounds.height === b.bounds.height;
  let prev: WireWindow | undefined;
  let now = await find();
  while ((now?.minimized || !same(prev, now)) && Date.now() < deadline) {
    if (engine.cancelSignal?.aborted) throw new DeckhandError("CANCELLED", `${command} was cancelled while restoring its window`, { details: { delivery: sent } });
    await new Promise((r) => setTimeout(r, POLL_MS));
    prev = now?.minimized ? undefined : now;
    now = await find();
  }
  if (!now || now.minimized) {
    throw new DeckhandError("VERIFICATION_FAILED", `window ${windowId} is still minimized after the restore request: ${result.detail}`, { details: { windowId, delivery: sent, reason: "restore-window" } });
  }
  for (const w of known) if (w && w.window_id === windowId) Object.assign(w, now);
  return true;
}
