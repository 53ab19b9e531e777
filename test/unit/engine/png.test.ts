// The set-of-marks PNG codec (src/engine/png.ts): every row filter on
// decode, greyscale/RGB/RGBA, files libpng wrote, a round trip through the
// encoder, and the refusals (palette, 16-bit, interlaced, broken, oversized).
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import { crc32, decodePng, encodePng, MAX_SIDE, type Bitmap } from "../../../src/engine/png.ts";
import { decodePng as independentDecode } from "../../integration/adapters/png-read.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

const FIXTURES = join(import.meta.dirname, "..", "..", "fixtures", "images");

function chunk(type: string, body: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  out.set(body, 8);
  out.writeUInt32BE(crc32(out, 4, 8 + body.length), 8 + body.length);
  return out;
}

const SIG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Filter one row the way an encoder does (the reverse of what the decoder undoes). */
function filterRow(type: number, row: Uint8Array, prev: Uint8Array, bpp: number): Uint8Array {
  const out = new Uint8Array(row.length);
  for (let i = 0; i < row.length; i++) {
    const a = i >= bpp ? row[i - bpp]! : 0;
    const b = prev[i]!;
    const c = i >= bpp ? prev[i - bpp]! : 0;
    let pred = 0;
    if (type === 1) pred = a;
    else if (type === 2) pred = b;
    else if (type === 3) pred = (a + b) >> 1;
    else if (type === 4) {
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    out[i] = (row[i]! - pred) & 255;
  }
  return out;
}

/** A PNG of `pixels` (bpp bytes each) with row y filtered by filters[y % filters.length]. */
function makePng(width: number, height: number, colorType: number, pixels: Uint8Array, filters: number[], opts: { depth?: number; interlace?: number; extra?: Buffer[] } = {}): Buffer {
  const bpp = { 0: 1, 2: 3, 4: 2, 6: 4, 3: 1 }[colorType]!;
  const stride = width * bpp;
  const raw: Uint8Array[] = [];
  let prev: Uint8Array = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const row = pixels.subarray(y * stride, (y + 1) * stride);
    const f = filters[y % filters.length]!;
    raw.push(Uint8Array.of(f), filterRow(f, row, prev, bpp));
    prev = row;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = opts.depth ?? 8;
  ihdr[9] = colorType;
  ihdr[12] = opts.interlace ?? 0;
  const z = deflateSync(Buffer.concat(raw));
  // Two IDAT chunks: a decoder must join them.
  const half = z.length >> 1;
  return Buffer.concat([SIG, chunk("IHDR", ihdr), ...(opts.extra ?? []), chunk("IDAT", z.subarray(0, half)), chunk("tEXt", Buffer.from("Comment\0test")), chunk("IDAT", z.subarray(half)), chunk("IEND", new Uint8Array(0))]);
}

/** Deterministic pixels with edges and gradients (every filter's predictor matters). */
function pattern(width: number, height: number, bpp: number): Uint8Array {
  const p = new Uint8Array(width * height * bpp);
  for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) for (let c = 0; c < bpp; c++) p[(y * width + x) * bpp + c] = (x * (7 + c) + y * (3 + 5 * c) + ((x ^ y) & 8 ? 100 : 0)) & 255;
  return p;
}

async function refusal(p: Promise<unknown>): Promise<DeckhandError> {
  const err = await p.then(
    () => null,
    (e) => e,
  );
  expect(err).toBeInstanceOf(DeckhandError);
  return err as DeckhandError;
}

