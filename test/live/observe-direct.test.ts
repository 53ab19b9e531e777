// Issue 15, observation speed: the helper reads an application's tree over
// the application's own D-Bus socket (at-spi2-atk's GetApplicationBusAddress,
// the peer checked to be the app's pid) instead of through the bus daemon,
// which relayed every one of a read's hundreds of calls. These rows prove it
// happens where it should (GTK 3, Chromium), not where it cannot (Qt 5), that
// the tree read is the same node for node as through the daemon, and that a
// get-app-state screenshot still blacks out a password field with text in it
// (the secure-field search now shares the tree read's cache answer and the
// direct connection).
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startWebFixture, type WebFixture } from "../fixtures/web/server.ts";
import { describeLive, desktopEnv, launchAppTree, launchFixture, launchFixtureScript, QT5_FIXTURE, useDesktop, waitUntil, xdotool, type DesktopLike, type Fixture, type TreeApp } from "./harness.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { proveOracles } from "./matrix/oracles.ts";
import { metric, record } from "./matrix/results.ts";
import { ROWS } from "./matrix/rows.ts";
import { browserArgv } from "./app-profiles.ts";
import { waitAccessible } from "./matrix/toolkit.ts";
import { encodeFrame, FrameDecoder } from "../../src/wire/codec.ts";

const FILE = "observe-direct.test.ts";
const SECRET = "hunter2-direct";

type Box = { x: number; y: number; width: number; height: number };

/** Largest channel value in a region of a PNG whose pixel (0, 0) is at `origin`, 0..1 (ImageMagick). */
function maxima(png: string, b: Box, origin: { x: number; y: number }): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-crop", `${b.width}x${b.height}+${b.x - origin.x}+${b.y - origin.y}`, "+repage", "-format", "%[fx:maxima]", "info:"]).toString());
}
function mean(png: string): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-format", "%[fx:mean]", "info:"]).toString());
}

