import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import type { StartContext } from "./context.ts";
import { lockOwner } from "./display.ts";
import { pollUntil } from "./poll.ts";
import { DesktopStartError, spawnDaemon, type Daemon } from "./processes.ts";

/** sway IPC message types (sway-ipc(7)). */
export const IPC = { RUN_COMMAND: 0, GET_WORKSPACES: 1, GET_OUTPUTS: 3, GET_TREE: 4, GET_VERSION: 7, GET_INPUTS: 100 } as const;
const MAGIC = Buffer.from("i3-ipc", "latin1");

/**
 * One sway IPC request over the socket: "i3-ipc", payload length and type
 * (u32, native = little endian), payload; the reply has the same header and
 * a JSON payload.
 */
export function swayIpc(socketPath: string, type: number, payload = "", timeoutMs = 2000): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const body = Buffer.from(payload, "utf8");
    const header = Buffer.alloc(14);
    MAGIC.copy(header, 0);
    header.writeUInt32LE(body.length, 6);
    header.writeUInt32LE(type, 10);
    let buf = Buffer.alloc(0);
    const socket = connect(socketPath);
    const finish = (err?: Error, value?: unknown) => {
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const timer = setTimeout(() => finish(new Error(`sway IPC ${type}: no answer in ${timeoutMs} ms`)), timeoutMs);
    socket.once("error", (err) => finish(err));
    socket.once("close", () => finish(new Error(`sway IPC ${type}: connection closed before the reply`)));
    socket.on("data", (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (buf.length < 14) return;
      if (!buf.subarray(0, 6).equals(MAGIC)) return finish(new Error("sway IPC: bad magic in the reply"));
      const len = buf.readUInt32LE(6);
      if (buf.length < 14 + len) return;
      try {
        finish(undefined, JSON.parse(buf.subarray(14, 14 + len).toString("utf8")));
      } catch (err) {
        finish(err as Error);
      }
    });
    socket.write(Buffer.concat([header, body]));
  });
}

/**
 * The configuration deckhand gives sway: one headless output of a fixed size
 * at 0,0, scale 1; no bar (none is declared), no idle daemon, no wallpaper,
 * nothing exec'd; Xwayland started when the first X11 client connects.
 */
export function swayConfig(size: { width: number; height: number }): string {
  return [
    "# Written by deckhand (src/desktop/sway.ts): a private headless desktop.",
    `output HEADLESS-1 resolution ${size.width}x${size.height} position 0,0 scale 1`,
    "xwayland enable",
    "focus_on_window_activation focus",
    "",
  ].join("\n");
}

export interface Sway {
  daemon: Daemon;
  /** Name of the Wayland socket in XDG_RUNTIME_DIR (wayland-N). */
  waylandDisplay: string;
  /** The sway IPC socket. */
  swaysock: string;
  /** Xwayland's display (":N"), lazily started by sway for X11 clients. */
  xDisplay: string;
}

/** The /tmp/.XN-lock sway (wlroots) took for Xwayland: its lock names sway's pid. */
function xwaylandDisplay(swayPid: number): string | undefined {
  let names: string[];
  try {
    names = readdirSync("/tmp");
  } catch {
    return undefined;
  }
  for (const name of names) {
    const m = /^\.X(\d+)-lock$/.exec(name);
    if (m && lockOwner(Number(m[1])) === swayPid && existsSync(`/tmp/.X11-unix/X${m[1]}`)) return `:${m[1]}`;
  }
  return undefined;
}

/**
 * sway on wlroots' headless backend with the pixman renderer (GLES2 needs
 * /dev/dri) and no libinput devices. Ready when its IPC socket
 * (sway-ipc.UID.PID.sock in the private runtime dir) answers get_outputs
 * with the headless output at the requested size and get_tree answers, the
 * Wayland socket exists and the Xwayland display is reserved.
 */
export async function startSway(ctx: StartContext, size: { width: number; height: number }, uid: number): Promise<Sway> {
  const runtime = ctx.env.XDG_RUNTIME_DIR!;
  const configPath = join(ctx.env.XDG_CONFIG_HOME!, "sway", "config");
  writeFileSync(configPath, swayConfig(size), { mode: 0o644 });
  const daemon = await spawnDaemon(
    "sway",
    ["sway", "--config", configPath],
    ctx.daemonOptions({
      env: { ...ctx.env, WLR_BACKENDS: "headless", WLR_LIBINPUT_NO_DEVICES: "1", WLR_RENDERER: "pixman", XDG_SESSION_TYPE: "wayland" },
    }),
  );
  ctx.started.push(daemon);
  const swaysock = join(runtime, `sway-ipc.${uid}.${daemon.pid}.sock`);
  return pollUntil("sway", daemon, ctx.timeoutMs, async () => {
    if (!existsSync(swaysock)) return undefined;
    const outputs = (await swayIpc(swaysock, IPC.GET_OUTPUTS).catch(() => undefined)) as Array<Record<string, any>> | undefined;
    const out = outputs?.find((o) => o.name === "HEADLESS-1" && o.active);
    if (!out) return undefined;
    if (out.rect?.width !== size.width || out.rect?.height !== size.height) {
      throw new DesktopStartError("sway", `the headless output is ${out.rect?.width}x${out.rect?.height}, not ${size.width}x${size.height}`);
    }
    const tree = (await swayIpc(swaysock, IPC.GET_TREE).catch(() => undefined)) as { type?: string } | undefined;
    if (tree?.type !== "root") return undefined;
    const wayland = readdirSync(runtime).find((n) => /^wayland-\d+$/.test(n));
    const xDisplay = xwaylandDisplay(daemon.pid);
    if (!wayland || !xDisplay) return undefined;
    return { daemon, waylandDisplay: wayland, swaysock, xDisplay };
  });
}

/**
 * The headless seat's keyboard and pointer (WLR_LIBINPUT_NO_DEVICES leaves
 * it without any): the Linux helper run with `--seat-devices` creates a
 * virtual keyboard and pointer and holds them, sending nothing, until sway
 * hangs up or the desktop stops it (a recorded process like the others).
 * Ready when sway lists both among its inputs.
 */
export async function startSeatDevices(ctx: StartContext, helper: string, swaysock: string): Promise<void> {
  const daemon = await spawnDaemon("seat devices", [helper, "--seat-devices"], ctx.daemonOptions({ env: { ...ctx.env } }));
  ctx.started.push(daemon);
  await pollUntil("seat devices", daemon, ctx.timeoutMs, async () => {
    const inputs = (await swayIpc(swaysock, IPC.GET_INPUTS).catch(() => undefined)) as Array<{ type?: string }> | undefined;
    const types = new Set((inputs ?? []).map((i) => i.type));
    return types.has("keyboard") && types.has("pointer") ? true : undefined;
  });
}
