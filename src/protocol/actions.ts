// Every action, declared once (docs/adding-an-action.md). An entry gives
// the program step's fields and rules, and, for an action that is also a
// command, that command's conveniences. Derived from this one table:
//
// - the program's Step schema and its one shape check (src/protocol/program.ts),
// - each action command's arguments in ARGS (src/protocol/commands.ts): the
//   step's fields plus the target fields and `state`, and so its CLI flags,
//   --help, serve and MCP arguments and the docs/cli.md tables,
// - the one function from a command's arguments to its step (commandStep
//   below; src/program/compile.ts makes it a one-step program),
// - the command's summary, its result schema and its handler.
//
// How a step runs (the helper requests it makes, the capabilities it needs)
// is src/program/plan.ts.
import { z } from "zod";
import { DeckhandError } from "./errors.ts";
import { flagOf } from "./arg-errors.ts";
import { lazyTable, once } from "../lazy-table.ts";

const uint = z.number().int().nonnegative();
const int = z.number().int();

// ---------------------------------------------------------------- shared fields

/** App selector: executable path or basename, desktop id, exact name, or pid:N. */
export const app = z.string().min(1).describe("target app: executable, desktop id, exact name, or pid:N");
export const snapshotId = z
  .string()
  .regex(/^cs_[A-Za-z0-9]{10,40}$/, "must look like cs_ followed by 10-40 letters or digits")
  .describe("snapshot to act on (default: the app's latest)");
export const windowId = uint.describe("X11 window id (or the platform's window id)");
export const windowIndex = uint.describe("index into list-windows' result for the app");
export const elementIndex = uint.describe("element index from snapshot.elements[].index");
export const state = z.boolean().describe("return a fresh observation after the action");
// issue 13 (lifecycle): --restore-window on every action command, restoreWindow on a program.
export const restoreWindow = z.boolean().describe("un-minimize the target window first (when it is minimized)");

export const Button = z.enum(["left", "right", "middle", "back", "forward"]);
export const Point = z.strictObject({ x: int, y: int });
/**
 * Most points in one drag path (command, program step, adapters): a drag
 * holds a button down for its whole path, so its length is bounded and
 * refused at validation, before anything is resolved or sent.
 */
export const MAX_DRAG_POINTS = 1000;
// ---- issue 13: clipboard
/** Which selection: the clipboard (copy / paste), or the primary selection (the last text selected). */
export const ClipboardSelection = z.enum(["clipboard", "primary"]);
/** Most bytes `clipboard get` returns in one answer (--max-bytes). */
export const MAX_CLIPBOARD_READ_BYTES = 8 * 1024 * 1024;
/** The chords a paste step may send: the paste shortcuts of the toolkits, and nothing else (no other key goes out this way). */
export const PASTE_CHORDS = ["ctrl+v", "shift+Insert", "ctrl+shift+v"] as const;
// ---- end clipboard

// ---------------------------------------------------------------- the declaration

type Shape = Record<string, z.ZodType>;
type FieldOf<S extends Shape> = keyof S & string;

/**
 * How a field holding key names is read, by the one chord parser
 * (src/protocol/keys.ts): `keys` a list of chord fragments (stored as
 * canonical key names), `chord` one combination, `key` exactly one key.
 */
export type KeyFieldKind = "keys" | "chord" | "key";

/** The conveniences of the command of the same name as an action. */
export interface CommandDecl<S extends Shape> {
  /** Step fields the command does not take (a program's only). */
  omit?: FieldOf<S>[];
  /** A step field the command names otherwise: {name: "action"} is --action for the step's `name`. */
  rename?: Partial<Record<FieldOf<S>, string>>;
  /**
   * Another spelling of a step field: fields of their own (all or none,
   * and exactly one of the two spellings), and how they build its value.
   */
  alias?: { field: FieldOf<S>; fields: Shape; build: (args: Record<string, unknown>) => unknown };
}

