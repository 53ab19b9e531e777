// Issue 19: Wayland rows for bench/linux.ts. A private headless sway desktop
// (startDesktop({ wayland: true }), as test/live/wayland-helper.test.ts starts
// it), gtk3-widget-factory run natively on Wayland as the desktop's user, and
// deckhand measured against its peers in the same run:
//   helper get_tree          vs a pyatspi walk of the same window (as the desktop's user)
//   helper window screenshot vs `grim -g "x,y wxh"` of the same region
//   get-app-state via serve  vs the X11 row of the same run (when it ran)
//   helper input (typing)    vs `wtype TEXT` into the same native GTK entry
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, chmodSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startDesktop, type Desktop } from "../src/desktop/index.ts";
import { asUser, lookupUser, WAYLAND_USER } from "../src/desktop/user.ts";
import { percentile, type Row } from "./stats.ts";

const run = promisify(execFile);
const TOOLS = ["sway", "swaymsg", "grim", "gtk3-widget-factory", "wtype", "wl-copy", "wl-paste"];

/** The tools the Wayland section needs that are not on PATH (empty: it can run). */
export function waylandMissing(): string[] {
  const path = (process.env.PATH ?? "").split(":");
  return TOOLS.filter((t) =>
    !path.some((d) => {
      try {
        accessSync(join(d, t), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }),
  );
}

export interface WaylandBenchDeps {
  runs: number;
  /** A direct wire client to the helper on this desktop (bench/linux.ts's HelperClient). */
  helper: (d: Desktop) => { req(op: string, args: Record<string, unknown>): Promise<any>; close(): void };
  /** A `deckhand serve` client on this desktop (bench/linux.ts's ServeClient). */
  serve: (d: Desktop, stateDir: string) => { ok(command: string, args: Record<string, unknown>): Promise<any>; close(): void };
  time: (n: number, fn: () => Promise<unknown> | unknown) => Promise<number[]>;
  waitFor: (what: string, check: () => boolean | Promise<boolean>, ms?: number) => Promise<void>;
  walkPy: string;
  python: string;
  /** The X11 get-app-state row's p50 in this run, if the X11 part ran. */
  x11State?: number;
}

/** A GTK 3 entry that logs "done" each time it holds argv[1], then empties itself and logs "empty". */
const ENTRY_PY = `
import gi, sys
gi.require_version('Gtk', '3.0')
from gi.repository import Gtk, GLib
target, log = sys.argv[1], open(sys.argv[2], 'a', buffering=1)
w = Gtk.Window(title='bench-entry'); e = Gtk.Entry(); w.add(e)
def clear():
    e.set_text('')
    log.write('empty\\n')
    return False
def changed(_):
    if e.get_text() == target:
        log.write('done\\n')
        GLib.idle_add(clear)
e.connect('changed', changed)
w.connect('destroy', Gtk.main_quit); w.show_all(); e.grab_focus(); Gtk.main()
`;

export async function waylandRows(deps: WaylandBenchDeps): Promise<Row[]> {
  const missing = waylandMissing();
  if (missing.length) {
    console.error(`bench: Wayland section skipped: missing ${missing.join(", ")}`);
    return [];
  }
  const { runs, time, waitFor } = deps;
  const rows: Row[] = [];
  const d = await startDesktop({ wayland: true, width: 1280, height: 800 });
  const stateDir = mkdtempSync(join(tmpdir(), "dh-bench-wl-"));
  const home = join(d.root, "home");
  const user = process.getuid?.() === 0 ? lookupUser(WAYLAND_USER) : undefined;
  const asDesktopUser = (argv: string[]) => asUser(argv, user, home);
  const denv = { ...process.env, ...d.env };
  let app: ChildProcess | undefined;
  let entryApp: ChildProcess | undefined;
  const h = deps.helper(d);
  let serve: ReturnType<WaylandBenchDeps["serve"]> | undefined;
  try {
    // Native Wayland: DISPLAY empty, so GTK cannot fall back to Xwayland.
    const argv = asDesktopUser(["/usr/bin/gtk3-widget-factory"]);
    app = spawn(argv[0]!, argv.slice(1), { env: { ...denv, DISPLAY: "" }, cwd: home, stdio: "ignore", detached: true });
    app.on("error", () => {});
    const pid = app.pid!;
    let win = 0;
    await waitFor("widget-factory's window in sway's tree", async () => {
      const { windows } = await h.req("list_windows", { pid });
      win = windows[0]?.window_id ?? 0;
      return win !== 0;
    });
    // Until its accessible tree is there (the a11y registration follows the first frame).
    const treeArgs = { pid, window_id: win, max_depth: 64, max_children: 1000, max_nodes: 5000 };
    let first: any;
    await waitFor("widget-factory's tree", async () => {
      first = await h.req("get_tree", treeArgs).catch(() => undefined);
      return (first?.nodes?.length ?? 0) > 50;
    });
    await new Promise((r) => setTimeout(r, 500)); // its first layout
    first = await h.req("get_tree", treeArgs);

    // (1) get_tree vs pyatspi walked as the desktop's user (its a11y bus, its app)
    const tree = await time(runs, () => h.req("get_tree", treeArgs));
    const py = asDesktopUser([deps.python, "-c", deps.walkPy, "gtk3-widget-factory", String(Math.min(runs, 15))]);
    const walk = execFileSync(py[0]!, py.slice(1), { env: denv, cwd: home, timeout: 120_000 }).toString().trim().split(" ");
    const walkMs = Number(walk[0]);
    rows.push({ name: `Wayland: helper get_tree, widget-factory page 1 (${first.nodes.length} nodes, source ${first.source}, ${first.calls} calls)`, p50: percentile(tree, 50), p99: percentile(tree, 99), unit: "ms", note: `peer: pyatspi walk of ${walk[1]} showing nodes as ${user ? WAYLAND_USER : "this user"}: ${walkMs.toFixed(1)} ms; ratio ${(percentile(tree, 50) / walkMs).toFixed(3)}` });

    // (2) window screenshot (wlr-screencopy -> PNG) vs grim of the same region
    const shotPath = join(stateDir, "bench.png");
    const probe = await h.req("screenshot", { window_id: win, path: shotPath, redact_secure: false, redact: [] });
    const shot = await time(runs, () => h.req("screenshot", { window_id: win, path: shotPath, redact_secure: true, redact: [] }));
    const bare = await time(runs, () => h.req("screenshot", { window_id: win, path: shotPath, redact_secure: false, redact: [] }));
    const x = probe.origin?.x ?? 0;
    const y = probe.origin?.y ?? 0;
    const geometry = `${x},${y} ${probe.width}x${probe.height}`;
    const grimPath = join(stateDir, "grim.png");
    const grim = await time(Math.min(runs, 10), () => run("grim", ["-g", geometry, grimPath], { env: denv, timeout: 10_000 }));
    rows.push({ name: `Wayland: helper window screenshot -> PNG file (${probe.width}x${probe.height}, ${probe.method ?? "?"}, secure fields redacted)`, p50: percentile(shot, 50), p99: percentile(shot, 99), unit: "ms", note: `peer: \`grim -g "${geometry}"\` ${percentile(grim, 50).toFixed(1)} ms; ratio ${(percentile(shot, 50) / percentile(grim, 50)).toFixed(3)}; capture + PNG alone (no secure-field search) ${percentile(bare, 50).toFixed(1)} ms, ratio ${(percentile(bare, 50) / percentile(grim, 50)).toFixed(3)}` });

    // (3) get-app-state through serve, against the X11 row of this run
    serve = deps.serve(d, stateDir);
    const s = serve;
    const st = await s.ok("get-app-state", { app: `pid:${pid}` });
    const state = await time(runs, () => s.ok("get-app-state", { app: `pid:${pid}` }));
    const noShot = await time(runs, () => s.ok("get-app-state", { app: `pid:${pid}`, noScreenshot: true }));
    const x11 = deps.x11State === undefined ? "X11 row not run (BENCH_ONLY=wayland)" : `X11 row (Xvfb, same run): ${deps.x11State.toFixed(1)} ms, Wayland/X11 ${(percentile(state, 50) / deps.x11State).toFixed(2)}`;
    rows.push({ name: `Wayland: get-app-state end to end through serve (tree + screenshot, ${st.snapshot.elementCount} elements)`, p50: percentile(state, 50), p99: percentile(state, 99), unit: "ms", note: `widget-factory page 1; ${x11}; --no-screenshot ${percentile(noShot, 50).toFixed(1)} ms` });

    // (4) typing a fixed text into a native GTK 3 entry: the helper's input op
    // (focus guard on, as deckhand sends it) vs `wtype TEXT`, each timed to
    // its completion (both end with a round trip to sway). The app logs each
    // time the entry holds the text, then empties it: every run is counted.
    const TEXT = "deckhand types héllo Ω ✓ 42";
    const script = join(home, "bench-entry.py");
    const log = join(home, "bench-entry.log");
    writeFileSync(script, ENTRY_PY);
    chmodSync(script, 0o644);
    writeFileSync(log, "");
    chmodSync(log, 0o666);
    const eargv = asDesktopUser([deps.python, script, TEXT, log]);
    entryApp = spawn(eargv[0]!, eargv.slice(1), { env: { ...denv, DISPLAY: "" }, cwd: home, stdio: "ignore", detached: true });
    entryApp.on("error", () => {});
    const epid = entryApp.pid!;
    let ewin = 0;
    await waitFor("the entry app focused in sway's tree", async () => {
      const { windows } = await h.req("list_windows", { pid: epid });
      ewin = windows[0]?.window_id ?? 0;
      const tree = JSON.parse((await run("swaymsg", ["-r", "-s", d.env.SWAYSOCK!, "-t", "get_tree"], { timeout: 5000 })).stdout);
      const focused = (n: any): boolean => (n.id === ewin && n.focused) || [...(n.nodes ?? []), ...(n.floating_nodes ?? [])].some(focused);
      return ewin !== 0 && focused(tree);
    });
    const lines = () => readFileSync(log, "utf8").split("\n");
    const done = () => lines().filter((l) => l === "done").length;
    // Polled every millisecond (waitFor's 50 ms steps would be most of what is measured).
    const until = async (what: string, check: () => boolean) => {
      const end = performance.now() + 10_000;
      while (!check()) {
        if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 1));
      }
    };
    // Typed into the empty entry: the app emptied it after the last run.
    const typed = async (send: () => Promise<unknown>) => {
      const before = done();
      await until("an empty entry", () => lines().filter((l) => l === "empty").length === before);
      const t0 = performance.now();
      await send();
      await until("the typed text", () => done() === before + 1);
      return performance.now() - t0;
    };
    const timed = async (n: number, send: () => Promise<unknown>) => {
      await typed(send); // warm
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push(await typed(send));
      return out;
    };
    const typeArgs = { steps: [{ kind: "type", text: TEXT }], restore_pointer: false, focus: { window_id: ewin, pid: epid, activate: false } };
    await h.req("input", typeArgs); // the devices' one-time creation is not what is measured
    await until("the first typed text", () => done() === 1);
    const helperType = await timed(runs, () => h.req("input", typeArgs));
    const wtype = await timed(runs, () => run("wtype", [TEXT], { env: denv, timeout: 10_000 }));
    rows.push({
      name: `Wayland: helper input, type ${[...TEXT].length} characters (non-ASCII too) into a native GTK 3 entry, focus guard on, until the app has it`,
      p50: percentile(helperType, 50),
      p99: percentile(helperType, 99),
      unit: "ms",
      note: `peer: \`wtype TEXT\` until the app has it ${percentile(wtype, 50).toFixed(1)} ms (p99 ${percentile(wtype, 99).toFixed(1)}); ratio ${(percentile(helperType, 50) / percentile(wtype, 50)).toFixed(3)}; every run's text arrived whole (${done()} times)`,
    });

    // (5) the clipboard through wlr-data-control: the helper's clipboard_get
    // (the metadata, then the text through a pipe) vs `wl-paste`, and its
    // clipboard_set (a detached owner process, confirmed) vs `wl-copy`, each
    // timed to its return; 1 KiB of text, read back whole each time.
    const CLIP = "deckhand clipboard ✓ ".repeat(48).slice(0, 1024);
    const wlCopyFirst = () =>
      new Promise<void>((resolve, reject) => {
        const c = spawn("wl-copy", [CLIP], { env: denv, stdio: "ignore" });
        c.once("error", reject);
        c.once("exit", () => resolve());
      });
    await wlCopyFirst();
    const getArgs = { selection: "clipboard", read_text: true, max_bytes: 1 << 20 };
    if ((await h.req("clipboard_get", getArgs)).text !== CLIP) throw new Error("clipboard_get did not read what wl-copy put there");
    const clipGet = await time(runs, () => h.req("clipboard_get", getArgs));
    const wlPaste = await time(runs, () => run("wl-paste", ["--no-newline"], { env: denv, timeout: 10_000 }));
    const clipSet = await time(runs, () => h.req("clipboard_set", { selection: "clipboard", text: CLIP }));
    if ((await run("wl-paste", ["--no-newline"], { env: denv, timeout: 10_000 })).stdout !== CLIP) throw new Error("wl-paste did not read what clipboard_set put there");
    // wl-copy forks a process that holds the selection and keeps the pipes it inherits: timed to its first process's exit.
    const wlCopyOnce = () =>
      new Promise<void>((resolve, reject) => {
        const c = spawn("wl-copy", [CLIP], { env: denv, stdio: "ignore" });
        c.once("error", reject);
        c.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`wl-copy exited ${code}`))));
      });
    const wlCopy = await time(runs, wlCopyOnce);
    if ((await run("wl-paste", ["--no-newline"], { env: denv, timeout: 10_000 })).stdout !== CLIP) throw new Error("wl-paste did not read what wl-copy put there");
    rows.push({
      name: "Wayland: helper clipboard_get, 1 KiB of text (wlr-data-control, through a pipe)",
      p50: percentile(clipGet, 50),
      p99: percentile(clipGet, 99),
      unit: "ms",
      note: `peer: \`wl-paste --no-newline\` ${percentile(wlPaste, 50).toFixed(1)} ms; ratio ${(percentile(clipGet, 50) / percentile(wlPaste, 50)).toFixed(3)}`,
    });
    rows.push({
      name: "Wayland: helper clipboard_set, 1 KiB of text (a detached data-control owner, confirmed)",
      p50: percentile(clipSet, 50),
      p99: percentile(clipSet, 99),
      unit: "ms",
      note: `peer: \`wl-copy TEXT\` ${percentile(wlCopy, 50).toFixed(1)} ms; ratio ${(percentile(clipSet, 50) / percentile(wlCopy, 50)).toFixed(3)}`,
    });
  } finally {
    serve?.close();
    h.close();
    // The detached clipboard owners (ours and wl-copy's) exit when sway goes with the desktop.
    for (const a of [app, entryApp]) {
      if (!a?.pid) continue;
      try {
        process.kill(-a.pid, "SIGTERM");
      } catch {
        /* gone */
      }
    }
    await d.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  return rows;
}
