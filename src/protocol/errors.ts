// Public error codes. APPEND-ONLY: never reorder, rename or remove a code;
// agents match on these strings.
export const ERROR_CODES = Object.freeze([
  "UNSUPPORTED_PLATFORM",
  "PERMISSION_DENIED",
  "INVALID_ARGUMENTS",
  "APP_NOT_FOUND",
  "AMBIGUOUS_APP",
  "WINDOW_NOT_FOUND",
  "SNAPSHOT_REQUIRED",
  "SNAPSHOT_STALE",
  "ELEMENT_INDEX_NOT_FOUND",
  "ELEMENT_UNRESOLVABLE",
  "ACTION_UNSUPPORTED",
  "ACTION_FAILED",
  "SCREENSHOT_FAILED",
  "TIMEOUT",
  "INTERNAL",
  "HELPER_UNAVAILABLE",
  "HELPER_INCOMPATIBLE",
  "HELPER_PROTOCOL_ERROR",
  "POLICY_DENIED",
  "BLOCKED_URL",
  "CONFIRM_REQUIRED",
  "CONFIRM_DENIED",
  "FOREGROUND_REQUIRED",
  "PAUSED",
  "CANCELLED",
  "SCREENSHOT_REQUIRED",
  "COORDINATE_OUT_OF_BOUNDS",
  "FOCUS_MISMATCH",
  "HELPER_ERROR",
  "VERIFICATION_FAILED",
  "APP_EXITED",
  // A permission the helper could not determine (status unknown) before a
  // request that then failed the way a missing permission does.
  "PERMISSION_UNVERIFIED",
  // Issue 13: app lifecycle, menus, the cross-process foreground lease.
  "LAUNCH_FAILED",
  "LAUNCH_TIMEOUT",
  "MENU_ITEM_NOT_FOUND",
  "MENU_ITEM_DISABLED",
  "MENU_NOT_EXPOSED",
  "FOREGROUND_BUSY",
  // Issue 14: observation built for agents.
  "ELEMENT_BEYOND_HORIZON",
  "OCR_UNAVAILABLE",
] as const);
export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorDetails = Record<string, string | number | boolean>;

/** The one error type that crosses every layer; facts as fields, not prose to parse. */
export class DeckhandError extends Error {
  readonly code: ErrorCode;
  readonly remediation: string;
  readonly details: ErrorDetails;
  /**
   * A failed program's per-step receipts (and its final observation, if one
   * was taken): structured evidence that travels in the error envelope's
   * details next to the flat facts, so ok:false never loses what was sent.
   */
  program?: { receipts: unknown[]; observation?: unknown; settle?: unknown };
  constructor(code: ErrorCode, message: string, opts: { remediation?: string; details?: ErrorDetails } = {}) {
    super(message);
    this.name = "DeckhandError";
    this.code = code;
    this.remediation = opts.remediation ?? DEFAULT_REMEDIATION[code];
    this.details = opts.details ?? {};
  }
}

/** An error as it is published: an envelope's `error` (and, without remediation, a step receipt's). */
export interface PublicError {
  code: ErrorCode;
  message: string;
  remediation: string;
  details: ErrorDetails;
}

/**
 * Any thrown value as a DeckhandError: itself, or INTERNAL with a redacted
 * message (its own text may hold anything; `log` gets its stack, for stderr).
 */
export function toDeckhandError(err: unknown, log?: (msg: string) => void): DeckhandError {
  if (err instanceof DeckhandError) return err;
  log?.(err instanceof Error ? (err.stack ?? err.message) : String(err));
  return new DeckhandError("INTERNAL", "an unexpected error occurred");
}

/**
 * The one conversion of a thrown value to the public error shape (error
 * envelopes, step receipts, observation errors): code, message,
 * remediation, and details as a flat map of strings, numbers and booleans.
 */
export function publicError(err: unknown, log?: (msg: string) => void): PublicError {
  const e = toDeckhandError(err, log);
  const details: ErrorDetails = {};
  for (const [k, v] of Object.entries(e.details)) {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") details[k] = v;
  }
  return { code: e.code, message: e.message, remediation: e.remediation, details };
}

