// argv -> command args, derived from the zod schemas: a field fooBar is the
// flag --foo-bar; booleans take no value; arrays repeat; objects are JSON.
import { z } from "zod";
import { DeckhandError } from "../protocol/errors.ts";
import { argumentsError, flagOf, kebab } from "../protocol/arg-errors.ts";
import { exclusiveConflict } from "../protocol/commands.ts";

export type FlagKind = "string" | "number" | "boolean" | "enum" | "string[]" | "json";

export interface FlagSpec {
  field: string;
  flag: string;
  kind: FlagKind;
  required: boolean;
  description: string;
  choices?: string[];
}

export { kebab };

type AnyDef = { type: string; innerType?: z.ZodType; element?: z.ZodType; entries?: Record<string, string> };

function describe(schema: z.ZodType): string {
  return (schema as unknown as { description?: string }).description ?? "";
}

function specOf(field: string, schema: z.ZodType): FlagSpec {
  let s = schema;
  let required = true;
  let description = describe(s);
  for (;;) {
    const def = (s as unknown as { _zod: { def: AnyDef } })._zod.def;
    if (def.type === "optional" || def.type === "default") {
      required = false;
      s = def.innerType!;
      description ||= describe(s);
      continue;
    }
    const base = { field, flag: flagOf(field), required, description };
    switch (def.type) {
      case "string":
        return { ...base, kind: "string" };
      case "number":
        return { ...base, kind: "number" };
      case "boolean":
        return { ...base, kind: "boolean" };
      case "enum":
        return { ...base, kind: "enum", choices: Object.values(def.entries ?? {}) };
      case "array": {
        const el = (def.element as unknown as { _zod: { def: AnyDef } })._zod.def;
        return { ...base, kind: el.type === "string" ? "string[]" : "json" };
      }
      default:
        return { ...base, kind: "json" };
    }
  }
}

export function flagSpecs(schema: z.ZodObject): FlagSpec[] {
  return Object.entries(schema.shape).map(([field, s]) => specOf(field, s as z.ZodType));
}

/** Operator flags: accepted by every command, never part of a request's args. */
export interface OperatorFlags {
  json: boolean;
  help: boolean;
  helper?: string;
  allowForeground: boolean;
  confirmCmd?: string;
  policy?: string;
  /** --trace DIR (issue 16): record the command's program in DIR. */
  trace?: string;
}

const OPERATOR_VALUE_FLAGS = new Set(["--helper", "--confirm-cmd", "--policy", "--trace"]);

function bad(message: string, flag?: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message, { details: flag ? { flag } : {} });
}

export function parseFlags(schema: z.ZodObject, argv: string[]): { args: Record<string, unknown>; operator: OperatorFlags } {
  const specs = new Map(flagSpecs(schema).map((s) => [s.flag, s]));
  const operator: OperatorFlags = { json: false, help: false, allowForeground: false };
  const args: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    // issue 13 (lifecycle): `--` ends the flags; the rest is the command's own argument list (launch's `args`), verbatim.
    if (token === "--") {
      const rest = specs.get("--args");
      if (!rest || rest.kind !== "string[]") throw bad("this command takes no arguments after --", "--");
      args[rest.field] = [...((args[rest.field] as string[] | undefined) ?? []), ...argv.slice(i + 1)];
      break;
    }
    if (!token.startsWith("--")) throw bad(`unexpected argument ${JSON.stringify(token.slice(0, 40))}`);
    const eq = token.indexOf("=");
    const name = eq > 0 ? token.slice(0, eq) : token;
    const inline = eq > 0 ? token.slice(eq + 1) : undefined;
    const takeValue = (): string => {
      if (inline !== undefined) return inline;
      const v = argv[i + 1];
      if (v === undefined) throw bad(`${name} needs a value`, name);
      i++;
      return v;
    };
    if (name === "--json") { operator.json = true; continue; }
    if (name === "--help" || name === "-h") { operator.help = true; continue; }
    if (name === "--allow-foreground") { operator.allowForeground = true; continue; }
    if (OPERATOR_VALUE_FLAGS.has(name)) {
      const v = takeValue();
      if (name === "--helper") operator.helper = v;
      else if (name === "--confirm-cmd") operator.confirmCmd = v;
      else if (name === "--trace") operator.trace = v;
      else operator.policy = v;
      continue;
    }
    const spec = specs.get(name);
    if (!spec) throw bad(`unknown flag ${name}`, name);
    switch (spec.kind) {
      case "boolean":
        if (inline !== undefined && inline !== "true" && inline !== "false") throw bad(`${name} takes no value`, name);
        args[spec.field] = inline !== "false";
        break;
      case "number": {
        const raw = takeValue();
        if (!/^-?\d+$/.test(raw)) throw bad(`${name} must be an integer`, name);
        args[spec.field] = Number(raw);
        break;
      }
      case "string":
      case "enum":
        if (args[spec.field] !== undefined) throw bad(`${name} given twice`, name);
        args[spec.field] = takeValue();
        break;
      case "string[]": {
        const list = (args[spec.field] as string[] | undefined) ?? [];
        list.push(takeValue());
        args[spec.field] = list;
        break;
      }
      case "json": {
        const raw = takeValue();
        try {
          args[spec.field] = JSON.parse(raw);
        } catch {
          throw bad(`${name} must be JSON`, name);
        }
        break;
      }
    }
  }
  return { args, operator };
}

/** A path in flag terms: ["path", 1, "x"] -> "--path[1].x". */
function flagName(path: readonly PropertyKey[]): string {
  const [first, ...rest] = path;
  if (first === undefined) return "(flags)";
  return `--${kebab(String(first))}` + rest.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("");
}

/**
 * The parsed flags against the command's schema, in flag terms: "--app is
 * required", "--count must be at most 3", "--window-id and --window-index
 * both name a window; give one". serve and MCP get the same checks in field
 * terms from validateArgs.
 */
export function validateFlags(schema: z.ZodObject, args: Record<string, unknown>): void {
  const conflict = exclusiveConflict(args);
  if (conflict) {
    const [a, b] = conflict.map(flagOf);
    throw new DeckhandError("INVALID_ARGUMENTS", `${a} and ${b} both name a window; give one`, { details: { flag: b!, field: conflict[1] } });
  }
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw argumentsError(parsed.error, args, { name: flagName, flag: flagOf });
}

export function helpText(command: string, summary: string, schema: z.ZodObject): string {
  const lines = [`deckhand ${command} — ${summary}`, "", "Flags:"];
  for (const s of flagSpecs(schema)) {
    const value = s.kind === "boolean" ? "" : s.kind === "enum" ? ` <${s.choices!.join("|")}>` : s.kind === "number" ? " <n>" : s.kind === "json" ? " <json>" : " <text>";
    const rep = s.kind === "string[]" ? " (repeatable)" : "";
    lines.push(`  ${(s.flag + value).padEnd(34)} ${s.required ? "(required) " : ""}${s.description}${rep}`);
  }
  lines.push(
    "",
    "Operator flags (any command):",
    "  --json                             print the JSON envelope",
    "  --helper <path>                    platform helper binary",
    "  --allow-foreground                 grant real pointer/keyboard input",
    "  --confirm-cmd <argv>               hook run for sensitive actions (no shell)",
    "  --policy <path>                    user policy file",
    "  --trace <dir>                      record the program (run, actions) in a trace dir (deckhand trace show)",
  );
  return lines.join("\n");
}
