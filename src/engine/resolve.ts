// App and window resolution. App: pid:N; else exact executable (canonical
// path or its basename) or desktop id; then exact unambiguous name; then the
// same, case-insensitively and through wrapper names (thunderbird is
// thunderbird-bin, soffice is soffice.bin, libreoffice is soffice).
import { basename } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import type { SnapshotApp } from "../session/snapshot.ts";
import type { WireApp, WireWindow } from "../wire/messages.ts";
import type { HelperPort } from "./ports.ts";
import { hostProcessFacts } from "../platform/index.ts";

export interface ResolvedApp extends SnapshotApp {
  accessible: boolean;
  windowCount: number;
  /** The toolkit the helper recognised (gtk3, qt5, chromium, ...), null when unknown. */
  toolkit?: string | null;
}

export function toApp(a: WireApp): ResolvedApp {
  return {
    pid: a.pid,
    startTime: a.start_time,
    name: a.name,
    executable: a.executable,
    desktopId: a.desktop_id,
    ...(a.process_name !== undefined ? { processName: a.process_name } : {}),
    ...(a.executable_deleted !== undefined ? { executableDeleted: a.executable_deleted } : {}),
    ...(a.bundle_id !== undefined ? { bundleId: a.bundle_id } : {}),
    accessible: a.accessible,
    windowCount: a.window_count,
    toolkit: a.toolkit ?? null,
  };
}

function stripDesktop(id: string): string {
  return id.replace(/\.desktop$/, "");
}

/**
 * Launchers and their real executables: a wrapper script starts `X-bin` or
 * `X.bin` (Thunderbird, LibreOffice's soffice.bin), and a few apps are known
 * by another name than their process. One key for each family.
 */
const ALIASES: Readonly<Record<string, string>> = Object.freeze({ libreoffice: "soffice", "firefox-esr": "firefox", "chromium-browser": "chromium", "google-chrome": "chrome" });

export function appKey(s: string): string {
  const k = stripDesktop(basename(s.trim()))
    .toLowerCase()
    .replace(/(?:[-.]bin|\.real|-wrapped)$/, "");
  return Object.hasOwn(ALIASES, k) ? ALIASES[k]! : k;
}

function pick(selector: string, matches: WireApp[]): WireApp | null {
  if (matches.length === 1) return matches[0]!;
  if (matches.length > 1) {
    throw new DeckhandError("AMBIGUOUS_APP", `${matches.length} apps match ${JSON.stringify(selector)}`, {
      details: {
        app: selector,
        candidates: matches.map((a) => `pid:${a.pid} ${a.name} (${a.executable ?? "?"})`).join("; "),
      },
    });
  }
  return null;
}

export function matchApp(selector: string, apps: WireApp[]): WireApp {
  const pidMatch = /^pid:(\d+)$/.exec(selector);
  if (pidMatch) {
    const pid = Number(pidMatch[1]);
    const app = apps.find((a) => a.pid === pid);
    if (!app) throw new DeckhandError("APP_NOT_FOUND", `no running app has pid ${pid}`, { details: { app: selector } });
    return app;
  }
  // Exact first: an exact hit is never made ambiguous by a looser one.
  const byExe = apps.filter(
    (a) =>
      (a.executable !== null && (a.executable === selector || basename(a.executable) === selector)) ||
      (a.desktop_id !== null && stripDesktop(a.desktop_id) === stripDesktop(selector)),
  );
  const exact = pick(selector, byExe.length ? byExe : apps.filter((a) => a.name === selector));
  if (exact) return exact;
  // Then loosely: case-insensitive, through wrapper names, over executable, desktop id and name.
  const key = appKey(selector);
  if (key) {
    const loose = pick(
      selector,
      apps.filter((a) => [a.executable, a.desktop_id, a.name].some((v) => v !== null && appKey(v) === key)),
    );
    if (loose) return loose;
  }
  throw new DeckhandError("APP_NOT_FOUND", `no running app matches ${JSON.stringify(selector)}`, { details: { app: selector } });
}

/**
 * How long a resolved name stays trusted in a long-running session. A pid:N
 * selector is trusted for as long as the same process (pid + start time)
 * lives; a name is re-listed after this, so a second instance started since
 * makes it ambiguous again.
 */
const NAME_TTL_MS = 2000;

/** Resolved app selectors of a session (the engine's), with when each was resolved. */
export interface AppCache {
  readonly appCache: Map<string, { app: ResolvedApp; at: number }>;
}

export async function resolveApp(engine: HelperPort & AppCache, selector: string): Promise<ResolvedApp> {
  // The cache is checked against the host's live start witness (src/platform):
  // where the host gives none, every resolution asks the helper.
  const host = hostProcessFacts();
  const cached = engine.appCache.get(selector);
  if (cached && cached.app.startTime !== null && host.startTime(cached.app.pid) === cached.app.startTime) {
    if (selector.startsWith("pid:") || Date.now() - cached.at < NAME_TTL_MS) return cached.app;
  }
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("list_apps", {});
  const app = toApp(matchApp(selector, result.apps));
  // Only a process whose start witness we can re-read is worth caching.
  if (app.startTime !== null && host.startTime(app.pid) === app.startTime) {
    engine.appCache.set(selector, { app, at: Date.now() });
  } else {
    engine.appCache.delete(selector);
  }
  return app;
}

/**
 * Windows of one app, front-most first; windowIndex indexes this list.
 * `popups`: also the popups that cost calls into the app to find (sway's).
 */
export async function appWindows(engine: HelperPort, pid: number, opts: { popups?: boolean } = {}): Promise<WireWindow[]> {
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("list_windows", { pid, ...(opts.popups ? { popups: true } : {}) });
  return result.windows.filter((w) => w.pid === pid).sort((a, b) => b.z_index - a.z_index);
}

export async function resolveWindow(
  engine: HelperPort,
  app: ResolvedApp,
  sel: { windowId?: number; windowIndex?: number },
): Promise<{ window: WireWindow; windows: WireWindow[] }> {
  const windows = await appWindows(engine, app.pid);
  if (sel.windowId !== undefined) {
    const w = windows.find((x) => x.window_id === sel.windowId);
    if (!w) throw new DeckhandError("WINDOW_NOT_FOUND", `app ${app.name} has no window ${sel.windowId}`, { details: { windowId: sel.windowId } });
    return { window: w, windows };
  }
  if (sel.windowIndex !== undefined) {
    const w = windows[sel.windowIndex];
    if (!w) throw new DeckhandError("WINDOW_NOT_FOUND", `app ${app.name} has ${windows.length} windows; index ${sel.windowIndex} is out of range`, { details: { windowIndex: sel.windowIndex } });
    return { window: w, windows };
  }
  // Never an open menu or tooltip (a popup) as the app's window: it belongs to one.
  const main = windows.filter((x) => !x.popup);
  const w = main.find((x) => !x.minimized) ?? main[0];
  if (!w) throw new DeckhandError("WINDOW_NOT_FOUND", `app ${app.name} has no top-level window`, { details: { pid: app.pid } });
  return { window: w, windows };
}
