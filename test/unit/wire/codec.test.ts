// The frame codec: u32 big-endian length + one msgpack map. Whatever bytes a
// helper sends, the decoder either yields maps or throws FrameError; nothing
// else escapes, and it never hangs or grows without bound.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Packr } from "msgpackr";
import { decodeBody, encodeBody, encodeFrame, FrameDecoder, FrameError } from "../../../src/wire/codec.ts";
import { DEFAULT_MAX_FRAME_BYTES, Frame } from "../../../src/wire/messages.ts";

/** Push every chunk; collect frames; return the FrameError if one was thrown. */
function feed(decoder: FrameDecoder, chunks: Uint8Array[]): { frames: Record<string, unknown>[]; error: FrameError | null } {
  const frames: Record<string, unknown>[] = [];
  try {
    for (const c of chunks) frames.push(...decoder.push(c));
  } catch (err) {
    if (!(err instanceof FrameError)) throw new Error(`non-FrameError escaped: ${String(err)}`);
    expect(["oversized", "malformed", "not_a_map"]).toContain(err.reason);
    return { frames, error: err };
  }
  return { frames, error: null };
}

/** Split bytes at the given cut points (sorted, deduplicated, in range). */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

// Values that survive a msgpack round trip unchanged (no -0, no undefined,
// no __proto__ keys, which msgpackr renames on purpose).
const key = fc.string({ maxLength: 12 }).filter((k) => k !== "__proto__");
const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.integer({ min: 0, max: 2 ** 32 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, fc.array(tie("value"), { maxLength: 5 }), fc.dictionary(key, tie("value"), { maxKeys: 5 })),
}));
const map = fc.dictionary(key, value, { maxKeys: 8 });

describe("FrameDecoder properties", () => {
  it("random bytes in random chunks: only FrameError, never anything else", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2048 }), fc.array(fc.nat(), { maxLength: 8 }), (bytes, cuts) => {
        feed(new FrameDecoder(), split(bytes, cuts));
      }),
      { numRuns: 2000 },
    );
  });

  it("random bodies behind a valid length header: maps or FrameError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (body) => {
        const frame = Buffer.alloc(4 + body.length);
        frame.writeUInt32BE(body.length, 0);
        Buffer.from(body).copy(frame, 4);
        const { frames, error } = feed(new FrameDecoder(), [frame]);
        if (!error) {
          expect(frames).toHaveLength(1);
          expect(typeof frames[0]).toBe("object");
          expect(Array.isArray(frames[0])).toBe(false);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("valid frames, chunked anywhere: decoded in order and equal to the input", () => {
    fc.assert(
      fc.property(fc.array(map, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), (maps, cuts) => {
        const all = Buffer.concat(maps.map((m) => encodeFrame(m)));
        const { frames, error } = feed(new FrameDecoder(), split(all, cuts));
        expect(error).toBeNull();
        expect(frames).toEqual(maps);
      }),
      { numRuns: 500 },
    );
  });

  it("a truncated valid frame yields nothing, throws nothing, and completes later", () => {
    fc.assert(
      fc.property(map, fc.nat(), (m, at) => {
        const frame = encodeFrame(m);
        const cut = at % frame.length; // strictly shorter than the frame
        const d = new FrameDecoder();
        expect(d.push(frame.subarray(0, cut))).toEqual([]);
        expect(d.pending).toBe(cut);
        expect(d.push(frame.subarray(cut))).toEqual([m]);
        expect(d.pending).toBe(0);
      }),
      { numRuns: 500 },
    );
  });

  it("byte-at-a-time delivery works", () => {
    const m = { type: "response", id: 3, ok: true, result: { apps: [] } };
    const frame = encodeFrame(m);
    const d = new FrameDecoder();
    const out: Record<string, unknown>[] = [];
    for (let i = 0; i < frame.length; i++) out.push(...d.push(frame.subarray(i, i + 1)));
    expect(out).toEqual([m]);
  });

  it("round trip of random maps through encodeBody/decodeBody", () => {
    fc.assert(
      fc.property(map, (m) => {
        expect(decodeBody(encodeBody(m))).toEqual(m);
      }),
      { numRuns: 1000 },
    );
  });
});

