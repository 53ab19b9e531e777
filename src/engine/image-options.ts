// Screenshot options of `screenshot` and `get-app-state` (issue 14): a
// region (`--region x,y,w,h`, in window or screen coordinates), a most width
// (`--max-width`), a format (`--image-format png|jpeg|webp`) and a quality.
// All of it is done by the helper (the screenshot op's region, max_width,
// format and quality); here the flags become the op's screen rectangle and
// options, checked against the window and the helper's capabilities before
// anything is captured. Docs: docs/screenshots.md.
//
// Coordinates: with an app, `--region` is relative to the window's bounds
// origin (the top-left pixel of the window image at scale 1) unless
// `--region-coords screen` says it is in screen pixels; without an app it is
// the screen's. Either way it is clipped to the window (the helper clips to
// the screen); a region with nothing left after clipping is refused
// INVALID_ARGUMENTS (details.reason region-outside-window), never widened to
// the whole window.
import { DeckhandError } from "../protocol/errors.ts";
import type { Hello, Rect } from "../wire/messages.ts";
import type { ScreenshotOptions, WidthPlan } from "./ports.ts";

export type ImageFormatName = "png" | "jpeg" | "webp";

/** The image fields of screenshot and get-app-state (IMAGE_FIELDS in src/protocol/commands.ts). */
export interface ImageArgs {
  region?: string;
  regionCoords?: "window" | "screen";
  maxWidth?: number;
  imageFormat?: ImageFormatName;
  quality?: number;
}

/** The fields handled here (a command run again without them runs under the options they became). */
export const IMAGE_ARG_KEYS = ["region", "regionCoords", "maxWidth", "imageFormat", "quality"] as const;

/** Whether any image option was given. */
export function hasImageOptions(args: ImageArgs): boolean {
  return IMAGE_ARG_KEYS.some((k) => args[k] !== undefined);
}

/** The args without the image fields. */
export function withoutImageArgs<A extends ImageArgs>(args: A): Omit<A, (typeof IMAGE_ARG_KEYS)[number]> {
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const k of IMAGE_ARG_KEYS) delete out[k];
  return out as Omit<A, (typeof IMAGE_ARG_KEYS)[number]>;
}

function invalidRegion(message: string, details: Record<string, string | number>): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message, { details: { flag: "--region", ...details } });
}

/** "x,y,w,h" -> a rectangle; width and height at least 1. */
export function parseRegion(text: string): Rect {
  const m = /^(-?\d{1,6}),(-?\d{1,6}),(\d{1,6}),(\d{1,6})$/.exec(text.trim());
  if (!m) throw invalidRegion(`--region must be x,y,w,h in pixels (integers), not "${text.slice(0, 40)}"`, { reason: "region-syntax" });
  const [x, y, width, height] = m.slice(1).map(Number) as [number, number, number, number];
  if (width < 1 || height < 1) throw invalidRegion(`--region ${text} is empty: its width and height must be at least 1`, { reason: "region-empty" });
  return { x, y, width, height };
}

/** The overlap of two rectangles, or null. */
export function intersect(a: Rect, b: Rect): Rect | null {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.width, b.x + b.width);
  const y1 = Math.min(a.y + a.height, b.y + b.height);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, width: x1 - x0, height: y1 - y0 } : null;
}

const show = (r: Rect) => `${r.width}x${r.height} at (${r.x}, ${r.y})`;

/**
 * The screen rectangle a region names: `window` coordinates are relative to
 * the window's bounds origin, `screen` ones are screen pixels. Clipped to the
 * window when there is one (its screen bounds); nothing left ->
 * INVALID_ARGUMENTS. Without a window the rectangle is returned as it is (the
 * helper clips it to the screen and refuses one outside it).
 */
export function regionToScreen(region: Rect, coords: "window" | "screen", window: Rect | null): Rect {
  if (coords === "window" && window === null) {
    throw invalidRegion("--region-coords window needs --app (a window): without one, --region is in screen coordinates", { reason: "region-needs-window" });
  }
  const onScreen = coords === "window" ? { ...region, x: window!.x + region.x, y: window!.y + region.y } : region;
  if (window === null) return onScreen;
  const clipped = intersect(onScreen, window);
  if (!clipped) {
    const inWindow = coords === "window" ? `window ${show(region)}` : `screen ${show(region)}`;
    throw invalidRegion(`--region (${inWindow}) shows nothing of the window (${window.width}x${window.height}, at screen (${window.x}, ${window.y}))`, {
      reason: "region-outside-window",
      regionCoords: coords,
      windowWidth: window.width,
      windowHeight: window.height,
    });
  }
  return clipped;
}

