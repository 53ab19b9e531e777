// One declaration per action (src/protocol/actions.ts): the program step,
// the command's arguments and the compiled one-step program all come from it;
// the step's shape is checked once (parseProgram); errors take one path to
// their public shape (publicError).
import { describe, expect, it } from "vitest";
import { ACTION_COMMANDS, ACTION_DECLS, ACTIONS, declOf, isActionCommand, stepElementIndices, stepSecret } from "../../../src/protocol/actions.ts";
import { ARGS, COMMAND_SUMMARY, COMMANDS, MUTATING_COMMANDS } from "../../../src/protocol/commands.ts";
import { parseProgram, stepSchema } from "../../../src/protocol/program.ts";
import { RESULTS } from "../../../src/protocol/results.ts";
import { DeckhandError, publicError, toDeckhandError } from "../../../src/protocol/errors.ts";
import { compileCommand, withStdin } from "../../../src/program/compile.ts";
import { HANDLERS } from "../../../src/commands/index.ts";
import { ACTION_NEEDS } from "../../../src/program/plan.ts";
import { thrown } from "../throws.ts";

// issue 13: every action command also takes restoreWindow (test/unit/protocol/restore-window.test.ts).
const keysOf = (c: keyof typeof ARGS) => Object.keys(ARGS[c].shape).filter((k) => k !== "restoreWindow");

describe("the action table", () => {
  it("is the inventory: steps, commands, summaries, results, handlers and needs, in one order", () => {
    expect(ACTIONS).toEqual(Object.keys(ACTION_DECLS));
    expect(stepSchema().options.map((o) => o.shape.action.value)).toEqual([...ACTIONS]);
    expect(ACTION_COMMANDS).toEqual([
      "click", "set-value", "type-text", "press-key", "hotkey", "scroll", "drag", "select-text", "focus", "perform-secondary-action",
      // ---- issue 13: clipboard
      "paste",
      // ---- end clipboard
    ]);
    // The action commands sit where they always did in the command inventory.
    expect(COMMANDS.slice(6, 6 + ACTION_COMMANDS.length)).toEqual([...ACTION_COMMANDS]);
    for (const c of ACTION_COMMANDS) {
      expect(isActionCommand(c)).toBe(true);
      expect(COMMAND_SUMMARY[c]).toBe(ACTION_DECLS[c].summary);
      expect(RESULTS[c].shape.action.value).toBe(c);
      expect(typeof HANDLERS[c]).toBe("function");
      expect(MUTATING_COMMANDS.has(c)).toBe(true);
    }
    for (const a of ["wait", "move", "hold-key", "run", "list-apps"]) expect(isActionCommand(a)).toBe(false);
    expect(Object.keys(ACTION_NEEDS)).toEqual([...ACTIONS]);
  });

  it("derives each command's arguments: target, snapshot when the step names an element, step fields, conveniences, state", () => {
    expect(keysOf("click")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "elementIndex", "x", "y", "button", "count", "modifiers", "state"]);
    expect(keysOf("set-value")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "elementIndex", "value", "valueStdin", "state"]);
    expect(keysOf("type-text")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "elementIndex", "text", "textStdin", "state"]);
    expect(keysOf("hotkey")).toEqual(["app", "windowId", "windowIndex", "keys", "state"]);
    // modifiers are a program's only; fromX.. spell path.
    expect(keysOf("scroll")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "elementIndex", "direction", "amount", "x", "y", "state"]);
    // An element drag names two elements: the command takes --snapshot-id.
    expect(keysOf("drag")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "path", "fromX", "fromY", "toX", "toY", "fromElementIndex", "toElementIndex", "button", "state"]);
    // The step's `name` is the command's --action.
    expect(keysOf("perform-secondary-action")).toEqual(["app", "windowId", "windowIndex", "snapshotId", "elementIndex", "action", "state"]);
    expect(ARGS["set-value"].shape.value.description).toBe("new value (use --value-stdin for secrets)");
    expect(ARGS["set-value"].shape.valueStdin.description).toBe("read the value from stdin");
    expect(ARGS["set-value"].safeParse({ app: "a", elementIndex: 1 }).success).toBe(true);
    expect(ARGS["select-text"].safeParse({ app: "a", elementIndex: 1, start: 0 }).success).toBe(false);
  });
});

