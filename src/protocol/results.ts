// The public contract, output side: every command's result as a zod schema.
// Handlers are typed by it (src/commands/index.ts), every envelope the test
// suites see is checked against it, and JSON Schema is generated from it for
// docs/cli.md (the Results tables), docs/results.schema.json and each MCP
// tool's outputSchema (scripts/gen-protocol.ts; `--check` fails on drift).
//
// Objects are strict: a field a handler adds without adding it here fails
// the suites, so the docs and the MCP schemas never miss one. Field names
// are camelCase except where a wire object travels as it is (cleanup).
import { z } from "zod";
import { ACTIONS as STEP_ACTIONS, COMMANDS, type CommandName } from "./commands.ts";
import { ACTION_COMMANDS, type ActionCommandName } from "./actions.ts";
import { ERROR_CODES } from "./errors.ts";
import { stepSchema } from "./program.ts";
import { ACTIONS as NODE_ACTIONS, ROLES } from "../wire/vocabulary.ts";

const uint = z.number().int().nonnegative();
const int = z.number().int();
const str = z.string();

// ---------------------------------------------------------------- shared types

/** A screen rectangle in screen pixels. */
export const Rect = z.strictObject({ x: int, y: int, width: uint, height: uint }).meta({ id: "Rect", description: "a rectangle in screen pixels" });

/** Platform-neutral role of an element (src/wire/vocabulary.ts ROLES). */
export const Role = z.enum(ROLES).meta({ id: "Role", description: "platform-neutral role (src/wire/vocabulary.ts ROLES)" });
/** Platform-neutral name of an advertised action (src/wire/vocabulary.ts ACTIONS). */
export const NodeActionName = z.enum(NODE_ACTIONS).meta({ id: "NodeAction", description: "platform-neutral action name (src/wire/vocabulary.ts ACTIONS)" });

export const Delivery = z
  .enum(["not_dispatched", "submitted", "partial", "unknown"])
  .meta({ id: "Delivery", description: "what reached the app: not_dispatched (nothing), submitted, partial, unknown (never retry it)" });
export const Route = z
  .enum(["accessibility", "synthetic", "foreground_input"])
  .meta({ id: "Route", description: "how it was sent: accessibility (background-safe), synthetic, foreground_input" });

export const Cleanup = z
  .strictObject({
    keys_released: z.boolean(),
    buttons_released: z.boolean(),
    pointer_restored: z.boolean().nullable().describe("null when the pointer never moved"),
  })
  .meta({ id: "Cleanup", description: "what the helper released and restored after the input" });

export const Verification = z
  .strictObject({
    verified: z.boolean().nullable().describe("true only when a predicate was actually read back; else null"),
    predicate: str.nullable().describe("the predicate read back, if any"),
  })
  .meta({ id: "Verification", description: "read-back verification" });

export const Settle = z
  .strictObject({
    waitedMs: uint.describe("how long the observation waited after the last action"),
    events: uint.describe("accessibility events seen from the app meanwhile"),
    settled: z.boolean().describe("false: the bound passed while the app was still changing"),
  })
  .meta({ id: "Settle", description: "the wait for the app's accessibility events to quiesce before the observation (100 ms quiet, at most 500 ms)" });

export const Locator = z
  .strictObject({
    kind: z.enum(["atspi-path", "ax-path", "uia-path", "scripted-path", "ocr-box"]).describe("which platform's tree the path is in (ocr-box: text read from the image, no tree; path empty)"),
    path: z.array(uint).describe("child indices from the window's root"),
    role: Role,
    nativeRole: str.describe("the platform's role name"),
    identifier: str.describe("the toolkit's identifier (may be empty)"),
    name: str,
  })
  .meta({ id: "Locator", description: "how the helper finds the element again in the live tree" });

export const Element = z
  .strictObject({
    index: uint.describe("sparse pre-order index: what --element-index takes"),
    role: Role,
    nativeRole: str.describe("the platform's role name (shown, never decided on)"),
    title: str.describe("accessible name"),
    value: str.nullable().describe("current value (URL query stripped); always null for a secure field"),
    label: str.describe("accessible description"),
    enabled: z.boolean(),
    focused: z.boolean(),
    secure: z.boolean().describe("a password field: its value is never read, nothing is typed into it"),
    bounds: Rect.nullable().describe("screen bounds, null when unknown"),
    actions: z.array(NodeActionName).describe("advertised actions, neutral names"),
    nativeActions: z.array(str).describe("advertised actions, the platform's names (perform-secondary-action --action takes either name)"),
    locator: Locator,
    source: z.enum(["ocr"]).optional().describe("ocr: text read from the window image (no tree behind it): actionable only by point, with the foreground grant"),
  })
  .meta({ id: "Element", description: "one element of a snapshot" });

