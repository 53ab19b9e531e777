// Image <-> screen remapping, with the edges: pixel 0 and width-1 land inside
// the screen rect for every scale; one past the edge is refused. The helper
// scales (the screenshot op's max_width); here is the width to ask for and
// the map of the PNG it wrote, read from its result as given.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import {
  adapterFit,
  fitsCaps,
  fitWidth,
  imagePlan,
  imageRegionToScreen,
  imageToScreen,
  makeMap,
  MIN_MAX_WIDTH,
  screenToImage,
  vendorPointToScreen,
  DEFAULT_MAX_PIXELS,
  DEFAULT_MAX_SIDE,
  DEFAULT_MAX_WIDTH,
} from "../../../src/adapters/coords.ts";

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof DeckhandError ? e.code : "THROWN";
  }
}

/** What the helper writes of a w x h capture asked for max_width mw (screenshot op): never up, one factor, the height rounded down. */
function helperImage(w: number, h: number, mw: number): { width: number; height: number; factor: number } {
  if (w <= mw) return { width: w, height: h, factor: 1 };
  return { width: mw, height: Math.max(1, Math.floor((h * mw) / w)), factor: mw / w };
}
const sized = (w: number, h: number, caps = adapterFit()) => {
  const { width, height } = helperImage(w, h, fitWidth(w, h, caps));
  return { width, height };
};

