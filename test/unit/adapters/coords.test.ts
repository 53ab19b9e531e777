// Image <-> screen remapping, with the edges: pixel 0 and width-1 land inside
// the screen rect for every scale; one past the edge is refused.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { adapterFit, fitSize, imageRegionToScreen, imageToScreen, makeMap, screenToImage, vendorPointToScreen, DEFAULT_MAX_PIXELS, DEFAULT_MAX_SIDE, DEFAULT_MAX_WIDTH } from "../../../src/adapters/coords.ts";

function code(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (e) {
    return e instanceof DeckhandError ? e.code : "THROWN";
  }
}

describe("fitSize", () => {
  it("caps the width at 1440 by default and keeps the aspect", () => {
    expect(DEFAULT_MAX_WIDTH).toBe(1440);
    expect(fitSize(1920, 1080)).toEqual({ width: 1440, height: 810 });
    expect(fitSize(2560, 1600)).toEqual({ width: 1440, height: 900 });
    expect(fitSize(3001, 1001)).toEqual({ width: 1440, height: 480 }); // 480.33 rounds down
  });
  it("never enlarges", () => {
    expect(fitSize(800, 600)).toEqual({ width: 800, height: 600 });
    expect(fitSize(1440, 5000)).toEqual({ width: 1440, height: 5000 });
  });
  it("is configurable, and maxHeight applies after the width cap", () => {
    expect(fitSize(1920, 1080, { maxWidth: 1024 })).toEqual({ width: 1024, height: 576 });
    expect(fitSize(1000, 4000, { maxHeight: 1000 })).toEqual({ width: 250, height: 1000 });
    expect(fitSize(10000, 3, { maxWidth: 100 })).toEqual({ width: 100, height: 1 }); // never zero
  });
});