/** The helper on its own (its wire protocol), with its debug log kept. */
class Helper {
  private dec = new FrameDecoder();
  private waiters = new Map<number, (f: any) => void>();
  private id = 1;
  private child;
  stderr = "";
  private ready: Promise<void>;
  constructor(desktop: DesktopLike, env: Record<string, string> = {}) {
    this.child = spawn(HELPER, [], { env: desktopEnv(desktop, { DECKHAND_HELPER_DEBUG: "1", ...env }), stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.on("data", (d) => (this.stderr = (this.stderr + d).slice(-200_000)));
    let hello: () => void;
    this.ready = new Promise((r) => (hello = r));
    this.child.stdout.on("data", (c: Buffer) => {
      for (const f of this.dec.push(c)) {
        if (f.type === "hello") hello();
        else this.waiters.get(f.id as number)?.(f);
      }
    });
  }
  async req(op: string, args: Record<string, unknown>): Promise<any> {
    await this.ready;
    const id = this.id++;
    const p = new Promise<any>((r) => this.waiters.set(id, r));
    this.child.stdin.write(encodeFrame({ type: "request", id, op, deadline_ms: 20_000, args }));
    const f = await p;
    if (!f.ok) throw new Error(`${op}: ${JSON.stringify(f.error)}`);
    return f.result;
  }
  close(): void {
    this.child.stdin.end();
  }
}

/** The window's tree read twice, over a direct connection (if any) and through the bus daemon only. */
async function bothWays(desktop: DesktopLike, pid: number, windowId: number): Promise<{ direct: any; bus: any; log: string; busLog: string }> {
  const d = new Helper(desktop);
  const b = new Helper(desktop, { DECKHAND_NO_DIRECT: "1" });
  try {
    const args = { pid, window_id: windowId, max_depth: 64, max_children: 1000, max_nodes: 2000 };
    const direct = await d.req("get_tree", args);
    const bus = await b.req("get_tree", args);
    return { direct, bus, log: d.stderr, busLog: b.stderr };
  } finally {
    d.close();
    b.close();
  }
}

describeLive("observation over a direct connection to the application (issue 15)", () => {
  const desktop = useDesktop();
  let bg: Serve;
  let state: string;
  beforeAll(async () => {
    requireBuild();
    await proveOracles(desktop);
    state = newStateDir();
    bg = new Serve(desktop, { stateDir: state });
  }, 90_000);
  afterAll(async () => {
    await bg?.close();
  });

  const startFailure = new Map<string, Error>();
  const rowIt = (id: string, fn: () => Promise<void>, timeout = 90_000) => {
    const r = ROWS.find((x) => x.id === id);
    if (!r) throw new Error(`no matrix row ${id}`);
    it(`${id}: ${r.action} -> ${r.expect}`, () =>
      record(id, FILE, async () => {
        const failed = startFailure.get(id);
        if (failed) throw new Error(`${id}: the app did not start: ${failed.message}`);
        await fn();
      }), timeout);
  };

  /** get-app-state through serve: the password field (bounds from the same snapshot) is black, the window is not. */
  async function passwordBlack(row: string, app: string, windowId: number, field: (els: any[]) => any): Promise<void> {
    const t0 = performance.now();
    const st = await bg.ok("get-app-state", { app, windowId, format: "full" });
    metric(row, "get_app_state_ms", Math.round(performance.now() - t0));
    const pw = field(st.snapshot.elements);
    expect(pw, "the password field is in the tree, secure, with bounds").toBeDefined();
    expect(pw.secure).toBe(true);
    expect(st.screenshot, JSON.stringify(st.screenshotError)).not.toBeNull();
    expect(st.screenshot.redacted).toBeGreaterThanOrEqual(1);
    expect(maxima(st.screenshot.path, pw.bounds, st.screenshot.origin), "every pixel of the password field is black").toBe(0);
    expect(mean(st.screenshot.path), "the rest of the window is shown").toBeGreaterThan(0.3);
  }

  function sameTree(row: string, t: { direct: any; bus: any; log: string; busLog: string }, pid: number): void {
    expect(t.log, "a direct connection was made to the app's pid").toMatch(new RegExp(`direct connection to :[0-9.]+ \\(pid ${pid}\\) in`));
    expect(t.log).toContain("over a direct connection");
    expect(t.busLog).not.toContain("over a direct connection");
    metric(row, "nodes", t.direct.nodes.length);
    metric(row, "calls", t.direct.calls);
    expect(t.direct.nodes.length).toBeGreaterThan(5);
    expect(t.direct.truncated).toBe(t.bus.truncated);
    expect(t.direct.nodes, "node for node the tree read through the bus daemon").toEqual(t.bus.nodes);
  }

  describeLive("GTK3 fixture", () => {
    let f: Fixture;
    let win: number;
    beforeAll(async () => {
      try {
        f = await launchFixture(desktop);
        win = (f.events().find((e) => e.event === "ready") as any).windows.find((w: any) => w.title === "deckhand fixture").xid;
      } catch (err) {
        startFailure.set("observe.direct.fixture", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });
    rowIt("observe.direct.fixture", async () => {
      const st = await bg.ok("get-app-state", { app: `pid:${f.pid}`, windowId: win, noScreenshot: true, format: "full" });
      const pw = st.snapshot.elements.find((e: any) => e.secure);
      await xdotool(desktop, ["mousemove", String(pw.bounds.x + 10), String(pw.bounds.y + Math.floor(pw.bounds.height / 2)), "click", "1"]);
      await xdotool(desktop, ["type", "--delay", "5", SECRET]);
      await f.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000);
      sameTree("observe.direct.fixture", await bothWays(desktop, f.pid, win), f.pid);
      await passwordBlack("observe.direct.fixture", `pid:${f.pid}`, win, (els) => els.find((e: any) => e.secure));
    });
  });

  describeLive("Chromium on the web form", () => {
    let web: WebFixture;
    let browser: TreeApp;
    beforeAll(async () => {
      web = await startWebFixture();
      try {
        const profile = mkdtempSync(join(tmpdir(), "deckhand-chromium-direct-"));
        browser = await launchAppTree(desktop, browserArgv("chromium", web.url, profile), { timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(bg, browser.pid);
      } catch (err) {
        startFailure.set("observe.direct.chromium", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await browser?.stop();
      await web?.close();
    });
    rowIt(
      "observe.direct.chromium",
      async () => {
        const app = `pid:${browser.pid}`;
        const win = browser.windows[0]!;
        const field = (els: any[]) => els.find((e: any) => e.secure && e.title === "Password");
        // The page's tree arrives after the load.
        const st = await waitUntil("the form's Password field in Chromium's tree", 30_000, async () => {
          const s = await bg.ok("get-app-state", { app, windowId: win, noScreenshot: true, format: "full" });
          return field(s.snapshot.elements)?.bounds ? s : undefined;
        });
        const pw = field(st.snapshot.elements);
        await xdotool(desktop, ["mousemove", String(pw.bounds.x + 10), String(pw.bounds.y + Math.floor(pw.bounds.height / 2)), "click", "1"]);
        await xdotool(desktop, ["type", "--delay", "5", SECRET]);
        await web.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000);
        sameTree("observe.direct.chromium", await bothWays(desktop, browser.pid, win), browser.pid);
        await passwordBlack("observe.direct.chromium", app, win, field);
        // The helper found the field by Collection (the cache showed no node managing its descendants).
        const h = new Helper(desktop);
        try {
          const shot = await h.req("screenshot", { window_id: win, path: join(state, "direct-chromium.png"), redact_secure: true, redact: [] });
          expect(shot.redacted).toBeGreaterThanOrEqual(1);
          expect(h.stderr).toMatch(/redact_secure .*: 1 password fields via Collection/);
        } finally {
          h.close();
        }
      },
      120_000,
    );
  });

  describeLive("Qt 5 fixture", () => {
    let q: Fixture;
    beforeAll(async () => {
      try {
        q = await launchFixtureScript(desktop, QT5_FIXTURE, { env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 30_000 });
        await waitAccessible(bg, q.pid);
      } catch (err) {
        startFailure.set("observe.direct.qt5-fallback", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await q?.stop();
    });
    rowIt("observe.direct.qt5-fallback", async () => {
      const win = (q.events().find((e) => e.event === "ready") as any).windows[0].xid;
      const t = await waitUntil("the Qt fixture's tree", 20_000, async () => {
        const r = await bothWays(desktop, q.pid, win);
        return r.direct.nodes.some((n: any) => n.name === "OK") ? r : undefined;
      });
      expect(t.log, "no socket of its own: said so").toMatch(new RegExp(`no direct connection to :[0-9.]+ \\(pid ${q.pid}\\)`));
      expect(t.log).not.toContain("over a direct connection");
      expect(t.direct.nodes).toEqual(t.bus.nodes);
      metric("observe.direct.qt5-fallback", "nodes", t.direct.nodes.length);
    });
  });
});