export interface ActionDecl<S extends Shape, C extends CommandDecl<S> | undefined> {
  /** One line: the step kind's in docs/cli.md, and its command's in `deckhand --help` and --help. */
  summary: string;
  /** The step's fields besides `action`: one schema for the program step and the command's arguments. */
  step: S;
  /**
   * Rules across fields, checked once the fields are valid: the message of
   * the first one broken ("a point needs both x and y"), else null.
   */
  rules?: (step: z.output<z.ZodObject<S>>) => string | null;
  /** Fields holding key names, checked (and `keys` made canonical) by the one chord parser. */
  keys?: Partial<Record<FieldOf<S>, KeyFieldKind>>;
  /**
   * A field that may carry a secret (a value, typed text): never echoed in
   * an error, and its command may read it from stdin instead, with the
   * boolean flag --<field>-stdin (absent in serve and MCP, which have no stdin).
   * Its schema must take any string: the value read is put in after the check.
   */
  secret?: FieldOf<S>;
  /**
   * Fields other than `elementIndex` that name a snapshot element (drag's
   * fromElementIndex / toElementIndex): a step giving one acts on the
   * snapshot, and its command takes --snapshot-id.
   */
  elementFields?: FieldOf<S>[];
  /** The single command of the same name, if the action is one (`{}`: one without conveniences). */
  command: C;
}

/** One entry of the table: its types kept, so Step and ARGS are typed from it. */
function action<S extends Shape, C extends CommandDecl<S> | undefined = undefined>(d: {
  summary: string;
  /** Built on first read (src/lazy-table.ts): a command's run reads one action's fields, not all. */
  step: () => S;
  rules?: (step: z.output<z.ZodObject<S>>) => string | null;
  keys?: Partial<Record<FieldOf<S>, KeyFieldKind>>;
  secret?: FieldOf<S>;
  elementFields?: FieldOf<S>[];
  command?: C;
}): ActionDecl<S, C> {
  const step = once(d.step);
  const decl = { ...d, command: d.command as C } as Omit<typeof d, "step"> & { command: C };
  return Object.defineProperty(decl, "step", { enumerable: true, get: step }) as unknown as ActionDecl<S, C>;
}

const modifiers = (what: string) => z.array(z.string()).optional().describe(what);

