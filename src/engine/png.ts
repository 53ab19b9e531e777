// A small PNG codec for the set-of-marks image (src/engine/marks.ts): it
// reads what the helper writes (8-bit greyscale, grey+alpha, RGB or RGBA,
// not interlaced) and writes 8-bit RGB or RGBA. Anything else (palette,
// 16-bit, interlaced, a broken or oversized file) is refused with a clear
// error: drawing on pixels we did not understand would be drawing garbage.
// zlib runs on node's thread pool (the async API), so a serve session is not
// held up while a large window image is inflated or deflated.
import { deflate, inflate, type ZlibOptions } from "node:zlib";
import { promisify } from "node:util";
import { DeckhandError } from "../protocol/errors.ts";

const inflateAsync = promisify<Buffer, ZlibOptions, Buffer>(inflate);
const deflateAsync = promisify<Buffer, ZlibOptions, Buffer>(deflate);

/** Decoded pixels: `channels` bytes per pixel (3 RGB, 4 RGBA), rows top to bottom, no padding. */
export interface Bitmap {
  width: number;
  height: number;
  channels: 3 | 4;
  data: Uint8Array<ArrayBufferLike>;
}

/**
 * The largest image decoded: a side of 16384 (the screenshot op's largest
 * max_width) and 40 megapixels (an 8K screen is 33): 160 MB of RGBA at most.
 */
export const MAX_SIDE = 16384;
export const MAX_PIXELS = 40_000_000;
/** The largest PNG file read (compressed): far above what any capture of MAX_PIXELS needs. */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** The CRC-32 table of PNG chunks (ISO 3309, polynomial 0xedb88320). */
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(b: Uint8Array, start = 0, end = b.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ b[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function corrupt(message: string): DeckhandError {
  return new DeckhandError("SCREENSHOT_FAILED", `the window image is not a readable PNG: ${message}`, { details: { reason: "png-corrupt" } });
}

function unsupported(message: string): DeckhandError {
  return new DeckhandError("ACTION_UNSUPPORTED", `the window image is a PNG kind the set-of-marks drawing does not read: ${message} (it reads 8-bit greyscale, RGB and RGBA, not interlaced)`, {
    details: { reason: "png-unsupported" },
  });
}

function tooLarge(width: number, height: number): DeckhandError {
  return new DeckhandError("SCREENSHOT_FAILED", `the window image is ${width}x${height}: over the set-of-marks limit (${MAX_SIDE} per side, ${MAX_PIXELS} pixels)`, {
    details: { reason: "image-too-large", width, height },
  });
}

/** Bytes per pixel of a colour type at bit depth 8 (0 grey, 2 RGB, 4 grey+alpha, 6 RGBA), or 0 when it is not read. */
function bytesPerPixel(colorType: number): number {
  return colorType === 0 ? 1 : colorType === 2 ? 3 : colorType === 4 ? 2 : colorType === 6 ? 4 : 0;
}

/** Reverse one row's filter in place (`row` without its filter byte; `prev` the previous unfiltered row, zeros for the first). */
function unfilterRow(filter: number, row: Uint8Array, prev: Uint8Array, bpp: number): void {
  const n = row.length;
  switch (filter) {
    case 0:
      return;
    case 1: // Sub
      for (let i = bpp; i < n; i++) row[i] = (row[i]! + row[i - bpp]!) & 255;
      return;
    case 2: // Up
      for (let i = 0; i < n; i++) row[i] = (row[i]! + prev[i]!) & 255;
      return;
    case 3: // Average
      for (let i = 0; i < n; i++) row[i] = (row[i]! + (((i >= bpp ? row[i - bpp]! : 0) + prev[i]!) >> 1)) & 255;
      return;
    case 4: // Paeth
      for (let i = 0; i < n; i++) {
        const a = i >= bpp ? row[i - bpp]! : 0;
        const b = prev[i]!;
        const c = i >= bpp ? prev[i - bpp]! : 0;
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        row[i] = (row[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      return;
    default:
      throw corrupt(`unknown row filter ${filter}`);
  }
}

/** The image size a PNG declares (IHDR), without decoding it. */
export function pngHeader(png: Uint8Array): { width: number; height: number; bitDepth: number; colorType: number; interlace: number } {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < 33 || !b.subarray(0, 8).equals(SIGNATURE)) throw corrupt("no PNG signature");
  if (b.readUInt32BE(8) !== 13 || b.toString("latin1", 12, 16) !== "IHDR") throw corrupt("the first chunk is not IHDR");
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20), bitDepth: b[24]!, colorType: b[25]!, interlace: b[28]! };
}

/** Decode a PNG into RGB (no alpha in the file) or RGBA pixels; refuses what it does not read (see the module comment). */
export async function decodePng(png: Uint8Array): Promise<Bitmap> {
  if (png.byteLength > MAX_FILE_BYTES) throw corrupt(`the file is over ${MAX_FILE_BYTES} bytes`);
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  const { width, height, bitDepth, colorType, interlace } = pngHeader(b);
  if (b[26] !== 0 || b[27] !== 0) throw corrupt("unknown compression or filter method");
  if (width === 0 || height === 0) throw corrupt(`the image is ${width}x${height}`);
  if (bitDepth !== 8) throw unsupported(`bit depth ${bitDepth}`);
  const bpp = bytesPerPixel(colorType);
  if (bpp === 0) throw unsupported(colorType === 3 ? "a palette image (colour type 3)" : `colour type ${colorType}`);
  if (interlace !== 0) throw unsupported("an interlaced (Adam7) image");
  if (width > MAX_SIDE || height > MAX_SIDE || width * height > MAX_PIXELS) throw tooLarge(width, height);

  const idat: Buffer[] = [];
  let ended = false;
  for (let o = 8; o < b.length; ) {
    if (o + 12 > b.length) throw corrupt("a chunk runs past the end of the file");
    const len = b.readUInt32BE(o);
    if (len > 0x7fffffff || o + 12 + len > b.length) throw corrupt("a chunk runs past the end of the file");
    const type = b.toString("latin1", o + 4, o + 8);
    if (b.readUInt32BE(o + 8 + len) !== crc32(b, o + 4, o + 8 + len)) throw corrupt(`the ${type} chunk's CRC does not match`);
    if (type === "IDAT") idat.push(b.subarray(o + 8, o + 8 + len));
    else if (type === "IEND") {
      ended = true;
      break;
    } else if (type === "tRNS") {
      // A colour key would make some pixels transparent: an alpha this decoder does not model.
      throw unsupported("a transparency chunk (tRNS)");
    }
    // Other chunks (a suggested palette, text, gamma) do not change the pixels' bytes: skipped.
    o += 12 + len;
  }
  if (!ended) throw corrupt("no IEND chunk");
  if (idat.length === 0) throw corrupt("no image data (IDAT)");

  const stride = width * bpp;
  const expected = height * (stride + 1);
  let raw: Buffer;
  try {
    // Bounded: a file that inflates to more than the image's rows is refused, not held.
    raw = await inflateAsync(Buffer.concat(idat), { maxOutputLength: expected + 1 });
  } catch (err) {
    throw corrupt(`the image data does not inflate (${(err as Error).message})`);
  }
  if (raw.length !== expected) throw corrupt(`the image data holds ${raw.length} bytes, not the ${expected} of ${height} rows of ${width} pixels`);

  const channels: 3 | 4 = colorType === 4 || colorType === 6 ? 4 : 3;
  const out = new Uint8Array(width * height * channels);
  let prev: Uint8Array = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const start = y * (stride + 1);
    const row = raw.subarray(start + 1, start + 1 + stride);
    unfilterRow(raw[start]!, row, prev, bpp);
    const o = y * width * channels;
    if (bpp === channels) out.set(row, o);
    else if (bpp === 1) {
      for (let x = 0; x < width; x++) out[o + 3 * x] = out[o + 3 * x + 1] = out[o + 3 * x + 2] = row[x]!;
    } else {
      // grey + alpha -> RGBA
      for (let x = 0; x < width; x++) {
        const g = row[2 * x]!;
        out[o + 4 * x] = out[o + 4 * x + 1] = out[o + 4 * x + 2] = g;
        out[o + 4 * x + 3] = row[2 * x + 1]!;
      }
    }
    prev = row;
  }
  return { width, height, channels, data: out };
}

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  out.set(body, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + body.length), 8 + body.length);
  return out;
}

