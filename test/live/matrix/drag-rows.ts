// Issue 13 items 4-6 as matrix rows on a desk (desk.ts): element-to-element
// drag (the GTK3 DnD fixture, test/fixtures/apps/dnd_fixture.py; the GTK4
// and Qt5 fixtures; Chromium and Firefox on test/fixtures/web/dnd.html),
// the cross-process foreground lease (two deckhand processes typing into the
// fixture's entry at once; a held lease), and serve's safe retries (one id
// sent three times: one click; a client deadline that passes mid-typing).
// The X11 run (test/live/drag-lease.test.ts) and the Wayland run
// (test/live/matrix-wayland.test.ts) share them. What the app saw is each
// row's main oracle (its own log, or the page's); the pointer oracles are
// the desk's (X11: the X server's pointer; Wayland: where the fixture last
// saw it). Rows: rows.ts ("drag-lease").
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { alivePid, GTK4_FIXTURE, QT5_FIXTURE, waitUntil, xdotool, type Fixture, type TreeApp } from "../harness.ts";
import { deckhand, newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { browserArgv, FIREFOX_ENV, writeFirefoxPrefs } from "../app-profiles.ts";
import { swaymsg } from "../wayland.ts";
import { nativeBrowserArgv, rowTest, type MatrixDesk } from "./desk.ts";
import { quietViolations, since } from "./oracles.ts";
import { RawServe } from "./raw-serve.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { findEl, waitAccessible } from "./toolkit.ts";
import { settledTree } from "./wayland-oracles.ts";

export const DND_FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "apps", "dnd_fixture.py");
const DND_TITLE = "deckhand dnd fixture";
/** The drag page's browser window (smaller than the form page's). */
const DND_WINDOW = { width: 1000, height: 700 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What was inserted into a control since mark, in order (the fixture logs every insertion). */
function insertedSince(f: Fixture, control: string, mark: number): string {
  return f
    .events()
    .slice(mark)
    .filter((x) => x.event === "insert" && x.control === control)
    .map((x) => String(x.text))
    .join("");
}

/**
 * Moves a window behind deckhand's back (X11: the window manager through
 * xdotool; Wayland: sway floats it, then places it; a tiled view cannot be
 * placed).
 */
async function moveWindow(desk: MatrixDesk, win: number, x: number, y: number): Promise<void> {
  if (desk.kind === "x11") return void (await xdotool(desk.desktop, ["windowmove", "--sync", String(win), String(x), String(y)]));
  await swaymsg(desk.desktop.env, "command", `[con_id=${win}] floating enable, move position ${x} ${y}`);
  await settledTree(desk.desktop);
}

/** Registers the drag, lease and serve rows inside the caller's describe; `file` names the test file in the results. */
export function dragRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  let stateDir: string;
  const rowIt = rowTest(on, desk, file, 120_000);

  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
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
      dnd = await desk().launchFixture({ timeoutMs: 30_000 }, DND_FIXTURE);
      win = await desk().windowId(dnd, DND_TITLE);
      fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground"] });
      bg = new Serve(desk().desktop, { stateDir });
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
      await moveWindow(desk(), win, st.window.bounds.x + 60, st.window.bounds.y + 40);
      await waitUntil("the window to move", 5000, async () => {
        const r = await fg.request("list-windows", { app: app() });
        const b = r.ok ? r.result.windows.find((w: any) => w.windowId === win)?.bounds : null;
        return b && b.x !== st.window.bounds.x ? b : undefined;
      });
      const before = await desk().scene(dnd);
      const mark = dnd.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), fromElementIndex: apple.index, toElementIndex: target.index, snapshotId: st.snapshot.snapshotId });
      const ms = Math.round(performance.now() - t0);
      metric("drag.fixture.elements", "drag_ms", ms);
      console.log(`[drag] GTK3 fixture: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; app events ${JSON.stringify(since(dnd, mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      const res = r.result;
      expect(res.verification.verified).toBe(true);
      expect(res.drag.targetChanged).toContain("name");
      expect(res.drag.from).toMatchObject({ index: apple.index, role: "button", title: "Apple" });
      expect(res.drag.to).toMatchObject({ index: target.index, title: "Drop here" });
      // The points were the live centres, not the snapshot's.
      expect(res.drag.from.point.x).toBeGreaterThan(apple.bounds.x + apple.bounds.width / 2 + 30);
      expect(res.cleanup).toMatchObject({ buttons_released: true, pointer_restored: desk().restoresPointer });
      // What the app saw: one drag of Apple, one drop of "Apple" on the target, no click.
      const events = since(dnd, mark);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop target", text: "Apple" })]);
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.some((e) => e.event === "clicked")).toBe(false);
      // A fresh observation reads the drop.
      findEl(await observe(fg), /./, "Dropped: Apple");
      expect(await desk().pointerAfterInputViolations(dnd, before)).toEqual([]);
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
      const before = await desk().scene(dnd);
      const mark = dnd.events().length;
      const r = await bg.request("drag", { app: app(), fromElementIndex: cherry.index, toElementIndex: target.index });
      expect(r.ok).toBe(false);
      expect(r.error!.code).toBe("FOREGROUND_REQUIRED");
      expect(r.error!.details.delivery).toBe("not_dispatched");
      expect(await quietViolations(dnd, mark)).toEqual([]);
      expect(desk().sceneViolations(before, await desk().scene(dnd))).toEqual([]);
    });
  });

  describe("the foreground lease on the GTK3 fixture", () => {
    let f: Fixture;
    let bg: Serve;
    let canvas: any;

    beforeAll(async () => {
      f = await desk().launchFixture({ timeoutMs: 30_000 }, DND_FIXTURE);
      bg = new Serve(desk().desktop, { stateDir });
      await waitAccessible(bg, f.pid);
      const r = await bg.request("get-app-state", { app: `pid:${f.pid}`, noScreenshot: true });
      if (!r.ok) throw new Error(JSON.stringify(r.error));
      findEl(r.result, /text_field/, "Name");
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
      const [sa, sb] = [new Serve(desk().desktop, { stateDir: dirA, args: ["--allow-foreground"] }), new Serve(desk().desktop, { stateDir: dirB, args: ["--allow-foreground"] })];
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
        }).catch(async (err) => {
          // The fixture's own output when it exited (waitFor says so), else a plain timeout.
          const exited = await f.waitFor(() => false, 200).then(() => "", (e) => String((e as Error).message).slice(0, 1500));
          const evs = f.events().slice(mark);
          const counts: Record<string, number> = {};
          for (const e of evs) counts[e.event] = (counts[e.event] ?? 0) + 1;
          const got = insertedSince(f, "Name", mark);
          throw new Error(`${(err as Error).message}; inserted ${JSON.stringify(got.match(/a+|b+/g)?.map((x) => `${x[0]}x${x.length}`))}; since the typing began the fixture logged ${JSON.stringify(counts)}, ${insertedSince(f, "Name", mark).length} characters inserted; fixture alive ${alivePid(f.pid)} (${exited}); answers ${JSON.stringify([ra.r.ok ? ra.r.result.charsSent : ra.r.error, rb.r.ok ? rb.r.result.charsSent : rb.r.error]).slice(0, 600)}`);
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
        const before = await desk().scene(f);
        const mark = f.events().length;
        const x = canvas.bounds.x + 20;
        const y = canvas.bounds.y + 20;
        const t0 = performance.now();
        const r = await deckhand(desk().desktop, ["click", "--app", `pid:${f.pid}`, "--x", String(x), "--y", String(y), "--allow-foreground"], { stateDir, env: { DECKHAND_FOREGROUND_WAIT_MS: "1500" } });
        const ms = Math.round(performance.now() - t0);
        metric("lease.busy", "waited_ms", ms);
        expect(r.envelope.ok).toBe(false);
        expect(r.envelope.error!.code, JSON.stringify(r.envelope.error)).toBe("FOREGROUND_BUSY");
        expect(r.envelope.error!.details).toMatchObject({ holderPid: holder.pid!, holderCommand: "deckhand run (held by the test)", holderSince: since0, delivery: "not_dispatched" });
        expect(r.envelope.error!.details.waitedMs as number).toBeGreaterThanOrEqual(1500);
        expect(await quietViolations(f, mark)).toEqual([]);
        expect(desk().sceneViolations(before, await desk().scene(f))).toEqual([]);
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
      f = await desk().launchFixture({ timeoutMs: 30_000 }, DND_FIXTURE);
      const dir = newStateDir();
      raw = new RawServe(desk().desktop, dir);
      fgRaw = new RawServe(desk().desktop, dir, ["--allow-foreground"]);
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

  for (const kind of ["chromium", "firefox"] as const) browserDragRow(on, desk, file, kind);
  toolkitDragRow(on, desk, file, "qt5");
  toolkitDragRow(on, desk, file, "gtk4");
}

/** An element drag onto the drop zone of test/fixtures/web/dnd.html in a browser: the page's own events are the oracle. */
function browserDragRow(on: MatrixDesktop, desk: () => MatrixDesk, file: string, kind: "chromium" | "firefox"): void {
  const id = `drag.${kind}.elements`;
  describe(`element drag in ${kind} (HTML5 drag and drop)`, () => {
    let web: WebFixture;
    let browser: TreeApp;
    let fg: Serve;
    let startFailure: Error | undefined;

    // dragRows' own beforeAll (build, oracles proved) has run first.
    beforeAll(async () => {
      web = await startWebFixture("dnd.html");
      const profile = mkdtempSync(join(tmpdir(), `deckhand-${kind}-dnd-`));
      if (kind === "firefox") writeFirefoxPrefs(profile);
      desk().handOver(profile);
      fg = new Serve(desk().desktop, { stateDir: newStateDir(), args: ["--allow-foreground"] });
      try {
        const argv = nativeBrowserArgv(desk(), kind, browserArgv(kind, web.url, profile, DND_WINDOW));
        const env = { ...(kind === "firefox" ? FIREFOX_ENV : {}), ...desk().browser(kind).env };
        browser = await desk().launchAppTree(argv, { env, timeoutMs: 90_000, titleMatches: /deckhand dnd fixture/ });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(fg, browser.pid);
      } catch (err) {
        // The row fails with this reason, recorded, rather than being skipped.
        startFailure = err as Error;
      }
    }, 180_000);
    afterAll(async () => {
      await fg?.close();
      await browser?.stop();
      await web?.close();
    }, 30_000);

    const rowIt = rowTest(on, desk, file, 180_000, () => {
      if (startFailure) throw new Error(`${kind} did not start: ${startFailure.message}`);
    });

    rowIt(id, async () => {
      const st = await waitUntil(`the dnd page in ${kind}'s tree`, 30_000, async () => {
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
      metric(id, "drag_ms", ms);
      console.log(`[drag] ${kind}: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; page events ${JSON.stringify(web.events().slice(mark).map((e) => e.event))}`);
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
    });
  });
}

