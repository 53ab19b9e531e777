// Which window a program's keys go to when they name no element and the
// caller named no window: the one holding the app's keyboard focus.
//
// The default target of a step without an element is the app's front-most
// window (resolve.ts). For keys that is right on X11, where the front-most
// window of an app with a focused control is the active one. It is wrong
// where the two differ: on sway, an accessibility focus (`focus` on an
// element, or a click's focus) moves the toolkit's focus into a window that
// the compositor does not raise or focus (GTK 3 cannot present itself without
// an activation token), and keys aimed at the front-most window went to the
// app's other window. The agent meant "type into what has focus", so the
// focused element's window is the target, and the focus guard activates it.
import type { HelperPort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { Program, Step } from "../protocol/program.ts";
import type { WireWindow } from "../wire/messages.ts";
import { stepUsesElement } from "./compile.ts";

/** Steps whose keys land in whatever has focus when they name no element. */
const FOCUSED_KEY_ACTIONS: ReadonlySet<Step["action"]> = new Set(["type-text", "press-key", "hotkey", "hold-key", "paste"]);

/**
 * Whether the program's window is chosen by keyboard focus: it names no
 * window, and every step that acts is keys without an element (a program
 * with pointer steps keeps the front-most window, whose frame its points
 * were meant in).
 */
export function keysFollowFocus(program: Pick<Program, "windowId" | "windowIndex" | "steps">): boolean {
  if (program.windowId !== undefined || program.windowIndex !== undefined) return false;
  const acting = program.steps.filter((s) => s.action !== "wait");
  return acting.length > 0 && acting.every((s) => FOCUSED_KEY_ACTIONS.has(s.action) && !stepUsesElement(s));
}

/**
 * The app's window holding its focused element, when that is one of its
 * shown top-level windows (not a popup, not minimized); null otherwise
 * (nothing focused, no focused_element op, or a focus the caller's default
 * serves as well). One bounded helper request.
 */
export async function focusedWindow(engine: HelperPort, app: ResolvedApp, windows: readonly WireWindow[]): Promise<WireWindow | null> {
  const { supervisor, hello } = await engine.helper();
  if (!hello.capabilities.focused_element?.supported) return null;
  const { result } = await supervisor.request("focused_element", { pid: app.pid });
  if (!result.node || result.window_id === null) return null;
  return windows.find((w) => w.window_id === result.window_id && !w.popup && !w.minimized) ?? null;
}
