// The public contract: every command's arguments as a zod schema. The CLI's
// flags and --help, serve's request validation, the MCP tools' inputs and the
// docs tables are all derived from these. Field names are camelCase; the CLI
// flag of a field is its kebab-case name (elementIndex -> --element-index).
import { z } from "zod";
import { lazyTable, thunksOf } from "../lazy-table.ts";
import { ACTION_ARGS, ACTION_SUMMARY, ACTIONS, app, windowId, windowIndex } from "./actions.ts";
// ---- issue 13: clipboard
import { ClipboardSelection, MAX_CLIPBOARD_READ_BYTES } from "./actions.ts";
// ---- end clipboard
// issue 13: menus
import { MENU_ARGS, MENU_SUMMARY } from "./menus.ts";

// The action commands' arguments are derived from the action declarations
// (src/protocol/actions.ts); the shared fields and types live there too.
export { ACTIONS, Button, MAX_DRAG_POINTS, Point, type ActionName } from "./actions.ts";

// ---- issue 14: observation and screenshot options
/** What an observation shows: compact (agents' default) or full. */
export const ObservationFormat = z.enum(["compact", "full"]);
/** The least page budget in bytes: one tree line and its page facts always fit. */
export const MIN_PAGE_BYTES = 2000;
/** The compact observation's default page budget in bytes (tree text). */
export const DEFAULT_COMPACT_MAX_BYTES = 64_000;
/** An image's file format (the helper encodes it: screenshot.formats). */
export const ImageFormat = z.enum(["png", "jpeg", "webp"]);
/** "x,y,w,h": a rectangle, in window coordinates with an app, else screen coordinates (regionCoords). */
export const REGION_PATTERN = /^-?\d{1,6},-?\d{1,6},\d{1,6},\d{1,6}$/;
/** Crop, scale and encoding of a screenshot (screenshot, get-app-state), and the set-of-marks image. */
const IMAGE_FIELDS = {
  region: z.string().regex(REGION_PATTERN, "x,y,w,h in pixels").optional().describe("crop to x,y,w,h: window coordinates with an app, else screen (see --region-coords)"),
  regionCoords: z.enum(["window", "screen"]).optional().describe("what --region is relative to (default: window with an app, screen without)"),
  maxWidth: z.number().int().min(16).max(16384).optional().describe("scale the image down (never up) to at most this many pixels wide"),
  imageFormat: ImageFormat.optional().describe("png (default), jpeg or webp: smaller files for large windows"),
  quality: z.number().int().min(1).max(100).optional().describe("jpeg/webp quality 1-100 (default 80)"),
  marks: z.boolean().optional().describe("also write a PNG with a numbered box on each actionable element (numbers = element indices)"),
};
// ---- end observation and screenshot options

const targetFields = {
  app,
  windowId: windowId.optional(),
  windowIndex: windowIndex.optional(),
};

