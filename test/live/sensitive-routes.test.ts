// Issue 10: the security boundary holds against an adversarial agent, on a
// real desktop with the real helper. The fixture opens a "Delete file?"
// dialog whose default button is "Delete" (DECKHAND_FIXTURE_DIALOG=1), with a
// "Reason" entry that activates the default. Routes that reach a sensitive
// control without pressing it directly — the entry's Activate action, Return
// while focus is in the dialog, space after focusing a sensitive button —
// go through the same confirm decision as a click on it. The oracle is the
// fixture's own log (what the app received) and what the confirm hook was
// asked on stdin.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, launchFixture, useDesktop, xdotool, type Fixture, type FixtureEvent } from "./harness.ts";
import { deckhand, newStateDir, requireBuild } from "./deckhand.ts";

const DIALOG_TITLE = "Delete file?";
const MAIN_TITLE = "deckhand fixture";
/** How long we watch for anything arriving after a refusal. */
const QUIET_MS = 700;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fg = ["--allow-foreground"];

describeLive("routes to a sensitive control (fixture dialog, real helper)", () => {
  const desktop = useDesktop();
  let state: string;
  let fixture: Fixture;
  let app: string;
  let dialog: number;
  let main: number;
  let hookScript: string;

  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    fixture = await launchFixture(desktop, { env: { DECKHAND_FIXTURE_DIALOG: "1" } });
    app = `pid:${fixture.pid}`;
    const shown = await fixture.waitFor((e) => e.event === "dialog" && e.change === "shown", 10_000);
    dialog = Number(shown.xid);
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    main = ready.windows.find((w: any) => w.title === MAIN_TITLE).xid;
    hookScript = join(state, "hook.sh");
    writeFileSync(hookScript, '#!/bin/sh\ncat >> "$1"\nexit "${2:-0}"\n');
    chmodSync(hookScript, 0o755);
  }, 60_000);

  afterAll(async () => {
    await fixture?.stop();
  });

  /** A confirm hook that records what it was asked, then allows (or refuses). */
  function hook(name: string, allow = true): { flag: string[]; asked: () => any[] } {
    const log = join(state, `${name}.jsonl`);
    return {
      flag: ["--confirm-cmd", `${hookScript} ${log}${allow ? "" : " 1"}`],
      asked: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []),
    };
  }

  const run = (args: string[], opts: { stdin?: string } = {}) => deckhand(desktop, args, { stateDir: state, ...opts });
  const clicks = (after: number, window?: string): FixtureEvent[] =>
    fixture.events().slice(after).filter((e) => e.event === "clicked" && (window === undefined ? e.window === undefined : e.window === window));
  const keys = (after: number, window: string) => fixture.events().slice(after).filter((e) => e.event === "key" && e.type === "press" && e.window === window);

  async function elementIndex(windowId: number, role: RegExp, title: string): Promise<number> {
    const r = await run(["get-app-state", "--app", app, "--window-id", String(windowId), "--no-screenshot"]);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const el = r.envelope.result.snapshot.elements.find((e: any) => role.test(e.role) && e.title === title);
    if (!el) throw new Error(`no ${title} in\n${r.envelope.result.snapshot.treeText.slice(0, 3000)}`);
    return el.index;
  }

  /** Put keyboard focus on a control through accessibility and wait until the app says so. */
  async function focusOn(windowId: number, role: RegExp, title: string): Promise<void> {
    const mark = fixture.events().length;
    const idx = await elementIndex(windowId, role, title);
    const r = await run(["focus", "--app", app, "--window-id", String(windowId), "--element-index", String(idx)]);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const already = fixture.events().slice(0, mark).filter((e) => e.event === "focus" && e.control === title).at(-1)?.in === true;
    if (!already) await fixture.waitFor((e) => e.event === "focus" && e.control === title && e.in === true, 5000, mark);
    await sleep(200);
  }

  it("1a: the Reason entry's Activate action (which presses the default Delete) is confirmed, with and without the grant", async () => {
    const reason = await elementIndex(dialog, /^text_field$/, "Reason");
    const argv = ["perform-secondary-action", "--app", app, "--window-id", String(dialog), "--element-index", String(reason), "--action", "Activate"];
    const mark = fixture.events().length;
    for (const grant of [[], fg]) {
      const r = await run([...argv, ...grant]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("CONFIRM_REQUIRED");
      expect(r.envelope.error?.details.delivery).toBe("not_dispatched");
    }
    // A click on the entry is its first action, Activate: the same decision.
    const click = await run(["click", "--app", app, "--window-id", String(dialog), "--element-index", String(reason)]);
    expect(click.envelope.error?.code).toBe("CONFIRM_REQUIRED");
    const deny = hook("1a-deny", false);
    expect((await run([...argv, ...deny.flag])).envelope.error?.code).toBe("CONFIRM_DENIED");
    expect(deny.asked()).toHaveLength(1);
    await sleep(QUIET_MS);
    expect(clicks(mark, DIALOG_TITLE), "the dialog's Delete was not pressed").toEqual([]);

    const allow = hook("1a-allow");
    const ok = await run([...argv, ...allow.flag]);
    expect(ok.envelope.ok, JSON.stringify(ok.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "Delete" && e.window === DIALOG_TITLE, 5000, mark);
    expect(clicks(mark, DIALOG_TITLE)).toHaveLength(1);
    expect(allow.asked()).toEqual([
      expect.objectContaining({ command: "perform-secondary-action", action: "secondary", route: "entry-activation", element: expect.objectContaining({ name: "Delete" }), window: expect.objectContaining({ title: DIALOG_TITLE }) }),
    ]);
    expect(allow.asked()[0].reason).toMatch(/"Reason".*default button "Delete"/);
  });

  it("1b: Return (in any spelling) while focus is in the dialog's entry is confirmed; without the grant it is refused", async () => {
    await focusOn(dialog, /^text_field$/, "Reason");
    const mark = fixture.events().length;
    const press = (key: string, extra: string[] = []) => run(["press-key", "--app", app, "--window-id", String(dialog), "--key", key, ...extra]);
    expect((await press("Return")).envelope.error?.code).toBe("FOREGROUND_REQUIRED");
    for (const key of ["Return", "KP_Enter", "0xff0d", "enter"]) {
      const r = await press(key, fg);
      expect(r.envelope.error?.code, `${key}: ${JSON.stringify(r.envelope)}`).toBe("CONFIRM_REQUIRED");
    }
    const typed = await run(["type-text", "--app", app, "--window-id", String(dialog), "--text", "tidy up\n", ...fg]);
    expect(typed.envelope.error?.code).toBe("CONFIRM_REQUIRED");
    await sleep(QUIET_MS);
    expect(keys(mark, DIALOG_TITLE), "no key reached the dialog").toEqual([]);
    expect(clicks(mark, DIALOG_TITLE)).toEqual([]);

    const allow = hook("1b-allow");
    const ok = await press("Return", [...fg, ...allow.flag]);
    expect(ok.envelope.ok, JSON.stringify(ok.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "Delete" && e.window === DIALOG_TITLE, 5000, mark);
    expect(keys(mark, DIALOG_TITLE).map((e) => e.keyval)).toEqual(["Return"]);
    expect(allow.asked()).toEqual([expect.objectContaining({ command: "press-key", action: "press_key", route: "default-button", keys: ["Return"], element: expect.objectContaining({ name: "Delete" }) })]);
    expect(allow.asked()[0].reason).toMatch(/Return while focus is in "Delete file\?", whose default button is "Delete"/);
  });

  it("1b: focus-then-space on the main window's Delete button: the focus step runs, the space is confirmed", async () => {
    const del = await elementIndex(main, /button/, "Delete");
    const mark = fixture.events().length;
    const program = JSON.stringify({ app, windowId: main, steps: [{ action: "focus", elementIndex: del }, { action: "wait", ms: 300 }, { action: "press-key", key: "space" }], observe: false });
    const r = await run(["run", ...fg], { stdin: program });
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error?.code).toBe("CONFIRM_REQUIRED");
    const receipts = (r.envelope.error?.details as any).receipts;
    expect(receipts.map((s: any) => s.status)).toEqual(["completed", "completed", "failed"]);
    expect(receipts[2].error.code).toBe("CONFIRM_REQUIRED");
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Delete" && e.in === true, 5000, mark);
    await sleep(QUIET_MS);
    expect(clicks(mark), "the main Delete was not pressed").toEqual([]);
    expect(keys(mark, MAIN_TITLE)).toEqual([]);

    const allow = hook("1b-space");
    const ok = await run(["press-key", "--app", app, "--window-id", String(main), "--key", "space", ...fg, ...allow.flag]);
    expect(ok.envelope.ok, JSON.stringify(ok.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "Delete" && e.window === undefined, 5000, mark);
    expect(allow.asked()).toEqual([expect.objectContaining({ route: "focused", keys: ["space"], element: expect.objectContaining({ name: "Delete" }) })]);
  });

  it("1b: Return into the main window while another of the app's windows has focus: the focus activation restores (Delete) cannot be read first, so it is confirmed", async () => {
    await focusOn(main, /button/, "Delete");
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    const second = ready.windows.find((w: any) => w.title === "deckhand fixture 2").xid;
    await xdotool(desktop, ["windowactivate", "--sync", String(second)]);
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Delete" && e.in === false, 5000);
    const mark = fixture.events().length;
    const r = await run(["press-key", "--app", app, "--window-id", String(main), "--key", "Return", ...fg]);
    expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("CONFIRM_REQUIRED");
    await sleep(QUIET_MS);
    expect(clicks(mark)).toEqual([]);
    expect(fixture.events().slice(mark).filter((e) => e.event === "key")).toEqual([]);

    // Allowed, the guard activates the main window, GTK gives the focus back to Delete, and Return presses it.
    const allow = hook("1b-restored");
    const ok = await run(["press-key", "--app", app, "--window-id", String(main), "--key", "Return", ...fg, ...allow.flag]);
    expect(ok.envelope.ok, JSON.stringify(ok.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "Delete" && e.window === undefined, 5000, mark);
    expect(allow.asked()).toEqual([expect.objectContaining({ route: "unknown-focus", element: expect.objectContaining({ name: "Delete" }) })]);
  });

  it("1c: a shift-click at a point over the main Delete button is confirmed like a click on it", async () => {
    const st = await run(["get-app-state", "--app", app, "--window-id", String(main), "--no-screenshot"]);
    const del = st.envelope.result.snapshot.elements.find((e: any) => /button/.test(e.role) && e.title === "Delete");
    const x = del.bounds.x + Math.floor(del.bounds.width / 2);
    const y = del.bounds.y + Math.floor(del.bounds.height / 2);
    const mark = fixture.events().length;
    for (const extra of [["--modifiers", "shift"], ["--count", "2"]]) {
      const r = await run(["click", "--app", app, "--window-id", String(main), "--x", String(x), "--y", String(y), ...extra, ...fg]);
      expect(r.envelope.error?.code, JSON.stringify(r.envelope)).toBe("CONFIRM_REQUIRED");
    }
    await sleep(QUIET_MS);
    expect(clicks(mark)).toEqual([]);
  });

  it("2: a secret set into a value element (which the helper cannot parse) is not echoed in the error", async () => {
    const level = await elementIndex(main, /slider|scale/, "Level");
    const secret = "S3cret-live-passphrase";
    const r = await run(["set-value", "--app", app, "--window-id", String(main), "--element-index", String(level), "--value-stdin"], { stdin: secret });
    expect(r.envelope.ok).toBe(false);
    // The helper no longer echoes the text it could not parse; deckhand would redact it if it did (integration secrets tests).
    expect(r.envelope.error?.message).toMatch(/not a number/);
    for (const piece of [secret, secret.slice(0, 9), secret.slice(0, 5)]) {
      expect(r.stdout, piece).not.toContain(piece);
      expect(r.stderr, piece).not.toContain(piece);
    }
  });
});
