// Adapter images through the real helper: the helper crops and scales every
// image a vendor adapter hands a model (the screenshot op's region and
// max_width); deckhand only asks for a width and reads the map from the
// result. Checked here against the real Linux helper on a real X server: the
// PNG is the size the result says, its pixels are the box-filter means of
// the window's own pixels where the map says, a zoom is the exact crop, and
// a click through a scaled image lands on the control the model saw.
import { readFileSync } from "node:fs";
import { beforeAll, expect, it } from "vitest";
import { describeLive, useDesktop, xdotool, type DesktopLike, type Fixture } from "./harness.ts";
import { launchFixture } from "./harness.ts";
import { AdapterServe, newStateDir, ok, requireBuild } from "./deckhand.ts";
import { decodePng, pixel, pngSize, type RgbImage } from "../integration/adapters/png-read.ts";

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

/** Screen point -> the image pixel showing it, through the map the adapter returned. */
function toImage(map: any, p: { x: number; y: number }) {
  return { x: Math.floor((p.x - map.origin.x + 0.5) * map.scaleX), y: Math.floor((p.y - map.origin.y + 0.5) * map.scaleY) };
}

const dataUrlPng = (url: string) => Buffer.from(url.slice("data:image/png;base64,".length), "base64");

describeLive("adapter images through the real helper", () => {
  const desktop = useDesktop();
  let stateDir: string;
  beforeAll(() => {
    requireBuild();
    stateDir = newStateDir();
  });

  it("a window scaled to half: the PNG is the size the result says, each pixel the mean of the 2x2 window pixels the map puts under it, and a click through it lands", async () => {
    const { fixture, mainWindow } = await freshFixture(desktop);
    const app = `pid:${fixture.pid}`;
    const s0 = await ok(desktop, ["get-app-state", "--app", app, "--window-id", String(mainWindow)], { stateDir });
    const native = s0.screenshot;
    expect(native.scale).toBe(1);
    const full = decodePng(readFileSync(native.path));
    expect([full.width, full.height]).toEqual([native.width, native.height]);
    const half = Math.floor(native.width / 2);
    const s = new AdapterServe(desktop, stateDir, ["--adapter", "openai", "--app", app, "--allow-foreground", "--max-width", String(half)]);
    try {
      const call = (action: Record<string, unknown>) =>
        s.send({ call: { type: "computer_call", call_id: `call_${Math.random().toString(36).slice(2)}`, action, pending_safety_checks: [], status: "completed" } });
      const shot = await call({ type: "screenshot" });
      const png = dataUrlPng(shot.output.output.image_url);
      // The size: the helper's (max_width, height rounded down), as the result and the map say.
      const expected = { width: half, height: Math.floor((native.height * half) / native.width) };
      expect(pngSize(png)).toEqual(expected);
      expect(shot.image).toMatchObject(expected);
      expect(shot.image.map).toMatchObject({ ...expected, windowId: mainWindow, origin: native.origin });
      expect(shot.image.map.scaleX).toBeCloseTo(half / native.width, 12);
      expect(shot.image.map.scaleY).toBe(shot.image.map.scaleX);
      // The pixels: at exactly half, image pixel (ix, iy) is the mean of window pixels (2ix..2ix+1, 2iy..2iy+1).
      if (native.width % 2 === 0) {
        const small = decodePng(png);
        const mean = (img: RgbImage, x: number, y: number) => [0, 1, 2].map((c) => (pixel(img, x, y)[c]! + pixel(img, x + 1, y)[c]! + pixel(img, x, y + 1)[c]! + pixel(img, x + 1, y + 1)[c]!) / 4);
        let checked = 0;
        let off = 0;
        for (let iy = 0; iy < small.height; iy += 3) {
          for (let ix = 0; ix < small.width; ix += 3) {
            const want = mean(full, 2 * ix, 2 * iy);
            const got = pixel(small, ix, iy);
            checked++;
            if (got.some((v, c) => Math.abs(v - want[c]!) > 1)) off++;
          }
        }
        // A blinking caret may differ between the two captures; nothing else moves.
        expect(off / checked, `${off} of ${checked} sampled pixels differ`).toBeLessThan(0.01);
      }
      // A click through the half-size image: the model's pixel maps back to the control it showed.
      const subscribe = el(s0, /check/, "Subscribe").bounds;
      const at = toImage(shot.image.map, { x: subscribe.x + Math.floor(subscribe.width / 2), y: subscribe.y + Math.floor(subscribe.height / 2) });
      const mark = fixture.events().length;
      const clicked = await call({ type: "click", button: "left", x: at.x, y: at.y });
      const p = clicked.steps[0];
      expect(p.x).toBeGreaterThanOrEqual(subscribe.x);
      expect(p.x).toBeLessThan(subscribe.x + subscribe.width);
      expect(p.y).toBeGreaterThanOrEqual(subscribe.y);
      expect(p.y).toBeLessThan(subscribe.y + subscribe.height);
      await fixture.waitFor((e) => e.event === "toggled" && e.control === "Subscribe", 5000, mark);
      // The reply's image is again the helper's half-size PNG.
      expect(pngSize(dataUrlPng(clicked.output.output.image_url))).toEqual(expected);
    } finally {
      s.close();
      await fixture.stop();
    }
  });

  it("zoom: the helper crops the region at full resolution, exactly the window's own pixels there", async () => {
    const { fixture, mainWindow } = await freshFixture(desktop);
    const app = `pid:${fixture.pid}`;
    const st = await ok(desktop, ["get-app-state", "--app", app, "--window-id", String(mainWindow), "--no-screenshot"], { stateDir });
    const s = new AdapterServe(desktop, stateDir, ["--adapter", "anthropic", "--app", app]);
    try {
      const call = (input: Record<string, unknown>) => s.send({ call: { type: "tool_use", id: `toolu_${Math.random().toString(36).slice(2)}`, name: "computer", input } });
      const shot = await call({ action: "screenshot" });
      const map = shot.image.map;
      expect(map.scaleX).toBe(1); // the fixture window fits every cap at its own size
      const full = decodePng(Buffer.from(shot.output.content[0].source.data, "base64"));
      expect([full.width, full.height]).toEqual([map.width, map.height]);
      const b = el(st, /button/, "Submit").bounds;
      const region = [b.x - map.origin.x - 4, b.y - map.origin.y - 4, b.x - map.origin.x + b.width + 4, b.y - map.origin.y + b.height + 4];
      const zoom = await call({ action: "zoom", region });
      const png = Buffer.from(zoom.output.content[0].source.data, "base64");
      const w = region[2]! - region[0]!;
      const h = region[3]! - region[1]!;
      expect(pngSize(png)).toEqual({ width: w, height: h });
      expect(zoom.image).toMatchObject({ width: w, height: h, zoom: { x: b.x - 4, y: b.y - 4, width: w, height: h } });
      expect(zoom.image.map.capturedAt).toBe(map.capturedAt); // coordinates still refer to the screenshot
      const crop = decodePng(png);
      let off = 0;
      for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) if (pixel(crop, x, y).join() !== pixel(full, region[0]! + x, region[1]! + y).join()) off++;
      expect(off, `${off} of ${w * h} pixels differ from the screenshot's`).toBe(0);
    } finally {
      s.close();
      await fixture.stop();
    }
  });

  it("the whole screen: scaled by the helper to the width asked for, the map covering the screen", async () => {
    const screen = await ok(desktop, ["screenshot"], { stateDir });
    const native = screen.screenshot;
    const s = new AdapterServe(desktop, stateDir, ["--adapter", "openai", "--max-width", "640"]);
    try {
      const shot = await s.send({ call: { type: "computer_call", call_id: "call_screen", action: { type: "screenshot" }, pending_safety_checks: [], status: "completed" } });
      const expected = { width: 640, height: Math.floor((native.height * 640) / native.width) };
      expect(pngSize(dataUrlPng(shot.output.output.image_url))).toEqual(expected);
      expect(shot.image.map).toMatchObject({ ...expected, windowId: 0, app: null, origin: native.origin, screenWidth: native.width });
      expect(shot.image.map.screenHeight).toBeLessThanOrEqual(native.height);
      expect(shot.image.map.screenHeight).toBeGreaterThan(native.height - native.width / 640);
    } finally {
      s.close();
    }
  });
});
