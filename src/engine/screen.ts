// Whole-screen screenshots show what observation may not: a denied app's
// window, a browser on a blocked page. Before the helper writes the PNG,
// deckhand names the screen rectangles to black out (the screenshot op's
// `redact`): every window of an app policy denies (its bounds plus the window
// manager's frame, which shows its title), every browser window on a blocked
// or unreadable page, and every window whose owner is unknown (fail closed).
// Secure fields are blacked out by the helper itself (`redact_secure`, every
// window with a known pid). After the capture the windows are listed again;
// if something that must be blacked out appeared or moved meanwhile, the
// image is discarded and taken again.
import { rmSync } from "node:fs";
import { DeckhandError } from "../protocol/errors.ts";
import { checkBrowserUrl } from "./page-url.ts";
import type { ScreenshotInfo } from "../session/snapshot.ts";
import type { Rect, WireApp, WireWindow } from "../wire/messages.ts";
import { requireCapability, type HelperPort, type SafetyPort, type ScreenshotOptions, type ScreenshotScope, type StorePort } from "./ports.ts";
import { captureWindow } from "./observe.ts";
import { toApp } from "./resolve.ts";

/** Why regions of a whole-screen screenshot were blacked out, by count. */
export interface Redactions {
  /** Windows of apps policy denies (built-in, admin, user; window-title rules). */
  deniedWindows: number;
  /** Browser windows on a blocked page, or whose page URL could not be read. */
  blockedUrls: number;
  /** Windows whose owning process is unknown: their app cannot be judged. */
  unidentifiedWindows: number;
  /** Secure (password) fields, blacked out by the helper. */
  secureFields: number;
}

/**
 * The frame a window manager draws around a client window (title bar above,
 * borders around) lies outside the client bounds a helper reports, and shows
 * the window's title: it is blacked out with the window. Generous on purpose.
 */
export const FRAME_MARGIN = { top: 40, side: 8 } as const;

/** Capture attempts before giving up on a screen whose windows keep changing. */
const ATTEMPTS = 3;

type Verdict = "allow" | "denied" | "blocked-url" | "unidentified";

interface Plan {
  rects: Rect[];
  counts: Omit<Redactions, "secureFields">;
}

function withFrame(b: Rect): Rect {
  return { x: b.x - FRAME_MARGIN.side, y: b.y - FRAME_MARGIN.top, width: b.width + 2 * FRAME_MARGIN.side, height: b.height + FRAME_MARGIN.top + FRAME_MARGIN.side };
}

function contains(outer: Rect, inner: Rect): boolean {
  return inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;
}

function intersects(a: Rect, b: Rect): boolean {
  return a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
}

/**
 * What one whole-screen screenshot must black out. Verdicts are reused
 * between the passes of one capture: the second pass catches windows that
 * appeared, moved or were renamed, not a page that changed in the meantime.
 */
class ScreenPlanner {
  private verdicts = new Map<string, Verdict>();
  private apps: Map<number, WireApp> | null = null;

  constructor(private readonly engine: HelperPort & SafetyPort) {}

  async plan(): Promise<Plan> {
    const { supervisor } = await this.engine.helper();
    const listApps = async () => {
      const listed = await supervisor.request("list_apps", {});
      this.apps = new Map(listed.result.apps.map((a) => [a.pid, a]));
    };
    // Apps are listed once (alongside the first window listing), and again
    // only when a window of a pid not seen yet appears.
    const [{ result }] = await Promise.all([supervisor.request("list_windows", { pid: null }), this.apps ? undefined : listApps()]);
    const shown = result.windows.filter((w) => !w.minimized);
    if (shown.some((w) => w.pid !== null && !this.apps!.has(w.pid))) await listApps();
    const verdicts = await Promise.all(shown.map((w) => this.verdict(w)));
    const plan: Plan = { rects: [], counts: { deniedWindows: 0, blockedUrls: 0, unidentifiedWindows: 0 } };
    shown.forEach((w, i) => {
      const v = verdicts[i]!;
      if (v === "allow") return;
      plan.rects.push(withFrame(w.bounds));
      if (v === "denied") plan.counts.deniedWindows++;
      else if (v === "blocked-url") plan.counts.blockedUrls++;
      else plan.counts.unidentifiedWindows++;
    });
    return plan;
  }