export const ScreenshotInfo = z
  .strictObject({
    path: str.describe("absolute path of the image file (png, jpg or webp: see format)"),
    width: uint.describe("image width in pixels"),
    height: uint.describe("image height in pixels"),
    scale: z.number().positive().describe("image pixels per screen pixel"),
    origin: z.strictObject({ x: int, y: int }).describe("screen point of the image's top-left pixel"),
    method: str.describe("how the helper captured it"),
    redacted: uint.describe("regions the helper blacked out (secure fields)"),
    // ---- issue 14: the image-to-screen map and the file's format
    format: z.enum(["png", "jpeg", "webp"]).describe("the file's image format"),
    screenRect: Rect.describe("the screen rectangle the image shows: screen x = screenRect.x + image x / scale (y likewise)"),
    // ---- end
  })
  .meta({ id: "ScreenshotInfo", description: "an image file (PNG, JPEG or WebP): image pixel (ix, iy) shows screen point (origin.x + ix / scale, origin.y + iy / scale)" });

const CodeMessage = z.strictObject({ code: str, message: str });

export const Warning = z
  .strictObject({
    code: str.describe("NO_ACCESSIBILITY_TREE, ACCESSIBILITY_DISABLED, ..."),
    message: str,
    remediation: str,
  })
  .meta({ id: "Warning", description: "something about the observation an agent should know, with what to do" });

// ---- issue 14: observation built for agents (docs/observation.md)
/** One element in a diff: its index, its tree text line, and (full format) the element. */
const DiffEntry = z.strictObject({
  index: uint.describe("the element's index (kept from the base snapshot when it persists)"),
  line: str.describe("its tree text line (for removed: as last seen)"),
  changed: z.array(str).optional().describe("changed: which facts changed (title, value, enabled, focused, checked, selected, bounds, actions, ...)"),
  element: Element.optional().describe("full format: the element as now (absent for removed)"),
});

export const SnapshotDiff = z
  .strictObject({
    since: str.describe("the base snapshot id asked for"),
    applied: z.boolean().describe("true: treeText/elements hold only what changed (below); false: a full snapshot, reason says why"),
    reason: z
      .enum(["snapshot_unknown", "snapshot_expired", "other_app", "app_restarted", "window_changed", "too_many_changes"])
      .optional()
      .describe("why no diff was possible (applied false)"),
    added: z.array(DiffEntry),
    removed: z.array(DiffEntry),
    changed: z.array(DiffEntry),
    unchanged: uint.describe("elements that persist unchanged"),
  })
  .meta({ id: "SnapshotDiff", description: "get-app-state --since: what changed since a snapshot, by locator identity" });

export const OcrReport = z
  .strictObject({
    engine: str.describe("the OCR engine and its version (tesseract x.y)"),
    automatic: z.boolean().describe("true: run because the app has no tree (or an empty one); false: --ocr asked for it"),
    lines: uint.describe("text lines read (one element each, source: ocr)"),
    ms: uint.describe("how long the OCR took"),
  })
  .meta({ id: "OcrReport", description: "text read from the window image with OCR" });

export const MarksInfo = ScreenshotInfo.extend({
  count: uint.describe("boxes drawn: one per actionable element with bounds on the image"),
  omitted: uint.optional().describe("actionable elements past the cap (500 boxes) left unnumbered: page with a smaller --max-nodes to see them numbered"),
}).meta({ id: "MarksInfo", description: "the set-of-marks PNG: the window image with a numbered box per actionable element (numbers = element indices)" });
// ---- end observation

export const AppState = z
  .strictObject({
    app: z
      .strictObject({ name: str, pid: uint, executable: str.nullable(), desktopId: str.nullable() })
      .describe("the observed app"),
    window: z.strictObject({ windowId: uint, title: str, bounds: Rect }).describe("the observed window"),
    snapshot: z
      .strictObject({
        snapshotId: str.describe("cs_...: what --snapshot-id takes"),
        targetKey: str.describe("exe:<canonical path> or pid:N"),
        windowKey: str.describe("targetKey#windowId"),
        capturedAt: str.describe("ISO 8601"),
        expiresAt: str.describe("ISO 8601"),
        treeText: str.describe("numbered tree text, one node per line ([index] role \"name\" ...); compact: what can be acted on and its landmarks"),
        elementCount: uint.describe("elements in the whole snapshot"),
        truncated: z.boolean().describe("the tree read or this page hit a cap: page on with offset: nextOffset, or observe again"),
        // ---- issue 14: format, page and budget
        format: z.enum(["compact", "full"]).describe("compact: tree text of what can be acted on and its landmarks; full: every node and elements[]"),
        offset: uint.describe("where this page starts in the snapshot's node order"),
        nextOffset: uint.optional().describe("the next page's offset (get-app-state --snapshot-id <id> --offset <n>); absent on the last page"),
        budget: z.strictObject({ maxNodes: uint.nullable(), maxBytes: uint.nullable() }).describe("the page budget applied (null: none)"),
        diff: SnapshotDiff.optional().describe("--since: what changed since that snapshot"),
        // ---- end
        elements: z.array(Element).optional().describe("full format: this page's elements"),
      })
      .describe("the immutable snapshot (stored before its id is printed)"),
    screenshot: ScreenshotInfo.nullable().describe("null with --no-screenshot or when capture failed"),
    screenshotError: CodeMessage.optional().describe("why there is no screenshot"),
    // ---- issue 14
    marks: MarksInfo.optional().describe("--marks: the set-of-marks PNG"),
    marksError: CodeMessage.optional().describe("why there is no set-of-marks image"),
    ocr: OcrReport.optional().describe("--ocr, or automatic without a tree: the OCR run"),
    ocrError: CodeMessage.optional().describe("why the OCR asked for did not run"),
    // ---- end
    warnings: z.array(Warning).optional(),
  })
  .meta({ id: "AppState", description: "one window's accessibility tree and screenshot: the get-app-state result, and every fresh observation" });