/**
 * The screenshot options the image flags ask for (undefined: none given).
 * `window`: the target window's screen bounds (null: the whole screen).
 */
export function imageOptionsOf(args: ImageArgs, window: Rect | null): ScreenshotOptions | undefined {
  if (!hasImageOptions(args)) return undefined;
  const coords = args.regionCoords ?? (window ? "window" : "screen");
  const region = args.region !== undefined ? regionToScreen(parseRegion(args.region), coords, window) : undefined;
  if (args.region === undefined && args.regionCoords !== undefined) {
    throw new DeckhandError("INVALID_ARGUMENTS", "--region-coords says what --region is relative to: give --region too", { details: { flag: "--region-coords" } });
  }
  return {
    ...(region ? { region } : {}),
    ...(args.maxWidth !== undefined ? { maxWidth: args.maxWidth } : {}),
    ...(args.imageFormat !== undefined ? { format: args.imageFormat } : {}),
    ...(args.quality !== undefined ? { quality: args.quality } : {}),
  };
}

/** The smaller of a fixed width and a plan's (a front end's image caps). */
function capped(width: number, plan: number | WidthPlan): number | WidthPlan {
  if (typeof plan === "number") return Math.min(width, plan);
  return { widthFor: (area) => Math.min(width, plan.widthFor(area)), fits: (size) => plan.fits(size) };
}

/**
 * The command's own options under the front end's scope (MCP's image caps,
 * Engine.withScreenshotOptions): the command's region, format and quality;
 * the smaller width of the two. A scope's `ifSupported` (capture unscaled
 * when the helper cannot scale) holds only when the command asked for no
 * crop or width of its own: what it asked for is never dropped silently.
 */
export function underScope(scope: ScreenshotOptions | undefined, own: ScreenshotOptions): ScreenshotOptions {
  if (!scope) return own;
  const maxWidth = own.maxWidth !== undefined && scope.maxWidth !== undefined ? capped(own.maxWidth as number, scope.maxWidth) : (own.maxWidth ?? scope.maxWidth);
  const asked = own.region !== undefined || own.maxWidth !== undefined;
  return {
    ...(own.region ?? scope.region ? { region: own.region ?? scope.region } : {}),
    ...(maxWidth !== undefined ? { maxWidth } : {}),
    ...(own.format ?? scope.format ? { format: own.format ?? scope.format } : {}),
    ...(own.quality ?? scope.quality ? { quality: own.quality ?? scope.quality } : {}),
    ...(scope.ifSupported && !asked ? { ifSupported: true } : {}),
  };
}

/**
 * Stage "action support" for the image flags: a crop or width of the
 * command's own needs screenshot.scale (never dropped, unlike a front end's
 * caps), JPEG or WebP needs screenshot.formats (protocol 2.2). Refused
 * ACTION_UNSUPPORTED before anything is captured.
 */
export function requireImageSupport(hello: Hello, args: ImageArgs, command: string): void {
  const helper = `${hello.helper.name} ${hello.helper.version}`;
  const format = args.imageFormat;
  if (format !== undefined && format !== "png" && !hello.capabilities["screenshot.formats"]?.supported) {
    throw new DeckhandError("ACTION_UNSUPPORTED", `${command} --image-format ${format}: helper ${helper} writes PNG only (no screenshot.formats; protocol 2.2 adds it)`, {
      details: { capability: "screenshot.formats", helper: hello.helper.name, flag: "--image-format" },
      remediation: "Leave --image-format at png, or update the helper (`deckhand helper check` shows what it supports).",
    });
  }
  if ((args.region !== undefined || args.maxWidth !== undefined) && !hello.capabilities["screenshot.scale"]?.supported) {
    throw new DeckhandError("ACTION_UNSUPPORTED", `${command} ${args.region !== undefined ? "--region" : "--max-width"}: helper ${helper} cannot crop or scale a screenshot (no screenshot.scale)`, {
      details: { capability: "screenshot.scale", helper: hello.helper.name, flag: args.region !== undefined ? "--region" : "--max-width" },
    });
  }
}
