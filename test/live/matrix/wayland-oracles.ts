// The matrix's oracles on the Wayland desktop (issue 19), and their
// self-check. Wayland gives a client neither the focus, nor a stacking
// order, nor the pointer's position, so:
// - focus: sway's focused container (get_tree), the compositor's own word;
// - stacking: sway has no global z-order; its tree stands for it (each
//   view's container id, tiled or floating, rectangle, shown or not): any
//   window moved, resized, floated, hidden or added shows there;
// - pointer: no client can read where the pointer is; the fixtures log
//   every pointer event their windows receive on Wayland ("pointer": enter,
//   leave, motion; fixture_app.py watch_pointer and its GTK4 and Qt5
//   counterparts), so (a) the pointer oracle compares where the fixture
//   last saw the pointer (over which window, at which point, or outside):
//   the X11 rows' "pointer unchanged" and "pointer restored"; (b) any
//   pointer event at all is in the app-log oracle, so a row that must not
//   touch the pointer fails on one. Both see the pointer over the fixture's
//   windows only, which is where a row's action could move it. (sway has no
//   pointer at all until some pointer device exists: a virtual one.)
// proveWaylandOracles injects a focus steal (swaymsg focus on the fixture's
// second window), a stray keystroke (wtype into the focused fixture), a
// pointer nudge (a virtual pointer of our own: wl_pointer_nudge.py) and a
// tree change (swaymsg floating enable), and requires each oracle to catch
// its injection and all to stay quiet with nothing injected. Rows count only
// after it passed in the same run (results.ts record).
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { FIXTURE_APP, launchFixtureScript, waitUntil, type DesktopLike, type Fixture, type LaunchFixtureOptions } from "../harness.ts";
import { asDesktopUser, swaymsg, swayViews, views, type SwayNode } from "../wayland.ts";
import { focusViolations, pointerViolations, QUIET_MS, sceneViolations, stackingViolations, unexpectedEvents, type OracleProof, type Scene } from "./oracles.ts";

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const NUDGE = join(import.meta.dirname, "wl_pointer_nudge.py");

/** A Wayland desktop as the tests hold it: its environment (SWAYSOCK...) and private root. */
export interface WaylandDesktop extends DesktopLike {
  root: string;
}

/** The last pointer event a fixture logged: where its windows last saw the pointer (Wayland: its pointer oracle). */
export function pointerSeen(f: Pick<Fixture, "events">): string {
  const last = f.events().filter((e) => e.event === "pointer").at(-1);
  // Never seen, or seen leaving: the pointer is not over the fixture's windows.
  if (!last || last.kind === "leave") return "outside the fixture's windows";
  return last.x === undefined ? `over "${last.window}"` : `over "${last.window}" at ${last.x},${last.y}`;
}

/** sway's tree as the stacking oracle compares it: each view's id, kind, rectangle and whether it is shown. */
function layout(tree: SwayNode): string {
  return views(tree)
    .map((v) => `${v.id}:${v.type}:${v.rect.x},${v.rect.y},${v.rect.width}x${v.rect.height}:${v.visible === false ? "hidden" : "shown"}`)
    .sort()
    .join(" ");
}

function focusedId(node: SwayNode): number | undefined {
  if (node.focused) return node.id;
  for (const c of [...(node.nodes ?? []), ...(node.floating_nodes ?? [])]) {
    const id = focusedId(c);
    if (id !== undefined) return id;
  }
  return undefined;
}

export async function waylandScene(d: DesktopLike, f?: Pick<Fixture, "events">): Promise<Scene> {
  const tree = (await swaymsg(d.env, "get_tree")) as SwayNode;
  return { focus: String(focusedId(tree)), stacking: layout(tree), pointer: f ? pointerSeen(f) : "unknown" };
}

/** Waits until sway's tree holds still (apps resize themselves after mapping): the oracles' starting point. */
export async function settledTree(d: DesktopLike): Promise<void> {
  let last = "";
  await waitUntil("sway's tree to hold still", 15_000, async () => {
    await sleep(QUIET_MS);
    // The stacking oracle's layout and where each view's content sits in it (an app's new geometry is there too).
    const tree = (await swaymsg(d.env, "get_tree")) as SwayNode;
    const now = `${layout(tree)} | ${views(tree)
      .map((v) => `${v.id}:${v.window_rect.x},${v.window_rect.y},${v.window_rect.width}x${v.window_rect.height}`)
      .join(" ")}`;
    const still = now === last;
    last = now;
    return still;
  });
}

/** The GTK3 fixture on the Wayland desktop: run as its user, a native Wayland client (DISPLAY empty, so nothing falls back to Xwayland). */
export function launchWaylandFixture(desktop: WaylandDesktop, opts: LaunchFixtureOptions = {}, script = FIXTURE_APP): Promise<Fixture> {
  return launchFixtureScript(desktop, script, { timeoutMs: 20_000, ...opts, env: { DISPLAY: "", ...opts.env }, wrapArgv: (argv) => asDesktopUser(argv, desktop.root) });
}

