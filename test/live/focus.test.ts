// Issue 9.1: keys never reach another window. Under the operator's
// foreground grant, keyboard input addressed to one app goes to that app's
// window or nowhere: a focused (policy-denied) terminal, another app that
// holds focus, or a window that steals focus mid-way never receives it.
// Oracles: the terminal's own byte log, each fixture's key log, the X focus.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, launchApp, launchFixture, python, useDesktop, waitUntil, xdotool, type App, type Fixture } from "./harness.ts";
import { AdapterServe, deckhand, newStateDir, requireBuild } from "./deckhand.ts";

const TITLE = "deckhand fixture";

/** Every key currently down on the X server (XQueryKeymap): [] when all are released. */
async function keysDown(desktop: { env: Record<string, string>; display: string }): Promise<number[]> {
  const out = await python(desktop, "from Xlib import display\nd=display.Display()\nkm=d.query_keymap()\nprint([i*8+b for i,v in enumerate(km) for b in range(8) if v & (1<<b)])");
  return JSON.parse(out.trim()) as number[];
}

/** The fixture's main window (X id), from its "ready" record. */
function mainWindow(f: Fixture): string {
  const ready = f.events().find((e) => e.event === "ready") as { windows: { title: string; xid: number }[] } | undefined;
  const w = ready?.windows.find((x) => x.title === TITLE);
  if (!w) throw new Error("the fixture has not announced its main window");
  return String(w.xid);
}

async function focusedPid(desktop: { env: Record<string, string>; display: string }): Promise<number> {
  return Number(await xdotool(desktop, ["getwindowfocus", "getwindowpid"]).catch(() => "-1"));
}

/**
 * The test's precondition: the terminal holds the focus, and still holds it a
 * moment later. The window manager may hand focus back to an earlier window
 * after `windowactivate --sync` returned (seen in CI: a window of the previous
 * test had just closed and the focus went to the fixture), so activate again
 * until the focus stays; this sets the stage and is not what is tested.
 */
async function focusTerminal(desktop: { env: Record<string, string>; display: string }, term: App): Promise<void> {
  await waitUntil("the terminal to keep the focus", 5000, async () => {
    await xdotool(desktop, ["windowactivate", "--sync", String(term.windows[0])]);
    await new Promise((res) => setTimeout(res, 150));
    return (await focusedPid(desktop)) === term.pid;
  });
}