// Each command's schema is built on its first use (src/lazy-table.ts): a CLI
// call validates one command's arguments.
export const ARGS = lazyTable({
  capabilities: () => z.strictObject({}),
  permissions: () =>
    z.strictObject({
      enableAccessibility: z
        .boolean()
        .optional()
        .describe("switch the session's accessibility flag on (Linux: org.a11y.Status IsEnabled); apps started before must be restarted"),
    }),
  "list-apps": () =>
    z.strictObject({
      all: z.boolean().optional().describe("also the installed apps that are not running (running: false)"),
    }),
  "list-windows": () => z.strictObject({ app }),
  "get-app-state": () =>
    z.strictObject({
      ...targetFields,
      noScreenshot: z.boolean().optional().describe("skip the window screenshot"),
      // ---- issue 14: observation built for agents (docs/observation.md)
      format: ObservationFormat.optional().describe("compact (default): the tree text of what can be acted on and its landmarks; full: every node and the elements array"),
      maxNodes: z.number().int().min(1).max(20000).optional().describe("most tree nodes in this page (the rest: truncated and nextOffset); also read up to this many from the app when over 2000"),
      maxBytes: z.number().int().min(MIN_PAGE_BYTES).max(50_000_000).optional().describe(`most bytes of tree text and elements in this page (default ${DEFAULT_COMPACT_MAX_BYTES} compact, none full); the rest: truncated and nextOffset`),
      snapshotId: z.string().min(1).max(100).optional().describe("page a stored snapshot (with --offset) instead of observing again"),
      offset: z.number().int().min(0).max(1_000_000).optional().describe("where the page starts: a nextOffset from the previous page (needs --snapshot-id)"),
      since: z.string().min(1).max(100).optional().describe("a snapshot id: return what was added, removed and changed since it, indices kept for what persists"),
      withBounds: z.boolean().optional().describe("tree text lines carry screen bounds and actions"),
      ocr: z.boolean().optional().describe("also read the window image's text with OCR (automatic when the app has no tree)"),
      ...IMAGE_FIELDS,
      // ---- end observation
    }),
  screenshot: () =>
    z.strictObject({
      app: app.optional(),
      windowId: windowId.optional(),
      windowIndex: windowIndex.optional(),
      // ---- issue 14: screenshot options
      ...IMAGE_FIELDS,
      // ---- end screenshot options
    }),
  // click, set-value, type-text, press-key, hotkey, scroll, drag, select-text, focus, perform-secondary-action
  ...thunksOf(ACTION_ARGS),
  run: () =>
    z.strictObject({
      programStdin: z.boolean().optional().describe("read the program JSON from stdin (the default)"),
    }),
  "policy-check": () => z.strictObject({ app }),
  pause: () => z.strictObject({ reason: z.string().max(200).optional() }),
  resume: () => z.strictObject({}),
  // ---- issue 13: app lifecycle
  launch: () =>
    z.strictObject({
      app: z.string().min(1).max(4096).describe("app to start: desktop id (with or without .desktop), exact name, or executable path or basename"),
      args: z.array(z.string().max(32 * 1024)).max(256).optional().describe("arguments for the app (CLI: everything after --)"),
      timeoutMs: z.number().int().min(1).max(120_000).optional().describe("how long to wait for a window with an accessibility tree (default 30000)"),
    }),
  activate: () => z.strictObject({ ...targetFields }),
  quit: () =>
    z.strictObject({
      app,
      timeoutMs: z.number().int().min(1).max(120_000).optional().describe("how long to wait for the app to exit (default 10000)"),
    }),
  // ---- end lifecycle

  // ---- issue 13: clipboard
  "clipboard-get": () =>
    z.strictObject({
      selection: ClipboardSelection.optional().describe("which selection: clipboard (default) or primary (the last text selected)"),
      maxBytes: z.number().int().min(1).max(MAX_CLIPBOARD_READ_BYTES).optional().describe("most bytes of text returned (default 1 MiB; the rest is cut: truncated)"),
    }),
  "clipboard-set": () =>
    z.strictObject({
      text: z.string().optional().describe("the text to put on the selection (use --text-stdin for secrets)"),
      textStdin: z.boolean().optional().describe("read the text from stdin"),
      clear: z.boolean().optional().describe("leave the selection empty instead"),
      selection: ClipboardSelection.optional().describe("which selection: clipboard (default) or primary"),
    }),
  // ---- end clipboard

  // ---- issue 13: menus
  // menu-list, menu-click (src/protocol/menus.ts)
  ...thunksOf(MENU_ARGS),
  // ---- end menus
});

export type CommandName = keyof typeof ARGS;
export type CommandArgs<C extends CommandName> = z.infer<(typeof ARGS)[C]>;

/** Frozen inventory of commands; the dispatcher and CLI derive from it. */
export const COMMANDS = Object.freeze(Object.keys(ARGS) as CommandName[]);

export const COMMAND_SUMMARY: Record<CommandName, string> = {
  capabilities: "What this deckhand and its helper can do, and how each capability was verified.",
  permissions: "Whether the OS lets deckhand see and act (each check granted / denied / unknown).",
  "list-apps": "Running applications with a window or an accessibility tree, sorted by name.",
  "list-windows": "Top-level windows of one app, in stacking order.",
  "get-app-state": "One window's accessibility tree (compact by default) and screenshot as a new snapshot; pages, diffs, marks and OCR on request.",
  screenshot: "An image (PNG, JPEG or WebP; cropped, scaled) of one window (its own pixels even when covered) or of the whole screen.",
  ...ACTION_SUMMARY,
  run: "Run a program of several actions (JSON on stdin) with one final observation.",
  "policy-check": "Whether policy allows acting on an app, and which rule decided.",
  pause: "Stop every mutating command (across processes) until resume.",
  resume: "Lift a pause.",
  // ---- issue 13: app lifecycle
  launch: "Start an installed app (or an executable) with accessibility on; wait for its window and tree.",
  activate: "Raise and focus an app's window (foreground grant), the focus read back.",
  quit: "Close an app's windows politely (confirm hook) and wait for it to exit; never kills.",
  // ---- end lifecycle

  // ---- issue 13: clipboard
  "clipboard-get": "Read the clipboard's text (or the primary selection's); refused while a secure field has focus or the text came from one.",
  "clipboard-set": "Put text on the clipboard (or the primary selection), held after deckhand exits; confirm-hook gated.",
  // ---- end clipboard

  // ---- issue 13: menus
  ...MENU_SUMMARY,
  // ---- end menus
};

/**
 * Commands that change something on the desktop (PAUSED applies to these):
 * every command that is also an action, and `run`.
 */
export const MUTATING_COMMANDS: ReadonlySet<CommandName> = new Set<CommandName>([
  ...COMMANDS.filter((c) => (ACTIONS as readonly string[]).includes(c)),
  "run",
  // ---- issue 13: app lifecycle
  "launch",
  "activate",
  "quit",
  // ---- end lifecycle

  // ---- issue 13: clipboard
  "clipboard-set",
  // ---- end clipboard

  // ---- issue 13: menus
  // menu-list with an element opens its context menu: it asks checkPaused("menu-click") then.
  "menu-click",
  // ---- end menus
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
