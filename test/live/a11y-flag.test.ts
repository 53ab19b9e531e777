// Issue 9.2: observation works on a desktop set up the way users have it,
// where org.a11y.Status.IsEnabled is false because no screen reader runs.
// GTK3 apps expose their trees anyway: the flag is a warning, not a gate.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, desktopEnv, launchApp, launchFixture, useDesktop, type App, type Fixture } from "./harness.ts";
import { newStateDir, ok, requireBuild } from "./deckhand.ts";

const run = promisify(execFile);

describeLive("accessibility flag off (a default desktop)", () => {
  const desktop = useDesktop();
  let state: string;
  let fixture: Fixture;
  let factory: App;

  async function isEnabled(): Promise<boolean> {
    const { stdout } = await run(
      "dbus-send",
      ["--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties.Get", "string:org.a11y.Status", "string:IsEnabled"],
      { env: desktopEnv(desktop) },
    );
    return /boolean true/.test(stdout);
  }

  beforeAll(async () => {
    requireBuild();
    state = newStateDir();
    // `deckhand desktop` switches the flag on; a user's desktop has it off.
    await run(
      "dbus-send",
      ["--session", "--print-reply", "--dest=org.a11y.Bus", "/org/a11y/bus", "org.freedesktop.DBus.Properties.Set", "string:org.a11y.Status", "string:IsEnabled", "variant:boolean:false"],
      { env: desktopEnv(desktop) },
    );
    expect(await isEnabled()).toBe(false);
    fixture = await launchFixture(desktop);
    factory = await launchApp(desktop, ["/usr/bin/gtk3-widget-factory"]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([fixture?.stop(), factory?.stop()]);
  });

  it("permissions warns (advisory) and says how to fix it", async () => {
    const p = await ok(desktop, ["permissions"], { stateDir: state });
    const check = p.checks.find((c: any) => c.id === "accessibility_enabled");
    expect(check).toMatchObject({ status: "denied", advisory: true });
    expect(check.remediation).toMatch(/--enable-accessibility/);
    expect(p.warnings.map((w: any) => w.id)).toEqual(["accessibility_enabled"]);
  });

  it("the fixture and gtk3-widget-factory are observable with the flag off", async () => {
    const main = (fixture.events().find((e) => e.event === "ready") as any).windows.find((w: any) => w.title === "deckhand fixture").xid;
    for (const [pid, win] of [[fixture.pid, main], [factory.pid, factory.windows[0]]] as const) {
      const s = await ok(desktop, ["get-app-state", "--app", `pid:${pid}`, "--window-id", String(win), "--no-screenshot"], { stateDir: state });
      expect(s.snapshot.elementCount, `pid ${pid}`).toBeGreaterThan(10);
      expect(s.snapshot.elements.some((e: any) => e.role === "button")).toBe(true);
    }
  });

  it("permissions --enable-accessibility switches it on", async () => {
    const p = await ok(desktop, ["permissions", "--enable-accessibility"], { stateDir: state });
    expect(p.enableAccessibility).toMatchObject({ enabled: true, previous: false });
    expect(await isEnabled()).toBe(true);
    const after = await ok(desktop, ["permissions"], { stateDir: state });
    expect(after.checks.find((c: any) => c.id === "accessibility_enabled").status).toBe("granted");
    expect(after.warnings).toEqual([]);
    // Observation still works after the switch.
    const main = (fixture.events().find((e) => e.event === "ready") as any).windows.find((w: any) => w.title === "deckhand fixture").xid;
    const s = await ok(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", String(main), "--no-screenshot"], { stateDir: state });
    expect(s.snapshot.elementCount).toBeGreaterThan(10);
  });
});