describeLive("keys stay with their target window (focus guard)", () => {
  const desktop = useDesktop();
  let state: string;
  let fixture: Fixture;
  let other: Fixture;
  let term: App;
  let termLog: string;
  const fg = ["--allow-foreground"];

  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    fixture = await launchFixture(desktop);
    other = await launchFixture(desktop);
    termLog = join(desktop.root, `xterm-bytes-${Date.now()}.log`);
    // The terminal writes every byte it receives, raw, to a file: the oracle for "nothing reached it".
    term = await launchApp(desktop, ["/usr/bin/xterm", "-geometry", "60x10+1100+500", "-e", "sh", "-c", `stty raw -echo; exec cat > ${termLog}`]);
    await waitUntil("the terminal's log file", 10_000, () => existsSync(termLog));
  }, 60_000);

  afterAll(async () => {
    await Promise.all([fixture?.stop(), other?.stop(), term?.stop()]);
  });

  const keysIn = (f: Fixture, after: number, window = TITLE) => f.events().slice(after).filter((e) => e.event === "key" && e.type === "press" && e.window === window);

  it("a focused, policy-denied terminal receives nothing: the target is activated and gets the keys", async () => {
    await focusTerminal(desktop, term);
    const before = fixture.events().length;
    const r = await deckhand(desktop, ["type-text", "--app", `pid:${fixture.pid}`, "--window-id", mainWindow(fixture), "--text", "echo pwned", ...fg], { stateDir: state });
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    expect(r.envelope.result.delivery).toBe("submitted");
    // Return on its own, the key that would run a typed command.
    const r2 = await deckhand(desktop, ["press-key", "--app", `pid:${fixture.pid}`, "--window-id", mainWindow(fixture), "--key", "Return", ...fg], { stateDir: state });
    expect(r2.envelope.ok, JSON.stringify(r2.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "key" && e.keyval === "Return", 5000, before);
    expect(keysIn(fixture, before).length).toBe("echo pwned".length + 1);
    expect(readFileSync(termLog, "utf8"), "bytes the terminal received").toBe("");
    expect(await keysDown(desktop)).toEqual([]);
  });

  it("another allowed app holding focus receives nothing", async () => {
    const [otherMain] = (await other.waitFor((e) => e.event === "ready")).windows as { xid: number }[];
    await xdotool(desktop, ["windowactivate", "--sync", String(otherMain!.xid)]);
    expect(await focusedPid(desktop)).toBe(other.pid);
    const beforeA = fixture.events().length;
    const beforeB = other.events().length;
    const r = await deckhand(desktop, ["hotkey", "--app", `pid:${fixture.pid}`, "--window-id", mainWindow(fixture), "--keys", "ctrl+a", ...fg], { stateDir: state });
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const t = await deckhand(desktop, ["type-text", "--app", `pid:${fixture.pid}`, "--window-id", mainWindow(fixture), "--text", "for A", ...fg], { stateDir: state });
    expect(t.envelope.ok, JSON.stringify(t.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "key" && e.keyval === "A", 5000, beforeA);
    expect(keysIn(other, beforeB), "keys the other app received").toEqual([]);
    expect(other.events().slice(beforeB).filter((e) => e.event === "key")).toEqual([]);
    expect(await focusedPid(desktop)).toBe(fixture.pid);
  });

  it("focus stolen mid-way through one type-text: typing stops, keys released, delivery partial with the count sent", async () => {
    const thief = await launchFixture(desktop, { env: { DECKHAND_FIXTURE_STEAL_FOCUS_AFTER: "5" } });
    try {
      // Characters that are not on the keyboard map: each needs a keymap
      // change the app must see, so typing is slow enough for the app's own
      // reaction to the 5th key (raising its other window) to land mid-way.
      const text = "ĀāĂăĄąĆćĈĉĊċČčĎďĐđĒēĔĕĖėĘęĚěĜĝĞğĠġĢģĤĥĦħ"; // 40 characters
      const before = thief.events().length;
      const r = await deckhand(desktop, ["type-text", "--app", `pid:${thief.pid}`, "--window-id", mainWindow(thief), "--text", text, ...fg], { stateDir: state });
      expect(r.envelope.ok, JSON.stringify(r.envelope.result ?? {}).slice(0, 300)).toBe(false);
      expect(r.envelope.error!.code).toBe("FOCUS_MISMATCH");
      expect(r.envelope.error!.details.delivery).toBe("partial");
      const sent = Number(r.envelope.error!.details.chars_sent);
      expect(sent).toBeGreaterThanOrEqual(5);
      expect(sent).toBeLessThan(text.length);
      await thief.waitFor((e) => e.event === "focus-steal", 5000, before);
      // Every key sent reached the thief's own windows (the guard stopped at
      // the next check); none after the stop, none anywhere else.
      await new Promise((res) => setTimeout(res, 300));
      const pressed = thief.events().slice(before).filter((e) => e.event === "key" && e.type === "press");
      expect(pressed.length).toBe(sent);
      expect(await keysDown(desktop)).toEqual([]);
      expect(readFileSync(termLog, "utf8")).toBe("");
    } finally {
      await thief.stop();
    }
  });

  it("focus stolen between the steps of a program: the next keys are refused (activation is asked once per program)", async () => {
    const thief = await launchFixture(desktop, { env: { DECKHAND_FIXTURE_STEAL_FOCUS_AFTER: "5" } });
    try {
      const before = thief.events().length;
      const program = { app: `pid:${thief.pid}`, windowId: Number(mainWindow(thief)), steps: [{ action: "type-text", text: "abcdefgh" }, { action: "wait", ms: 400 }, { action: "type-text", text: "ijklmnop" }] };
      const r = await deckhand(desktop, ["run", ...fg], { stateDir: state, stdin: JSON.stringify(program) });
      // A failed program is ok:false with the failing step's code; the receipts are in the details.
      expect(r.envelope.ok).toBe(false);
      expect(r.envelope.error?.code).toBe("FOCUS_MISMATCH");
      expect(r.envelope.error?.details.step).toBe(2);
      const steps = (r.envelope.error?.details as any).receipts;
      expect(steps[0]).toMatchObject({ status: "completed", charsSent: 8 });
      expect(steps[2]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "FOCUS_MISMATCH" } });
      await thief.waitFor((e) => e.event === "focus-steal", 5000, before);
      const pressed = thief.events().slice(before).filter((e) => e.event === "key" && e.type === "press");
      expect(pressed.length).toBe(8);
      expect(await keysDown(desktop)).toEqual([]);
    } finally {
      await thief.stop();
    }
  });

  for (const vendor of ["anthropic", "openai"] as const) {
    it(`${vendor} adapter: type and key with the terminal focused reach the target only`, async () => {
      await focusTerminal(desktop, term);
      const before = fixture.events().length;
      // A hook that allows: the fixture's main window has Delete and Submit,
      // and when its focus sits in its other window (load decides which is
      // in front), Return is judged both ways and may need a confirmation
      // (by design: sensitive-routes.test.ts). This test is about where keys go.
      const s = new AdapterServe(desktop, state, ["--adapter", vendor, "--app", `pid:${fixture.pid}`, "--allow-foreground", "--confirm-cmd", "/usr/bin/true"]);
      try {
        if (vendor === "anthropic") {
          await s.send({ call: { type: "tool_use", id: "toolu_1", name: "computer", input: { action: "type", text: "ls" } } });
          await s.send({ call: { type: "tool_use", id: "toolu_2", name: "computer", input: { action: "key", text: "Return" } } });
        } else {
          await s.send({ call: { type: "computer_call", call_id: "call_1", action: { type: "type", text: "ls" }, pending_safety_checks: [] } });
          await s.send({ call: { type: "computer_call", call_id: "call_2", action: { type: "keypress", keys: ["ENTER"] }, pending_safety_checks: [] } });
        }
      } finally {
        s.close();
      }
      await fixture.waitFor((e) => e.event === "key" && e.keyval === "Return", 5000, before);
      // The adapter targets the app's front window, whichever of its two that is.
      expect(fixture.events().slice(before).filter((e) => e.event === "key" && e.type === "press").length).toBe(3);
      expect(readFileSync(termLog, "utf8"), "bytes the terminal received").toBe("");
    });
  }

  it("without the grant, keyboard input is refused before anything is sent", async () => {
    await focusTerminal(desktop, term);
    const before = fixture.events().length;
    const r = await deckhand(desktop, ["type-text", "--app", `pid:${fixture.pid}`, "--window-id", mainWindow(fixture), "--text", "x"], { stateDir: state });
    expect(r.envelope.error?.code).toBe("FOREGROUND_REQUIRED");
    expect(keysIn(fixture, before)).toEqual([]);
    expect(readFileSync(termLog, "utf8")).toBe("");
  });
});
