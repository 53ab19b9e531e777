// The browsers' rows on the web fixture: Chromium and Firefox load
// test/fixtures/web/form.html from a loopback server started here, and every
// event the page receives is POSTed back to that server, so the oracle is
// what the page itself saw. Registered on a desk (desk.ts): the X11 run
// (test/live/toolkits-web.test.ts) and the Wayland run
// (test/live/matrix-wayland.test.ts, the browsers as native Wayland clients)
// share them. Rows: rows.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { alivePid, desktopEnv, outputTail, processTree, SYSTEM_PYTHON, waitUntil, type TreeApp } from "../harness.ts";
import { newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { browserArgv, FIREFOX_ENV, writeFirefoxPrefs } from "../app-profiles.ts";
import { nativeBrowserArgv, rowTest, type MatrixDesk } from "./desk.ts";
import { QUIET_MS } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { expectInsideWindow, expectNoHarm, findEl, observeN, observeTimed, waitAccessible } from "./toolkit.ts";

const ENTRY = /^text_(?:field|area)$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Browser {
  id: "chromium" | "firefox";
  argv(url: string, profile: string): string[];
  env: Record<string, string>;
  prepare?(profile: string): void;
}

export const BROWSERS: Browser[] = [
  {
    id: "chromium",
    argv: (url, profile) => browserArgv("chromium", url, profile),
    env: {},
  },
  {
    id: "firefox",
    argv: (url, profile) => browserArgv("firefox", url, profile),
    // GNOME_ACCESSIBILITY=1: Firefox enables its accessibility service at
    // start (it otherwise waits for an AT to ask).
    env: FIREFOX_ENV,
    prepare: writeFirefoxPrefs,
  },
];

const LISTENER = join(import.meta.dirname, "at_listener.py");

/** at_listener.py as the apps' user on this desk, once it listens. */
export async function startListener(desk: MatrixDesk): Promise<ChildProcess> {
  const [cmd, ...args] = desk.asApps([SYSTEM_PYTHON, LISTENER]);
  const child = spawn(cmd!, args, { env: desktopEnv(desk.desktop), stdio: ["ignore", "pipe", "ignore"] });
  const listening = new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("listening") && resolve());
    child.once("exit", (code) => reject(new Error(`at_listener.py exited (${code}) before it listened`)));
    setTimeout(() => reject(new Error("at_listener.py did not listen within 20 s")), 20_000).unref();
  });
  await listening.catch((err) => {
    child.kill();
    throw err;
  });
  return child;
}

