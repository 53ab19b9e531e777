// A small PNG codec for the adapters: decode (8/16-bit, every colour type,
// non-interlaced), area-average resample of any source rectangle, encode as
// 8-bit RGB. node:zlib only, so it runs under Bun and Node without native deps.
import { deflateSync, inflateSync } from "node:zlib";
import { DeckhandError } from "../protocol/errors.ts";

/** Decoded pixels: RGB, 3 bytes per pixel, row-major, no padding. */
export interface RgbImage {
  width: number;
  height: number;
  data: Uint8Array;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Refuse absurd images before allocating for them. */
const MAX_PIXELS = 100_000_000;

function bad(message: string): DeckhandError {
  return new DeckhandError("SCREENSHOT_FAILED", `screenshot PNG: ${message}`);
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Width and height from the IHDR chunk, without decoding pixels. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < 33 || !b.subarray(0, 8).equals(SIGNATURE)) throw bad("not a PNG file");
  if (b.toString("latin1", 12, 16) !== "IHDR") throw bad("IHDR is not the first chunk");
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

export function decodePng(png: Uint8Array): RgbImage {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < 8 || !b.subarray(0, 8).equals(SIGNATURE)) throw bad("not a PNG file");
  let off = 8;
  let width = 0;
  let height = 0;
  let depth = 0;
  let colorType = -1;
  let palette: Uint8Array | null = null;
  const idat: Buffer[] = [];
  while (off + 12 <= b.length) {
    const len = b.readUInt32BE(off);
    const type = b.toString("latin1", off + 4, off + 8);
    if (off + 12 + len > b.length) throw bad(`chunk ${type} runs past the end of the file`);
    const body = b.subarray(off + 8, off + 8 + len);
    if (type === "IHDR") {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      depth = body[8]!;
      colorType = body[9]!;
      if (body[12] !== 0) throw bad("interlaced PNGs are not supported");
    } else if (type === "PLTE") palette = body;
    else if (type === "IDAT") idat.push(body);
    else if (type === "IEND") break;
    off += 12 + len;
  }
  const channels = CHANNELS[colorType];
  if (!width || !height || channels === undefined) throw bad("missing or invalid IHDR");
  if (width * height > MAX_PIXELS) throw bad(`${width}x${height} is too large`);
  if (![1, 2, 4, 8, 16].includes(depth) || (depth < 8 && colorType !== 0 && colorType !== 3) || (depth === 16 && colorType === 3)) {
    throw bad(`unsupported bit depth ${depth} for colour type ${colorType}`);
  }
  if (colorType === 3 && !palette) throw bad("palette image without PLTE");
  let raw: Buffer;
  try {
    raw = inflateSync(Buffer.concat(idat));
  } catch {
    throw bad("IDAT does not inflate");
  }
  const bitsPerPixel = channels * depth;
  const stride = Math.ceil((width * bitsPerPixel) / 8);
  const bpp = Math.max(1, bitsPerPixel >> 3);
  if (raw.length < height * (stride + 1)) throw bad("IDAT is shorter than the image");
  const out = new Uint8Array(width * height * 3);
  let prev = new Uint8Array(stride);
  let cur = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const base = y * (stride + 1);
    const filter = raw[base]!;
    for (let i = 0; i < stride; i++) {
      const x = raw[base + 1 + i]!;
      const a = i >= bpp ? cur[i - bpp]! : 0;
      const up = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      let v: number;
      switch (filter) {
        case 0:
          v = x;
          break;
        case 1:
          v = x + a;
          break;
        case 2:
          v = x + up;
          break;
        case 3:
          v = x + ((a + up) >> 1);
          break;
        case 4: {
          const p = a + up - c;
          const pa = Math.abs(p - a);
          const pb = Math.abs(p - up);
          const pc = Math.abs(p - c);
          v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? up : c);
          break;
        }
        default:
          throw bad(`unknown filter type ${filter}`);
      }
      cur[i] = v & 0xff;
    }
    writeRow(cur, out, y, width, colorType, depth, palette);
    [prev, cur] = [cur, prev];
  }
  return { width, height, data: out };
}

function writeRow(row: Uint8Array, out: Uint8Array, y: number, width: number, colorType: number, depth: number, palette: Uint8Array | null): void {
  let o = y * width * 3;
  const sample = (i: number): number => {
    // The i-th sample of the row, scaled to 8 bits (16-bit: high byte).
    if (depth === 8) return row[i]!;
    if (depth === 16) return row[i * 2]!;
    const perByte = 8 / depth;
    const byte = row[Math.floor(i / perByte)]!;
    const shift = 8 - depth * ((i % perByte) + 1);
    return (byte >> shift) & ((1 << depth) - 1);
  };
  const ch = CHANNELS[colorType]!;
  for (let x = 0; x < width; x++) {
    if (colorType === 3) {
      const idx = sample(x) * 3;
      out[o++] = palette![idx] ?? 0;
      out[o++] = palette![idx + 1] ?? 0;
      out[o++] = palette![idx + 2] ?? 0;
    } else if (colorType === 0 || colorType === 4) {
      let g = sample(x * ch);
      if (depth < 8) g = Math.round((g * 255) / ((1 << depth) - 1));
      out[o++] = g;
      out[o++] = g;
      out[o++] = g;
    } else {
      // RGB or RGBA: alpha is dropped (a screen has no transparency to show).
      out[o++] = sample(x * ch);
      out[o++] = sample(x * ch + 1);
      out[o++] = sample(x * ch + 2);
    }
  }
}

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  out.set(body, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + body.length), 8 + body.length);
  return out;
}

