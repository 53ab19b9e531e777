// Issue 15, observation speed: the helper reads an application's tree over
// the application's own D-Bus socket (at-spi2-atk's GetApplicationBusAddress,
// the peer checked to be the app's pid) instead of through the bus daemon,
// which relayed every one of a read's hundreds of calls. These rows prove it
// happens where it should (GTK 3, Chromium), not where it cannot (Qt 5), that
// the tree read is the same node for node as through the daemon, and that a
// get-app-state screenshot still blacks out a password field with text in it
// (the secure-field search shares the tree read's cache answer and the
// direct connection).
//
// Registered on a desk (desk.ts): the X11 run (test/live/observe-direct.test.ts)
// and the Wayland run (test/live/matrix-wayland.test.ts). deckhand and its
// helper run as the apps' user (desk.asApps): an app's own socket accepts
// its own uid only, so on the Wayland desktop under root (the apps run as
// deckhand-wl) a root helper reads through the bus; run as the user, as
// users run it, it connects directly.
import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { encodeFrame, FrameDecoder } from "../../../src/wire/codec.ts";
import { browserArgv, browserProfile } from "../app-profiles.ts";
import { HELPER, newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { desktopEnv, QT5_FIXTURE, waitUntil, type Fixture, type TreeApp } from "../harness.ts";
import { nativeBrowserArgv, rowTest, startFailed, type MatrixDesk } from "./desk.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { waitAccessible } from "./toolkit.ts";

const SECRET = "hunter2-direct";

type Box = { x: number; y: number; width: number; height: number };

/** Largest channel value in a region of a PNG whose pixel (0, 0) is at `origin`, 0..1 (ImageMagick). */
function maxima(png: string, b: Box, origin: { x: number; y: number }): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-crop", `${b.width}x${b.height}+${b.x - origin.x}+${b.y - origin.y}`, "+repage", "-format", "%[fx:maxima]", "info:"]).toString());
}
function mean(png: string): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-format", "%[fx:mean]", "info:"]).toString());
}

/** The helper on its own (its wire protocol), run as the apps' user, with its debug log kept. */
class Helper {
  private dec = new FrameDecoder();
  private waiters = new Map<number, (f: any) => void>();
  private id = 1;
  private child;
  stderr = "";
  private ready: Promise<void>;
  constructor(desk: MatrixDesk, env: Record<string, string> = {}) {
    const [cmd, ...args] = desk.asApps([HELPER]);
    this.child = spawn(cmd!, args, { env: desktopEnv(desk.desktop, { DECKHAND_HELPER_DEBUG: "1", ...env }), stdio: ["pipe", "pipe", "pipe"] });
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
async function bothWays(desk: MatrixDesk, pid: number, windowId: number): Promise<{ direct: any; bus: any; log: string; busLog: string }> {
  const d = new Helper(desk);
  const b = new Helper(desk, { DECKHAND_NO_DIRECT: "1" });
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

/** Registers the direct-connection rows inside the caller's describe; `file` names the test file in the results. */
export function observeDirectRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  // deckhand as the apps' user: its state directory theirs too. The session may focus a field for a set-up.
  let serve: Serve;
  let state: string;
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    state = desk().handOver(newStateDir());
    serve = new Serve(desk().desktop, { stateDir: state, args: ["--allow-foreground"], wrapArgv: (argv) => desk().asApps(argv) });
  }, 90_000);
  afterAll(async () => {
    await serve?.close();
  });
  const startFailure = new Map<string, Error>();
  const rowIt = rowTest(on, desk, file, 90_000, (id) => startFailed(startFailure, id));

  /** The secure field focused through deckhand, the secret typed by a tool that is not deckhand (deckhand refuses to type into it). */
  async function typeSecret(app: string, windowId: number, pw: any): Promise<void> {
    await desk().raise(windowId);
    await serve.ok("focus", { app, windowId, elementIndex: pw.index });
    await desk().typeRaw(SECRET);
  }