/** sway's container id (deckhand's window id on Wayland) of the fixture's window with this title. */
export async function swayWindowId(desktop: DesktopLike, f: Fixture, title: string): Promise<number> {
  const view = await waitUntil(`sway's view of the fixture's window "${title}"`, 10_000, async () => (await swayViews(desktop.env)).find((v) => v.pid === f.pid && v.name === title));
  return view.id;
}

let proof: OracleProof | undefined;
/** This process's Wayland self-check result (undefined until proveWaylandOracles ran). */
export function waylandOracleProof(): OracleProof | undefined {
  return proof;
}

/**
 * The self-check on a GTK3 fixture of its own: with nothing injected every
 * oracle is quiet; a stray keystroke (wtype), a focus steal (swaymsg), a
 * pointer nudge (a virtual pointer) and a tree change (swaymsg floating)
 * are each caught by their oracle. Throws when one misses or cries wolf.
 */
export async function proveWaylandOracles(desktop: WaylandDesktop): Promise<OracleProof> {
  const desk = { scene: (f: Fixture) => waylandScene(desktop, f) };
  const checks: OracleProof["checks"] = [];
  const f = await launchWaylandFixture(desktop);
  try {
    const main = await swayWindowId(desktop, f, "deckhand fixture");
    const second = await swayWindowId(desktop, f, "deckhand fixture 2");
    await swaymsg(desktop.env, "command", `[con_id=${main}] focus`);
    await waitUntil("the fixture's main window to take sway's focus", 5000, async () => (await desk.scene(f)).focus === String(main));
    await settledTree(desktop);

    // Nothing injected: every oracle quiet.
    let before = await desk.scene(f);
    let mark = f.events().length;
    await sleep(QUIET_MS);
    const quiet = [...sceneViolations(before, await desk.scene(f)), ...unexpectedEvents(f, mark)];
    checks.push({ injection: "none", oracle: "all", caught: quiet.length > 0, report: quiet });

    // A stray keystroke into the focused fixture: the app-log oracle must see it.
    mark = f.events().length;
    await run("wtype", ["x"], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    await f.waitFor((e) => e.event === "key", 5000, mark).catch(() => undefined);
    await sleep(QUIET_MS);
    const stray = unexpectedEvents(f, mark);
    checks.push({ injection: "stray keystroke (wtype x)", oracle: "app-log", caught: stray.length > 0, report: stray });

    // A focus steal: sway focuses the second window.
    before = await desk.scene(f);
    await swaymsg(desktop.env, "command", `[con_id=${second}] focus`);
    await sleep(QUIET_MS);
    const stolen = focusViolations(before, await desk.scene(f));
    checks.push({ injection: `focus steal (swaymsg [con_id=${second}] focus)`, oracle: "focus (sway)", caught: stolen.length > 0, report: stolen });

    // A pointer nudge over the main window, by a virtual pointer of our own.
    before = await desk.scene(f);
    mark = f.events().length;
    const out = (await swaymsg(desktop.env, "get_outputs")) as { rect: { width: number; height: number } }[];
    const view = (await swayViews(desktop.env)).find((v) => v.id === main)!;
    const [px, py] = [view.rect.x + Math.floor(view.rect.width / 3), view.rect.y + Math.floor(view.rect.height / 2)];
    // The virtual pointer holds still over the window for 3 s, then goes away (the fixture then sees it leave).
    const nudge = run("/usr/bin/python3", [NUDGE, String(px), String(py), "-7", "-5", String(out[0]!.rect.width), String(out[0]!.rect.height), "3"], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    await f.waitFor((e) => e.event === "pointer" && e.kind === "motion", 5000, mark).catch(() => undefined);
    await sleep(QUIET_MS);
    const moved = pointerViolations(before, await desk.scene(f));
    checks.push({ injection: `pointer nudge (a zwlr_virtual_pointer_v1 to ${px},${py}, then by -7,-5)`, oracle: "pointer (where the fixture last saw it)", caught: moved.length > 0, report: moved });
    await nudge;
    await f.waitFor((e) => e.event === "pointer" && e.kind === "leave", 5000, mark).catch(() => undefined);
    const seen = unexpectedEvents(f, mark);
    checks.push({ injection: "the same pointer nudge", oracle: "app-log (the fixture's pointer events)", caught: seen.length > 0, report: seen.slice(0, 3) });

    // A window floated: sway's tree (the stacking oracle) changes.
    before = await desk.scene(f);
    await swaymsg(desktop.env, "command", `[con_id=${second}] floating enable`);
    await sleep(QUIET_MS);
    const tree = stackingViolations(before, await desk.scene(f));
    checks.push({ injection: `tree change (swaymsg [con_id=${second}] floating enable)`, oracle: "stacking (sway's tree)", caught: tree.length > 0, report: tree });
  } finally {
    await f.stop();
  }
  const ok = checks.every((c) => (c.injection === "none" ? !c.caught : c.caught));
  proof = { ok, checks, at: new Date().toISOString() };
  if (!ok) throw new Error(`the Wayland matrix oracles failed their self-check:\n${JSON.stringify(checks, null, 2)}`);
  return proof;
}
