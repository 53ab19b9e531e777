// Image <-> screen coordinates for the vendor adapters. A model speaks in
// pixels of the last image it was shown; deckhand acts in screen pixels.
// The helper crops and scales every image (the screenshot op's region and
// max_width); here is only the width to ask for and the map of what came back.
import { DeckhandError } from "../protocol/errors.ts";
import type { WidthPlan } from "../engine/ports.ts";

export const DEFAULT_MAX_WIDTH = 1440;
/**
 * The Anthropic API downsizes, without saying so, an image whose longest side
 * is over 1568 px or whose area is over its ~1,600-token budget (about
 * 1.2 megapixels at 750 px per token). An image it rescales no longer matches
 * the map the model's coordinates are read through, so vendor images are
 * asked of the helper inside both limits (OpenAI's are looser).
 */
export const DEFAULT_MAX_SIDE = 1568;
export const DEFAULT_MAX_PIXELS = 1_200_000;

export interface FitOptions {
  /** Largest image width handed to a model (default 1440). Never scaled up. */
  maxWidth?: number;
  /** Optional cap on height, applied after the width cap. */
  maxHeight?: number;
  /** Optional cap on the longest side (adapterFit: default 1568). */
  maxSide?: number;
  /** Optional cap on width x height (adapterFit: default 1,200,000). */
  maxPixels?: number;
}

/** The caps of images handed to a vendor model: the operator's, else the defaults above. */
export function adapterFit(opts: FitOptions = {}): FitOptions {
  return {
    maxWidth: opts.maxWidth ?? DEFAULT_MAX_WIDTH,
    ...(opts.maxHeight !== undefined ? { maxHeight: opts.maxHeight } : {}),
    maxSide: opts.maxSide ?? DEFAULT_MAX_SIDE,
    maxPixels: opts.maxPixels ?? DEFAULT_MAX_PIXELS,
  };
}

/**
 * The map of one screenshot as the model saw it: the helper's PNG, its
 * width, height, origin and scale as the screenshot result gave them. Image
 * pixel (ix, iy) shows the screen area [origin.x + ix / scaleX, origin.x + (ix + 1) / scaleX) x (same for y).
 */
export interface ImageMap {
  /** Size of the image the model saw (the PNG the helper wrote). */
  width: number;
  height: number;
  /** Screen position of the image's top-left corner. */
  origin: { x: number; y: number };
  /** Screen pixels the image covers (image size / scale). */
  screenWidth: number;
  screenHeight: number;
  /** Image pixels per screen pixel (the result's scale: the helper scales both axes by one factor). */
  scaleX: number;
  scaleY: number;
}

/** The helper's least max_width (src/wire/messages.ts). */
export const MIN_MAX_WIDTH = 16;

/** Is an image of this size inside every cap given? */
export function fitsCaps(size: { width: number; height: number }, opts: FitOptions = {}): boolean {
  const { width: w, height: h } = size;
  return (
    w <= (opts.maxWidth ?? DEFAULT_MAX_WIDTH) &&
    (opts.maxHeight === undefined || h <= opts.maxHeight) &&
    (opts.maxSide === undefined || Math.max(w, h) <= opts.maxSide) &&
    (opts.maxPixels === undefined || w * h <= opts.maxPixels)
  );
}

/**
 * The max_width to ask the helper for, for an area of w x h screen pixels:
 * the widest whose image (aspect kept, height rounded down) is inside every
 * cap, whatever the capture's own resolution (a HiDPI capture has more
 * pixels than the area; the helper never scales up, so a smaller capture
 * only makes a smaller image). At least MIN_MAX_WIDTH.
 */
export function fitWidth(w: number, h: number, opts: FitOptions = {}): number {
  const at = (mw: number) => ({ width: mw, height: Math.max(1, Math.floor((h * mw) / w)) });
  const ok = (mw: number) => fitsCaps(at(mw), opts);
  let f = (opts.maxWidth ?? DEFAULT_MAX_WIDTH) / w;
  if (opts.maxHeight !== undefined) f = Math.min(f, opts.maxHeight / h);
  if (opts.maxSide !== undefined) f = Math.min(f, opts.maxSide / Math.max(w, h));
  if (opts.maxPixels !== undefined) f = Math.min(f, Math.sqrt(opts.maxPixels / (w * h)));
  let mw = Math.max(MIN_MAX_WIDTH, Math.floor(w * f));
  // The real-valued bound, then whole pixels: the rounded-down height may let one more column in, or float error one too many.
  if (ok(mw)) while (ok(mw + 1)) mw++;
  else while (mw > MIN_MAX_WIDTH && !ok(mw)) mw--;
  return mw;
}

/**
 * The screenshot options' width plan for images inside these caps: the
 * width for the area captured (src/engine/ports.ts WidthPlan); before a
 * first whole-screen capture, whose size is not known, the width cap (the
 * image is checked, and taken once more when it breaks another cap).
 */
export function imagePlan(opts: FitOptions): WidthPlan {
  return {
    widthFor: (area) => (area ? fitWidth(area.width, area.height, opts) : Math.min(opts.maxWidth ?? DEFAULT_MAX_WIDTH, opts.maxSide ?? Infinity)),
    fits: (size) => fitsCaps(size, opts),
  };
}

/** The map of a screenshot, from its result exactly as the helper gave it (the PNG's size, origin and scale). */
export function makeMap(shot: { width: number; height: number; scale: number; origin: { x: number; y: number } }): ImageMap {
  // 1385 / (1385 / 1920) is 1920 give or take float error: a span that is a whole number of screen pixels stays one.
  const span = (n: number) => {
    const v = n / shot.scale;
    return Math.abs(v - Math.round(v)) < 1e-9 * Math.max(1, v) ? Math.round(v) : v;
  };
  return {
    width: shot.width,
    height: shot.height,
    origin: { x: shot.origin.x, y: shot.origin.y },
    screenWidth: span(shot.width),
    screenHeight: span(shot.height),
    scaleX: shot.scale,
    scaleY: shot.scale,
  };
}