/** One end of an element drag: the snapshot element and the screen point used (the centre of its live bounds). */
const DragEnd = z.strictObject({
  index: uint.describe("the element's snapshot index"),
  role: Role,
  title: str.describe("its accessible name in the snapshot"),
  point: z.strictObject({ x: int, y: int }).describe("the screen point pressed (from) or released (to): the centre of its live bounds"),
});

export const ElementDrag = z
  .strictObject({
    from: DragEnd,
    to: DragEnd,
    targetChanged: z
      .array(z.enum(["name", "value", "description", "children", "removed"]))
      .describe("what read differently at the drop target (its node or its subtree) after the drop; empty: nothing"),
    detail: str.describe("how the drop was verified, in words"),
  })
  .meta({
    id: "ElementDrag",
    description:
      "drag --from-element-index / --to-element-index: both elements, and what the drop changed in the target's tree (verification.verified: true when it changed, false when it read the same, null when it could not be read again)",
  });

const StepAction = z.enum(STEP_ACTIONS);
export const ErrorCode = z.enum(ERROR_CODES).meta({ id: "ErrorCode", description: "a public error code (append-only)" });
/** Flat facts: what a DeckhandError's details may hold. */
const FlatValue = z.union([str, z.number(), z.boolean()]);
const FlatDetails = z.record(str, FlatValue);

// ---- issue 13: clipboard
export const PasteReport = z
  .strictObject({
    chars: uint.describe("characters pasted"),
    served: uint.describe("requests of the target answered with the text (at least 1 in an ok result)"),
    restored: z
      .enum(["text", "cleared", "not_restorable", "skipped"])
      .describe("text: the previous clipboard text is back; cleared: it was empty and is again; not_restorable: it held no text (or a secret) and is left empty; skipped: --restore false, or another app took the clipboard meanwhile"),
  })
  .meta({ id: "PasteReport", description: "what a paste step did with the clipboard" });
// ---- end clipboard

export const StepReceipt = z
  .strictObject({
    index: uint.describe("the step's index in the program"),
    action: StepAction,
    status: z.enum(["completed", "failed", "unattempted"]),
    delivery: Delivery,
    route: Route.nullable(),
    elementIndex: uint.nullable(),
    verification: Verification,
    cleanup: Cleanup.nullable(),
    charsSent: uint.optional().describe("typed text: characters sent (fewer than asked when focus moved away)"),
    nativeAction: str.optional().describe("the platform action that ran"),
    fallback: z.literal("focus+select-all+type").optional().describe("set-value done by typing under the foreground grant"),
    fallbackFrom: str.optional().describe("why the fallback ran: the accessibility route's error code"),
    // ---- issue 13: clipboard
    paste: PasteReport.optional(),
    // ---- end clipboard
    drag: ElementDrag.optional().describe("an element drag: both elements and what the drop changed"),
    error: z.strictObject({ code: ErrorCode, message: str, details: FlatDetails }).optional().describe("a failed step's error"),
  })
  .meta({ id: "StepReceipt", description: "what one program step did" });

const AppRef = z.strictObject({ name: str, pid: uint });

// ---- issue 13: app lifecycle
/** A running app as list-apps lists it (--all adds `running` and `installed`). */
const RunningApp = z
  .strictObject({
    name: str,
    pid: uint,
    executable: str.nullable().describe("canonical executable path, null when unreadable"),
    desktopId: str.nullable(),
    accessible: z.boolean().describe("exposes an accessibility tree"),
    windowCount: uint,
    toolkit: str.nullable().describe("gtk3, qt5, chromium, ... when the helper recognises it"),
    running: z.literal(true).optional().describe("--all: a running app"),
    installed: z.boolean().optional().describe("--all: an installed app's entry matches it (its desktopId is then the entry's)"),
  })
  .meta({ id: "RunningApp", description: "a running app with a window or an accessibility tree" });