describe("FrameDecoder edge cases", () => {
  it("an oversized header -> FrameError oversized, before the body arrives", () => {
    const head = Buffer.alloc(4);
    head.writeUInt32BE(1024 * 1024 * 1024, 0);
    const d = new FrameDecoder();
    let err: unknown;
    try {
      d.push(head);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(FrameError);
    expect((err as FrameError).reason).toBe("oversized");
    expect((err as FrameError).message).toContain("1073741824");
  });

  it("the limit is the decoder's, exactly: max passes, max+1 fails", () => {
    const d = new FrameDecoder(10);
    const ok = Buffer.from([0, 0, 0, 10]);
    expect(d.push(ok)).toEqual([]);
    const d2 = new FrameDecoder(10);
    expect(() => d2.push(Buffer.from([0, 0, 0, 11]))).toThrow(FrameError);
    expect(new FrameDecoder().maxFrameBytes).toBe(DEFAULT_MAX_FRAME_BYTES);
  });

  it("the fake helper's garbage (0xc1 never-used bytes) -> FrameError malformed", () => {
    expect(() => new FrameDecoder().push(Buffer.from([0, 0, 0, 3, 0xc1, 0xc1, 0xc1]))).toThrow(expect.objectContaining({ reason: "malformed" }));
  });

  it("a zero-length body -> FrameError malformed", () => {
    expect(() => new FrameDecoder().push(Buffer.from([0, 0, 0, 0]))).toThrow(expect.objectContaining({ reason: "malformed" }));
  });

  it("trailing bytes inside a body -> FrameError malformed", () => {
    const body = Buffer.concat([encodeBody({ a: 1 }), Buffer.from([0xc0])]);
    expect(() => decodeBody(body)).toThrow(expect.objectContaining({ reason: "malformed" }));
  });

  it.each([
    ["an array", [1, 2]],
    ["a string", "hello"],
    ["a number", 42],
    ["nil", null],
    ["binary", new Uint8Array([1, 2, 3])],
  ])("a body that is %s -> FrameError not_a_map", (_name, v) => {
    const body = new Packr({ useRecords: false }).pack(v);
    expect(() => decodeBody(body)).toThrow(expect.objectContaining({ reason: "not_a_map" }));
  });

  it("a body that is a msgpack extension (timestamp) is not a map", () => {
    const body = new Packr({ useRecords: false }).pack(new Date(0));
    expect(() => decodeBody(body)).toThrow(expect.objectContaining({ reason: "not_a_map" }));
  });

  it("two frames in one chunk, then a partial third", () => {
    const a = encodeFrame({ n: 1 });
    const b = encodeFrame({ n: 2 });
    const c = encodeFrame({ n: 3 });
    const d = new FrameDecoder();
    expect(d.push(Buffer.concat([a, b, c.subarray(0, 5)]))).toEqual([{ n: 1 }, { n: 2 }]);
    expect(d.pending).toBe(5);
    expect(d.push(c.subarray(5))).toEqual([{ n: 3 }]);
  });

  it("undefined fields are dropped, null is kept", () => {
    const frame = encodeFrame({ type: "request", id: 1, op: "x", deadline_ms: 5, args: { a: undefined, b: null, c: [undefined, 1] } });
    const [m] = new FrameDecoder().push(frame);
    expect(m).toEqual({ type: "request", id: 1, op: "x", deadline_ms: 5, args: { b: null, c: [null, 1] } });
  });

  it("encoded frames are portable: plain msgpack maps with string keys, no records", () => {
    const frame = encodeFrame({ type: "cancel", id: 9 });
    expect(frame.readUInt32BE(0)).toBe(frame.length - 4);
    // A msgpack map (fixmap or map16: msgpackr reserves map16), then fixstr "type".
    const marker = frame[4]!;
    expect(marker === 0x82 || marker === 0xde).toBe(true);
    const keyAt = marker === 0x82 ? 5 : 7;
    if (marker === 0xde) expect(frame.readUInt16BE(5)).toBe(2);
    expect(frame.subarray(keyAt, keyAt + 5).toString("latin1")).toBe("\xa4type");
    expect(Frame.safeParse(decodeBody(frame.subarray(4))).success).toBe(true);
  });

  it("large integers decode as numbers where they fit", () => {
    const m = decodeBody(encodeBody({ big: 2 ** 40, neg: -(2 ** 40), u32: 2 ** 32 - 1 }));
    expect(m).toEqual({ big: 2 ** 40, neg: -(2 ** 40), u32: 2 ** 32 - 1 });
  });
});
