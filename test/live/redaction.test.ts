// A whole-screen screenshot on the real desktop: xterm (a built-in denied
// terminal) showing a marker beside the fixture app (allowed). The xterm's
// window is black in the image, the fixture's is not, its password field is
// black, and the result counts one denied window. Blocked URLs on a
// browser-like GTK app (no real browser is installed): not observed, and
// blacked out on the whole screen.
import { execFileSync } from "node:child_process";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, desktopEnv, launchApp, launchFixture, SYSTEM_PYTHON, useDesktop, waitUntil, xdotool, type App, type Fixture } from "./harness.ts";
import { deckhand, newStateDir, ok, requireBuild } from "./deckhand.ts";

type Box = { x: number; y: number; width: number; height: number };

/** Largest channel value in a region of a PNG, 0..1 (ImageMagick). */
function maxima(png: string, b: Box): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-crop", `${b.width}x${b.height}+${b.x}+${b.y}`, "+repage", "-format", "%[fx:maxima]", "info:"]).toString());
}
/** Mean of a region of a PNG, 0..1. */
function mean(png: string, b: Box): number {
  return Number(execFileSync("/usr/bin/convert", [png, "-crop", `${b.width}x${b.height}+${b.x}+${b.y}`, "+repage", "-format", "%[fx:mean]", "info:"]).toString());
}
/**
 * A browser as policy sees one: Python run through a symlink named "midori"
 * (its /proc comm is a known browser's executable), a GTK window whose
 * entry shows the page URL, as a browser's address bar does.
 */
const BROWSER_PY = `
import sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
url, title, x, y = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
w = Gtk.Window(title=title)
w.set_default_size(420, 160)
w.move(x, y)
box = Gtk.Box(orientation=Gtk.Orientation.VERTICAL, spacing=6)
entry = Gtk.Entry()
entry.set_text(url)
box.pack_start(entry, False, False, 0)
box.pack_start(Gtk.Label(label="Account balance: 1,000,000"), True, True, 0)
w.add(box)
w.connect("destroy", Gtk.main_quit)
w.show_all()
Gtk.main()
`;
async function launchBrowserLike(desktop: Parameters<typeof launchApp>[0], url: string, x: number, y: number): Promise<App> {
  const dir = mkdtempSync(join(tmpdir(), "deckhand-browser-"));
  const midori = join(dir, "midori");
  symlinkSync(SYSTEM_PYTHON, midori);
  return await launchApp(desktop, [midori, "-c", BROWSER_PY, url, "Page — Midori", String(x), String(y)]);
}

const overlap = (a: Box, b: Box) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

