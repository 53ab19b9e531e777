// Linux only: the one place in the orchestrator that knows Linux itself.
// Everything else reads the helper's neutral wire (src/wire/vocabulary.ts);
// this module holds what the orchestrator may read of a Linux host without
// the helper, and Linux-specific advice. src/platform/index.ts chooses it by
// host platform; nothing else imports it for decisions.
//
// procfs is read only as a fallback, for a process the helper said nothing
// about (a window whose owner was not in the helper's list_apps, a field a
// helper left out), and as the cheap liveness witness of a cached app
// selector (same pid + same start time = same process). The helper's
// list_apps (executable, process_name, executable_deleted, start_time) is
// the primary source of process identity.
import { readFileSync, readlinkSync } from "node:fs";

/** Root of procfs; tests point it elsewhere. */
export const DEFAULT_PROC_ROOT = "/proc";

const DELETED = " (deleted)";

function validPid(pid: number): boolean {
  return Number.isSafeInteger(pid) && pid > 0;
}

/**
 * The kernel's record of a process's executable (/proc/PID/exe: already
 * symlink-free), with whether it was deleted or replaced on disk since the
 * process started. Null when the process is gone or not ours to inspect.
 */
export function procExe(pid: number, procRoot = DEFAULT_PROC_ROOT): { path: string; deleted: boolean } | null {
  if (!validPid(pid)) return null;
  try {
    const link = readlinkSync(`${procRoot}/${pid}/exe`);
    if (link.endsWith(DELETED)) return { path: link.slice(0, -DELETED.length), deleted: true };
    return { path: link, deleted: false };
  } catch {
    return null;
  }
}

/** /proc/PID/comm: the basename the process was exec'd as (15 characters at most), null when unreadable. */
export function procComm(pid: number, procRoot = DEFAULT_PROC_ROOT): string | null {
  if (!validPid(pid)) return null;
  try {
    const comm = readFileSync(`${procRoot}/${pid}/comm`, "utf8").replace(/\n$/, "");
    return comm || null;
  } catch {
    return null;
  }
}

/**
 * Field 22 of /proc/PID/stat (starttime, clock ticks since boot): the same
 * witness the Linux helper reports as a WireApp's start_time. Null when the
 * process is gone.
 */
export function procStartTime(pid: number, procRoot = DEFAULT_PROC_ROOT): number | null {
  if (!validPid(pid)) return null;
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, "utf8");
    // comm (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const v = Number(fields[19]);
    return Number.isFinite(v) ? v : null;
  } catch {
    return null;
  }
}

// ---- issue 13: app lifecycle
/** Fields 3 (state) and 4 (parent pid) of /proc/PID/stat; null when the process is gone. */
function procStateParent(pid: number, procRoot: string): { state: string; ppid: number } | null {
  if (!validPid(pid)) return null;
  try {
    const stat = readFileSync(`${procRoot}/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    return fields[0] && Number.isInteger(ppid) ? { state: fields[0], ppid } : null;
  } catch {
    return null;
  }
}

/** Whether a process runs: it has a /proc entry and is not a zombie or dead (it exited, unreaped). */
export function procAlive(pid: number, procRoot = DEFAULT_PROC_ROOT): boolean {
  const s = procStateParent(pid, procRoot);
  return s !== null && !/^[ZXx]$/.test(s.state);
}

/** Most parent links followed from a process up to init (deeper trees do not exist in practice). */
const MAX_ANCESTRY = 64;

/** Whether `ancestor` is a parent, grandparent... of `pid` (a process is not its own descendant). */
export function procIsDescendant(pid: number, ancestor: number, procRoot = DEFAULT_PROC_ROOT): boolean {
  if (!validPid(ancestor) || pid === ancestor) return false;
  let cur = pid;
  for (let i = 0; i < MAX_ANCESTRY; i++) {
    const s = procStateParent(cur, procRoot);
    if (!s || s.ppid <= 0) return false;
    if (s.ppid === ancestor) return true;
    cur = s.ppid;
  }
  return false;
}
// ---- end lifecycle

/**
 * What to do when an app of a Linux toolkit exposes no accessibility tree,
 * by the toolkit the helper recognised (list_apps `toolkit`). Every toolkit
 * decides at start-up whether to expose its tree, so the advice nearly
 * always ends in "restart it".
 */
export const LINUX_TOOLKIT_TREE_ADVICE: Readonly<Record<string, string>> = Object.freeze({
  chromium:
    "Chromium builds its accessibility tree only when the session's accessibility flag was on when it started, or with --force-renderer-accessibility: run `deckhand permissions --enable-accessibility`, then restart the browser.",
  electron:
    "Electron apps build their accessibility tree only when the accessibility flag was on when they started, or with --force-renderer-accessibility: run `deckhand permissions --enable-accessibility`, then restart the app.",
  qt5: "Qt enables its AT-SPI bridge only when QT_ACCESSIBILITY=1 is in its environment (or the accessibility flag was on when it started): restart the app with QT_ACCESSIBILITY=1.",
  qt6: "Qt enables its AT-SPI bridge only when QT_ACCESSIBILITY=1 is in its environment (or the accessibility flag was on when it started): restart the app with QT_ACCESSIBILITY=1.",
  firefox:
    "Firefox exposes its tree when the accessibility flag was on when it started (or with GNOME_ACCESSIBILITY=1): run `deckhand permissions --enable-accessibility`, then restart it.",
  libreoffice:
    "LibreOffice speaks AT-SPI only through its GTK3 plugin: install libreoffice-gtk3 and restart it (SAL_USE_VCLPLUGIN=gtk3 forces the plugin).",
  gtk3: "GTK 3 exposes its tree through the ATK bridge (Debian: libatk-adaptor), and not when NO_AT_BRIDGE=1 is set: install the bridge and restart the app.",
  gtk4: "GTK 4 exposes its tree unless GTK_A11Y=none is set: restart the app without it.",
});