  private async verdict(w: WireWindow): Promise<Verdict> {
    const key = `${w.window_id}|${w.pid}|${w.title}`;
    const known = this.verdicts.get(key);
    if (known) return known;
    const v = await this.decide(w);
    this.verdicts.set(key, v);
    return v;
  }

  private async decide(w: WireWindow): Promise<Verdict> {
    if (w.pid === null) return "unidentified";
    // An app the helper did not list is judged by what the host says of its pid (src/platform).
    const app = toApp(this.apps?.get(w.pid) ?? { pid: w.pid, name: "", executable: null, desktop_id: null, accessible: false, start_time: null, window_count: 0 });
    const safety = this.engine.safety;
    if (safety.decideApp) {
      if (safety.decideApp(app, { title: w.title }).decision === "deny") return "denied";
    } else {
      try {
        safety.checkApp(app, { title: w.title }, "screenshot");
      } catch (err) {
        if (err instanceof DeckhandError && err.code === "POLICY_DENIED") return "denied";
        throw err;
      }
    }
    try {
      await checkBrowserUrl(this.engine, app, w.window_id);
      return "allow";
    } catch (err) {
      if (err instanceof DeckhandError && err.code === "CANCELLED") throw err;
      // Blocked, unreadable, or the tree could not be read: fail closed.
      return "blocked-url";
    }
  }
}

/**
 * Capture the whole screen with every region observation may not show
 * blacked out, and say how many and why. `options` (default: the engine's
 * scope) crop and scale it in the helper, after the blacking out, and name
 * its format; the result describes the file written.
 */
export async function captureScreen(
  engine: HelperPort & StorePort & SafetyPort & ScreenshotScope,
  name: string,
  options: ScreenshotOptions | undefined = engine.screenshotOptions,
): Promise<{ screenshot: ScreenshotInfo; redacted: Redactions }> {
  const { hello } = await engine.helper();
  requireCapability(hello, "list_windows", "a whole-screen screenshot (the windows to black out must be listed)");
  const planner = new ScreenPlanner(engine);
  let plan = await planner.plan();
  for (let attempt = 1; ; attempt++) {
    const out = await captureWindow(engine, 0, name, plan.rects, options);
    if (!out.screenshot) {
      // issue 14: INVALID_ARGUMENTS is a --region that shows nothing of the screen.
      const kept = ["TIMEOUT", "ACTION_UNSUPPORTED", "INVALID_ARGUMENTS"] as const;
      const code = kept.find((c) => c === out.screenshotError!.code) ?? "SCREENSHOT_FAILED";
      const details = code === "INVALID_ARGUMENTS" ? { details: { flag: "--region", reason: "region-outside-screen" } } : {};
      throw new DeckhandError(code, out.screenshotError!.message, details);
    }
    const shot = out.screenshot;
    const after = await planner.plan();
    if (after.rects.every((r) => plan.rects.some((p) => contains(p, r)))) {
      // The screen area the PNG shows (cropped and scaled, when it was).
      const image: Rect = { x: shot.origin.x, y: shot.origin.y, width: Math.ceil(shot.width / shot.scale), height: Math.ceil(shot.height / shot.scale) };
      const ours = plan.rects.filter((r) => intersects(r, image)).length;
      return { screenshot: shot, redacted: { ...plan.counts, secureFields: Math.max(0, shot.redacted - ours) } };
    }
    // A window to black out appeared or moved during the capture: never keep that image.
    rmSync(shot.path, { force: true });
    if (attempt >= ATTEMPTS) {
      throw new DeckhandError("SCREENSHOT_FAILED", `windows that must be blacked out kept changing during ${ATTEMPTS} captures`, { details: { attempts: ATTEMPTS } });
    }
    plan = after;
  }
}
