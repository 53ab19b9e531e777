// Foreground input on Wayland (issue 19): the Linux helper's virtual
// keyboard and pointer on a private sway desktop, driven directly and
// through deckhand serve --allow-foreground. Two native Wayland GTK 3 apps
// log every key, button, motion, scroll, focus change and text change they
// receive: the target, and a second app that must never receive anything.
// Oracles: the apps' own logs and sway's IPC (focus, window rects).
import { execFile, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startDesktop, type Desktop } from "../../src/desktop/index.ts";
import { Supervisor } from "../../src/helpers/supervisor.ts";
import type { DeckhandError } from "../../src/protocol/errors.ts";
import type { InputStep } from "../../src/wire/messages.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { desktopEnv, SYSTEM_PYTHON, waitUntil } from "./harness.ts";
import { describeWayland, launchAsUser, swaymsg, swayViews, type SwayNode } from "./wayland.ts";

/** The logging app: an entry (focused) above a drawing area; one JSON line per event. */
const APP_PY = `
import gi, json, sys, time
gi.require_version('Gtk', '3.0')
from gi.repository import Gtk, Gdk
title, log_path = sys.argv[1], sys.argv[2]
log = open(log_path, 'a', buffering=1)
def out(**kw):
    kw['t'] = time.monotonic()
    log.write(json.dumps(kw) + '\\n')
w = Gtk.Window(title=title)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL)
entry = Gtk.Entry()
area = Gtk.DrawingArea()
area.set_size_request(300, 300)
area.add_events(Gdk.EventMask.BUTTON_PRESS_MASK | Gdk.EventMask.BUTTON_RELEASE_MASK | Gdk.EventMask.POINTER_MOTION_MASK | Gdk.EventMask.SCROLL_MASK)
box.pack_start(entry, False, False, 0)
box.pack_start(area, True, True, 0)
w.add(box)
def mods(state):
    return [n for n, m in (('shift', Gdk.ModifierType.SHIFT_MASK), ('control', Gdk.ModifierType.CONTROL_MASK), ('alt', Gdk.ModifierType.MOD1_MASK), ('super', Gdk.ModifierType.SUPER_MASK)) if state & m]
def key(_, ev, kind):
    out(ev=kind, keyval=Gdk.keyval_name(ev.keyval), mods=mods(ev.state))
    return False
w.connect('key-press-event', key, 'key_press')
w.connect('key-release-event', key, 'key_release')
def where(ev):
    x, y = area.translate_coordinates(w, int(ev.x), int(ev.y))
    return {'x': x, 'y': y}
area.connect('button-press-event', lambda _, ev: out(ev='button_press', button=ev.button, kind=int(ev.type), mods=mods(ev.state), **where(ev)) or False)
area.connect('button-release-event', lambda _, ev: out(ev='button_release', button=ev.button, **where(ev)) or False)
area.connect('motion-notify-event', lambda _, ev: out(ev='motion', **where(ev)) or False)
area.connect('scroll-event', lambda _, ev: out(ev='scroll', direction=int(ev.direction)) or False)
w.connect('focus-in-event', lambda *_: out(ev='focus_in') or False)
w.connect('focus-out-event', lambda *_: out(ev='focus_out') or False)
entry.connect('changed', lambda e: out(ev='text', text=e.get_text()))
w.connect('destroy', Gtk.main_quit)
w.show_all()
entry.grab_focus()
out(ev='ready')
Gtk.main()
`;

interface Ev {
  ev: string;
  keyval?: string;
  mods?: string[];
  button?: number;
  kind?: number;
  x?: number;
  y?: number;
  direction?: number;
  text?: string;
}

/** What an app receives from input (focus changes come from sway too, and are not counted). */
const INPUT = new Set(["key_press", "key_release", "button_press", "button_release", "motion", "scroll", "text"]);

interface App {
  pid: number;
  con: number;
  log: string;
  child: ChildProcess;
}

function content(v: SwayNode): { x: number; y: number } {
  return { x: v.rect.x + v.window_rect.x, y: v.rect.y + v.window_rect.y };
}

