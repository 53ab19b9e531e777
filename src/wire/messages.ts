// The helper wire protocol: the one source of truth for every frame and
// every op exchanged between deckhand and a platform helper. JSON Schema
// (helpers/protocol/schema.json) and golden vectors are generated from here.
import { z } from "zod";
import { NodeAction, RoleSchema, StatesSchema } from "./vocabulary.ts";
import { lazyTable } from "../lazy-table.ts";

// Every object here is open: unknown fields are dropped, not refused, so a
// helper of a newer minor version may add optional fields (same major:
// proceed). A new required field or a changed meaning is a new major.

// 1.1: input.focus (focus guard), input.pointer_guard, set_accessibility,
// focused_element, permission `advisory`, FOCUS_MISMATCH, POLICY_DENIED from a
// guard. A 1.0 helper lacks the capabilities and is refused those features.
// 1.2: settle (wait for an app's accessibility events to quiesce), popup
// windows (override-redirect menus, combo lists, tooltips) in list_windows and
// composited into a window screenshot, element_action's native_action,
// get_tree's calls count, list_apps' toolkit, VERIFICATION_FAILED and APP_EXITED.
// 2.0: a platform-neutral vocabulary (vocabulary.ts). A node's role, states
// and actions are neutral words, the native role and action names kept beside
// them (native_role, actions[].native); locators carry both roles; permission
// ids are neutral (native_id keeps the platform's); list_apps reports process
// identity (process_name, bundle_id, executable_deleted) so the orchestrator
// reads no /proc; screenshot takes max_width and region (the helper scales
// and crops, the orchestrator holds no image codec). A 1.x helper is refused.
// 2.1 (issue 13): ops for app lifecycle (installed apps, launch, window
// activate/restore/close), the clipboard (get, set, paste) and menus; a
// helper without them is refused those commands by capability, not by version.
// 2.2 (issue 14): screenshot's format (png, jpeg, webp) and quality, and the
// format written in its result (capability screenshot.formats); a 2.1 helper
// writes PNG only, and a request for JPEG or WebP is refused before it is sent.
// ---- issue 15: click
// 2.3 (issue 15): point_click (capability point_click): one op that
// hit-tests a point, checks the window there against the pointer guard and the
// names of the node there and its ancestors against the confirm decision's
// words, and clicks (an accessibility press for a press-like node, else
// XTest), or holds (sends nothing) and reports the chain. A 2.2 helper lacks
// it: the orchestrator hit-tests, reads and sends input in separate requests.
// settle's quiet window opens after a round trip to the app and closes with
// one (what the app sent before answering counts at once), so the
// orchestrator asks a shorter window; a 2.2 helper's plain window is only
// shorter.
// ---- end click
export const PROTOCOL_VERSION = [2, 3] as const;
/** Frames larger than this are refused unless the helper's hello lowers it. */
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

const uint = z.number().int().nonnegative();
const int = z.number().int();

export const Rect = z.object({ x: int, y: int, width: uint, height: uint });
export type Rect = z.infer<typeof Rect>;
// ---- issue 14: screenshot options
/** 2.2: a screenshot file's format (capability screenshot.formats). */
export const WireImageFormat = z.enum(["png", "jpeg", "webp"]);
export type WireImageFormat = z.infer<typeof WireImageFormat>;
// ---- end screenshot options

// Error codes a helper may put on the wire. A subset of the public codes.
export const HELPER_ERROR_CODES = Object.freeze([
  "INVALID_ARGUMENTS",
  "APP_NOT_FOUND",
  "WINDOW_NOT_FOUND",
  "ELEMENT_UNRESOLVABLE",
  "ACTION_UNSUPPORTED",
  "ACTION_FAILED",
  "PERMISSION_DENIED",
  "SCREENSHOT_FAILED",
  "TIMEOUT",
  "INTERNAL",
  "FOCUS_MISMATCH",
  // A guard the orchestrator set (input.pointer_guard) refused an event.
  "POLICY_DENIED",
  // 1.2: a mutation was sent but its read-back disagrees (delivery submitted).
  "VERIFICATION_FAILED",
  // 1.2: the target process exited (or left the accessibility bus) mid-request.
  "APP_EXITED",
  // 2.1 (issue 13): launch could not start the process (exec failed, no such desktop entry).
  "LAUNCH_FAILED",
] as const);