/** Image data is split in IDAT chunks of this size (any split is valid; small chunks are what readers expect). */
const IDAT_BYTES = 1 << 20;

/**
 * Encode RGB or RGBA pixels as an 8-bit PNG: each row with the Up filter
 * (the first row's Up is the same as None), then deflate. Up suits window
 * images (flat areas, vertical edges) and costs one subtraction a byte.
 */
export async function encodePng(img: Bitmap, filter: "none" | "up" = "up"): Promise<Buffer> {
  const { width, height, channels, data } = img;
  if (data.length !== width * height * channels) throw new DeckhandError("INTERNAL", `a ${width}x${height}x${channels} bitmap of ${data.length} bytes`);
  const stride = width * channels;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) {
    const o = y * (stride + 1);
    const row = data.subarray(y * stride, (y + 1) * stride);
    if (filter === "none" || y === 0) {
      raw[o] = 0;
      raw.set(row, o + 1);
    } else {
      raw[o] = 2;
      const prev = data.subarray((y - 1) * stride, y * stride);
      for (let i = 0; i < stride; i++) raw[o + 1 + i] = (row[i]! - prev[i]!) & 255;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = channels === 4 ? 6 : 2;
  const z = await deflateAsync(raw, { level: 6 });
  const parts = [SIGNATURE, chunk("IHDR", ihdr)];
  for (let o = 0; o < z.length; o += IDAT_BYTES) parts.push(chunk("IDAT", z.subarray(o, o + IDAT_BYTES)));
  parts.push(chunk("IEND", new Uint8Array(0)));
  return Buffer.concat(parts);
}