/** The actions, in the order of the inventory (ACTIONS, capabilities, docs). */
export const ACTION_DECLS = {
  click: action({
    summary: "Press an element (its default action) or click at a screen point.",
    step: () => ({
      elementIndex: elementIndex.optional(),
      x: int.optional().describe("screen x (coordinate click; needs the foreground grant unless it hits an element)"),
      y: int.optional().describe("screen y"),
      button: Button.optional().describe("mouse button for a coordinate click (default left)"),
      count: z.number().int().min(1).max(3).optional().describe("1 single, 2 double, 3 triple click"),
      modifiers: modifiers("keys held during a coordinate click (ctrl, shift, alt, super)"),
    }),
    rules: (s) => {
      const point = s.x !== undefined || s.y !== undefined;
      if (point && (s.x === undefined || s.y === undefined)) return "a point needs both x and y";
      if (point === (s.elementIndex !== undefined)) return "give either elementIndex or x and y";
      if (s.elementIndex !== undefined && (s.button || s.count || s.modifiers)) return "button, count and modifiers apply to point clicks only";
      return null;
    },
    keys: { modifiers: "keys" },
    command: {},
  }),
  "set-value": action({
    summary: "Set an element's text or numeric value and read it back.",
    step: () => ({ elementIndex, value: z.string().describe("new value") }),
    secret: "value",
    command: {},
  }),
  "type-text": action({
    summary: "Type text into an element at its caret, or into the focused control.",
    step: () => ({ elementIndex: elementIndex.optional(), text: z.string().describe("text to type") }),
    secret: "text",
    command: {},
  }),
  "press-key": action({
    summary: "Press a key (optionally repeated) on an element or the focused control.",
    step: () => ({
      elementIndex: elementIndex.optional(),
      key: z.string().min(1).describe("xdotool-style key name: Return, BackSpace, Page_Up, F5, a, ..."),
      repeat: z.number().int().min(1).max(100).optional(),
    }),
    keys: { key: "chord" },
    command: {},
  }),
  hotkey: action({
    summary: "Press a key combination such as ctrl+s.",
    step: () => ({ keys: z.array(z.string().min(1)).min(1).describe("combo, repeatable or +-joined: ctrl+shift+t") }),
    keys: { keys: "keys" },
    command: {},
  }),
  scroll: action({
    summary: "Scroll an element into view or by an amount.",
    step: () => ({
      elementIndex: elementIndex.optional(),
      direction: z
        .enum(["up", "down", "left", "right"])
        .optional()
        .describe("wheel direction (foreground input); omit with --element-index to scroll that element into view"),
      amount: z.number().int().min(1).max(100).optional().describe("notches (default 3)"),
      x: int.optional(),
      y: int.optional(),
      modifiers: modifiers("keys held while the wheel turns (ctrl, shift, alt, super): pressed and released in the same input"),
    }),
    rules: (s) => {
      if ((s.x === undefined) !== (s.y === undefined)) return "give both x and y or neither";
      if (s.elementIndex === undefined && s.direction === undefined) return "give a direction, or an elementIndex to scroll into view";
      if (s.elementIndex !== undefined && (s.direction !== undefined || s.x !== undefined)) return "elementIndex scrolls into view; drop direction and x/y";
      if (s.elementIndex !== undefined && s.modifiers?.length) return "modifiers apply to wheel scrolls only, not to scrolling an element into view";
      return null;
    },
    keys: { modifiers: "keys" },
    command: { omit: ["modifiers"] },
  }),
  drag: action({
    summary: "Drag along a path of screen points, or from one element onto another (the centres of their live bounds).",
    step: () => ({
      path: z.array(Point).min(2).max(MAX_DRAG_POINTS).optional().describe('screen points, JSON: [{"x":1,"y":2},...] (2 to 1000)'),
      fromElementIndex: elementIndex.optional().describe("element to drag from: the centre of its live bounds (with toElementIndex, instead of a path)"),
      toElementIndex: elementIndex.optional().describe("element to drop on: the centre of its live bounds; the drop is verified from its tree"),
      button: Button.optional(),
      modifiers: modifiers("keys held for the whole drag: pressed and released in the same input"),
    }),
    // Exactly one way to say where: a path, or both elements.
    rules: (s) => {
      const from = s.fromElementIndex !== undefined;
      const to = s.toElementIndex !== undefined;
      if (from !== to) return "an element drag needs both fromElementIndex and toElementIndex";
      if (from === (s.path !== undefined)) return "give either a path or both fromElementIndex and toElementIndex";
      if (from && s.fromElementIndex === s.toElementIndex) return "fromElementIndex and toElementIndex must name two elements";
      return null;
    },
    keys: { modifiers: "keys" },
    elementFields: ["fromElementIndex", "toElementIndex"],
    command: {
      omit: ["modifiers"],
      alias: {
        field: "path",
        fields: { fromX: int, fromY: int, toX: int, toY: int },
        build: (a: Record<string, unknown>) => [
          { x: a.fromX, y: a.fromY },
          { x: a.toX, y: a.toY },
        ],
      },
    },
  }),
  "select-text": action({
    summary: "Select a character range in a text element.",
    step: () => ({ elementIndex, start: uint.describe("first character offset"), end: uint.describe("offset after the last character") }),
    rules: (s) => (s.end < s.start ? "end must not be before start" : null),
    command: {},
  }),
  focus: action({
    summary: "Give an element keyboard focus.",
    step: () => ({ elementIndex }),
    command: {},
  }),
  "perform-secondary-action": action({
    summary: "Run any action an element advertises, by name.",
    step: () => ({ elementIndex, name: z.string().min(1).describe("an action name the element advertises") }),
    command: { rename: { name: "action" } },
  }),
  wait: action({
    summary: "Wait ms milliseconds (at most 10 s) before the next step.",
    step: () => ({ ms: z.number().int().min(0).max(10_000) }),
  }),
  // The one pointer step whose pointer is not put back.
  move: action({
    summary: "Move the pointer to a screen point and leave it there (hover).",
    step: () => ({ x: int, y: int, modifiers: modifiers("keys held during the move: pressed and released in the same input") }),
    keys: { modifiers: "keys" },
  }),
  "hold-key": action({
    summary: "Press one key, hold it ms milliseconds, release it (one input: the release is guaranteed).",
    step: () => ({ key: z.string().min(1), ms: z.number().int().min(1).max(10_000) }),
    keys: { key: "key" },
  }),
  // ---- issue 13: clipboard
  paste: action({
    summary: "Paste text through the clipboard into an element or the focused control: set it, send ctrl+v, restore the previous clipboard.",
    step: () => ({
      elementIndex: elementIndex.optional(),
      text: z.string().describe("text to paste"),
      selection: ClipboardSelection.optional().describe("the selection the text goes through: clipboard (default) or primary"),
      restore: z.boolean().optional().describe("put the previous clipboard back afterwards (default true; --restore=false leaves the pasted text on it)"),
      chord: z.enum(PASTE_CHORDS).optional().describe("the paste shortcut to send (default ctrl+v)"),
    }),
    secret: "text",
    command: {},
  }),
  // ---- end clipboard
};

