// App and window resolution. App: exact executable (canonical path or its
// basename) or desktop id, then exact unambiguous name, then pid:N.
import { basename } from "node:path";
import { DeckhandError } from "../protocol/errors.ts";
import type { SnapshotApp } from "../session/snapshot.ts";
import type { WireApp, WireWindow } from "../wire/messages.ts";
import type { Engine } from "./engine.ts";

export interface ResolvedApp extends SnapshotApp {
  accessible: boolean;
  windowCount: number;
}

export function toApp(a: WireApp): ResolvedApp {
  return {
    pid: a.pid,
    startTime: a.start_time,
    name: a.name,
    executable: a.executable,
    desktopId: a.desktop_id,
    accessible: a.accessible,
    windowCount: a.window_count,
  };
}

function stripDesktop(id: string): string {
  return id.replace(/\.desktop$/, "");
}

export function matchApp(selector: string, apps: WireApp[]): WireApp {
  const pidMatch = /^pid:(\d+)$/.exec(selector);
  if (pidMatch) {
    const pid = Number(pidMatch[1]);
    const app = apps.find((a) => a.pid === pid);
    if (!app) throw new DeckhandError("APP_NOT_FOUND", `no running app has pid ${pid}`, { details: { app: selector } });
    return app;
  }
  const byExe = apps.filter(
    (a) =>
      (a.executable !== null && (a.executable === selector || basename(a.executable) === selector)) ||
      (a.desktop_id !== null && stripDesktop(a.desktop_id) === stripDesktop(selector)),
  );
  const byName = byExe.length ? byExe : apps.filter((a) => a.name === selector);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1) {
    throw new DeckhandError("AMBIGUOUS_APP", `${byName.length} apps match ${JSON.stringify(selector)}`, {
      details: {
        app: selector,
        candidates: byName.map((a) => `pid:${a.pid} ${a.name} (${a.executable ?? "?"})`).join("; "),
      },
    });
  }
  throw new DeckhandError("APP_NOT_FOUND", `no running app matches ${JSON.stringify(selector)}`, { details: { app: selector } });
}

export async function resolveApp(engine: Engine, selector: string): Promise<ResolvedApp> {
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("list_apps", {});
  return toApp(matchApp(selector, result.apps));
}

/** Windows of one app, front-most first; windowIndex indexes this list. */
export async function appWindows(engine: Engine, pid: number): Promise<WireWindow[]> {
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("list_windows", { pid });
  return result.windows.filter((w) => w.pid === pid).sort((a, b) => b.z_index - a.z_index);
}

export async function resolveWindow(
  engine: Engine,
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
  const w = windows.find((x) => !x.minimized) ?? windows[0];
  if (!w) throw new DeckhandError("WINDOW_NOT_FOUND", `app ${app.name} has no top-level window`, { details: { pid: app.pid } });
  return { window: w, windows };
}