describe("compileCommand: one generic function", () => {
  it("maps renamed, aliased and stdin fields to the step", () => {
    expect(compileCommand("perform-secondary-action", { app: "a", elementIndex: 2, action: "expand", state: true })).toEqual({
      app: "a",
      steps: [{ action: "perform-secondary-action", elementIndex: 2, name: "expand" }],
      observe: true,
    });
    expect(compileCommand("drag", { app: "a", fromX: 1, fromY: 2, toX: 3, toY: 4, windowIndex: 0 }).steps[0]).toEqual({
      action: "drag",
      path: [
        { x: 1, y: 2 },
        { x: 3, y: 4 },
      ],
    });
    // An element drag: the two indices, the snapshot as the program's.
    expect(compileCommand("drag", { app: "a", fromElementIndex: 4, toElementIndex: 9, snapshotId: "cs_0123456789", button: "left" })).toEqual({
      app: "a",
      snapshotId: "cs_0123456789",
      steps: [{ action: "drag", fromElementIndex: 4, toElementIndex: 9, button: "left" }],
      observe: false,
    });
    const p = compileCommand("set-value", { app: "a", elementIndex: 3, valueStdin: true });
    expect(p.steps[0]).toEqual({ action: "set-value", elementIndex: 3, value: "" });
    expect(withStdin(p, "s3cret").steps[0]).toEqual({ action: "set-value", elementIndex: 3, value: "s3cret" });
    expect(p.observe).toBe(false);
  });

  it("contradictory spellings name the flags; the step's rules name the command, never step 0", () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ["set-value", { app: "a", elementIndex: 1 }, "set-value takes exactly one of --value or --value-stdin"],
      ["type-text", { app: "a", text: "x", textStdin: true }, "type-text takes exactly one of --text or --text-stdin"],
      ["drag", { app: "a", fromX: 1 }, "drag needs all of --from-x --from-y --to-x --to-y"],
      ["drag", { app: "a" }, "drag: give either a path or both fromElementIndex and toElementIndex"],
      ["drag", { app: "a", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }], fromX: 1, fromY: 1, toX: 2, toY: 2 }, "drag takes either --path or --from-x/--from-y/--to-x/--to-y"],
      // An element drag: both elements, and nothing else saying where.
      ["drag", { app: "a", fromElementIndex: 1 }, "drag: an element drag needs both fromElementIndex and toElementIndex"],
      ["drag", { app: "a", toElementIndex: 1 }, "drag: an element drag needs both fromElementIndex and toElementIndex"],
      ["drag", { app: "a", fromElementIndex: 1, toElementIndex: 2, fromX: 1, fromY: 1, toX: 2, toY: 2 }, "drag: give either a path or both fromElementIndex and toElementIndex"],
      ["drag", { app: "a", fromElementIndex: 1, toElementIndex: 2, path: [{ x: 1, y: 1 }, { x: 2, y: 2 }] }, "drag: give either a path or both fromElementIndex and toElementIndex"],
      ["drag", { app: "a", fromElementIndex: 3, toElementIndex: 3 }, "drag: fromElementIndex and toElementIndex must name two elements"],
      ["click", { app: "a", x: 1 }, "click: a point needs both x and y"],
      ["scroll", { app: "a", elementIndex: 1, direction: "up" }, "scroll: elementIndex scrolls into view; drop direction and x/y"],
      ["select-text", { app: "a", elementIndex: 1, start: 3, end: 1 }, "select-text: end must not be before start"],
      ["hotkey", { app: "a", keys: ["ctrl+"] }, 'hotkey: key combination "ctrl+" ends with "+": write the plus key as "ctrl++" or "ctrl+plus"'],
      ["wait", { app: "a", ms: 1 }, "wait is not an action"],
    ];
    for (const [command, args, message] of cases) {
      const e = thrown(() => compileCommand(command, args));
      expect(e.code).toBe("INVALID_ARGUMENTS");
      expect(e.message).toBe(message);
      expect(e.details.step).toBeUndefined();
    }
    expect(thrown(() => compileCommand("press-key", { app: "a", key: "ctrl+" })).details).toEqual({ field: "key" });
  });

  it("every secret field takes any string, so the value read from stdin needs no second check", () => {
    for (const c of ACTION_COMMANDS) {
      const field = declOf(c).secret;
      if (!field) continue;
      const p = compileCommand(c, { app: "a", elementIndex: 1, [`${field}Stdin`]: true });
      for (const v of ["", " ", "ctrl+", "\n\u0000\u{1F600}", "x".repeat(10_000)]) expect(() => parseProgram(withStdin(p, v))).not.toThrow();
      expect(stepSecret(withStdin(p, "abc").steps[0]!)).toBe("abc");
    }
  });
});

