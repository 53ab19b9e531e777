// Who an app is, as far as policy is concerned. Never the name the caller
// typed: the canonical executable (symlinks resolved), the process name the
// OS recorded at exec, the desktop / bundle id and the names the app
// reports. The helper reports all of it (list_apps); the host is asked
// (src/platform) only for a process the helper said nothing about. See
// docs/policy.md "Identity".
import { realpathSync } from "node:fs";
import { hostProcessFacts, type HostProcessFacts } from "../platform/index.ts";

export type AppIdentity = {
  pid: number | null;
  /** Canonical executable path (symlinks resolved), null when unknown. */
  executable: string | null;
  /** True when the executable was deleted or replaced on disk since the process started. */
  executableDeleted?: boolean;
  /** Display name reported by the helper (window class, accessible application or bundle name). */
  name: string;
  /** Desktop id (Linux), bundle id (macOS) or AppUserModelID (Windows). */
  desktopId: string | null;
  /** The helper's bundle id (macOS bundle id, Windows package family name, Linux sandboxed app id), matched like desktopId. */
  bundleId?: string | null;
  /** The accessible application's name, when the tree was read. */
  accessibleName?: string | null;
  /** The process name the OS recorded at exec (Linux: 15 characters at most). */
  comm?: string | null;
};

/** The app fields a helper reports (structurally the wire's WireApp). */
export type ReportedApp = {
  pid: number;
  name: string;
  executable: string | null;
  desktop_id: string | null;
  /** Absent: the helper said nothing of the process's identity (an app it did not list). */
  process_name?: string | null;
  executable_deleted?: boolean;
  bundle_id?: string | null;
};

export type IdentityOptions = {
  /** What the host says of a process the helper said nothing about. Default: src/platform's reader for this host. */
  host?: HostProcessFacts;
};

/** `path` with every symlink resolved, or null when it does not exist. */
export function canonicalPath(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/**
 * Identity of an app a helper reported. The helper's executable (canonical
 * already; resolved once more with realpath when it exists here), process
 * name, deleted flag and bundle id. When the helper said nothing of the
 * process (no process_name and no executable_deleted: a window whose owner it
 * did not list), the host fills in what it can read (src/platform): the
 * executable when the helper had none, whether it was replaced on disk, the
 * process name.
 */
export function identityFromWireApp(app: ReportedApp, extra: { accessibleName?: string | null } = {}, opts: IdentityOptions = {}): AppIdentity {
  const unreported = app.process_name === undefined && app.executable_deleted === undefined;
  const host = unreported ? (opts.host ?? hostProcessFacts()) : null;
  const hostExe = host ? host.executable(app.pid) : null;
  const reported = app.executable ?? hostExe?.path ?? null;
  const executable = reported !== null ? (canonicalPath(reported) ?? reported) : null;
  const deleted = app.executable_deleted === true || hostExe?.deleted === true;
  const comm = app.process_name ?? host?.processName(app.pid) ?? null;
  return {
    pid: app.pid,
    executable,
    ...(deleted ? { executableDeleted: true } : {}),
    name: app.name,
    desktopId: app.desktop_id,
    bundleId: app.bundle_id ?? null,
    accessibleName: extra.accessibleName ?? null,
    comm,
  };
}

/** Lowercased comparison keys of an identity (see docs/policy.md). */
export type IdentityKeys = {
  /** Basename of the canonical executable, lowercased, without ".exe". */
  executable: string | null;
  comm: string | null;
  /** Desktop / bundle id, lowercased, without ".desktop". */
  desktopId: string | null;
  /** The helper's bundle id, lowercased, when it differs from desktopId (matched the same way). */
  bundleId?: string | null;
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
  const desktopId = identity.desktopId ? normalizeDesktopId(identity.desktopId) || null : null;
  const bundleId = identity.bundleId ? normalizeDesktopId(identity.bundleId) || null : null;
  return {
    executable: identity.executable ? normalizeExecutableName(pathBasename(identity.executable)) || null : null,
    comm: identity.comm ? identity.comm.trim().toLowerCase() || null : null,
    desktopId,
    ...(bundleId && bundleId !== desktopId ? { bundleId } : {}),
    names: [...new Set(names)],
  };
}

/** Short human label for messages (no window titles, no values). */
export function describeIdentity(identity: AppIdentity): string {
  const label = identity.desktopId || identity.bundleId || (identity.executable ? pathBasename(identity.executable) : "") || identity.name || "app";
  return identity.pid != null ? `${label} (pid ${identity.pid})` : label;
}