/** Registers one browser's rows inside the caller's describe; `file` names the test file in the results. */
export function browserRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string, b: Browser): void {
  let web: WebFixture;
  let browser: TreeApp;
  let fg: Serve;
  let stateDir: string;
  let startFailure: Error | undefined;
  let listener: ChildProcess | undefined;
  const app = () => `pid:${browser.pid}`;
  const obs = (row?: string) => observeTimed(fg, { app: app(), windowId: browser.windows[0] }, row);
  /** An observation in which the form is there (web content's tree arrives after the page). */
  const formObs = (row?: string) => {
    let last: any;
    return waitUntil(`${b.id}'s form in the accessibility tree`, 30_000, async () => {
      const o = await obs(row);
      last = o.st;
      // Present and laid out: right after a load Firefox may list the
      // input before it has extents (bounds null); that is start-up, not a row.
      return o.st.snapshot.elements.some((e: any) => ENTRY.test(e.role) && e.title === "Name" && e.bounds) ? o : undefined;
    }).catch((err) => {
      throw new Error(`${(err as Error).message}; the last observation:\n${String(last?.snapshot.treeText).slice(0, 2500)}`);
    });
  };

  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    web = await startWebFixture();
    const profile = mkdtempSync(join(tmpdir(), `deckhand-${b.id}-profile-`));
    b.prepare?.(profile);
    desk().handOver(profile);
    stateDir = newStateDir();
    fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground"] });
    try {
      // The browser starts with an assistive client already listening, as on a desktop with a screen reader or a
      // deckhand session running (Firefox then hands out almost no cache: its page was missed, 2026-12-03).
      listener = await startListener(desk());
      const argv = nativeBrowserArgv(desk(), b.id, b.argv(web.url, profile));
      browser = await desk().launchAppTree(argv, { env: { ...b.env, ...desk().browser(b.id).env }, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
      await web.waitFor((e) => e.event === "ready", 60_000);
      await waitAccessible(fg, browser.pid);
    } catch (err) {
      // The rows fail with this reason, recorded, rather than being skipped;
      // with what the browser printed, when it got as far as a window.
      startFailure = browser ? new Error(`${(err as Error).message}; its output:\n${outputTail(browser.outputPath)}`) : (err as Error);
    }
  }, 180_000);
  afterAll(async () => {
    await fg?.close();
    await browser?.stop();
    await web?.close();
    listener?.kill();
  }, 30_000);

  const rowIt = rowTest(on, desk, file, 120_000, () => {
    if (startFailure) throw new Error(`${b.id} did not start: ${startFailure.message}`);
  });

  rowIt(`${b.id}.observe`, async () => {
    const { st, ms } = await formObs(`${b.id}.observe`);
    console.log(`[observe] ${b.id}: ${ms} ms, ${st.snapshot.elementCount} elements, truncated ${st.snapshot.truncated}`);
    expectInsideWindow(st, findEl(st, ENTRY, "Name"));
    expectInsideWindow(st, findEl(st, /check/, /Subscribe/));
    expectInsideWindow(st, findEl(st, /button/, "Preview"));
    expect(st.snapshot.elements.some((e: any) => /heading/.test(e.role) && /deckhand web fixture/.test(e.title ?? "")), "the page heading").toBe(true);
  });

  rowIt(`${b.id}.fill-form`, async () => {
    const { st } = await formObs();
    const mark = web.events().length;
    const r = await fg.request("set-value", { app: app(), elementIndex: findEl(st, ENTRY, "Name").index, value: "Ada Lovelace" });
    metric(`${b.id}.fill-form`, "route", String(r.result?.route ?? r.error?.code));
    console.log(`[fill] ${b.id}: ${JSON.stringify(r.ok ? { route: r.result.route, verification: r.result.verification } : r.error)}`);
    if (!r.ok) await sleep(QUIET_MS);
    expect(r.ok, `set-value envelope: ${JSON.stringify(r.error ?? r.result)}; the page saw: ${JSON.stringify(web.events().slice(mark).map((e) => [e.event, e.control, e.in ?? e.text ?? e.keyval]))}`).toBe(true);
    // ok:true means the value is there: a read-back that differs must be a
    // failure (VERIFICATION_FAILED) or must have fallen back to typing.
    expect(r.result.verification?.verified, `set-value said ok with ${JSON.stringify({ route: r.result.route, verification: r.result.verification })}`).toBe(true);
    await web.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === "Ada Lovelace", 10_000, mark);
    await sleep(QUIET_MS);
    const names = web.events().slice(mark).filter((e) => e.event === "text_changed");
    expect(new Set(names.map((e) => e.control))).toEqual(new Set(["Name"]));
    expect(names.at(-1)!.text).toBe("Ada Lovelace");
    const again = await obs();
    expect(findEl(again.st, ENTRY, "Name").value).toBe("Ada Lovelace");
  });

  rowIt(`${b.id}.fg.type-text.focused`, async () => {
    const { st } = await formObs();
    const field = findEl(st, ENTRY, "Name");
    const f = await fg.request("focus", { app: app(), elementIndex: field.index });
    expect(f.ok, `focus: ${JSON.stringify(f.error)}`).toBe(true);
    await web.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 10_000).catch(() => undefined);
    const mark = web.events().length;
    // Replace whatever is there: select all, then type (keys go to the focused field).
    const h = await fg.request("hotkey", { app: app(), keys: ["ctrl+a"] });
    expect(h.ok, `hotkey: ${JSON.stringify(h.error)}`).toBe(true);
    const r = await fg.request("type-text", { app: app(), text: "Grace Hopper" });
    if (!alivePid(browser.pid)) throw new Error(`${b.id} died during type-text; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
    expect(r.ok, `type-text: ${JSON.stringify(r.error)}`).toBe(true);
    expect(r.result.route).toBe("foreground_input");
    await web.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === "Grace Hopper", 10_000, mark).catch((err) => {
      // What the page saw instead, in short: keys pressed and the field's texts.
      const seen = web.events().slice(mark).filter((e) => (e.event === "key" && e.type === "press") || e.event === "text_changed").map((e) => (e.event === "key" ? e.keyval : `[${e.text}]`));
      throw new Error(`${(err as Error).message.split(";")[0]}; the page saw: ${seen.join(" ")}`);
    });
    await sleep(QUIET_MS);
    const changed = web.events().slice(mark).filter((e) => e.event === "text_changed");
    expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
    expect(alivePid(browser.pid), `${b.id} alive after typing`).toBe(true);
  });

  rowIt(`${b.id}.click.button`, async () => {
    const { st } = await formObs();
    const mark = web.events().length;
    const name = String(findEl(st, ENTRY, "Name").value ?? "");
    const r = await fg.request("click", { app: app(), elementIndex: findEl(st, /button/, "Preview").index });
    expect(r.ok, `click envelope: ${JSON.stringify(r.error ?? r.result)}`).toBe(true);
    await web.waitFor((e) => e.event === "clicked" && e.control === "Preview", 10_000, mark);
    await sleep(QUIET_MS);
    const clicks = web.events().slice(mark).filter((e) => e.event === "clicked");
    expect(clicks).toHaveLength(1);
    expect(clicks[0]!.name).toBe(name);
    // The page's own answer, read back from the tree (after the app settled).
    const want = `Result: ${name}`.trim();
    const shows = (st: any) =>
      st.snapshot.elements.some((e: any) => String(e.title ?? "").trim() === want || String(e.value ?? "").trim() === want) || String(st.snapshot.treeText).includes(`"${want}"`);
    let last: any;
    await waitUntil("the page's result in the tree", 10_000, async () => {
      last = (await obs()).st;
      return shows(last);
    }).catch((err) => {
      throw new Error(`${(err as Error).message} ("${want}"); the last observation:\n${String(last?.snapshot.treeText).slice(0, 3000)}`);
    });
  });

  rowIt(`${b.id}.refuse.secure-field`, async () => {
    const { st } = await formObs();
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    expect(pw, `a secure element (the password input) in:\n${st.snapshot.treeText.slice(0, 3000)}`).toBeDefined();
    const mark = web.events().length;
    const r = await fg.request("set-value", { app: app(), elementIndex: pw.index, value: "hunter2" });
    expect(r.error?.code).toBe("POLICY_DENIED");
    expect(JSON.stringify(r)).not.toContain("hunter2");
    await sleep(QUIET_MS);
    expect(web.events().slice(mark).filter((e) => e.control === "Password" && e.event !== "focus")).toEqual([]);
  });

  rowIt(`${b.id}.harm`, async () => {
    await expectNoHarm(`${b.id}.harm`, browser.pid, () => processTree(browser.rootPid), async () => {
      const times = await observeN(fg, { app: app(), windowId: browser.windows[0] }, 5, `${b.id}.harm`);
      console.log(`[observe] ${b.id} x5: ${times.join(", ")} ms`);
      const { st } = await formObs();
      // The actions are attempted; whether they succeed is the other rows'
      // business: this row is about what they cost the browser.
      await fg.request("set-value", { app: app(), elementIndex: findEl(st, ENTRY, "Name").index, value: "harm check" });
      await fg.request("click", { app: app(), elementIndex: findEl(st, /button/, "Preview").index });
    });
  });
}