/** An installed app that is not running (list-apps --all). */
const InstalledApp = z
  .strictObject({
    name: str,
    pid: z.null(),
    executable: str.nullable().describe("the program its entry starts, null when not found"),
    desktopId: str.describe("what launch --app takes"),
    accessible: z.literal(false),
    windowCount: z.literal(0),
    toolkit: z.null(),
    running: z.literal(false),
    installed: z.literal(true),
    terminal: z.boolean().describe("it runs inside a terminal (launch refuses it)"),
  })
  .meta({ id: "InstalledApp", description: "an installed app that is not running (list-apps --all)" });

/** A window as list-windows shows it. */
const ListedWindow = z.strictObject({
  windowId: uint,
  windowIndex: uint.describe("what --window-index takes"),
  title: str,
  bounds: Rect,
  minimized: z.boolean(),
  zIndex: uint.describe("0 is the bottom of the stacking order"),
  popup: z.boolean().describe("an open menu, combo list or tooltip"),
});
// ---- end lifecycle

/** The result of one action command (a one-step program). */
function actionResult<C extends CommandName>(command: C) {
  return z.strictObject({
    action: z.literal(command),
    app: AppRef,
    snapshotId: str.nullable().describe("the snapshot acted on (element actions)"),
    windowId: uint.nullable().describe("the window acted on"),
    elementIndex: uint.nullable(),
    performed: z.boolean().describe("delivery === submitted"),
    delivery: Delivery,
    route: Route.nullable(),
    verification: Verification,
    cleanup: Cleanup.nullable(),
    nativeAction: str.optional().describe("the platform action that ran (click: the press-like one chosen by name)"),
    fallback: z.literal("focus+select-all+type").optional().describe("set-value done by typing under the foreground grant"),
    fallbackFrom: str.optional().describe("why the fallback ran: ACTION_UNSUPPORTED or VERIFICATION_FAILED"),
    charsSent: uint.optional().describe("typed text: characters sent"),
    // ---- issue 13: clipboard
    paste: PasteReport.optional(),
    // ---- end clipboard
    drag: ElementDrag.optional().describe("drag --from-element-index/--to-element-index: both elements and what the drop changed"),
    observation: AppState.nullable().describe("a fresh observation with --state, else null"),
    settle: Settle.optional(),
    observationError: CodeMessage.optional().describe("why the observation asked for is missing"),
  });
}

/** The action commands' results (RESULTS spreads them in, in inventory order). */
const ACTION_RESULTS = Object.fromEntries(ACTION_COMMANDS.map((c) => [c, actionResult(c)])) as { [C in ActionCommandName]: ReturnType<typeof actionResult<C>> };

export const ProgramReceipt = z
  .strictObject({
    app: AppRef,
    snapshotId: str.nullable(),
    windowId: uint.nullable(),
    steps: z.array(StepReceipt).describe("one receipt per step, in order"),
    firstFailure: uint.nullable().describe("index of the failed step; always null in an ok result (a failed program is ok:false)"),
    observation: AppState.nullable().describe("the final observation (observe: true), else null"),
    observationError: CodeMessage.optional().describe("why the final observation is missing"),
    settle: Settle.optional(),
  })
  .describe("a program's receipt");

const Capability = z.strictObject({
  supported: z.boolean(),
  verified: z.enum(["live", "vectors", "unverified"]).describe("live: exercised against the real OS; vectors: wire codec only"),
  note: str.optional(),
});

const HelperStderr = z.array(str).describe("the helper's last stderr lines (free-form)");

const PermissionCheck = z.strictObject({
  id: str.describe("neutral id (display, accessibility, ...) or a platform-only probe's"),
  nativeId: str.optional().describe("the platform's own name for the same check"),
  status: z.enum(["granted", "denied", "unknown"]),
  detail: str,
  remediation: str,
  advisory: z.boolean().describe("a warning only: observation proceeds"),
  granted: z.boolean(),
  probed: z.boolean().describe("false when the status is unknown"),
});

// ---------------------------------------------------------------- per command

// ---- issue 13: menus (src/commands/menus.ts)
/** One item of a menu, with its submenu's items (`menu list`). */
export const MenuEntry: z.ZodType<MenuEntryOut> = z
  .strictObject({
    name: str.describe("the item's name (surrounding blanks trimmed)"),
    path: str.describe('what menu click --path takes: names from the top joined by ">", a ">" in a name written "\\>"'),
    role: Role,
    enabled: z.boolean().describe("false: activating it is refused (MENU_ITEM_DISABLED)"),
    checked: z.boolean().nullable().describe("check and radio items: whether checked; null when the item is not one, or the toolkit does not say it is"),
    shortcut: str.nullable().describe('its keyboard shortcut in deckhand\'s key names ("ctrl+s"), null when none or not exposed'),
    submenu: z.boolean().describe("it opens a submenu (children)"),
    get children() {
      return z.array(MenuEntry).describe("the submenu's items (empty for an item, or when max-items cut them)");
    },
  })
  .meta({ id: "MenuEntry", description: "one item of a menu, with its submenu's items" });