/** The GTK4 and Qt5 fixtures' drag: the Apple item (a Gtk.DragSource label; a QListWidget item) onto the Drop here label. */
const TOOLKIT_DRAG = {
  qt5: { script: QT5_FIXTURE, env: { QT_ACCESSIBILITY: "1" } as Record<string, string>, source: /list_item/, target: /./, what: "the Qt5 fixture (QListWidget item onto a QLabel)" },
  gtk4: { script: GTK4_FIXTURE, env: {} as Record<string, string>, source: /label/, target: /label/, what: "the GTK4 fixture (Gtk.DragSource onto a Gtk.DropTarget)" },
};

function toolkitDragRow(on: MatrixDesktop, desk: () => MatrixDesk, file: string, kit: "qt5" | "gtk4"): void {
  const id = `drag.${kit}.elements`;
  const k = TOOLKIT_DRAG[kit];
  describe(`element drag on ${k.what}`, () => {
    let f: Fixture;
    let fg: Serve;
    let win: number;
    const app = () => `pid:${f.pid}`;

    // dragRows' own beforeAll (build, oracles proved) has run first.
    beforeAll(async () => {
      f = await desk().launchFixture({ env: k.env, timeoutMs: 30_000 }, k.script);
      win = await desk().windowId(f, (f.events().find((e) => e.event === "ready") as any).windows[0].title);
      fg = new Serve(desk().desktop, { stateDir: newStateDir(), args: ["--allow-foreground"] });
      await waitAccessible(fg, f.pid);
    }, 60_000);
    afterAll(async () => {
      await fg?.close();
      await f?.stop();
    });

    rowTest(on, desk, file, 120_000)(id, async () => {
      const r0 = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      expect(r0.ok, JSON.stringify(r0.error)).toBe(true);
      const st = r0.result;
      const apple = findEl(st, k.source, "Apple");
      const target = findEl(st, k.target, "Drop here");
      const before = await desk().scene(f);
      const mark = f.events().length;
      const t0 = performance.now();
      const r = await fg.request("drag", { app: app(), windowId: win, fromElementIndex: apple.index, toElementIndex: target.index, snapshotId: st.snapshot.snapshotId });
      const ms = Math.round(performance.now() - t0);
      metric(id, "drag_ms", ms);
      console.log(`[drag] ${kit} fixture: ${ms} ms ${JSON.stringify(r.ok ? r.result.drag : r.error)}; app events ${JSON.stringify(since(f, mark).map((e) => e.event))}`);
      expect(r.ok, JSON.stringify(r.error)).toBe(true);
      await f.waitFor((e) => e.event === "drop", 5000, mark);
      const events = since(f, mark);
      expect(events.filter((e) => e.event === "drag_begin").map((e) => e.control)).toEqual(["Apple"]);
      expect(events.filter((e) => e.event === "drop")).toEqual([expect.objectContaining({ control: "Drop target", text: "Apple" })]);
      expect(r.result.verification.verified).toBe(true);
      expect(r.result.drag.targetChanged).toContain("name");
      expect(r.result.drag.from).toMatchObject({ index: apple.index, title: "Apple" });
      expect(r.result.drag.to).toMatchObject({ index: target.index, title: "Drop here" });
      expect(r.result.cleanup).toMatchObject({ buttons_released: true, pointer_restored: desk().restoresPointer });
      const after = await fg.request("get-app-state", { app: app(), windowId: win, noScreenshot: true });
      findEl(after.result, /./, "Dropped: Apple");
      expect(await desk().pointerAfterInputViolations(f, before)).toEqual([]);
    });
  });
}
