// Test scaffolding: read a PNG back (8-bit RGB or RGBA, not interlaced: what
// the fake helper and the Linux helper write) to check what a vendor output
// carries. deckhand itself decodes no images: the helper writes them at the
// size asked for.
import { inflateSync } from "node:zlib";

export interface RgbImage {
  width: number;
  height: number;
  /** Packed RGB, row by row. */
  data: Uint8Array;
}

/** A PNG's size from its IHDR chunk. */
export function pngSize(png: Uint8Array): { width: number; height: number } {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  if (b.length < 24 || b.readUInt32BE(0) !== 0x89504e47 || b.toString("latin1", 12, 16) !== "IHDR") throw new Error("not a PNG");
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

export function decodePng(png: Uint8Array): RgbImage {
  const b = Buffer.from(png.buffer, png.byteOffset, png.byteLength);
  const { width, height } = pngSize(b);
  const [depth, colorType, interlace] = [b[24]!, b[25]!, b[28]!];
  if (depth !== 8 || (colorType !== 2 && colorType !== 6) || interlace !== 0) throw new Error(`unsupported PNG: depth ${depth}, colour type ${colorType}, interlace ${interlace}`);
  const idat: Buffer[] = [];
  for (let o = 8; o + 8 <= b.length; ) {
    const len = b.readUInt32BE(o);
    const type = b.toString("latin1", o + 4, o + 8);
    if (type === "IDAT") idat.push(b.subarray(o + 8, o + 8 + len));
    if (type === "IEND") break;
    o += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const bpp = colorType === 6 ? 4 : 3;
  const stride = width * bpp;
  const cur = Buffer.alloc(stride);
  const prev = Buffer.alloc(stride);
  const data = new Uint8Array(width * height * 3);
  for (let y = 0; y < height; y++) {
    const row = raw.subarray(y * (stride + 1), (y + 1) * (stride + 1));
    const filter = row[0]!;
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? cur[i - bpp]! : 0;
      const up = prev[i]!;
      const c = i >= bpp ? prev[i - bpp]! : 0;
      let pred = 0;
      if (filter === 1) pred = a;
      else if (filter === 2) pred = up;
      else if (filter === 3) pred = (a + up) >> 1;
      else if (filter === 4) {
        const p = a + up - c;
        const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - up), Math.abs(p - c)];
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? up : c;
      } else if (filter !== 0) throw new Error(`PNG filter ${filter}`);
      cur[i] = (row[1 + i]! + pred) & 255;
    }
    for (let x = 0; x < width; x++) data.set(cur.subarray(x * bpp, x * bpp + 3), (y * width + x) * 3);
    cur.copy(prev);
  }
  return { width, height, data };
}

export function pixel(img: RgbImage, x: number, y: number): number[] {
  const o = (y * img.width + x) * 3;
  return [img.data[o]!, img.data[o + 1]!, img.data[o + 2]!];
}

/** The screen point a pixel of the fake helper's screenshots shows (it colours each pixel by it). */
export function fakeScreenPoint(img: RgbImage, x: number, y: number): { x: number; y: number } {
  const [r, g, b] = pixel(img, x, y);
  return { x: r! + ((b! >> 4) << 8), y: g! + ((b! & 15) << 8) };
}
