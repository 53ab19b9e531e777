// Issue 13 items 4-6 on a real desktop: element-to-element drag (the GTK3
// DnD fixture, test/fixtures/apps/dnd_fixture.py, and Chromium on
// test/fixtures/web/dnd.html), the cross-process foreground lease (two
// deckhand processes typing into the fixture's entry at once; a held lease),
// and serve's safe retries (one id sent three times: one click; a client
// deadline that passes mid-typing). Rows: test/live/matrix/rows.ts
// ("drag-lease"), app dnd-fixture (its entry, OK button and canvas serve the
// lease and serve rows).
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWebFixture, type WebFixture } from "../fixtures/web/server.ts";
import { alivePid, describeLive, desktopEnv, launchAppTree, launchFixtureScript, GTK4_FIXTURE, QT5_FIXTURE, useDesktop, waitUntil, xdotool, type Fixture, type TreeApp } from "./harness.ts";
import { checkContract, DECKHAND, deckhand, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { pointer, proveOracles, quietViolations, scene, sceneViolations, since } from "./matrix/oracles.ts";
import { metric, record } from "./matrix/results.ts";
import { ROWS } from "./matrix/rows.ts";
import { browserArgv, FIREFOX_ENV, writeFirefoxPrefs } from "./app-profiles.ts";

/** The drag page's browser window (smaller than the form page's). */
const DND_WINDOW = { width: 1000, height: 700 };
import { findEl, waitAccessible } from "./matrix/toolkit.ts";

const FILE = "drag-lease.test.ts";
const DND_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "apps", "dnd_fixture.py");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const rowIt = (id: string, fn: () => Promise<void>, timeout = 120_000) => {
  const r = ROWS.find((x) => x.id === id);
  if (!r) throw new Error(`no matrix row ${id}`);
  it(`${id}: ${r.action} -> ${r.expect}`, () => record(id, FILE, fn), timeout);
};

