// issue 13 (lifecycle): `deckhand launch --app X -- ARGS...`: everything
// after `--` is the app's argument list, verbatim (flags included).
import { describe, expect, it } from "vitest";
import { ARGS } from "../../../src/protocol/commands.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { parseFlags, validateFlags } from "../../../src/cli/flags.ts";
import { thrown } from "../throws.ts";

describe("-- passthrough", () => {
  it("launch: the rest after -- is args, verbatim, after any --args flags", () => {
    const { args, operator } = parseFlags(ARGS.launch, ["--app", "mousepad", "--json", "--", "--new-window", "a b", "--json", "--", "-x"]);
    expect(args).toEqual({ app: "mousepad", args: ["--new-window", "a b", "--json", "--", "-x"] });
    expect(operator.json).toBe(true);
    expect(parseFlags(ARGS.launch, ["--app", "m", "--args", "first", "--"]).args).toEqual({ app: "m", args: ["first"] });
    expect(parseFlags(ARGS.launch, ["--args", "1", "--", "2"]).args.args).toEqual(["1", "2"]);
    validateFlags(ARGS.launch, { app: "m", args: ["x"], timeoutMs: 120_000 });
    expect(() => validateFlags(ARGS.launch, { app: "m", timeoutMs: 120_001 })).toThrow(DeckhandError);
  });

  it("a command without an argument list refuses --", () => {
    const e = thrown(() => parseFlags(ARGS.click, ["--app", "x", "--", "y"]));
    expect(e.code).toBe("INVALID_ARGUMENTS");
    expect(e.details.flag).toBe("--");
  });
});