describe("decodePng", () => {
  for (const [name, colorType, bpp] of [
    ["RGB", 2, 3],
    ["RGBA", 6, 4],
  ] as const) {
    it(`${name}: rows filtered None, Sub, Up, Average and Paeth decode to the pixels`, async () => {
      const px = pattern(23, 17, bpp);
      const img = await decodePng(makePng(23, 17, colorType, px, [0, 1, 2, 3, 4]));
      expect(img).toMatchObject({ width: 23, height: 17, channels: bpp });
      expect(Buffer.from(img.data).equals(Buffer.from(px))).toBe(true);
    });
    for (const f of [1, 2, 3, 4]) {
      it(`${name}: every row filtered ${["", "Sub", "Up", "Average", "Paeth"][f]}`, async () => {
        const px = pattern(9, 6, bpp);
        const img = await decodePng(makePng(9, 6, colorType, px, [f]));
        expect(Buffer.from(img.data).equals(Buffer.from(px))).toBe(true);
      });
    }
  }

  it("greyscale becomes RGB, grey+alpha RGBA", async () => {
    const g = pattern(5, 4, 1);
    const grey = await decodePng(makePng(5, 4, 0, g, [4, 3]));
    expect(grey.channels).toBe(3);
    expect([...grey.data.subarray(3 * 7, 3 * 8)]).toEqual([g[7], g[7], g[7]]);
    const ga = pattern(5, 4, 2);
    const greyAlpha = await decodePng(makePng(5, 4, 4, ga, [1]));
    expect(greyAlpha.channels).toBe(4);
    expect([...greyAlpha.data.subarray(4 * 6, 4 * 7)]).toEqual([ga[12], ga[12], ga[12], ga[13]]);
  });

  it("files libpng wrote (GdkPixbuf, adaptive filters Sub and Paeth, an sBIT chunk) decode to the pixels they were made of", async () => {
    // test/fixtures/images/libpng-*.png: 61x37, pixel (x, y) = ((7x + 3y) & 255, xy & 255, 5(x ^ y) & 255, 3(x + 2y) & 255), alpha in the RGBA one.
    const expected = (x: number, y: number) => [(x * 7 + y * 3) & 255, (x * y) & 255, ((x ^ y) * 5) & 255, ((x + y * 2) * 3) & 255];
    for (const [file, channels] of [
      ["libpng-rgb.png", 3],
      ["libpng-rgba.png", 4],
    ] as const) {
      const img = await decodePng(readFileSync(join(FIXTURES, file)));
      expect(img).toMatchObject({ width: 61, height: 37, channels });
      for (const [x, y] of [
        [0, 0],
        [60, 0],
        [13, 17],
        [60, 36],
        [31, 29],
      ] as const) {
        const o = (y * 61 + x) * channels;
        expect([...img.data.subarray(o, o + channels)], `${file} (${x}, ${y})`).toEqual(expected(x, y).slice(0, channels));
      }
    }
  });

  it("refuses what it does not read: palette, 16-bit, interlaced, a tRNS colour key", async () => {
    expect((await refusal(decodePng(makePng(4, 4, 3, new Uint8Array(16), [0], { extra: [chunk("PLTE", new Uint8Array(3))] })))).message).toMatch(/palette/);
    expect((await refusal(decodePng(makePng(2, 2, 2, new Uint8Array(24), [0], { depth: 16 })))).message).toMatch(/bit depth 16/);
    const interlaced = await refusal(decodePng(makePng(4, 4, 2, pattern(4, 4, 3), [0], { interlace: 1 })));
    expect(interlaced.code).toBe("ACTION_UNSUPPORTED");
    expect(interlaced.message).toMatch(/interlaced/);
    expect((await refusal(decodePng(makePng(4, 4, 2, pattern(4, 4, 3), [0], { extra: [chunk("tRNS", new Uint8Array(6))] })))).message).toMatch(/tRNS/);
  });

  it("refuses a broken file: no signature, a bad CRC, truncated data, a bad filter byte, a missing IEND", async () => {
    const good = makePng(6, 5, 2, pattern(6, 5, 3), [0, 2]);
    expect((await refusal(decodePng(Buffer.from("GIF89a not a png at all, not at all")))).details.reason).toBe("png-corrupt");
    const badCrc = Buffer.from(good);
    badCrc[40] ^= 0xff; // inside the first IDAT
    expect((await refusal(decodePng(badCrc))).message).toMatch(/CRC/);
    expect((await refusal(decodePng(good.subarray(0, good.length - 20)))).code).toBe("SCREENSHOT_FAILED");
    const short = makePng(6, 5, 2, pattern(6, 4, 3), [0]); // 4 rows of pixels declared as 5
    const ihdrSays5 = Buffer.concat([SIG, chunk("IHDR", Buffer.from([0, 0, 0, 6, 0, 0, 0, 5, 8, 2, 0, 0, 0])), ...idatAndEnd(short)]);
    expect((await refusal(decodePng(ihdrSays5))).message).toMatch(/not the 95/);
    const badFilter = makePng(3, 2, 2, pattern(3, 2, 3), [7 as number]);
    expect((await refusal(decodePng(badFilter))).message).toMatch(/filter 7/);
    expect((await refusal(decodePng(good.subarray(0, good.length - 12)))).message).toMatch(/IEND/);
  });

  it("refuses an image over the size caps before inflating anything", async () => {
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(MAX_SIDE + 1, 0);
    ihdr.writeUInt32BE(10, 4);
    ihdr[8] = 8;
    ihdr[9] = 2;
    const huge = Buffer.concat([SIG, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(Buffer.alloc(10))), chunk("IEND", new Uint8Array(0))]);
    const err = await refusal(decodePng(huge));
    expect(err.details.reason).toBe("image-too-large");
  });

  it("refuses image data that inflates to more than the rows it declares (bounded inflate)", async () => {
    const ihdr = Buffer.from([0, 0, 0, 2, 0, 0, 0, 2, 8, 2, 0, 0, 0]);
    const bomb = Buffer.concat([SIG, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(Buffer.alloc(10_000_000))), chunk("IEND", new Uint8Array(0))]);
    expect((await refusal(decodePng(bomb))).details.reason).toBe("png-corrupt");
  });
});

