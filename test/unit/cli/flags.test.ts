// argv -> args, derived from the zod schemas of the public contract.
import { describe, expect, it } from "vitest";
import { ARGS, COMMANDS } from "../../../src/protocol/commands.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { flagSpecs, helpText, kebab, parseFlags, validateFlags } from "../../../src/cli/flags.ts";
import { thrown } from "../throws.ts";

const badFlag = (fn: () => unknown) => thrown(fn);

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

describe("validateFlags: the parsed flags against the schema, in flag terms", () => {
  const check = (command: keyof typeof ARGS, argv: string[]) => badFlag(() => validateFlags(ARGS[command], parseFlags(ARGS[command], argv).args));

  it("a missing required flag names the flag, not a zod message", () => {
    const e = check("click", ["--element-index", "1"]);
    expect(e.message).toBe("--app is required");
    expect(e.details).toMatchObject({ flag: "--app", field: "app" });
    expect(check("select-text", ["--app", "a", "--element-index", "1", "--start", "0"]).message).toBe("--end is required");
    expect(check("hotkey", ["--app", "a"]).message).toBe("--keys is required");
  });

  it("other schema violations name the flag and the bound, never zod's words", () => {
    const messages = [
      check("click", ["--app", "a", "--x", "1", "--y", "1", "--count", "5"]).message,
      check("click", ["--app", "a", "--element-index", "-3"]).message,
      check("click", ["--app", "a", "--x", "1", "--y", "1", "--button", "thumb"]).message,
      check("click", ["--app", "", "--element-index", "1"]).message,
      check("click", ["--app", "a", "--snapshot-id", "nope", "--element-index", "1"]).message,
    ];
    expect(messages).toEqual([
      "--count must be at most 3",
      "--element-index must be at least 0",
      "--button must be one of left, right, middle, back, forward",
      "--app must not be empty",
      "--snapshot-id must look like cs_ followed by 10-40 letters or digits",
    ]);
    for (const m of messages) expect(m).not.toMatch(/Invalid input|Too (big|small)|expected/);
  });

  it("--window-id together with --window-index is INVALID_ARGUMENTS", () => {
    for (const command of ["get-app-state", "screenshot", "click", "type-text", "scroll", "set-value"] as const) {
      const e = check(command, ["--app", "a", "--window-id", "7", "--window-index", "0"]);
      expect(e.message).toBe("--window-id and --window-index both name a window; give one");
      expect(e.details.flag).toBe("--window-index");
    }
  });

  it("valid flags pass", () => {
    validateFlags(ARGS.click, parseFlags(ARGS.click, ["--app", "a", "--window-index", "1", "--element-index", "2"]).args);
    validateFlags(ARGS["list-apps"], {});
  });
});
