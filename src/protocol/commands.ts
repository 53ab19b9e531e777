// The public contract: every command's arguments as a zod schema. The CLI's
// flags and --help, serve's request validation, the MCP tools' inputs and the
// docs tables are all derived from these. Field names are camelCase; the CLI
// flag of a field is its kebab-case name (elementIndex -> --element-index).
import { z } from "zod";

const uint = z.number().int().nonnegative();
const int = z.number().int();

/** App selector: executable path or basename, desktop id, exact name, or pid:N. */
const app = z.string().min(1).describe("target app: executable, desktop id, exact name, or pid:N");
const snapshotId = z
  .string()
  .regex(/^cs_[A-Za-z0-9]{10,40}$/, "must look like cs_ followed by 10-40 letters or digits")
  .describe("snapshot to act on (default: the app's latest)");
const windowId = uint.describe("X11 window id (or the platform's window id)");
const windowIndex = uint.describe("index into list-windows' result for the app");
const elementIndex = uint.describe("element index from snapshot.elements[].index");
const state = z.boolean().describe("return a fresh observation after the action");

const targetFields = {
  app,
  windowId: windowId.optional(),
  windowIndex: windowIndex.optional(),
};
const elementTarget = {
  ...targetFields,
  snapshotId: snapshotId.optional(),
  elementIndex,
  state: state.optional(),
};

export const Button = z.enum(["left", "right", "middle", "back", "forward"]);
export const Point = z.strictObject({ x: int, y: int });
/**
 * Most points in one drag path (command, program step, adapters): a drag
 * holds a button down for its whole path, so its length is bounded and
 * refused at validation, before anything is resolved or sent.
 */
export const MAX_DRAG_POINTS = 1000;

export const ARGS = {
  capabilities: z.strictObject({}),
  permissions: z.strictObject({
    enableAccessibility: z
      .boolean()
      .optional()
      .describe("switch the session's accessibility flag on (Linux: org.a11y.Status IsEnabled); apps started before must be restarted"),
  }),
  "list-apps": z.strictObject({}),
  "list-windows": z.strictObject({ app }),
  "get-app-state": z.strictObject({
    ...targetFields,
    noScreenshot: z.boolean().optional().describe("skip the window screenshot"),
    maxNodes: z.number().int().min(1).max(20000).optional().describe("cap on accessible nodes read (default 2000)"),
  }),
  screenshot: z.strictObject({
    app: app.optional(),
    windowId: windowId.optional(),
    windowIndex: windowIndex.optional(),
  }),
  click: z.strictObject({
    ...targetFields,
    snapshotId: snapshotId.optional(),
    elementIndex: elementIndex.optional(),
    x: int.optional().describe("screen x (coordinate click; needs the foreground grant unless it hits an element)"),
    y: int.optional().describe("screen y"),
    button: Button.optional().describe("mouse button for a coordinate click (default left)"),
    count: z.number().int().min(1).max(3).optional().describe("1 single, 2 double, 3 triple click"),
    modifiers: z.array(z.string()).optional().describe("keys held during a coordinate click (ctrl, shift, alt, super)"),
    state: state.optional(),
  }),
  "set-value": z.strictObject({
    ...elementTarget,
    value: z.string().optional().describe("new value (use --value-stdin for secrets)"),
    valueStdin: z.boolean().optional().describe("read the value from stdin"),
  }),
  "type-text": z.strictObject({
    ...targetFields,
    snapshotId: snapshotId.optional(),
    elementIndex: elementIndex.optional(),
    text: z.string().optional().describe("text to type (use --text-stdin for secrets)"),
    textStdin: z.boolean().optional().describe("read the text from stdin"),
    state: state.optional(),
  }),
  "press-key": z.strictObject({
    ...targetFields,
    snapshotId: snapshotId.optional(),
    elementIndex: elementIndex.optional(),
    key: z.string().min(1).describe("xdotool-style key name: Return, BackSpace, Page_Up, F5, a, ..."),
    repeat: z.number().int().min(1).max(100).optional(),
    state: state.optional(),
  }),
  hotkey: z.strictObject({
    ...targetFields,
    keys: z.array(z.string().min(1)).min(1).describe("combo, repeatable or +-joined: ctrl+shift+t"),
    state: state.optional(),
  }),
  scroll: z.strictObject({
    ...targetFields,
    snapshotId: snapshotId.optional(),
    elementIndex: elementIndex.optional(),
    direction: z.enum(["up", "down", "left", "right"]).optional().describe("wheel direction (foreground input); omit with --element-index to scroll that element into view"),
    amount: z.number().int().min(1).max(100).optional().describe("notches (default 3)"),
    x: int.optional(),
    y: int.optional(),
    state: state.optional(),
  }),
  drag: z.strictObject({
    ...targetFields,
    path: z.array(Point).min(2).max(MAX_DRAG_POINTS).optional().describe("screen points, JSON: [{\"x\":1,\"y\":2},...] (2 to 1000)"),
    fromX: int.optional(),
    fromY: int.optional(),
    toX: int.optional(),
    toY: int.optional(),
    button: Button.optional(),
    state: state.optional(),
  }),
  "select-text": z.strictObject({
    ...elementTarget,
    start: uint.describe("first character offset"),
    end: uint.describe("offset after the last character"),
  }),
  focus: z.strictObject({ ...elementTarget }),
  "perform-secondary-action": z.strictObject({
    ...elementTarget,
    action: z.string().min(1).describe("an action name the element advertises"),
  }),
  run: z.strictObject({
    programStdin: z.boolean().optional().describe("read the program JSON from stdin (the default)"),
  }),
  "policy-check": z.strictObject({ app }),
  pause: z.strictObject({ reason: z.string().max(200).optional() }),
  resume: z.strictObject({}),
} as const;

