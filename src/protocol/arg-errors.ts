// Argument errors in words an agent or a person can act on: which flag or
// field, and what it must be; never zod's own phrasing, never the value
// received (it may be a secret). Shared by the CLI (flag names) and serve /
// MCP (field names).
import type { z } from "zod";
import { DeckhandError } from "./errors.ts";

/** A field's CLI spelling: fooBar -> foo-bar (its flag is --foo-bar). */
export const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase());

/** A field's flag: elementIndex -> --element-index. */
export const flagOf = (field: string) => `--${kebab(field)}`;

type Issue = z.core.$ZodIssue;

const EXPECTED: Record<string, string> = {
  int: "an integer",
  number: "a number",
  string: "a string",
  boolean: "true or false",
  array: "a list",
  object: "an object",
};

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let v = input;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<PropertyKey, unknown>)[k];
  }
  return v;
}

function bound(issue: Issue & { origin?: string }, word: "at most" | "at least", n: number | bigint): string {
  switch (issue.origin) {
    case "array":
      return `must have ${word} ${n} item${n === 1 ? "" : "s"}`;
    case "string":
      return n === 1 && word === "at least" ? "must not be empty" : `must have ${word} ${n} characters`;
    default:
      return `must be ${word} ${n}`;
  }
}

/** "<name> <what is wrong>" for one issue. `name` renders a path (a field or a flag). */
export function describeIssue(issue: Issue, input: unknown, name: (path: readonly PropertyKey[]) => string): string {
  const who = name(issue.path);
  switch (issue.code) {
    case "invalid_type": {
      if (valueAt(input, issue.path) === undefined) return `${who} is required`;
      return `${who} must be ${EXPECTED[issue.expected] ?? issue.expected}`;
    }
    case "too_big":
      return `${who} ${bound(issue, "at most", issue.maximum)}`;
    case "too_small":
      return `${who} ${bound(issue, "at least", issue.minimum)}`;
    case "invalid_value":
      return `${who} must be one of ${issue.values.map((v) => String(v)).join(", ")}`;
    case "unrecognized_keys": {
      const keys = issue.keys.map((k) => name([...issue.path, k]));
      return `unknown ${keys.length === 1 ? "field" : "fields"} ${keys.join(", ")}`;
    }
    case "invalid_format":
      // Our schemas give their own message for formats ("must look like cs_...").
      return `${who} ${/^Invalid/.test(issue.message) ? `is not a valid ${issue.format}` : issue.message}`;
    default:
      return `${who}: ${issue.message}`;
  }
}

/** The first issue of a failed parse as INVALID_ARGUMENTS; details name the field (and flag, for the CLI). */
export function argumentsError(
  error: z.ZodError,
  input: unknown,
  opts: { name?: (path: readonly PropertyKey[]) => string; flag?: (field: string) => string } = {},
): DeckhandError {
  const issue = error.issues[0]!;
  const path = issue.code === "unrecognized_keys" ? [...issue.path, issue.keys[0]!] : issue.path;
  const field = path.map(String).join(".");
  const name = opts.name ?? ((p: readonly PropertyKey[]) => p.map(String).join(".") || "(root)");
  const details: Record<string, string> = { field };
  if (opts.flag && path.length) details.flag = opts.flag(String(path[0]));
  return new DeckhandError("INVALID_ARGUMENTS", describeIssue(issue, input, name), { details });
}