/** A serve session read line by line, every line kept (a replay answers an id twice: the shared Serve keeps the first only). */
class RawServe {
  readonly child: ChildProcess;
  readonly lines: any[] = [];
  stderr = "";
  constructor(desktop: Parameters<typeof desktopEnv>[0], stateDir: string, args: string[] = []) {
    this.child = spawn(DECKHAND, ["serve", ...args], { env: desktopEnv(desktop, { DECKHAND_STATE_DIR: stateDir }), stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr!.on("data", (d) => (this.stderr = (this.stderr + d).slice(-20000)));
    createInterface({ input: this.child.stdout! }).on("line", (l) => {
      const m = JSON.parse(l);
      const { id: _id, replayed: _r, ...envelope } = m;
      checkContract(`serve response ${JSON.stringify(_id)}`, envelope);
      this.lines.push(m);
    });
  }
  send(...reqs: object[]): void {
    this.child.stdin!.write(reqs.map((r) => JSON.stringify(r) + "\n").join(""));
  }
  of(id: unknown): any[] {
    return this.lines.filter((l) => l.id === id);
  }
  async answers(id: unknown, n: number, timeoutMs = 30_000): Promise<any[]> {
    return await waitUntil(`${n} answers to ${JSON.stringify(id)}`, timeoutMs, () => (this.of(id).length >= n ? this.of(id) : undefined));
  }
  async close(): Promise<void> {
    this.child.stdin!.end();
    await new Promise((r) => this.child.on("exit", r));
  }
}

/** What was inserted into a control since mark, in order (the fixture logs every insertion). */
function insertedSince(f: Fixture, control: string, mark: number): string {
  return f
    .events()
    .slice(mark)
    .filter((x) => x.event === "insert" && x.control === control)
    .map((x) => String(x.text))
    .join("");
}

describeLive("element drag, the foreground lease, serve retries", () => {
  const desktop = useDesktop();
  let stateDir: string;

  beforeAll(async () => {
    requireBuild();
    await proveOracles(desktop);
    stateDir = newStateDir();
  }, 90_000);

  describe("element drag on the GTK3 DnD fixture", () => {
    let dnd: Fixture;
    let fg: Serve;
    let bg: Serve;
    let win: number;
    const app = () => `pid:${dnd.pid}`;
    const observe = async (s: Serve) => {
      const r = await s.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      if (!r.ok) throw new Error(`get-app-state failed: ${JSON.stringify(r.error)}`);
      return r.result;
    };

    beforeAll(async () => {
      dnd = await launchFixtureScript(desktop, DND_FIXTURE, { timeoutMs: 30_000 });
      win = (dnd.events().find((e) => e.event === "ready") as any).windows[0].xid;
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
      bg = new Serve(desktop, { stateDir });
      await waitAccessible(bg, dnd.pid);
    }, 60_000);
    afterAll(async () => {
      await fg?.close();
      await bg?.close();
      await dnd?.stop();
    });

    rowIt("drag.fixture.elements", async () => {
      const st = await observe(fg);
      const apple = findEl(st, /button/, "Apple");
      const target = findEl(st, /./, "Drop here");
      // The window moves after the snapshot: the drag must follow the live bounds.
      const moveTo = { x: st.window.bounds.x + 60, y: st.window.bounds.y + 40 };
      await xdotool(desktop, ["windowmove", "--sync", String(win), String(moveTo.x), String(moveTo.y)]);
      await waitUntil("the window to move", 5000, async () => {
        const r = await fg.request("list-windows", { app: app() });
        const b = r.ok ? r.result.windows.find((w: any) => w.windowId === win)?.bounds : null;
        return b && b.x !== st.window.bounds.x ? b : undefined;
      });
      const before = scene(desktop);
      const mark = dnd.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), fromElementIndex: apple.index, toElementIndex: target.index, snapshotId: st.snapshot.snapshotId });
      const ms = Math.round(performance.now() - t0);
      metric("drag.fixture.elements", "drag_ms", ms);
      console.log(`[drag] GTK3 fixture: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      const res = r.result;
      expect(res.verification.verified).toBe(true);
      expect(res.drag.targetChanged).toContain("name");
      expect(res.drag.from).toMatchObject({ index: apple.index, role: "button", title: "Apple" });
      expect(res.drag.to).toMatchObject({ index: target.index, title: "Drop here" });
      // The points were the live centres, not the snapshot's.
      expect(res.drag.from.point.x).toBeGreaterThan(apple.bounds.x + apple.bounds.width / 2 + 30);
      expect(res.cleanup).toMatchObject({ buttons_released: true, pointer_restored: true });
      // What the app saw: one drag of Apple, one drop of "Apple" on the target, no click.
      const events = since(dnd, mark);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop target", text: "Apple" })]);
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.some((e) => e.event === "clicked")).toBe(false);
      // A fresh observation reads the drop.
      findEl(await observe(fg), /./, "Dropped: Apple");
      expect(pointer(desktop)).toBe(before.pointer);
    });

    rowIt("drag.fixture.no-drop", async () => {
      const st = await observe(fg);
      const banana = findEl(st, /button/, "Banana");
      const other = findEl(st, /./, "Not a target");
      const mark = dnd.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), fromElementIndex: banana.index, toElementIndex: other.index });
      metric("drag.fixture.no-drop", "drag_ms", Math.round(performance.now() - t0));
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      expect(r.result.verification.verified).toBe(false);
      expect(r.result.drag.targetChanged).toEqual([]);
      expect(r.result.drag.detail).toMatch(/did not change/);
      const events = since(dnd, mark);
      // The drag really happened, and nothing was dropped.
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Banana"]);
      expect(events.some((e) => e.event === "drop")).toBe(false);
    });

    rowIt("drag.refuse.ungranted", async () => {
      const st = await observe(bg);
      const cherry = findEl(st, /button/, "Cherry");
      const target = findEl(st, /./, /^(Drop here|Dropped: .*)$/);
      const before = scene(desktop);
      const mark = dnd.events().length;
      const r = await bg.request("drag", { app: app(), fromElementIndex: cherry.index, toElementIndex: target.index });
      expect(r.ok).toBe(false);
      expect(r.error!.code).toBe("FOREGROUND_REQUIRED");
      expect(r.error!.details.delivery).toBe("not_dispatched");
      expect(await quietViolations(dnd, mark)).toEqual([]);
      expect(sceneViolations(before, scene(desktop))).toEqual([]);
    });
  });

  describe("the foreground lease on the GTK3 fixture", () => {
    let f: Fixture;
    let bg: Serve;
    let name: any;
    let canvas: any;

    beforeAll(async () => {
      f = await launchFixtureScript(desktop, DND_FIXTURE, { timeoutMs: 30_000 });
      bg = new Serve(desktop, { stateDir });
      await waitAccessible(bg, f.pid);
      const r = await bg.request("get-app-state", { app: `pid:${f.pid}`, noScreenshot: true });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      name = findEl(r.result, /text_field/, "Name");
      canvas = findEl(r.result, /./, "Canvas");
    }, 60_000);
    afterAll(async () => {
      await bg?.close();
      await f?.stop();
    });

    /** Focus Name and empty it (accessibility: no foreground input). */
    async function freshName(): Promise<void> {
      const st = await bg.request("get-app-state", { app: `pid:${f.pid}`, noScreenshot: true });
      const el = findEl(st.result, /text_field/, "Name");
      expect((await bg.request("set-value", { app: `pid:${f.pid}`, elementIndex: el.index, value: "" })).ok).toBe(true);
      expect((await bg.request("focus", { app: `pid:${f.pid}`, elementIndex: el.index })).ok).toBe(true);
    }

    /**
     * Two deckhand processes (serve sessions, warmed up: helper started, app
     * resolved) type at once into the focused Name: the requests are sent in
     * the same instant, so without a shared lease their typing overlaps.
     */
    async function typeTogether(dirA: string, dirB: string, n: number) {
      const [sa, sb] = [new Serve(desktop, { stateDir: dirA, args: ["--allow-foreground"] }), new Serve(desktop, { stateDir: dirB, args: ["--allow-foreground"] })];
      try {
        for (const s of [sa, sb]) await s.ok("list-windows", { app: `pid:${f.pid}` });
        const mark = f.events().length;
        const run = async (s: Serve, text: string) => {
          const t0 = performance.now();
          const r = await s.request("type-text", { app: `pid:${f.pid}`, text });
          return { r, ms: Math.round(performance.now() - t0) };
        };
        const [ra, rb] = await Promise.all([run(sa, "a".repeat(n)), run(sb, "b".repeat(n))]);
        const text = await waitUntil("both texts to land in Name", 20_000, () => {
          const t = insertedSince(f, "Name", mark);
          return t.length >= 2 * n ? t : undefined;
        }).catch((err) => {
          const evs = f.events().slice(mark);
          const counts: Record<string, number> = {};
          for (const e of evs) counts[e.event] = (counts[e.event] ?? 0) + 1;
          throw new Error(`${(err as Error).message}; since the typing began the fixture logged ${JSON.stringify(counts)}, ${insertedSince(f, "Name", mark).length} characters inserted; answers ${JSON.stringify([ra.r.ok ? ra.r.result.charsSent : ra.r.error, rb.r.ok ? rb.r.result.charsSent : rb.r.error]).slice(0, 600)}`);
        });
        return { ra, rb, text };
      } finally {
        await Promise.all([sa.close(), sb.close()]);
      }
    }

    rowIt("lease.two-processes", async () => {
      // Long enough that two typings nothing orders overlap (the control),
      // short enough that GTK takes every key (thousands in a burst lose some).
      const n = 1000;
      await freshName();
      const { ra, rb, text } = await typeTogether(stateDir, stateDir, n);
      expect(ra.r.ok, JSON.stringify(ra.r.error)).toBe(true);
      expect(rb.r.ok, JSON.stringify(rb.r.error)).toBe(true);
      metric("lease.two-processes", "type_ms", `${ra.ms}, ${rb.ms}`);
      console.log(`[lease] two processes, one state dir: ${ra.ms} ms and ${rb.ms} ms; Name = ${text.slice(0, 12)}...${text.slice(-12)} (${text.length})`);
      // Each text landed contiguous: one after the other, never interleaved.
      expect([`${"a".repeat(n)}${"b".repeat(n)}`, `${"b".repeat(n)}${"a".repeat(n)}`]).toContain(text);
      // The control: two state dirs are two leases; the same typing then
      // interleaves (the two start within a few ms of each other: up to three
      // tries), which is what the check above would have caught.
      const seen: number[] = [];
      for (let i = 0; i < 3 && !seen.some((r) => r > 2); i++) {
        await freshName();
        const ctl = await typeTogether(newStateDir(), newStateDir(), n);
        seen.push(ctl.text.match(/a+|b+/g)?.length ?? 0);
        console.log(`[lease] control, two state dirs (no shared lease): ${ctl.ra.ms} ms and ${ctl.rb.ms} ms, ${seen.at(-1)} runs of a/b in Name`);
      }
      metric("lease.two-processes", "control_runs_without_shared_lease", seen.join(", "));
      expect(Math.max(...seen), "the control (no shared lease) interleaved").toBeGreaterThan(2);
    });

    rowIt("lease.busy", async () => {
      const holder = spawn("sleep", ["60"], { stdio: "ignore" });
      try {
        const since0 = new Date().toISOString();
        writeFileSync(join(stateDir, "foreground.lease"), JSON.stringify({ pid: holder.pid, startTime: null, command: "deckhand run (held by the test)", acquiredAt: since0, expiresAt: new Date(Date.now() + 120_000).toISOString(), token: "test-holder" }));
        const before = scene(desktop);
        const mark = f.events().length;
        const x = canvas.bounds.x + 20;
        const y = canvas.bounds.y + 20;
        const t0 = performance.now();
        const r = await deckhand(desktop, ["click", "--app", `pid:${f.pid}`, "--x", String(x), "--y", String(y), "--allow-foreground"], { stateDir, env: { DECKHAND_FOREGROUND_WAIT_MS: "1500" } });
        const ms = Math.round(performance.now() - t0);
        metric("lease.busy", "waited_ms", ms);
        expect(r.envelope.ok).toBe(false);
        expect(r.envelope.error!.code).toBe("FOREGROUND_BUSY");
        expect(r.envelope.error!.details).toMatchObject({ holderPid: holder.pid!, holderCommand: "deckhand run (held by the test)", holderSince: since0, delivery: "not_dispatched" });
        expect(r.envelope.error!.details.waitedMs as number).toBeGreaterThanOrEqual(1500);
        expect(await quietViolations(f, mark)).toEqual([]);
        expect(sceneViolations(before, scene(desktop))).toEqual([]);
      } finally {
        holder.kill("SIGKILL");
      }
    });
  });

  describe("serve retries on the GTK3 fixture", () => {
    let f: Fixture;
    let raw: RawServe;
    let fgRaw: RawServe;
    let st: any;

    beforeAll(async () => {
      f = await launchFixtureScript(desktop, DND_FIXTURE, { timeoutMs: 30_000 });
      const dir = newStateDir();
      raw = new RawServe(desktop, dir);
      fgRaw = new RawServe(desktop, dir, ["--allow-foreground"]);
      raw.send({ id: "apps", command: "list-apps" });
      await waitUntil("the fixture on the bus", 30_000, async () => {
        raw.send({ id: `apps-${Date.now()}`, command: "list-apps" });
        await sleep(300);
        return raw.lines.some((l) => l.ok && l.command === "list-apps" && l.result.apps.some((a: any) => a.pid === f.pid && a.accessible));
      });
      raw.send({ id: "obs", command: "get-app-state", args: { app: `pid:${f.pid}`, noScreenshot: true, format: "full" } });
      st = (await raw.answers("obs", 1))[0].result;
    }, 60_000);
    afterAll(async () => {
      await raw?.close();
      await fgRaw?.close();
      await f?.stop();
    });

    rowIt("serve.retry.once", async () => {
      const ok = findEl(st, /button/, "OK");
      const mark = f.events().length;
      const req = { id: "click-ok-1", command: "click", args: { app: `pid:${f.pid}`, elementIndex: ok.index } };
      // Sent twice back to back (the second while the first is in flight), then once more after.
      raw.send(req, req);
      await raw.answers(req.id, 2);
      raw.send(req);
      const [first, second, third] = await raw.answers(req.id, 3);
      expect(first.ok, JSON.stringify(first.error)).toBe(true);
      expect(first.replayed).toBeUndefined();
      expect(second.replayed).toBe(true);
      expect(third.replayed).toBe(true);
      const { replayed: _a, ...s } = second;
      const { replayed: _b, ...t } = third;
      expect(s).toEqual(first);
      expect(t).toEqual(first);
      // The fixture received exactly one click.
      await sleep(300);
      expect(since(f, mark).filter((e) => e.event === "clicked")).toEqual([expect.objectContaining({ control: "OK" })]);
      raw.send({ id: "st", command: "status" });
      const status = (await raw.answers("st", 1))[0].result;
      expect(status.recent.filter((x: any) => x.id === req.id)).toEqual([{ id: req.id, command: "click", ok: true, finishedAt: expect.any(String) }]);
    });

    rowIt("serve.client-deadline", async () => {
      const name = findEl(st, /text_field/, "Name");
      raw.send({ id: "focus", command: "focus", args: { app: `pid:${f.pid}`, elementIndex: name.index } });
      await raw.answers("focus", 1);
      const mark = f.events().length;
      // Shift held for 10 s in one helper input; the request may take 0.8 s.
      const deadlineMs = 800;
      const t0 = performance.now();
      fgRaw.send({ id: "hold", command: "run", args: { program: { app: `pid:${f.pid}`, observe: false, steps: [{ action: "hold-key", key: "shift", ms: 10_000 }] } }, deadlineMs });
      const [line] = await fgRaw.answers("hold", 1, 30_000);
      const ms = Math.round(performance.now() - t0);
      metric("serve.client-deadline", "answered_ms", ms);
      console.log(`[deadline] answered after ${ms} ms: ${JSON.stringify(line).slice(0, 600)}`);
      expect(line.ok).toBe(false);
      expect(line.error.code).toBe("TIMEOUT");
      expect(line.error.details).toMatchObject({ reason: "client-deadline", deadlineMs, delivery: "partial", step: 0 });
      expect(line.error.details.receipts[0]).toMatchObject({ status: "failed", delivery: "partial", cleanup: { keys_released: true } });
      expect(ms).toBeGreaterThanOrEqual(deadlineMs);
      expect(ms).toBeLessThan(deadlineMs + 2000);
      // The app saw Shift go down and come up when the deadline passed, not 10 s later.
      const up = await f.waitFor((e) => e.event === "key" && e.type === "release" && /Shift/.test(String(e.keyval)), 5000, mark);
      const down = since(f, mark).find((e) => e.event === "key" && e.type === "press" && /Shift/.test(String(e.keyval)));
      expect(down).toBeTruthy();
      const held = Math.round(up.t - down!.t);
      metric("serve.client-deadline", "shift_held_ms", held);
      expect(held).toBeLessThan(3000);
    });
  });

  describe("element drag in Chromium (HTML5 drag and drop)", () => {
    let web: WebFixture;
    let browser: TreeApp;
    let fg: Serve;
    let startFailure: Error | undefined;

    beforeAll(async () => {
      web = await startWebFixture("dnd.html");
      const profile = mkdtempSync(join(tmpdir(), "deckhand-chromium-dnd-"));
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
      try {
        browser = await launchAppTree(
          desktop,
          browserArgv("chromium", web.url, profile, DND_WINDOW),
          { env: {}, timeoutMs: 90_000, titleMatches: /deckhand dnd fixture/ },
        );
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(fg, browser.pid);
      } catch (err) {
        startFailure = err as Error;
      }
    }, 180_000);
    afterAll(async () => {
      await fg?.close();
      await browser?.stop();
      await web?.close();
    }, 30_000);

    rowIt("drag.chromium.elements", async () => {
      if (startFailure) throw new Error(`chromium did not start: ${startFailure.message}`);
      const st = await waitUntil("the dnd page in Chromium's tree", 30_000, async () => {
        const r = await fg.request("get-app-state", { app: `pid:${browser.pid}`, windowId: browser.windows[0], noScreenshot: true });
        if (!r.ok) return undefined;
        const els = r.result.snapshot.elements;
        return els.some((e: any) => e.title === "Apple" && e.bounds) && els.some((e: any) => e.title === "Drop here" && e.bounds) ? r.result : undefined;
      });
      const apple = findEl(st, /./, "Apple");
      const zone = findEl(st, /./, "Drop here");
      const mark = web.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: `pid:${browser.pid}`, windowId: browser.windows[0], fromElementIndex: apple.index, toElementIndex: zone.index });
      const ms = Math.round(performance.now() - t0);
      metric("drag.chromium.elements", "drag_ms", ms);
      console.log(`[drag] Chromium: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; page events ${JSON.stringify(web.events().slice(mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      // What the page saw: a drag of Apple and one drop of "Apple" on the zone.
      await web.waitFor((e) => e.event === "drop", 5000, mark);
      const events = web.events().slice(mark);
      expect(events.filter((e) => e.event === "dragstart").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop zone", text: "Apple" })]);
      expect(r.result.verification.verified).toBe(true);
      expect(r.result.drag.to).toMatchObject({ index: zone.index, title: "Drop here" });
      expect(r.result.drag.targetChanged.length).toBeGreaterThan(0);
      expect(alivePid(browser.pid)).toBe(true);
    }, 180_000);
  });

  // ---- issue 13 coverage: element drag on Qt5 and Firefox
  describe("element drag on the Qt5 fixture (QListWidget item onto a QLabel)", () => {
    let f: Fixture;
    let fg: Serve;
    let win: number;
    const app = () => `pid:${f.pid}`;

    beforeAll(async () => {
      f = await launchFixtureScript(desktop, QT5_FIXTURE, { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 30_000 });
      win = (f.events().find((e) => e.event === "ready") as any).windows[0].xid;
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
      await waitAccessible(fg, f.pid);
    }, 60_000);
    afterAll(async () => {
      await fg?.close();
      await f?.stop();
    });

    rowIt("drag.qt5.elements", async () => {
      const r0 = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      expect(r0.ok, JSON.stringify(r0.error)).toBe(true);
      const st = r0.result;
      const apple = findEl(st, /list_item/, "Apple");
      const target = findEl(st, /./, "Drop here");
      const before = scene(desktop);
      const mark = f.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), windowId: win, fromElementIndex: apple.index, toElementIndex: target.index, snapshotId: st.snapshot.snapshotId });
      const ms = Math.round(performance.now() - t0);
      metric("drag.qt5.elements", "drag_ms", ms);
      console.log(`[drag] Qt5 fixture: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; app events ${JSON.stringify(since(f, mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await f.waitFor((e) => e.event === "drop", 5000, mark);
      const events = since(f, mark);
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop target", text: "Apple" })]);
      expect(r.result.verification.verified).toBe(true);
      expect(r.result.drag.targetChanged).toContain("name");
      expect(r.result.drag.from).toMatchObject({ index: apple.index, title: "Apple" });
      expect(r.result.drag.to).toMatchObject({ index: target.index, title: "Drop here" });
      expect(r.result.cleanup).toMatchObject({ buttons_released: true, pointer_restored: true });
      const after = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      findEl(after.result, /./, "Dropped: Apple");
      expect(pointer(desktop)).toBe(before.pointer);
    });
  });

  describe("element drag on the GTK4 fixture (Gtk.DragSource onto a Gtk.DropTarget)", () => {
    let f: Fixture;
    let fg: Serve;
    let win: number;
    const app = () => `pid:${f.pid}`;

    beforeAll(async () => {
      f = await launchFixtureScript(desktop, GTK4_FIXTURE, { timeoutMs: 30_000 });
      win = (f.events().find((e) => e.event === "ready") as any).windows[0].xid;
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
      await waitAccessible(fg, f.pid);
    }, 60_000);
    afterAll(async () => {
      await fg?.close();
      await f?.stop();
    });

    rowIt("drag.gtk4.elements", async () => {
      const r0 = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      expect(r0.ok, JSON.stringify(r0.error)).toBe(true);
      const st = r0.result;
      const apple = findEl(st, /label/, "Apple");
      const target = findEl(st, /label/, "Drop here");
      const before = scene(desktop);
      const mark = f.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), windowId: win, fromElementIndex: apple.index, toElementIndex: target.index, snapshotId: st.snapshot.snapshotId });
      const ms = Math.round(performance.now() - t0);
      metric("drag.gtk4.elements", "drag_ms", ms);
      console.log(`[drag] GTK4 fixture: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; app events ${JSON.stringify(since(f, mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await f.waitFor((e) => e.event === "drop", 5000, mark);
      const events = since(f, mark);
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop target", text: "Apple" })]);
      expect(r.result.verification.verified).toBe(true);
      expect(r.result.drag.targetChanged).toContain("name");
      expect(r.result.drag.to).toMatchObject({ index: target.index, title: "Drop here" });
      expect(r.result.cleanup).toMatchObject({ buttons_released: true, pointer_restored: true });
      const after = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      findEl(after.result, /./, "Dropped: Apple");
      expect(pointer(desktop)).toBe(before.pointer);
    });
  });

  describe("element drag in Firefox (HTML5 drag and drop)", () => {
    let web: WebFixture;
    let browser: TreeApp;
    let fg: Serve;
    let startFailure: Error | undefined;

    beforeAll(async () => {
      web = await startWebFixture("dnd.html");
      const profile = mkdtempSync(join(tmpdir(), "deckhand-firefox-dnd-"));
      writeFirefoxPrefs(profile);
      fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
      try {
        browser = await launchAppTree(desktop, browserArgv("firefox", web.url, profile, DND_WINDOW), {
          env: FIREFOX_ENV,
          timeoutMs: 90_000,
          titleMatches: /deckhand dnd fixture/,
        });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(fg, browser.pid);
      } catch (err) {
        startFailure = err as Error;
      }
    }, 180_000);
    afterAll(async () => {
      await fg?.close();
      await browser?.stop();
      await web?.close();
    }, 30_000);

    rowIt("drag.firefox.elements", async () => {
      if (startFailure) throw new Error(`firefox did not start: ${startFailure.message}`);
      const st = await waitUntil("the dnd page in Firefox's tree", 30_000, async () => {
        const r = await fg.request("get-app-state", { app: `pid:${browser.pid}`, windowId: browser.windows[0], noScreenshot: true });
        if (!r.ok) return undefined;
        const els = r.result.snapshot.elements;
        return els.some((e: any) => e.title === "Apple" && e.bounds) && els.some((e: any) => e.title === "Drop here" && e.bounds) ? r.result : undefined;
      });
      const apple = findEl(st, /./, "Apple");
      const zone = findEl(st, /./, "Drop here");
      const mark = web.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: `pid:${browser.pid}`, windowId: browser.windows[0], fromElementIndex: apple.index, toElementIndex: zone.index });
      const ms = Math.round(performance.now() - t0);
      metric("drag.firefox.elements", "drag_ms", ms);
      console.log(`[drag] Firefox: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; page events ${JSON.stringify(web.events().slice(mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      // What the page saw: a drag of Apple and one drop of "Apple" on the zone.
      await web.waitFor((e) => e.event === "drop", 5000, mark);
      const events = web.events().slice(mark);
      expect(events.filter((e) => e.event === "dragstart").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop zone", text: "Apple" })]);
      expect(r.result.verification.verified).toBe(true);
      expect(r.result.drag.to).toMatchObject({ index: zone.index, title: "Drop here" });
      expect(r.result.drag.targetChanged.length).toBeGreaterThan(0);
      expect(alivePid(browser.pid)).toBe(true);
    }, 180_000);
  });
  // ---- end issue 13 coverage
});