export type CommandName = keyof typeof ARGS;
export type CommandArgs<C extends CommandName> = z.infer<(typeof ARGS)[C]>;

/** Frozen inventory of commands; the dispatcher and CLI derive from it. */
export const COMMANDS = Object.freeze(Object.keys(ARGS) as CommandName[]);

/** Frozen inventory of actions a program step (and a single command) can be. */
export const ACTIONS = Object.freeze([
  "click",
  "set-value",
  "type-text",
  "press-key",
  "hotkey",
  "scroll",
  "drag",
  "select-text",
  "focus",
  "perform-secondary-action",
  "wait",
  "move",
  "hold-key",
] as const);
export type ActionName = (typeof ACTIONS)[number];

export const COMMAND_SUMMARY: Record<CommandName, string> = {
  capabilities: "What this deckhand and its helper can do, and how each capability was verified.",
  permissions: "Whether the OS lets deckhand see and act (each check granted / denied / unknown).",
  "list-apps": "Running applications with a window or an accessibility tree, sorted by name.",
  "list-windows": "Top-level windows of one app, in stacking order.",
  "get-app-state": "One window's accessibility tree and screenshot as a new snapshot.",
  screenshot: "A PNG of one window (its own pixels even when covered) or of the whole screen.",
  click: "Press an element (its default action) or click at a screen point.",
  "set-value": "Set an element's text or numeric value and read it back.",
  "type-text": "Type text into an element at its caret, or into the focused control.",
  "press-key": "Press a key (optionally repeated) on an element or the focused control.",
  hotkey: "Press a key combination such as ctrl+s.",
  scroll: "Scroll an element into view or by an amount.",
  drag: "Drag along a path of screen points.",
  "select-text": "Select a character range in a text element.",
  focus: "Give an element keyboard focus.",
  "perform-secondary-action": "Run any action an element advertises, by name.",
  run: "Run a program of several actions (JSON on stdin) with one final observation.",
  "policy-check": "Whether policy allows acting on an app, and which rule decided.",
  pause: "Stop every mutating command (across processes) until resume.",
  resume: "Lift a pause.",
};

/**
 * Commands that change something on the desktop (PAUSED applies to these):
 * every command that is also an action, and `run`.
 */
export const MUTATING_COMMANDS: ReadonlySet<CommandName> = new Set<CommandName>([
  ...COMMANDS.filter((c) => (ACTIONS as readonly string[]).includes(c)),
  "run",
]);

/**
 * Fields that name one thing two ways: at most one of each pair may be given
 * (CLI flags, serve and MCP args, and a program's target alike).
 */
export const EXCLUSIVE_FIELDS: readonly (readonly [string, string])[] = Object.freeze([["windowId", "windowIndex"] as const]);

/** The first exclusive pair that `args` gives both of, or null. */
export function exclusiveConflict(args: unknown): readonly [string, string] | null {
  if (!args || typeof args !== "object") return null;
  const a = args as Record<string, unknown>;
  return EXCLUSIVE_FIELDS.find(([x, y]) => a[x] !== undefined && a[y] !== undefined) ?? null;
}
