// Issue: one behaviour through every interface. The same task on the
// fixture app — fill the form (Name), tick Subscribe, press Submit with the
// confirm hook allowing — through native serve, the OpenAI adapter, the
// Anthropic adapter (the single computer tool and the computer toolset,
// computer_toolset_20260801) and MCP must leave the same record in the
// fixture's log.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { beforeAll, expect, it } from "vitest";
import { describeLive, desktopEnv, launchFixture, useDesktop, xdotool, type DesktopLike, type Fixture, type FixtureEvent } from "./harness.ts";
import { AdapterServe, DECKHAND, newStateDir, ok, requireBuild, Serve } from "./deckhand.ts";

const NAME = "Ada Lovelace";
const HOOK = "/bin/true";

/**
 * What the app received, independent of the route: discrete events in
 * order, and the final text of each field. Typing through XTest changes a
 * field once per character; setting its value through accessibility once.
 */
function record(events: FixtureEvent[]) {
  const texts: Record<string, unknown> = {};
  const actions: string[] = [];
  for (const e of events) {
    if (e.event === "text_changed") texts[String(e.control)] = e.text;
    if (e.event === "clicked") actions.push(`clicked:${e.control}`);
    if (e.event === "toggled") actions.push(`toggled:${e.control}:${e.active}`);
    if (e.event === "activated" || e.event === "menu" || e.event === "value_changed") actions.push(`${e.event}:${e.control ?? e.item}`);
  }
  return { texts, actions };
}

const EXPECTED = { texts: { Name: NAME }, actions: ["toggled:Subscribe:true", "clicked:Submit"] };

async function freshFixture(desktop: DesktopLike): Promise<{ fixture: Fixture; mainWindow: number }> {
  const fixture = await launchFixture(desktop);
  const ready = fixture.events().find((e) => e.event === "ready") as any;
  const mainWindow = ready.windows.find((w: any) => w.title === "deckhand fixture").xid;
  // The adapters target the app's front window: bring the main one forward.
  await xdotool(desktop, ["windowactivate", "--sync", String(mainWindow)]);
  await xdotool(desktop, ["windowraise", String(mainWindow)]);
  return { fixture, mainWindow };
}

function el(state: any, role: RegExp, title: string) {
  const e = state.snapshot.elements.find((x: any) => role.test(x.role) && x.title === title);
  if (!e) throw new Error(`no ${title} in\n${state.snapshot.treeText.slice(0, 2000)}`);
  return e;
}
const centre = (e: any) => ({ x: e.bounds.x + Math.floor(e.bounds.width / 2), y: e.bounds.y + Math.floor(e.bounds.height / 2) });

/** Screen point -> pixel of the image the adapter last returned. */
function toImage(image: any, p: { x: number; y: number }) {
  const map = image.map ?? image;
  return { x: Math.floor((p.x - map.origin.x) * map.scaleX), y: Math.floor((p.y - map.origin.y) * map.scaleY) };
}