export const DEFAULT_REMEDIATION: Record<ErrorCode, string> = {
  UNSUPPORTED_PLATFORM: "Run deckhand on a platform with a helper (Linux X11, macOS, Windows).",
  PERMISSION_DENIED: "Run `deckhand permissions` and grant what it reports as denied.",
  INVALID_ARGUMENTS: "Check the command's flags with `deckhand <command> --help`.",
  APP_NOT_FOUND: "Run `deckhand list-apps` and use an executable, desktop id, exact name or pid:N.",
  AMBIGUOUS_APP: "Use the executable path, desktop id or pid:N of one candidate.",
  WINDOW_NOT_FOUND: "Run `deckhand list-windows --app <app>` and pick a live window.",
  SNAPSHOT_REQUIRED: "Run `deckhand get-app-state --app <app>` first.",
  SNAPSHOT_STALE: "Run `deckhand get-app-state --app <app>` and use the new snapshot.",
  ELEMENT_INDEX_NOT_FOUND: "Read indices from the current snapshot's elements[].index.",
  ELEMENT_UNRESOLVABLE: "Re-run get-app-state; do not retry with coordinates.",
  ACTION_UNSUPPORTED: "Run `deckhand capabilities` to see what this helper supports.",
  ACTION_FAILED: "Re-run get-app-state and check the element still accepts the action.",
  SCREENSHOT_FAILED: "Run `deckhand permissions`; the accessibility tree is still usable.",
  TIMEOUT: "The target or helper did not answer in time; re-observe before acting again.",
  INTERNAL: "This is a deckhand bug; the log on stderr has details.",
  HELPER_UNAVAILABLE: "Build or install the platform helper, or pass --helper PATH.",
  HELPER_INCOMPATIBLE: "Install a helper that speaks this deckhand's protocol major version.",
  HELPER_PROTOCOL_ERROR: "The helper broke the wire protocol; it was restarted. Re-observe and retry.",
  POLICY_DENIED: "The policy forbids this target or action; see `deckhand policy-check --app <app>`.",
  BLOCKED_URL: "The page's URL is blocked by policy.",
  CONFIRM_REQUIRED: "Configure a confirm hook (--confirm-cmd or DECKHAND_CONFIRM_CMD) for sensitive actions.",
  CONFIRM_DENIED: "The confirm hook refused this action.",
  FOREGROUND_REQUIRED: "This input needs the real pointer/keyboard: the operator must grant --allow-foreground.",
  PAUSED: "deckhand is paused; the operator runs `deckhand resume`.",
  CANCELLED: "The request was cancelled (serve `cancel`, or the MCP client aborted). details.delivery says whether anything was sent; re-observe before retrying.",
  SCREENSHOT_REQUIRED: "Take a screenshot first; coordinates are pixels of the last screenshot.",
  COORDINATE_OUT_OF_BOUNDS: "Use a point inside the last screenshot.",
  FOCUS_MISMATCH:
    "Another window holds keyboard focus, so no keys were sent (or sending stopped). Activate the target (`deckhand activate`, or the operator's --allow-foreground lets deckhand do it) and re-observe before retrying.",
  HELPER_ERROR: "The helper reported an error this deckhand does not know (details.helperCode); it may be newer than deckhand. Re-observe before retrying.",
  VERIFICATION_FAILED:
    "The action was sent (details.delivery) but reading the element back shows it did not take effect. Re-observe; with the operator's --allow-foreground, set-value falls back to focus + select-all + typing.",
  PERMISSION_UNVERIFIED:
    "A permission's state could not be determined before the request (details.permissions), and the request then failed as a missing permission would. Run `deckhand permissions`, grant what it lists, and retry.",
  APP_EXITED: "The target app exited (or left the accessibility bus) during the request; details.delivery says whether anything was sent. Restart the app and observe it again.",
  LAUNCH_FAILED: "The app could not be started (details.reason). Check `deckhand list-apps --all` for its desktop id or give the executable's path.",
  LAUNCH_TIMEOUT:
    "The app started (details.pid) but showed no window or no accessibility tree in time (details.stage). Give it longer (--timeout-ms), or see `deckhand permissions` for the accessibility switch.",
  MENU_ITEM_NOT_FOUND: "No item of the menu has that name at that level (details.available lists the names there). Run `deckhand menu list --app <app>` and use a path from it.",
  MENU_ITEM_DISABLED: "The item exists but is disabled now; nothing was activated. Change the app's state (select something, open a document) and retry.",
  MENU_NOT_EXPOSED: "The app exposes no menu there through accessibility (no menu bar, or the element advertises no context-menu action). Use the app's keyboard shortcuts or other controls instead.",
  FOREGROUND_BUSY:
    "Another deckhand process holds the foreground input lease (details.holderPid, details.holderCommand) past this request's deadline. Retry later; pointer and keyboard input is one at a time across processes.",
  ELEMENT_BEYOND_HORIZON:
    "The snapshot was truncated and this element lies beyond what it showed (details.nextOffset). Page on with `deckhand get-app-state --snapshot-id <id> --offset <nextOffset>`, or observe again with a larger --max-bytes / --max-nodes.",
  OCR_UNAVAILABLE: "No OCR engine is installed (deckhand uses tesseract: `apt-get install tesseract-ocr`), or it failed (details.reason). The tree and the screenshot are still usable.",
};
