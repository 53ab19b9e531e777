// The adapters' PNG codec: decode every colour type / depth / filter a
// helper might write, resample by area average, encode RGB with filter 0.
import { describe, expect, it } from "vitest";
import { deflateSync, inflateSync } from "node:zlib";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { crc32, decodePng, encodePng, pngSize, resample, type RgbImage } from "../../../src/adapters/png.ts";
import { renderPng } from "../../../src/adapters/session.ts";

function chunk(type: string, body: Buffer): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + body.length), 8 + body.length);
  return out;
}

/** A test encoder: raw scanlines (already packed) with the given filter per row. */
function makePng(opts: { width: number; height: number; depth: number; colorType: number; rows: Buffer[]; filter: number; palette?: Buffer; bpp: number; interlace?: number }): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(opts.width, 0);
  ihdr.writeUInt32BE(opts.height, 4);
  ihdr[8] = opts.depth;
  ihdr[9] = opts.colorType;
  ihdr[12] = opts.interlace ?? 0;
  const parts: Buffer[] = [];
  let prev: Buffer = Buffer.alloc(opts.rows[0]!.length);
  for (const row of opts.rows) {
    const f = Buffer.alloc(row.length + 1);
    f[0] = opts.filter;
    for (let i = 0; i < row.length; i++) {
      const a = i >= opts.bpp ? row[i - opts.bpp]! : 0;
      const b = prev[i]!;
      const c = i >= opts.bpp ? prev[i - opts.bpp]! : 0;
      let pred = 0;
      if (opts.filter === 1) pred = a;
      else if (opts.filter === 2) pred = b;
      else if (opts.filter === 3) pred = (a + b) >> 1;
      else if (opts.filter === 4) {
        const p = a + b - c;
        const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      f[i + 1] = (row[i]! - pred) & 255;
    }
    parts.push(f);
    prev = row;
  }
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk("IHDR", ihdr), ...(opts.palette ? [chunk("PLTE", opts.palette)] : []), chunk("IDAT", deflateSync(Buffer.concat(parts))), chunk("IEND", Buffer.alloc(0))]);
}

/** A deterministic 7x5 RGB picture. */
const W = 7;
const H = 5;
const px = (x: number, y: number): [number, number, number] => [(x * 37 + y * 11) & 255, (x * 5 + y * 71) & 255, (x * y * 13 + 200) & 255];
const expected = (): Uint8Array => {
  const out = new Uint8Array(W * H * 3);
  for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) out.set(px(x, y), (y * W + x) * 3);
  return out;
};

describe("decodePng", () => {
  for (const filter of [0, 1, 2, 3, 4]) {
    it(`RGB 8-bit, filter ${filter}`, () => {
      const rows = Array.from({ length: H }, (_, y) => Buffer.from(Array.from({ length: W }, (_, x) => px(x, y)).flat()));
      const img = decodePng(makePng({ width: W, height: H, depth: 8, colorType: 2, rows, filter, bpp: 3 }));
      expect(img.width).toBe(W);
      expect(img.height).toBe(H);
      expect(Buffer.from(img.data)).toEqual(Buffer.from(expected()));
    });
  }
  it("RGBA 8-bit drops alpha", () => {
    const rows = Array.from({ length: H }, (_, y) => Buffer.from(Array.from({ length: W }, (_, x) => [...px(x, y), (x * 40) & 255]).flat()));
    expect(Buffer.from(decodePng(makePng({ width: W, height: H, depth: 8, colorType: 6, rows, filter: 4, bpp: 4 })).data)).toEqual(Buffer.from(expected()));
  });
  it("RGB 16-bit keeps the high byte", () => {
    const rows = Array.from({ length: H }, (_, y) => Buffer.from(Array.from({ length: W }, (_, x) => px(x, y).flatMap((v) => [v, 0x5a])).flat()));
    expect(Buffer.from(decodePng(makePng({ width: W, height: H, depth: 16, colorType: 2, rows, filter: 2, bpp: 6 })).data)).toEqual(Buffer.from(expected()));
  });
  it("grey 8-bit, grey+alpha, and 1-bit grey", () => {
    const g = decodePng(makePng({ width: 3, height: 1, depth: 8, colorType: 0, rows: [Buffer.from([0, 128, 255])], filter: 1, bpp: 1 }));
    expect([...g.data]).toEqual([0, 0, 0, 128, 128, 128, 255, 255, 255]);
    const ga = decodePng(makePng({ width: 2, height: 1, depth: 8, colorType: 4, rows: [Buffer.from([10, 255, 20, 0])], filter: 0, bpp: 2 }));
    expect([...ga.data]).toEqual([10, 10, 10, 20, 20, 20]);
    const bits = decodePng(makePng({ width: 10, height: 1, depth: 1, colorType: 0, rows: [Buffer.from([0b10100000, 0b01000000])], filter: 0, bpp: 1 }));
    expect([...bits.data].filter((_, i) => i % 3 === 0)).toEqual([255, 0, 255, 0, 0, 0, 0, 0, 0, 255]);
  });
  it("palette 8-bit and 4-bit", () => {
    const palette = Buffer.from([255, 0, 0, 0, 255, 0, 0, 0, 255]);
    const p8 = decodePng(makePng({ width: 3, height: 1, depth: 8, colorType: 3, rows: [Buffer.from([2, 0, 1])], filter: 0, bpp: 1, palette }));
    expect([...p8.data]).toEqual([0, 0, 255, 255, 0, 0, 0, 255, 0]);
    const p4 = decodePng(makePng({ width: 3, height: 1, depth: 4, colorType: 3, rows: [Buffer.from([0x12, 0x00])], filter: 0, bpp: 1, palette }));
    expect([...p4.data]).toEqual([0, 255, 0, 0, 0, 255, 255, 0, 0]);
  });
  it("refuses what it cannot read with SCREENSHOT_FAILED", () => {
    const rows = [Buffer.from([1, 2, 3])];
    const bad = (b: Buffer) => {
      try {
        decodePng(b);
        return null;
      } catch (e) {
        return e instanceof DeckhandError ? e.code : "THROWN";
      }
    };
    expect(bad(Buffer.from("not a png"))).toBe("SCREENSHOT_FAILED");
    expect(bad(makePng({ width: 1, height: 1, depth: 8, colorType: 2, rows, filter: 0, bpp: 3, interlace: 1 }))).toBe("SCREENSHOT_FAILED");
    const good = makePng({ width: 1, height: 1, depth: 8, colorType: 2, rows, filter: 0, bpp: 3 });
    expect(bad(good.subarray(0, good.length - 30))).toBe("SCREENSHOT_FAILED");
  });
});