export interface MenuEntryOut {
  name: string;
  path: string;
  role: z.output<typeof Role>;
  enabled: boolean;
  checked: boolean | null;
  shortcut: string | null;
  submenu: boolean;
  children: MenuEntryOut[];
}

/** How a context menu opened for the command was closed again. */
const ContextMenuReport = z
  .strictObject({
    element: z.strictObject({ index: uint, role: Role, name: str }).describe("the element whose context menu was opened"),
    opened: z.boolean().describe("its show_menu action was sent (a mutation)"),
    closed: z.boolean().describe("the popup is gone again"),
    closedBy: z.enum(["accessibility", "escape", "activation"]).nullable().describe("how: an accessibility call, Escape through the focus-guarded keyboard (foreground grant), the activated item closing it; null when left open"),
    note: str.describe("what happened, in words (e.g. why it was left open)"),
  })
  .meta({ id: "ContextMenuReport", description: "a context menu opened through an element's show_menu action, and whether it was closed again" });

const MenuListResult = z.strictObject({
  app: z.strictObject({ name: str, pid: uint }),
  windowId: uint,
  source: z.enum(["menu_bar", "context_menu"]),
  items: z.array(MenuEntry).describe("the top level: the menu bar's menus, or the context menu's items"),
  itemCount: uint.describe("items listed, at every level"),
  truncated: z.boolean().describe("max-items (or a depth or call bound) cut the listing"),
  contextMenu: ContextMenuReport.nullable(),
});

const MenuClickResult = z.strictObject({
  app: z.strictObject({ name: str, pid: uint }),
  windowId: uint,
  path: str.describe("the path as matched: each level's item name"),
  item: z.strictObject({ name: str, role: Role }).describe("the item activated"),
  opened: z.array(str).describe("the submenus opened on the way, in order"),
  activated: z.literal(true),
  delivery: Delivery,
  route: Route,
  nativeAction: str.nullable().describe("the platform action that activated it"),
  verification: z
    .strictObject({
      verified: z.boolean().nullable().describe("true only when a predicate was read back"),
      predicate: str.nullable().describe("what was read back"),
      menuClosed: z.boolean().nullable().describe("the menu is off the screen after the activation (closed by the app, or by deckhand through accessibility); null when not known"),
      checked: z.strictObject({ before: z.boolean().nullable(), after: z.boolean().nullable() }).nullable().describe("a check or radio item's state before and after"),
    })
    .describe("what was read back after the activation"),
  contextMenu: ContextMenuReport.nullable(),
});
// ---- end menus