describe("fitWidth: the max_width to ask the helper for", () => {
  it("defaults: 1440 wide, longest side 1568, 1.2 megapixels", () => {
    expect([DEFAULT_MAX_WIDTH, DEFAULT_MAX_SIDE, DEFAULT_MAX_PIXELS]).toEqual([1440, 1568, 1_200_000]);
    expect(adapterFit()).toEqual({ maxWidth: 1440, maxSide: 1568, maxPixels: 1_200_000 });
    expect(fitWidth(1920, 1080, adapterFit())).toBe(1440);
    expect(sized(1920, 1080)).toEqual({ width: 1440, height: 810 });
    // 16:10: the width cap alone would be 1440x900, over the area cap.
    expect(sized(1920, 1200)).toEqual({ width: 1385, height: 865 });
    expect(sized(2560, 1600)).toEqual({ width: 1385, height: 865 });
    // A tall window: the width cap alone would hand Anthropic 1440x5000, which it would downsize behind the map's back.
    expect(sized(1440, 5000)).toEqual({ width: 451, height: 1565 });
    expect(sized(1000, 4000)).toEqual({ width: 392, height: 1568 });
    // A square: the area cap.
    expect(sized(1400, 1400)).toEqual({ width: 1095, height: 1095 });
  });

  it("asks for more than a small capture has: the helper never scales up, so it comes at its own size", () => {
    expect(fitWidth(800, 600, adapterFit())).toBeGreaterThan(800);
    expect(sized(800, 600)).toEqual({ width: 800, height: 600 });
    expect(sized(200, 150)).toEqual({ width: 200, height: 150 });
  });

  it("the caps are configurable", () => {
    expect(sized(1920, 1080, adapterFit({ maxWidth: 1024 }))).toEqual({ width: 1024, height: 576 });
    expect(sized(1920, 1080, adapterFit({ maxWidth: 400 }))).toEqual({ width: 400, height: 225 });
    expect(sized(1000, 4000, adapterFit({ maxSide: 1000 }))).toEqual({ width: 250, height: 1000 });
    expect(sized(1920, 1080, adapterFit({ maxPixels: 100_000 }))).toEqual({ width: 421, height: 236 });
    expect(sized(800, 600, adapterFit({ maxPixels: 100_000 }))).toEqual({ width: 365, height: 273 });
    expect(sized(1000, 4000, { maxHeight: 1000 })).toEqual({ width: 250, height: 1000 });
    expect(sized(3000, 3000, adapterFit({ maxWidth: 10000, maxSide: 10000, maxPixels: 100_000_000 }))).toEqual({ width: 3000, height: 3000 });
  });

  it("is never below the helper's least max_width", () => {
    expect(MIN_MAX_WIDTH).toBe(16);
    expect(fitWidth(10, 100_000, adapterFit())).toBe(16);
  });

  it("property: the image is inside every cap, one column wider would not be, whatever the capture's own resolution", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 1, max: 8000 }),
        // Whole device pixel ratios: a fractional one rounds the capture's size, and so its aspect, by a pixel
        // (captureWindow checks every image against the caps and takes it once more when it breaks one).
        fc.constantFrom(1, 2, 3),
        fc.integer({ min: 16, max: 4000 }),
        fc.integer({ min: 16, max: 4000 }),
        fc.integer({ min: 4096, max: 20_000_000 }),
        (w, h, dpr, maxWidth, maxSide, maxPixels) => {
          const caps = adapterFit({ maxWidth, maxSide, maxPixels });
          const mw = fitWidth(w, h, caps);
          const at = (m: number) => ({ width: m, height: Math.max(1, Math.floor((h * m) / w)) });
          if (mw > MIN_MAX_WIDTH || fitsCaps(at(mw), caps)) {
            expect(fitsCaps(at(mw), caps)).toBe(true);
            expect(fitsCaps(at(mw + 1), caps)).toBe(false);
            // The capture at its own resolution (screen size times the device pixel ratio), scaled by the helper.
            const native = { w: w * dpr, h: h * dpr };
            expect(fitsCaps(helperImage(native.w, native.h, mw), caps)).toBe(true);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("imagePlan: the screenshot options' width plan", () => {
  const plan = imagePlan(adapterFit());
  it("a known area gets its fitted width; an unknown one (a first whole-screen shot) the width cap, checked afterwards", () => {
    expect(plan.widthFor({ width: 1920, height: 1200 })).toBe(1385);
    expect(plan.widthFor(null)).toBe(1440);
    expect(imagePlan(adapterFit({ maxSide: 1000 })).widthFor(null)).toBe(1000);
    expect(plan.fits({ width: 1440, height: 810 })).toBe(true);
    expect(plan.fits({ width: 1440, height: 900 })).toBe(false);
    expect(plan.fits({ width: 400, height: 1600 })).toBe(false);
  });
});

describe("makeMap: the result as the helper gave it", () => {
  it("reads width, height, origin and scale, nothing else", () => {
    expect(makeMap({ width: 1440, height: 810, scale: 0.75, origin: { x: 100, y: 50 } })).toEqual({
      width: 1440,
      height: 810,
      origin: { x: 100, y: 50 },
      screenWidth: 1920,
      screenHeight: 1080,
      scaleX: 0.75,
      scaleY: 0.75,
    });
    // One factor for both axes, the height rounded down: the image covers a little less than the window's height.
    const m = makeMap({ width: 1385, height: 865, scale: 1385 / 1920, origin: { x: 0, y: 0 } });
    expect(m.screenWidth).toBe(1920);
    expect(m.screenHeight).toBeCloseTo(1199.13, 2);
  });
});

describe("imageToScreen", () => {
  // Screenshot results: a window at 1:1, a screen the helper scaled, HiDPI captures (scale = the device pixel ratio times the downscale).
  const cases = [
    { name: "1:1 window at an offset", shot: { width: 800, height: 600, scale: 1, origin: { x: 10, y: 20 } } },
    { name: "1920x1080 screen written at 1440x810", shot: { width: 1440, height: 810, scale: 0.75, origin: { x: 0, y: 0 } } },
    { name: "HiDPI x2, not downscaled", shot: { width: 1000, height: 700, scale: 2, origin: { x: 50, y: 60 } } },
    { name: "HiDPI x2 and downscaled to 1440", shot: { width: 1440, height: 900, scale: 1, origin: { x: -1440, y: 0 } } },
    { name: "fractional scale 1.25, downscaled", shot: { width: 1440, height: 810, scale: 0.75, origin: { x: 7, y: 9 } } },
    { name: "16:10 screen under the area cap", shot: { width: 1385, height: 865, scale: 1385 / 1920, origin: { x: 0, y: 0 } } },
    { name: "odd sizes", shot: { width: 1440, height: 2, scale: 1440 / 1441, origin: { x: 0, y: 0 } } },
  ];
  for (const c of cases) {
    it(`edges stay inside the screen rect: ${c.name}`, () => {
      const m = makeMap(c.shot);
      const { width, height, scale, origin } = c.shot;
      const first = imageToScreen(m, 0, 0);
      const last = imageToScreen(m, width - 1, height - 1);
      expect(first).toEqual({ x: origin.x, y: origin.y });
      // The last pixel's centre, on the screen.
      expect(last.x).toBe(origin.x + Math.floor((width - 0.5) / scale));
      expect(last.y).toBe(origin.y + Math.floor((height - 0.5) / scale));
      expect(last.x).toBeLessThan(origin.x + Math.ceil(m.screenWidth));
      expect(last.y).toBeLessThan(origin.y + Math.ceil(m.screenHeight));
      expect(code(() => imageToScreen(m, width, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, 0, height))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, -1, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, 0, -1))).toBe("COORDINATE_OUT_OF_BOUNDS");
    });
  }

  it("is exact at 1:1 and maps pixel centres when scaled", () => {
    const m = makeMap({ width: 800, height: 600, scale: 1, origin: { x: 10, y: 20 } });
    expect(imageToScreen(m, 30, 30)).toEqual({ x: 40, y: 50 });
    const d = makeMap({ width: 1440, height: 810, scale: 0.75, origin: { x: 0, y: 0 } });
    // image pixel 3 covers screen [4, 5.33): its centre 4.67 -> 4.
    expect(imageToScreen(d, 3, 3)).toEqual({ x: 4, y: 4 });
    expect(imageToScreen(d, 720, 405)).toEqual({ x: 960, y: 540 });
    const hi = makeMap({ width: 1000, height: 700, scale: 2, origin: { x: 0, y: 0 } });
    // Two image pixels per screen pixel: 998 and 999 are both screen pixel 499 (round(999 / 2) would be 500, off the window).
    expect(imageToScreen(hi, 998, 0).x).toBe(499);
    expect(imageToScreen(hi, 999, 0).x).toBe(499);
  });

  it("refuses fractional and non-numeric coordinates as INVALID_ARGUMENTS", () => {
    const m = makeMap({ width: 10, height: 10, scale: 1, origin: { x: 0, y: 0 } });
    expect(code(() => imageToScreen(m, 1.5, 1))).toBe("INVALID_ARGUMENTS");
    expect(code(() => imageToScreen(m, "1", 1))).toBe("INVALID_ARGUMENTS");
    expect(code(() => imageToScreen(m, 1, undefined))).toBe("INVALID_ARGUMENTS");
  });

  it("property: monotonic, inside the rect, and screenToImage inverts it", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6000 }),
        fc.integer({ min: 1, max: 4000 }),
        fc.constantFrom(1, 1.25, 1.5, 2, 3),
        fc.integer({ min: -3000, max: 3000 }),
        fc.integer({ min: 64, max: 2000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (w, h, dpr, ox, maxWidth, t) => {
          // A capture of w x h own pixels (w / dpr screen pixels wide) the helper scaled to maxWidth.
          const img = helperImage(w, h, maxWidth);
          // An image held at one row though the factor would make it less (a capture a few pixels tall) covers more than there is.
          fc.pre(h * img.factor >= 1);
          const m = makeMap({ width: img.width, height: img.height, scale: dpr * img.factor, origin: { x: ox, y: -ox } });
          const ix = Math.min(img.width - 1, Math.floor(t * img.width));
          const p = imageToScreen(m, ix, img.height - 1);
          expect(p.x).toBeGreaterThanOrEqual(ox);
          expect(p.x).toBeLessThan(ox + Math.ceil(w / dpr));
          expect(p.y).toBeLessThan(-ox + Math.ceil(h / dpr));
          if (ix + 1 < img.width) expect(imageToScreen(m, ix + 1, 0).x).toBeGreaterThanOrEqual(p.x);
          // Downscaled (one image pixel >= one screen pixel): the screen pixel is shown by that image pixel.
          if (m.scaleX <= 1) expect(screenToImage(m, p.x, p.y).x).toBe(ix);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("imageRegionToScreen (zoom)", () => {
  const m = makeMap({ width: 1440, height: 810, scale: 0.75, origin: { x: 100, y: 50 } });
  it("maps a region; its far edge may equal the image size", () => {
    expect(imageRegionToScreen(m, [0, 0, 1440, 810])).toEqual({ x: 100, y: 50, width: 1920, height: 1080 });
    expect(imageRegionToScreen(m, [720, 405, 1440, 810])).toEqual({ x: 1060, y: 590, width: 960, height: 540 });
  });
  it("refuses a region past the image, an empty one, and a malformed one", () => {
    expect(code(() => imageRegionToScreen(m, [0, 0, 1441, 810]))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(code(() => imageRegionToScreen(m, [-1, 0, 10, 10]))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(code(() => imageRegionToScreen(m, [10, 10, 10, 20]))).toBe("INVALID_ARGUMENTS");
    expect(code(() => imageRegionToScreen(m, [0, 0, 10]))).toBe("INVALID_ARGUMENTS");
    expect(code(() => imageRegionToScreen(m, "0,0,10,10"))).toBe("INVALID_ARGUMENTS");
  });
});

describe("vendorPointToScreen: fractional points are rounded through the map", () => {
  const m = makeMap({ width: 1440, height: 810, scale: 0.75, origin: { x: 100, y: 50 } });
  it("agrees with imageToScreen on integers", () => {
    for (const [x, y] of [[0, 0], [3, 3], [720, 405], [1439, 809]] as const) expect(vendorPointToScreen(m, x, y)).toEqual(imageToScreen(m, x, y));
  });
  it("maps the fraction before rounding, on the screen", () => {
    // Image x 1.5 is screen (1.5 + 0.5) / 0.75 = 2.67 -> 2; image pixel 1 alone would be screen 2 as well, 2 is screen 3.
    expect(vendorPointToScreen(m, 1.5, 1)).toEqual({ x: 102, y: 52 });
    expect(vendorPointToScreen(m, 2.9, 0)).toEqual({ x: 104, y: 50 });
    expect(vendorPointToScreen(m, 1439.4, 809.2)).toEqual({ x: 2019, y: 1129 });
  });
  it("is in bounds when the pixel it rounds to is", () => {
    expect(vendorPointToScreen(m, -0.5, 0)).toEqual({ x: 100, y: 50 });
    expect(code(() => vendorPointToScreen(m, -0.6, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(code(() => vendorPointToScreen(m, 1439.5, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(code(() => vendorPointToScreen(m, Number.NaN, 0))).toBe("INVALID_ARGUMENTS");
    expect(code(() => vendorPointToScreen(m, "1", 0))).toBe("INVALID_ARGUMENTS");
  });
  it("zoom regions may be fractional too", () => {
    expect(imageRegionToScreen(m, [0, 0, 1.5, 1.5])).toEqual({ x: 100, y: 50, width: 2, height: 2 });
  });
});
