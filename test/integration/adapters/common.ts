// Shared by the adapter integration tests: the fake helper with real
// screenshots, and PNG checks on what a vendor output carries.
import { chmodSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { decodePng, type RgbImage } from "../../../src/adapters/png.ts";
import { REPO } from "../harness.ts";

export const PNG_HELPER = join(REPO, "test", "integration", "adapters", "png-helper.mjs");
chmodSync(PNG_HELPER, 0o755);

export function pngFromDataUrl(url: string): RgbImage {
  expect(url.startsWith("data:image/png;base64,")).toBe(true);
  return decodePng(Buffer.from(url.slice("data:image/png;base64,".length), "base64"));
}

export function pngFromBase64(data: string): RgbImage {
  return decodePng(Buffer.from(data, "base64"));
}

export function pixel(img: RgbImage, x: number, y: number): number[] {
  const o = (y * img.width + x) * 3;
  return [img.data[o]!, img.data[o + 1]!, img.data[o + 2]!];
}

/** Requests that could change the desktop. */
export const mutations = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");