  /** get-app-state through serve: the password field (bounds from the same snapshot) is black, the window is not. */
  async function passwordBlack(row: string, app: string, windowId: number, field: (els: any[]) => any): Promise<void> {
    const t0 = performance.now();
    const st = await serve.ok("get-app-state", { app, windowId, format: "full" });
    metric(row, "get_app_state_ms", Math.round(performance.now() - t0));
    const pw = field(st.snapshot.elements);
    expect(pw, "the password field is in the tree, secure, with bounds").toBeDefined();
    expect(pw.secure).toBe(true);
    expect(st.screenshot, JSON.stringify(st.screenshotError)).not.toBeNull();
    expect(st.screenshot.redacted).toBeGreaterThanOrEqual(1);
    expect(maxima(st.screenshot.path, pw.bounds, st.screenshot.origin), "every pixel of the password field is black").toBe(0);
    expect(mean(st.screenshot.path), "the rest of the window is shown").toBeGreaterThan(0.3);
  }

  describe("GTK3 fixture", () => {
    let f: Fixture;
    let win: number;
    beforeAll(async () => {
      try {
        f = await desk().launchFixture();
        win = await desk().windowId(f, "deckhand fixture");
      } catch (err) {
        startFailure.set("observe.direct.fixture", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await f?.stop();
    });
    rowIt("observe.direct.fixture", async () => {
      const app = `pid:${f.pid}`;
      const st = await serve.ok("get-app-state", { app, windowId: win, noScreenshot: true, format: "full" });
      await typeSecret(app, win, st.snapshot.elements.find((e: any) => e.secure));
      await f.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000);
      sameTree("observe.direct.fixture", await bothWays(desk(), f.pid, win), f.pid);
      await passwordBlack("observe.direct.fixture", app, win, (els) => els.find((e: any) => e.secure));
    });
  });

  describe("Chromium on the web form", () => {
    let web: WebFixture;
    let browser: TreeApp;
    let profile = "";
    beforeAll(async () => {
      web = await startWebFixture();
      try {
        profile = desk().handOver(browserProfile("chromium", "deckhand-chromium-direct-"));
        browser = await desk().launchAppTree(nativeBrowserArgv(desk(), "chromium", browserArgv("chromium", web.url, profile)), { env: desk().browser("chromium").env, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
        await web.waitFor((e) => e.event === "ready", 60_000);
        await waitAccessible(serve, browser.pid);
      } catch (err) {
        startFailure.set("observe.direct.chromium", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await browser?.stop();
      await web?.close();
      if (profile) rmSync(profile, { recursive: true, force: true });
    });
    rowIt(
      "observe.direct.chromium",
      async () => {
        const app = `pid:${browser.pid}`;
        const win = browser.windows[0]!;
        const field = (els: any[]) => els.find((e: any) => e.secure && e.title === "Password");
        // The page's tree arrives after the load.
        const st = await waitUntil("the form's Password field in Chromium's tree", 30_000, async () => {
          const s = await serve.ok("get-app-state", { app, windowId: win, noScreenshot: true, format: "full" });
          return field(s.snapshot.elements)?.bounds ? s : undefined;
        });
        await typeSecret(app, win, field(st.snapshot.elements));
        await web.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000);
        sameTree("observe.direct.chromium", await bothWays(desk(), browser.pid, win), browser.pid);
        await passwordBlack("observe.direct.chromium", app, win, field);
        // The helper found the field by Collection (the cache showed no node managing its descendants).
        const h = new Helper(desk());
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

  describe("Qt 5 fixture", () => {
    let q: Fixture;
    let win: number;
    beforeAll(async () => {
      try {
        q = await desk().launchFixture({ env: { QT_ACCESSIBILITY: "1" }, timeoutMs: 30_000 }, QT5_FIXTURE);
        await waitAccessible(serve, q.pid);
        win = await desk().windowId(q, (q.events().find((e) => e.event === "ready") as any).windows[0].title);
      } catch (err) {
        startFailure.set("observe.direct.qt5-fallback", err as Error);
      }
    }, 60_000);
    afterAll(async () => {
      await q?.stop();
    });
    rowIt("observe.direct.qt5-fallback", async () => {
      const t = await waitUntil("the Qt fixture's tree", 20_000, async () => {
        const r = await bothWays(desk(), q.pid, win);
        return r.direct.nodes.some((n: any) => n.name === "OK") ? r : undefined;
      });
      expect(t.log, "no socket of its own: said so").toMatch(new RegExp(`no direct connection to :[0-9.]+ \\(pid ${q.pid}\\)`));
      expect(t.log).not.toContain("over a direct connection");
      expect(t.direct.nodes).toEqual(t.bus.nodes);
      metric("observe.direct.qt5-fallback", "nodes", t.direct.nodes.length);
    });
  });
}