function requireInt(v: unknown, name: string): number {
  if (typeof v !== "number" || !Number.isInteger(v)) {
    throw new DeckhandError("INVALID_ARGUMENTS", `${name} must be an integer pixel of the last screenshot`, { details: { field: name } });
  }
  return v;
}

function requireNumber(v: unknown, name: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new DeckhandError("INVALID_ARGUMENTS", `${name} must be a number: a pixel of the last screenshot`, { details: { field: name } });
  }
  return v;
}

function outOfBounds(map: ImageMap, x: number, y: number, what: string): DeckhandError {
  return new DeckhandError("COORDINATE_OUT_OF_BOUNDS", `${what} (${x}, ${y}) is outside the last screenshot (${map.width}x${map.height})`, {
    details: { x, y, width: map.width, height: map.height },
  });
}

/**
 * One image axis -> screen: the screen pixel under image position i + 0.5
 * (the centre of pixel i when i is an integer), kept inside the screen span.
 */
function axis(i: number, shown: number, origin: number, span: number): number {
  const s = Math.floor(((i + 0.5) * span) / shown);
  return origin + Math.min(Math.max(s, 0), Math.max(0, Math.ceil(span) - 1));
}

function mapPoint(map: ImageMap, ix: number, iy: number, what: string): { x: number; y: number } {
  // A fractional point belongs to the pixel it rounds to: in bounds when that pixel is.
  const rx = Math.round(ix);
  const ry = Math.round(iy);
  if (rx < 0 || ry < 0 || rx >= map.width || ry >= map.height) throw outOfBounds(map, ix, iy, what);
  return { x: axis(ix, map.width, map.origin.x, map.screenWidth), y: axis(iy, map.height, map.origin.y, map.screenHeight) };
}

/**
 * Image pixel -> screen pixel. The pixel's centre is mapped and floored, so
 * pixel 0 lands on the first screen pixel and pixel width-1 on the last one,
 * for any scale (round(ix / s) would land one past the edge when s > 2).
 * A point outside [0, width) x [0, height) is COORDINATE_OUT_OF_BOUNDS.
 */
export function imageToScreen(map: ImageMap, x: unknown, y: unknown, what = "point"): { x: number; y: number } {
  return mapPoint(map, requireInt(x, "x"), requireInt(y, "y"), what);
}

/**
 * A vendor point -> screen pixel: as imageToScreen, but a fractional point
 * (the SDKs type coordinates as numbers) is mapped as it is and rounded on
 * the screen, so its fraction is not lost when the image was downscaled.
 * It is in bounds when the pixel it rounds to is.
 */
export function vendorPointToScreen(map: ImageMap, x: unknown, y: unknown, what = "point"): { x: number; y: number } {
  return mapPoint(map, requireNumber(x, "x"), requireNumber(y, "y"), what);
}

/** Is screen pixel (sx, sy) inside the area the image shows? */
export function screenInImage(map: ImageMap, sx: number, sy: number): boolean {
  return sx >= map.origin.x && sy >= map.origin.y && sx < map.origin.x + Math.ceil(map.screenWidth) && sy < map.origin.y + Math.ceil(map.screenHeight);
}

/** Screen pixel -> the image pixel showing it (clamped to the image). */
export function screenToImage(map: ImageMap, sx: number, sy: number): { x: number; y: number } {
  const ix = Math.floor((sx - map.origin.x + 0.5) * map.scaleX);
  const iy = Math.floor((sy - map.origin.y + 0.5) * map.scaleY);
  return { x: Math.min(Math.max(ix, 0), map.width - 1), y: Math.min(Math.max(iy, 0), map.height - 1) };
}

/**
 * An image region [x1, y1, x2, y2] (x2, y2 exclusive: the far edge may equal
 * the image width or height, a point may not) -> the screen rectangle it
 * shows, in fractional screen pixels.
 */
export function imageRegionToScreen(map: ImageMap, region: unknown): { x: number; y: number; width: number; height: number } {
  if (!Array.isArray(region) || region.length !== 4) {
    throw new DeckhandError("INVALID_ARGUMENTS", "region must be [x1, y1, x2, y2] in pixels of the last screenshot", { details: { field: "region" } });
  }
  // Numbers, as the SDKs type them: a fractional edge is mapped as it is.
  const [x1, y1, x2, y2] = region.map((v, i) => requireNumber(v, ["x1", "y1", "x2", "y2"][i]!));
  if (x2! <= x1! || y2! <= y1!) {
    throw new DeckhandError("INVALID_ARGUMENTS", "region must have x1 < x2 and y1 < y2", { details: { field: "region" } });
  }
  if (x1! < 0 || y1! < 0 || x2! > map.width || y2! > map.height) {
    throw new DeckhandError("COORDINATE_OUT_OF_BOUNDS", `region [${x1}, ${y1}, ${x2}, ${y2}] is outside the last screenshot (${map.width}x${map.height})`, {
      details: { x1: x1!, y1: y1!, x2: x2!, y2: y2!, width: map.width, height: map.height },
    });
  }
  return {
    x: map.origin.x + x1! / map.scaleX,
    y: map.origin.y + y1! / map.scaleY,
    width: (x2! - x1!) / map.scaleX,
    height: (y2! - y1!) / map.scaleY,
  };
}