export const RESULTS = {
  capabilities: z.strictObject({
    deckhand: z.strictObject({ version: str, protocol: str.describe("helper wire protocol, major.minor") }),
    platform: str.describe("process.platform"),
    helper: z.strictObject({
      name: str,
      version: str,
      backend: str,
      protocol: str.describe("the protocol the helper speaks, major.minor"),
      path: str.nullable(),
      source: z.enum(["flag", "env", "beside-executable", "repo-build"]).nullable().describe("where the helper was found"),
      pid: uint.nullable(),
    }),
    supported: z.boolean().describe("at least one action is supported"),
    commands: z.array(z.enum(COMMANDS)),
    actions: z.array(StepAction).describe("actions this helper supports"),
    unsupportedActions: z.array(StepAction),
    capabilities: z.record(str, Capability).describe("by capability key (src/wire/messages.ts CAPABILITY_KEYS)"),
    features: z.strictObject({
      screenshot: z.boolean(),
      occludedScreenshot: z.boolean(),
      stdinSecrets: z.boolean(),
      crossInvocationSnapshots: z.boolean(),
      foregroundInput: z.boolean(),
      foregroundGranted: z.boolean().describe("the operator granted foreground input"),
    }),
    limits: z.object({ max_frame_bytes: uint }).catchall(z.unknown()).describe("the helper's hello limits (free-form beyond max_frame_bytes)"),
    helperStderr: HelperStderr,
  }),
  permissions: z.strictObject({
    platform: str,
    helper: str.describe("helper name and version"),
    allGranted: z.boolean(),
    warnings: z.array(z.strictObject({ id: str, detail: str, remediation: str })).describe("denied advisory checks: observation proceeds, some apps may show no tree"),
    checks: z.array(PermissionCheck),
    enableAccessibility: z
      .strictObject({ enabled: z.boolean(), previous: z.boolean().nullable(), note: str })
      .optional()
      .describe("with --enable-accessibility"),
    helperStderr: HelperStderr,
  }),
  "list-apps": z.strictObject({
    apps: z
      .array(
        // issue 13 (lifecycle): with --all, the installed apps that are not running too (InstalledApp).
        z.union([RunningApp, InstalledApp]),
      )
      .describe("sorted by name, then pid (with --all: the installed apps not running among them, pid null)"),
  }),
  "list-windows": z.strictObject({
    app: z.strictObject({ name: str, pid: uint, executable: str.nullable() }),
    windows: z
      .array(
        z.strictObject({
          windowId: uint,
          windowIndex: uint.describe("what --window-index takes"),
          title: str,
          bounds: Rect,
          minimized: z.boolean(),
          zIndex: uint.describe("0 is the bottom of the stacking order"),
          popup: z.boolean().describe("an open menu, combo list or tooltip"),
        }),
      )
      .describe("in stacking order"),
  }),
  "get-app-state": AppState,
  screenshot: z.strictObject({
    app: AppRef.nullable().describe("null for the whole screen"),
    windowId: uint.describe("0 for the whole screen"),
    screenshot: ScreenshotInfo,
    redacted: z
      .strictObject({
        deniedWindows: uint.describe("windows of apps policy denies"),
        blockedUrls: uint.describe("browser windows on a blocked or unreadable page"),
        unidentifiedWindows: uint.describe("windows whose owner is unknown"),
        secureFields: uint.describe("secure fields the helper blacked out"),
      })
      .describe("what was blacked out, by reason"),
    // ---- issue 14: screenshot --marks (a snapshot is stored so the numbers can be acted on)
    marks: MarksInfo.optional().describe("--marks: the set-of-marks PNG"),
    snapshotId: str.optional().describe("--marks: the snapshot whose element indices the numbers are"),
    // ---- end
  }),
  // Every action command (src/protocol/actions.ts): one shape.
  ...ACTION_RESULTS,
  run: ProgramReceipt,
  "policy-check": z.strictObject({
    app: z.strictObject({ name: str, pid: uint, executable: str.nullable(), desktopId: str.nullable() }),
    decision: z.enum(["allow", "deny"]),
    source: str.describe("the layer that decided: builtin, admin, user, default, ..."),
    rule: str.describe("the rule that decided"),
    policyFiles: z
      .strictObject({
        admin: z.strictObject({ file: str, broken: str.nullable().describe("why the admin file could not be read (then everything is denied)") }).nullable(),
        user: z.strictObject({ file: str }).nullable(),
      })
      .nullable()
      .describe("the policy files in effect"),
  }),
  pause: z.strictObject({
    paused: z.boolean(),
    since: str.optional().describe("ISO 8601: when the pause began (an earlier pause is kept)"),
    reason: str.optional(),
  }),
  resume: z.strictObject({
    paused: z.literal(false),
    wasPaused: z.boolean(),
    liftedReason: str.optional().describe("the reason of the pause lifted"),
  }),
  // ---- issue 13: app lifecycle
  launch: z.strictObject({
    app: RunningApp.describe("the launched app as list-apps shows it"),
    windows: z.array(ListedWindow).describe("its windows as list-windows shows them"),
    launched: z
      .strictObject({
        pid: uint.describe("the process started (the app's pid, or its ancestor when it started through a wrapper)"),
        desktopId: str.nullable().describe("the installed entry it was started from"),
        executable: str.describe("the program exec'd"),
        args: z.array(str).describe("its arguments as started, argsAdded included"),
        argsAdded: z.array(str).describe("arguments added for accessibility (--force-renderer-accessibility for Chromium-family apps)"),
        envAdded: z.array(str).describe("environment variables set for accessibility (names only)"),
        handedOff: z.boolean().describe("the started process exited at once and an instance already running (or started by the session) showed the window"),
      })
      .describe("what was started"),
    waitedMs: uint.describe("from the start to a window with an accessibility tree"),
    windowMs: uint.describe("from the start to its first window"),
    treeNodes: uint.describe("accessible nodes read in the window when it counted as ready (more than the frame)"),
  }),
  activate: z.strictObject({
    app: AppRef,
    windowId: uint,
    activated: z.literal(true).describe("the window (or a dialog of it) holds the input focus, read back"),
    wasMinimized: z.boolean(),
    detail: str.describe("what was asked of the window manager and what was read back"),
  }),
  quit: z.strictObject({
    app: AppRef,
    exited: z.boolean().describe("the process ended within the wait"),
    windowsClosed: uint.describe("windows that went after the close request"),
    windowsLeft: z.array(z.strictObject({ windowId: uint, title: str })).describe("windows still open after the wait (a 'save changes?' dialog, a window that refused)"),
    waitedMs: uint,
  }),
  // ---- end lifecycle

  // ---- issue 13: clipboard
  "clipboard-get": z.strictObject({
    selection: z.enum(["clipboard", "primary"]),
    text: str.nullable().describe("the text; null when the selection is empty or holds no text"),
    bytes: uint.describe("size of the text the owner offered, in bytes"),
    truncated: z.boolean().describe("more than --max-bytes: the text was cut"),
    owner: z
      .strictObject({ name: str.nullable().describe("the owner app's name (its process name when it is no listed app)"), pid: uint.nullable() })
      .nullable()
      .describe("who holds the selection; null when nothing does"),
    targets: z.array(str).describe("the formats the owner offers, by the platform's names"),
  }),
  "clipboard-set": z.strictObject({
    selection: z.enum(["clipboard", "primary"]),
    set: z.literal(true).describe("the ownership (or the clearing) was confirmed"),
    cleared: z.boolean().describe("--clear: the selection is now empty"),
    bytes: uint.describe("size of the text set, in bytes (UTF-8)"),
    ownerPid: uint.nullable().describe("the process holding the text until another app takes the selection (null when cleared)"),
  }),
  // ---- end clipboard

  // ---- issue 13: menus
  "menu-list": MenuListResult,
  "menu-click": MenuClickResult,
  // ---- end menus
} as const satisfies Record<CommandName, z.ZodType>;

