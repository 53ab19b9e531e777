import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  accessibleNodes,
  centre,
  describeLive,
  launchFixture,
  python,
  useDesktop,
  waitUntil,
  xdotool,
  type AccessibleNode,
  type Fixture,
  type FixtureEvent,
} from "./harness.ts";

const APP = "deckhand-fixture";
const PASSWORD = "s3cr3t-Hunter2";

describeLive("fixture app", () => {
  const desktop = useDesktop();
  let fixture: Fixture;
  let nodes: AccessibleNode[];

  beforeAll(async () => {
    fixture = await launchFixture(desktop);
    nodes = await accessibleNodes(desktop, APP);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  const node = (name: string, role?: string) => {
    const found = nodes.find((n) => n.name === name && (!role || n.role === role));
    if (!found) throw new Error(`no accessible ${role ?? "node"} named ${name}`);
    return found;
  };

  async function click(name: string, role?: string): Promise<void> {
    const [x, y] = centre(node(name, role));
    await xdotool(desktop, ["mousemove", String(x), String(y), "click", "1"]);
  }

  /**
   * Presses and releases Shift and waits until the app logs it: X delivers
   * a client's events in order, so everything sent before is in the log by
   * then. (Not a pointer motion: after a click GTK3 holds the next motion
   * event back until some other event arrives.)
   */
  async function settle(): Promise<void> {
    const mark = fixture.events().length;
    await xdotool(desktop, ["key", "shift"]);
    await fixture.waitFor((e) => e.event === "key" && e.type === "release" && e.keyval === "Shift_L", 10_000, mark);
  }

  it("announces both windows once they are mapped", () => {
    const ready = fixture.events().filter((e) => e.event === "ready");
    expect(ready).toHaveLength(1);
    const windows = ready[0]!.windows as { title: string; xid: number; x: number; width: number }[];
    expect(windows.map((w) => w.title)).toEqual(["deckhand fixture", "deckhand fixture 2"]);
    for (const w of windows) expect(w.xid).toBeGreaterThan(0);
    // Side by side, both fully on the 1920x1080 screen.
    expect(windows[1]!.x).toBeGreaterThanOrEqual(windows[0]!.x + windows[0]!.width);
  });

  it("is on the AT-SPI bus with every control named", async () => {
    const apps = await python(desktop, "import pyatspi\nfor a in pyatspi.Registry.getDesktop(0):\n    print(a.name)");
    expect(apps.split("\n")).toContain(APP);

    const expected: [string, string, string][] = [
      ["deckhand fixture", "frame", "main_window"],
      ["deckhand fixture 2", "frame", "second_window"],
      ["OK", "push button", "ok_button"],
      ["Delete", "push button", "delete_button"],
      ["Submit", "push button", "submit_button"],
      ["Name", "text", "name_entry"],
      ["Email", "text", "email_entry"],
      ["Password", "password text", "password_entry"],
      ["Notes", "text", "notes_text"],
      ["Subscribe", "check box", "subscribe_check"],
      ["Small", "radio button", "size_small_radio"],
      ["Medium", "radio button", "size_medium_radio"],
      ["Large", "radio button", "size_large_radio"],
      ["Color", "combo box", "color_combo"],
      ["Level", "slider", "level_scale"],
      ["Rows", "list box", "rows_list"],
      ["Canvas", "drawing area", "canvas"],
      ["File", "menu", "menu_file"],
      ["Edit", "menu", "menu_edit"],
      ["Second OK", "push button", "second_ok_button"],
      ["Second entry", "text", "second_entry"],
    ];
    for (const [name, role, id] of expected) {
      const n = nodes.find((n) => n.name === name && n.role === role);
      expect(n, `${role} ${name}`).toBeDefined();
      if (id) expect(n!.id, name).toBe(id);
    }
    for (const [name, role] of [["OK", "push button"], ["Second OK", "push button"], ["Name", "text"], ["Canvas", "drawing area"]] as const) {
      const [x, y, w, h] = node(name, role).extents;
      expect(w * h, name).toBeGreaterThan(0);
      expect(x + w <= 1920 && y + h <= 1080 && x >= 0 && y >= 0, name).toBe(true);
    }
  });

  it("logs exactly one click for one click on OK", async () => {
    const mark = fixture.events().length;
    await click("OK", "push button");
    await fixture.waitFor((e) => e.event === "clicked" && e.control === "OK", 10_000, mark);
    await settle();
    const clicks = fixture.events().slice(mark).filter((e) => e.event === "clicked");
    expect(clicks.map((e) => e.control)).toEqual(["OK"]);
  });

  it("logs text typed into Name", async () => {
    const mark = fixture.events().length;
    await click("Name", "text");
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Name" && e.in === true, 10_000, mark);
    await xdotool(desktop, ["type", "--delay", "5", "hello fixture"]);
    const changed = await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Name" && e.text === "hello fixture", 10_000, mark);
    expect(changed.t).toBeGreaterThan(0);
    const keys = fixture.events().slice(mark).filter((e) => e.event === "key" && e.type === "press");
    expect(keys.length).toBe("hello fixture".length);
    expect(keys.every((e) => e.control === "Name")).toBe(true);
    expect(keys[0]!.keyval).toBe("h");
  });

  it("never logs the password, neither as text nor as keys", async () => {
    const mark = fixture.events().length;
    await click("Password", "password text");
    await fixture.waitFor((e) => e.event === "focus" && e.control === "Password" && e.in === true, 10_000, mark);
    await xdotool(desktop, ["type", "--delay", "5", PASSWORD]);
    await fixture.waitFor((e) => e.event === "text_changed" && e.control === "Password" && e.length === PASSWORD.length, 10_000, mark);
    const events: FixtureEvent[] = fixture.events().slice(mark);
    const keys = events.filter((e) => e.event === "key" && e.control === "Password");
    expect(keys.length).toBeGreaterThanOrEqual(PASSWORD.length * 2); // plus Shift for capitals
    for (const k of keys) {
      expect(k.redacted).toBe(true);
      expect(k).not.toHaveProperty("keyval");
    }
    for (const e of events.filter((e) => e.event === "text_changed")) expect(e).not.toHaveProperty("text");
    const raw = readFileSync(fixture.logPath, "utf8");
    expect(raw).not.toContain(PASSWORD);
    expect(raw).not.toContain("Hunter");
  });

  it("records canvas presses with canvas coordinates", async () => {
    const mark = fixture.events().length;
    const [x, y] = node("Canvas").extents;
    await xdotool(desktop, ["mousemove", String(x + 30), String(y + 40), "click", "3"]);
    const press = await fixture.waitFor((e) => e.event === "button" && e.type === "press", 10_000, mark);
    expect(press).toMatchObject({ control: "Canvas", button: 3, x: 30, y: 40 });
    await fixture.waitFor((e) => e.event === "button" && e.type === "release", 10_000, mark);
  });

  it("logs wheel scrolling of the list", async () => {
    const mark = fixture.events().length;
    const rows = node("Rows", "list box");
    // The list is taller than its viewport: aim at the viewport's top area.
    await xdotool(desktop, ["mousemove", String(rows.extents[0] + 60), String(rows.extents[1] + 60), "click", "--repeat", "3", "5"]);
    const scroll = await fixture.waitFor((e) => e.event === "scroll" && e.control === "Rows" && (e.value as number) > 0, 10_000, mark);
    expect(scroll.value).toBeGreaterThan(0);
  });

  it("logs menu activations through the menu bar", async () => {
    const mark = fixture.events().length;
    await click("Edit", "menu");
    const copy = await waitForNode("Copy", "menu item");
    const [x, y] = centre(copy);
    await xdotool(desktop, ["mousemove", String(x), String(y), "click", "1"]);
    expect(await fixture.waitFor((e) => e.event === "menu", 10_000, mark)).toMatchObject({ item: "Copy", path: "Edit/Copy" });
  });

  it("exits cleanly on SIGTERM", async () => {
    const other = await launchFixture(desktop);
    await other.stop();
    expect(await other.exit).toEqual({ code: 0, signal: null });
    expect(other.events().at(-1)).toMatchObject({ event: "exit", reason: "SIGTERM" });
  });

  it("quits cleanly from File > Quit", async () => {
    const mark = fixture.events().length;
    await click("File", "menu");
    const quit = await waitForNode("Quit", "menu item");
    const [x, y] = centre(quit);
    await xdotool(desktop, ["mousemove", String(x), String(y), "click", "1"]);
    expect(await fixture.waitFor((e) => e.event === "exit", 10_000, mark)).toMatchObject({ reason: "menu" });
    expect(await fixture.exit).toEqual({ code: 0, signal: null });
  });

  /** Polls the tree until a node is showing (e.g. an item of a menu that is opening). */
  async function waitForNode(name: string, role: string): Promise<AccessibleNode> {
    return waitUntil(`${role} ${name} to show`, 10_000, async () => {
      const found = (await accessibleNodes(desktop, APP)).find((n) => n.name === name && n.role === role);
      return found && found.states.includes("showing") && found.extents[2] > 0 ? found : undefined;
    });
  }
});
