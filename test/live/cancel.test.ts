// Cancellation on the real desktop: a 3000 ms hold-key runs in the real
// helper while other requests of the same serve session are answered at
// once (the helper's input does not block its runtime), and a serve
// `cancel` ends the hold early with the key released (the fixture logs the
// release; the X server's modifier state says Shift is up).
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, launchFixture, python, useDesktop, type Fixture } from "./harness.ts";
import { element, newStateDir, requireBuild, Serve } from "./deckhand.ts";

/** Shift as the X server sees it now (XKB state through GDK): true when down. */
const SHIFT_DOWN_PY = `
import gi
gi.require_version("Gdk", "3.0")
from gi.repository import Gdk
d = Gdk.Display.get_default()
print(1 if Gdk.Keymap.get_for_display(d).get_modifier_state() & Gdk.ModifierType.SHIFT_MASK else 0)
`;

describeLive("cancel on the real desktop", () => {
  const desktop = useDesktop();
  let fixture: Fixture;
  let fg: Serve;
  beforeAll(async () => {
    requireBuild();
    fixture = await launchFixture(desktop);
    fg = new Serve(desktop, { stateDir: newStateDir(), args: ["--allow-foreground"] });
  });
  afterAll(async () => {
    await fg?.close();
    await fixture?.stop();
  });

  const shiftDown = async () => (await python(desktop, SHIFT_DOWN_PY)).trim() === "1";
  const since = (mark: number) => fixture.events().slice(mark);
  const isShift = (e: any) => e.event === "key" && /Shift/.test(String(e.keyval));

  it("a 3000 ms hold-key: list-apps and list-windows answer meanwhile in milliseconds; a cancel ends it early with Shift released", async () => {
    const app = `pid:${fixture.pid}`;
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    const windowId: number = ready.windows.find((w: any) => w.title === "deckhand fixture").xid;
    const st = await fg.ok("get-app-state", { app, windowId, noScreenshot: true });
    await fg.ok("focus", { app, windowId, elementIndex: element(st, "text_field", "Name").index });
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000);
    expect(await shiftDown(), "Shift is up before the hold").toBe(false);

    const mark = fixture.events().length;
    const t0 = performance.now();
    const hold = fg.requestAs("hold", "run", { program: { app, windowId, steps: [{ action: "hold-key", key: "shift", ms: 3000 }], observe: false } });
    const press = await fixture.waitFor((e) => isShift(e) && e.type === "press", 3000, mark);
    const tPress = performance.now();

    // While the key is held, the same session answers other requests at once.
    const timed = async (command: string, args: Record<string, unknown>) => {
      const t = performance.now();
      const r = await fg.request(command, args);
      return { ok: r.ok, ms: performance.now() - t };
    };
    const [apps, windows] = await Promise.all([timed("list-apps", {}), timed("list-windows", { app })]);
    expect(apps.ok && windows.ok).toBe(true);
    console.log(`during the hold: list-apps ${apps.ms.toFixed(1)} ms, list-windows ${windows.ms.toFixed(1)} ms`);
    expect(apps.ms).toBeLessThan(500);
    expect(windows.ms).toBeLessThan(500);
    expect(await shiftDown(), "the X server sees Shift held").toBe(true);
    expect(performance.now() - tPress, "still inside the hold").toBeLessThan(2500);

    const tCancel = performance.now();
    const cancel = await fg.request("cancel", { id: "hold" });
    expect(cancel.result).toEqual({ id: "hold", cancelled: true });
    const r = await hold;
    const tDone = performance.now();
    console.log(`cancel answered after ${(tDone - tCancel).toFixed(1)} ms; the hold lasted ${(tDone - t0).toFixed(0)} ms of 3000`);
    // A failed program is ok:false; every step's receipt is in the details.
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("CANCELLED");
    const step = (r.error?.details as any).receipts[0];
    expect(step.status).toBe("failed");
    expect(step.error.code).toBe("CANCELLED");
    expect(step.error.details.cancelled).toBe(true);
    expect(step.delivery).toBe("partial");
    expect(step.route).toBe("foreground_input");
    expect(step.cleanup.keys_released).toBe(true);
    expect(tDone - tCancel).toBeLessThan(500);
    expect(tDone - t0).toBeLessThan(2900);

    // Released, and early: the fixture saw the release well before 3000 ms.
    const release = await fixture.waitFor((e) => isShift(e) && e.type === "release", 3000, mark);
    expect(release.t - press.t).toBeLessThan(2500);
    expect(since(mark).filter(isShift).map((e) => e.type)).toEqual(["press", "release"]);
    expect(await shiftDown(), "the X server sees Shift up").toBe(false);
  });
});
