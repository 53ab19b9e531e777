// The golden vectors (helpers/protocol/vectors/*.bin) through the TS side:
// every file decodes with FrameDecoder to its .json `message`, in one chunk
// or byte by byte; it parses with the Frame schema (and its op's args or
// result schema), unknown fields dropped, never refused.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeFrame, FrameDecoder } from "../../../src/wire/codec.ts";
import { Frame, HELPER_ERROR_CODES, OPS, type OpName } from "../../../src/wire/messages.ts";
import { VECTORS } from "../../../src/wire/vectors.ts";

const DIR = resolve(__dirname, "../../../helpers/protocol/vectors");
const names = readdirSync(DIR)
  .filter((f) => f.endsWith(".bin"))
  .map((f) => f.slice(0, -4))
  .sort();

interface VectorFile {
  name: string;
  op: OpName | null;
  message: Record<string, unknown>;
  frame_hex: string;
}
const load = (name: string) => ({ bin: readFileSync(join(DIR, `${name}.bin`)), json: JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as VectorFile });

/** Every value `sub` has is in `sup` (deep); `sup` may have more keys. */
function expectSubset(sub: unknown, sup: unknown, path = "$"): void {
  if (sub !== null && typeof sub === "object" && !Array.isArray(sub)) {
    expect(sup !== null && typeof sup === "object" && !Array.isArray(sup), path).toBe(true);
    for (const [k, v] of Object.entries(sub)) expectSubset(v, (sup as Record<string, unknown>)[k], `${path}.${k}`);
  } else if (Array.isArray(sub)) {
    expect(Array.isArray(sup) && sup.length === sub.length, path).toBe(true);
    sub.forEach((v, i) => expectSubset(v, (sup as unknown[])[i], `${path}[${i}]`));
  } else {
    expect(sup, path).toEqual(sub);
  }
}

/** Vectors whose words the parser normalises (a newer helper's unknown role, state, action): checked on their own below. */
const NORMALISED = new Set(["38-response-get-tree-unknown-words"]);

describe("golden vectors", () => {
  it("one .json per .bin, as many as src/wire/vectors.ts defines", () => {
    expect(names.length).toBe(VECTORS.length);
    expect(names.length).toBeGreaterThanOrEqual(26);
    for (const n of names) expect(readdirSync(DIR)).toContain(`${n}.json`);
  });

  for (const name of names) {
    it(`${name}: decodes to its message, in one chunk and byte by byte, and parses`, () => {
      const { bin, json } = load(name);
      expect(bin.toString("hex")).toBe(json.frame_hex);
      const whole = new FrameDecoder().push(bin);
      expect(whole).toEqual([json.message]);
      const dec = new FrameDecoder();
      const frames: Record<string, unknown>[] = [];
      for (let i = 0; i < bin.length; i++) frames.push(...dec.push(bin.subarray(i, i + 1)));
      expect(frames).toEqual([json.message]);
      expect(dec.pending).toBe(0);
      // Our encoding of the meaning decodes to the same meaning.
      expect(new FrameDecoder().push(encodeFrame(json.message))).toEqual([json.message]);

      const parsed = Frame.safeParse(whole[0]);
      expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
      expectSubset(parsed.data, json.message);
      const frame = parsed.data!;
      if (frame.type === "request") {
        const args = OPS[frame.op as OpName].args.safeParse(frame.args);
        expect(args.success, JSON.stringify(args.error?.issues)).toBe(true);
        expectSubset(args.data, frame.args);
      }
      if (frame.type === "response" && frame.ok && json.op) {
        const result = OPS[json.op].result.safeParse(frame.result);
        expect(result.success, JSON.stringify(result.error?.issues)).toBe(true);
        if (!NORMALISED.has(name)) expectSubset(result.data, frame.result);
      }
    });
  }

  it("unknown fields are dropped, not refused (hello, request, response, args, results)", () => {
    const hello = Frame.parse(load("16-hello-extra-fields").json.message) as Record<string, any>;
    expect(hello.session_id).toBeUndefined();
    expect(hello.helper.build).toBeUndefined();
    expect(hello.capabilities["input.focus_guard"]).toEqual({ supported: true, verified: "live" });
    expect(hello.capabilities["future.op"]).toEqual({ supported: true, verified: "unverified" });
    expect(hello.protocol).toEqual([2, 7]);
    const req = Frame.parse(load("17-request-extra-fields").json.message) as Record<string, any>;
    expect(req.trace_id).toBeUndefined();
    expect(OPS.list_windows.args.parse(req.args)).toEqual({ pid: null });
    const res = Frame.parse(load("18-response-extra-fields").json.message) as Record<string, any>;
    expect(res.elapsed_us).toBeUndefined();
    const result = OPS.list_windows.result.parse(res.result) as Record<string, any>;
    expect(result.cursor).toBeUndefined();
    expect(result.windows[0].workspace).toBeUndefined();
    expect(result.windows[0].window_id).toBe(2097153);
  });

  it("a newer helper's words (2.0): an unknown role reads as other, an unknown state is dropped, an unknown action is other with its native name", () => {
    const res = Frame.parse(load("38-response-get-tree-unknown-words").json.message) as Record<string, any>;
    const [n] = OPS.get_tree.result.parse(res.result).nodes;
    expect(n).toMatchObject({ role: "other", native_role: "hologram view", states: ["focused"], actions: [{ name: "other", native: "rotate" }] });
  });

  it("an unknown error code parses as a response (it becomes HELPER_ERROR, not a protocol error)", () => {
    const res = Frame.parse(load("19-response-unknown-error-code").json.message) as Record<string, any>;
    expect(res.error.code).toBe("QUOTA_EXCEEDED");
    expect(HELPER_ERROR_CODES as readonly string[]).not.toContain("QUOTA_EXCEEDED");
  });
});
