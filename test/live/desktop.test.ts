import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { desktopMain, displayAnswers, runInDesktop, shellQuote, startDesktop, X11Connection } from "../../src/desktop/index.ts";
import { accessibleNodes, describeLive, desktopEnv, launchApp, useDesktop, waitUntil, type DesktopLike } from "./harness.ts";

const run = promisify(execFile);

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return !/^\S+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

async function dbusSend(desktop: DesktopLike, ...args: string[]): Promise<string> {
  const { stdout } = await run("dbus-send", ["--session", "--print-reply", ...args], { env: desktopEnv(desktop), timeout: 5000 });
  return stdout;
}

async function wmSelectionOwner(display: string): Promise<number> {
  const x = await X11Connection.open(display);
  try {
    return await x.getSelectionOwner(await x.internAtom("WM_S0"));
  } finally {
    x.close();
  }
}

function displayFiles(display: string): string[] {
  const n = display.slice(1);
  return [`/tmp/.X11-unix/X${n}`, `/tmp/.X${n}-lock`];
}

describeLive("private desktop", () => {
  const desktop = useDesktop();

  it("has a display that answers", async () => {
    expect(desktop.display).toMatch(/^:\d+$/);
    expect(await displayAnswers(desktop.display)).toBe(true);
    const { stdout } = await run("xdpyinfo", [], { env: desktopEnv(desktop) });
    expect(stdout).toMatch(/dimensions:\s+1920x1080 pixels/);
    expect(stdout).toMatch(/depth of root window:\s+24 planes/);
  });

  it("has private, well-formed environment", () => {
    const env = desktop.env;
    for (const k of ["XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"]) {
      expect(env[k]!.startsWith(desktop.root)).toBe(true);
      expect(existsSync(env[k]!)).toBe(true);
    }
    expect(statSync(env.XDG_RUNTIME_DIR!).mode & 0o777).toBe(0o700);
    expect(env).toMatchObject({ DISPLAY: desktop.display, GSETTINGS_BACKEND: "memory", NO_AT_BRIDGE: "0", GTK_MODULES: "gail:atk-bridge" });
    expect(env.DBUS_SESSION_BUS_ADDRESS).toContain(desktop.root);
  });

  it("has an accessibility bus with the registry", async () => {
    const reply = await dbusSend(desktop, "--dest=org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus.GetAddress");
    const address = /string "([^"]+)"/.exec(reply)?.[1];
    expect(address).toBeTruthy();
    const { stdout } = await run(
      "dbus-send",
      [`--bus=${address}`, "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "string:org.a11y.atspi.Registry"],
      { timeout: 5000 },
    );
    expect(stdout).toMatch(/boolean true/);
    const enabled = await dbusSend(desktop, "--dest=org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties.Get", "string:org.a11y.Status", "string:IsEnabled");
    expect(enabled).toMatch(/boolean true/);
  });

  it("has openbox owning the window manager selection", async () => {
    expect(await wmSelectionOwner(desktop.display)).not.toBe(0);
    const { stdout } = await run("xprop", ["-root", "_NET_SUPPORTING_WM_CHECK", "_NET_CLIENT_LIST"], { env: desktopEnv(desktop) });
    expect(stdout).toMatch(/_NET_SUPPORTING_WM_CHECK\(WINDOW\): window id # 0x/);
  });

  it("hosts a real GTK application whose tree is on the AT-SPI bus", async () => {
    const app = await launchApp(desktop, ["gtk3-widget-factory"]);
    try {
      expect(app.windows.length).toBeGreaterThan(0);
      const x = await X11Connection.open(desktop.display);
      try {
        const title = await x.getPropertyString(app.windows[0]!, await x.internAtom("_NET_WM_NAME"));
        expect(title).toBe("gtk3-widget-factory");
      } finally {
        x.close();
      }
      // Its frame has an empty accessible name (client-side header bar); the X title above is the one to match.
      const nodes = await accessibleNodes(desktop, "gtk3-widget-factory");
      expect(nodes[0]).toMatchObject({ role: "application", name: "gtk3-widget-factory" });
      expect(nodes.filter((n) => n.role === "push button").length).toBeGreaterThan(5);
      expect(nodes.length).toBeGreaterThan(50);
    } finally {
      await app.stop();
    }
    expect(alive(app.pid)).toBe(false);
  });

  it("runs a second desktop at once on another display, and stop() leaves nothing behind", async () => {
    const second = await startDesktop();
    let stopped = false;
    try {
      expect(second.display).not.toBe(desktop.display);
      expect(await displayAnswers(second.display)).toBe(true);
      expect(await wmSelectionOwner(second.display)).not.toBe(0);
      expect(second.pids.length).toBe(5);
      // Something launched inside it, and a helper its bus activates on demand (dconf).
      const app = spawn("sleep", ["600"], { env: desktopEnv(second), stdio: "ignore" });
      await dbusSend(second, "--dest=ca.desrt.dconf", "/ca/desrt/dconf/Writer/user", "org.freedesktop.DBus.Peer.Ping");
      const activated = await busPeers(second);
      expect(activated.length).toBeGreaterThan(0);

      const t = performance.now();
      await second.stop();
      stopped = true;
      const stopMs = performance.now() - t;
      console.log(`stop() took ${stopMs.toFixed(0)} ms`);

      for (const pid of [...second.pids, ...activated, app.pid!]) expect(alive(pid), `pid ${pid}`).toBe(false);
      for (const f of displayFiles(second.display)) expect(existsSync(f), f).toBe(false);
      expect(existsSync(second.root)).toBe(false);
      // The first desktop is untouched.
      expect(await displayAnswers(desktop.display)).toBe(true);
      expect(desktop.desktop.pids.every(alive)).toBe(true);
    } finally {
      if (!stopped) await second.stop();
    }
  });

  it("gives concurrent start-ups distinct displays", async () => {
    const many = await Promise.all([startDesktop(), startDesktop(), startDesktop()]);
    try {
      const displays = new Set([desktop.display, ...many.map((d) => d.display)]);
      expect(displays.size).toBe(4);
      for (const d of many) expect(await displayAnswers(d.display)).toBe(true);
    } finally {
      await Promise.all(many.map((d) => d.stop()));
    }
  });

  it("tears down what it started when a step fails, naming the step", async () => {
    const before = new Set(listDir("/tmp").filter((n) => n.startsWith("deckhand-desktop-")));
    await expect(startDesktop({ depth: 7 })).rejects.toThrow(/desktop: xvfb: .*exited early[\s\S]*Couldn't add screen/);
    const after = listDir("/tmp").filter((n) => n.startsWith("deckhand-desktop-") && !before.has(n));
    expect(after).toEqual([]);
  });

  it("runInDesktop returns the command's exit code and the command sees the desktop", async () => {
    const code = await runInDesktop(["sh", "-c", 'xdpyinfo -display "$DISPLAY" >/dev/null && test -n "$DBUS_SESSION_BUS_ADDRESS" && exit 7']);
    expect(code).toBe(7);
    expect(await runInDesktop(["sh", "-c", "exit 0"])).toBe(0);
    expect(await runInDesktop(["/nonexistent/command"])).toBe(127);
  });
});

describeLive("deckhand desktop run: signals", () => {
  const root = join(import.meta.dirname, "..", "..");
  const bun = join(root, "node_modules", ".bin", "bun");

  it("a signal to deckhand reaches the command as itself; its exit code is returned and the desktop is torn down", async () => {
    const dir = mkdtempSync(join(tmpdir(), "deckhand-run-signal-"));
    try {
      const ready = join(dir, "ready");
      const script = `trap 'exit 42' INT; printf %s "$DISPLAY" > '${ready}.tmp' && mv '${ready}.tmp' '${ready}'; while :; do sleep 0.05; done`;
      const child = spawn(bun, [join(root, "src", "main.ts"), "desktop", "run", "--", "sh", "-c", script], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, DECKHAND_AGENT_MODE: "" } });
      let stderr = "";
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
      await waitUntil("the command to start inside the desktop", 20_000, () => existsSync(ready));
      const display = readFileSync(ready, "utf8");
      child.kill("SIGINT");
      // Only the command's SIGINT trap exits 42 (a SIGTERM or SIGKILL would end it with 143 or 137).
      expect(await exited, stderr).toBe(42);
      for (const f of displayFiles(display)) expect(existsSync(f)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describeLive("deckhand desktop CLI", () => {
  const stateDir = mkdtempSync(join(tmpdir(), "deckhand-state-"));
  const savedStateDir = process.env.DECKHAND_STATE_DIR;
  afterAll(async () => {
    process.env.DECKHAND_STATE_DIR = stateDir;
    if (existsSync(join(stateDir, "desktop.json"))) await desktopMain(["stop"], capture().io);
    if (savedStateDir === undefined) delete process.env.DECKHAND_STATE_DIR;
    else process.env.DECKHAND_STATE_DIR = savedStateDir;
    rmSync(stateDir, { recursive: true, force: true });
  });

  it("start / env / stop round trip", async () => {
    process.env.DECKHAND_STATE_DIR = stateDir;
    const start = capture();
    expect(await desktopMain(["start"], start.io), start.err()).toBe(0);
    const env = parseExports(start.out());
    expect(env.DISPLAY).toMatch(/^:\d+$/);
    expect(await displayAnswers(env.DISPLAY!)).toBe(true);

    const recordPath = join(stateDir, "desktop.json");
    expect(statSync(recordPath).mode & 0o777).toBe(0o600);
    const record = JSON.parse(readFileSync(recordPath, "utf8")) as { processes: { pid: number }[]; root: string };
    const pids = record.processes.map((p) => p.pid);
    expect(pids.every(alive)).toBe(true);

    const again = capture();
    expect(await desktopMain(["start"], again.io)).toBe(1);
    expect(again.err()).toMatch(/already running/);

    const shown = capture();
    expect(await desktopMain(["env"], shown.io)).toBe(0);
    expect(parseExports(shown.out())).toEqual(env);
    const json = capture();
    expect(await desktopMain(["env", "--json"], json.io)).toBe(0);
    expect(JSON.parse(json.out())).toEqual(env);

    // The exported lines are valid shell.
    const { stdout } = await run("sh", ["-c", `${start.out()}\nprintf %s "$XDG_RUNTIME_DIR"`]);
    expect(stdout).toBe(env.XDG_RUNTIME_DIR);

    const stop = capture();
    expect(await desktopMain(["stop"], stop.io), stop.err()).toBe(0);
    await waitUntil("the desktop's processes to be gone", 5000, () => !pids.some(alive));
    expect(existsSync(recordPath)).toBe(false);
    expect(existsSync(record.root)).toBe(false);
    for (const f of displayFiles(env.DISPLAY!)) expect(existsSync(f)).toBe(false);

    const none = capture();
    expect(await desktopMain(["env"], none.io)).toBe(1);
    expect(await desktopMain(["stop"], none.io)).toBe(1);
  });

  it("rejects bad usage with exit code 2", async () => {
    for (const args of [[], ["bogus"], ["run"], ["run", "--"], ["start", "extra"], ["stop", "--json"], ["start", "--size", "big"]]) {
      const c = capture();
      expect(await desktopMain(args, c.io), args.join(" ")).toBe(2);
      expect(c.err()).toMatch(/usage: deckhand desktop/);
    }
  });
});

function capture() {
  let out = "";
  let err = "";
  return {
    io: { out: (t: string) => void (out += t), err: (t: string) => void (err += t) },
    out: () => out,
    err: () => err,
  };
}

function parseExports(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.trim().split("\n")) {
    const m = /^export ([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (!m) throw new Error(`not an export line: ${line}`);
    const v = m[2]!;
    env[m[1]!] = v.startsWith("'") ? v.slice(1, -1).replace(/'\\''/g, "'") : v;
  }
  return env;
}

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Helpers the desktop's session bus activated. dbus-daemon double-forks them,
 * so their parent is init; they stay in the daemon's process group.
 */
async function busPeers(d: { pids: number[] }): Promise<number[]> {
  const { stdout } = await run("ps", ["-eo", "pid=,pgid="]);
  const dbus = d.pids[1];
  return stdout
    .trim()
    .split("\n")
    .map((l) => l.trim().split(/\s+/).map(Number))
    .filter(([pid, pgid]) => pgid === dbus && pid !== dbus)
    .map(([pid]) => pid!);
}

describe("shellQuote", () => {
  it("round-trips through sh", async () => {
    for (const v of ["plain", "with space", "it's", "$HOME `x` \\ \"q\"", "unix:path=/tmp/a,guid=1", ""]) {
      const { stdout } = await run("sh", ["-c", `v=${shellQuote(v)}; printf %s "$v"`]);
      expect(stdout).toBe(v);
    }
  });
});

// ---- issue 16: progress
// `deckhand desktop` start-up progress: the phases startDesktop reports, in
// order, and the CLI drawing them on a TTY stderr only (stderr on a pty,
// test/fixtures/pty-stderr.py), erased before the command inside the
// desktop writes anything. In this file, not one of its own: a desktop
// started alongside would show up in "tears down what it started" above.
const REPO = join(import.meta.dirname, "..", "..");
const BUN = join(REPO, "node_modules", ".bin", "bun");
const MAIN = join(REPO, "src", "main.ts");
const PTY = join(REPO, "test", "fixtures", "pty-stderr.py");
const ERASE = "\r\x1b[2K";

const PHASES = [
  "desktop: starting the X server (Xvfb)…",
  "desktop: starting the session D-Bus…",
  "desktop: starting the AT-SPI accessibility bus and registry…",
  "desktop: starting the window manager (openbox)…",
];

/** `deckhand desktop ARGV` with stdout a pipe and stderr a pty (or a pipe). */
function desktopCli(argv: string[], stderr: "pty" | "pipe", extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  // Whatever terminal settings the test run has, not a dumb one and progress not turned off.
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm", ...extraEnv };
  if (!("DECKHAND_PROGRESS" in extraEnv)) delete env.DECKHAND_PROGRESS;
  const args = [PTY, ...(stderr === "pipe" ? ["--pipe"] : []), "--", BUN, MAIN, "desktop", ...argv];
  return new Promise((resolve, reject) => {
    const child = spawn("python3", args, { cwd: REPO, env, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`pty-stderr.py exited ${code}`));
      const r = JSON.parse(out) as { code: number; stdout: string; stderr: string };
      const utf8 = (s: string) => Buffer.from(s, "latin1").toString("utf8");
      resolve({ code: r.code, stdout: utf8(r.stdout), stderr: utf8(r.stderr) });
    });
    child.stdin.end();
  });
}

describeLive("desktop start-up progress", () => {
  it("startDesktop reports each phase in order, then null once it is up", async () => {
    const phases: (string | null)[] = [];
    const desktop = await startDesktop({ progress: (p) => phases.push(p) });
    try {
      expect(phases).toEqual([...PHASES, null]);
    } finally {
      await desktop.stop();
    }
  });

  it("a failed start-up says it is cleaning up, then null", async () => {
    const phases: (string | null)[] = [];
    await expect(startDesktop({ depth: 7, progress: (p) => phases.push(p) })).rejects.toThrow(/xvfb/);
    expect(phases).toEqual([PHASES[0], "desktop: start-up failed, cleaning up…", null]);
  });

  describe("deckhand desktop run", () => {
    const inside = ["run", "--", "sh", "-c", "echo out; echo err >&2"];

    it("on a TTY stderr: the first phase shows, and the line is erased before the command's own stderr", async () => {
      const r = await desktopCli(inside, "pty");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("out\n");
      expect(r.stderr).toContain(`${ERASE}${PHASES[0]}`);
      // Everything before the command's line is progress, erased; the command's line is untouched (the pty adds \r).
      expect(r.stderr.endsWith(`${ERASE}err\r\n`)).toBe(true);
      const before = r.stderr.slice(0, -"err\r\n".length);
      expect(before.split(ERASE).filter(Boolean).every((t) => PHASES.includes(t))).toBe(true);
    });

    it("on a piped stderr, or with DECKHAND_PROGRESS=0: only the command's own output", async () => {
      const piped = await desktopCli(inside, "pipe");
      expect(piped).toEqual({ code: 0, stdout: "out\n", stderr: "err\n" });
      const off = await desktopCli(inside, "pty", { DECKHAND_PROGRESS: "0" });
      expect(off).toEqual({ code: 0, stdout: "out\n", stderr: "err\r\n" });
    });
  });
});
// ---- end progress