// Any string: a code this orchestrator does not know (a newer helper's) is
// surfaced as HELPER_ERROR with the helper's code in details, not a protocol error.
export const WireError = z.object({
  code: z.string().min(1),
  message: z.string(),
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
});

// How a capability was verified: "live" = exercised against the real OS by
// the helper's own test suite; "vectors" = only the wire codec is tested;
// "unverified" = implemented but not run anywhere we can see.
export const Verification = z.enum(["live", "vectors", "unverified"]);

export const Capability = z.object({
  supported: z.boolean(),
  verified: Verification,
  note: z.string().optional(),
});

/** Capability keys. An op or action is dispatched only if its key is supported. */
export const CAPABILITY_KEYS = Object.freeze([
  "permissions",
  "list_apps",
  "list_windows",
  "get_tree",
  "get_tree.cache_bulk",
  "screenshot",
  "screenshot.occluded",
  "screenshot.redact_secure",
  "hit_test",
  "action.click",
  "action.set_value",
  "action.type_text",
  "action.select_text",
  "action.focus",
  "action.scroll_into_view",
  "action.secondary",
  "input.pointer",
  "input.keyboard",
  "input.focus_guard",
  "input.pointer_guard",
  "focused_element",
  "watch_user_input",
  "set_accessibility",
  "settle",
  "screenshot.popups",
  // 2.0: screenshot's region and max_width (crop and scale in the helper).
  "screenshot.scale",
  // ---- 2.2 (issue 14) screenshot options: screenshot's format and quality.
  "screenshot.formats",
  // ---- end screenshot options
  // ---- 2.1 (issue 13) app lifecycle
  // Installed apps (list_installed); starting one (launch, launch_status); a
  // window's activate / restore / close (window_op).
  "list_installed",
  "launch",
  "window_op",
  // ---- end lifecycle

  // ---- 2.1 (issue 13) clipboard
  "clipboard.get",
  "clipboard.set",
  "clipboard.paste",
  // ---- end clipboard

  // ---- 2.1 (issue 13) menus
  // menu_tree: a window's menu bar (or a node's subtree), closed menus included.
  "menu_tree",
  // menu_close: close a menu opened through accessibility, through accessibility.
  "menu_close",
  // ---- end menus

  // ---- issue 15: click
  // point_click: hit-test, guard, name check and click of a point in one op (2.3).
  "point_click",
  // ---- end click
] as const);
export type CapabilityKey = (typeof CAPABILITY_KEYS)[number];

export const Hello = z.object({
  type: z.literal("hello"),
  protocol: z.tuple([uint, uint]),
  helper: z.object({
    name: z.string(),
    version: z.string(),
    platform: z.enum(["linux", "macos", "windows", "fake"]),
    backend: z.string(),
  }),
  capabilities: z.record(z.string(), Capability),
  limits: z.object({ max_frame_bytes: uint }).catchall(z.unknown()),
});
export type Hello = z.infer<typeof Hello>;

export const Request = z.object({
  type: z.literal("request"),
  id: uint,
  op: z.string(),
  deadline_ms: uint,
  args: z.record(z.string(), z.unknown()),
});
export type Request = z.infer<typeof Request>;

export const Delivery = z.enum(["not_dispatched", "submitted", "partial", "unknown"]);
export type Delivery = z.infer<typeof Delivery>;
export const Route = z.enum(["accessibility", "synthetic", "foreground_input"]);
export type Route = z.infer<typeof Route>;

export const Cleanup = z.object({
  keys_released: z.boolean(),
  buttons_released: z.boolean(),
  /** null when the op never moved the pointer. */
  pointer_restored: z.boolean().nullable(),
});

export const Receipt = z.object({
  delivery: Delivery,
  route: Route,
  cleanup: Cleanup,
});
export type Receipt = z.infer<typeof Receipt>;

export const Response = z.object({
  type: z.literal("response"),
  id: uint,
  ok: z.boolean(),
  result: z.record(z.string(), z.unknown()).optional(),
  error: WireError.optional(),
  receipt: Receipt.optional(),
});
export type Response = z.infer<typeof Response>;

export const Event = z.object({
  type: z.literal("event"),
  event: z.enum(["target_closed", "capture_revoked", "user_input", "permission_changed"]),
  data: z.record(z.string(), z.unknown()),
});
export type Event = z.infer<typeof Event>;

