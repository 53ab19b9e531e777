// Who an app is, as far as policy is concerned. Never the name the caller
// typed: the canonical executable (symlinks resolved; /proc/PID/exe on Linux),
// the process name the kernel recorded at exec, the desktop / bundle id and
// the names the app reports. See docs/policy.md "Identity".
import { readFileSync, readlinkSync, realpathSync } from "node:fs";
import { basename } from "node:path";

export type AppIdentity = {
  pid: number | null;
  /** Canonical executable path (symlinks resolved), null when unknown. */
  executable: string | null;
  /** True when the kernel reports the executable as deleted (replaced on disk). */
  executableDeleted?: boolean;
  /** Display name reported by the helper (WM_CLASS / AT-SPI / bundle name). */
  name: string;
  /** Desktop id (Linux), bundle id (macOS) or AppUserModelID (Windows). */
  desktopId: string | null;
  /** The accessible application's name, when the tree was read. */
  accessibleName?: string | null;
  /** Linux /proc/PID/comm: basename the process was exec'd as (15 chars max). */
  comm?: string | null;
};

/** The app fields a helper reports (structurally the wire's WireApp). */
export type ReportedApp = {
  pid: number;
  name: string;
  executable: string | null;
  desktop_id: string | null;
};

export type ProcOptions = {
  /** Root of procfs; tests point it elsewhere. Default "/proc". */
  procRoot?: string;
  /** Default process.platform; /proc is read only on "linux". */
  platform?: NodeJS.Platform;
};

const DELETED = " (deleted)";

function procExe(pid: number, procRoot: string): { path: string; deleted: boolean } | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    const link = readlinkSync(`${procRoot}/${pid}/exe`);
    if (link.endsWith(DELETED)) return { path: link.slice(0, -DELETED.length), deleted: true };
    return { path: link, deleted: false };
  } catch {
    return null;
  }
}

/**
 * Canonical executable of a live process: the /proc/PID/exe link on Linux
 * (the kernel's record, already symlink-free), null elsewhere or when the
 * process is gone or not ours to inspect.
 */
export function canonicalExecutable(pid: number, opts: ProcOptions = {}): string | null {
  if ((opts.platform ?? process.platform) !== "linux") return null;
  return procExe(pid, opts.procRoot ?? "/proc")?.path ?? null;
}

/** Linux /proc/PID/comm (trimmed), null elsewhere or when unreadable. */
export function processComm(pid: number, opts: ProcOptions = {}): string | null {
  if ((opts.platform ?? process.platform) !== "linux") return null;
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    const comm = readFileSync(`${opts.procRoot ?? "/proc"}/${pid}/comm`, "utf8").replace(/\n$/, "");
    return comm || null;
  } catch {
    return null;
  }
}

/** `path` with every symlink resolved, or null when it does not exist. */
export function canonicalPath(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/**
 * Identity of a live local process by pid alone (what `--app pid:N` must
 * resolve to): executable and comm come from the kernel; `name` falls back to
 * comm, then to the executable's basename.
 */
export function identityFromPid(
  pid: number,
  extra: { name?: string; desktopId?: string | null; accessibleName?: string | null } = {},
  opts: ProcOptions = {},
): AppIdentity {
  const linux = (opts.platform ?? process.platform) === "linux";
  const exe = linux ? procExe(pid, opts.procRoot ?? "/proc") : null;
  const comm = processComm(pid, opts);
  return {
    pid,
    executable: exe?.path ?? null,
    ...(exe?.deleted ? { executableDeleted: true } : {}),
    name: extra.name ?? comm ?? (exe ? basename(exe.path) : ""),
    desktopId: extra.desktopId ?? null,
    accessibleName: extra.accessibleName ?? null,
    comm,
  };
}

/**
 * Identity of an app a helper reported. On Linux the orchestrator re-reads
 * /proc/PID/exe and /proc/PID/comm itself and prefers them to the helper's
 * strings; elsewhere the helper's executable is canonicalised with realpath
 * when it exists locally.
 */
export function identityFromWireApp(
  app: ReportedApp,
  extra: { accessibleName?: string | null } = {},
  opts: ProcOptions = {},
): AppIdentity {
  const linux = (opts.platform ?? process.platform) === "linux";
  const exe = linux ? procExe(app.pid, opts.procRoot ?? "/proc") : null;
  let executable = exe?.path ?? null;
  if (!executable && app.executable) executable = canonicalPath(app.executable) ?? app.executable;
  return {
    pid: app.pid,
    executable,
    ...(exe?.deleted ? { executableDeleted: true } : {}),
    name: app.name,
    desktopId: app.desktop_id,
    accessibleName: extra.accessibleName ?? null,
    comm: processComm(app.pid, opts),
  };
}

/** Lowercased comparison keys of an identity (see docs/policy.md). */
export type IdentityKeys = {
  /** Basename of the canonical executable, lowercased, without ".exe". */
  executable: string | null;
  comm: string | null;
  /** Desktop / bundle id, lowercased, without ".desktop". */
  desktopId: string | null;
  names: string[];
};

/** Basename of a POSIX or Windows path. */
export function pathBasename(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1] ?? path;
}

export function normalizeExecutableName(name: string): string {
  return name.trim().toLowerCase().replace(/\.exe$/, "");
}

export function normalizeDesktopId(id: string): string {
  return id.trim().toLowerCase().replace(/\.desktop$/, "");
}

export function identityKeys(identity: AppIdentity): IdentityKeys {
  const names = [identity.name, identity.accessibleName]
    .filter((n): n is string => typeof n === "string" && n.trim() !== "")
    .map((n) => n.trim().toLowerCase());
  return {
    executable: identity.executable ? normalizeExecutableName(pathBasename(identity.executable)) || null : null,
    comm: identity.comm ? identity.comm.trim().toLowerCase() || null : null,
    desktopId: identity.desktopId ? normalizeDesktopId(identity.desktopId) || null : null,
    names: [...new Set(names)],
  };
}

/** Short human label for messages (no window titles, no values). */
export function describeIdentity(identity: AppIdentity): string {
  const label = identity.desktopId || (identity.executable ? pathBasename(identity.executable) : "") || identity.name || "app";
  return identity.pid != null ? `${label} (pid ${identity.pid})` : label;
}