describe("imageToScreen", () => {
  const cases = [
    { name: "1:1 window at an offset", capture: { width: 800, height: 600, scale: 1, origin: { x: 10, y: 20 } } },
    { name: "1920x1080 screen shown at 1440x810", capture: { width: 1920, height: 1080, scale: 1, origin: { x: 0, y: 0 } } },
    { name: "HiDPI x2, not downscaled", capture: { width: 1000, height: 700, scale: 2, origin: { x: 50, y: 60 } } },
    { name: "HiDPI x2 and downscaled", capture: { width: 2880, height: 1800, scale: 2, origin: { x: -1440, y: 0 } } },
    { name: "fractional scale 1.25", capture: { width: 2400, height: 1350, scale: 1.25, origin: { x: 7, y: 9 } } },
    { name: "odd sizes", capture: { width: 1441, height: 3, scale: 1, origin: { x: 0, y: 0 } } },
  ];
  for (const c of cases) {
    it(`edges stay inside the screen rect: ${c.name}`, () => {
      const shown = fitSize(c.capture.width, c.capture.height);
      const m = makeMap(c.capture, shown);
      const sw = c.capture.width / c.capture.scale;
      const sh = c.capture.height / c.capture.scale;
      const first = imageToScreen(m, 0, 0);
      const last = imageToScreen(m, shown.width - 1, shown.height - 1);
      expect(first).toEqual({ x: c.capture.origin.x, y: c.capture.origin.y });
      expect(last.x).toBe(c.capture.origin.x + Math.ceil(sw) - 1);
      expect(last.y).toBe(c.capture.origin.y + Math.ceil(sh) - 1);
      expect(code(() => imageToScreen(m, shown.width, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, 0, shown.height))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, -1, 0))).toBe("COORDINATE_OUT_OF_BOUNDS");
      expect(code(() => imageToScreen(m, 0, -1))).toBe("COORDINATE_OUT_OF_BOUNDS");
    });
  }

  it("is exact at 1:1 and maps pixel centres when scaled", () => {
    const m = makeMap({ width: 800, height: 600, scale: 1, origin: { x: 10, y: 20 } }, { width: 800, height: 600 });
    expect(imageToScreen(m, 30, 30)).toEqual({ x: 40, y: 50 });
    const d = makeMap({ width: 1920, height: 1080, scale: 1, origin: { x: 0, y: 0 } }, { width: 1440, height: 810 });
    // image pixel 3 covers screen [4, 5.33): its centre 4.67 -> 4.
    expect(imageToScreen(d, 3, 3)).toEqual({ x: 4, y: 4 });
    expect(imageToScreen(d, 720, 405)).toEqual({ x: 960, y: 540 });
    const hi = makeMap({ width: 1000, height: 700, scale: 2, origin: { x: 0, y: 0 } }, { width: 1000, height: 700 });
    // Two image pixels per screen pixel: 998 and 999 are both screen pixel 499 (round(999 / 2) would be 500, off the window).
    expect(imageToScreen(hi, 998, 0).x).toBe(499);
    expect(imageToScreen(hi, 999, 0).x).toBe(499);
  });

  it("refuses fractional and non-numeric coordinates as INVALID_ARGUMENTS", () => {
    const m = makeMap({ width: 10, height: 10, scale: 1, origin: { x: 0, y: 0 } }, { width: 10, height: 10 });
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
        (w, h, scale, ox, maxWidth, t) => {
          const capture = { width: w, height: h, scale, origin: { x: ox, y: -ox } };
          const shown = fitSize(w, h, { maxWidth });
          const m = makeMap(capture, shown);
          const ix = Math.min(shown.width - 1, Math.floor(t * shown.width));
          const p = imageToScreen(m, ix, shown.height - 1);
          expect(p.x).toBeGreaterThanOrEqual(ox);
          expect(p.x).toBeLessThan(ox + Math.ceil(w / scale));
          expect(p.y).toBeLessThan(-ox + Math.ceil(h / scale));
          if (ix + 1 < shown.width) expect(imageToScreen(m, ix + 1, 0).x).toBeGreaterThanOrEqual(p.x);
          // Downscaled (one image pixel >= one screen pixel): the screen pixel is shown by that image pixel.
          if (m.scaleX <= 1) expect(screenToImage(m, p.x, p.y).x).toBe(ix);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("imageRegionToScreen (zoom)", () => {
  const m = makeMap({ width: 1920, height: 1080, scale: 1, origin: { x: 100, y: 50 } }, { width: 1440, height: 810 });
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

describe("adapterFit: images fit the vendors' limits on every side", () => {
  it("defaults: 1440 wide, longest side 1568, 1.2 megapixels", () => {
    expect([DEFAULT_MAX_SIDE, DEFAULT_MAX_PIXELS]).toEqual([1568, 1_200_000]);
    expect(adapterFit()).toEqual({ maxWidth: 1440, maxSide: 1568, maxPixels: 1_200_000 });
    expect(fitSize(1920, 1080, adapterFit())).toEqual({ width: 1440, height: 810 }); // within every cap
    // A tall window: the width cap alone would hand Anthropic 1440x5000, which it would downsize behind the map's back.
    expect(fitSize(1440, 5000, adapterFit())).toEqual({ width: 452, height: 1568 });
    expect(fitSize(1000, 4000, adapterFit())).toEqual({ width: 392, height: 1568 });
    // A square: the area cap.
    expect(fitSize(1400, 1400, adapterFit())).toEqual({ width: 1095, height: 1095 });
    expect(fitSize(800, 600, adapterFit())).toEqual({ width: 800, height: 600 }); // never enlarged
  });

  it("the caps are configurable", () => {
    expect(fitSize(1920, 1080, adapterFit({ maxWidth: 1024 }))).toEqual({ width: 1024, height: 576 });
    expect(fitSize(1000, 4000, adapterFit({ maxSide: 1000 }))).toEqual({ width: 250, height: 1000 });
    expect(fitSize(1920, 1080, adapterFit({ maxPixels: 100_000 }))).toEqual({ width: 421, height: 237 });
    expect(fitSize(3000, 3000, adapterFit({ maxWidth: 10000, maxSide: 10000, maxPixels: 100_000_000 }))).toEqual({ width: 3000, height: 3000 });
  });

  it("property: every cap holds, the aspect is kept, nothing is enlarged", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 1, max: 8000 }),
        fc.integer({ min: 16, max: 4000 }),
        fc.integer({ min: 16, max: 4000 }),
        fc.integer({ min: 256, max: 20_000_000 }),
        (w, h, maxWidth, maxSide, maxPixels) => {
          const s = fitSize(w, h, adapterFit({ maxWidth, maxSide, maxPixels }));
          expect(s.width).toBeLessThanOrEqual(Math.max(maxWidth, 1));
          expect(Math.max(s.width, s.height)).toBeLessThanOrEqual(maxSide);
          expect(s.width * s.height).toBeLessThanOrEqual(maxPixels);
          expect(s.width).toBeLessThanOrEqual(w);
          expect(s.height).toBeLessThanOrEqual(h);
          // Aspect: within a pixel of rounding on each side.
          if (s.width > 1 && s.height > 1) expect(Math.abs(s.width / w - s.height / h)).toBeLessThanOrEqual(1 / s.width + 1 / s.height);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe("vendorPointToScreen: fractional points are rounded through the map", () => {
  const m = makeMap({ width: 1920, height: 1080, scale: 1, origin: { x: 100, y: 50 } }, { width: 1440, height: 810 });
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
