// serve's line reader: whole lines out of arbitrary chunks, an oversized
// line reported once and discarded without being held, the next lines intact.
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_LINE_BYTES, idFromHead, LineReader, type LineTooLong } from "../../../src/cli/line-reader.ts";

function reader(max: number) {
  const lines: string[] = [];
  const tooLong: LineTooLong[] = [];
  const r = new LineReader((l) => lines.push(l), (i) => tooLong.push(i), max);
  return { r, lines, tooLong };
}

describe("LineReader", () => {
  it("default cap is 8 MiB", () => {
    expect(DEFAULT_MAX_LINE_BYTES).toBe(8 * 1024 * 1024);
    expect(new LineReader(() => {}, () => {}).maxLineBytes).toBe(DEFAULT_MAX_LINE_BYTES);
  });

  it("splits lines across chunks, CRLF too, multi-byte characters cut anywhere", () => {
    const { r, lines } = reader(1024);
    const bytes = Buffer.from('{"a":"é€😀"}\r\n{"b":1}\nlast');
    for (let i = 0; i < bytes.length; i++) r.push(bytes.subarray(i, i + 1));
    r.end();
    expect(lines).toEqual(['{"a":"é€😀"}', '{"b":1}', "last"]);
  });

  it("an oversized line is reported once, never buffered past the cap, and the next line is read", () => {
    const { r, lines, tooLong } = reader(4096);
    let peak = 0;
    r.push(Buffer.from('{"id":"big","command":"list-apps","args":{"pad":"'));
    const chunk = Buffer.alloc(64 * 1024, "x");
    for (let i = 0; i < 160; i++) {
      // 10 MiB in all
      r.push(chunk);
      peak = Math.max(peak, r.buffered);
    }
    r.push(Buffer.from('"}}\n{"id":2,"command":"list-apps"}\n'));
    expect(peak).toBeLessThanOrEqual(4096);
    expect(tooLong).toHaveLength(1);
    expect(tooLong[0]!.limit).toBe(4096);
    expect(idFromHead(tooLong[0]!.head)).toBe("big");
    expect(lines).toEqual(['{"id":2,"command":"list-apps"}']);
  });

  it("a line of exactly the cap passes; one byte more does not", () => {
    const { r, lines, tooLong } = reader(1024);
    r.push(Buffer.from("y".repeat(1024) + "\n" + "z".repeat(1025) + "\nok\n"));
    expect(lines).toEqual(["y".repeat(1024), "ok"]);
    expect(tooLong).toHaveLength(1);
  });

  it("idFromHead: only when id is the object's first key", () => {
    expect(idFromHead('{"id":7,"command":"x"')).toBe(7);
    expect(idFromHead(' { "id" : "a\\"b" , ')).toBe('a"b');
    expect(idFromHead('{"command":"x","id":7')).toBeNull();
    expect(idFromHead('{"args":{"id":7}}')).toBeNull();
    expect(idFromHead('{"id":1.5e3')).toBeNull();
    expect(idFromHead("garbage")).toBeNull();
  });
});
