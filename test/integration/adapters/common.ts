// Shared by the adapter integration tests: PNG checks on what a vendor
// output carries. The fake helper's screenshots are real PNGs of the size
// it reports, cropped and scaled as the screenshot op asks (screenshot.scale),
// each pixel coloured by the screen point it shows.
import { expect } from "vitest";
import { FAKE } from "../harness.ts";
import { decodePng, type RgbImage } from "./png-read.ts";

export { fakeScreenPoint, pixel, pngSize, type RgbImage } from "./png-read.ts";

/** The helper of the image tests: the fake helper itself (it writes real PNGs). */
export const PNG_HELPER = FAKE;

export function pngFromDataUrl(url: string): RgbImage {
  expect(url.startsWith("data:image/png;base64,")).toBe(true);
  return decodePng(Buffer.from(url.slice("data:image/png;base64,".length), "base64"));
}

export function pngFromBase64(data: string): RgbImage {
  return decodePng(Buffer.from(data, "base64"));
}

/** Requests that could change the desktop. */
export const mutations = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");
