// The clipboard on Wayland (issue 19): the X11 rows' cases (test/live/clipboard.test.ts)
// with Wayland's oracles. wl-copy and wl-paste (wl-clipboard, wlr-data-control
// as the helper's clipboard, but another implementation) put and read the
// selection; test/fixtures/wayland/data_control_owner.py owns it and logs every
// request, the proof that a refusal read no text. The GTK3 fixture, Mousepad and
// FeatherPad are native Wayland clients; they read a paste through their own
// wl_data_device. Rows: rows.ts wayland.clipboard.*.
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, expect } from "vitest";
import { deckhand, newStateDir, requireBuild, Serve, type CliRun } from "../deckhand.ts";
import { alivePid, GTK4_FIXTURE, SYSTEM_PYTHON, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { browserArgv, libreOfficeProfile, sofficeArgv, writerDocument } from "../app-profiles.ts";
import { startListener } from "./web-rows.ts";
import { nativeBrowserArgv, rowTest, type MatrixDesk } from "./desk.ts";
import { QUIET_MS, since } from "./oracles.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { waitAccessible } from "./toolkit.ts";

const run = promisify(execFile);
const OWNER = fileURLToPath(new URL("../../fixtures/wayland/data_control_owner.py", import.meta.url));
const ENTRY = /^text_(?:field|area)$/;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function clipboardWaylandRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  const rowIt = rowTest(on, desk, file, 90_000);
  let stateDir: string;
  let bg: Serve; // --confirm-cmd /bin/true: set is allowed
  let fg: Serve; // and --allow-foreground: paste
  let fixture: Fixture;
  let mainWindow: number;
  const started: ChildProcess[] = [];
  const ownerPids = new Set<number>();
  const env = () => desk().desktop.env as Record<string, string>;

  /** What wl-paste reads from a selection; null when there is none (or no text). */
  const wlPaste = async (primary = false): Promise<string | null> => {
    try {
      const { stdout } = await run("wl-paste", ["--no-newline", ...(primary ? ["--primary"] : [])], { env: env(), timeout: 5000 });
      return stdout;
    } catch {
      return null;
    }
  };
  /** wl-copy in the foreground (its pid ours to kill); waits until the selection reads back. */
  const wlCopy = async (text: string, primary = false): Promise<void> => {
    const child = spawn("wl-copy", ["--foreground", ...(primary ? ["--primary"] : [])], { env: env(), stdio: ["pipe", "ignore", "ignore"] });
    started.push(child);
    child.stdin!.end(text);
    await waitUntil(`wl-copy owning the ${primary ? "primary" : "clipboard"} selection`, 5000, async () => (await wlPaste(primary)) === text);
  };
  /** The logging owner: its log lines. */
  const ownerWith = async (text: string, args: string[]): Promise<() => any[]> => {
    const log = join(desk().desktop.root!, `wl-owner-${Date.now()}-${randomBytes(3).toString("hex")}.jsonl`);
    const child = spawn(SYSTEM_PYTHON, [OWNER, ...args], { env: { ...env(), DECKHAND_FIXTURE_LOG: log }, stdio: ["pipe", "ignore", "inherit"] });
    started.push(child);
    child.stdin!.end(text);
    const lines = () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []);
    await waitUntil("the data-control owner to be ready", 10_000, () => lines().some((l) => l.event === "ready" || l.event === "error"));
    const err = lines().find((l) => l.event === "error");
    if (err) throw new Error(`the data-control owner failed: ${err.message}`);
    return lines;
  };
  const cli = (args: string[], opts: { stdin?: string } = {}): Promise<CliRun> => deckhand(desk().desktop, args, { stateDir, ...opts });
  const timed = async <T>(f: () => Promise<T>): Promise<{ v: T; ms: number }> => {
    const t0 = performance.now();
    const v = await f();
    return { v, ms: Math.round(performance.now() - t0) };
  };
  const observe = (s: Serve, pid: number, windowId?: number) => s.ok("get-app-state", { app: `pid:${pid}`, ...(windowId ? { windowId } : {}), noScreenshot: true, maxNodes: 5000 });
  const findEl = (st: any, role: RegExp, title: string) => {
    const el = st.snapshot.elements.find((e: any) => role.test(e.role) && e.title === title);
    if (!el) throw new Error(`no ${role} "${title}" in:\n${String(st.snapshot.treeText).slice(0, 3000)}`);
    return el;
  };
  /** Our detached owners (deckhand-helper-linux --own-selection) on this Wayland display. */
  const ourOwners = (): number[] =>
    readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => {
        try {
          if (!readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("--own-selection")) return false;
          const e = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
          return e.includes(`XDG_RUNTIME_DIR=${env().XDG_RUNTIME_DIR}`);
        } catch {
          return false;
        }
      });

  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    stateDir = newStateDir();
    fixture = await desk().launchFixture();
    mainWindow = await desk().windowId(fixture, "deckhand fixture");
    bg = new Serve(desk().desktop, { stateDir, args: ["--confirm-cmd", "/bin/true"] });
    fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground", "--confirm-cmd", "/bin/true"] });
  }, 90_000);
  afterAll(async () => {
    await bg?.close();
    await fg?.close();
    await fixture?.stop();
    for (const c of started) if (c.exitCode === null && c.pid) process.kill(c.pid, "SIGKILL");
    for (const pid of new Set([...ownerPids, ...ourOwners()])) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
  });

  rowIt("wayland.clipboard.set", async () => {
    const text = `set by deckhand ${randomBytes(4).toString("hex")} — ünïcode ✓`;
    const hookLog = join(desk().desktop.root!, "wl-hook-set.json");
    const hook = join(desk().desktop.root!, "wl-hook-set.sh");
    writeFileSync(hook, `#!/bin/sh\ncat > ${hookLog}\nexit 0\n`, { mode: 0o755 });
    const { v: r, ms } = await timed(() => cli(["clipboard", "set", "--text-stdin", "--confirm-cmd", hook], { stdin: text }));
    metric("wayland.clipboard.set", "cli_set_ms", ms);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    const res = r.envelope.result;
    expect(res).toMatchObject({ selection: "clipboard", set: true, bytes: Buffer.byteLength(text) });
    ownerPids.add(res.ownerPid);
    // deckhand and its helper are gone: the text is still there, from the detached owner.
    expect(await wlPaste()).toBe(text);
    const { stdout: types } = await run("wl-paste", ["--list-types"], { env: env(), timeout: 5000 });
    expect(types.split("\n")).toEqual(expect.arrayContaining(["text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "STRING", "TEXT"]));
    expect(alivePid(res.ownerPid)).toBe(true);
    const raw = readFileSync(`/proc/${res.ownerPid}/stat`, "utf8");
    const stat = raw.slice(raw.lastIndexOf(")") + 2).split(" ");
    const [ppid, sid] = [Number(stat[1]), Number(stat[3])];
    expect(sid, "the leader of its own session").toBe(res.ownerPid);
    expect(ppid === 1 || !readFileSync(`/proc/${ppid}/cmdline`, "utf8").includes("deckhand"), `parent ${ppid}`).toBe(true);
    expect(readFileSync(`/proc/${res.ownerPid}/cmdline`, "utf8")).not.toContain(text);
    const told = readFileSync(hookLog, "utf8");
    expect(JSON.parse(told)).toMatchObject({ command: "clipboard-set", action: "set_clipboard" });
    expect(told).not.toContain(text);
    // serve: the same through a long-running session; the earlier owner, replaced, exits.
    const s = await timed(() => bg.ok("clipboard-set", { text: `${text} (serve)` }));
    metric("wayland.clipboard.set", "serve_set_ms", s.ms);
    ownerPids.add(s.v.ownerPid);
    expect(await wlPaste()).toBe(`${text} (serve)`);
    await waitUntil("the replaced owner to exit", 3000, () => !alivePid(res.ownerPid));
  });

  rowIt("wayland.clipboard.get", async () => {
    const text = `from wl-copy ${randomBytes(4).toString("hex")}\nsecond line`;
    await wlCopy(text);
    const { v: r, ms } = await timed(() => cli(["clipboard", "get"]));
    metric("wayland.clipboard.get", "cli_get_ms", ms);
    expect(r.envelope.ok, JSON.stringify(r.envelope.error)).toBe(true);
    expect(r.envelope.result).toMatchObject({ selection: "clipboard", text, bytes: Buffer.byteLength(text), truncated: false });
    // Wayland names no owner: none is claimed.
    expect(r.envelope.result.owner?.pid ?? null).toBeNull();
    const s = await timed(() => bg.ok("clipboard-get", {}));
    metric("wayland.clipboard.get", "serve_get_ms", s.ms);
    expect(s.v.text).toBe(text);
    // 64 KiB through one pipe, and cut by --max-bytes.
    const big = Array.from({ length: (64 * 1024) / 16 }, (_, i) => `line ${String(i).padStart(10, "0")}\n`).join("");
    await wlCopy(big);
    const all = await bg.ok("clipboard-get", { maxBytes: 1024 * 1024 });
    expect(all.bytes).toBe(big.length);
    expect(all.text === big, `got ${all.text?.length} chars`).toBe(true);
    expect(await bg.ok("clipboard-get", { maxBytes: 100 })).toMatchObject({ text: big.slice(0, 100), truncated: true });
    const audit = readFileSync(join(stateDir, "audit.jsonl"), "utf8");
    expect(audit).toContain('"command":"clipboard-get"');
    expect(audit).not.toContain("from wl-copy");
  });

  rowIt("wayland.clipboard.primary", async () => {
    await wlCopy("clipboard stays");
    const text = `primary ${randomBytes(4).toString("hex")}`;
    const r = await bg.ok("clipboard-set", { selection: "primary", text });
    ownerPids.add(r.ownerPid);
    expect(await wlPaste(true)).toBe(text);
    await wlCopy("from wl-copy primary", true);
    expect((await bg.ok("clipboard-get", { selection: "primary" })).text).toBe("from wl-copy primary");
    expect(await wlPaste()).toBe("clipboard stays");
  });

  rowIt("wayland.clipboard.paste.fixture", async () => {
    await wlCopy("previous clipboard");
    const st = await observe(fg, fixture.pid, mainWindow);
    const name = findEl(st, ENTRY, "Name");
    const text = `pasted ${randomBytes(3).toString("hex")}`;
    const mark = fixture.events().length;
    const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${fixture.pid}`, elementIndex: name.index, text }));
    metric("wayland.clipboard.paste.fixture", "serve_paste_ms", ms);
    expect(r.ok, JSON.stringify(r.error)).toBe(true);
    expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true }, cleanup: { keys_released: true } });
    expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
    expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && String(e.text).includes(text), 5000, mark);
    await sleep(QUIET_MS);
    const changed = since(fixture, mark).filter((e) => e.event === "text_changed");
    expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
    expect(await wlPaste()).toBe("previous clipboard");
    // The one-shot CLI too (its own helper, focus guard, restore).
    const again = `${text}!`;
    const c = await timed(() => cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(name.index), "--text", again, "--allow-foreground"]));
    metric("wayland.clipboard.paste.fixture", "cli_paste_ms", c.ms);
    expect(c.v.envelope.ok, JSON.stringify(c.v.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && String(e.text).includes(again), 5000, mark);
    expect(await wlPaste()).toBe("previous clipboard");
  });

  rowIt("wayland.clipboard.refuse.secure-focus", async () => {
    const log = await ownerWith("never read", []);
    // Focus goes to the password field inside the window sway focuses (a GTK window cannot raise itself on Wayland).
    await desk().raise(mainWindow);
    const st = await observe(fg, fixture.pid, mainWindow);
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    await fg.ok("focus", { app: `pid:${fixture.pid}`, elementIndex: pw.index });
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Password" && e.in === true, 5000);
    const r = await cli(["clipboard", "get"]);
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "secure-focus" } });
    expect(r.stdout + r.stderr).not.toContain("never read");
    expect(log().filter((l) => l.event === "request")).toEqual([]);
    // Focus back on Name for the rows after.
    await fg.ok("focus", { app: `pid:${fixture.pid}`, elementIndex: findEl(st, ENTRY, "Name").index });
  });

  rowIt("wayland.clipboard.refuse.secret-hint", async () => {
    const log = await ownerWith("hunter2-from-a-password-manager", ["--secret"]);
    const r = await bg.request("clipboard-get", {});
    expect(r.error).toMatchObject({ code: "POLICY_DENIED", details: { reason: "secret-hint" } });
    expect(JSON.stringify(r)).not.toContain("hunter2");
    expect(log().filter((l) => l.event === "request")).toEqual([]);
  });

  rowIt("wayland.clipboard.refuse.paste-secure", async () => {
    await wlCopy("unchanged");
    const st = await observe(fg, fixture.pid, mainWindow);
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    const mark = fixture.events().length;
    const r = await fg.request("paste", { app: `pid:${fixture.pid}`, elementIndex: pw.index, text: "hunter2" });
    expect(r.error).toMatchObject({ code: "POLICY_DENIED", details: { delivery: "not_dispatched" } });
    await sleep(QUIET_MS);
    expect(since(fixture, mark)).toEqual([]);
    expect(await wlPaste()).toBe("unchanged");
  });

  rowIt("wayland.clipboard.refuse.confirm-required", async () => {
    await wlCopy("kept");
    const r = await cli(["clipboard", "set", "--text", "not set"]);
    expect(r.envelope.error?.code).toBe("CONFIRM_REQUIRED");
    expect(await wlPaste()).toBe("kept");
  });

  rowIt("wayland.clipboard.secrets", async () => {
    const marker = `MARKER-${randomBytes(8).toString("hex")}`;
    const runs: CliRun[] = [];
    runs.push(await cli(["clipboard", "set", "--text-stdin", "--confirm-cmd", "/bin/true"], { stdin: marker }));
    expect(runs[0]!.envelope.ok, JSON.stringify(runs[0]!.envelope.error)).toBe(true);
    ownerPids.add(runs[0]!.envelope.result.ownerPid);
    expect(await wlPaste()).toBe(marker);
    const owners = ourOwners();
    const st = await observe(fg, fixture.pid, mainWindow);
    const name = findEl(st, ENTRY, "Name");
    const mark = fixture.events().length;
    runs.push(await cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(name.index), "--text-stdin", "--allow-foreground"], { stdin: `${marker}-paste` }));
    expect(runs[1]!.envelope.ok, JSON.stringify(runs[1]!.envelope.error)).toBe(true);
    await fixture.waitFor((e) => e.event === "text_changed" && String(e.text).includes(`${marker}-paste`), 5000, mark);
    runs.push(await cli(["paste", "--app", `pid:${fixture.pid}`, "--element-index", String(st.snapshot.elements.find((e: any) => e.secure).index), "--text-stdin", "--allow-foreground"], { stdin: marker }));
    expect(runs[2]!.envelope.error?.code).toBe("POLICY_DENIED");
    for (const r of runs) expect(r.stdout + r.stderr).not.toContain(marker);
    const files = readdirSync(stateDir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile());
    for (const f of files) expect(readFileSync(join(f.parentPath, f.name), "utf8"), f.name).not.toContain(marker);
    for (const pid of [...owners, ...ourOwners()]) {
      try {
        expect(readFileSync(`/proc/${pid}/cmdline`, "utf8")).not.toContain(marker);
      } catch {
        // exited meanwhile (replaced)
      }
    }
  });

  rowIt(
    "wayland.clipboard.paste.mousepad",
    async () => {
      let app: TreeApp | undefined;
      try {
        app = await desk().launchAppTree(["/usr/bin/mousepad", "--disable-server"]);
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
        expect(await wlPaste()).toBe(prev);
      } finally {
        await app?.stop();
      }
    },
    120_000,
  );

  rowIt(
    "wayland.clipboard.paste.featherpad",
    async () => {
      let app: TreeApp | undefined;
      try {
        app = await desk().launchAppTree(["/usr/bin/featherpad", "--standalone"], { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 60_000 });
        await waitAccessible(bg, app.pid);
        await bg.ok("clipboard-set", { clear: true });
        expect(await wlPaste()).toBeNull();
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
        expect(await wlPaste()).toBeNull();
        expect(alivePid(app.pid)).toBe(true);
      } finally {
        await app?.stop();
      }
    },
    150_000,
  );

  // The other toolkits, as the X11 rows (clipboard.test.ts): each starts its app, puts a previous clipboard with
  // wl-copy, pastes into one control and checks what the app itself received, then that the previous text is back.

  rowIt(
    "wayland.clipboard.paste.gtk4",
    async () => {
      let gtk4: Fixture | undefined;
      try {
        gtk4 = await desk().launchFixture({ timeoutMs: 60_000 }, GTK4_FIXTURE);
        await waitAccessible(bg, gtk4.pid);
        const st = await observe(fg, gtk4.pid);
        const name = findEl(st, ENTRY, "Name");
        const prev = `before gtk4 ${randomBytes(3).toString("hex")}`;
        await wlCopy(prev);
        const text = `gtk4 paste ${randomBytes(3).toString("hex")}`;
        // With --element-index: GTK 4.8 answers Component.GrabFocus NotSupported; nothing pasted, the clipboard untouched.
        let mark = gtk4.events().length;
        const refused = await fg.request("paste", { app: `pid:${gtk4.pid}`, elementIndex: name.index, text });
        expect(refused.ok).toBe(false);
        expect(refused.error).toMatchObject({ code: "ACTION_FAILED", details: { dbus_error: "org.freedesktop.DBus.Error.NotSupported" } });
        await sleep(QUIET_MS);
        expect(since(gtk4, mark).filter((e) => e.event === "text_changed")).toEqual([]);
        expect(await wlPaste()).toBe(prev);
        // A granted click focuses the entry as a user does; the paste goes to the focused control.
        const x = name.bounds.x + Math.floor(name.bounds.width / 2);
        const y = name.bounds.y + Math.floor(name.bounds.height / 2);
        const c = await fg.request("click", { app: `pid:${gtk4.pid}`, x, y });
        expect(c.ok, JSON.stringify(c.error)).toBe(true);
        await gtk4.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000, mark);
        mark = gtk4.events().length;
        const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${gtk4!.pid}`, text }));
        metric("wayland.clipboard.paste.gtk4", "serve_paste_ms", ms);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: null }, cleanup: { keys_released: true } });
        expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
        expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
        await gtk4.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === text, 5000, mark);
        await sleep(QUIET_MS);
        const changed = since(gtk4, mark).filter((e) => e.event === "text_changed");
        expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
        expect(await wlPaste()).toBe(prev);
      } finally {
        await gtk4?.stop();
      }
    },
    120_000,
  );

  rowIt(
    "wayland.clipboard.paste.chromium",
    async () => {
      let web: WebFixture | undefined;
      let app: TreeApp | undefined;
      let listener: ChildProcess | undefined;
      const profile = desk().handOver(mkdtempSync(join(tmpdir(), "deckhand-wl-clipboard-chromium-")));
      try {
        web = await startWebFixture();
        // Chromium starts with an assistive client listening, as the browser rows do (web-rows.ts).
        listener = await startListener(desk());
        const argv = nativeBrowserArgv(desk(), "chromium", browserArgv("chromium", web.url, profile));
        app = await desk().launchAppTree(argv, { env: desk().browser("chromium").env, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(bg, app.pid);
        const el = await waitUntil("Chromium's Name input in the tree", 30_000, async () => (await observe(fg, app!.pid, app!.windows[0])).snapshot.elements.find((e: any) => ENTRY.test(e.role) && e.title === "Name" && e.bounds));
        const prev = `before chromium ${randomBytes(3).toString("hex")}`;
        await wlCopy(prev);
        const text = `chromium paste ${randomBytes(3).toString("hex")} — ü ✓`;
        const mark = web.events().length;
        const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${app!.pid}`, elementIndex: el.index, text }));
        metric("wayland.clipboard.paste.chromium", "serve_paste_ms", ms);
        if (!alivePid(app.pid)) throw new Error(`chromium died during paste; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true }, cleanup: { keys_released: true } });
        expect(r.result.paste).toMatchObject({ chars: [...text].length, restored: "text" });
        expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
        await web.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === text, 10_000, mark);
        await sleep(QUIET_MS);
        const changed = web.events().slice(mark).filter((e) => e.event === "text_changed");
        expect(new Set(changed.map((e) => e.control))).toEqual(new Set(["Name"]));
        expect(await wlPaste()).toBe(prev);
      } finally {
        await app?.stop();
        await web?.close();
        listener?.kill();
        rmSync(profile, { recursive: true, force: true });
      }
    },
    180_000,
  );

  rowIt(
    "wayland.clipboard.paste.writer",
    async () => {
      let app: TreeApp | undefined;
      const profile = desk().handOver(libreOfficeProfile("deckhand-wl-clipboard-lo-"));
      const dir = desk().handOver(mkdtempSync(join(tmpdir(), "deckhand-wl-clipboard-writer-")));
      try {
        const first = "First paragraph of the document.";
        const doc = writerDocument(dir, "deckhand-paste", [first, "Second paragraph."]);
        desk().handOver(dir);
        app = await desk().launchAppTree(sofficeArgv("--writer", profile, doc), { env: { SAL_USE_VCLPLUGIN: "gtk3" }, timeoutMs: 120_000, titleMatches: /deckhand-paste/ });
        await waitAccessible(bg, app.pid);
        const paragraph = () =>
          waitUntil("Writer's first paragraph in the tree", 60_000, async () => {
            const st = await observe(fg, app!.pid, app!.windows[0]);
            return st.snapshot.elements.find((e: any) => e.nativeRole === "paragraph" && String(e.value ?? e.title ?? "").includes("First paragraph"));
          });
        const el = await paragraph();
        const prev = `before writer ${randomBytes(3).toString("hex")}`;
        await wlCopy(prev);
        const text = `writer paste ${randomBytes(3).toString("hex")}`;
        const { v: r, ms } = await timed(() => fg.request("paste", { app: `pid:${app!.pid}`, elementIndex: el.index, text }));
        metric("wayland.clipboard.paste.writer", "serve_paste_ms", ms);
        if (!alivePid(app.pid)) throw new Error(`soffice.bin died during paste; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        expect(r.ok, JSON.stringify(r.error)).toBe(true);
        expect(r.result).toMatchObject({ delivery: "submitted", route: "foreground_input", verification: { verified: true } });
        expect(r.result.paste).toMatchObject({ chars: text.length, restored: "text" });
        expect(r.result.paste.served).toBeGreaterThanOrEqual(1);
        const after = await waitUntil("the pasted text in the first paragraph", 10_000, async () => {
          const p = await paragraph();
          return String(p.value ?? "").includes(text) ? p : undefined;
        });
        expect(String(after.value)).toContain(first);
        expect(await wlPaste()).toBe(prev);
        expect(alivePid(app.pid)).toBe(true);
      } finally {
        await app?.stop();
        rmSync(profile, { recursive: true, force: true });
        rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
}
