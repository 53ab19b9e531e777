import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { execa } from "execa";
import type { StartContext } from "./context.ts";
import { pollUntil } from "./poll.ts";
import { spawnDaemon, type Daemon } from "./processes.ts";

/**
 * A private session bus. --nofork keeps dbus-daemon our child, in the
 * process group we made (with --fork it would setsid away and --print-pid
 * would be the only handle on it). The address is printed once the bus
 * listens, so a complete line in NAME.out means ready.
 */
export async function startSessionBus(ctx: StartContext): Promise<{ address: string; daemon: Daemon }> {
  const daemon = await spawnDaemon(
    "dbus",
    [
      "dbus-daemon",
      ...(ctx.user ? [`--config-file=${sessionConfigAllowingRoot(ctx)}`] : ["--session"]),
      "--nofork",
      "--nopidfile",
      "--nosyslog",
      // In the private root, not /tmp: removed with it even if the daemon is killed.
      `--address=unix:path=${escapeAddressValue(join(ctx.env.XDG_RUNTIME_DIR!, "bus"))}`,
      "--print-address=1",
    ],
    ctx.daemonOptions({ separateStdout: true }),
  );
  ctx.started.push(daemon);
  const out = join(ctx.logDir, "dbus.out");
  const address = await pollUntil("dbus", daemon, ctx.timeoutMs, () => {
    let text = "";
    try {
      text = readFileSync(out, "utf8");
    } catch {
      return undefined;
    }
    return text.endsWith("\n") ? text.trim() : undefined;
  });
  return { address, daemon };
}

/**
 * A bus run as another user accepts only that user's connections; deckhand
 * (root) must reach it too (readiness checks, the helper): the standard
 * session configuration plus root.
 */
function sessionConfigAllowingRoot(ctx: StartContext): string {
  const path = join(ctx.env.XDG_CONFIG_HOME!, "dbus-session.conf");
  writeFileSync(
    path,
    [
      `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">`,
      "<busconfig>",
      "  <include>/usr/share/dbus-1/session.conf</include>",
      `  <policy context="default"><allow user="root"/></policy>`,
      "</busconfig>",
      "",
    ].join("\n"),
    { mode: 0o644 },
  );
  return path;
}

/** One method call with dbus-send; stdout of --print-reply. Never auto-starts: see nameHasOwner. */
export async function dbusCall(busAddress: string, dest: string, path: string, method: string, ...args: string[]): Promise<string> {
  // timeout: SIGTERM at 2 s, SIGKILL 5 s later (forceKillAfterDelay) if it ignores that.
  const { stdout } = await execa(
    "dbus-send",
    [`--bus=${busAddress}`, "--print-reply", `--dest=${dest}`, path, method, ...args],
    { timeout: 2000, env: { DISPLAY: "" }, verbose: "none" },
  );
  return stdout;
}

/**
 * Asks the bus daemon whether a name has an owner. Polling the service
 * itself would make the bus activate a second copy from its .service file
 * (org.a11y.Bus and org.a11y.atspi.Registry both have one) when we ask before
 * ours has claimed the name.
 */
export async function nameHasOwner(busAddress: string, name: string): Promise<boolean> {
  try {
    const out = await dbusCall(busAddress, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", `string:${name}`);
    return /boolean true/.test(out);
  } catch {
    return false;
  }
}

/** D-Bus address value escaping: bytes outside [-0-9A-Za-z_/.*] become %XX. */
export function escapeAddressValue(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const c = String.fromCharCode(byte);
    out += /[-0-9A-Za-z_/.*]/.test(c) ? c : `%${byte.toString(16).padStart(2, "0")}`;
  }
  return out;
}
