// issue 13 (lifecycle): --restore-window on every action command and
// restoreWindow on a program; compiled into the one-step program.
import { describe, expect, it } from "vitest";
import { ACTION_COMMANDS } from "../../../src/protocol/actions.ts";
import { ARGS } from "../../../src/protocol/commands.ts";
import { parseProgram } from "../../../src/protocol/program.ts";
import { compileCommand } from "../../../src/program/compile.ts";

describe("restoreWindow", () => {
  it("is the last flag of every action command, a boolean", () => {
    for (const c of ACTION_COMMANDS) {
      const keys = Object.keys(ARGS[c].shape);
      expect(keys.at(-1), c).toBe("restoreWindow");
      expect(ARGS[c].safeParse({ app: "a", restoreWindow: "yes" }).success).toBe(false);
    }
  });

  it("reaches the compiled program, and a program takes it", () => {
    expect(compileCommand("hotkey", { app: "a", keys: ["ctrl+s"], restoreWindow: true })).toMatchObject({ app: "a", restoreWindow: true });
    expect(compileCommand("hotkey", { app: "a", keys: ["ctrl+s"] })).not.toHaveProperty("restoreWindow");
    expect(parseProgram({ app: "a", restoreWindow: true, steps: [{ action: "wait", ms: 1 }] }).restoreWindow).toBe(true);
    expect(() => parseProgram({ app: "a", restoreWindow: 1, steps: [{ action: "wait", ms: 1 }] })).toThrow();
  });
});