export type CommandResult<C extends CommandName> = z.output<(typeof RESULTS)[C]>;
/** The commands that are one action (a one-step program): their results share one shape. */
export type ActionCommand = { [C in CommandName]: CommandResult<C> extends { action: string } ? C : never }[CommandName];

/** A deep read-only view: what a handler may return for a result (it may hand out frozen arrays). */
export type ReadonlyDeep<T> = T extends (infer U)[] ? readonly ReadonlyDeep<U>[] : T extends object ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> } : T;

/**
 * Envelopes that are no command's: `deckhand --version --json`, serve's
 * `cancel` and `status`, `deckhand trace show --json`. Kept apart so
 * RESULTS is exactly COMMANDS.
 */
export const EXTRA_RESULTS = {
  version: z.strictObject({ version: str }),
  cancel: z.strictObject({
    id: z.union([str, z.number()]).nullable().describe("the request cancelled"),
    cancelled: z.boolean().describe("false when no such request was in flight"),
  }),
  // ---- issue 13: serve status
  status: z.strictObject({
    inflight: z
      .array(
        z.strictObject({
          id: z.union([str, z.number()]).nullable().describe("the request's id (null: sent without one)"),
          command: str.describe("its command (computer: an adapter-mode call)"),
          startedAt: str.describe("ISO 8601"),
          elapsedMs: uint,
        }),
      )
      .describe("requests being handled now, oldest first"),
    recent: z
      .array(
        z.strictObject({
          id: z.union([str, z.number()]),
          command: str,
          ok: z.boolean(),
          code: ErrorCode.optional().describe("its error code when not ok"),
          finishedAt: str.describe("ISO 8601"),
        }),
      )
      .describe("requests with an id that finished within the replay window, newest first (at most 100): a retry of one under the same id is answered from it"),
  }),
  // ---- end serve status
  // ---- issue 16: `deckhand trace show DIR --json` (docs/trace.md)
  trace: z.strictObject({
    path: str.describe("the page written (absolute)"),
    programs: uint,
    steps: uint.describe("steps recorded"),
    failed: uint.describe("steps that failed (a refused one included)"),
    skippedLines: uint.describe("lines of trace.jsonl left out: not JSON, not a trace event, or cut short"),
  }),
} as const;

// ---------------------------------------------------------------- envelopes

/** Error details: flat facts, plus a failed program's evidence under its own keys. */
export const ErrorDetails = z
  .object({
    receipts: z.array(StepReceipt).optional().describe("a failed program: every step's receipt"),
    observation: AppState.optional().describe("a failed program: the final observation, when taken"),
    settle: Settle.optional(),
  })
  .catchall(FlatValue)
  .describe("flat facts (strings, numbers, booleans), never a secret");

export const ErrorBody = z
  .strictObject({
    code: ErrorCode,
    message: str,
    remediation: str.min(1).describe("what to do about it"),
    details: ErrorDetails,
  })
  .meta({ id: "Error", description: "why a command failed" });

export const ErrorEnvelope = z.strictObject({
  schemaVersion: z.literal(1),
  ok: z.literal(false),
  command: str.describe("the command, or deckhand for a routing failure"),
  error: ErrorBody,
});

export function okEnvelope<C extends CommandName>(command: C) {
  return z.strictObject({ schemaVersion: z.literal(1), ok: z.literal(true), command: z.literal(command), result: RESULTS[command] });
}

/** The image a screenshot-carrying MCP tool result shows, and how its pixels map to the screen. */
export const McpImage = z
  .strictObject({
    width: uint,
    height: uint,
    origin: z.strictObject({ x: z.number(), y: z.number() }),
    scaleX: z.number().positive(),
    scaleY: z.number().positive(),
  })
  .meta({ id: "McpImage", description: "MCP only: the attached image, and how its pixels map to the screen: screen x = origin.x + image x / scaleX (y likewise)" });