export const Cancel = z.object({ type: z.literal("cancel"), id: uint });

export const Frame = z.discriminatedUnion("type", [Hello, Request, Response, Event, Cancel]);
export type Frame = z.infer<typeof Frame>;

// ---------------------------------------------------------------- ops
// Each op: args schema, result schema, whether it mutates (gets a receipt).

export const PermissionCheck = z.object({
  /** A neutral id (vocabulary.ts PERMISSION_IDS) or, for a platform-only probe, the helper's own. */
  id: z.string(),
  /** 2.0: the platform's name for the same check (atspi_bus, AXIsProcessTrusted). */
  native_id: z.string().optional(),
  status: z.enum(["granted", "denied", "unknown"]),
  detail: z.string(),
  remediation: z.string(),
  /** true: a warning only; observation proceeds (e.g. IsEnabled false: GTK3 trees are readable anyway). */
  advisory: z.boolean().optional(),
});
export type PermissionCheck = z.infer<typeof PermissionCheck>;

export const WireApp = z.object({
  pid: uint,
  name: z.string(),
  /** Canonical executable path (Linux: /proc/PID/exe; symlinks resolved), null when unreadable. */
  executable: z.string().nullable(),
  /** 2.0: the executable was replaced or deleted on disk since the process started. */
  executable_deleted: z.boolean().optional(),
  /** 2.0: the name the OS records for the process (Linux comm, macOS process name, Windows image name). */
  process_name: z.string().nullable().optional(),
  /** 2.0: macOS bundle id, Windows package family name, Linux flatpak app id; null when none. */
  bundle_id: z.string().nullable().optional(),
  desktop_id: z.string().nullable(),
  accessible: z.boolean(),
  /** Process start witness: same pid + same start_time = same process (Linux: /proc/PID/stat starttime in clock ticks). */
  start_time: uint.nullable(),
  window_count: uint,
  /**
   * 1.2: the UI toolkit the process is built on, as far as the helper can
   * tell ("gtk3", "gtk4", "qt5", "qt6", "chromium", "firefox", "libreoffice",
   * "electron", ...); absent or null when unknown. Drives advice for an app
   * without an accessibility tree (how to switch its bridge on).
   */
  toolkit: z.string().nullable().optional(),
});
export type WireApp = z.infer<typeof WireApp>;

export const WireWindow = z.object({
  window_id: uint,
  /** 0 is the bottom of the stacking order. */
  z_index: uint,
  title: z.string(),
  bounds: Rect,
  minimized: z.boolean(),
  pid: uint.nullable(),
  /**
   * 1.2: an override-redirect window of the app (an open menu, a combo
   * box's list, a tooltip). Absent means false. A popup is never chosen as
   * an app's main window; it is composited into that window's screenshot.
   */
  popup: z.boolean().optional(),
});
export type WireWindow = z.infer<typeof WireWindow>;

export const WireNode = z.object({
  /** Child indices from the window's root accessible; [] is the root. */
  path: z.array(uint),
  /** 2.0: neutral role (vocabulary.ts ROLES); an unknown one reads as "other". */
  role: RoleSchema,
  /** 2.0: the platform's role name ("push button", "AXButton", "Button"): shown, never decided on. */
  native_role: z.string(),
  name: z.string(),
  description: z.string(),
  /** Always null for a secure (password) field: its value is never read. */
  value: z.string().nullable(),
  /** 2.0: neutral states (vocabulary.ts STATES); unknown ones are dropped. */
  states: StatesSchema,
  bounds: Rect.nullable(),
  /** 2.0: advertised actions, neutral name + native name, in the platform's order. */
  actions: z.array(NodeAction),
  identifier: z.string(),
  secure: z.boolean(),
  child_count: uint,
});
export type WireNode = z.infer<typeof WireNode>;

export const WireLocator = z.object({
  path: z.array(uint),
  /** Neutral role the element had when observed. */
  role: RoleSchema,
  /** 2.0: native role it had; the helper compares this one (more precise) when non-empty. */
  native_role: z.string(),
  name: z.string(),
  identifier: z.string(),
});
export type WireLocator = z.infer<typeof WireLocator>;

