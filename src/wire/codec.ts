// Frame codec: u32 big-endian length + one msgpack map. msgpackr is set up
// so that other languages can read what we write (no record extension) and
// so that large integers decode as numbers where they fit.
// msgpackr/pack: the pure-JS codec (pack + unpack) without the index's probe for a
// native add-on and its streams, which a one-shot call paid for at start-up.
import { Packr, Unpackr } from "msgpackr/pack";
import { DEFAULT_MAX_FRAME_BYTES } from "./messages.ts";

const packr = new Packr({ useRecords: false, encodeUndefinedAsNil: true, mapsAsObjects: true });
const unpackr = new Unpackr({ useRecords: false, int64AsType: "auto" as "number", mapsAsObjects: true });

export class FrameError extends Error {
  constructor(
    readonly reason: "oversized" | "malformed" | "not_a_map",
    message: string,
  ) {
    super(message);
    this.name = "FrameError";
  }
}

/**
 * Drop undefined fields (msgpack has no "absent", and nil would mean null),
 * and turn integers beyond 32 bits into BigInt: msgpackr would otherwise
 * write them as float64, which a strict decoder (rmp-serde) refuses as an int.
 */
function stripUndefined(value: unknown): unknown {
  if (typeof value === "number" && Number.isSafeInteger(value) && (value > 0xffffffff || value < -0x80000000)) return BigInt(value);
  if (Array.isArray(value)) return value.map(stripUndefined);
  if (value && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = stripUndefined(v);
    return out;
  }
  return value;
}

export function encodeBody(message: Record<string, unknown>): Buffer {
  return packr.pack(stripUndefined(message));
}

export function encodeFrame(message: Record<string, unknown>): Buffer {
  const body = encodeBody(message);
  const frame = Buffer.allocUnsafe(4 + body.length);
  frame.writeUInt32BE(body.length, 0);
  body.copy(frame, 4);
  return frame;
}

export function decodeBody(body: Uint8Array): Record<string, unknown> {
  let value: unknown;
  try {
    value = unpackr.unpack(body);
  } catch (err) {
    throw new FrameError("malformed", `undecodable msgpack body (${(err as Error).message})`);
  }
  // A plain object only: msgpack extensions decode to Date, Set, Error, ... which are not maps.
  const proto = value !== null && typeof value === "object" ? Object.getPrototypeOf(value) : undefined;
  if (proto !== Object.prototype && proto !== null) {
    throw new FrameError("not_a_map", "frame body is not a msgpack map");
  }
  return value as Record<string, unknown>;
}

/**
 * Incremental decoder: push chunks as they arrive, take whole frames out.
 * Throws FrameError on the first bad frame; the caller treats the stream
 * as dead from then on (there is no resynchronising a length-prefixed stream).
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;
  constructor(public maxFrameBytes = DEFAULT_MAX_FRAME_BYTES) {}

  push(chunk: Uint8Array): Record<string, unknown>[] {
    this.chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.buffered += chunk.byteLength;
    const frames: Record<string, unknown>[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const length = head.readUInt32BE(0);
      if (length > this.maxFrameBytes) {
        throw new FrameError("oversized", `frame of ${length} bytes exceeds the limit of ${this.maxFrameBytes}`);
      }
      if (this.buffered < 4 + length) break;
      const all = this.take(4 + length);
      frames.push(decodeBody(all.subarray(4)));
    }
    return frames;
  }

  /** Bytes received but not yet part of a whole frame. */
  get pending(): number {
    return this.buffered;
  }

  private peek(n: number): Buffer {
    if (this.chunks[0]!.length >= n) return this.chunks[0]!;
    const joined = Buffer.concat(this.chunks);
    this.chunks = [joined];
    return joined;
  }

  private take(n: number): Buffer {
    const joined = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }
}
