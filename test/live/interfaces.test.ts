// Issue: one behaviour through every interface. The same task on the
// fixture app — fill the form (Name), tick Subscribe, press Submit with the
// confirm hook allowing — through native serve, the OpenAI adapter, the
// Anthropic adapter and MCP must leave the same record in the fixture's log.
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
      await s.ok("set-value", { app, elementIndex: el(st, /^text$/, "Name").index, value: NAME });
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

  for (const vendor of ["openai", "anthropic"] as const) {
    it(`${vendor} computer-tool adapter`, async () => {
      const { fixture, mainWindow } = await freshFixture(desktop);
      const app = `pid:${fixture.pid}`;
      const st = await ok(desktop, ["get-app-state", "--app", app, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir });
      const s = new AdapterServe(desktop, stateDir, ["--adapter", vendor, "--app", app, "--allow-foreground", "--confirm-cmd", HOOK]);
      try {
        const call = (action: Record<string, unknown>) =>
          vendor === "openai"
            ? s.send({ call: { type: "computer_call", call_id: `call_${Math.random().toString(36).slice(2)}`, action, pending_safety_checks: [] } })
            : s.send({ call: { type: "tool_use", id: `toolu_${Math.random().toString(36).slice(2)}`, name: "computer", input: action } });
        const click = (p: { x: number; y: number }) => (vendor === "openai" ? call({ type: "click", button: "left", x: p.x, y: p.y }) : call({ action: "left_click", coordinate: [p.x, p.y] }));
        const type = (text: string) => (vendor === "openai" ? call({ type: "type", text }) : call({ action: "type", text }));
        let shot = await call(vendor === "openai" ? { type: "screenshot" } : { action: "screenshot" });
        expect(shot.image.map.windowId).toBe(mainWindow); // the adapter targets the main window
        shot = await click(toImage(shot.image, centre(el(st, /^text$/, "Name"))));
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
      const st = await call("get_app_state", { app, windowId: mainWindow, noScreenshot: true });
      await call("set_value", { app, elementIndex: el(st, /^text$/, "Name").index, value: NAME });
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

  it("all four left the same record", () => {
    expect(Object.keys(records).sort()).toEqual(["anthropic", "mcp", "native", "openai"]);
    for (const r of Object.values(records)) expect(r).toEqual(EXPECTED);
  });
});