describe("encodePng", () => {
  it("round-trips and writes RGB 8-bit with filter 0 on every row", () => {
    const img: RgbImage = { width: W, height: H, data: expected() };
    const png = encodePng(img);
    expect(pngSize(png)).toEqual({ width: W, height: H });
    expect(png[24]).toBe(8);
    expect(png[25]).toBe(2);
    const back = decodePng(png);
    expect(Buffer.from(back.data)).toEqual(Buffer.from(img.data));
    // IDAT inflates to rows that each start with filter byte 0.
    const idatLen = png.readUInt32BE(33);
    const raw = inflateSync(png.subarray(41, 41 + idatLen));
    for (let y = 0; y < H; y++) expect(raw[y * (W * 3 + 1)]).toBe(0);
  });
});

describe("resample", () => {
  const solid = (w: number, h: number, f: (x: number, y: number) => [number, number, number]): RgbImage => {
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set(f(x, y), (y * w + x) * 3);
    return { width: w, height: h, data };
  };
  const at = (img: RgbImage, x: number, y: number) => [...img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3)];

  it("halving averages 2x2 blocks exactly", () => {
    const src = solid(4, 4, (x, y) => [((x + y) % 2) * 200, x * 10, y * 10]);
    const out = resample(src, { x: 0, y: 0, width: 4, height: 4 }, 2, 2);
    expect(at(out, 0, 0)).toEqual([100, 5, 5]);
    expect(at(out, 1, 1)).toEqual([100, 25, 25]);
  });

  it("4:3 (1920 -> 1440) weights partial pixels by coverage", () => {
    const src = solid(4, 1, (x) => [x * 60, 0, 0]); // 0, 60, 120, 180
    const out = resample(src, { x: 0, y: 0, width: 4, height: 1 }, 3, 1);
    // dest 0 covers src [0, 1.333): (0 * 1 + 60 * 0.333) / 1.333 = 15
    expect(at(out, 0, 0)[0]).toBe(15);
    expect(at(out, 1, 0)[0]).toBe(90); // src [1.333, 2.667): (60*.667 + 120*.667)/1.333
    expect(at(out, 2, 0)[0]).toBe(165);
  });

  it("a flat image stays flat at any size, and the edges are the edges", () => {
    const src = solid(1920, 3, (x) => [x === 0 ? 255 : 50, 50, x === 1919 ? 255 : 50]);
    const out = resample(src, { x: 0, y: 0, width: 1920, height: 3 }, 1440, 2);
    expect(at(out, 720, 1)).toEqual([50, 50, 50]);
    expect(at(out, 0, 0)[0]).toBeGreaterThan(50); // the first column still shows the first pixel
    expect(at(out, 1439, 0)[2]).toBeGreaterThan(50);
    expect(at(out, 0, 0)[2]).toBe(50);
  });

  it("a sub-rectangle (zoom) enlarges only that area", () => {
    const src = solid(10, 10, (x, y) => [x * 20, y * 20, 0]);
    const out = resample(src, { x: 2, y: 3, width: 2, height: 2 }, 4, 4);
    expect(at(out, 0, 0)).toEqual([40, 60, 0]);
    expect(at(out, 3, 3)).toEqual([60, 80, 0]);
  });

  it("renderPng reads the helper's reported size, not the file's, and passes an unscaled PNG through", () => {
    const small = encodePng(solid(2, 2, () => [9, 8, 7]));
    const big = decodePng(renderPng(small, { width: 800, height: 600 }, { x: 0, y: 0, width: 800, height: 600 }, 800, 600));
    expect([big.width, big.height]).toEqual([800, 600]);
    expect(at(big, 799, 599)).toEqual([9, 8, 7]);
    expect(renderPng(small, { width: 2, height: 2 }, { x: 0, y: 0, width: 2, height: 2 }, 2, 2)).toEqual(small);
  });
});
