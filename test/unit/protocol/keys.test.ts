// The one key-chord parser (src/protocol/keys.ts) and every front end that
// uses it: CLI/serve/MCP hotkey, program steps, the vendor adapters and the
// policy's closing-chord check all read "ctrl++" as ctrl with the plus key.
import { describe, expect, it } from "vitest";
import { normalizeKey, parseChord, parseKey, parseKeys, splitChord } from "../../../src/protocol/keys.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { compileCommand } from "../../../src/program/compile.ts";
import { planStep } from "../../../src/program/plan.ts";
import { translateOpenAIAction } from "../../../src/adapters/openai.ts";
import { translateAnthropicInput } from "../../../src/adapters/anthropic.ts";
import { closingChord, sensitivity } from "../../../src/policy/sensitive.ts";
import { parseProgram, type Program, type Step } from "../../../src/protocol/program.ts";
import { thrown } from "../throws.ts";

const invalid = (fn: () => unknown) => thrown(fn);

describe("splitChord", () => {
  it("names joined by +, the plus key written literally or as plus", () => {
    expect(splitChord("ctrl+shift+t")).toEqual(["ctrl", "shift", "t"]);
    expect(splitChord("ctrl++")).toEqual(["ctrl", "+"]);
    expect(splitChord("ctrl+plus")).toEqual(["ctrl", "plus"]);
    expect(splitChord("+")).toEqual(["+"]);
    expect(splitChord("++ctrl")).toEqual(["+", "ctrl"]);
    expect(splitChord("ctrl+shift++")).toEqual(["ctrl", "shift", "+"]);
    expect(splitChord("a+++b")).toEqual(["a", "+", "b"]);
  });

  it("blanks around names are ignored", () => {
    expect(splitChord(" ctrl + shift + t ")).toEqual(["ctrl", "shift", "t"]);
    expect(splitChord("ctrl + +")).toEqual(["ctrl", "+"]);
    expect(splitChord("\tctrl+\ts\n")).toEqual(["ctrl", "s"]);
  });

  it("blank, dangling or malformed chords are refused, not guessed", () => {
    for (const bad of ["", "   ", "ctrl+", "ctrl+ ", "ctrl+++", "++", "+ctrl", "a++b", "ctrl+page up", "ctrl+s t"]) {
      const e = invalid(() => splitChord(bad));
      expect(e.details.field).toBe("keys");
    }
    expect(invalid(() => splitChord("ctrl+", { field: "text" })).details.field).toBe("text");
    expect(invalid(() => splitChord("ctrl+")).message).toMatch(/ctrl\+\+.*ctrl\+plus/);
  });
});

describe("parseChord / parseKeys / parseKey: canonical names", () => {
  it("modifier names in any case; aliases; the plus key is plus", () => {
    expect(parseChord("CTRL+Shift+t")).toEqual(["ctrl", "shift", "t"]);
    expect(parseChord("Control+ALT+Delete")).toEqual(["ctrl", "alt", "Delete"]);
    expect(parseChord("ctrl++")).toEqual(["ctrl", "plus"]);
    expect(parseChord("Ctrl+Plus")).toEqual(["ctrl", "plus"]);
    expect(parseChord("cmd+enter")).toEqual(["super", "Return"]);
    expect(parseChord("ctrl+f5")).toEqual(["ctrl", "F5"]);
    // xdotool's S stays S unless a vendor's convention folds it.
    expect(parseChord("ctrl+S")).toEqual(["ctrl", "S"]);
    expect(parseChord("CTRL+S", { lowerLetters: true })).toEqual(["ctrl", "s"]);
    expect(normalizeKey("+")).toBe("plus");
  });

  it("repeated fragments of one chord", () => {
    expect(parseKeys(["ctrl", "shift+t"])).toEqual(["ctrl", "shift", "t"]);
    expect(parseKeys(["ctrl", "+"])).toEqual(["ctrl", "plus"]);
    expect(parseKeys(["ctrl++"])).toEqual(["ctrl", "plus"]);
    invalid(() => parseKeys([]));
    invalid(() => parseKeys(["ctrl", ""]));
  });

  it("idempotent: canonical names parse to themselves", () => {
    for (const chord of ["ctrl++", "CTRL+Shift+T", "alt+F4", "super+Return", "Page_Up"]) {
      const once = parseChord(chord);
      expect(parseKeys(once)).toEqual(once);
    }
  });

  it("parseKey: exactly one key", () => {
    expect(parseKey("+")).toBe("plus");
    expect(parseKey("Shift")).toBe("shift");
    expect(invalid(() => parseKey("ctrl+a")).message).toMatch(/2 keys/);
  });
});

