// Issue 10 (pointer paths and secure fields) on the real desktop, with the
// real helper: an adversarial agent under the operator's grant.
// 1. Pointer input stays inside the target's allowed windows: a terminal
//    (xterm, built-in denied) that logs every byte it receives sits over the
//    fixture; drags ending over it (middle button: a paste), a scroll and a
//    hover over it, a click on its title bar and a wheel turned where the
//    pointer rests over it are refused; it receives nothing and is never
//    activated. A window_title rule denying the fixture's second window holds
//    against a coordinate click.
// 2. No keys and no paste while a secure field has focus anywhere in the app:
//    the Password entry, a password entry in the second window, one pruned
//    from the tree (scrolled away); paste chords; middle clicks over a field.
// 3. A password revealed by the app's "Show password" toggle stays secure in
//    later snapshots. Oracles: the xterm's byte log, the fixture's JSON log,
//    the X server (active window, pointer), pyatspi and the PNG's pixels.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { accessibleNodes, centre, describeLive, launchApp, launchFixture, python, useDesktop, waitUntil, xdotool, type AccessibleNode, type App, type Fixture } from "./harness.ts";
import { deckhand, newStateDir, ok, requireBuild } from "./deckhand.ts";

const APP = "deckhand-fixture";
const QUIET_MS = 600;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describeLive("pointer paths and secure fields (issue 10)", () => {
  const desktop = useDesktop();
  let state: string;
  let fixture: Fixture;
  let term: App;
  let termLog: string;
  let nodes: AccessibleNode[];
  let main: number;
  let second: number;
  /** The xterm's client area on screen. */
  let termBox: { x: number; y: number; width: number; height: number };
  const fg = ["--allow-foreground"];

  const node = (name: string, role?: string) => {
    const found = nodes.find((n) => n.name === name && (!role || n.role === role));
    if (!found) throw new Error(`no accessible ${role ?? "node"} named ${name}`);
    return found;
  };
  const dh = (args: string[]) => deckhand(desktop, [...args], { stateDir: state });
  const target = () => ["--app", `pid:${fixture.pid}`];
  const activeWindow = async () => Number(await xdotool(desktop, ["getactivewindow"]));
  const pointerAt = async () => (await xdotool(desktop, ["getmouselocation", "--shell"])).split("\n").filter((l) => /^[XY]=/.test(l)).join(" ");
  const termBytes = () => readFileSync(termLog, "utf8");

  /** Nothing reached the fixture since mark (after a quiet period). */
  async function fixtureUntouched(mark: number, what: (e: { event: string }) => boolean = () => true): Promise<void> {
    await sleep(QUIET_MS);
    expect(fixture.events().slice(mark).filter((e) => e.event !== "window" && what(e))).toEqual([]);
  }

  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    fixture = await launchFixture(desktop);
    const ready = (await fixture.waitFor((e) => e.event === "ready")).windows as { title: string; xid: number }[];
    main = ready.find((w) => w.title === "deckhand fixture")!.xid;
    second = ready.find((w) => w.title === "deckhand fixture 2")!.xid;
    termLog = join(desktop.root, `xterm-bytes-${Date.now()}.log`);
    // Over the lower right of the fixture's main window, its title bar over the fixture's client area.
    term = await launchApp(desktop, ["/usr/bin/xterm", "-geometry", "50x8+480+470", "-e", "sh", "-c", `stty raw -echo; exec cat > ${termLog}`]);
    await waitUntil("the terminal's log file", 10_000, () => existsSync(termLog));
    const geo = await waitUntil("the xterm's geometry", 5000, async () => {
      const out = await xdotool(desktop, ["getwindowgeometry", "--shell", String(term.windows[0])]);
      const v = Object.fromEntries(out.split("\n").map((l) => l.split("=")));
      return v.X !== undefined ? { x: Number(v.X), y: Number(v.Y), width: Number(v.WIDTH), height: Number(v.HEIGHT) } : undefined;
    });
    termBox = geo;
    nodes = await accessibleNodes(desktop, APP);
    // Something in the primary selection: what a middle button would paste.
    const [nx, ny] = centre(node("Name", "text"));
    await xdotool(desktop, ["mousemove", String(nx), String(ny), "click", "1"]);
    await xdotool(desktop, ["type", "--delay", "5", "echo pwned"]);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === "echo pwned");
    await xdotool(desktop, ["key", "ctrl+a"]);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([fixture?.stop(), term?.stop()]);
  });

  beforeEach(async () => {
    // The fixture active, the terminal stacked above it (raised, not activated).
    await xdotool(desktop, ["windowactivate", "--sync", String(main)]);
    await xdotool(desktop, ["windowraise", String(term.windows[0])]);
    await waitUntil("the terminal above the fixture", 5000, async () => {
      const stack = execFileSync("xprop", ["-root", "_NET_CLIENT_LIST_STACKING"], { env: { ...process.env, ...desktop.env } }).toString();
      const ids = (stack.split("#")[1] ?? "").split(",").map((s) => Number(s.trim()));
      return ids.indexOf(term.windows[0]!) > ids.indexOf(main);
    });
    expect(await activeWindow()).toBe(main);
  });

  // ------------------------------------------------------------ 1. pointer
  const overTerm = () => ({ x: termBox.x + Math.round(termBox.width / 2), y: termBox.y + Math.round(termBox.height / 2) });
  const neutral = () => centre(node("Notes", "label"));

  for (const button of ["middle", "left"] as const) {
    it(`a ${button}-button drag ending over the terminal: refused, the terminal receives nothing and is not activated`, async () => {
      const [sx, sy] = neutral();
      const { x, y } = overTerm();
      const mark = fixture.events().length;
      const before = await pointerAt();
      const r = await dh(["drag", ...target(), "--from-x", String(sx), "--from-y", String(sy), "--to-x", String(x), "--to-y", String(y), "--button", button, ...fg]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
      expect(r.envelope.error!.details).toMatchObject({ reason: "point-outside-target", pid: term.pid, point: 1 });
      await fixtureUntouched(mark);
      expect(termBytes()).toBe("");
      expect(await activeWindow()).toBe(main);
      expect(await pointerAt()).toBe(before);
    });
  }

  it("a scroll over the terminal and a hover (move) over it: refused, the pointer never goes there", async () => {
    const { x, y } = overTerm();
    const mark = fixture.events().length;
    const before = await pointerAt();
    const s = await dh(["scroll", ...target(), "--direction", "up", "--x", String(x), "--y", String(y), ...fg]);
    expect(s.envelope.error?.code).toBe("POLICY_DENIED");
    const m = await deckhand(desktop, ["run", ...fg], { stateDir: state, stdin: JSON.stringify({ app: `pid:${fixture.pid}`, observe: false, steps: [{ action: "move", x, y }] }) });
    expect(m.envelope.ok).toBe(false);
    expect(m.envelope.error?.code).toBe("POLICY_DENIED");
    expect((m.envelope.error?.details as any).receipts[0]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "POLICY_DENIED", details: { reason: "point-outside-target" } } });
    await fixtureUntouched(mark);
    expect(termBytes()).toBe("");
    expect(await activeWindow()).toBe(main);
    expect(await pointerAt()).toBe(before);
  });

  it("a click on the terminal's title bar (over the fixture's client area): refused, the terminal is not activated", async () => {
    const x = termBox.x + 40;
    const y = termBox.y - 8;
    const mark = fixture.events().length;
    for (const grant of [[], fg]) {
      const r = await dh(["click", ...target(), "--x", String(x), "--y", String(y), ...grant]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
      expect(r.envelope.error!.details.reason).toBe("point-outside-target");
    }
    await fixtureUntouched(mark);
    expect(await activeWindow()).toBe(main);
    expect(termBytes()).toBe("");
  });

  it("the wheel turned where the pointer rests, over the terminal or its title bar: the helper's guard refuses, nothing is delivered", async () => {
    const { x, y } = overTerm();
    // Its client area, then its title bar (the frame the window manager draws, over the fixture's client area).
    for (const [px, py] of [[x, y], [termBox.x + 40, termBox.y - 8]] as const) {
      await xdotool(desktop, ["mousemove", String(px), String(py)]);
      const mark = fixture.events().length;
      const r = await dh(["scroll", ...target(), "--direction", "up", ...fg]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
      expect(r.envelope.error!.details).toMatchObject({ reason: "point-outside-target", delivery: "not_dispatched" });
      await fixtureUntouched(mark);
    }
    expect(termBytes()).toBe("");
    expect(await activeWindow()).toBe(main);
    // Over the fixture itself, the same scroll goes through: the guard is not refusing everything.
    const [lx, ly] = neutral();
    await xdotool(desktop, ["mousemove", String(lx), String(ly)]);
    const ok1 = await dh(["scroll", ...target(), "--direction", "down", ...fg]);
    expect(ok1.envelope.ok, JSON.stringify(ok1.envelope.error)).toBe(true);
  });

  it("a window_title rule denying the fixture's second window: a coordinate click into it is refused, the main window still works", async () => {
    const policy = join(state, "deny-second.toml");
    writeFileSync(policy, '[[deny]]\nwindow_title = "deckhand fixture 2"\n');
    const [x, y] = centre(node("Second OK", "push button"));
    const mark = fixture.events().length;
    for (const grant of [[], fg]) {
      const r = await dh(["click", ...target(), "--x", String(x), "--y", String(y), "--policy", policy, ...grant]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
      expect(r.envelope.error!.details).toMatchObject({ reason: "point-outside-target", windowId: second, rule: "user:deny[0]" });
    }
    await fixtureUntouched(mark, (e) => e.event === "clicked" || e.event === "focus");
    const [ox, oy] = centre(node("OK", "push button"));
    const r = await dh(["click", ...target(), "--x", String(ox), "--y", String(oy), "--policy", policy]);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "OK", 5000, mark);
    expect(fixture.events().slice(mark).filter((e) => e.event === "clicked").map((e) => e.control)).toEqual(["OK"]);
  });

  // ------------------------------------------------------------ 2. secure fields
  const keyEvents = (mark: number) => fixture.events().slice(mark).filter((e) => e.event === "key");

  async function focusByClick(name: string): Promise<void> {
    const focusEvents = fixture.events().filter((e) => e.event === "focus");
    const last = focusEvents.at(-1);
    if (last && last.control === name && last.in === true) return; // already there
    const mark = fixture.events().length;
    const [x, y] = centre(node(name));
    await xdotool(desktop, ["mousemove", String(x), String(y), "click", "1"]);
    await fixture.waitFor((e) => e.event === "focus" && e.control === name && e.in === true, 5000, mark);
  }

  async function expectKeysRefused(reason: "focused-secure" | "paste", args: string[]): Promise<void> {
    const mark = fixture.events().length;
    const r = await dh([...args, ...fg]);
    expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
    expect(r.envelope.error!.details).toMatchObject({ rule: "builtin:secure_field", reason });
    expect(JSON.stringify(r.envelope)).not.toContain("hunter2");
    await sleep(QUIET_MS);
    expect(keyEvents(mark), "key events the fixture received").toEqual([]);
    expect(fixture.events().slice(mark).filter((e) => e.event === "text_changed")).toEqual([]);
  }

  it("the Password entry has focus: type-text, press-key and a paste chord aimed at the main window are refused; no key reaches it", async () => {
    await focusByClick("Password");
    await expectKeysRefused("focused-secure", ["type-text", ...target(), "--window-id", String(main), "--text", "hunter2"]);
    await expectKeysRefused("focused-secure", ["press-key", ...target(), "--window-id", String(main), "--key", "a"]);
    await expectKeysRefused("paste", ["hotkey", ...target(), "--window-id", String(main), "--keys", "ctrl+v"]);
    await expectKeysRefused("paste", ["hotkey", ...target(), "--window-id", String(main), "--keys", "shift+Insert"]);
  });

  it("a password entry of the app's OTHER window has focus: keys aimed at the main window are refused", async () => {
    // The main window's own focus widget is a plain field: only the other window's focus is secure.
    await focusByClick("Email");
    await xdotool(desktop, ["windowactivate", "--sync", String(second)]);
    await focusByClick("Second password");
    await expectKeysRefused("focused-secure", ["type-text", ...target(), "--window-id", String(main), "--text", "hunter2"]);
    expect(fixture.events().filter((e) => e.event === "key" && e.redacted === true && e.control === "Second password")).toEqual([]);
  });

  it("a focused password entry pruned from the tree (its container scrolled out of view): refused", async () => {
    const mark = fixture.events().length;
    await python(
      desktop,
      `import pyatspi
def find(n, d=0):
    if d > 40: return None
    try:
        if n.accessibleId == "hidden_password_entry": return n
    except Exception: pass
    for c in n:
        if c is None: continue
        f = find(c, d + 1)
        if f: return f
for a in pyatspi.Registry.getDesktop(0):
    if a and a.name == "${APP}":
        n = find(a)
        n.queryComponent().grabFocus()
        break`,
    );
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Hidden password" && e.in === true, 5000, mark);
    // The tree deckhand reads does not show it...
    const st = await ok(desktop, ["get-app-state", ...target(), "--window-id", String(main), "--no-screenshot"], { stateDir: state });
    expect(st.snapshot.elements.some((e: { title: string }) => e.title === "Hidden password")).toBe(false);
    // ...the focus query does.
    await expectKeysRefused("focused-secure", ["type-text", ...target(), "--window-id", String(main), "--text", "hunter2"]);
  });

  it("a middle-button click over the Password entry (another field focused) is refused as a paste; a left click on it still focuses it", async () => {
    await focusByClick("Email");
    const [x, y] = centre(node("Password"));
    const mark = fixture.events().length;
    const r = await dh(["click", ...target(), "--x", String(x), "--y", String(y), "--button", "middle", ...fg]);
    expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("POLICY_DENIED");
    expect(r.envelope.error!.details).toMatchObject({ rule: "builtin:secure_field", reason: "paste" });
    await fixtureUntouched(mark);
    const l = await dh(["click", ...target(), "--x", String(x), "--y", String(y), ...fg]);
    expect(l.envelope.ok, JSON.stringify(l.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Password" && e.in === true, 5000, mark);
    expect(fixture.events().slice(mark).filter((e) => e.event === "text_changed")).toEqual([]);
  });

  // ------------------------------------------------------------ 3. once secure
  it("a password revealed by the app's Show password toggle stays secure: value never read, not stored, blacked out in the screenshot", async () => {
    const SECRET = "Tr0ub4dor-and-3";
    await focusByClick("Email");
    await focusByClick("Password");
    const mark = fixture.events().length;
    await xdotool(desktop, ["type", "--delay", "5", SECRET]);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000, mark);
    const first = await ok(desktop, ["get-app-state", ...target(), "--window-id", String(main), "--no-screenshot"], { stateDir: state });
    expect(first.snapshot.elements.find((e: { title: string }) => e.title === "Password")).toMatchObject({ secure: true, value: null });
    const show = first.snapshot.elements.find((e: { title: string }) => e.title === "Show password");
    const t = await dh(["click", ...target(), "--element-index", String(show.index)]);
    expect(t.envelope.ok, JSON.stringify(t.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "toggled" && e.control === "Show password" && e.active === true, 5000, mark);
    try {
      // The app now exposes it as plain text: any accessibility client can read it.
      const seen = await python(
        desktop,
        `import pyatspi
def find(n, d=0):
    if d > 40: return None
    try:
        if n.accessibleId == "password_entry": return n
    except Exception: pass
    for c in n:
        if c is None: continue
        f = find(c, d + 1)
        if f: return f
for a in pyatspi.Registry.getDesktop(0):
    if a and a.name == "${APP}":
        n = find(a)
        print(n.getRoleName())
        break`,
      );
      expect(seen.trim()).toBe("text");
      const r = await dh(["get-app-state", ...target(), "--window-id", String(main)]);
      expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
      const s = r.envelope.result;
      const pw = s.snapshot.elements.find((e: { title: string }) => e.title === "Password");
      expect(pw).toMatchObject({ role: "text_field", nativeRole: "text", secure: true, value: null });
      expect(r.stdout).not.toContain(SECRET);
      for (const f of filesUnder(state)) expect(readFileSync(f).includes(SECRET), f).toBe(false);
      // Its pixels are black in the screenshot (the helper no longer sees a password field there).
      const shot = s.screenshot;
      const b = pw.bounds;
      const crop = `${Math.max(1, b.width - 4)}x${Math.max(1, b.height - 4)}+${b.x - shot.origin.x + 2}+${b.y - shot.origin.y + 2}`;
      const max = Number(execFileSync("/usr/bin/convert", [shot.path, "-crop", crop, "+repage", "-format", "%[fx:maxima]", "info:"]).toString());
      expect(max).toBe(0);
      // And keys into it stay refused.
      await expectKeysRefused("focused-secure", ["type-text", ...target(), "--window-id", String(main), "--text", "hunter2"]);
    } finally {
      await dh(["click", ...target(), "--element-index", String(show.index)]);
    }
  });
});