describeWayland("Wayland input: the helper's virtual keyboard and pointer on sway", () => {
  let desktop: Desktop;
  const stateDir = newStateDir();
  const apps: App[] = [];
  const sups: Supervisor[] = [];
  let target: App; // the right half, focused
  let other: App; // the left half: must never receive anything
  let sup: Supervisor;

  const events = (a: App, from = 0): Ev[] =>
    readFileSync(a.log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Ev)
      .slice(from);
  const mark = (a: App) => events(a).length;
  const inputs = (a: App, from: number) => events(a, from).filter((e) => INPUT.has(e.ev));
  const lastText = (a: App, from: number) => events(a, from).filter((e) => e.ev === "text").at(-1)?.text;
  /** Until the app's entry holds `text` (failing with what the app received). */
  const waitText = (a: App, from: number, text: string) =>
    waitUntil(`the entry to hold ${JSON.stringify(text)}`, 5000, () => lastText(a, from) === text).catch((e) => {
      throw new Error(`${(e as Error).message}; the app received: ${JSON.stringify(inputs(a, from).map((x) => [x.ev, x.keyval ?? x.text ?? x.button, x.mods]))}`);
    });

  async function launch(name: string): Promise<App> {
    const script = join(desktop.root, "home", "wl-input-app.py");
    writeFileSync(script, APP_PY, { mode: 0o644 });
    const log = join(desktop.root, "home", `${name}.log`);
    writeFileSync(log, "");
    chmodSync(log, 0o666); // written by the app as the desktop's user
    const child = launchAsUser(desktop.env, desktop.root, [SYSTEM_PYTHON, script, name, log]);
    const app: App = { pid: child.pid!, con: 0, log, child };
    apps.push(app);
    const view = await waitUntil(`${name} in sway's tree`, 20_000, async () => (await swayViews(desktop.env)).find((v) => v.pid === app.pid));
    app.con = view.id;
    await waitUntil(`${name} ready`, 20_000, () => events(app).some((e) => e.ev === "ready"));
    return app;
  }

  async function view(a: App): Promise<SwayNode> {
    return (await swayViews(desktop.env)).find((v) => v.id === a.con)!;
  }

  /** A screen point at window-relative (x, y) of an app's content (tiled: no client-side shadow). */
  async function at(a: App, x: number, y: number): Promise<{ x: number; y: number }> {
    const o = content(await view(a));
    return { x: o.x + x, y: o.y + y };
  }

  async function helper(): Promise<Supervisor> {
    const s = new Supervisor({ path: HELPER, env: desktopEnv(desktop) });
    sups.push(s);
    await s.start();
    return s;
  }

  const focusGuard = (a: App, activate = false) => ({ window_id: a.con, pid: a.pid, activate });
  const pointerGuard = (a: App) => ({ pid: a.pid, windows: [a.con] });

  async function input(
    s: Supervisor,
    args: { steps: InputStep[]; focus?: unknown; pointer_guard?: unknown; restore_pointer?: boolean },
    opts: { deadlineMs?: number; signal?: AbortSignal } = {},
  ): Promise<any> {
    return s.request("input", { restore_pointer: false, ...args } as never, { deadlineMs: 10_000, ...opts });
  }

  async function refused(s: Supervisor, args: Parameters<typeof input>[1]): Promise<DeckhandError & { details: any; receipt?: any }> {
    const e = await input(s, args).then(
      () => undefined,
      (err) => err,
    );
    if (!e) throw new Error("input was not refused");
    return e;
  }

  async function focus(a: App): Promise<void> {
    await swaymsg(desktop.env, "command", `[con_id=${a.con}] focus`);
    await waitUntil(`sway to focus ${a.con}`, 5000, async () => (await view(a)).focused);
  }

  beforeAll(async () => {
    requireBuild();
    desktop = await startDesktop({ wayland: true, width: 1280, height: 800 });
    other = await launch("other");
    target = await launch("target");
    // sway tiles the second window to the right of the first and focuses it.
    await waitUntil("the target focused, right of the other", 10_000, async () => {
      const [t, o] = [await view(target), await view(other)];
      return t.focused && t.rect.x > o.rect.x;
    });
  }, 90_000);

  afterAll(async () => {
    await Promise.all(sups.map((s) => s.stop()));
    for (const a of apps) a.child.kill("SIGKILL");
    await desktop?.stop();
  });

  it("the first key of a fresh helper's first input reaches a freshly started app", async () => {
    const s = await helper();
    const from = [mark(target), mark(other)] as const;
    const r = await input(s, { steps: [{ kind: "type", text: "first" }], focus: focusGuard(target) });
    expect(r.result).toMatchObject({ steps_completed: 1, chars_sent: 5, focus_window: target.con });
    expect(r.receipt).toMatchObject({ delivery: "submitted", cleanup: { keys_released: true, buttons_released: true, pointer_restored: null } });
    await waitText(target, from[0], "first");
    expect(inputs(target, from[0]).filter((e) => e.ev === "key_press")[0]).toMatchObject({ keyval: "f", mods: [] });
    expect(inputs(other, from[1])).toEqual([]);
    await s.stop();
    sup = await helper();
  });

  it("types any text exactly (non-ASCII, upper case) and a hotkey with its modifier", async () => {
    const from = [mark(target), mark(other)] as const;
    const text = "héllo Ω ✓ Upper ABC";
    // ctrl+a selects what is there: the typed text replaces it.
    const r = await input(sup, { steps: [{ kind: "tap", keys: ["ctrl", "a"], repeat: 1 }, { kind: "type", text }], focus: focusGuard(target) });
    expect(r.result).toMatchObject({ steps_completed: 2, chars_sent: [...text].length });
    await waitText(target, from[0], text);
    const keys = inputs(target, from[0]).filter((e) => e.ev === "key_press");
    expect(keys[0]).toMatchObject({ keyval: "Control_L" });
    expect(keys[1]).toMatchObject({ keyval: "a", mods: ["control"] });
    expect(keys.slice(2).map((k) => k.keyval)).toEqual(["h", "eacute", "l", "l", "o", "space", "U+03A9", "space", "U+2713", "space", "U", "p", "p", "e", "r", "space", "A", "B", "C"]);
    // No modifier is left on: every typed key came without one.
    expect(keys.slice(2).every((k) => k.mods!.length === 0)).toBe(true);
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("repeats: a tap repeated, and a held key repeated by the app itself", async () => {
    const from = [mark(target), mark(other)] as const;
    await input(sup, { steps: [{ kind: "tap", keys: ["ctrl", "a"], repeat: 1 }, { kind: "tap", keys: ["x"], repeat: 5 }], focus: focusGuard(target) });
    await waitText(target, from[0], "xxxxx");
    // Held for 1.5 s: sway's repeat (600 ms delay, 25/s) is the client's own on Wayland.
    const held = mark(target);
    const r = await input(sup, { steps: [{ kind: "key", key: "z", down: true }, { kind: "wait", ms: 1500 }, { kind: "key", key: "z", down: false }], focus: focusGuard(target) });
    expect(r.receipt.cleanup.keys_released).toBe(true);
    await waitUntil("the release of z", 5000, () => inputs(target, held).some((e) => e.ev === "key_release" && e.keyval === "z"));
    const z = inputs(target, held).filter((e) => e.keyval === "z");
    expect(z.filter((e) => e.ev === "key_press").length).toBeGreaterThan(3);
    expect(z.filter((e) => e.ev === "key_release")).toHaveLength(1);
    expect(z.at(-1)!.ev).toBe("key_release");
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("a click at a screen point lands at the window-relative point sway's rects say; a drag presses and releases where asked; the wheel scrolls", async () => {
    const from = [mark(target), mark(other)] as const;
    const p = await at(target, 150, 200);
    const q = await at(target, 260, 330);
    const r = await input(sup, {
      steps: [
        { kind: "click", x: p.x, y: p.y, button: "left", count: 1, modifiers: [] },
        { kind: "move", x: p.x + 10, y: p.y + 5 },
        { kind: "button", button: "left", down: true },
        { kind: "move", x: p.x + 60, y: p.y + 60 },
        { kind: "move", x: q.x, y: q.y },
        { kind: "button", button: "left", down: false },
        { kind: "scroll", x: q.x, y: q.y, dx: 0, dy: 3 },
        { kind: "scroll", x: null as never, y: null as never, dx: 0, dy: -2 },
        { kind: "click", x: q.x, y: q.y, button: "right", count: 1, modifiers: ["shift"] },
      ],
      pointer_guard: pointerGuard(target),
      restore_pointer: true,
    });
    expect(r.result.steps_completed).toBe(9);
    // Restoring was asked, but Wayland lets no client read where the pointer was: said so, not faked.
    expect(r.receipt.cleanup).toEqual({ keys_released: true, buttons_released: true, pointer_restored: false });
    await waitUntil("the last click", 5000, () => inputs(target, from[0]).some((e) => e.ev === "button_release" && e.button === 3));
    const b = inputs(target, from[0]).filter((e) => e.ev.startsWith("button") || e.ev === "scroll");
    expect(b.map(({ ev, button, x, y, direction, mods }) => ({ ev, button, x, y, direction, mods }))).toEqual([
      { ev: "button_press", button: 1, x: 150, y: 200, direction: undefined, mods: [] },
      { ev: "button_release", button: 1, x: 150, y: 200, direction: undefined, mods: undefined },
      { ev: "button_press", button: 1, x: 160, y: 205, direction: undefined, mods: [] },
      { ev: "button_release", button: 1, x: 260, y: 330, direction: undefined, mods: undefined },
      ...[1, 1, 1, 0, 0].map((direction) => ({ ev: "scroll", button: undefined, x: undefined, y: undefined, direction, mods: undefined })),
      { ev: "button_press", button: 3, x: 260, y: 330, direction: undefined, mods: ["shift"] },
      { ev: "button_release", button: 3, x: 260, y: 330, direction: undefined, mods: undefined },
    ]);
    // The drag's moves came as motion (GTK merges motion events: not each point is seen).
    expect(inputs(target, from[0]).filter((e) => e.ev === "motion").length).toBeGreaterThan(0);
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("the focus guard refuses keys while another window is focused (nothing received), and activates the target when allowed", async () => {
    await focus(other);
    const from = [mark(target), mark(other)] as const;
    const e = await refused(sup, { steps: [{ kind: "type", text: "nope" }], focus: focusGuard(target) });
    expect(e.code).toBe("FOCUS_MISMATCH");
    expect(e.details).toMatchObject({ expected_window: target.con, focus_window: other.con, focus_pid: other.pid, delivery: "not_dispatched" });
    expect((await view(other)).focused).toBe(true);
    const ok = await input(sup, { steps: [{ kind: "tap", keys: ["ctrl", "a"], repeat: 1 }, { kind: "type", text: "activated" }], focus: focusGuard(target, true) });
    expect(ok.result.focus_window).toBe(target.con);
    expect((await view(target)).focused).toBe(true);
    await waitText(target, from[0], "activated");
    expect(inputs(target, from[0]).filter((x) => x.ev === "key_press")[0]).toMatchObject({ keyval: "Control_L" });
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("the pointer guard refuses a point over another window: nothing received", async () => {
    const from = [mark(target), mark(other)] as const;
    const p = await at(other, 150, 200);
    const e = await refused(sup, { steps: [{ kind: "click", x: p.x, y: p.y, button: "left", count: 1, modifiers: [] }], pointer_guard: pointerGuard(target) });
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "point-outside-target", window_id: other.con, pid: other.pid, x: p.x, y: p.y, delivery: "not_dispatched" });
    // Off every view (below the output): refused too, naming no window.
    const off = await refused(sup, { steps: [{ kind: "move", x: 100, y: 5000 }], pointer_guard: pointerGuard(target) });
    expect(off.details).toMatchObject({ reason: "point-outside-target", window_id: 0 });
    // The guard also checks a drag's later points: the press goes out, the move onto the other app is refused, the button comes up.
    const q = await at(target, 100, 150);
    const drag = await refused(sup, {
      steps: [{ kind: "move", x: q.x, y: q.y }, { kind: "button", button: "left", down: true }, { kind: "move", x: p.x, y: p.y }, { kind: "button", button: "left", down: false }],
      pointer_guard: pointerGuard(target),
    });
    expect(drag.details).toMatchObject({ step: 2, steps_completed: 2, delivery: "partial" });
    await waitUntil("the release", 5000, () => inputs(target, from[0]).some((x) => x.ev === "button_release"));
    expect(inputs(target, from[0]).filter((x) => x.ev.startsWith("button")).map((x) => [x.ev, x.x, x.y])).toEqual([
      ["button_press", 100, 150],
      ["button_release", 100, 150],
    ]);
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("held keys are released when a step fails mid-way", async () => {
    await focus(target);
    const from = [mark(target), mark(other)] as const;
    const p = await at(other, 50, 200);
    const e = await refused(sup, {
      steps: [{ kind: "key", key: "ctrl", down: true }, { kind: "key", key: "shift", down: true }, { kind: "key", key: "q", down: true }, { kind: "move", x: p.x, y: p.y }],
      focus: focusGuard(target),
      pointer_guard: pointerGuard(target),
    });
    expect(e.code).toBe("POLICY_DENIED");
    expect(e.details).toMatchObject({ step: 3, steps_completed: 3, delivery: "partial" });
    await waitUntil("the releases", 5000, () => inputs(target, from[0]).filter((x) => x.ev === "key_release").length === 3);
    const ev = inputs(target, from[0]).map((x) => `${x.ev}:${x.keyval}`);
    expect(ev).toEqual(["key_press:Control_L", "key_press:Shift_L", "key_press:q", "key_release:q", "key_release:Shift_L", "key_release:Control_L"]);
    // Nothing is left held: the next key comes without a modifier.
    const next = mark(target);
    await input(sup, { steps: [{ kind: "tap", keys: ["b"], repeat: 1 }], focus: focusGuard(target) });
    await waitUntil("b", 5000, () => inputs(target, next).some((x) => x.ev === "key_press"));
    expect(inputs(target, next).find((x) => x.ev === "key_press")).toMatchObject({ keyval: "b", mods: [] });
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("a held button and key are released when the deadline passes, and when the request is cancelled", async () => {
    await focus(target);
    const from = [mark(target), mark(other)] as const;
    const p = await at(target, 200, 250);
    const hold: InputStep[] = [
      { kind: "move", x: p.x, y: p.y },
      { kind: "key", key: "shift", down: true },
      { kind: "button", button: "left", down: true },
      { kind: "wait", ms: 600 },
      { kind: "wait", ms: 600 },
      { kind: "wait", ms: 600 },
      { kind: "button", button: "left", down: false },
    ];
    const late = await input(sup, { steps: hold, focus: focusGuard(target), pointer_guard: pointerGuard(target) }, { deadlineMs: 1000 }).then(
      () => undefined,
      (err) => err,
    );
    expect(late?.code).toBe("TIMEOUT");
    await waitUntil("the button and Shift released", 5000, () => inputs(target, from[0]).filter((x) => x.ev.endsWith("release")).length === 2);
    expect(inputs(target, from[0]).filter((x) => x.ev !== "motion").map((x) => `${x.ev}:${x.keyval ?? x.button}`)).toEqual([
      "key_press:Shift_L",
      "button_press:1",
      "key_release:Shift_L",
      "button_release:1",
    ]);
    // Cancelled while holding (a serve `cancel` reaches the helper this way): released at once.
    const mid = mark(target);
    const abort = new AbortController();
    const running = input(sup, { steps: [...hold.slice(0, 3), { kind: "wait", ms: 8000 }, hold[6]!], focus: focusGuard(target), pointer_guard: pointerGuard(target) }, { signal: abort.signal }).then(
      () => undefined,
      (err) => err,
    );
    await waitUntil("the press", 5000, () => inputs(target, mid).some((x) => x.ev === "button_press"));
    const t0 = performance.now();
    abort.abort();
    await running;
    await waitUntil("the releases after the cancel", 5000, () => inputs(target, mid).filter((x) => x.ev.endsWith("release")).length === 2);
    expect(performance.now() - t0).toBeLessThan(4000); // not the 8 s wait
    expect(inputs(target, mid).filter((x) => x.ev !== "motion").map((x) => x.ev)).toEqual(["key_press", "button_press", "key_release", "button_release"]);
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("a step that panics (a bug) still releases what the op held, and the helper goes on", async () => {
    await focus(target);
    // The helper's debug switch: a deliberate panic before step 2.
    const s = new Supervisor({ path: HELPER, env: desktopEnv(desktop, { DECKHAND_DEBUG_PANIC_AT_STEP: "2" }) });
    sups.push(s);
    await s.start();
    const from = [mark(target), mark(other)] as const;
    const e = await refused(s, { steps: [{ kind: "key", key: "ctrl", down: true }, { kind: "key", key: "x", down: true }, { kind: "tap", keys: ["y"], repeat: 1 }], focus: focusGuard(target) });
    expect(e).toBeDefined();
    await waitUntil("the releases", 5000, () => inputs(target, from[0]).filter((x) => x.ev === "key_release").length === 2);
    expect(inputs(target, from[0]).map((x) => `${x.ev}:${x.keyval}`)).toEqual(["key_press:Control_L", "key_press:x", "key_release:x", "key_release:Control_L"]);
    // The same helper types on (its devices survived the panic), without a modifier left on.
    const next = mark(target);
    await input(s, { steps: [{ kind: "tap", keys: ["q"], repeat: 1 }] });
    await waitUntil("q", 5000, () => inputs(target, next).some((x) => x.ev === "key_press"));
    expect(inputs(target, next).find((x) => x.ev === "key_press")).toMatchObject({ keyval: "q", mods: [] });
    expect(inputs(other, from[1])).toEqual([]);
  });

  it("through deckhand serve --allow-foreground: type-text, press-key, hotkey, click, drag and scroll", async () => {
    await focus(target);
    const fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
    try {
      const app = `pid:${target.pid}`;
      const windowId = target.con;
      const from = [mark(target), mark(other)] as const;
      await fg.ok("hotkey", { app, windowId, keys: ["ctrl+a"] });
      await fg.ok("type-text", { app, windowId, text: "Größe ✓" });
      await waitText(target, from[0], "Größe ✓");
      await fg.ok("press-key", { app, windowId, key: "BackSpace", repeat: 2 });
      await waitText(target, from[0], "Größe");
      const p = await at(target, 120, 180);
      const q = await at(target, 220, 280);
      await fg.ok("click", { app, windowId, x: p.x, y: p.y });
      await fg.ok("drag", { app, windowId, fromX: p.x, fromY: p.y, toX: q.x, toY: q.y });
      await fg.ok("scroll", { app, windowId, x: q.x, y: q.y, direction: "down", amount: 2 });
      await waitUntil("two scroll notches", 5000, () => inputs(target, from[0]).filter((e) => e.ev === "scroll").length === 2);
      // GTK adds a double-click event (kind 5) to the drag's press right after the click there: only the presses themselves.
      const b = inputs(target, from[0]).filter((e) => (e.ev.startsWith("button") && e.kind !== 5) || e.ev === "scroll");
      expect(b.map((e) => [e.ev, e.x, e.y, e.direction])).toEqual([
        ["button_press", 120, 180, undefined],
        ["button_release", 120, 180, undefined],
        ["button_press", 120, 180, undefined],
        ["button_release", 220, 280, undefined],
        ["scroll", undefined, undefined, 1],
        ["scroll", undefined, undefined, 1],
      ]);
      expect(inputs(other, from[1])).toEqual([]);
      // A click over the other app is refused by the orchestrator's pointer guard: nothing received.
      const o = await at(other, 100, 100);
      const r = await fg.request("click", { app, windowId, x: o.x, y: o.y });
      expect(r.ok).toBe(false);
      expect(inputs(other, from[1])).toEqual([]);
    } finally {
      await fg.close();
    }
  });
  // ---- issue 19: the kill switch's input watch on sway (wayland/idle_watch.rs)
  it("watch_user_input: another client's key (wtype, as a user's) is reported; the helper's own typing is not; disabled, nothing is", async () => {
    const s = await helper();
    expect(s.hello?.capabilities.watch_user_input).toMatchObject({ supported: true, verified: "live" });
    const seen: { event: string; data: Record<string, unknown> }[] = [];
    s.on("helper-event", (e: { event: string; data: Record<string, unknown> }) => seen.push(e));
    const userInput = () => seen.filter((e) => e.event === "user_input");
    await s.request("watch_user_input", { enabled: true });
    await focus(target);
    // The helper's own keys: not user input (the seat quiet before, so the watch would report any other's).
    await new Promise((r) => setTimeout(r, 300));
    const from = mark(target);
    await input(s, { steps: [{ kind: "type", text: "own" }], focus: focusGuard(target) });
    await waitUntil("the helper's keys in the app", 5000, () => String(lastText(target, from) ?? "").endsWith("own"));
    await new Promise((r) => setTimeout(r, 1000));
    expect(userInput(), "the helper's own typing reported as user input").toEqual([]);
    // Another client's key: reported, as a user's would be.
    await promisify(execFile)("wtype", ["u"], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    await waitUntil("a user_input event", 3000, () => userInput().length > 0);
    expect(userInput()[0]!.data).toEqual({ kind: "activity" });
    // Disabled: nothing more.
    await s.request("watch_user_input", { enabled: false });
    const n = userInput().length;
    await new Promise((r) => setTimeout(r, 600));
    await promisify(execFile)("wtype", ["v"], { env: { ...process.env, ...desktop.env }, timeout: 10_000 });
    await new Promise((r) => setTimeout(r, 1000));
    expect(userInput().length).toBe(n);
  }, 60_000);
});
