// Pointer input stays inside the target app's allowed windows. Every input
// op with pointer steps carries the pointer guard (the ids of the target's
// windows that policy allows, judged window by window, title rules included):
// the helper refuses any event whose point is over anything else, frames and
// title bars counted as part of their window. Before dispatch, every point
// that is known (clicks, drag points, scroll and move points) is checked here
// too, so that a refusal that can be known sends nothing.
import { DeckhandError } from "../protocol/errors.ts";
import type { Rect, WireWindow } from "../wire/messages.ts";
import { requireCapability, type HelperPort, type SafetyPort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { Safety } from "../engine/safety.ts";
import { FRAME_MARGIN } from "../engine/screen.ts";

/** The windows a pointer step may touch, and the screen it was judged against. */
export interface PointerScope {
  pid: number;
  /** Ids of the target app's windows that policy allows: the pointer guard. */
  allowed: number[];
  /** Every window on screen (for the stacking order and other apps' frames). */
  windows: WireWindow[];
  /** Why a window of the target app was denied (its rule), by id. */
  denied: Map<number, { source: string; rule: string }>;
}

/**
 * The target app's windows, each judged by policy with its own title (the
 * non-throwing decideApp of the safety seam), and every window on screen.
 */
export async function pointerScope(engine: HelperPort & SafetyPort, app: ResolvedApp): Promise<PointerScope> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "list_windows", "pointer input (the target's windows must be listed for the pointer guard)");
  const { result } = await supervisor.request("list_windows", { pid: null });
  const allowed: number[] = [];
  const denied = new Map<number, { source: string; rule: string }>();
  for (const w of result.windows) {
    if (w.pid !== app.pid) continue;
    const d = judgeWindow(engine.safety, app, w);
    if (d.decision === "allow") allowed.push(w.window_id);
    else denied.set(w.window_id, { source: d.source, rule: d.rule });
  }
  return { pid: app.pid, allowed, windows: result.windows, denied };
}

// ---- issue 15: click
/**
 * pointerScope from the target's own windows, already listed (the program's
 * window resolution): no second listing. Other apps' windows are not in it,
 * so pointVerdict here only refuses what the target's windows show (a point
 * over none of them, or over a window policy denies); what another app's
 * window covers, the helper's guard refuses before sending anything (the
 * point_click op checks the window at the point first).
 */
export function appPointerScope(safety: Safety, app: ResolvedApp, appWindows: readonly WireWindow[]): PointerScope {
  const allowed: number[] = [];
  const denied = new Map<number, { source: string; rule: string }>();
  for (const w of appWindows) {
    if (w.pid !== app.pid) continue;
    const d = judgeWindow(safety, app, w);
    if (d.decision === "allow") allowed.push(w.window_id);
    else denied.set(w.window_id, { source: d.source, rule: d.rule });
  }
  return { pid: app.pid, allowed, windows: appWindows.filter((w) => w.pid === app.pid), denied };
}
// ---- end click

function judgeWindow(safety: Safety, app: ResolvedApp, w: WireWindow): { decision: "allow" | "deny"; source: string; rule: string } {
  if (safety.decideApp) return safety.decideApp(app, { title: w.title });
  try {
    const d = safety.checkApp(app, { title: w.title }, "pointer-guard");
    return { decision: "allow", ...d };
  } catch (err) {
    if (err instanceof DeckhandError && err.code === "POLICY_DENIED") {
      return { decision: "deny", source: String(err.details.source ?? "unknown"), rule: String(err.details.rule ?? "unknown") };
    }
    throw err;
  }
}

/** The wire pointer guard of a scope. */
export function pointerGuard(scope: PointerScope): { pid: number; windows: number[] } {
  return { pid: scope.pid, windows: [...scope.allowed] };
}

function inside(r: Rect, x: number, y: number): boolean {
  return x >= r.x && y >= r.y && x < r.x + r.width && y < r.y + r.height;
}

function framed(b: Rect): Rect {
  return { x: b.x - FRAME_MARGIN.side, y: b.y - FRAME_MARGIN.top, width: b.width + 2 * FRAME_MARGIN.side, height: b.height + FRAME_MARGIN.top + FRAME_MARGIN.side };
}

export type PointVerdict = { ok: true; windowId: number } | { ok: false; pid: number | null; windowId: number | null; frame: boolean };

/**
 * Which window a point is over, from the listed stacking order: the topmost
 * window whose client area holds it, unless a window above it (of another
 * app, or denied) has its window-manager frame there (title bars are not in
 * the client bounds a helper reports, so the frame margin is a generous
 * guess). A point over an allowed window's frame only is allowed here; the
 * helper, which knows the real frames, has the last word.
 */
export function pointVerdict(scope: PointerScope, x: number, y: number): PointVerdict {
  const allowed = new Set(scope.allowed);
  const shown = scope.windows.filter((w) => !w.minimized).sort((a, b) => b.z_index - a.z_index);
  let ownFrame: WireWindow | null = null;
  for (const w of shown) {
    if (inside(w.bounds, x, y)) {
      if (allowed.has(w.window_id)) return { ok: true, windowId: w.window_id };
      return { ok: false, pid: w.pid, windowId: w.window_id, frame: false };
    }
    if (inside(framed(w.bounds), x, y)) {
      if (!allowed.has(w.window_id)) return { ok: false, pid: w.pid, windowId: w.window_id, frame: true };
      ownFrame ??= w;
    }
  }
  if (ownFrame) return { ok: true, windowId: ownFrame.window_id };
  return { ok: false, pid: null, windowId: null, frame: false };
}

/** POLICY_DENIED for a point outside the target's allowed windows; nothing was sent. */
export function outsideTarget(scope: PointerScope, v: Extract<PointVerdict, { ok: false }>, what: string, extra: Record<string, string | number | boolean> = {}): DeckhandError {
  const ownDenied = v.pid === scope.pid && v.windowId !== null ? scope.denied.get(v.windowId) : undefined;
  const where =
    v.pid === null
      ? "is not over any window of the target app"
      : v.pid !== scope.pid
        ? `is over another application's window${v.frame ? " (its frame or title bar)" : ""}`
        : ownDenied
          ? "is over a window of the target app that policy denies"
          : "is not over an allowed window of the target app";
  return new DeckhandError("POLICY_DENIED", `${what} ${where}`, {
    details: {
      reason: "point-outside-target",
      ...(v.pid !== null ? { pid: v.pid } : {}),
      ...(v.windowId !== null ? { windowId: v.windowId } : {}),
      ...(v.frame ? { frame: true } : {}),
      ...(ownDenied ? { source: ownDenied.source, rule: ownDenied.rule } : {}),
      ...extra,
      delivery: "not_dispatched",
    },
  });
}

/** Throws POLICY_DENIED unless the point is over one of the target's allowed windows. */
export function assertPointInScope(scope: PointerScope, x: number, y: number, what: string, extra: Record<string, string | number | boolean> = {}): number {
  const v = pointVerdict(scope, x, y);
  if (!v.ok) throw outsideTarget(scope, v, what, extra);
  return v.windowId;
}
