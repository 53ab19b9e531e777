import { describe, expect, it } from "vitest";
import { ACTIONS } from "../../../src/protocol/commands.ts";
import { parseProgram } from "../../../src/protocol/program.ts";
import { ACTION_NEEDS } from "../../../src/program/plan.ts";
import { actionSupported } from "../../../src/program/validate.ts";

const caps = (keys: string[]) => Object.fromEntries(keys.map((k) => [k, { supported: true, verified: "vectors" as const }]));
const ALL = [...new Set(Object.values(ACTION_NEEDS).flatMap((n) => [...(n.element ?? []), ...(n.point ?? [])].flat()))];

describe("ACTION_NEEDS: one table for validation and the capabilities report", () => {
  it("covers every action of the inventory", () => {
    expect(Object.keys(ACTION_NEEDS).sort()).toEqual([...ACTIONS].sort());
  });

  it("an action is supported when any one of its forms is", () => {
    const noPointer = caps(ALL.filter((c) => c !== "input.pointer"));
    expect(actionSupported("click", noPointer)).toBe(true); // elements still press
    expect(actionSupported("drag", noPointer)).toBe(false);
    expect(actionSupported("move", noPointer)).toBe(false);
    const noKeyboard = caps(ALL.filter((c) => c !== "input.keyboard"));
    expect(actionSupported("type-text", noKeyboard)).toBe(true); // into an element
    expect(actionSupported("hotkey", noKeyboard)).toBe(false);
    expect(actionSupported("press-key", noKeyboard)).toBe(false); // both forms send a key
    expect(actionSupported("wait", caps([]))).toBe(true);
    expect(actionSupported("set-value", caps([]))).toBe(false);
  });
});

describe("parseProgram: the one shape check", () => {
  const shape = (steps: unknown[]) => () => parseProgram({ app: "x", steps });
  it("refuses contradictory or incomplete steps with INVALID_ARGUMENTS naming the step", () => {
    for (const step of [
      { action: "click", elementIndex: 1, x: 1, y: 2 },
      { action: "click", x: 1 },
      { action: "click" },
      { action: "click", elementIndex: 1, button: "right" },
      { action: "scroll", x: 3 },
      { action: "scroll" },
      { action: "scroll", elementIndex: 2, direction: "down" },
      { action: "select-text", elementIndex: 1, start: 5, end: 2 },
    ]) {
      expect(shape([{ action: "wait", ms: 1 }, step]), JSON.stringify(step)).toThrow(/step 1/);
    }
    expect(shape([{ action: "click", x: 1, y: 2 }, { action: "scroll", elementIndex: 3 }])).not.toThrow();
  });
});

describe("keys held during pointer input (scroll, drag, move modifiers)", () => {
  const shape = (steps: unknown[]) => () => parseProgram({ app: "x", steps });
  it("are accepted through the one chord parser", () => {
    expect(shape([{ action: "scroll", direction: "down", x: 1, y: 1, modifiers: ["ctrl"] }])).not.toThrow();
    expect(shape([{ action: "scroll", direction: "down", modifiers: ["Shift"] }])).not.toThrow(); // where the pointer is
    expect(shape([{ action: "drag", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }], modifiers: ["ctrl", "shift"] }])).not.toThrow();
    expect(shape([{ action: "move", x: 1, y: 1, modifiers: ["alt"] }])).not.toThrow();
  });
  it("a malformed chord, or modifiers on a scroll into view, are INVALID_ARGUMENTS naming the step", () => {
    for (const step of [
      { action: "scroll", direction: "down", x: 1, y: 1, modifiers: ["ctrl+"] },
      { action: "drag", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }], modifiers: [""] },
      { action: "move", x: 1, y: 1, modifiers: ["ctrl+page up"] },
      { action: "scroll", elementIndex: 3, modifiers: ["ctrl"] },
    ]) {
      expect(shape([{ action: "wait", ms: 1 }, step]), JSON.stringify(step)).toThrow(/^step 1 /);
    }
  });
});
