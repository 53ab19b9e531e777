// The pure parts of trace recording (src/program/trace-recorder.ts): what a
// step's plan draws on its images, the tree line diff, the recorded request
// and the decision.
import { describe, expect, it } from "vitest";
import { decisionOf, diffLines, marksOf, traceStep } from "../../src/program/trace-recorder.ts";
import { TraceMarks } from "../../src/protocol/trace.ts";

const guard = { windows: [], pid: 1 } as never;

describe("marksOf", () => {
  it("a drag: press at the start, the path while the button is down, release at the end", () => {
    const m = marksOf({
      kind: "input",
      pointer: true,
      keyboard: false,
      guard,
      steps: [
        { kind: "move", x: 10, y: 20 },
        { kind: "button", button: "left", down: true },
        { kind: "move", x: 30, y: 40 },
        { kind: "move", x: 50, y: 60 },
        { kind: "button", button: "left", down: false },
      ],
    });
    expect(m.path).toEqual([
      { x: 10, y: 20 },
      { x: 30, y: 40 },
      { x: 50, y: 60 },
    ]);
    expect(m.points.map((p) => p.kind)).toEqual(["press", "release"]);
    expect(m.points[1]).toMatchObject({ x: 50, y: 60 });
    expect(TraceMarks.parse(m)).toEqual(m);
  });

  it("an element click: its box, and a click at the box's centre; set-value: the box only", () => {
    const element = { bounds: { x: 10, y: 10, width: 20, height: 10 } } as never;
    expect(marksOf({ kind: "element", action: "click", element })).toEqual({ points: [{ x: 20, y: 15, kind: "click" }], path: [], box: { x: 10, y: 10, width: 20, height: 10 } });
    expect(marksOf({ kind: "element", action: "set_value", element, text: "x" }).points).toEqual([]);
  });

  it("a point click and a scroll at a point; a move followed by a click at the same place is one click", () => {
    expect(marksOf({ kind: "point", x: 5, y: 6, button: "left", count: 1, guard, words: [], press: false }).points).toEqual([{ x: 5, y: 6, kind: "click" }]);
    const m = marksOf({
      kind: "input",
      pointer: true,
      keyboard: false,
      guard,
      steps: [
        { kind: "move", x: 7, y: 8 },
        { kind: "click", x: 7, y: 8, button: "left", count: 1, modifiers: [] },
        { kind: "scroll", x: 1, y: 2, dx: 0, dy: 3 },
      ],
    });
    expect(m.points).toEqual([
      { x: 7, y: 8, kind: "click" },
      { x: 1, y: 2, kind: "scroll" },
    ]);
    expect(marksOf(null)).toEqual({ points: [], path: [], box: null });
  });
});

describe("diffLines", () => {
  it("lists what was added and removed, in order; a moved line is unchanged", () => {
    const d = diffLines(["a", "b", "c", "d"], ["a", "x", "c", "b", "d"]);
    expect(d).toEqual({ added: ["x"], removed: [], unchanged: 4, truncated: false });
    expect(diffLines(["a", "b"], ["a", "c"])).toEqual({ added: ["c"], removed: ["b"], unchanged: 1, truncated: false });
    expect(diffLines(["a"], ["a"])).toEqual({ added: [], removed: [], unchanged: 1, truncated: false });
  });
  it("caps the lines it keeps and says so", () => {
    const after = Array.from({ length: 1000 }, (_, i) => `line ${i}`);
    const d = diffLines([], after);
    expect(d.truncated).toBe(true);
    expect(d.added.length).toBeLessThan(1000);
  });
});

describe("traceStep and decisionOf", () => {
  it("a step's secret field is its length (in characters), and no --X-stdin flag is kept", () => {
    expect(traceStep({ action: "set-value", elementIndex: 3, value: "héllo" } as never)).toEqual({ action: "set-value", elementIndex: 3, value: { redacted: true, length: 5 } });
    expect(traceStep({ action: "type-text", text: "abc", textStdin: true } as never)).toEqual({ action: "type-text", text: { redacted: true, length: 3 } });
    expect(traceStep({ action: "click", elementIndex: 1 } as never)).toEqual({ action: "click", elementIndex: 1 });
  });
  it("a refusal code is a deny with its remediation; another failure after the decision is an allow; none reached: not-reached", () => {
    expect(decisionOf({ reached: false, source: "builtin", rule: "builtin:secure_field", error: { code: "POLICY_DENIED", remediation: "r" } })).toEqual({ verdict: "deny", source: "builtin", rule: "builtin:secure_field", code: "POLICY_DENIED", remediation: "r" });
    expect(decisionOf({ reached: true, source: "default", rule: null, error: { code: "ACTION_FAILED", remediation: "r" } })).toMatchObject({ verdict: "allow", code: null });
    expect(decisionOf({ reached: false, source: null, rule: null, error: { code: "SNAPSHOT_STALE", remediation: "r" } }).verdict).toBe("not-reached");
  });
});