describeLive("one behaviour through every interface", () => {
  const desktop = useDesktop();
  const records: Record<string, unknown> = {};
  let stateDir: string;
  beforeAll(() => {
    requireBuild();
    stateDir = newStateDir();
  });

  it("native serve", async () => {
    const { fixture, mainWindow } = await freshFixture(desktop);
    const s = new Serve(desktop, { stateDir, args: ["--confirm-cmd", HOOK] });
    try {
      const app = `pid:${fixture.pid}`;
      const st = await s.ok("get-app-state", { app, windowId: mainWindow, noScreenshot: true });
      await s.ok("set-value", { app, elementIndex: el(st, /^text_field$/, "Name").index, value: NAME });
      await s.ok("click", { app, elementIndex: el(st, /check/, "Subscribe").index });
      await s.ok("click", { app, elementIndex: el(st, /button/, "Submit").index });
      await fixture.waitFor((e) => e.event === "clicked" && e.control === "Submit", 5000);
      records.native = record(fixture.events());
    } finally {
      await s.close();
      await fixture.stop();
    }
    expect(records.native).toEqual(EXPECTED);
  });

  for (const vendor of ["openai", "anthropic", "anthropic-toolset"] as const) {
    it(`${vendor} computer-tool adapter`, async () => {
      const { fixture, mainWindow } = await freshFixture(desktop);
      const app = `pid:${fixture.pid}`;
      const st = await ok(desktop, ["get-app-state", "--app", app, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir });
      const adapter = vendor === "openai" ? "openai" : "anthropic";
      const s = new AdapterServe(desktop, stateDir, ["--adapter", adapter, "--app", app, "--allow-foreground", "--confirm-cmd", HOOK]);
      try {
        const id = () => Math.random().toString(36).slice(2);
        // One action in the vendor's form: the OpenAI computer_call item, the Anthropic single tool
        // (name "computer", the action in input), or a toolset member (name = the action, toolset_name "computer").
        const call = async (action: string, params: Record<string, unknown>) => {
          if (vendor === "openai") return await s.send({ call: { type: "computer_call", id: `cu_${id()}`, call_id: `call_${id()}`, action: { type: action, ...params }, pending_safety_checks: [], status: "completed" } });
          if (vendor === "anthropic") return await s.send({ call: { type: "tool_use", id: `toolu_${id()}`, name: "computer", input: { action, ...params } } });
          const r = await s.send({ call: { type: "tool_use", id: `toolu_${id()}`, name: action, toolset_name: "computer", caller: { type: "direct" }, input: params } });
          expect(r.output.toolset_name).toBe("computer"); // its tool_result answers within the toolset
          return r;
        };
        const click = (p: { x: number; y: number }) => (vendor === "openai" ? call("click", { button: "left", x: p.x, y: p.y }) : call("left_click", { coordinate: [p.x, p.y] }));
        const type = (text: string) => call("type", { text });
        let shot = await call("screenshot", {});
        expect(shot.image.map.windowId).toBe(mainWindow); // the adapter targets the main window
        shot = await click(toImage(shot.image, centre(el(st, /^text_field$/, "Name"))));
        expect(shot.receipt.steps[0].route).toBe("foreground_input"); // a click into a text field is a real click
        await fixture.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 5000);
        shot = await type(NAME);
        await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === NAME, 5000);
        shot = await click(toImage(shot.image, centre(el(st, /check/, "Subscribe"))));
        expect(shot.receipt.steps[0].route).toBe("accessibility");
        shot = await click(toImage(shot.image, centre(el(st, /button/, "Submit"))));
        await fixture.waitFor((e) => e.event === "clicked" && e.control === "Submit", 5000);
        records[vendor] = record(fixture.events());
      } finally {
        s.close();
        await fixture.stop();
      }
      expect(records[vendor]).toEqual(records.native ?? EXPECTED);
    });
  }

  it("keys held during pointer input reach the app and are released (toolset left_click_drag text, OpenAI move and scroll keys)", async () => {
    const SHIFT = 1; // GDK modifier mask bits, as the fixture's canvas logs them with each motion
    const CONTROL = 4;
    const BUTTON1 = 0x100;
    const { fixture, mainWindow } = await freshFixture(desktop);
    const app = `pid:${fixture.pid}`;
    const st = await ok(desktop, ["get-app-state", "--app", app, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir });
    const canvas = el(st, /^other$/, "Canvas").bounds;
    const at = (fx: number, fy: number) => ({ x: canvas.x + Math.round(canvas.width * fx), y: canvas.y + Math.round(canvas.height * fy) });
    const motions = (mark: number) => fixture.events().slice(mark).filter((e: any) => e.event === "motion" && e.control === "Canvas") as any[];
    const anthropic = new AdapterServe(desktop, stateDir, ["--adapter", "anthropic", "--app", app, "--allow-foreground"]);
    const openai = new AdapterServe(desktop, stateDir, ["--adapter", "openai", "--app", app, "--allow-foreground"]);
    try {
      const member = (name: string, input: Record<string, unknown>) =>
        anthropic.send({ call: { type: "tool_use", id: `toolu_${Math.random().toString(36).slice(2)}`, name, toolset_name: "computer", caller: { type: "direct" }, input } });
      const computerCall = (action: Record<string, unknown>) =>
        openai.send({ call: { type: "computer_call", id: `cu_${Math.random().toString(36).slice(2)}`, call_id: `call_${Math.random().toString(36).slice(2)}`, action, pending_safety_checks: [], status: "completed" } });
      let shot = await member("screenshot", {});
      // A shift-drag across the canvas: shift and the left button are down on every motion of it.
      let mark = fixture.events().length;
      const [from, to] = [toImage(shot.image, at(0.2, 0.5)), toImage(shot.image, at(0.8, 0.5))];
      shot = await member("left_click_drag", { start_coordinate: [from.x, from.y], coordinate: [to.x, to.y], text: "shift" });
      expect(shot.receipt.steps[0].cleanup).toMatchObject({ keys_released: true, buttons_released: true });
      await fixture.waitFor((e: any) => e.event === "button" && e.control === "Canvas" && e.type === "release", 5000, mark);
      const dragged = motions(mark).filter((e) => e.state & BUTTON1);
      expect(dragged.length, JSON.stringify(motions(mark))).toBeGreaterThan(0);
      for (const e of dragged) expect(e.state & SHIFT, JSON.stringify(e)).toBe(SHIFT);
      // A hover afterwards: nothing held any more.
      mark = fixture.events().length;
      const hover = toImage(shot.image, at(0.5, 0.3));
      await member("mouse_move", { coordinate: [hover.x, hover.y] });
      const after = await fixture.waitFor((e: any) => e.event === "motion" && e.control === "Canvas", 5000, mark);
      expect((after as any).state & (SHIFT | BUTTON1)).toBe(0);
      // OpenAI: a move with ctrl held, a scroll with ctrl held, then a plain move: ctrl released each time.
      shot = await computerCall({ type: "screenshot" });
      mark = fixture.events().length;
      const p1 = toImage(shot.image, at(0.6, 0.6));
      await computerCall({ type: "move", x: p1.x, y: p1.y, keys: ["CTRL"] });
      const held = await fixture.waitFor((e: any) => e.event === "motion" && e.control === "Canvas", 5000, mark);
      expect((held as any).state & CONTROL).toBe(CONTROL);
      const scrolled = await computerCall({ type: "scroll", x: p1.x, y: p1.y, scroll_x: 0, scroll_y: 100, keys: ["CTRL"] });
      expect(scrolled.receipt.steps[0]).toMatchObject({ status: "completed", cleanup: { keys_released: true } });
      mark = fixture.events().length;
      const p2 = toImage(shot.image, at(0.3, 0.7));
      await computerCall({ type: "move", x: p2.x, y: p2.y });
      const released = await fixture.waitFor((e: any) => e.event === "motion" && e.control === "Canvas", 5000, mark);
      expect((released as any).state & (CONTROL | SHIFT)).toBe(0);
    } finally {
      anthropic.close();
      openai.close();
      await fixture.stop();
    }
  });

  it("MCP server (SDK client over stdio)", async () => {
    const { fixture, mainWindow } = await freshFixture(desktop);
    const transport = new StdioClientTransport({
      command: DECKHAND,
      args: ["mcp", "--confirm-cmd", HOOK],
      env: desktopEnv(desktop, { DECKHAND_STATE_DIR: stateDir }) as Record<string, string>,
      stderr: "ignore",
    });
    const client = new Client({ name: "deckhand-live", version: "0.0.0" });
    await client.connect(transport);
    try {
      const app = `pid:${fixture.pid}`;
      const call = async (name: string, args: Record<string, unknown>) => {
        const r: any = await client.callTool({ name, arguments: args });
        if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.structuredContent?.error ?? r.content)}`);
        return r.structuredContent.result;
      };
      const st = await call("get_app_state", { app, windowId: mainWindow, noScreenshot: true, format: "full" });
      await call("set_value", { app, elementIndex: el(st, /^text_field$/, "Name").index, value: NAME });
      await call("click", { app, elementIndex: el(st, /check/, "Subscribe").index });
      await call("click", { app, elementIndex: el(st, /button/, "Submit").index });
      await fixture.waitFor((e) => e.event === "clicked" && e.control === "Submit", 5000);
      records.mcp = record(fixture.events());
    } finally {
      await client.close();
      await fixture.stop();
    }
    expect(records.mcp).toEqual(records.native ?? EXPECTED);
  });

  it("all five left the same record", () => {
    expect(Object.keys(records).sort()).toEqual(["anthropic", "anthropic-toolset", "mcp", "native", "openai"]);
    for (const r of Object.values(records)) expect(r).toEqual(EXPECTED);
  });
});
