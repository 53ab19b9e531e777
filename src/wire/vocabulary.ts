// The platform-neutral vocabulary every helper maps its accessibility API to
// (AT-SPI on Linux, AX on macOS, UI Automation on Windows). The orchestrator's
// logic (tree text, secure fields, press routing, policy) reads only these
// values; a node's native words travel beside them (native_role, an action's
// `native`) for display and for the helper's own use, never for decisions.
//
// Extend with care: a new value is a new minor protocol version, and an
// orchestrator that does not know it reads a role as "other" and drops a
// state or action it does not know (see messages.ts). Never rename or reuse.
import { z } from "zod";

export const ROLES = Object.freeze([
  "button",
  "toggle_button",
  "checkbox",
  "radio",
  "text_field",
  /** A password / secure entry: its value is never read, nothing is typed into it. */
  "secure_text_field",
  "text_area",
  "combo_box",
  "list",
  "list_item",
  "menu_bar",
  "menu",
  "menu_item",
  "tab",
  "tab_list",
  "slider",
  "spin_button",
  "scroll_bar",
  "link",
  "image",
  "table",
  "row",
  "cell",
  "column_header",
  "tree",
  "tree_item",
  "window",
  "dialog",
  "group",
  "toolbar",
  "label",
  "heading",
  "document",
  /** Web content (a browser's page): Return in one of its fields may submit a form. */
  "web_document",
  /** A web form. */
  "form",
  "progress_bar",
  "separator",
  "status_bar",
  /** Only groups other nodes (a filler, panel or scroll pane; an unnamed AXGroup; a UIA Pane): no element index of its own unless it has a value or an action or can take focus (a name alone does not make one). */
  "container",
  "other",
] as const);
export type Role = (typeof ROLES)[number];

export const STATES = Object.freeze([
  "focused",
  "focusable",
  "checked",
  /** Tri-state checkbox in its third state. */
  "mixed",
  "pressed",
  "enabled",
  "editable",
  "read_only",
  "multi_line",
  "selected",
  "selectable",
  "expandable",
  "expanded",
  "collapsed",
  "visible",
  "offscreen",
  "secure",
  "modal",
  /** The button Enter activates in its dialog. */
  "default",
  "required",
  "invalid",
  "busy",
] as const);
export type State = (typeof STATES)[number];

/**
 * What an advertised accessibility action does, named neutrally. `press`:
 * the control's primary action (AT-SPI click/press/activate/jump, AXPress,
 * UIA Invoke). A helper maps every native action it reports; one it cannot
 * name is `other` (its native name still lets a caller invoke it).
 */
export const ACTIONS = Object.freeze([
  "press",
  "toggle",
  "expand",
  "collapse",
  "expand_collapse",
  "select",
  "show_menu",
  "increment",
  "decrement",
  "focus",
  "scroll_into_view",
  "other",
] as const);
export type ActionName = (typeof ACTIONS)[number];

/**
 * Permission check ids, neutral. A helper may report more (a newer one's, or
 * a platform-only probe): the orchestrator shows them and gates on none of them.
 * `native_id` on the check keeps the platform's word (atspi_bus, AXIsProcessTrusted).
 */
export const PERMISSION_IDS = Object.freeze([
  /** A display / window server to talk to (X display, WindowServer session, interactive desktop). */
  "display",
  /** Reading accessibility trees (AT-SPI bus, AX trust, UIA). */
  "accessibility",
  /** The session-wide accessibility switch (org.a11y.Status IsEnabled); advisory. */
  "accessibility_enabled",
  /** Synthetic input (XTest, CGEvent post, SendInput across integrity levels). */
  "input_injection",
  /** Capturing window pixels (ScreenCaptureKit / Screen Recording, WGC). */
  "screen_capture",
  /** Capturing windows other windows cover (X Composite). */
  "screen_capture_occluded",
  /** Fast capture path (X MIT-SHM). */
  "screen_capture_fast",
  /** Watching the user's own input (XInput2, Input Monitoring). */
  "input_monitoring",
] as const);
export type PermissionId = (typeof PERMISSION_IDS)[number];

/** Permissions without which observation cannot start: a denied one is PERMISSION_DENIED. */
export const GATING_PERMISSIONS: readonly PermissionId[] = Object.freeze(["display", "accessibility"]);

// Parsers that tolerate a newer helper's words (same major): an unknown role
// reads as "other", unknown states and permission ids pass through unchanged
// in their own field but drive nothing.
export const RoleSchema = z.enum(ROLES).catch("other");
export const StateSchema = z.enum(STATES);
/** Unknown states are dropped, not refused. */
// (JSON Schema is generated for the input side: an array of known states or any string.)
export const StatesSchema = z
  .array(z.union([StateSchema, z.string()]))
  .pipe(z.transform((xs) => xs.filter((x): x is State => (STATES as readonly string[]).includes(x))));
export const ActionNameSchema = z.enum(ACTIONS).catch("other");
export const NodeAction = z.object({
  name: ActionNameSchema,
  /** The platform's own action name (AT-SPI "click", AX "AXPress", UIA "Invoke"). */
  native: z.string(),
});
export type NodeAction = z.infer<typeof NodeAction>;

/** Roles whose primary action is a press: routed through the accessibility action, not a pointer click. */
export const PRESS_ROLES: readonly Role[] = Object.freeze([
  "button",
  "toggle_button",
  "checkbox",
  "radio",
  "menu_item",
  "menu",
  "link",
  "tab",
  "combo_box",
  "spin_button",
]);
/** Actions that are a control's primary press. */
export const PRESS_ACTIONS: readonly ActionName[] = Object.freeze(["press", "toggle"]);
/** Roles that take typed text. */
export const TEXT_ROLES: readonly Role[] = Object.freeze(["text_field", "secure_text_field", "text_area", "spin_button"]);
/** Roles that are a dialog of their own (sensitive-action detection). */
export const DIALOG_ROLES: readonly Role[] = Object.freeze(["dialog"]);
