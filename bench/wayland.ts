// Issue 19: Wayland rows for bench/linux.ts. A private headless sway desktop
// (startDesktop({ wayland: true }), as test/live/wayland-helper.test.ts starts
// it), gtk3-widget-factory run natively on Wayland as the desktop's user, and
// deckhand measured against its peers in the same run:
//   helper get_tree          vs a pyatspi walk of the same window (as the desktop's user)
//   helper window screenshot vs `grim -g "x,y wxh"` of the same region
//   get-app-state via serve  vs the X11 row of the same run (when it ran)
// wtype is no peer yet: deckhand has no Wayland keyboard input (issue 19).
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { startDesktop, type Desktop } from "../src/desktop/index.ts";
import { asUser, lookupUser, WAYLAND_USER } from "../src/desktop/user.ts";
import { percentile, type Row } from "./stats.ts";

const run = promisify(execFile);
const TOOLS = ["sway", "swaymsg", "grim", "gtk3-widget-factory"];

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
    // No input rows: wtype (the peer for typing) waits for deckhand's Wayland keyboard input (issue 19, not implemented).
    console.error("bench: Wayland input rows not measured: deckhand has no Wayland keyboard/pointer input yet (issue 19); wtype becomes the peer then");
  } finally {
    serve?.close();
    h.close();
    if (app?.pid) {
      try {
        process.kill(-app.pid, "SIGTERM");
      } catch {
        /* gone */
      }
    }
    await d.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
  return rows;
}
