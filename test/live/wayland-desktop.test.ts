// The private Wayland desktop (issue 19, first slice): `deckhand desktop
// start|env|stop --wayland` and `desktop run --wayland`, with a native
// Wayland GTK 3 app whose window sway lists with its pid and whose tree is
// on the desktop's AT-SPI bus. Oracles: sway's own IPC (swaymsg), pyatspi run
// as the desktop's user, /proc.
import { execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { desktopMain, runInDesktop } from "../../src/desktop/index.ts";
import { lookupUser, WAYLAND_USER } from "../../src/desktop/user.ts";
import { SYSTEM_PYTHON, waitUntil } from "./harness.ts";
import { HELPER } from "./deckhand.ts";
import { AS_ROOT, asDesktopUser, describeWayland, launchAsUser, swaymsg, swayViews } from "./wayland.ts";

const run = promisify(execFile);

function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) [ZX] /.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return false;
  }
}

function uidOf(pid: number): number {
  const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "latin1"));
  return Number(m?.[1]);
}

function capture() {
  let out = "";
  let err = "";
  return {
    io: { out: (t: string) => void (out += t), err: (t: string) => void (err += t) },
    out: () => out,
    err: () => err,
  };
}

describeWayland("private Wayland desktop (sway)", () => {
  const stateDir = mkdtempSync(join(tmpdir(), "deckhand-state-"));
  const savedStateDir = process.env.DECKHAND_STATE_DIR;
  let env: Record<string, string> = {};
  let record: { processes: { name: string; pid: number }[]; root: string; kind: string; user?: string } | undefined;
  let app: ChildProcess | undefined;

  const useState = () => (process.env.DECKHAND_STATE_DIR = stateDir);
  afterAll(async () => {
    useState();
    app?.kill("SIGKILL");
    if (existsSync(join(stateDir, "desktop.json"))) await desktopMain(["stop"], capture().io);
    if (savedStateDir === undefined) delete process.env.DECKHAND_STATE_DIR;
    else process.env.DECKHAND_STATE_DIR = savedStateDir;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("desktop start --wayland brings up sway with a fixed headless output and prints its environment", async () => {
    useState();
    const start = capture();
    // With the helper for the seat's keyboard and pointer, as the CLI passes it.
    expect(await desktopMain(["start", "--wayland", "--size", "1280x800", "--json"], start.io, process.env, undefined, HELPER), start.err()).toBe(0);
    env = JSON.parse(start.out()) as Record<string, string>;
    record = JSON.parse(readFileSync(join(stateDir, "desktop.json"), "utf8"));
    expect(record!.kind).toBe("wayland");
    expect(env).toMatchObject({ GDK_BACKEND: "wayland", XDG_SESSION_TYPE: "wayland", DECKHAND_BACKEND: "wayland", NO_AT_BRIDGE: "0" });
    expect(env.WAYLAND_DISPLAY).toMatch(/^wayland-\d+$/);
    expect(env.DISPLAY).toMatch(/^:\d+$/); // Xwayland's, reserved by sway
    for (const k of ["XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "SWAYSOCK"]) {
      expect(env[k]!.startsWith(record!.root), k).toBe(true);
    }
    expect(env.DBUS_SESSION_BUS_ADDRESS).toContain(record!.root);
    expect(env.AT_SPI_BUS_ADDRESS).toContain(record!.root);
    expect(statSync(join(env.XDG_RUNTIME_DIR!, env.WAYLAND_DISPLAY!)).isSocket()).toBe(true);

    // Runtime dir 0700, owned by whoever runs the desktop: deckhand-wl under root.
    const rt = statSync(env.XDG_RUNTIME_DIR!);
    expect(rt.mode & 0o777).toBe(0o700);
    const user = AS_ROOT ? lookupUser(WAYLAND_USER) : undefined;
    if (AS_ROOT) {
      expect(user, `${WAYLAND_USER} was not created`).toBeDefined();
      expect(record!.user).toBe(WAYLAND_USER);
      expect(rt.uid).toBe(user!.uid);
    } else expect(rt.uid).toBe(process.getuid!());
    // Every process of the desktop runs as that user: sway would refuse root.
    const names = record!.processes.map((p) => p.name).sort();
    expect(names).toEqual(["at-spi-bus-launcher", "at-spi2-registryd", "dbus", "seat devices", "sway"]);
    for (const p of record!.processes) expect(uidOf(p.pid), p.name).toBe(user?.uid ?? process.getuid!());

    // sway's IPC answers: the one headless output at the requested size, no bar.
    const outputs = (await swaymsg(env, "get_outputs")) as { name: string; active: boolean; rect: { width: number; height: number } }[];
    expect(outputs.map((o) => [o.name, o.active, o.rect.width, o.rect.height])).toEqual([["HEADLESS-1", true, 1280, 800]]);
    expect(await swaymsg(env, "get_bar_config")).toEqual([]);
    // The seat has a keyboard and a pointer (the helper's, holding them), as a real session's has.
    const inputs = (await swaymsg(env, "get_inputs")) as { type: string }[];
    expect(new Set(inputs.map((i) => i.type))).toEqual(new Set(["keyboard", "pointer"]));

    const shown = capture();
    expect(await desktopMain(["env", "--json"], shown.io)).toBe(0);
    expect(JSON.parse(shown.out())).toEqual(env);
    const again = capture();
    expect(await desktopMain(["start", "--wayland"], again.io)).toBe(1);
    expect(again.err()).toMatch(/already running on wayland-\d+/);
  });

  it("hosts a native Wayland GTK 3 app: sway lists its window with its pid, its tree is on the AT-SPI bus", async () => {
    expect(record, "the desktop did not start").toBeDefined();
    app = launchAsUser(env, record!.root, ["gtk3-widget-factory"]);
    const pid = app.pid!;
    const view = await waitUntil("the app's window in sway's tree", 20_000, async () => (await swayViews(env)).find((v) => v.pid === pid));
    expect(view).toMatchObject({ type: "con", app_id: "gtk3-widget-factory", shell: "xdg_shell", name: "gtk3-widget-factory", focused: true });
    // A native Wayland client: DISPLAY was empty, so no Xwayland was needed.
    expect(view.rect.width).toBeGreaterThan(0);

    // pyatspi, as the desktop's user (libatspi's direct connection to the app
    // accepts only the app's own uid), finds the app by pid and walks it.
    const script = `
import json, sys, pyatspi
pid = int(sys.argv[1])
def walk(n, depth, out):
    if depth > 30: return
    out.append(n.getRoleName())
    for c in n:
        if c is not None: walk(c, depth + 1, out)
for app in pyatspi.Registry.getDesktop(0):
    if app is not None and app.get_process_id() == pid:
        roles = []
        walk(app, 0, roles)
        frame = app[0]
        print(json.dumps({"name": app.name, "frame": [frame.getRoleName(), frame.name], "roles": roles}))
        break
`;
    const pyArgv = asDesktopUser([SYSTEM_PYTHON, "-c", script, String(pid)], record!.root);
    const tree = await waitUntil("the app's accessible tree", 20_000, async () => {
      const { stdout } = await run(pyArgv[0]!, pyArgv.slice(1), { env: { ...process.env, ...env }, cwd: join(record!.root, "home"), timeout: 20_000, maxBuffer: 16 << 20 });
      const t = stdout.trim() ? (JSON.parse(stdout) as { name: string; frame: [string, string]; roles: string[] }) : undefined;
      return t && t.roles.length > 50 ? t : undefined;
    });
    expect(tree.name).toBe("gtk3-widget-factory");
    // On Wayland GTK 3 leaves the frame's accessible name empty (the title is
    // in its client-side header bar); sway's tree has the title (above).
    expect(tree.frame[0]).toBe("frame");
    expect(tree.roles).toContain("push button");
  });

  it("desktop stop ends every process, the app included, and removes the sockets and the private root", async () => {
    expect(record, "the desktop did not start").toBeDefined();
    useState();
    const pids = [...record!.processes.map((p) => p.pid), ...(app?.pid ? [app.pid] : [])];
    expect(pids.every(alive)).toBe(true);
    const stop = capture();
    expect(await desktopMain(["stop"], stop.io), stop.err()).toBe(0);
    await waitUntil("the desktop's processes to be gone", 5000, () => !pids.some(alive));
    expect(existsSync(record!.root)).toBe(false);
    const n = env.DISPLAY!.slice(1);
    expect(existsSync(`/tmp/.X${n}-lock`) && readFileSync(`/tmp/.X${n}-lock`, "latin1").includes(String(record!.processes.find((p) => p.name === "sway")!.pid))).toBe(false);
    if (AS_ROOT) {
      const { stdout } = await run("ps", ["-o", "pid=,args=", "-u", WAYLAND_USER]).catch(() => ({ stdout: "" }));
      const left = stdout.split("\n").filter((l) => l.includes(record!.root));
      expect(left).toEqual([]);
    }
    app = undefined;
  });

  it("desktop run --wayland runs the command inside the desktop as its user, and tears it down", async () => {
    // Exit code 0 only when the command runs as the desktop's user, sees a
    // Wayland socket it can connect to and GDK_BACKEND=wayland.
    const script = [
      "import os, socket, sys",
      "path = os.path.join(os.environ['XDG_RUNTIME_DIR'], os.environ['WAYLAND_DISPLAY'])",
      "s = socket.socket(socket.AF_UNIX); s.connect(path); s.close()",
      "if os.getuid() != int(sys.argv[1]): sys.exit(4)",
      "sys.exit(0 if os.environ['GDK_BACKEND'] == 'wayland' else 3)",
    ].join("\n");
    const uid = AS_ROOT ? lookupUser(WAYLAND_USER)!.uid : process.getuid!();
    const before = new Set(readdirSync(tmpdir()).filter((n) => n.startsWith("deckhand-desktop-")));
    expect(await runInDesktop([SYSTEM_PYTHON, "-c", script, String(uid)], { wayland: true, width: 1024, height: 768 })).toBe(0);
    expect(await runInDesktop([SYSTEM_PYTHON, "-c", script, String(uid + 1)], { wayland: true })).toBe(4);
    expect(await runInDesktop(["sh", "-c", "exit 7"], { wayland: true })).toBe(7);
    const after = readdirSync(tmpdir()).filter((n) => n.startsWith("deckhand-desktop-") && !before.has(n));
    expect(after).toEqual([]); // every desktop's root removed
  });
});
