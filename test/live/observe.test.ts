// Issue 3: observation through the compiled deckhand and the real Linux
// helper, on a private desktop, against the GTK fixture and gtk3-widget-factory.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { describeLive, launchApp, launchFixture, useDesktop, waitUntil, xdotool, type Fixture } from "./harness.ts";
import { deckhand, element, newStateDir, ok, requireBuild } from "./deckhand.ts";

const SECRET = "s3cr3t-Pa55w0rd-zq";

function grepTree(dir: string, needle: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (readFileSync(p).includes(needle)) hits.push(p);
    }
  };
  walk(dir);
  return hits;
}

/** Differing pixels between two PNGs of the same size (ImageMagick compare -metric AE). */
function differingPixels(a: string, b: string): number {
  try {
    execFileSync("/usr/bin/compare", ["-metric", "AE", "-fuzz", "5%", a, b, "null:"], { stdio: ["ignore", "pipe", "pipe"] });
    return 0;
  } catch (err) {
    const out = String((err as { stderr?: Buffer }).stderr ?? "");
    const n = Number.parseFloat(out);
    if (Number.isNaN(n)) throw new Error(`compare failed: ${out}`);
    return n;
  }
}

describeLive("observation on the real desktop (fixture app)", () => {
  const desktop = useDesktop();
  let fixture: Fixture;
  let state: string;
  let mainWindow: number;

  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    fixture = await launchFixture(desktop);
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    mainWindow = ready.windows.find((w: any) => w.title === "deckhand fixture").xid ?? ready.windows[0].xid;
  });

  it("permissions: every check is granted on the private desktop", async () => {
    const r = await ok(desktop, ["permissions"], { stateDir: state });
    expect(r.allGranted).toBe(true);
    // Neutral ids (src/wire/vocabulary.ts PERMISSION_IDS); the Linux helper's own in nativeId.
    expect(r.checks.map((c: any) => c.id).sort()).toEqual(["accessibility", "accessibility_enabled", "display", "input_injection", "screen_capture_fast", "screen_capture_occluded"]);
    for (const c of r.checks) expect(typeof c.nativeId, c.id).toBe("string");
  });

  it("capabilities: says how each capability was verified", async () => {
    const r = await ok(desktop, ["capabilities"], { stateDir: state });
    expect(r.helper.name).toBe("deckhand-helper-linux");
    expect(r.helper.source).toBe("beside-executable");
    for (const [key, cap] of Object.entries(r.capabilities as Record<string, any>)) {
      expect(["live", "vectors", "unverified"], key).toContain(cap.verified);
    }
    expect(r.capabilities.get_tree.supported).toBe(true);
  });

  it("list-apps: the fixture with its pid, canonical executable and accessibility", async () => {
    const r = await ok(desktop, ["list-apps"], { stateDir: state });
    const app = r.apps.find((a: any) => a.pid === fixture.pid);
    expect(app).toBeDefined();
    expect(app.accessible).toBe(true);
    expect(app.executable).toMatch(/^\/usr\/bin\/python3(\.\d+)?$/);
    expect(app.windowCount).toBe(2);
    const names = r.apps.map((a: any) => a.name);
    expect(names).toEqual([...names].sort((a: string, b: string) => a.localeCompare(b)));
  });

  it("list-windows: both top-level windows with titles, bounds and stacking", async () => {
    const r = await ok(desktop, ["list-windows", "--app", `pid:${fixture.pid}`], { stateDir: state });
    const titles = r.windows.map((w: any) => w.title).sort();
    expect(titles).toEqual(["deckhand fixture", "deckhand fixture 2"]);
    for (const w of r.windows) {
      expect(w.bounds.width).toBeGreaterThan(100);
      expect(w.bounds.x).toBeGreaterThanOrEqual(0);
      expect(w.bounds.x + w.bounds.width).toBeLessThanOrEqual(1920);
    }
    expect(r.windows[0].zIndex).toBeGreaterThan(r.windows[1].zIndex);
  });

  it("get-app-state: the main window's controls, a snapshot on disk (0600) and its screenshot", async () => {
    const r = await ok(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow)], { stateDir: state });
    expect(r.window.title).toBe("deckhand fixture");
    const s = r.snapshot;
    expect(s.snapshotId).toMatch(/^cs_[A-Za-z0-9]{10,40}$/);
    // Neutral roles (src/wire/vocabulary.ts ROLES), the platform's beside them.
    for (const [role, nativeRole, title] of [["button", "push button", "OK"], ["button", "push button", "Delete"], ["button", "push button", "Submit"], ["text_field", "text", "Name"], ["checkbox", "check box", "Subscribe"]]) {
      expect(s.elements.some((e: any) => e.role === role && e.nativeRole === nativeRole && e.title === title), `${role} ${title}`).toBe(true);
    }
    const pw = s.elements.find((e: any) => e.secure);
    expect(pw, "password field is marked secure").toBeDefined();
    expect(pw.value).toBeNull();
    const ok1 = s.elements.find((e: any) => e.role === "button" && e.title === "OK");
    expect(ok1.locator).toMatchObject({ kind: "atspi-path", role: "button", nativeRole: "push button" });
    expect(ok1.actions).toContain("press");
    expect(ok1.nativeActions).toContain("click");
    expect(pw).toMatchObject({ role: "secure_text_field", nativeRole: "password text" });
    expect(s.treeText).toContain('button "OK"');
    expect(s.treeText).not.toContain("push button");
    expect(s.treeText).toContain('"OK"');
    expect(s.truncated).toBe(false);
    const indices = s.elements.map((e: any) => e.index);
    expect(indices.at(-1)).toBeGreaterThan(indices.length - 1); // sparse
    const file = join(state, "snapshots", `${s.snapshotId}.json`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(r.screenshot.width).toBe(r.window.bounds.width);
    expect(r.screenshot.height).toBe(r.window.bounds.height);
    expect(r.screenshot.origin).toEqual({ x: r.window.bounds.x, y: r.window.bounds.y });
    expect(readFileSync(r.screenshot.path).subarray(1, 4).toString()).toBe("PNG");
    // A window image can show private text: owner-only, like snapshots.
    expect(statSync(r.screenshot.path).mode & 0o777).toBe(0o600);
    // The secure field's rectangle is blacked out in the file itself.
    const ox = pw.bounds.x - r.screenshot.origin.x;
    const oy = pw.bounds.y - r.screenshot.origin.y;
    const max = execFileSync("/usr/bin/convert", [r.screenshot.path, "-crop", `${pw.bounds.width}x${pw.bounds.height}+${ox}+${oy}`, "+repage", "-format", "%[fx:maxima]", "info:"]).toString();
    expect(Number(max)).toBe(0);
    expect(r.screenshot.redacted).toBeGreaterThanOrEqual(1);
  });

  it("--no-screenshot skips capture", async () => {
    const r = await ok(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir: state });
    expect(r.screenshot).toBeNull();
    expect(r.screenshotError).toBeUndefined();
  });

  it("a covered window's screenshot shows its own pixels (Composite)", async () => {
    const before = await ok(desktop, ["screenshot", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow)], { stateDir: state });
    // Cover the fixture with another window: the second fixture window, moved and raised over it.
    const cover = await launchApp(desktop, ["/usr/bin/xclock", "-geometry", "700x500+40+60", "-update", "1"]);
    try {
      await waitUntil("xclock above the fixture", 5000, async () => (await xdotool(desktop, ["getwindowgeometry", String(cover.windows[0])])).includes("Position"));
      const after = await ok(desktop, ["screenshot", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow)], { stateDir: state });
      const root = await ok(desktop, ["screenshot"], { stateDir: state });
      expect(after.screenshot.width).toBe(before.screenshot.width);
      const total = after.screenshot.width * after.screenshot.height;
      const diffOwn = differingPixels(before.screenshot.path, after.screenshot.path);
      expect(diffOwn / total).toBeLessThan(0.02);
      // The same region of the whole screen is covered by the clock: it differs a lot.
      const crop = join(state, "crop.png");
      const { x, y } = before.screenshot.origin;
      execFileSync("/usr/bin/convert", [root.screenshot.path, "-crop", `${before.screenshot.width}x${before.screenshot.height}+${x}+${y}`, "+repage", crop]);
      const diffScreen = differingPixels(before.screenshot.path, crop);
      if (process.env.DECKHAND_KEEP_SHOTS) console.log(before.screenshot.path, after.screenshot.path, crop);
      expect(diffScreen / total).toBeGreaterThan(0.08);
      expect(diffScreen).toBeGreaterThan(5 * diffOwn + 1000);
    } finally {
      await cover.stop();
    }
  });

  it("the password entry's value never appears in a tree, snapshot, log or the state directory", async () => {
    const r0 = await ok(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir: state });
    const pw = r0.snapshot.elements.find((e: any) => e.secure);
    // Type the secret the way a person would: click into the field, type.
    const cx = pw.bounds.x + Math.floor(pw.bounds.width / 2);
    const cy = pw.bounds.y + Math.floor(pw.bounds.height / 2);
    await xdotool(desktop, ["mousemove", String(cx), String(cy), "click", "1"]);
    await xdotool(desktop, ["type", "--delay", "5", SECRET]);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === SECRET.length, 10_000);
    const run = await deckhand(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(mainWindow)], { stateDir: state });
    expect(run.envelope.ok).toBe(true);
    expect(run.stdout).not.toContain(SECRET);
    expect(run.stderr).not.toContain(SECRET);
    expect(grepTree(state, SECRET)).toEqual([]);
    expect(readFileSync(fixture.logPath, "utf8")).not.toContain(SECRET);
  });

  it("app resolution: pid:N, exact name, and AMBIGUOUS_APP for two instances", async () => {
    const second = await launchFixture(desktop);
    try {
      const r = await deckhand(desktop, ["list-windows", "--app", "deckhand-fixture"], { stateDir: state });
      expect(r.code).toBe(1);
      expect(r.envelope.error!.code).toBe("AMBIGUOUS_APP");
      expect(String(r.envelope.error!.details.candidates)).toContain(`pid:${second.pid}`);
      const missing = await deckhand(desktop, ["list-windows", "--app", "no-such-app"], { stateDir: state });
      expect(missing.envelope.error!.code).toBe("APP_NOT_FOUND");
    } finally {
      await second.stop();
    }
    const r = await ok(desktop, ["list-windows", "--app", "deckhand-fixture"], { stateDir: state });
    expect(r.app.pid).toBe(fixture.pid);
  });
});

describeLive("observation of gtk3-widget-factory (real and large)", () => {
  const desktop = useDesktop();
  it("get-app-state reads page 1 whole, and the screenshot matches the window", async () => {
    requireBuild();
    const state = newStateDir();
    const app = await launchApp(desktop, ["/usr/bin/gtk3-widget-factory"]);
    try {
      const r = await ok(desktop, ["get-app-state", "--app", "gtk3-widget-factory"], { stateDir: state });
      expect(r.window.title).toBe("gtk3-widget-factory");
      expect(r.snapshot.elementCount).toBeGreaterThan(100);
      expect(r.snapshot.truncated).toBe(false);
      expect(r.snapshot.elements.some((e: any) => /radio/.test(e.role) && e.title === "Page 2")).toBe(true);
      expect(r.screenshot.width).toBe(r.window.bounds.width);
    } finally {
      await app.stop();
    }
  });
});