export const InputStep = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("move"), x: int, y: int }),
  z.object({ kind: z.literal("button"), button: z.enum(["left", "right", "middle", "back", "forward"]), down: z.boolean() }),
  z.object({
    kind: z.literal("click"),
    x: int,
    y: int,
    button: z.enum(["left", "right", "middle", "back", "forward"]),
    count: z.number().int().min(1).max(3),
    modifiers: z.array(z.string()),
  }),
  z.object({ kind: z.literal("key"), key: z.string(), down: z.boolean() }),
  z.object({ kind: z.literal("tap"), keys: z.array(z.string()).min(1), repeat: z.number().int().min(1).max(100) }),
  z.object({ kind: z.literal("type"), text: z.string() }),
  z.object({ kind: z.literal("scroll"), x: int.nullable(), y: int.nullable(), dx: int, dy: int }),
  z.object({ kind: z.literal("wait"), ms: z.number().int().min(0).max(10000) }),
]);
export type InputStep = z.infer<typeof InputStep>;

// ---- 2.1 (issue 13) clipboard
/** Which selection: the clipboard (copy / paste), or the primary selection (X: the last text selected). */
export const Selection = z.enum(["clipboard", "primary"]);
// ---- end clipboard

export const ElementActionName = z.enum([
  "click",
  "set_value",
  "type_text",
  "select_text",
  "focus",
  "scroll_into_view",
  "secondary",
]);

