// The acceptance matrix: typed rows of environment x target app x action x
// route -> expected outcome, with the oracles each row checks. Pure data:
// test/live/matrix.test.ts runs the rows, scripts/gen-support.ts turns rows
// plus the last run's results into docs/support.md.
import type { ErrorCode } from "../../../src/protocol/errors.ts";

export type MatrixApp = "fixture" | "gtk3-widget-factory" | "mousepad";
export type MatrixRoute = "accessibility" | "foreground_input" | "none";

export interface MatrixRow {
  id: string;
  environment: "linux-x11 (Xvfb + openbox + AT-SPI)";
  app: MatrixApp;
  action: string;
  route: MatrixRoute;
  /** "delivered", or the exact refusal code. */
  expect: "delivered" | ErrorCode;
  /** Operator grants the row runs with. */
  grant: "none" | "foreground" | "confirm-hook";
  oracles: string[];
}

const ENV = "linux-x11 (Xvfb + openbox + AT-SPI)" as const;
const row = (r: Omit<MatrixRow, "environment">): MatrixRow => ({ environment: ENV, ...r });

const UNCHANGED = ["focus, stacking order and pointer unchanged"];

export const ROWS: readonly MatrixRow[] = Object.freeze([
  // ---- fixture app, background (accessibility) actions
  row({ id: "fixture.click.element", app: "fixture", action: "click --element-index (OK button)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["exactly one click reached OK", "no other control received anything", ...UNCHANGED] }),
  row({ id: "fixture.set-value.entry", app: "fixture", action: "set-value (Name entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Name holds exactly the value", "no other field changed", "verification.verified is true (read back)", ...UNCHANGED] }),
  row({ id: "fixture.type-text.replaces-selection", app: "fixture", action: "select-text [0,3) then type-text (Name entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the selection was replaced, the rest kept", "no other field changed"] }),
  row({ id: "fixture.type-text.multiline", app: "fixture", action: "type-text (Notes text view)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the text landed in Notes and nowhere else", ...UNCHANGED] }),
  row({ id: "fixture.focus.entry", app: "fixture", action: "focus (Email entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Email received focus", "pointer unchanged", "(GTK presents the focused window: focus is the one element action that may change stacking)"] }),
  row({ id: "fixture.click.checkbox", app: "fixture", action: "click --element-index (Subscribe check box)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Subscribe toggled on exactly once", ...UNCHANGED] }),
  row({ id: "fixture.secondary.named-action", app: "fixture", action: "perform-secondary-action (Subscribe: its advertised action by name)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Subscribe toggled exactly once"] }),
  row({ id: "fixture.scroll.into-view", app: "fixture", action: "scroll --element-index (Row 150) into view", route: "accessibility", expect: "ACTION_FAILED", grant: "none", oracles: ["GTK3 does not implement AT-SPI Component.ScrollTo: the refusal is reported, not faked", "the fixture received nothing"] }),
  row({ id: "fixture.click.point-hits-element", app: "fixture", action: "click --x --y over the OK button, no grant", route: "accessibility", expect: "delivered", grant: "none", oracles: ["result route is accessibility", "exactly one click reached OK", ...UNCHANGED] }),
  row({ id: "fixture.click.confirmed", app: "fixture", action: "click Delete with a confirm hook that allows", route: "accessibility", expect: "delivered", grant: "confirm-hook", oracles: ["the hook ran", "exactly one click reached Delete"] }),
  // ---- fixture app, refusals: each refused with its code while the fixture received nothing
  row({ id: "fixture.refuse.stale-snapshot", app: "fixture", action: "click with a superseded --snapshot-id", route: "none", expect: "SNAPSHOT_STALE", grant: "none", oracles: ["details.reason is superseded", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.replaced-element", app: "fixture", action: "click OK after another button took its place", route: "none", expect: "ELEMENT_UNRESOLVABLE", grant: "none", oracles: ["the new occupant (Cancel) was not clicked", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.window-gone", app: "fixture", action: "click in a snapshot of a window that has since closed", route: "none", expect: "SNAPSHOT_STALE", grant: "none", oracles: ["details.reason is window-gone", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.missing-index", app: "fixture", action: "click --element-index absent from the snapshot", route: "none", expect: "ELEMENT_INDEX_NOT_FOUND", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.foreground-ungranted", app: "fixture", action: "click --x --y on the canvas (no accessible element), no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing", "pointer unchanged"] }),
  row({ id: "fixture.refuse.point-into-text-field", app: "fixture", action: "click --x --y into the Name entry, no grant (a click there moves focus and caret: no default action does that)", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing", "pointer unchanged"] }),
  row({ id: "fixture.refuse.hotkey-ungranted", app: "fixture", action: "hotkey ctrl+a, no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.secure-field", app: "fixture", action: "set-value on the Password entry", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.keys-into-focused-password", app: "fixture", action: "type-text with no element while the Password entry has focus, granted", route: "none", expect: "POLICY_DENIED", grant: "foreground", oracles: ["focus is read live before any key is sent", "the Password entry received nothing"] }),
  row({ id: "fixture.refuse.confirm-required", app: "fixture", action: "click Delete with no confirm hook", route: "none", expect: "CONFIRM_REQUIRED", grant: "none", oracles: ["the fixture received nothing"] }),
  // ---- fixture app, foreground input under an operator grant
  row({ id: "fixture.fg.click.canvas", app: "fixture", action: "click --x --y on the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["exactly one press and one release on the canvas at the point", "pointer restored", "buttons released"] }),
  row({ id: "fixture.fg.type-text.focused", app: "fixture", action: "focus Name, then type-text with no element, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the text landed in Name and nowhere else", "keys released"] }),
  row({ id: "fixture.fg.press-key.repeat", app: "fixture", action: "press-key End, then BackSpace --repeat 2 into the focused Name, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["two characters removed from Name", "keys released"] }),
  row({ id: "fixture.fg.hotkey", app: "fixture", action: "hotkey ctrl+a then type-text, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the whole Name was replaced", "keys released"] }),
  row({ id: "fixture.fg.scroll.wheel", app: "fixture", action: "scroll --direction down --x --y over the list, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the list scrolled", "pointer restored"] }),
  row({ id: "fixture.fg.drag.canvas", app: "fixture", action: "drag along a path on the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one press at the start, one release at the end", "pointer restored", "buttons released"] }),
  row({ id: "fixture.fg.move.hover", app: "fixture", action: "program step move (hover) over the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the canvas saw the pointer arrive", "no press", "the pointer stays where it was moved (hover is not restored)"] }),
  row({ id: "fixture.fg.hold-key", app: "fixture", action: "program step hold-key shift for 300 ms on the focused Name, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one press and one release of Shift at least 300 ms apart", "keys released"] }),
  // ---- real applications
  row({ id: "widget-factory.observe", app: "gtk3-widget-factory", action: "get-app-state (page 1)", route: "none", expect: "delivered", grant: "none", oracles: ["more than 100 elements, not truncated", "screenshot matches the window size"] }),
  row({ id: "widget-factory.click.page", app: "gtk3-widget-factory", action: "click the Page 2 radio button", route: "accessibility", expect: "delivered", grant: "none", oracles: ["a fresh observation shows page 2's controls"] }),
  row({ id: "widget-factory.set-value.entry", app: "gtk3-widget-factory", action: "set-value on a text entry", route: "accessibility", expect: "delivered", grant: "none", oracles: ["verification.verified is true", "a fresh observation shows the value"] }),
  row({ id: "mousepad.type-select-replace-undo", app: "mousepad", action: "type-text, select-text, type-text (replace), then Edit > Undo through its menu", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the document holds the typed text", "the selection was replaced", "undo through the menu reverted the replacement"] }),
]);
