import { execFileSync } from "node:child_process";

/**
 * The unprivileged account a Wayland desktop runs as when deckhand runs as
 * root: sway refuses to run as root, and the session bus, the AT-SPI bus and
 * the apps must belong to the same user as the compositor. A system account
 * without a home or login shell, created once (idempotently) by `useradd`.
 */
export const WAYLAND_USER = "deckhand-wl";

export interface DesktopUser {
  name: string;
  uid: number;
  gid: number;
}

/** The passwd entry of `name`, if any (getent: files, NSS). */
export function lookupUser(name: string): DesktopUser | undefined {
  try {
    const line = execFileSync("getent", ["passwd", name], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const f = line.split(":");
    if (f.length < 7 || f[0] !== name) return undefined;
    return { name, uid: Number(f[2]), gid: Number(f[3]) };
  } catch {
    return undefined;
  }
}

/**
 * Who the Wayland desktop's processes run as: undefined (deckhand's own
 * user) when deckhand is not root; WAYLAND_USER otherwise, created if it
 * does not exist yet.
 */
export function waylandDesktopUser(): DesktopUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const found = lookupUser(WAYLAND_USER);
  if (found) return found;
  try {
    execFileSync(
      "useradd",
      ["--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", "--comment", "deckhand private Wayland desktop", WAYLAND_USER],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
  } catch (err) {
    // Another deckhand may have created it meanwhile (useradd exits 9).
    const again = lookupUser(WAYLAND_USER);
    if (again) return again;
    const stderr = String((err as { stderr?: Buffer }).stderr ?? "").trim();
    throw new Error(`desktop: cannot create the user ${WAYLAND_USER} that runs the Wayland desktop: ${stderr || (err as Error).message}`);
  }
  const made = lookupUser(WAYLAND_USER);
  if (!made) throw new Error(`desktop: useradd ${WAYLAND_USER} succeeded but getent passwd does not find it`);
  return made;
}

/**
 * argv run as `user` (unchanged when there is none): setpriv switches the
 * real and effective ids and drops the supplementary groups, then execs, so
 * the pid deckhand records is the program's own. HOME, USER and LOGNAME name
 * the user (HOME: the desktop's private home).
 */
export function asUser(argv: string[], user: DesktopUser | undefined, home: string): string[] {
  if (!user) return argv;
  return [
    "setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--",
    "env", "--", `HOME=${home}`, `USER=${user.name}`, `LOGNAME=${user.name}`,
    ...argv,
  ];
}
