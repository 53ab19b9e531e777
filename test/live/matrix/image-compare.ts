// Pixel oracles of the screenshot-options rows (image-options-rows.ts),
// independent of deckhand: ImageMagick decodes and identifies the JPEG and
// WebP files, crops and pixel comparisons are done here on packed RGB, and
// a screen capture (ImageMagick's import on X11, grim on Wayland) arrives as
// a binary PPM that parsePpm reads.
import { execFileSync } from "node:child_process";
import { expect } from "vitest";
import type { RgbImage } from "../../integration/adapters/png-read.ts";

/** ImageMagick (Debian's imagemagick, ci/apt-packages.txt): absolute, a stand-in may shadow it on PATH. */
export const CONVERT = "/usr/bin/convert";
const IDENTIFY = "/usr/bin/identify";

export type Rect = { x: number; y: number; width: number; height: number };

/** A file decoded by ImageMagick to packed RGB of the given size. */
export function magickDecode(path: string, width: number, height: number): RgbImage {
  const data = execFileSync(CONVERT, [path, "-depth", "8", "rgb:-"], { maxBuffer: 64 << 20 });
  expect(data.length, `${path} decodes to ${width}x${height}`).toBe(width * height * 3);
  return { width, height, data: new Uint8Array(data) };
}

/** What ImageMagick says a file is: format and size. */
export function identify(path: string): string {
  return execFileSync(IDENTIFY, ["-format", "%m %w %h", path]).toString().trim();
}

/** A binary PPM (P6, maxval 255) as packed RGB: what `import ppm:-` and `grim -t ppm -` write. */
export function parsePpm(buf: Buffer): RgbImage {
  // Header: "P6", width, height, maxval, separated by whitespace, then one whitespace byte.
  const fields: string[] = [];
  let i = 0;
  while (fields.length < 4) {
    while (/\s/.test(String.fromCharCode(buf[i]!))) i++;
    if (buf[i] === 0x23) {
      while (buf[i] !== 0x0a) i++;
      continue;
    }
    const start = i;
    while (!/\s/.test(String.fromCharCode(buf[i]!))) i++;
    fields.push(buf.toString("latin1", start, i));
  }
  const [magic, w, h, max] = fields;
  if (magic !== "P6" || max !== "255") throw new Error(`not an 8-bit binary PPM: ${fields.join(" ")}`);
  const width = Number(w);
  const height = Number(h);
  const data = buf.subarray(i + 1);
  if (data.length !== width * height * 3) throw new Error(`PPM ${width}x${height} carries ${data.length} bytes, not ${width * height * 3}`);
  return { width, height, data: new Uint8Array(data) };
}

export function crop(img: RgbImage, x: number, y: number, w: number, h: number): RgbImage {
  const data = new Uint8Array(w * h * 3);
  for (let j = 0; j < h; j++) data.set(img.data.subarray(((y + j) * img.width + x) * 3, ((y + j) * img.width + x + w) * 3), j * w * 3);
  return { width: w, height: h, data };
}

/** Pixels of `got` that equal neither `a` nor `b` (same size): 0 means `got` is the crop. */
export function mismatches(got: RgbImage, a: RgbImage, b: RgbImage): number {
  expect([got.width, got.height]).toEqual([a.width, a.height]);
  let n = 0;
  for (let i = 0; i < got.data.length; i += 3) {
    const same = (o: RgbImage) => o.data[i] === got.data[i] && o.data[i + 1] === got.data[i + 1] && o.data[i + 2] === got.data[i + 2];
    if (!same(a) && !same(b)) n++;
  }
  return n;
}

/** Writes an image to /tmp when IMAGE_OPTIONS_DEBUG is set (to look at a failure). */
export function dump(name: string, img: RgbImage): void {
  if (!process.env.IMAGE_OPTIONS_DEBUG) return;
  execFileSync(CONVERT, ["-size", `${img.width}x${img.height}`, "-depth", "8", "rgb:-", `/tmp/imgopt-${name}.png`], { input: Buffer.from(img.data) });
}

/** A copy of `img` (showing screen rectangle `at`) with the screen rectangles `rects` black. */
export function blackOut(img: RgbImage, at: { x: number; y: number }, rects: Rect[]): RgbImage {
  const data = new Uint8Array(img.data);
  for (const r of rects) {
    for (let y = Math.max(0, r.y - at.y); y < Math.min(img.height, r.y + r.height - at.y); y++) {
      for (let x = Math.max(0, r.x - at.x); x < Math.min(img.width, r.x + r.width - at.x); x++) data.fill(0, (y * img.width + x) * 3, (y * img.width + x) * 3 + 3);
    }
  }
  return { width: img.width, height: img.height, data };
}

/** Mean absolute difference per channel. */
export function meanError(a: RgbImage, b: RgbImage): number {
  let sum = 0;
  for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i]! - b.data[i]!);
  return sum / a.data.length;
}
