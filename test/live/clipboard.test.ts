// The clipboard (issue 13) against real clipboard consumers and producers on
// the live desktop: xclip reads what `clipboard set` put there after deckhand
// exited, `clipboard get` reads what xclip (or an INCR owner) put there, the
// primary selection too; `paste` goes into the GTK3 fixture's Name entry and
// into real apps (FeatherPad, Qt5; Mousepad, GTK3), read back through the
// tree, with the previous clipboard restored; refusals read no text and
// touch nothing. Rows: test/live/matrix/rows.ts (clipboard.*).
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { alivePid, desktopEnv, describeLive, FIXTURE_APP, GTK4_FIXTURE, launchApp, launchAppTree, launchFixture, launchFixtureScript, SYSTEM_PYTHON, useDesktop, waitUntil, type Fixture, type TreeApp, type App } from "./harness.ts";
import { deckhand, newStateDir, requireBuild, Serve, type CliRun } from "./deckhand.ts";
import { proveOracles, QUIET_MS, since } from "./matrix/oracles.ts";
import { metric, record } from "./matrix/results.ts";
import { ROWS } from "./matrix/rows.ts";
import { waitAccessible } from "./matrix/toolkit.ts";
import { startWebFixture, type WebFixture } from "../fixtures/web/server.ts";
import { browserProfile, CHROMIUM_FLAGS, FIREFOX_ENV, FIREFOX_FLAGS, libreOfficeProfile, sofficeArgv, writerDocument } from "./app-profiles.ts";

const FILE = "clipboard.test.ts";
const OWNER_SCRIPT = join(FIXTURE_APP, "..", "selection_owner.py");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ENTRY = /^text_(?:field|area)$/;