/** 8-bit RGB PNG, filter 0 on every row. */
export function encodePng(img: RgbImage): Buffer {
  const { width, height, data } = img;
  if (data.length !== width * height * 3) throw new Error(`encodePng: ${data.length} bytes for ${width}x${height} RGB`);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const stride = width * 3;
  const raw = Buffer.alloc(height * (stride + 1));
  for (let y = 0; y < height; y++) raw.set(data.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  return Buffer.concat([SIGNATURE, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 6 })), chunk("IEND", new Uint8Array(0))]);
}

/** Per destination index, the source indices it covers and their weights (summing to 1). */
function weights(srcStart: number, srcLen: number, dstLen: number, srcLimit: number): { idx: Int32Array; w: Float64Array; at: Int32Array } {
  const ratio = srcLen / dstLen;
  const idxs: number[] = [];
  const ws: number[] = [];
  const at = new Int32Array(dstLen + 1);
  for (let d = 0; d < dstLen; d++) {
    at[d] = idxs.length;
    const a = srcStart + d * ratio;
    const b = srcStart + (d + 1) * ratio;
    const first = Math.max(0, Math.floor(a));
    const last = Math.min(srcLimit - 1, Math.max(first, Math.ceil(b) - 1));
    let total = 0;
    const start = idxs.length;
    for (let s = first; s <= last; s++) {
      const cover = Math.min(b, s + 1) - Math.max(a, s);
      if (cover > 0) {
        idxs.push(s);
        ws.push(cover);
        total += cover;
      }
    }
    if (total === 0) {
      // A span outside the source (clamped rounding): take the nearest pixel.
      idxs.push(Math.min(srcLimit - 1, Math.max(0, Math.floor(a))));
      ws.push(1);
      total = 1;
    }
    for (let k = start; k < ws.length; k++) ws[k] = ws[k]! / total;
  }
  at[dstLen] = idxs.length;
  return { idx: Int32Array.from(idxs), w: Float64Array.from(ws), at };
}

/**
 * The source rectangle (sx, sy, sw, sh) in source pixels (fractions allowed)
 * resampled to dw x dh by area averaging: each destination pixel is the
 * coverage-weighted mean of the source pixels under it. Works for shrinking
 * and for enlarging (where it is a nearest-neighbour with blended seams).
 */
export function resample(src: RgbImage, rect: { x: number; y: number; width: number; height: number }, dw: number, dh: number): RgbImage {
  if (!(dw >= 1 && dh >= 1) || !Number.isInteger(dw) || !Number.isInteger(dh)) throw new Error(`resample: bad size ${dw}x${dh}`);
  if (!(rect.width > 0 && rect.height > 0)) throw new Error("resample: empty source rectangle");
  const wx = weights(rect.x, rect.width, dw, src.width);
  const wy = weights(rect.y, rect.height, dh, src.height);
  // Horizontal pass over the source rows the vertical pass will read.
  // Source indices grow with the destination index, so the first and last bound the rows.
  const rowMin = wy.idx[0]!;
  const rowMax = wy.idx[wy.idx.length - 1]!;
  const rows = rowMax - rowMin + 1;
  const tmp = new Float64Array(rows * dw * 3);
  for (let r = 0; r < rows; r++) {
    const srow = (rowMin + r) * src.width * 3;
    const trow = r * dw * 3;
    for (let d = 0; d < dw; d++) {
      let R = 0;
      let G = 0;
      let B = 0;
      for (let k = wx.at[d]!; k < wx.at[d + 1]!; k++) {
        const p = srow + wx.idx[k]! * 3;
        const w = wx.w[k]!;
        R += src.data[p]! * w;
        G += src.data[p + 1]! * w;
        B += src.data[p + 2]! * w;
      }
      tmp[trow + d * 3] = R;
      tmp[trow + d * 3 + 1] = G;
      tmp[trow + d * 3 + 2] = B;
    }
  }
  const out = new Uint8Array(dw * dh * 3);
  for (let dy = 0; dy < dh; dy++) {
    const orow = dy * dw * 3;
    for (let dx = 0; dx < dw; dx++) {
      let R = 0;
      let G = 0;
      let B = 0;
      for (let k = wy.at[dy]!; k < wy.at[dy + 1]!; k++) {
        const p = (wy.idx[k]! - rowMin) * dw * 3 + dx * 3;
        const w = wy.w[k]!;
        R += tmp[p]! * w;
        G += tmp[p + 1]! * w;
        B += tmp[p + 2]! * w;
      }
      out[orow + dx * 3] = Math.min(255, Math.round(R));
      out[orow + dx * 3 + 1] = Math.min(255, Math.round(G));
      out[orow + dx * 3 + 2] = Math.min(255, Math.round(B));
    }
  }
  return { width: dw, height: dh, data: out };
}
