// argv -> args, derived from the zod schemas of the public contract.
import { describe, expect, it } from "vitest";
import { ARGS, COMMANDS } from "../../../src/protocol/commands.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { flagSpecs, helpText, kebab, parseFlags } from "../../../src/cli/flags.ts";

function badFlag(fn: () => unknown): DeckhandError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DeckhandError);
    expect((err as DeckhandError).code).toBe("INVALID_ARGUMENTS");
    return err as DeckhandError;
  }
  throw new Error("expected INVALID_ARGUMENTS");
}

describe("parseFlags", () => {
  it("maps kebab flags to camelCase fields with their types", () => {
    const { args, operator } = parseFlags(ARGS.click, ["--app", "gedit", "--element-index", "4", "--state", "--json"]);
    expect(args).toEqual({ app: "gedit", elementIndex: 4, state: true });
    expect(operator).toMatchObject({ json: true, allowForeground: false, help: false });
  });

  it("inline values, negative numbers, repeated arrays and JSON values", () => {
    expect(parseFlags(ARGS.click, ["--x=-5", "--y", "-7", "--modifiers", "ctrl", "--modifiers", "shift"]).args).toEqual({ x: -5, y: -7, modifiers: ["ctrl", "shift"] });
    expect(parseFlags(ARGS.drag, ["--app", "a", "--path", '[{"x":1,"y":2},{"x":3,"y":4}]']).args.path).toEqual([{ x: 1, y: 2 }, { x: 3, y: 4 }]);
    expect(parseFlags(ARGS.click, ["--state=false"]).args.state).toBe(false);
  });

  it("operator flags never become args", () => {
    const { args, operator } = parseFlags(ARGS["list-apps"], ["--helper", "/h", "--allow-foreground", "--confirm-cmd", "c", "--policy", "p"]);
    expect(args).toEqual({});
    expect(operator).toMatchObject({ helper: "/h", allowForeground: true, confirmCmd: "c", policy: "p" });
  });

  it("unknown flag -> INVALID_ARGUMENTS naming it", () => {
    expect(badFlag(() => parseFlags(ARGS.click, ["--bogus"])).details.flag).toBe("--bogus");
  });

  it("positional argument, missing value, non-integer, boolean with a value, a string twice, bad JSON", () => {
    badFlag(() => parseFlags(ARGS.click, ["gedit"]));
    expect(badFlag(() => parseFlags(ARGS.click, ["--app"])).details.flag).toBe("--app");
    badFlag(() => parseFlags(ARGS.click, ["--element-index", "1.5"]));
    badFlag(() => parseFlags(ARGS.click, ["--element-index", "0x10"]));
    badFlag(() => parseFlags(ARGS.click, ["--state=yes"]));
    badFlag(() => parseFlags(ARGS.click, ["--app", "a", "--app", "b"]));
    badFlag(() => parseFlags(ARGS.drag, ["--path", "[{"]));
  });

  it("the message never echoes a long positional value", () => {
    const secret = "x".repeat(100);
    expect(badFlag(() => parseFlags(ARGS["set-value"], [secret])).message.length).toBeLessThan(80);
  });

  it("every command's schema yields a flag for every field, and help lists them", () => {
    for (const c of COMMANDS) {
      const specs = flagSpecs(ARGS[c]);
      expect(specs.map((s) => s.field).sort()).toEqual(Object.keys(ARGS[c].shape).sort());
      const text = helpText(c, "summary", ARGS[c]);
      for (const s of specs) expect(text).toContain(s.flag);
    }
    expect(kebab("elementIndex")).toBe("element-index");
    expect(flagSpecs(ARGS.click).find((s) => s.field === "button")).toMatchObject({ kind: "enum", choices: ["left", "right", "middle", "back", "forward"] });
  });
});
