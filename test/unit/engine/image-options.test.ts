// Issue 14, screenshot options: the --region text, its conversion from window
// to screen coordinates and its clipping, the options under a front end's
// scope (MCP's caps), the capability refusals, the image-to-screen map of a
// cropped and scaled result, and the store's file names and retention for
// every format (and the set-of-marks image).
import { describe, expect, it } from "vitest";
import { readdirSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { hasImageOptions, imageOptionsOf, intersect, parseRegion, regionToScreen, requireImageSupport, underScope, withoutImageArgs } from "../../../src/engine/image-options.ts";
import { screenRectOf, toInfo } from "../../../src/engine/observe.ts";
import type { WidthPlan } from "../../../src/engine/ports.ts";
import { IMAGE_EXTENSION, SnapshotStore, STORE_FILE_NAMES } from "../../../src/session/store.ts";
import { checkObservationArgs } from "../../../src/protocol/observation.ts";
import type { Hello } from "../../../src/wire/messages.ts";
import { thrown } from "../throws.ts";
import { snap, tempDirs } from "../session/fixtures.ts";

const WIN = { x: 100, y: 50, width: 400, height: 300 };

describe("--region", () => {
  it("parses x,y,w,h; negative origins are allowed, an empty size or another syntax is INVALID_ARGUMENTS", () => {
    expect(parseRegion("10,20,30,40")).toEqual({ x: 10, y: 20, width: 30, height: 40 });
    expect(parseRegion("-5,-6,7,8")).toEqual({ x: -5, y: -6, width: 7, height: 8 });
    expect(thrown(() => parseRegion("1,2,0,4")).details).toMatchObject({ flag: "--region", reason: "region-empty" });
    expect(thrown(() => parseRegion("1,2,3,0")).details.reason).toBe("region-empty");
    expect(thrown(() => parseRegion("1,2,3")).details.reason).toBe("region-syntax");
    expect(thrown(() => parseRegion("1.5,2,3,4")).details.reason).toBe("region-syntax");
  });

  it("window coordinates are relative to the window's bounds origin", () => {
    expect(regionToScreen({ x: 10, y: 20, width: 30, height: 40 }, "window", WIN)).toEqual({ x: 110, y: 70, width: 30, height: 40 });
    expect(regionToScreen({ x: 0, y: 0, width: 400, height: 300 }, "window", WIN)).toEqual(WIN);
  });

  it("screen coordinates are taken as they are", () => {
    expect(regionToScreen({ x: 150, y: 60, width: 20, height: 10 }, "screen", WIN)).toEqual({ x: 150, y: 60, width: 20, height: 10 });
  });

  it("is clipped to the window: what reaches out is cut, never widened", () => {
    // Window coordinates: 380..420 x -10..10 -> 380..400 x 0..10 of the window.
    expect(regionToScreen({ x: 380, y: -10, width: 40, height: 20 }, "window", WIN)).toEqual({ x: 480, y: 50, width: 20, height: 10 });
    // Screen coordinates reaching over the window's left edge.
    expect(regionToScreen({ x: 90, y: 100, width: 20, height: 20 }, "screen", WIN)).toEqual({ x: 100, y: 100, width: 10, height: 20 });
  });

  it("nothing left after clipping: INVALID_ARGUMENTS region-outside-window, whichever the coordinates", () => {
    const e = thrown(() => regionToScreen({ x: 400, y: 0, width: 10, height: 10 }, "window", WIN));
    expect(e.details).toMatchObject({ flag: "--region", reason: "region-outside-window", regionCoords: "window", windowWidth: 400, windowHeight: 300 });
    expect(e.message).toContain("window 10x10 at (400, 0)");
    // Touching the edge is no overlap.
    expect(thrown(() => regionToScreen({ x: 0, y: 0, width: 100, height: 50 }, "screen", WIN)).details.reason).toBe("region-outside-window");
    expect(thrown(() => regionToScreen({ x: -20, y: 10, width: 20, height: 10 }, "window", WIN)).details.reason).toBe("region-outside-window");
  });

  it("without a window: screen coordinates unclipped (the helper clips to the screen), window coordinates refused", () => {
    expect(regionToScreen({ x: -10, y: 5, width: 50, height: 50 }, "screen", null)).toEqual({ x: -10, y: 5, width: 50, height: 50 });
    expect(thrown(() => regionToScreen({ x: 0, y: 0, width: 5, height: 5 }, "window", null)).details.reason).toBe("region-needs-window");
  });

  it("intersect", () => {
    expect(intersect({ x: 0, y: 0, width: 10, height: 10 }, { x: 5, y: 5, width: 10, height: 10 })).toEqual({ x: 5, y: 5, width: 5, height: 5 });
    expect(intersect({ x: 0, y: 0, width: 10, height: 10 }, { x: 10, y: 0, width: 10, height: 10 })).toBeNull();
  });
});

describe("the image flags become screenshot options", () => {
  it("none given: undefined (the front end's scope applies as before)", () => {
    expect(hasImageOptions({})).toBe(false);
    expect(imageOptionsOf({}, WIN)).toBeUndefined();
  });

  it("the default coordinates: window with a window, screen without", () => {
    expect(imageOptionsOf({ region: "0,0,10,10" }, WIN)!.region).toEqual({ x: 100, y: 50, width: 10, height: 10 });
    expect(imageOptionsOf({ region: "0,0,10,10" }, null)!.region).toEqual({ x: 0, y: 0, width: 10, height: 10 });
    expect(imageOptionsOf({ region: "150,60,10,10", regionCoords: "screen" }, WIN)!.region).toEqual({ x: 150, y: 60, width: 10, height: 10 });
  });

  it("width, format and quality pass through; the image fields are stripped for the second run", () => {
    expect(imageOptionsOf({ maxWidth: 320, imageFormat: "webp", quality: 55 }, WIN)).toEqual({ maxWidth: 320, format: "webp", quality: 55 });
    expect(withoutImageArgs({ app: "a", windowId: 3, marks: true, region: "1,1,1,1", regionCoords: "window" as const, maxWidth: 20, imageFormat: "jpeg" as const, quality: 3 })).toEqual({ app: "a", windowId: 3, marks: true });
  });

  it("flag conflicts: --max-width needs the image; --quality needs jpeg or webp; --region-coords needs --region", () => {
    expect(thrown(() => checkObservationArgs({ noScreenshot: true, maxWidth: 100 })).details).toMatchObject({ flag: "--no-screenshot", conflictsWith: "--max-width" });
    expect(thrown(() => checkObservationArgs({ snapshotId: "cs_x", maxWidth: 100 })).details.conflictsWith).toBe("--max-width");
    expect(thrown(() => checkObservationArgs({ quality: 50 })).details.flag).toBe("--quality");
    expect(thrown(() => checkObservationArgs({ quality: 50, imageFormat: "png" })).details.flag).toBe("--quality");
    expect(() => checkObservationArgs({ quality: 50, imageFormat: "jpeg" })).not.toThrow();
    expect(thrown(() => checkObservationArgs({ regionCoords: "screen" })).details.flag).toBe("--region-coords");
  });
});

describe("under a front end's scope (MCP's image caps)", () => {
  const plan: WidthPlan = { widthFor: (a) => (a ? Math.min(a.width, 600) : 600), fits: (s) => s.width <= 600 };

  it("no scope: the command's own options", () => {
    expect(underScope(undefined, { region: WIN, format: "jpeg" })).toEqual({ region: WIN, format: "jpeg" });
  });

  it("the smaller width of the two; the plan still checks the result", () => {
    const merged = underScope({ maxWidth: plan, ifSupported: true }, { maxWidth: 400 });
    const mw = merged.maxWidth as WidthPlan;
    expect(mw.widthFor({ width: 1000, height: 500 })).toBe(400);
    expect(mw.widthFor({ width: 300, height: 500 })).toBe(300);
    expect(mw.fits({ width: 700, height: 1 })).toBe(false);
    expect(underScope({ maxWidth: 500 }, { maxWidth: 800 }).maxWidth).toBe(500);
  });

  it("the command's format and region under the scope's width; ifSupported only when the command asked for no crop or width", () => {
    const merged = underScope({ maxWidth: plan, ifSupported: true }, { format: "webp", quality: 40 });
    expect(merged).toMatchObject({ format: "webp", quality: 40, ifSupported: true, maxWidth: plan });
    const cropped = underScope({ maxWidth: plan, ifSupported: true }, { region: WIN });
    expect(cropped.ifSupported).toBeUndefined();
    expect(cropped.region).toEqual(WIN);
  });
});

describe("capabilities", () => {
  const hello = (caps: string[]): Hello =>
    ({
      type: "hello",
      protocol: [2, 1],
      helper: { name: "old", version: "1.0", platform: "fake", backend: "x" },
      capabilities: Object.fromEntries(caps.map((k) => [k, { supported: true, verified: "vectors" }])),
      limits: { max_frame_bytes: 1 },
    }) as unknown as Hello;

  it("JPEG or WebP without screenshot.formats: ACTION_UNSUPPORTED naming the capability; PNG needs nothing", () => {
    const old = hello(["screenshot", "screenshot.scale"]);
    const e = thrown(() => requireImageSupport(old, { imageFormat: "webp" }, "screenshot"), "ACTION_UNSUPPORTED");
    expect(e.details).toMatchObject({ capability: "screenshot.formats", flag: "--image-format" });
    expect(e.message).toContain("writes PNG only");
    expect(() => requireImageSupport(old, { imageFormat: "png", region: "0,0,5,5" }, "screenshot")).not.toThrow();
    expect(() => requireImageSupport(hello(["screenshot.formats"]), { imageFormat: "jpeg" }, "get-app-state")).not.toThrow();
  });

  it("a region or width without screenshot.scale: ACTION_UNSUPPORTED", () => {
    const e = thrown(() => requireImageSupport(hello(["screenshot.formats"]), { maxWidth: 100 }, "get-app-state"), "ACTION_UNSUPPORTED");
    expect(e.details).toMatchObject({ capability: "screenshot.scale", flag: "--max-width" });
  });
});

describe("the image-to-screen map of a result", () => {
  const base = { path: "/x", method: "m", redacted: 0 };

  it("a region at scale 1: screenRect is the region", () => {
    const info = toInfo({ ...base, width: 60, height: 30, scale: 1, origin: { x: 130, y: 50 }, format: "jpeg" });
    expect(info.screenRect).toEqual({ x: 130, y: 50, width: 60, height: 30 });
    expect(info.format).toBe("jpeg");
  });

  it("a region scaled: the screen area the pixels map to (origin + size / scale)", () => {
    // A 400x301 region scaled to 200 wide: 200x150 at 0.5 shows 400x300 screen pixels.
    expect(screenRectOf({ width: 200, height: 150, scale: 0.5, origin: { x: 100, y: 80 } })).toEqual({ x: 100, y: 80, width: 400, height: 300 });
    // A factor that is no simple fraction: 333 of 1000 pixels.
    const s = 333 / 1000;
    expect(screenRectOf({ width: 333, height: Math.floor(700 * s), scale: s, origin: { x: -20, y: 0 } })).toEqual({ x: -20, y: 0, width: 1000, height: 700 });
  });

  it("a helper before screenshot.formats names no format: png", () => {
    expect(toInfo({ ...base, width: 1, height: 1, scale: 1, origin: { x: 0, y: 0 } }).format).toBe("png");
  });
});

describe("the store's screenshot files", () => {
  const tmp = tempDirs("deckhand-imgopts-");

  it("each format gets its extension; the set-of-marks image is <name>-marks.png", () => {
    const store = new SnapshotStore(tmp());
    expect(store.screenshotPath("shot_a_b")).toMatch(/\/screenshots\/shot_a_b\.png$/);
    expect(store.screenshotPath("shot_a_b", "jpeg")).toMatch(/\/shot_a_b\.jpg$/);
    expect(store.screenshotPath("shot_a_b", "webp")).toMatch(/\/shot_a_b\.webp$/);
    expect(store.screenshotPath("shot_a_b-marks")).toMatch(/\/shot_a_b-marks\.png$/);
    expect(IMAGE_EXTENSION).toEqual({ png: "png", jpeg: "jpg", webp: "webp" });
  });

  it("the retention pattern: deckhand's names in every format and the marks image; nothing else", () => {
    const p = STORE_FILE_NAMES.screenshot;
    for (const n of ["cs_abcdefghij.png", "cs_abcdefghij.jpg", "cs_abcdefghij.webp", "cs_abcdefghij-marks.png", "shot_k2_x1.png", "shot_k2_x1.jpg", "shot_k2_x1.webp", "shot_k2_x1-marks.png"]) expect(p.test(n), n).toBe(true);
    for (const n of ["cs_abcdefghij.jpeg", "cs_abcdefghij-marks.jpg", "cs_abcdefghij-marks.webp", "holiday.jpg", "shot_k2_x1.gif", "cs_abcdefghij.png.tmp", ".cs_abcdefghij.jpg.tmp-1-2", "cs_abcdefghij-other.png"]) expect(p.test(n), n).toBe(false);
  });

  it("retention prunes old JPEG, WebP and marks files like PNGs, and keeps strays", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    const old = Date.now() / 1000 - 100_000;
    const exts = [".png", ".jpg", ".webp", "-marks.png"];
    for (let i = 0; i < 40; i++) {
      const f = join(root, "screenshots", `shot_${i.toString(36)}_x${exts[i % 4]}`);
      writeFileSync(f, "");
      utimesSync(f, old + i, old + i);
    }
    writeFileSync(join(root, "screenshots", "mine.jpg"), "mine");
    store.save(snap());
    const left = readdirSync(join(root, "screenshots"));
    expect(left).toContain("mine.jpg");
    expect(left.filter((n) => STORE_FILE_NAMES.screenshot.test(n))).toHaveLength(30);
    // The 10 oldest went, whatever their format.
    for (let i = 0; i < 10; i++) expect(left).not.toContain(`shot_${i.toString(36)}_x${exts[i % 4]}`);
  });
});