type Decls = typeof ACTION_DECLS;
export type ActionName = keyof Decls;
/** The zod shape of an action's step fields (without `action`). */
export type StepShape<A extends ActionName> = Decls[A] extends ActionDecl<infer S, infer _C> ? S : never;
/** The actions that are also commands (a one-step program each). */
export type ActionCommandName = { [A in ActionName]: Decls[A]["command"] extends undefined ? never : A }[ActionName];

/** Frozen inventory of actions a program step (and a single command) can be. */
export const ACTIONS = Object.freeze(Object.keys(ACTION_DECLS) as ActionName[]);
/** The action commands, in inventory order. */
export const ACTION_COMMANDS = Object.freeze(ACTIONS.filter((a) => ACTION_DECLS[a].command !== undefined) as ActionCommandName[]);

export function isActionCommand(name: string): name is ActionCommandName {
  return (ACTION_COMMANDS as readonly string[]).includes(name);
}

/** Loosely typed view of an entry, for the generic code below and in program.ts. */
export type AnyActionDecl = {
  summary: string;
  step: Shape;
  rules?: (step: Record<string, unknown>) => string | null;
  keys?: Record<string, KeyFieldKind>;
  secret?: string;
  elementFields?: string[];
  command: CommandDecl<Shape> | undefined;
};
export function declOf(action: ActionName): AnyActionDecl {
  return ACTION_DECLS[action] as unknown as AnyActionDecl;
}

/**
 * The snapshot element indices a step names: its elementIndex and its
 * declared element fields (drag's from and to), in declaration order.
 */
export function stepElementIndices(step: { action: ActionName }): number[] {
  const fields = ["elementIndex", ...(declOf(step.action).elementFields ?? [])];
  const s = step as Record<string, unknown>;
  return fields.map((f) => s[f]).filter((v): v is number => typeof v === "number");
}

/** The boolean field (and flag) that reads a secret field from stdin: value -> valueStdin (--value-stdin). */
export const stdinField = (field: string) => `${field}Stdin`;

/** The secret a step carries (its declared secret field), if any. */
export function stepSecret(step: { action: ActionName }): string | undefined {
  const field = declOf(step.action).secret;
  const v = field ? (step as Record<string, unknown>)[field] : undefined;
  return typeof v === "string" ? v : undefined;
}

function describeOf(schema: z.ZodType): string {
  return (schema as unknown as { description?: string }).description ?? "";
}