describe("every front end reads a chord the same way", () => {
  const app = { pid: 1, name: "a" } as never;
  const tapKeys = async (step: Step) => {
    const plan = await planStep(null as never, step, null, app);
    if (plan.kind !== "input") throw new Error("expected input");
    const first = plan.steps[0]!;
    return first.kind === "tap" ? first.keys : first.kind === "key" ? [first.key] : [];
  };

  it("CLI / serve / MCP hotkey --keys ctrl++ -> ctrl + plus (it used to drop the +)", () => {
    const p = compileCommand("hotkey", { app: "x", keys: ["ctrl++"] });
    expect(p.steps[0]).toEqual({ action: "hotkey", keys: ["ctrl", "plus"] });
    expect(compileCommand("hotkey", { app: "x", keys: ["CTRL", "+"] }).steps[0]).toEqual({ action: "hotkey", keys: ["ctrl", "plus"] });
    expect(compileCommand("hotkey", { app: "x", keys: [" Ctrl + Shift + t "] }).steps[0]).toEqual({ action: "hotkey", keys: ["ctrl", "shift", "t"] });
    const e = invalid(() => compileCommand("hotkey", { app: "x", keys: ["ctrl+"] }));
    expect(e.message).not.toMatch(/step 0/);
  });

  it("program steps: hotkey, press-key, hold-key and click modifiers", async () => {
    expect(await tapKeys({ action: "hotkey", keys: ["ctrl++"] })).toEqual(["ctrl", "plus"]);
    expect(await tapKeys({ action: "hotkey", keys: ["Ctrl+Shift+T"] })).toEqual(["ctrl", "shift", "T"]);
    expect(await tapKeys({ action: "press-key", key: "ctrl+s" })).toEqual(["ctrl", "s"]);
    expect(await tapKeys({ action: "press-key", key: "+" })).toEqual(["plus"]);
    expect(await tapKeys({ action: "hold-key", key: "Shift", ms: 10 })).toEqual(["shift"]);
    const program = (steps: Step[]): Program => ({ app: "x", steps });
    const e = invalid(() => parseProgram(program([{ action: "wait", ms: 1 }, { action: "hotkey", keys: ["ctrl+"] }])));
    expect(e.message).toMatch(/^step 1 \(hotkey\): /);
    expect(e.details.step).toBe(1);
    invalid(() => parseProgram(program([{ action: "hold-key", key: "ctrl+a", ms: 10 }])));
    invalid(() => parseProgram(program([{ action: "click", x: 1, y: 1, modifiers: ["ctrl+"] }])));
  });

  it("OpenAI keypress and Anthropic key", () => {
    expect(translateOpenAIAction({ type: "keypress", keys: ["CTRL", "+"] })).toEqual([{ action: "hotkey", keys: ["ctrl", "plus"] }]);
    expect(translateOpenAIAction({ type: "keypress", keys: ["ctrl++"] })).toEqual([{ action: "hotkey", keys: ["ctrl", "plus"] }]);
    expect(translateAnthropicInput({ action: "key", text: "ctrl++" })).toEqual({ kind: "steps", steps: [{ action: "hotkey", keys: ["ctrl", "plus"] }] });
    expect(translateAnthropicInput({ action: "key", text: "ctrl+plus" })).toEqual({ kind: "steps", steps: [{ action: "hotkey", keys: ["ctrl", "plus"] }] });
  });

  it("policy: closing chords are found however they are written", () => {
    expect(closingChord(["Ctrl + Q"])).toBe("ctrl+q");
    expect(closingChord(["CTRL", "q"])).toBe("ctrl+q");
    expect(closingChord(["ctrl++"])).toBeNull();
    expect(closingChord(["ctrl", "plus"])).toBeNull();
    // What the CLI compiles a hotkey to is judged the same as what was typed.
    const compiled = compileCommand("hotkey", { app: "x", keys: ["Alt+F4"] }).steps[0] as { keys: string[] };
    expect(sensitivity({ kind: "hotkey", keys: compiled.keys }).sensitive).toBe(true);
    // A chord the parser refuses still gets the conservative reading.
    expect(closingChord(["ctrl+q+"])).toBe("ctrl+q");
  });
});