/**
 * An MCP tool's structuredContent: the envelope of its command (result when
 * ok, error when not) plus the attached image's map. One object (MCP wants
 * `type: object` at the top); the ok/result/error pairing is checked by parse.
 */
export function mcpOutputSchema<C extends CommandName>(command: C) {
  return z
    .strictObject({
      schemaVersion: z.literal(1),
      ok: z.boolean(),
      command: z.literal(command),
      result: RESULTS[command].optional().describe("when ok"),
      error: ErrorBody.optional().describe("when not ok"),
      image: McpImage.optional(),
    })
    .superRefine((v, ctx) => {
      if (v.ok && (v.result === undefined || v.error !== undefined)) ctx.addIssue({ code: "custom", message: "ok: true needs result and no error", path: ["result"] });
      if (!v.ok && (v.error === undefined || v.result !== undefined)) ctx.addIssue({ code: "custom", message: "ok: false needs error and no result", path: ["error"] });
    });
}

/**
 * One adapter-mode serve response (src/adapters/session.ts AdapterResponse,
 * docs/adapters.md): the vendor item to hand back, the deckhand steps that
 * ran, their receipt and the image's map.
 */
export const AdapterResponse = z.strictObject({
  schemaVersion: z.literal(1),
  ok: z.boolean(),
  command: z.literal("computer"),
  adapter: z.enum(["openai", "anthropic"]),
  output: z.record(str, z.unknown()).nullable().describe("the vendor's tool output item (free-form: the vendor's format)"),
  steps: z.array(stepSchema()).nullable().describe("the deckhand steps that ran, in screen pixels"),
  receipt: ProgramReceipt.nullable(),
  image: z
    .strictObject({
      width: uint,
      height: uint,
      map: z
        .strictObject({
          width: uint,
          height: uint,
          origin: z.strictObject({ x: z.number(), y: z.number() }),
          screenWidth: z.number(),
          screenHeight: z.number(),
          scaleX: z.number().positive(),
          scaleY: z.number().positive(),
          app: str.nullable(),
          windowId: uint,
          bounds: Rect.nullable(),
          capturedAt: str,
        })
        .nullable(),
      zoom: Rect.optional(),
      // ---- issue 14: set-of-marks (serve --marks)
      marks: z
        .strictObject({ count: uint.describe("boxes drawn"), snapshotId: str.describe("the snapshot whose element indices the numbers are") })
        .optional()
        .describe("serve --marks: the image is the set-of-marks one"),
      // ---- end set-of-marks
    })
    .nullable(),
  pointer: z.strictObject({ x: z.number(), y: z.number(), screen: z.strictObject({ x: z.number(), y: z.number() }) }).optional(),
  error: ErrorBody.optional(),
});

/** JSON Schema of a result schema: its output side (what deckhand prints), draft-07 as MCP clients validate it. */
export function resultJsonSchema(schema: z.ZodType): Record<string, unknown> {
  return z.toJSONSchema(schema, { io: "output", target: "draft-7" }) as Record<string, unknown>;
}

export function isResultCommand(name: string): name is CommandName {
  return Object.hasOwn(RESULTS, name);
}

/** Zod issues as short lines: path, then message. */
export function formatIssues(error: z.ZodError, max = 20): string {
  const lines = error.issues.slice(0, max).map((i) => `  ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`);
  if (error.issues.length > max) lines.push(`  ... and ${error.issues.length - max} more`);
  return lines.join("\n");
}

/**
 * Check one envelope (a CLI line, a serve line without its `id`) against
 * the contract: ok:true against RESULTS[command] (or EXTRA_RESULTS), ok:false
 * against the error envelope. Returns null when it conforms, else the issues.
 * Adapter-mode responses (command "computer") against AdapterResponse.
 */
export function envelopeIssues(envelope: unknown): string | null {
  if (!envelope || typeof envelope !== "object") return "  (root): not an object";
  const e = envelope as { ok?: unknown; command?: unknown };
  if (e.command === "computer" && "adapter" in e) {
    const r = AdapterResponse.safeParse(envelope);
    return r.success ? null : formatIssues(r.error);
  }
  if (e.ok === false) {
    const r = ErrorEnvelope.safeParse(envelope);
    return r.success ? null : formatIssues(r.error);
  }
  const command = typeof e.command === "string" ? e.command : "";
  const result = isResultCommand(command)
    ? RESULTS[command]
    : Object.hasOwn(EXTRA_RESULTS, command)
      ? EXTRA_RESULTS[command as keyof typeof EXTRA_RESULTS]
      : null;
  if (!result) return `  command: ${JSON.stringify(command)} has no result schema`;
  const r = z.strictObject({ schemaVersion: z.literal(1), ok: z.literal(true), command: z.literal(command), result }).safeParse(envelope);
  return r.success ? null : formatIssues(r.error);
}