describeLive("clipboard (issue 13)", () => {
  const desktop = useDesktop();
  let stateDir: string;
  let bg: Serve; // --confirm-cmd /bin/true: set is allowed
  let fg: Serve; // and --allow-foreground: paste
  let fixture: Fixture;
  let mainWindow: number;
  /** Processes this file started that may own a selection: killed by pid at the end. */
  const started: ChildProcess[] = [];
  const ownerPids = new Set<number>();
  /** Real apps and fixtures the paste rows start, and their temporary profiles: stopped and removed in afterAll whatever happened. */
  const realApps: { stop(): Promise<void> }[] = [];
  const scratch: string[] = [];

  const env = () => desktopEnv(desktop);
  /** What xclip reads from a selection; null when nothing owns it (or it offers no text). */
  const xclipOut = (selection = "clipboard"): string | null => {
    try {
      return execFileSync("xclip", ["-o", "-selection", selection], { env: env(), timeout: 5000, stdio: ["ignore", "pipe", "ignore"] }).toString();
    } catch {
      return null;
    }
  };
  /** xclip -i in the foreground (-quiet), so its pid is ours to kill; waits until it owns the selection. */
  const xclipIn = async (text: string, selection = "clipboard"): Promise<void> => {
    const child = spawn("xclip", ["-quiet", "-i", "-selection", selection], { env: env(), stdio: ["pipe", "ignore", "ignore"] });
    started.push(child);
    child.stdin!.end(text);
    await waitUntil(`xclip owning ${selection}`, 5000, () => xclipOut(selection) === text);
  };
  /** The logging owner (test/fixtures/apps/selection_owner.py): its log lines. */
  const ownerWith = async (text: string, args: string[]): Promise<() => any[]> => {
    const log = join(desktop.root, `owner-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.jsonl`);
    const child = spawn(SYSTEM_PYTHON, [OWNER_SCRIPT, ...args], { env: { ...env(), DECKHAND_FIXTURE_LOG: log }, stdio: ["pipe", "ignore", "inherit"] });
    started.push(child);
    child.stdin!.end(text);
    const lines = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
    await waitUntil("the selection owner to be ready", 10_000, () => lines().some((l) => l.event === "ready"));
    return lines;
  };
  const cli = (args: string[], opts: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliRun> => deckhand(desktop, args, { stateDir, ...opts });
  const timed = async <T>(f: () => Promise<T>): Promise<{ v: T; ms: number }> => {
    const t0 = performance.now();
    const v = await f();
    return { v, ms: Math.round(performance.now() - t0) };
  };
  /** Median ms of n runs (the latency the rows report). */
  const median = async (n: number, f: () => Promise<unknown>): Promise<number> => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) ms.push((await timed(f)).ms);
    return ms.sort((a, b) => a - b)[Math.floor(n / 2)]!;
  };
  const observe = async (s: Serve, pid: number, windowId?: number) => await s.ok("get-app-state", { app: `pid:${pid}`, ...(windowId ? { windowId } : {}), noScreenshot: true, maxNodes: 5000 });
  const findEl = (st: any, role: RegExp, title: string) => {
    const el = st.snapshot.elements.find((e: any) => role.test(e.role) && e.title === title);
    if (!el) throw new Error(`no ${role} "${title}" in:\n${String(st.snapshot.treeText).slice(0, 3000)}`);
    return el;
  };
  const rowIt = (id: string, fn: () => Promise<void>, timeout = 90_000) => {
    const r = ROWS.find((x) => x.id === id);
    if (!r) throw new Error(`no matrix row ${id}`);
    it(`${id}: ${r.action} -> ${r.expect}`, () => record(id, FILE, fn), timeout);
  };
  /** Owner processes of ours (deckhand-helper-linux --own-selection) on this display. */
  const ourOwners = (): number[] =>
    readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => {
        try {
          const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8");
          if (!argv.includes("--own-selection")) return false;
          return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`DISPLAY=${desktop.display}`);
        } catch {
          return false;
        }
      });

  beforeAll(async () => {
    requireBuild();
    await proveOracles(desktop);
    stateDir = newStateDir();
    fixture = await launchFixture(desktop);
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    mainWindow = ready.windows.find((w: any) => w.title === "deckhand fixture").xid;
    bg = new Serve(desktop, { stateDir, args: ["--confirm-cmd", "/bin/true"] });
    fg = new Serve(desktop, { stateDir, args: ["--allow-foreground", "--confirm-cmd", "/bin/true"] });
  }, 90_000);
  afterAll(async () => {
    // The real apps the paste rows started (also stopped by each row's finally: this is for a row that timed out).
    for (const a of realApps) await a.stop().catch(() => undefined);
    for (const d of scratch) rmSync(d, { recursive: true, force: true });
    await bg?.close();
    await fg?.close();
    await fixture?.stop();
    for (const c of started) if (c.exitCode === null && c.pid) process.kill(c.pid, "SIGKILL");
    // Our detached owners exit when another client takes the selection; any left over go by pid.
    for (const pid of new Set([...ownerPids, ...ourOwners()])) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  });

  rowIt("clipboard.set.xclip", async () => {
    const text = `set by deckhand ${randomBytes(4).toString("hex")} — ünïcode ✓`;
    const hookLog = join(desktop.root, "hook-set.json");
    const hook = join(desktop.root, "hook-set.sh");
    writeFileSync(hook, `#!/bin/sh\ncat > ${hookLog}\nexit 0\n`, { mode: 0o755 });
    const { v: r, ms } = await timed(() => cli(["clipboard", "set", "--text-stdin", "--confirm-cmd", hook], { stdin: text }));
    metric("clipboard.set.xclip", "cli_set_ms", ms);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const res = r.envelope.result;
    expect(res).toMatchObject({ selection: "clipboard", set: true, bytes: Buffer.byteLength(text) });
    ownerPids.add(res.ownerPid);
    // deckhand (and its helper) are gone: the text is still there, from the detached owner.
    expect(xclipOut()).toBe(text);
    expect(alivePid(res.ownerPid)).toBe(true);
    const raw = readFileSync(`/proc/${res.ownerPid}/stat`, "utf8");
    const stat = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    const [ppid, sid] = [Number(stat[1]), Number(stat[3])];
    expect(sid, "the leader of its own session").toBe(res.ownerPid);
    // Reparented away from the helper that started it (to init or a subreaper).
    expect(ppid === 1 || !readFileSync(`/proc/${ppid}/cmdline`, "utf8").includes("deckhand"), `parent ${ppid}`).toBe(true);
    expect(readFileSync(`/proc/${res.ownerPid}/cmdline`, "utf8")).not.toContain(text);
    const told = readFileSync(hookLog, "utf8");
    expect(JSON.parse(told)).toMatchObject({ command: "clipboard-set", action: "set_clipboard" });
    expect(told).not.toContain(text);
    // serve: the same through a long-running session.
    const s = await timed(() => bg.ok("clipboard-set", { text: `${text} (serve)` }));
    metric("clipboard.set.xclip", "serve_set_ms", s.ms);
    ownerPids.add(s.v.ownerPid);
    expect(xclipOut()).toBe(`${text} (serve)`);
    // The earlier owner saw SelectionClear and exited.
    await waitUntil("the replaced owner to exit", 3000, () => !alivePid(res.ownerPid));
    metric("clipboard.set.xclip", "serve_set_median_ms", await median(5, async () => ownerPids.add((await bg.ok("clipboard-set", { text: "again" })).ownerPid)));
    metric("clipboard.set.xclip", "cli_set_median_ms", await median(3, async () => expect((await cli(["clipboard", "set", "--text", "again", "--confirm-cmd", "/bin/true"])).envelope.ok).toBe(true)));
    expect(xclipOut()).toBe("again");
  });

  rowIt("clipboard.get.xclip", async () => {
    const text = `from xclip ${randomBytes(4).toString("hex")}\nsecond line`;
    await xclipIn(text);
    const { v: r, ms } = await timed(() => cli(["clipboard", "get"]));
    metric("clipboard.get.xclip", "cli_get_ms", ms);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    expect(r.envelope.result).toMatchObject({ selection: "clipboard", text, bytes: Buffer.byteLength(text), truncated: false });
    const s = await timed(() => bg.ok("clipboard-get", {}));
    metric("clipboard.get.xclip", "serve_get_ms", s.ms);
    expect(s.v.text).toBe(text);
    metric("clipboard.get.xclip", "serve_get_median_ms", await median(5, () => bg.ok("clipboard-get", {})));
    metric("clipboard.get.xclip", "cli_get_median_ms", await median(3, async () => expect((await cli(["clipboard", "get"])).envelope.result.text).toBe(text)));
    const audit = readFileSync(join(stateDir, "audit.jsonl"), "utf8");
    expect(audit).toContain('"command":"clipboard-get"');
    expect(audit).not.toContain("from xclip");
  });

  rowIt("clipboard.get.incr", async () => {
    const text = Array.from({ length: 64 * 1024 / 16 }, (_, i) => `line ${String(i).padStart(10, "0")}\n`).join("");
    expect(text.length).toBe(64 * 1024);
    const log = await ownerWith(text, ["--incr", "4000"]);
    const r = await bg.ok("clipboard-get", { maxBytes: 1024 * 1024 });
    expect(r.bytes).toBe(text.length);
    expect(r.text === text, `got ${r.text?.length} chars`).toBe(true);
    expect(log().some((l) => l.event === "incr_done")).toBe(true);
    const cut = await bg.ok("clipboard-get", { maxBytes: 100 });
    expect(cut).toMatchObject({ text: text.slice(0, 100), truncated: true });
  });

  rowIt("clipboard.primary", async () => {
    await xclipIn("clipboard stays");
    const text = `primary ${randomBytes(4).toString("hex")}`;
    const r = await bg.ok("clipboard-set", { selection: "primary", text });
    ownerPids.add(r.ownerPid);
    expect(xclipOut("primary")).toBe(text);
    await xclipIn("from xclip primary", "primary");
    expect((await bg.ok("clipboard-get", { selection: "primary" })).text).toBe("from xclip primary");
    expect(xclipOut("clipboard")).toBe("clipboard stays");
  });

  rowIt("clipboard.paste.fixture", async () => {
    await xclipIn("previous clipboard");
    const st = await observe(fg, fixture.pid, mainWindow);
    const name = findEl(st, ENTRY, "Name");
    const text = `pasted ${randomBytes(3).toString("hex")}`;
    const mark = fixture.events().length;
    const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${fixture.pid}`, elementIndex: name.index, text }));
    metric("clipboard.paste.fixture", "serve_paste_ms", ms);
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true }, cleanup: { keys_released: true } });
    expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
    expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && String(e.text).includes(text), 5000, mark);
    await sleep(QUIET_MS);
    const changed = since(fixture, mark).filter((e) => e.event === "text_changed");
    expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
    expect(xclipOut()).toBe("previous clipboard");
    // The one-shot CLI too (its own helper, focus guard, restore).
    const again = `${text}!`;
    const c = await timed(() => cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(name.index), "--text", again, "--allow-foreground"]));
    metric("clipboard.paste.fixture", "cli_paste_ms", c.ms);
    expect(c.v.envelope.ok, JSON.stringify(c.v.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && String(e.text).includes(again), 5000, mark);
    expect(xclipOut()).toBe("previous clipboard");
    let n = 0;
    metric("clipboard.paste.fixture", "serve_paste_median_ms", await median(5, async () => expect((await fg.request("paste", { app: `pid:${fixture.pid}`, elementIndex: name.index, text: `m${n++}` })).ok).toBe(true)));
    metric("clipboard.paste.fixture", "serve_paste_no_element_median_ms", await median(5, async () => expect((await fg.request("paste", { app: `pid:${fixture.pid}`, text: `e${n++}` })).ok).toBe(true)));
    metric("clipboard.paste.fixture", "cli_paste_median_ms", await median(3, async () => expect((await cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(name.index), "--text", `c${n++}`, "--allow-foreground"])).envelope.ok).toBe(true)));
    expect(xclipOut()).toBe("previous clipboard");
  });

  rowIt(
    "clipboard.paste.featherpad",
    async () => {
      let app: TreeApp | undefined;
      try {
        app = await launchAppTree(desktop, ["/usr/bin/featherpad", "--standalone"], { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 60_000 });
        await waitAccessible(bg, app.pid);
        // An empty clipboard before.
        await bg.ok("clipboard-set", { clear: true });
        expect(xclipOut()).toBeNull();
        const editor = async () => {
          const st = await observe(fg, app!.pid, app!.windows[0]);
          return st.snapshot.elements.filter((e: any) => ENTRY.test(e.role)).sort((a: any, b: any) => b.bounds.width * b.bounds.height - a.bounds.width * a.bounds.height)[0];
        };
        const el = await editor();
        expect(el, "featherpad's editor").toBeDefined();
        const text = `qt paste ${randomBytes(3).toString("hex")}`;
        const r = await fg.request("paste", { app: `pid:${app.pid}`, elementIndex: el.index, text });
        if (!alivePid(app.pid)) throw new Error(`featherpad died during paste; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result.paste).toMatchObject({ restored: "cleared", chars: text.length });
        await waitUntil("the pasted text in featherpad's editor", 5000, async () => String((await editor())?.value ?? "").includes(text));
        expect(xclipOut()).toBeNull();
      } finally {
        await app?.stop();
      }
    },
    150_000,
  );

  rowIt(
    "clipboard.paste.mousepad",
    async () => {
      let app: App | undefined;
      try {
        app = await launchApp(desktop, ["/usr/bin/mousepad", "--disable-server"]);
        await waitAccessible(bg, app.pid);
        const prev = `before mousepad ${randomBytes(3).toString("hex")}`;
        ownerPids.add((await bg.ok("clipboard-set", { text: prev })).ownerPid);
        const doc = async () => {
          const st = await observe(fg, app!.pid, app!.windows[0]);
          return st.snapshot.elements.filter((e: any) => e.role === "text_area" || ENTRY.test(e.role)).sort((a: any, b: any) => (b.bounds?.width ?? 0) * (b.bounds?.height ?? 0) - (a.bounds?.width ?? 0) * (a.bounds?.height ?? 0))[0];
        };
        const el = await doc();
        expect(el, "mousepad's document").toBeDefined();
        const text = `gtk paste ${randomBytes(3).toString("hex")}`;
        const r = await fg.request("paste", { app: `pid:${app.pid}`, elementIndex: el.index, text });
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result.paste.restored).toBe("text");
        await waitUntil("the pasted text in mousepad's document", 5000, async () => String((await doc())?.value ?? "").includes(text));
        expect(xclipOut()).toBe(prev);
      } finally {
        await app?.stop();
      }
    },
    120_000,
  );

  rowIt("clipboard.refuse.secure-focus", async () => {
    const log = await ownerWith("never read", []);
    const st = await observe(fg, fixture.pid, mainWindow);
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    await fg.ok("focus", { app: `pid:${fixture.pid}`, elementIndex: pw.index });
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Password" && e.in === true, 5000);
    const r = await cli(["clipboard", "get"]);
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "secure-focus" } });
    expect(r.stdout + r.stderr).not.toContain("never read");
    const asked = log().filter((l) => l.event === "request").map((l) => l.target);
    expect(asked.length).toBeGreaterThan(0);
    expect(new Set(asked)).toEqual(new Set(["TARGETS"]));
    // Focus back on Name for the rows after.
    await fg.ok("focus", { app: `pid:${fixture.pid}`, elementIndex: findEl(st, ENTRY, "Name").index });
  });

  rowIt("clipboard.refuse.secret-hint", async () => {
    const log = await ownerWith("hunter2-from-a-password-manager", ["--secret"]);
    const r = await bg.request("clipboard-get", {});
    expect(r.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "secret-hint" } });
    expect(JSON.stringify(r)).not.toContain("hunter2");
    expect(new Set(log().filter((l) => l.event === "request").map((l) => l.target))).toEqual(new Set(["TARGETS"]));
  });

  rowIt("clipboard.refuse.paste-secure", async () => {
    await xclipIn("unchanged");
    const st = await observe(fg, fixture.pid, mainWindow);
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    const mark = fixture.events().length;
    const r = await fg.request("paste", { app: `pid:${fixture.pid}`, elementIndex: pw.index, text: "hunter2" });
    expect(r.error).toMatchObject({ code: "POLICY_DENIED", details: { delivery: "not_dispatched" } });
    await sleep(QUIET_MS);
    expect(since(fixture, mark)).toEqual([]);
    expect(xclipOut()).toBe("unchanged");
  });

  rowIt("clipboard.refuse.confirm-required", async () => {
    await xclipIn("kept");
    const r = await cli(["clipboard", "set", "--text", "not set"]);
    expect(r.envelope.error?.code).toBe("CONFIRM_REQUIRED");
    expect(xclipOut()).toBe("kept");
  });

  rowIt("clipboard.secrets", async () => {
    const marker = `MARKER-${randomBytes(8).toString("hex")}`;
    const runs: CliRun[] = [];
    runs.push(await cli(["clipboard", "set", "--text-stdin", "--confirm-cmd", "/bin/true"], { stdin: marker }));
    expect(runs[0]!.envelope.ok, JSON.stringify(runs[0]!.envelope.error)).toBe(true);
    ownerPids.add(runs[0]!.envelope.result.ownerPid);
    expect(xclipOut()).toBe(marker);
    const owners = ourOwners();
    const st = await observe(fg, fixture.pid, mainWindow);
    const name = findEl(st, ENTRY, "Name");
    const mark = fixture.events().length;
    runs.push(await cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(name.index), "--text-stdin", "--allow-foreground"], { stdin: `${marker}-paste` }));
    expect(runs[1]!.envelope.ok, JSON.stringify(runs[1]!.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "text_changed" && String(e.text).includes(`${marker}-paste`), 5000, mark);
    // A refused get (secret hint) and a failing paste (into the password field) carry it nowhere either.
    runs.push(await cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(st.snapshot.elements.find((e: any) => e.secure).index), "--text-stdin", "--allow-foreground"], { stdin: marker }));
    expect(runs[2]!.envelope.error?.code).toBe("POLICY_DENIED");
    for (const r of runs) {
      expect(r.stdout).not.toContain(marker);
      expect(r.stderr).not.toContain(marker);
    }
    expect(bg.stderr + fg.stderr).not.toContain(marker);
    const files = readdirSync(stateDir, { recursive: true }).map(String);
    for (const f of files) {
      const p = join(stateDir, f);
      try {
        expect(readFileSync(p).includes(marker), p).toBe(false);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EISDIR") throw err;
      }
    }
    for (const pid of new Set([...owners, ...ourOwners()])) {
      try {
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(marker);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    }
  });

  // paste into the other toolkits. Each row starts its app, sets a previous
  // clipboard with xclip, pastes into one control and checks what the app
  // itself received, then that the previous clipboard is back.

  /** Starts a browser on the web fixture; the form's Name input with bounds, from a fresh observation. */
  async function browserOnForm(kind: "chromium" | "firefox"): Promise<{ app: TreeApp; web: WebFixture; name: () => Promise<any> }> {
    const web = await startWebFixture();
    realApps.push({ stop: () => web.close() });
    const profile = browserProfile(kind, "deckhand-clipboard-");
    scratch.push(profile);
    const argv = kind === "chromium" ? ["/usr/bin/chromium", "--force-renderer-accessibility", ...CHROMIUM_FLAGS(profile), web.url] : ["/usr/bin/firefox-esr", ...FIREFOX_FLAGS(profile), web.url];
    const app = await launchAppTree(desktop, argv, { env: kind === "firefox" ? FIREFOX_ENV : {}, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
    realApps.push(app);
    await web.waitFor((e) => e.event === "ready", 60_000);
    await waitAccessible(bg, app.pid);
    let last: any;
    const find = (timeoutMs: number) =>
      waitUntil(`${kind}'s Name input in the tree`, timeoutMs, async () => {
        last = await observe(fg, app.pid, app.windows[0]);
        return last.snapshot.elements.find((e: any) => ENTRY.test(e.role) && e.title === "Name" && e.bounds);
      });
    const name = () =>
      find(30_000).catch((err) => {
        throw new Error(`${(err as Error).message}; the last observation:\n${String(last?.snapshot.treeText).slice(0, 3000)}`);
      });
    return { app, web, name };
  }

  // Not a row for Firefox: measured, 4 of ~10 Firefox starts exposed the
  // form's labels without their controls (label "Name" with no entry child,
  // the same for the checkbox and password), for as long as the row waited
  // (45 s) and after a reload; the other starts pasted fine. Until that is
  // understood (deckhand's walk does not descend a node the toolkit does not
  // report SHOWING; whether Firefox reports stale states there is unverified),
  // a Firefox paste row would be flaky.
  for (const kind of ["chromium"] as const) {
    rowIt(
      `clipboard.paste.${kind}`,
      async () => {
        let started: Awaited<ReturnType<typeof browserOnForm>> | undefined;
        try {
          started = await browserOnForm(kind);
          const { app, web } = started;
          const el = await started.name();
          const prev = `before ${kind} ${randomBytes(3).toString("hex")}`;
          await xclipIn(prev);
          const text = `${kind} paste ${randomBytes(3).toString("hex")} — ü ✓`;
          const mark = web.events().length;
          const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${app.pid}`, elementIndex: el.index, text }));
          metric(`clipboard.paste.${kind}`, "serve_paste_ms", ms);
          if (!alivePid(app.pid)) throw new Error(`${kind} died during paste; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
          expect(r.ok, JSON.stringify(r.error)).toBe(true);
          expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true }, cleanup: { keys_released: true } });
          expect(r.result.paste).toMatchObject({ chars: [...text].length, restored: "text" });
          expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
          metric(`clipboard.paste.${kind}`, "served", r.result.paste.served);
          await web.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === text, 10_000, mark);
          await sleep(QUIET_MS);
          const changed = web.events().slice(mark).filter((e) => e.event === "text_changed");
          expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
          expect(changed.at(-1)!.text).toBe(text);
          expect(xclipOut()).toBe(prev);
          console.log(`[clipboard] paste into ${kind}: ${ms} ms, served ${r.result.paste.served}, ${changed.length} input event(s)`);
        } finally {
          await started?.app.stop();
          await started?.web.close();
        }
      },
      180_000,
    );
  }

  rowIt(
    "clipboard.paste.writer",
    async () => {
      let app: TreeApp | undefined;
      try {
        const profile = libreOfficeProfile("deckhand-clipboard-lo-");
        const dir = mkdtempSync(join(tmpdir(), "deckhand-clipboard-writer-"));
        scratch.push(profile, dir);
        const first = "First paragraph of the document.";
        const doc = writerDocument(dir, "deckhand-paste", [first, "Second paragraph."]);
        app = await launchAppTree(desktop, sofficeArgv("--writer", profile, doc), { env: { SAL_USE_VCLPLUGIN: "gtk3" }, timeoutMs: 120_000, titleMatches: /deckhand-paste/ });
        realApps.push(app);
        await waitAccessible(bg, app.pid);
        const paragraph = () =>
          waitUntil("Writer's first paragraph in the tree", 60_000, async () => {
            const st = await observe(fg, app!.pid, app!.windows[0]);
            return st.snapshot.elements.find((e: any) => e.nativeRole === "paragraph" && String(e.value ?? e.title ?? "").includes("First paragraph"));
          });
        const el = await paragraph();
        const prev = `before writer ${randomBytes(3).toString("hex")}`;
        await xclipIn(prev);
        const text = `writer paste ${randomBytes(3).toString("hex")}`;
        const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${app!.pid}`, elementIndex: el.index, text }));
        metric("clipboard.paste.writer", "serve_paste_ms", ms);
        if (!alivePid(app.pid)) throw new Error(`soffice.bin died during paste; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true } });
        expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
        expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
        metric("clipboard.paste.writer", "served", r.result.paste.served);
        const after = await waitUntil("the pasted text in the first paragraph", 10_000, async () => {
          const p = await paragraph();
          return String(p.value ?? "").includes(text) ? p : undefined;
        });
        expect(String(after.value)).toContain(first);
        expect(xclipOut()).toBe(prev);
        expect(alivePid(app.pid)).toBe(true);
        console.log(`[clipboard] paste into writer: ${ms} ms, served ${r.result.paste.served}; the paragraph reads ${JSON.stringify(after.value)}`);
      } finally {
        await app?.stop();
      }
    },
    240_000,
  );

  rowIt(
    "clipboard.paste.gtk4",
    async () => {
      let gtk4: Fixture | undefined;
      try {
        gtk4 = await launchFixtureScript(desktop, GTK4_FIXTURE, { timeoutMs: 60_000 });
        realApps.push(gtk4);
        await waitAccessible(bg, gtk4.pid);
        const st = await observe(fg, gtk4.pid);
        const name = findEl(st, ENTRY, "Name");
        const prev = `before gtk4 ${randomBytes(3).toString("hex")}`;
        await xclipIn(prev);
        const text = `gtk4 paste ${randomBytes(3).toString("hex")}`;
        // With --element-index: the paste step focuses the entry through
        // Component.GrabFocus, which GTK 4.8 answers NotSupported. The step
        // stops there: nothing pasted, the clipboard untouched.
        let mark = gtk4.events().length;
        const refused = await fg.request("paste", { app: `pid:${gtk4.pid}`, elementIndex: name.index, text });
        console.log(`[clipboard] paste --element-index into the gtk4 fixture: ${JSON.stringify(refused.ok ? refused.result : refused.error)}`);
        expect(refused.ok).toBe(false);
        expect(refused.error).toMatchObject({ code: "ACTION_FAILED", details: { dbus_error: "org.freedesktop.DBus.Error.NotSupported" } });
        await sleep(QUIET_MS);
        expect(since(gtk4, mark).filter((e) => e.event === "text_changed")).toEqual([]);
        expect(xclipOut()).toBe(prev);
        // So the entry is focused the way a user does it (a granted click),
        // and the paste goes to the focused control (no element: the focus
        // check refuses a secure one; no read-back, GTK 4.8's entry reads "").
        const x = name.bounds.x + Math.floor(name.bounds.width / 2);
        const y = name.bounds.y + Math.floor(name.bounds.height / 2);
        const c = await fg.request("click", { app: `pid:${gtk4.pid}`, x, y });
        expect(c.ok, JSON.stringify(c.error)).toBe(true);
        await gtk4.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000, mark);
        mark = gtk4.events().length;
        const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${gtk4!.pid}`, text }));
        metric("clipboard.paste.gtk4", "serve_paste_ms", ms);
        console.log(`[clipboard] paste into the focused gtk4 entry: ${ms} ms, ${JSON.stringify(r.ok ? r.result.paste : r.error)}`);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: null }, cleanup: { keys_released: true } });
        expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
        expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
        // The fixture itself got exactly the text, in Name and nowhere else.
        await gtk4.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === text, 5000, mark);
        await sleep(QUIET_MS);
        const changed = since(gtk4, mark).filter((e) => e.event === "text_changed");
        expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
        expect(changed.at(-1)!.text).toBe(text);
        expect(xclipOut()).toBe(prev);
      } finally {
        await gtk4?.stop();
      }
    },
    120_000,
  );
});
