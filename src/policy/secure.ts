// Secure (password) fields: deckhand never writes into, selects in, or sends
// keys to one, and never reads its value (helpers report value = null).
import { DeckhandError } from "../protocol/errors.ts";

/** Actions refused on a secure field. Clicking or focusing one is allowed. */
export const SECURE_REFUSED_ACTIONS = Object.freeze(["set_value", "type_text", "select_text", "press_key", "hotkey"] as const);
export type SecureRefusedAction = (typeof SECURE_REFUSED_ACTIONS)[number];

/** `role` and `states` are neutral (src/wire/vocabulary.ts). */
export type SecureTarget = { role: string; secure: boolean; states?: readonly string[] };

/** Whether an element is a secure field: the helper's flag, or (a backstop) the neutral secure role or state. */
export function isSecureElement(element: SecureTarget): boolean {
  return element.secure === true || element.role === "secure_text_field" || (element.states?.includes("secure") ?? false);
}

/** Normalise CLI spellings ("set-value") to action names ("set_value"). */
function actionName(action: string): string {
  return action.trim().toLowerCase().replace(/-/g, "_");
}

/**
 * Throw POLICY_DENIED when `action` would put input into (or select text in)
 * a secure field. `element` is the action's target; for key input and
 * hotkeys it is the focused element. The error never carries the value.
 */
export function assertNotSecureTarget(action: string, element: SecureTarget | null | undefined): void {
  if (!element) return;
  const name = actionName(action);
  if (!(SECURE_REFUSED_ACTIONS as readonly string[]).includes(name)) return;
  if (!isSecureElement(element)) return;
  throw new DeckhandError("POLICY_DENIED", `${name} into a secure (password) field is refused`, {
    remediation: "deckhand never types into, selects in or reads password fields; the operator must do it.",
    details: { source: "builtin", rule: "builtin:secure_field", action: name },
  });
}