describe("parseProgram: the one shape check", () => {
  it("names the step, keeps the field of a key error, and makes key lists canonical", () => {
    const e = thrown(() => parseProgram({ app: "a", steps: [{ action: "wait", ms: 1 }, { action: "move", x: 1, y: 1, modifiers: ["ctrl+"] }] }));
    expect(e.message).toMatch(/^step 1 \(move\): key combination/);
    expect(e.details).toEqual({ field: "modifiers", step: 1 });
    const p = parseProgram({ app: "a", steps: [{ action: "hotkey", keys: ["CTRL", "+"] }, { action: "click", x: 1, y: 2, modifiers: ["Shift"] }] });
    expect(p.steps).toEqual([
      { action: "hotkey", keys: ["ctrl", "plus"] },
      { action: "click", x: 1, y: 2, modifiers: ["shift"] },
    ]);
  });

  it("the program's own rule and zod's issues keep their wording", () => {
    const both = thrown(() => parseProgram({ app: "a", windowId: 1, windowIndex: 0, steps: [{ action: "wait", ms: 1 }] }));
    expect(both.message).toBe("program: windowId and windowIndex both name a window; give one");
    expect(both.details).toEqual({ path: "windowIndex", field: "windowIndex" });
    const bad = thrown(() => parseProgram({ app: "a", steps: [{ action: "drag", path: [{ x: 1, y: 1 }] }] }));
    expect(bad.message).toMatch(/^program steps\.0\.path: /);
    expect(bad.details).toEqual({ path: "steps.0.path" });
  });

  it("an element drag step: exactly one of a path or both element indices, two different elements", () => {
    const ok = parseProgram({ app: "a", steps: [{ action: "wait", ms: 1 }, { action: "drag", fromElementIndex: 2, toElementIndex: 5 }] });
    expect(ok.steps[1]).toEqual({ action: "drag", fromElementIndex: 2, toElementIndex: 5 });
    expect(stepElementIndices(ok.steps[1]!)).toEqual([2, 5]);
    expect(stepElementIndices({ action: "click", elementIndex: 7 } as never)).toEqual([7]);
    expect(stepElementIndices({ action: "drag", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }] } as never)).toEqual([]);
    const cases: [Record<string, unknown>, string][] = [
      [{ action: "drag", fromElementIndex: 2 }, "step 0 (drag): an element drag needs both fromElementIndex and toElementIndex"],
      [{ action: "drag" }, "step 0 (drag): give either a path or both fromElementIndex and toElementIndex"],
      [{ action: "drag", fromElementIndex: 2, toElementIndex: 3, path: [{ x: 1, y: 1 }, { x: 2, y: 2 }] }, "step 0 (drag): give either a path or both fromElementIndex and toElementIndex"],
      [{ action: "drag", fromElementIndex: 2, toElementIndex: 2 }, "step 0 (drag): fromElementIndex and toElementIndex must name two elements"],
    ];
    for (const [step, message] of cases) {
      const e = thrown(() => parseProgram({ app: "a", steps: [step] }));
      expect(e.code).toBe("INVALID_ARGUMENTS");
      expect(e.message).toBe(message);
      expect(e.details).toEqual({ step: 0 });
    }
    // An index must be a snapshot index: a whole number, not negative.
    expect(thrown(() => parseProgram({ app: "a", steps: [{ action: "drag", fromElementIndex: -1, toElementIndex: 2 }] })).message).toMatch(/^program steps\.0\.fromElementIndex: /);
  });
});

describe("publicError: the one conversion to the public shape", () => {
  it("keeps a DeckhandError's fields, flattens details, redacts anything else to INTERNAL", () => {
    const err = new DeckhandError("POLICY_DENIED", "no", { remediation: "ask", details: { a: 1, nested: { x: 1 } as never } });
    expect(publicError(err)).toEqual({ code: "POLICY_DENIED", message: "no", remediation: "ask", details: { a: 1 } });
    const logged: string[] = [];
    expect(publicError(new Error("secret text"), (m) => logged.push(m))).toMatchObject({ code: "INTERNAL", message: "an unexpected error occurred" });
    expect(logged.join("")).toContain("secret text");
    expect(toDeckhandError(err)).toBe(err);
  });
});