// Each op's schemas are built on its first use (src/lazy-table.ts): a one-shot
// CLI call sends two to five of these ops.
export const OPS = lazyTable({
  permissions: () =>
    ({
      mutates: false,
      capability: "permissions",
      args: z.object({}),
      result: z.object({ checks: z.array(PermissionCheck) }),
    }) as const,
  list_apps: () =>
    ({
      mutates: false,
      capability: "list_apps",
      args: z.object({}),
      result: z.object({ apps: z.array(WireApp) }),
    }) as const,
  list_windows: () =>
    ({
      mutates: false,
      capability: "list_windows",
      args: z.object({
        pid: uint.nullable(),
        /**
         * Also the app's popups where finding them costs calls into the app
         * (sway: its top-level accessibles that are shown menus, as no
         * compositor list has them); absent or false: only where they are
         * free (X11 lists its popup windows always).
         */
        popups: z.boolean().optional(),
      }),
      result: z.object({ windows: z.array(WireWindow) }),
    }) as const,
  get_tree: () =>
    ({
      mutates: false,
      capability: "get_tree",
      args: z.object({
        pid: uint,
        window_id: uint,
        max_depth: uint,
        max_children: uint,
        max_nodes: uint,
      }),
      result: z.object({
        nodes: z.array(WireNode),
        truncated: z.boolean(),
        source: z.enum(["cache", "walk", "scripted"]),
        /** 1.2: accessibility calls this read made into the app (each bounded in time; the total by a budget). */
        calls: uint.optional(),
      }),
    }) as const,
  screenshot: () =>
    ({
      mutates: false,
      capability: "screenshot",
      args: z.object({
        window_id: uint,
        /** Absolute path of the PNG to write (the orchestrator owns retention). */
        path: z.string(),
        /** Black out every visible secure field of this window before writing. */
        redact_secure: z.boolean(),
        /** Extra screen rectangles to black out. */
        redact: z.array(Rect),
        /**
         * 2.0: crop to this screen rectangle (clipped to the window) before
         * scaling; absent or null = the whole window. An adapter's zoom.
         */
        region: Rect.nullable().optional(),
        /**
         * 2.0: scale down (never up, aspect kept) so the PNG is at most this
         * many pixels wide; absent or null = native size. `scale` in the result
         * says what was applied.
         */
        max_width: z.number().int().min(16).nullable().optional(),
        // ---- issue 14: screenshot options
        /** 2.2: the file's format (screenshot.formats); absent or null = png. */
        format: WireImageFormat.nullable().optional(),
        /** 2.2: jpeg / webp quality 1-100; absent or null = 80. Ignored for png. */
        quality: z.number().int().min(1).max(100).nullable().optional(),
        // ---- end screenshot options
      }),
      result: z.object({
        path: z.string(),
        width: uint,
        height: uint,
        /** Screen position of the image's top-left pixel. */
        origin: z.object({ x: int, y: int }),
        /** Image pixels per screen pixel. */
        scale: z.number().positive(),
        method: z.string(),
        redacted: uint,
        /** 1.2: how many of the app's popup windows were composited over the window. */
        popups: uint.optional(),
        // ---- issue 14: screenshot options
        /** 2.2: the format of the file written (absent from a 2.1 helper: png). */
        format: WireImageFormat.optional(),
        // ---- end screenshot options
      }),
    }) as const,
  hit_test: () =>
    ({
      mutates: false,
      capability: "hit_test",
      args: z.object({ x: int, y: int }),
      result: z.object({
        pid: uint.nullable(),
        window_id: uint.nullable(),
        node: WireNode.nullable(),
      }),
    }) as const,
  element_action: () =>
    ({
      mutates: true,
      capability: null, // per action: "action.<name>"
      args: z.object({
        pid: uint,
        window_id: uint,
        locator: WireLocator,
        action: ElementActionName,
        /** set_value: the new value. type_text: text inserted at the caret. */
        text: z.string().nullable(),
        /** select_text: character offsets [start, end). */
        start: uint.nullable(),
        end: uint.nullable(),
        /** secondary: the native name of the advertised action to invoke (a node's actions[].native). */
        action_name: z.string().nullable(),
      }),
      result: z.object({
        performed: z.boolean(),
        /** A read-back predicate the helper actually checked, if any. */
        verified: z.boolean().nullable(),
        verification: z.string().nullable(),
        /** 1.2: the platform action that ran (click: the press-like action chosen by name). */
        native_action: z.string().nullable().optional(),
      }),
    }) as const,
  input: () =>
    ({
      mutates: true,
      capability: null, // input.pointer and/or input.keyboard by step kind
      args: z.object({
        steps: z.array(InputStep).min(1),
        restore_pointer: z.boolean(),
        /**
         * Focus guard (capability input.focus_guard): before every keyboard
         * step, and before each chunk of typed text, the window holding input
         * focus must be `window_id` (or a dialog of the same pid transient for
         * it); else FOCUS_MISMATCH and nothing more is sent. `activate`: at the
         * first check only, ask the window manager to activate it (EWMH) and
         * wait for the focus change.
         */
        focus: z.object({ window_id: uint, pid: uint, activate: z.boolean() }).nullable().optional(),
        /**
         * Pointer guard (capability input.pointer_guard): before every pointer
         * event (move, click, button, scroll; at its point, or at the pointer's
         * current position when the step has none) the topmost window at that
         * point, its window-manager frame counted as part of it, must be one of
         * `windows` (top-level client window ids). Anything else, the root
         * included, is POLICY_DENIED with details.reason "point-outside-target"
         * and nothing more is sent (held buttons and keys released).
         */
        pointer_guard: z.object({ pid: uint, windows: z.array(uint) }).nullable().optional(),
      }),
      result: z.object({
        steps_completed: uint,
        /** Characters typed by `type` steps. */
        chars_sent: uint.optional(),
        /** The focus window the guard accepted (null when no guard ran). */
        focus_window: uint.nullable().optional(),
      }),
    }) as const,
  watch_user_input: () =>
    ({
      mutates: false,
      capability: "watch_user_input",
      args: z.object({ enabled: z.boolean() }),
      result: z.object({ watching: z.boolean() }),
    }) as const,
  focused_element: () =>
    ({
      mutates: false,
      capability: "focused_element",
      /**
       * The node that holds keyboard focus in app `pid`, read live in one
       * bounded query (not from a pruned tree): secure fields included (their
       * value nil). Null when the app has no focused node.
       */
      args: z.object({ pid: uint }),
      result: z.object({ window_id: uint.nullable(), node: WireNode.nullable() }),
    }) as const,
  set_accessibility: () =>
    ({
      mutates: false,
      capability: "set_accessibility",
      /** Switch the session's accessibility flag (Linux: org.a11y.Status IsEnabled). */
      args: z.object({ enabled: z.boolean() }),
      result: z.object({ enabled: z.boolean(), previous: z.boolean().nullable() }),
    }) as const,
  settle: () =>
    ({
      mutates: false,
      capability: "settle",
      /**
       * 1.2: wait until the app has emitted no accessibility event for
       * quiet_ms, or max_ms passed. Taken after an action, before the
       * observation that should show its effect.
       */
      args: z.object({ pid: uint, quiet_ms: z.number().int().min(1).max(5000), max_ms: z.number().int().min(1).max(10000) }),
      result: z.object({
        waited_ms: uint,
        /** Events seen from the app while waiting. */
        events: uint,
        /** false: max_ms passed while events still arrived. */
        settled: z.boolean(),
      }),
    }) as const,
  // ---- 2.1 (issue 13) app lifecycle
  list_installed: () =>
    ({
      mutates: false,
      capability: "list_installed",
      /**
       * Apps installed for the user (Linux: the .desktop entries of the XDG
       * data dirs, earlier dirs winning by id; hidden entries and entries
       * whose TryExec fails left out; applications only). Bounded by the
       * helper (entries and bytes read per entry).
       */
      args: z.object({}),
      result: z.object({
        apps: z.array(
          z.object({
            /** The platform's id of the entry (Linux: the desktop file id, "org.xfce.mousepad.desktop"). */
            desktop_id: z.string(),
            name: z.string(),
            /** Absolute path of the program the entry starts, as found now; null when it is not found. */
            executable: z.string().nullable(),
            /** The entry's command line, split into arguments, placeholders for files and URLs left out. */
            exec: z.array(z.string()),
            /** The app runs inside a terminal. */
            terminal: z.boolean(),
            /** The entry asks not to be shown in menus (a helper, a settings panel, a MIME handler). */
            no_display: z.boolean(),
          }),
        ),
      }),
    }) as const,
  launch: () =>
    ({
      // Mutating: a lost helper mid-launch is never retried (the app may have started).
      mutates: true,
      capability: "launch",
      /**
       * Start a program detached from the helper (its own session, no
       * inherited pipes, stdin/stdout/stderr the null device; exec'd directly,
       * never through a shell), with the environment its toolkit needs to be
       * accessible added (names in env_added) and, for a browser engine that
       * needs it, an argument (args_added). Reaped when it exits (no zombie).
       * Exec failure: LAUNCH_FAILED details.reason (not-found,
       * not-executable, exec-failed). The receipt's route is "synthetic".
       */
      args: z.object({
        /** Absolute path, or a bare name looked up on the helper's PATH. */
        executable: z.string().min(1),
        args: z.array(z.string()).max(256),
        /** The installed entry it is started as (list_installed), or null. */
        desktop_id: z.string().nullable(),
      }),
      result: z.object({
        pid: uint,
        /** The process's start witness, comparable to list_apps' start_time. */
        start_time: uint.nullable(),
        env_added: z.array(z.string()),
        args_added: z.array(z.string()),
      }),
    }) as const,
  launch_status: () =>
    ({
      mutates: false,
      capability: "launch",
      /** Whether a process this helper launched still runs, and how it ended. known false: not one of its launches. */
      args: z.object({ pid: uint }),
      result: z.object({
        known: z.boolean(),
        running: z.boolean(),
        /** Exit code when it exited; null while it runs, when it was killed by a signal, or when unknown. */
        exit_code: int.nullable(),
        /** The signal that ended it, if one did. */
        signal: int.nullable(),
      }),
    }) as const,
  window_op: () =>
    ({
      mutates: true,
      capability: "window_op",
      /**
       * activate: ask the window manager to raise and focus the window, then
       * read the input focus back (done: the window holds it). restore:
       * un-minimize it (done: shown, not hidden, read back). close: ask the
       * app to close it as the window's close button would (the app's own
       * close protocol where it has one, else the window manager's close),
       * never killing anything (done: the window is gone). Waits are bounded.
       * The receipt's route is "synthetic" (window-manager messages).
       */
      args: z.object({ window_id: uint, op: z.enum(["activate", "restore", "close"]) }),
      result: z.object({ window_id: uint, done: z.boolean(), detail: z.string() }),
    }) as const,
  // ---- end lifecycle

  // ---- 2.1 (issue 13) clipboard
  clipboard_get: () =>
    ({
      mutates: false,
      capability: "clipboard.get",
      /**
       * Who owns a selection, who has the keyboard focus, what the owner
       * offers, and (read_text) its text. The orchestrator asks twice: the
       * metadata first, its policy checks, then the text with expect_owner.
       */
      args: z.object({
        selection: Selection,
        /** false: no conversion of the text (owner, focus, targets only). */
        read_text: z.boolean(),
        /** Most bytes of text returned (the rest: truncated). */
        max_bytes: uint,
        /** Read the text only while this window still owns the selection; else text is null. */
        expect_owner: uint.nullable().optional(),
      }),
      result: z.object({
        /**
         * The owner's window (X: the selection owner); null when nothing owns it.
         * Wayland names no owner: there it is the number of the selection the
         * helper's data-control device saw (another copy: another number), so
         * expect_owner still means "unchanged since checked".
         */
        owner_window: uint.nullable(),
        /** The owner's pid, null when unknown (a client with no window carrying a pid; always on Wayland). */
        owner_pid: uint.nullable(),
        /** The owner process's name as the OS records it, when its pid is known. */
        owner_name: z.string().nullable().optional(),
        /** The top-level window holding the keyboard focus, and its pid. */
        focus_window: uint.nullable(),
        focus_pid: uint.nullable(),
        /** What the owner offers, by the platform's names (X: atom names). */
        targets: z.array(z.string()),
        /** The owner marks the content secret (X: the x-kde-passwordManagerHint target password managers add); its text is never read. */
        secret_hint: z.boolean(),
        /** The text (read_text only); null when the owner offers none, or it is secret. */
        text: z.string().nullable(),
        /** Size of the text the owner offered, in bytes (0 when not read). */
        bytes: uint,
        truncated: z.boolean(),
      }),
    }) as const,
  clipboard_set: () =>
    ({
      mutates: false,
      capability: "clipboard.set",
      /**
       * Put text on a selection, held by a process that outlives the helper
       * (the selection dies with its owner); text null clears the selection.
       */
      args: z.object({ selection: Selection, text: z.string().nullable() }),
      result: z.object({
        /** The process now holding the text (null when cleared). */
        owner_pid: uint.nullable(),
        /** true only once the ownership (or the clearing) was confirmed. */
        set: z.boolean(),
      }),
    }) as const,
  paste: () =>
    ({
      mutates: true,
      capability: "clipboard.paste",
      /**
       * Own the selection with `text`, send `chord` under the focus guard (as
       * input's `focus`: FOCUS_MISMATCH and nothing sent, the clipboard
       * untouched, when the focus is elsewhere), answer the target's requests
       * until one got the text and ~150 ms passed quiet (or wait_ms), then put
       * back the previous text (restore).
       */
      args: z.object({
        selection: Selection,
        text: z.string(),
        chord: z.array(z.string()).min(1),
        focus: z.object({ window_id: uint, pid: uint, activate: z.boolean() }),
        restore: z.boolean(),
        wait_ms: z.number().int().min(0).max(10000),
      }),
      result: z.object({
        /** Requests answered with the text; 0: the target never asked for it. */
        served: uint,
        /** text: the previous text is back; cleared: there was none; not_restorable: it was not text (or secret): the selection is left empty; skipped: restore false, or another client took the selection meanwhile. */
        restored: z.enum(["text", "cleared", "not_restorable", "skipped"]),
        chars: uint,
        focus_window: uint.nullable().optional(),
      }),
    }) as const,
  // ---- end clipboard

  // ---- 2.1 (issue 13) menus
  menu_tree: () =>
    ({
      mutates: false,
      capability: "menu_tree",
      /**
       * A window's menu bar(s) (root null), or one node's subtree (root: an
       * open popup's node, a submenu), walked whether its menus are open or
       * not: the toolkit keeps a closed menu's items as accessibles, which
       * get_tree (showing nodes only) leaves out. Paths are from the window's
       * root as get_tree's are, so an item's locator works with element_action.
       * A window whose accessible the toolkit does not list (a popup it keeps
       * apart) has no roots.
       */
      args: z.object({
        pid: uint,
        window_id: uint,
        root: WireLocator.nullable(),
        max_nodes: z.number().int().min(1).max(5000),
        max_depth: z.number().int().min(1).max(32),
      }),
      result: z.object({
        /** The menu bars found (root null), or the root node; empty: no menu bar. */
        roots: z.array(WireNode),
        /** Every node below the roots, pre-order; separators left out. */
        items: z.array(
          z.object({
            node: WireNode,
            /** 0: a child of a root. */
            depth: uint,
            /** In deckhand's key names ("ctrl+s"); null: none, or the toolkit does not say (a Qt item with a mnemonic). */
            shortcut: z.string().nullable(),
            /** item: activated by a press; submenu: opens a menu; group: the menu a submenu's opener holds as a node of its own (its children are the submenu's). */
            kind: z.enum(["item", "submenu", "group"]),
            /** A check or radio item: without the checked state it is unchecked. */
            checkable: z.boolean(),
            /** On screen now: its menu is open. */
            showing: z.boolean(),
          }),
        ),
        truncated: z.boolean(),
        calls: uint,
      }),
    }) as const,
  menu_close: () =>
    ({
      mutates: true,
      capability: "menu_close",
      /**
       * Close the menu `opener` opened (a menu bar's entry, a submenu's opener),
       * through accessibility only (no input): closed says whether its items
       * left the screen; method what was called (null: nothing was open, or no
       * accessibility way exists, then closed is false).
       */
      args: z.object({ pid: uint, window_id: uint, opener: WireLocator }),
      result: z.object({ closed: z.boolean(), method: z.string().nullable() }),
    }) as const,
  // ---- end menus

  // ---- issue 15: click
  point_click: () =>
    ({
      mutates: true,
      capability: "point_click",
      /**
       * 2.3: a click at a screen point, decided and sent in one request. The
       * helper finds the top-level window at the point (the X server's own
       * hit test, as the pointer guard does); it must be one of `windows` and
       * belong to `pid`, else POLICY_DENIED "point-outside-target" and nothing
       * is sent. It hit-tests the point through accessibility (the node there,
       * and the chain of its ancestors up to the window's root). Then, in this
       * order: with `expect`, the chain must still be that one (path, native
       * role and name of every level below the root), else it holds
       * ("changed"); without it, when the name of the node or of an ancestor
       * below the root may contain one of `hold_words` (ASCII case-insensitive
       * substring; any name with a character outside ASCII counts as may), it
       * holds ("name"), and with hold_words and no node at the point it holds
       * ("unknown"). Holding sends nothing and reports the chain (`ancestors`
       * with full nodes). Else it clicks: with `press`, a left single click on
       * a node whose neutral role is one of press.roles and whose first action
       * is one of press.actions runs that node's press-like action through
       * accessibility (route accessibility, as element_action click); anything
       * else is XTest input (move, `count` clicks of `button`, the pointer put
       * back when `restore_pointer`), every event under the pointer guard
       * {pid, windows} (route foreground_input). The window test is the
       * pointer guard's: one of `windows`, or an override-redirect popup
       * (menu, tooltip) of `pid`.
       */
      args: z.object({
        x: int,
        y: int,
        pid: uint,
        button: z.enum(["left", "right", "middle", "back", "forward"]),
        count: z.number().int().min(1).max(3),
        /** The target's windows policy allows (the pointer guard's). */
        windows: z.array(uint),
        /** Route a left single click on a press-like node through accessibility; null: always input. */
        press: z.object({ roles: z.array(z.string()), actions: z.array(z.string()) }).nullable(),
        /** Hold when a name in the chain may contain one of these (lowercase ASCII); [] never holds on names. */
        hold_words: z.array(z.string()),
        /** After a hold: the chain (node last) the click is for; any difference holds ("changed"). */
        expect: z.array(z.object({ path: z.array(uint), native_role: z.string(), name: z.string() })).nullable(),
        restore_pointer: z.boolean(),
      }),
      result: z.object({
        /** What happened: "pressed" (accessibility), "clicked" (input), "held" (nothing sent). */
        outcome: z.enum(["pressed", "clicked", "held"]),
        /**
         * Why it held: "name" (a name in the chain may hold a word), "changed"
         * (the chain is not `expect`), "unknown" (hold_words given and no
         * node at the point: nothing to judge it by).
         */
        held: z.enum(["name", "changed", "unknown"]).nullable(),
        /** The window at the point (one of `windows`). */
        window_id: uint,
        /** The node at the point (null: none, e.g. an app without a tree). */
        node: WireNode.nullable(),
        /**
         * When it held: the node's ancestors below the window's root,
         * outermost first, as full nodes (what the confirm decision reads).
         * Otherwise empty (only their names were read, for the check).
         */
        ancestors: z.array(WireNode),
        /** pressed: the platform action that ran, and its read-back. */
        native_action: z.string().nullable(),
        verified: z.boolean().nullable(),
        verification: z.string().nullable(),
      }),
    }) as const,
  // ---- end click
});

export type OpName = keyof typeof OPS;
export const OP_NAMES = Object.freeze(Object.keys(OPS) as OpName[]);
export type OpArgs<O extends OpName> = z.infer<(typeof OPS)[O]["args"]>;
export type OpResult<O extends OpName> = z.infer<(typeof OPS)[O]["result"]>;