/**
 * An action command's arguments, derived from its step: the target fields
 * (app, windowId, windowIndex; snapshotId when the step may name an
 * element), the step's fields (renamed, omitted, a secret's --X-stdin flag,
 * an alias's own fields next to the field they spell), then `state`.
 */
function commandArgs(name: ActionCommandName): z.ZodObject<Shape, z.core.$strict> {
  const decl = declOf(name);
  const cmd = decl.command!;
  const shape: Shape = { app, windowId: windowId.optional(), windowIndex: windowIndex.optional() };
  if ("elementIndex" in decl.step || decl.elementFields?.length) shape.snapshotId = snapshotId.optional();
  for (const [field, schema] of Object.entries(decl.step)) {
    if (cmd.omit?.includes(field)) continue;
    if (field === decl.secret) {
      const flag = stdinField(field);
      shape[field] = schema.optional().describe(`${describeOf(schema)} (use ${flagOf(flag)} for secrets)`);
      shape[flag] = z.boolean().optional().describe(`read the ${field} from stdin`);
    } else if (field === cmd.alias?.field) {
      shape[field] = schema.optional();
      for (const [f, s] of Object.entries(cmd.alias.fields)) shape[f] = s.optional();
    } else {
      shape[cmd.rename?.[field] ?? field] = schema;
    }
  }
  shape.state = state.optional();
  shape.restoreWindow = restoreWindow.optional();
  return z.strictObject(shape);
}

/** ARGS of the action commands (src/protocol/commands.ts spreads them in). */
export const ACTION_ARGS = lazyTable(Object.fromEntries(ACTION_COMMANDS.map((c) => [c, () => commandArgs(c)]))) as {
  readonly [C in ActionCommandName]: z.ZodObject<Shape, z.core.$strict>;
};

/** The action commands' one-line summaries. */
export const ACTION_SUMMARY = Object.fromEntries(ACTION_COMMANDS.map((c) => [c, ACTION_DECLS[c].summary])) as Record<ActionCommandName, string>;

function invalid(message: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message);
}

/**
 * A command's (valid) arguments as its step, unchecked: the one function
 * from an action command's args to a program step, by its declaration.
 * Spellings that contradict each other are INVALID_ARGUMENTS here (the
 * value and its --X-stdin flag, an alias and the field it spells); a secret
 * read from stdin is "" until the caller has read it (compile.ts withStdin).
 * The step's own shape is parseProgram's to check.
 */
export function commandStep(command: ActionCommandName, args: Record<string, unknown>): Record<string, unknown> {
  const decl = declOf(command);
  const cmd = decl.command!;
  const given = (f: string) => args[f] !== undefined;
  const fromStdin = decl.secret !== undefined && args[stdinField(decl.secret)] === true;
  if (decl.secret !== undefined && given(decl.secret) === fromStdin) {
    throw invalid(`${command} takes exactly one of ${flagOf(decl.secret)} or ${flagOf(stdinField(decl.secret))}`);
  }
  const alias = cmd.alias;
  const aliased = alias ? Object.keys(alias.fields) : [];
  if (alias) {
    const some = aliased.filter(given);
    if (some.length && some.length < aliased.length) throw invalid(`${command} needs all of ${aliased.map(flagOf).join(" ")}`);
    if (some.length > 0 && given(alias.field)) throw invalid(`${command} takes either ${flagOf(alias.field)} or ${aliased.map(flagOf).join("/")}`);
    // Neither: the step's rules say what it needs (a drag may name two elements instead of a path).
  }
  const step: Record<string, unknown> = { action: command };
  for (const field of Object.keys(decl.step)) {
    if (cmd.omit?.includes(field)) continue;
    let v = args[cmd.rename?.[field] ?? field];
    if (field === decl.secret && fromStdin) v = "";
    if (field === alias?.field && v === undefined && aliased.some(given)) v = alias.build(args);
    if (v !== undefined) step[field] = v;
  }
  return step;
}