function idatAndEnd(png: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 8; o < png.length; ) {
    const len = png.readUInt32BE(o);
    const type = png.toString("latin1", o + 4, o + 8);
    if (type !== "IHDR") out.push(png.subarray(o, o + 12 + len));
    o += 12 + len;
  }
  return out;
}

describe("encodePng", () => {
  for (const [name, channels] of [
    ["RGB", 3],
    ["RGBA", 4],
  ] as const) {
    for (const filter of ["none", "up"] as const) {
      it(`${name}, filter ${filter}: decodes back to the same pixels, here and with an independent decoder`, async () => {
        const img: Bitmap = { width: 31, height: 19, channels, data: pattern(31, 19, channels) };
        const png = await encodePng(img, filter);
        const back = await decodePng(png);
        expect(back).toMatchObject({ width: 31, height: 19, channels });
        expect(Buffer.from(back.data).equals(Buffer.from(img.data))).toBe(true);
        // test/integration/adapters/png-read.ts: written separately, RGB out.
        const other = independentDecode(png);
        for (let i = 0; i < 31 * 19; i++) expect([...other.data.subarray(i * 3, i * 3 + 3)]).toEqual([...img.data.subarray(i * channels, i * channels + 3)]);
      });
    }
  }

  it("splits large image data into 1 MiB IDAT chunks, each with a valid CRC", async () => {
    // Noise does not compress: well over 1 MiB of deflate output.
    const w = 1024;
    const h = 600;
    const data = new Uint8Array(w * h * 3);
    let seed = 12345;
    for (let i = 0; i < data.length; i++) data[i] = (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24;
    const png = await encodePng({ width: w, height: h, channels: 3, data });
    let idats = 0;
    for (let o = 8; o < png.length; ) {
      const len = png.readUInt32BE(o);
      if (png.toString("latin1", o + 4, o + 8) === "IDAT") idats++;
      expect(png.readUInt32BE(o + 8 + len)).toBe(crc32(png, o + 4, o + 8 + len));
      o += 12 + len;
    }
    expect(idats).toBeGreaterThan(1);
    expect(Buffer.from((await decodePng(png)).data).equals(Buffer.from(data))).toBe(true);
  });
});
