// Issue 10.2: every input is released on every exit path. A drag holds the
// left button over the fixture's canvas; whether it ends by its deadline
// expiring mid-path or by a serve `cancel`, the button is up afterwards (the
// X server's pointer mask, read with python3-xlib, and the canvas's own
// press/release log). A path over the cap is refused before anything moves.
import { afterAll, beforeAll, expect, it } from "vitest";
import { Supervisor } from "../../src/helpers/supervisor.ts";
import { DeckhandError } from "../../src/protocol/errors.ts";
import type { InputStep } from "../../src/wire/messages.ts";
import { describeLive, desktopEnv, launchFixture, python, useDesktop, type Fixture } from "./harness.ts";
import { deckhand, element, HELPER, newStateDir, requireBuild, Serve } from "./deckhand.ts";

const BUTTONS = 0x1f00; // Button1Mask .. Button5Mask
const BUTTON1 = 0x100;

describeLive("every input is released on every exit path (drag)", () => {
  const desktop = useDesktop();
  let fixture: Fixture;
  let fg: Serve;
  let stateDir: string;
  let canvas: { x: number; y: number; width: number; height: number };
  let app: string;
  let windowId: number;
  const supervisors: Supervisor[] = [];

  beforeAll(async () => {
    requireBuild();
    fixture = await launchFixture(desktop);
    stateDir = newStateDir();
    fg = new Serve(desktop, { stateDir, args: ["--allow-foreground"] });
    app = `pid:${fixture.pid}`;
    const ready = fixture.events().find((e) => e.event === "ready") as any;
    windowId = ready.windows.find((w: any) => w.title === "deckhand fixture").xid;
    const st = await fg.ok("get-app-state", { app, windowId, noScreenshot: true });
    canvas = element(st, "other", "Canvas").bounds;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(supervisors.map((s) => s.stop()));
    await fg?.close();
    await fixture?.stop();
  });

  /** The pointer as the X server has it: position and which buttons are down. */
  async function pointer(): Promise<{ x: number; y: number; buttons: number }> {
    const out = await python(desktop, "from Xlib import display\nd=display.Display()\np=d.screen().root.query_pointer()\nprint('%d %d %d' % (p.root_x, p.root_y, p.mask))");
    const [x, y, mask] = out.trim().split(" ").map(Number);
    return { x: x!, y: y!, buttons: mask! & BUTTONS };
  }

  /** A zig-zag of n points inside the canvas, away from its edges. */
  function path(n: number): { x: number; y: number }[] {
    const x0 = canvas.x + 10;
    const w = Math.max(10, canvas.width - 20);
    const y = canvas.y + Math.round(canvas.height / 2);
    return Array.from({ length: n }, (_, i) => ({ x: x0 + (i * 7) % w, y: y + (i % 2) * 3 }));
  }

  const canvasButtons = (mark: number) => fixture.events().slice(mark).filter((e) => e.event === "button" && e.control === "Canvas").map((e) => `${e.type}:${e.button}`);

  it("a drag whose deadline expires mid-path: TIMEOUT, a partial receipt with buttons released, the button up on the X server", async () => {
    // The helper as deckhand runs it, asked directly for a short deadline
    // (deckhand's own deadline for input is 10 s plus the drag's waits).
    const sup = new Supervisor({ path: HELPER, env: desktopEnv(desktop) });
    supervisors.push(sup);
    await sup.start();
    const points = path(400); // 400 x 15 ms of pauses: 6 s, far past the deadline
    const steps: InputStep[] = [
      { kind: "move", x: points[0]!.x, y: points[0]!.y },
      { kind: "wait", ms: 15 },
      { kind: "button", button: "left", down: true },
      ...points.slice(1).flatMap((p): InputStep[] => [{ kind: "wait", ms: 15 }, { kind: "move", x: p.x, y: p.y }]),
      { kind: "wait", ms: 15 },
      { kind: "button", button: "left", down: false },
    ];
    const mark = fixture.events().length;
    const t0 = performance.now();
    let err: DeckhandError | undefined;
    const running = sup.request("input", { steps, restore_pointer: true }, { deadlineMs: 1500 }).catch((e) => {
      err = e as DeckhandError;
    });
    // Mid-way the button is down: the drag is really holding it.
    await fixture.waitFor((e) => e.event === "button" && e.type === "press", 5000, mark);
    const mid = await pointer();
    await running;
    const ms = performance.now() - t0;
    expect(mid.buttons & BUTTON1, "left button held mid-drag").toBe(BUTTON1);
    expect(err, "the request failed").toBeInstanceOf(DeckhandError);
    expect(err!.code).toBe("TIMEOUT");
    expect(err!.details.delivery).toBe("partial");
    const receipt = (err as DeckhandError & { receipt?: { cleanup: { buttons_released: boolean } } }).receipt;
    expect(receipt?.cleanup.buttons_released).toBe(true);
    expect(ms).toBeLessThan(3000);
    // The helper was not killed for it: it answered within the deadline.
    expect(sup.stats.timeouts).toBe(0);
    expect((await pointer()).buttons, "no button down after the deadline").toBe(0);
    await fixture.waitFor((e) => e.event === "button" && e.type === "release", 5000, mark);
    expect(canvasButtons(mark)).toEqual(["press:1", "release:1"]);
    console.log(`deadline drag: ended after ${ms.toFixed(0)} ms (deadline 1500 ms), receipt ${JSON.stringify(receipt)}`);
  });

  it("a 400-point drag program cancelled mid-path (serve `cancel`): CANCELLED, buttons released, the button up", async () => {
    const mark = fixture.events().length;
    const run = fg.requestAs("drag", "run", { program: { app, windowId, steps: [{ action: "drag", path: path(400) }], observe: false } });
    await fixture.waitFor((e) => e.event === "button" && e.type === "press", 10_000, mark);
    expect((await pointer()).buttons & BUTTON1, "left button held mid-drag").toBe(BUTTON1);
    const cancel = await fg.request("cancel", { id: "drag" });
    expect(cancel.result).toEqual({ id: "drag", cancelled: true });
    const r = await run;
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("CANCELLED");
    const step = (r.error?.details as any).receipts[0];
    expect(step.status).toBe("failed");
    expect(step.error.code).toBe("CANCELLED");
    expect(step.delivery).toBe("partial");
    expect(step.cleanup.buttons_released).toBe(true);
    expect((await pointer()).buttons, "no button down after the cancel").toBe(0);
    await fixture.waitFor((e) => e.event === "button" && e.type === "release", 5000, mark);
    expect(canvasButtons(mark)).toEqual(["press:1", "release:1"]);
  });

  it("a drag of 1001 points is INVALID_ARGUMENTS before anything is sent: the pointer does not move, no button goes down", async () => {
    const before = await pointer();
    const mark = fixture.events().length;
    const r = await deckhand(desktop, ["drag", "--app", app, "--window-id", String(windowId), "--path", JSON.stringify(path(1001)), "--allow-foreground"], { stateDir });
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error).toMatchObject({ code: "INVALID_ARGUMENTS" });
    expect(r.envelope.error!.message).toMatch(/at most 1000/);
    const after = await pointer();
    expect({ x: after.x, y: after.y, buttons: after.buttons }).toEqual({ x: before.x, y: before.y, buttons: 0 });
    expect(canvasButtons(mark)).toEqual([]);
  });
});
