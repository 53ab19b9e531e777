#!/usr/bin/env node
// The scripted fake helper, with real screenshots: every screenshot file the
// fake writes is replaced by a valid PNG of exactly the size it reports, so
// the adapters' decode / downscale / remap path runs end to end. The pixels
// are a gradient the tests can check: R = x mod 256, G = y mod 256,
// B = 0x40 * (x >> 8 & 3) + (y >> 8 & 3).
// Frames are forwarded unchanged; only the file behind a screenshot result changes.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { deflateSync } from "node:zlib";
import { Unpackr } from "msgpackr";

const FAKE = fileURLToPath(new URL("../../fixtures/helpers/fake-helper.mjs", import.meta.url));
const unpackr = new Unpackr({ useRecords: false, int64AsType: "auto" });

const CRC = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();
function crc32(b) {
  let c = 0xffffffff;
  for (const x of b) c = CRC[(c ^ x) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
function chunk(type, body) {
  const out = Buffer.alloc(12 + body.length);
  out.writeUInt32BE(body.length, 0);
  out.write(type, 4, "latin1");
  body.copy(out, 8);
  out.writeUInt32BE(crc32(out.subarray(4, 8 + body.length)), 8 + body.length);
  return out;
}
/** RGBA, filter 1 (Sub) on every row: exercises the decoder's unfiltering and alpha drop. */
export function gradientPng(w, h) {
  const stride = w * 4;
  const raw = Buffer.alloc(h * (stride + 1));
  for (let y = 0; y < h; y++) {
    const row = Buffer.alloc(stride);
    for (let x = 0; x < w; x++) {
      row[x * 4] = x & 255;
      row[x * 4 + 1] = y & 255;
      row[x * 4 + 2] = 0x40 * ((x >> 8) & 3) + ((y >> 8) & 3);
      row[x * 4 + 3] = 255;
    }
    const o = y * (stride + 1);
    raw[o] = 1;
    for (let i = 0; i < stride; i++) raw[o + 1 + i] = (row[i] - (i >= 4 ? row[i - 4] : 0)) & 255;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw, { level: 1 })), chunk("IEND", Buffer.alloc(0))]);
}

const child = spawn(process.execPath, [FAKE, ...process.argv.slice(2)], { stdio: ["pipe", "pipe", "inherit"] });
process.stdin.pipe(child.stdin);
process.stdin.on("end", () => child.stdin.end());
child.on("exit", (code) => process.exit(code ?? 0));

let buf = Buffer.alloc(0);
child.stdout.on("data", (d) => {
  buf = Buffer.concat([buf, d]);
  while (buf.length >= 4) {
    const len = buf.readUInt32BE(0);
    if (buf.length < 4 + len) break;
    const frame = buf.subarray(0, 4 + len);
    buf = buf.subarray(4 + len);
    try {
      const msg = unpackr.unpack(frame.subarray(4));
      const r = msg && msg.type === "response" ? msg.result : null;
      if (r && typeof r.path === "string" && r.method === "scripted") writeFileSync(r.path, gradientPng(r.width, r.height), { mode: 0o600 });
    } catch {
      // Not ours to judge: forward whatever the fake said.
    }
    process.stdout.write(frame);
  }
});