describeLive("whole-screen screenshot redaction", () => {
  const desktop = useDesktop();
  let state: string;
  let fixture: Fixture;
  let xterm: App;
  let xtermBox: Box;
  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    fixture = await launchFixture(desktop);
    xterm = await launchApp(desktop, ["/usr/bin/xterm", "-geometry", "50x8+1250+760", "-bg", "white", "-fg", "black", "-e", "sh", "-c", "echo SECRET-MARKER; sleep 600"]);
    const geo = await waitUntil("the xterm's geometry", 5000, async () => {
      const out = await xdotool(desktop, ["getwindowgeometry", "--shell", String(xterm.windows[0])]);
      return /WIDTH=\d+/.test(out) ? out : undefined;
    });
    const v = (k: string) => Number(new RegExp(`${k}=(-?\\d+)`).exec(geo)![1]);
    xtermBox = { x: v("X"), y: v("Y"), width: v("WIDTH"), height: v("HEIGHT") };
  });
  afterAll(async () => {
    await xterm?.stop();
    await fixture?.stop();
  });

  it("the denied xterm is black (it is not, unredacted), the allowed fixture is not, the result counts 1 denied window", async () => {
    const main = (await ok(desktop, ["list-windows", "--app", `pid:${fixture.pid}`], { stateDir: state })).windows.find((w: any) => w.title === "deckhand fixture");
    const fixtureBox: Box = main.bounds;
    expect(overlap(fixtureBox, { x: xtermBox.x - 8, y: xtermBox.y - 40, width: xtermBox.width + 16, height: xtermBox.height + 48 }), "the test's windows must not overlap").toBe(false);

    // Control: without deckhand, the xterm's area shows its white background and text.
    const raw = join(state, "raw.png");
    execFileSync("/usr/bin/import", ["-window", "root", raw], { env: desktopEnv(desktop) });
    expect(mean(raw, xtermBox), "the xterm is visible in an unredacted capture").toBeGreaterThan(0.5);

    const r = await ok(desktop, ["screenshot"], { stateDir: state });
    const png = r.screenshot.path;
    expect(r.windowId).toBe(0);
    expect(r.screenshot.origin).toEqual({ x: 0, y: 0 });
    if (process.env.DECKHAND_KEEP_SHOTS) console.log(png, raw);
    console.log(`redacted: ${JSON.stringify(r.redacted)}; helper count ${r.screenshot.redacted}`);
    expect(r.redacted.deniedWindows).toBe(1);
    expect(r.redacted.blockedUrls).toBe(0);
    expect(r.redacted.unidentifiedWindows).toBe(0);
    // Every pixel over the xterm, and its title bar above, is black.
    expect(maxima(png, xtermBox)).toBe(0);
    expect(maxima(png, { x: xtermBox.x, y: xtermBox.y - 20, width: xtermBox.width, height: 20 })).toBe(0);
    // The allowed app is shown.
    expect(mean(png, fixtureBox)).toBeGreaterThan(0.3);
  });

  it("secure fields of every window are black in a whole-screen screenshot too", async () => {
    const main = (await ok(desktop, ["list-windows", "--app", `pid:${fixture.pid}`], { stateDir: state })).windows.find((w: any) => w.title === "deckhand fixture");
    const st = await ok(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(main.windowId), "--no-screenshot"], { stateDir: state });
    const pw = st.snapshot.elements.find((e: any) => e.secure);
    expect(pw).toBeDefined();
    const r = await ok(desktop, ["screenshot"], { stateDir: state });
    expect(r.redacted.secureFields).toBeGreaterThanOrEqual(1);
    expect(maxima(r.screenshot.path, pw.bounds)).toBe(0);
    // Its neighbourhood is not: the black is the field, not the window.
    expect(mean(r.screenshot.path, st.window.bounds)).toBeGreaterThan(0.3);
  });

  it("a browser on a blocked page: get-app-state and screenshot --app are BLOCKED_URL; on the whole screen it is black, a browser on an allowed page is not", async () => {
    const policy = join(state, "policy.toml");
    writeFileSync(policy, 'blocked_urls = ["*://*.bank.example/*"]\n');
    const blocked = await launchBrowserLike(desktop, "https://www.bank.example/account?session=SECRET", 1000, 320);
    const allowed = await launchBrowserLike(desktop, "https://docs.example.org/start", 1000, 560);
    try {
      for (const args of [["get-app-state", "--app", `pid:${blocked.pid}`], ["screenshot", "--app", `pid:${blocked.pid}`]]) {
        const r = await deckhand(desktop, [...args, "--policy", policy], { stateDir: state });
        expect(r.envelope.error?.code, args.join(" ")).toBe("BLOCKED_URL");
        expect(r.envelope.error?.details.rule).toBe("user:blocked_urls[0]");
        expect(r.stdout).not.toContain("bank.example/account");
      }
      const fine = await ok(desktop, ["get-app-state", "--app", `pid:${allowed.pid}`, "--policy", policy], { stateDir: state });
      expect(fine.screenshot).not.toBeNull();

      const r = await ok(desktop, ["screenshot", "--policy", policy], { stateDir: state });
      console.log(`redacted with a blocked page: ${JSON.stringify(r.redacted)}`);
      expect(r.redacted).toMatchObject({ deniedWindows: 1, blockedUrls: 1, unidentifiedWindows: 0 });
      const box = async (id: number): Promise<Box> => {
        const geo = await xdotool(desktop, ["getwindowgeometry", "--shell", String(id)]);
        const v = (k: string) => Number(new RegExp(`${k}=(-?\\d+)`).exec(geo)![1]);
        return { x: v("X"), y: v("Y"), width: v("WIDTH"), height: v("HEIGHT") };
      };
      const [b, a] = [await box(blocked.windows[0]!), await box(allowed.windows[0]!)];
      const raw = join(state, "raw-browsers.png");
      execFileSync("/usr/bin/import", ["-window", "root", raw], { env: desktopEnv(desktop) });
      expect(mean(raw, b), "the blocked page is visible in an unredacted capture").toBeGreaterThan(0.3);
      expect(maxima(r.screenshot.path, b)).toBe(0);
      expect(mean(r.screenshot.path, a)).toBeGreaterThan(0.3);
    } finally {
      await blocked.stop();
      await allowed.stop();
    }
  });
});
