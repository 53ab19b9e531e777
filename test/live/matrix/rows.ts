// The acceptance matrix: typed rows of environment x target app x action x
// route -> expected outcome, with the oracles each row checks. Pure data:
// test/live/matrix.test.ts runs the rows, scripts/gen-support.ts turns rows
// plus the last run's results into docs/support.md.
import type { ErrorCode } from "../../../src/protocol/errors.ts";

export type MatrixApp =
  | "fixture"
  | "gtk3-widget-factory"
  | "mousepad"
  | "gtk4-fixture"
  | "gtk4-demo"
  | "qt5-fixture"
  | "featherpad"
  | "chromium"
  | "firefox"
  | "libreoffice-writer"
  | "libreoffice-calc"
  | "dnd-fixture"
  // issue 14: an X11 app with no accessibility at all (OCR)
  | "xterm"
  // issue 14: OCR
  | "tk-fixture"
  | "libreoffice-gen";

/** The toolkit each app exercises: the columns' owner in docs/support.md's toolkit x capability table. */
export type Toolkit = "GTK3" | "GTK4" | "Qt5" | "Chromium" | "Firefox" | "LibreOffice" | "X11 (no tree)";
export const APP_TOOLKIT: Record<MatrixApp, Toolkit> = {
  fixture: "GTK3",
  "gtk3-widget-factory": "GTK3",
  mousepad: "GTK3",
  "gtk4-fixture": "GTK4",
  "gtk4-demo": "GTK4",
  "qt5-fixture": "Qt5",
  featherpad: "Qt5",
  chromium: "Chromium",
  firefox: "Firefox",
  "libreoffice-writer": "LibreOffice",
  "libreoffice-calc": "LibreOffice",
  "dnd-fixture": "GTK3",
  xterm: "X11 (no tree)",
  "tk-fixture": "X11 (no tree)", // issue 14: OCR
  "libreoffice-gen": "X11 (no tree)", // issue 14: OCR
};
export const TOOLKITS: readonly Toolkit[] = ["GTK3", "GTK4", "Qt5", "Chromium", "Firefox", "LibreOffice", "X11 (no tree)"];

/** What a row proves, for the toolkit x capability table. */
export type Capability =
  | "observe"
  | "click"
  | "set-value / type"
  | "secure-field refusal"
  | "no harm"
  | "launch / quit"
  | "clipboard"
  | "menus"
  | "element drag"
  // issue 14
  | "compact / diff"
  | "marks"
  | "OCR"
  | "image options";
export const CAPABILITIES: readonly Capability[] = ["observe", "click", "set-value / type", "secure-field refusal", "no harm", "launch / quit", "clipboard", "menus", "element drag", "compact / diff", "marks", "OCR", "image options"];

/** Where each app's rows run. */
export const APP_SOURCE: Record<MatrixApp, string> = {
  fixture: "test/fixtures/apps/fixture_app.py",
  "gtk3-widget-factory": "/usr/bin/gtk3-widget-factory",
  mousepad: "/usr/bin/mousepad",
  "gtk4-fixture": "test/fixtures/apps/gtk4_fixture.py",
  "gtk4-demo": "/usr/bin/gtk4-demo",
  "qt5-fixture": "test/fixtures/apps/qt5_fixture.py (QT_ACCESSIBILITY=1)",
  featherpad: "/usr/bin/featherpad (QT_ACCESSIBILITY=1)",
  chromium: "/usr/bin/chromium --force-renderer-accessibility, test/fixtures/web/{form,context,dnd}.html from a loopback server",
  firefox: "/usr/bin/firefox-esr (GNOME_ACCESSIBILITY=1), test/fixtures/web/{form,context,dnd}.html from a loopback server",
  "libreoffice-writer": "soffice --writer (SAL_USE_VCLPLUGIN=gtk3)",
  "libreoffice-calc": "soffice --calc (SAL_USE_VCLPLUGIN=gtk3)",
  "dnd-fixture": "test/fixtures/apps/dnd_fixture.py (GTK3: drag sources, a drop target, an entry, a button, a canvas)",
  xterm: "/usr/bin/xterm (Xt/Xaw: no accessibility tree at all)",
  "tk-fixture": "test/fixtures/apps/tk_fixture.py (Tk: no accessibility tree at all)", // issue 14: OCR
  "libreoffice-gen": "soffice --writer (SAL_USE_VCLPLUGIN=gen: LibreOffice's plain X11 plugin, no accessibility tree)", // issue 14: OCR
};
export type MatrixRoute = "accessibility" | "foreground_input" | "none";

/** The desktops a row can run on; results are kept per desktop (results.ts resultKey). */
export type MatrixDesktop = "x11" | "wayland";
export const DESKTOPS: readonly MatrixDesktop[] = ["x11", "wayland"];
export const ENVIRONMENTS: Record<MatrixDesktop, string> = {
  x11: "linux-x11 (Xvfb + openbox + AT-SPI)",
  wayland: "linux-wayland (headless sway 1.7 + AT-SPI, `deckhand desktop start --wayland`; apps native Wayland clients run as the desktop's user)",
};

/** Where a row's result is kept (.state/matrix-results.json): X11 results under the row's id, Wayland ones under `wayland:<id>`. */
export function resultKey(desktop: MatrixDesktop, id: string): string {
  return desktop === "x11" ? id : `${desktop}:${id}`;
}

/**
 * How a row stands on the Wayland desktop (issue 19). Every row says it:
 * - "runs": it runs there with the row's own expectation and oracles (its
 *   Wayland oracles: the app's own log, sway's focus and tree, see
 *   wayland-oracles.ts), recorded as `wayland:<id>`;
 * - { expect, why }: it runs there, and Wayland forces a refusal: the exact
 *   code (and why) replaces the row's expectation;
 * - { notApplicable }: it cannot apply there (an X11-only app or mechanism),
 *   with the exact reason;
 * - { pending }: it applies, but the file that runs it has no Wayland run
 *   yet; docs/support.md lists it as such (it claims nothing), and it is
 *   the list of what is left of issue 19's matrix.
 */
export type OnWayland = "runs" | { expect: ErrorCode; why: string } | { notApplicable: string } | { pending: string };

/** The expectation a row holds on a desktop, or why it does not run there. */
export function expectationOn(r: MatrixRow, desktop: MatrixDesktop): { expect: "delivered" | ErrorCode } | { notApplicable: string } | { pending: string } {
  if (desktop === "x11") return r.x11NotApplicable ? { notApplicable: r.x11NotApplicable } : { expect: r.expect };
  const w = r.wayland;
  if (w === "runs") return { expect: r.expect };
  if ("expect" in w) return { expect: w.expect };
  return w;
}
/** Rows that must pass on the desktop (runs, or a forced refusal). */
export function appliesOn(r: MatrixRow, desktop: MatrixDesktop): boolean {
  return "expect" in expectationOn(r, desktop);
}

export interface MatrixRow {
  id: string;
  environment: "linux-x11 (Xvfb + openbox + AT-SPI)";
  /** Where it stands on the Wayland desktop (OnWayland). */
  wayland: OnWayland;
  /** Wayland-only rows: why there is no X11 counterpart (absent: the row runs on X11). */
  x11NotApplicable?: string;
  app: MatrixApp;
  action: string;
  route: MatrixRoute;
  /** "delivered", or the exact refusal code. */
  expect: "delivered" | ErrorCode;
  /** Operator grants the row runs with. */
  grant: "none" | "foreground" | "confirm-hook";
  oracles: string[];
  /** The capability column this row fills in the toolkit x capability table (none: listed in the rows only). */
  capability?: Capability;
}

const ENV = "linux-x11 (Xvfb + openbox + AT-SPI)" as const;
const row = (r: Omit<MatrixRow, "environment">): MatrixRow => ({ environment: ENV, ...r });

const UNCHANGED = ["focus, stacking order and pointer unchanged"];

// ---- issue 19: Wayland applicability (OnWayland), shared by sections
const RUNS = "runs" as const;
const WL_CLIPBOARD = { notApplicable: "its oracles are X11 selections (xclip, an X11 owner); on Wayland the clipboard is wl_data_device, which the helper does not speak (clipboard.* unsupported on atspi+sway): a Wayland clipboard row needs wl-copy/wl-paste oracles" };
/** Qt 5 point clicks on sway, measured 2026-12-03 (matrix/point-click-app-rows.ts). */
const WL_QT_POINT = "on sway a Qt 5 app's open menus cannot be told (Qt 5 offers neither Cache nor Collection, and sway lists no xdg_popup), so point_click finds no node at the point rather than risk the one beneath a popup: the click goes by pointer; with a name check to make (an app with a tree), the first point_click holds (unknown), the orchestrator reads the window (get_tree) and asks again";
/** The X11-only apps' rows on sway: Xwayland windows, run as the apps' user (matrix/ocr-notree-rows.ts). */
const WL_XWAYLAND = "Wayland: an Xwayland window on sway, started as the apps' user on its X display; the helper drives it by X11's rules";
/** The menus rows' "no menu open" oracle on sway, weaker than X11's popup windows: said in each row that runs there. */
const WL_MENU_ORACLE = "on Wayland 'no menu open' is read from the app's accessibility tree (no item shown inside a menu: test/live/matrix/menu-oracle.ts, proved per run on a menu opened through pyatspi), not from popup windows (sway lists no xdg_popup): weaker, it is blind to a popup that has no accessible";
const WL_CHROMIUM_MENU = {
  pending:
    "seen on sway (test/live/matrix-wayland.test.ts, menus by path): the link's context menu opens and its items are in Chromium's accessibility tree (pyatspi read an unnamed menu under the app showing Open link in new tab .. Copy link address .. Inspect while menu list ran), but deckhand looks for a context menu's items in the app's new popup windows, and sway's tree lists no xdg_popup: menu list answered MENU_NOT_EXPOSED reason popup-not-in-tree, popupWindows 0 (the menu closed with Escape) - deckhand must find such a popup's accessible without a window; and the row's clipboard oracle has no Wayland reader here: wl-paste is not installed, xclip on sway's Xwayland is refused as root and, as the desktop's user, read 'target STRING not available' for a Wayland client's clipboard text; Chromium (--ozone-platform=wayland) also exited before showing a window in the 2 runs that selected its row alone (-t \"chromium context\"), and started in the 2 runs of the whole menus describe",
};
/** What drag.chromium.elements saw on sway (test/live/matrix/drag-rows.ts, run by matrix-wayland.test.ts). */

/**
 * The browsers' form rows. Chromium's once failed at start in full Wayland
 * runs (it never registered on the accessibility bus, or died before its
 * window): it died of SIGSEGV whenever it started after a virtual keyboard
 * that had typed was gone (the seat left without a keyboard); the desktop's
 * own keyboard now takes the seat back (test/live/wayland-seat-keyboard.test.ts).
 * Firefox's form rows were pending until 2026-12-03: started after an
 * assistive client listened (any helper that had observed something, or a
 * pyatspi listener), Firefox ESR answered Cache.GetItems with 2 items and
 * the helper's repair of the cache went six levels down, not to the page;
 * the browsers now start with a listener on the bus (matrix/at_listener.py).
 */
const WL_BROWSER_FORM: Record<"chromium" | "firefox", OnWayland> = {
  chromium: RUNS,
  firefox: RUNS,
};
/** Wayland-only rows: sway 1.7 captures the screen, not a window (no per-window capture). */
const X11_CAPTURES_COVERED = "X11 captures a covered window's own pixels (XComposite): there it is delivered, as the screenshot rows show";
// ---- end Wayland applicability
// ---- issue 14: set-of-marks
/** What every set-of-marks row checks of the image (test/live/marks.test.ts checkMarksImage). */
const MARKS_IMAGE = [
  "the marks PNG exists beside the screenshot, the same size, origin and scale",
  "count = the interactive elements of the page shown with bounds on the image (from the stored snapshot)",
  "every pixel that differs from the screenshot lies on a box edge or a label",
  "each box's edge pixels (where no other box or label covers them) carry its colour",
  "each label reads back (5x7 digit matching) as its element's index",
];
// ---- end set-of-marks
/** The harm oracle (test/live/matrix/toolkit.ts): the target is never hurt by being observed or driven. */
// Five observations and an action cost the target real work (a Calc sheet:
// ~0.25 s of soffice CPU per observation of 300 visible cells); the harm this
// bounds is the unbounded kind seen before (13 s CPU and 383 MB for one
// observation of Calc, a Qt app killed): 3 s for the whole load. Measured
// for calc.harm on the 2-core CI machine (2026-12-02): 1.62-1.71 s with the
// previous main and 1.66-1.81 s now run alone, 2.01 s under the full live
// suite's load; 2 s flaked, 3 s still fails the 13 s kind four times over.
export const HARM_CPU_S = 3;
const HARM = ["the target pid is alive afterwards", `its CPU time grew < ${HARM_CPU_S} s over the 5 observations and the actions, its RSS < 50 MB`, "it is idle (< 0.5 s CPU) in the second after"];

export const ROWS: readonly MatrixRow[] = Object.freeze([
  // ---- fixture app, background (accessibility) actions
  row({ id: "fixture.click.element", wayland: RUNS, capability: "click", app: "fixture", action: "click --element-index (OK button)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["exactly one click reached OK", "no other control received anything", ...UNCHANGED] }),
  row({ id: "fixture.set-value.entry", wayland: RUNS, capability: "set-value / type", app: "fixture", action: "set-value (Name entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Name holds exactly the value", "no other field changed", "verification.verified is true (read back)", ...UNCHANGED] }),
  row({ id: "fixture.type-text.replaces-selection", wayland: RUNS, app: "fixture", action: "select-text [0,3) then type-text (Name entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the selection was replaced, the rest kept", "no other field changed"] }),
  row({ id: "fixture.type-text.multiline", wayland: RUNS, capability: "set-value / type", app: "fixture", action: "type-text (Notes text view)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the text landed in Notes and nowhere else", ...UNCHANGED] }),
  row({ id: "fixture.focus.entry", wayland: RUNS, app: "fixture", action: "focus (Email entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Email received focus", "pointer unchanged", "(GTK presents the focused window: focus is the one element action that may change stacking)"] }),
  row({ id: "fixture.click.checkbox", wayland: RUNS, capability: "click", app: "fixture", action: "click --element-index (Subscribe check box)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Subscribe toggled on exactly once", ...UNCHANGED] }),
  row({ id: "fixture.secondary.named-action", wayland: RUNS, app: "fixture", action: "perform-secondary-action (Subscribe: its advertised action by name)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Subscribe toggled exactly once"] }),
  row({ id: "fixture.scroll.into-view", wayland: RUNS, app: "fixture", action: "scroll --element-index (Row 150) into view", route: "accessibility", expect: "ACTION_FAILED", grant: "none", oracles: ["GTK3 does not implement AT-SPI Component.ScrollTo: the refusal is reported, not faked", "the fixture received nothing"] }),
  row({ id: "fixture.click.point-hits-element", wayland: RUNS, app: "fixture", action: "click --x --y over the OK button, no grant", route: "accessibility", expect: "delivered", grant: "none", oracles: ["result route is accessibility", "exactly one click reached OK", ...UNCHANGED] }),
  row({ id: "fixture.click.confirmed", wayland: RUNS, app: "fixture", action: "click Delete with a confirm hook that allows", route: "accessibility", expect: "delivered", grant: "confirm-hook", oracles: ["the hook ran", "exactly one click reached Delete"] }),
  row({ id: "fixture.harm", wayland: RUNS, capability: "no harm", app: "fixture", action: "observe 5 times, click OK, set-value Email", route: "accessibility", expect: "delivered", grant: "none", oracles: HARM }),
  // ---- fixture app, refusals: each refused with its code while the fixture received nothing
  row({ id: "fixture.refuse.stale-snapshot", wayland: RUNS, app: "fixture", action: "click with a superseded --snapshot-id", route: "none", expect: "SNAPSHOT_STALE", grant: "none", oracles: ["details.reason is superseded", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.replaced-element", wayland: RUNS, app: "fixture", action: "click OK after another button took its place", route: "none", expect: "ELEMENT_UNRESOLVABLE", grant: "none", oracles: ["the new occupant (Cancel) was not clicked", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.window-gone", wayland: RUNS, app: "fixture", action: "click in a snapshot of a window that has since closed", route: "none", expect: "SNAPSHOT_STALE", grant: "none", oracles: ["details.reason is window-gone", "the fixture received nothing"] }),
  row({ id: "fixture.refuse.missing-index", wayland: RUNS, app: "fixture", action: "click --element-index absent from the snapshot", route: "none", expect: "ELEMENT_INDEX_NOT_FOUND", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.foreground-ungranted", wayland: RUNS, app: "fixture", action: "click --x --y on the canvas (no accessible element), no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing", "pointer unchanged"] }),
  row({ id: "fixture.refuse.point-into-text-field", wayland: RUNS, app: "fixture", action: "click --x --y into the Name entry, no grant (a click there moves focus and caret: no default action does that)", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing", "pointer unchanged"] }),
  row({ id: "fixture.refuse.hotkey-ungranted", wayland: RUNS, app: "fixture", action: "hotkey ctrl+a, no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.secure-field", wayland: RUNS, capability: "secure-field refusal", app: "fixture", action: "set-value on the Password entry", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["the fixture received nothing"] }),
  row({ id: "fixture.refuse.keys-into-focused-password", wayland: RUNS, app: "fixture", action: "type-text with no element while the Password entry has focus, granted", route: "none", expect: "POLICY_DENIED", grant: "foreground", oracles: ["focus is read live before any key is sent", "the Password entry received nothing"] }),
  row({ id: "fixture.refuse.confirm-required", wayland: RUNS, app: "fixture", action: "click Delete with no confirm hook", route: "none", expect: "CONFIRM_REQUIRED", grant: "none", oracles: ["the fixture received nothing"] }),
  // ---- issue 19: refusals Wayland forces (test/live/matrix-wayland.test.ts; no X11 counterpart)
  row({ id: "wayland.screenshot.covered", wayland: RUNS, x11NotApplicable: X11_CAPTURES_COVERED, capability: "observe", app: "fixture", action: "screenshot --app of the fixture's main window while its second window floats over part of it", route: "none", expect: "SCREENSHOT_FAILED", grant: "none", oracles: ["sway 1.7 has no per-window capture: the refusal's message names the covering window by its sway container id (details.reason covered)", "no image is returned", "the fixture received nothing"] }),
  row({ id: "wayland.screenshot.not-shown", wayland: RUNS, x11NotApplicable: X11_CAPTURES_COVERED, capability: "observe", app: "fixture", action: "screenshot --app of the fixture's second window moved to sway's scratchpad", route: "none", expect: "SCREENSHOT_FAILED", grant: "none", oracles: ["the refusal says the window is not shown (details.reason not-shown)", "get-app-state without a screenshot still reads its tree", "the fixture received nothing"] }),
  // ---- fixture app, foreground input under an operator grant
  row({ id: "fixture.fg.click.canvas", wayland: RUNS, app: "fixture", action: "click --x --y on the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["exactly one press and one release on the canvas at the point", "pointer restored", "buttons released"] }),
  row({ id: "fixture.fg.type-text.focused", wayland: RUNS, app: "fixture", action: "focus Name, then type-text with no element, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the text landed in Name and nowhere else (no key reached the other window)", "keys released"] }),
  row({ id: "fixture.fg.press-key.repeat", wayland: RUNS, app: "fixture", action: "press-key End, then BackSpace --repeat 2 into the focused Name, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["two characters removed from Name", "keys released"] }),
  row({ id: "fixture.fg.hotkey", wayland: RUNS, app: "fixture", action: "hotkey ctrl+a then type-text, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the whole Name was replaced", "keys released"] }),
  row({ id: "fixture.fg.scroll.wheel", wayland: RUNS, app: "fixture", action: "scroll --direction down --x --y over the list, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the list scrolled", "pointer restored"] }),
  row({ id: "fixture.fg.drag.canvas", wayland: RUNS, app: "fixture", action: "drag along a path on the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one press at the start, one release at the end", "pointer restored", "buttons released"] }),
  row({ id: "fixture.fg.move.hover", wayland: RUNS, app: "fixture", action: "program step move (hover) over the canvas, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the canvas saw the pointer arrive", "no press", "the pointer stays where it was moved (hover is not restored)"] }),
  row({ id: "fixture.fg.hold-key", wayland: RUNS, app: "fixture", action: "program step hold-key shift for 300 ms on the focused Name, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one press and one release of Shift at least 300 ms apart", "keys released"] }),
  // ---- real applications
  row({ id: "widget-factory.observe", wayland: RUNS, capability: "observe", app: "gtk3-widget-factory", action: "get-app-state (page 1)", route: "none", expect: "delivered", grant: "none", oracles: ["more than 25 named controls and 50 elements (closed menus and unnamed fillers are not elements), not truncated", "screenshot matches the window size"] }),
  row({ id: "widget-factory.click.page", wayland: RUNS, capability: "click", app: "gtk3-widget-factory", action: "click the Page 2 radio button", route: "accessibility", expect: "delivered", grant: "none", oracles: ["a fresh observation shows page 2's controls"] }),
  row({ id: "widget-factory.set-value.entry", wayland: RUNS, capability: "set-value / type", app: "gtk3-widget-factory", action: "set-value on a text entry", route: "accessibility", expect: "delivered", grant: "none", oracles: ["verification.verified is true", "a fresh observation shows the value"] }),
  row({ id: "mousepad.type-select-replace-undo", wayland: RUNS, capability: "set-value / type", app: "mousepad", action: "type-text, select-text, type-text (replace), then Edit > Undo through its menu (opened first: a closed menu's items are not elements)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the document holds the typed text", "the selection was replaced", "undo through the menu reverted the replacement"] }),

  // ---- GTK4 and Qt5 fixtures (test/live/toolkits-fixtures.test.ts)
  ...(["gtk4", "qt5"] as const).flatMap((k) => {
    const app = `${k}-fixture` as const;
    const tk = k === "gtk4" ? "GTK4" : "Qt5";
    return [
      row({ id: `${k}.observe`, wayland: RUNS, capability: "observe", app, action: "get-app-state", route: "none", expect: "delivered", grant: "none", oracles: ["OK, Name, Subscribe, Notes and Password are elements, named", "their bounds lie inside the window (screen coordinates)", "Password is secure"] }),
      row({ id: `${k}.click.button`, wayland: RUNS, capability: "click", app, action: "click --element-index (OK button)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["exactly one click reached OK", "nothing else reached the app", ...UNCHANGED] }),
      k === "gtk4"
        ? row({ id: `${k}.click.checkbox`, wayland: RUNS, capability: "click", app, action: "click --element-index (Subscribe check box), no grant", route: "none", expect: "ACTION_UNSUPPORTED", grant: "none", oracles: ["GTK 4.8 check buttons advertise no AT-SPI action: click refuses (details.reason no-press-like-action) instead of running anything else", "the fixture received nothing", ...UNCHANGED] })
        : row({ id: `${k}.click.checkbox`, wayland: RUNS, capability: "click", app, action: "click --element-index (Subscribe check box)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Subscribe toggled on exactly once", ...UNCHANGED] }),
      ...(k === "gtk4"
        ? [row({ id: "gtk4.fg.click.checkbox", wayland: RUNS, capability: "click", app, action: "click --x --y at the Subscribe check box's centre (from the observation), granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["Subscribe toggled exactly once", "pointer restored"] })]
        : []),
      k === "gtk4"
        ? row({ id: `${k}.set-value.entry`, wayland: RUNS, capability: "set-value / type", app, action: "set-value (Name entry), no grant", route: "accessibility", expect: "VERIFICATION_FAILED", grant: "none", oracles: ["GTK 4.8 entries read back \"\" through AT-SPI Text (the text is in an unexposed GtkText): the value lands but cannot be verified, so the answer is VERIFICATION_FAILED with delivery submitted, never ok:true", "the fixture received exactly the value in Name and nothing else", ...UNCHANGED] })
        : row({ id: `${k}.set-value.entry`, wayland: RUNS, capability: "set-value / type", app, action: "set-value (Name entry)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["Name holds exactly the value", "no other field changed", "verification.verified is true", "a fresh observation shows the value", ...UNCHANGED] }),
      row({ id: `${k}.type-text.multiline`, wayland: RUNS, capability: "set-value / type", app, action: "type-text (Notes text view)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the text landed in Notes and nowhere else"] }),
      row({ id: `${k}.refuse.secure-field`, wayland: RUNS, capability: "secure-field refusal", app, action: "set-value on the Password entry", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["the value is in no output", "the fixture received nothing"] }),
      row({ id: `${k}.harm`, wayland: RUNS, capability: "no harm", app, action: `observe 5 times, then attempt click OK and set-value Name (${tk})`, route: "accessibility", expect: "delivered", grant: "none", oracles: HARM }),
    ];
  }),
  // ---- real GTK4 and Qt5 apps (test/live/toolkits-apps.test.ts)
  row({ id: "gtk4-demo.observe", wayland: RUNS, capability: "observe", app: "gtk4-demo", action: "get-app-state (first page)", route: "none", expect: "delivered", grant: "none", oracles: ["more than 50 elements: more than the frame", "buttons and entries with bounds inside the window (descendants are showing, coordinates converted to screen)"] }),
  row({ id: "gtk4-demo.harm", wayland: RUNS, capability: "no harm", app: "gtk4-demo", action: "observe 5 times", route: "none", expect: "delivered", grant: "none", oracles: HARM }),
  row({ id: "featherpad.observe", wayland: RUNS, capability: "observe", app: "featherpad", action: "get-app-state", route: "none", expect: "delivered", grant: "none", oracles: ["the editor is a text element inside the window", "the menu bar is seen"] }),
  row({ id: "featherpad.type-text", wayland: RUNS, capability: "set-value / type", app: "featherpad", action: "type-text into the editor", route: "accessibility", expect: "delivered", grant: "none", oracles: ["a fresh observation shows the typed text in the editor", "featherpad is alive"] }),
  row({ id: "featherpad.harm", wayland: RUNS, capability: "no harm", app: "featherpad", action: "observe 5 times, type-text", route: "accessibility", expect: "delivered", grant: "none", oracles: HARM }),
  // ---- browsers on the web fixture (test/live/toolkits-web.test.ts)
  ...(["chromium", "firefox"] as const).flatMap((b) => [
    row({ id: `${b}.observe`, wayland: WL_BROWSER_FORM[b], capability: "observe", app: b, action: "get-app-state of the form page", route: "none", expect: "delivered", grant: "none", oracles: ["the Name entry, Subscribe check box and Preview button are elements inside the window", "the page's heading is seen", "the browser started with an assistive client already listening on the bus (matrix/at_listener.py), as with a screen reader or a deckhand session running"] }),
    row({ id: `${b}.fill-form`, wayland: WL_BROWSER_FORM[b], capability: "set-value / type", app: b, action: "set-value on the Name text input, granted (falls back to focus + select-all + typing where the field has no EditableText or does not read back)", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the page received the exact value (its input events, POSTed to the loopback server)", "ok only when the value landed; the result says which route ran", "a fresh observation shows the value"] }),
    row({ id: `${b}.fg.type-text.focused`, wayland: WL_BROWSER_FORM[b], capability: "set-value / type", app: b, action: "focus the Name input, hotkey ctrl+a, type-text with no element, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the page received exactly the typed text in Name and nowhere else", "the browser is alive (no crash while typing)"] }),
    row({ id: `${b}.click.button`, wayland: WL_BROWSER_FORM[b], capability: "click", app: b, action: "click --element-index (Preview button)", route: "accessibility", expect: "delivered", grant: "foreground", oracles: ["the page received exactly one click on Preview, with the filled name", "a fresh observation reads the page's result text"] }),
    row({ id: `${b}.refuse.secure-field`, wayland: WL_BROWSER_FORM[b], capability: "secure-field refusal", app: b, action: "set-value on the page's password input", route: "none", expect: "POLICY_DENIED", grant: "foreground", oracles: ["the value is in no output", "the page received nothing"] }),
    row({ id: `${b}.harm`, wayland: WL_BROWSER_FORM[b], capability: "no harm", app: b, action: "observe 5 times, then attempt set-value and click", route: "accessibility", expect: "delivered", grant: "foreground", oracles: HARM }),
  ]),
  // ---- LibreOffice (test/live/toolkits-libreoffice.test.ts)
  row({ id: "writer.observe", wayland: RUNS, capability: "observe", app: "libreoffice-writer", action: "get-app-state of a document with three known paragraphs", route: "none", expect: "delivered", grant: "none", oracles: ["each paragraph is an element with its text", "within 10 s"] }),
  row({ id: "writer.harm", wayland: RUNS, capability: "no harm", app: "libreoffice-writer", action: "observe 5 times", route: "none", expect: "delivered", grant: "none", oracles: HARM }),
  row({ id: "calc.observe", wayland: RUNS, capability: "observe", app: "libreoffice-calc", action: "get-app-state of a new sheet", route: "none", expect: "delivered", grant: "none", oracles: ["cells around the visible range (A1) are elements", "within 10 s, bounded (no walk of the sheet's 2^31 children)"] }),
  row({ id: "calc.formula.typed", wayland: RUNS, capability: "set-value / type", app: "libreoffice-calc", action: "type-text 42 + Return and =A1*2 + Return into the focused cells, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["a fresh observation reads A2 as 84 (the computed result)"] }),
  row({ id: "calc.set-value.cell", wayland: RUNS, capability: "set-value / type", app: "libreoffice-calc", action: "set-value on cell B1 (7: through Value), then on B2 (=B1+1: a formula, which Value cannot take), granted", route: "none", expect: "ACTION_FAILED", grant: "foreground", oracles: ["B1 reads back 7 (Value route, verified)", "B2: focusing a cell through accessibility does not move Calc's keyboard focus, so the typing fallback sends nothing (reason focus-elsewhere, delivery not_dispatched)", "B2 stays empty"] }),
  row({ id: "calc.harm", wayland: RUNS, capability: "no harm", app: "libreoffice-calc", action: "observe 5 times, enter cells", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: HARM }),

  // ---- issue 13: app lifecycle (test/live/lifecycle.test.ts)
  row({ id: "lifecycle.launch.fixture", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "launch --app <a .desktop entry in a temporary XDG_DATA_HOME> (the GTK3 fixture)", route: "none", expect: "delivered", grant: "none", oracles: ["the result names the entry's desktop id, the fixture's pid and its windows", "its tree is more than the frame (treeNodes > 1)", "get-app-state then reads its OK button", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)"] }),
  row({ id: "lifecycle.list-apps.all", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "list-apps --all", route: "none", expect: "delivered", grant: "none", oracles: ["the launched fixture is running, installed, with its entry's desktop id", "an installed app that is not running is listed with pid null, running false", "without --all no entry has running or installed"] }),
  row({ id: "lifecycle.activate.fixture", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "activate the fixture's main window from behind another app's window, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["before: another app's window holds the focus (Wayland: on a workspace of its own, shown)", "after: the desktop reads the focus on the fixture's window (X11: xdotool getwindowfocus and getactivewindow; Wayland: sway's focused container, its one focus)", "the result's activated is true"] }),
  row({ id: "lifecycle.restore-window.click", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "click --x --y over OK in the minimized main window: refused without --restore-window, delivered with it", route: "accessibility", expect: "delivered", grant: "none", oracles: ["without the flag nothing reaches the fixture", "with it the window is shown again (not minimized) and exactly one click reached OK", "Wayland: minimized is sway's scratchpad (read from sway's tree before and after); the window is floated first, as sway returns a tiled view from the scratchpad floating at a place of its own and a floating one where it was, and after the click it is back at the same bounds"] }),
  row({ id: "lifecycle.launch.mousepad", wayland: RUNS, capability: "launch / quit", app: "mousepad", action: "launch --app org.xfce.mousepad (by desktop id)", route: "none", expect: "delivered", grant: "none", oracles: ["mousepad's window and a tree (treeNodes > 1)", "launch-to-tree time measured", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)"] }),
  row({ id: "lifecycle.quit.mousepad", wayland: RUNS, capability: "launch / quit", app: "mousepad", action: "quit mousepad (nothing unsaved) with a confirm hook that allows", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["exited is true, windowsLeft empty", "the pid is gone (never killed: X11 sends WM_DELETE_WINDOW; sway closes through `[con_id=N] kill`, xdg_toplevel.close)", "the desktop shows no window of it (X11: xdotool search --pid; Wayland: sway's tree)"] }),
  row({ id: "lifecycle.quit.unsaved-dialog", wayland: RUNS, capability: "launch / quit", app: "mousepad", action: "type into a new mousepad document, then quit with a confirm hook that allows", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["exited is false: mousepad asks to save", "windowsLeft names the dialog, a window the desktop shows as the app's (X11: _NET_WM_PID; Wayland: sway's view pid)", "the app still runs; the test then ends it by pid"] }),
  row({ id: "lifecycle.launch.featherpad.a11y-env", wayland: RUNS, capability: "launch / quit", app: "featherpad", action: "launch --app featherpad with no QT_ACCESSIBILITY in deckhand's environment and the session's accessibility flag off", route: "none", expect: "delivered", grant: "none", oracles: ["the running featherpad's own environment (/proc) holds QT_ACCESSIBILITY=1, QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1, GNOME_ACCESSIBILITY=1 and its desktop file, and no DECKHAND_* variable", "its tree is there (more than 10 elements)", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)", "(Qt 5 on X11 also switches its bridge on from the AT_SPI_BUS root property, so a directly started featherpad has a tree too)"] }),
  row({ id: "lifecycle.launch.chromium", wayland: RUNS, capability: "launch / quit", app: "chromium", action: "launch --app chromium -- <profile flags> <the web fixture's URL>, the accessibility flag off", route: "none", expect: "delivered", grant: "none", oracles: ["control: chromium started directly with the same flags shows no tree (and still runs)", "argsAdded is --force-renderer-accessibility", "get-app-state reads the page's Name field and Preview button", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)"] }),
  row({ id: "lifecycle.launch.timeout-window", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "launch a .desktop entry whose Exec is sleep 60, --timeout-ms 1500", route: "none", expect: "LAUNCH_TIMEOUT", grant: "none", oracles: ["details.stage is window, details.pid the sleep", "the wait ended near the timeout", "the process is left running (the test then ends it)", "it runs as the desktop's user (Wayland under root: deckhand-wl)"] }),
  row({ id: "lifecycle.launch.terminal-denied", wayland: RUNS, capability: "launch / quit", app: "fixture", action: "launch a .desktop entry whose Exec is x-terminal-emulator, and debian-xterm, and /usr/bin/xterm", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["rule builtin:terminal:*", "no terminal process was started, no window appeared"] }),
  row({ id: "lifecycle.launch-quit.firefox", wayland: RUNS, capability: "launch / quit", app: "firefox", action: "launch --app firefox-esr -- -no-remote -profile <temp dir> <the web fixture's URL>, the accessibility flag off; then quit with a confirm hook that allows", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["launched.envAdded has GNOME_ACCESSIBILITY; the result's app is firefox-esr with a tree", "get-app-state reads the page's heading, its Name control (entry, or its label: Firefox sometimes leaves the entry out at start) and the Preview button", "the web fixture saw the page load (ready)", "quit: exited true, windowsLeft empty, the pid and all its content processes gone (never killed), the desktop shows no window of it", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc); on Wayland MOZ_ENABLE_WAYLAND=1 is in deckhand's environment (Firefox ESR 115 is an Xwayland client without it)"] }),
  row({ id: "lifecycle.launch-quit.libreoffice", wayland: RUNS, capability: "launch / quit", app: "libreoffice-writer", action: "launch --app libreoffice-writer -- --norestore -env:UserInstallation=<temp profile> <a .fodt document>; then quit (document unmodified) with a confirm hook that allows", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["the result's app is soffice.bin (a descendant of the started wrapper) with a tree", "get-app-state reads the document's paragraphs", "quit: exited true, windowsLeft empty, soffice.bin gone (never killed), the desktop shows no window of it", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)"] }),
  row({ id: "lifecycle.launch-quit.gtk4-demo", wayland: RUNS, capability: "launch / quit", app: "gtk4-demo", action: "launch --app org.gtk.Demo4; then quit with a confirm hook that allows", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["the result names org.gtk.Demo4.desktop and toolkit gtk4, treeNodes > 1", "get-app-state reads more than 10 elements", "quit: exited true, windowsLeft empty, the pid gone, the desktop shows no window of it", "the desktop shows its windows as the launched pid's (X11: _NET_WM_PID; Wayland: sway's view pid, an xdg_shell view: a native Wayland client), and it runs as the desktop's user (Wayland under root: deckhand-wl, read from /proc)"] }),
  // ---- end lifecycle

  // ---- issue 13: clipboard (test/live/clipboard.test.ts)
  row({ id: "clipboard.set.xclip", wayland: WL_CLIPBOARD, capability: "clipboard", app: "fixture", action: "clipboard set --text-stdin (one-shot CLI, a confirm hook that allows), then xclip -o after deckhand exited", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["xclip -o prints exactly the text", "the text is held by a detached owner process (its own session, not a descendant of deckhand) whose argv has no text", "the hook was told no text"] }),
  row({ id: "clipboard.get.xclip", wayland: WL_CLIPBOARD, capability: "clipboard", app: "fixture", action: "xclip -i, then clipboard get (one-shot CLI)", route: "none", expect: "delivered", grant: "none", oracles: ["the result's text is exactly what xclip put there", "the read is audited with no text"] }),
  row({ id: "clipboard.get.incr", wayland: WL_CLIPBOARD, app: "fixture", action: "an owner that sends its text by INCR (chunks of 4000 bytes), then clipboard get", route: "none", expect: "delivered", grant: "none", oracles: ["the whole 64 KiB text arrives, byte for byte", "--max-bytes cuts it (truncated: true)"] }),
  row({ id: "clipboard.primary", wayland: WL_CLIPBOARD, capability: "clipboard", app: "fixture", action: "clipboard set --selection primary, read with xclip -o -selection primary; xclip -i -selection primary, read with clipboard get --selection primary", route: "none", expect: "delivered", grant: "confirm-hook", oracles: ["each side reads exactly what the other put", "the clipboard selection is untouched"] }),
  row({ id: "clipboard.paste.fixture", wayland: WL_CLIPBOARD, capability: "clipboard", app: "fixture", action: "paste --element-index (Name entry), granted, with the previous clipboard set by xclip", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the fixture logged the pasted text in Name and nowhere else", "served >= 1, verification.verified (read back through the tree)", "xclip -o shows the previous clipboard again (restored: text)", "keys released"] }),
  row({ id: "clipboard.paste.featherpad", wayland: WL_CLIPBOARD, capability: "clipboard", app: "featherpad", action: "paste --element-index (the editor), granted, the clipboard empty before", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["a fresh observation reads the pasted text in the editor", "restored: cleared, and the clipboard is empty again", "featherpad is alive"] }),
  row({ id: "clipboard.paste.mousepad", wayland: WL_CLIPBOARD, capability: "clipboard", app: "mousepad", action: "paste --element-index (the document), granted, the previous clipboard set by clipboard set", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["a fresh observation reads the pasted text in the document", "the previous text is on the clipboard again (xclip -o)"] }),
  row({ id: "clipboard.refuse.secure-focus", wayland: WL_CLIPBOARD, capability: "secure-field refusal", app: "fixture", action: "clipboard get while the Password entry has focus (the owner logs every request)", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["details.reason is secure-focus", "the owner was asked for TARGETS only: the text was never read", "the text is in no output"] }),
  row({ id: "clipboard.refuse.secret-hint", wayland: WL_CLIPBOARD, app: "fixture", action: "clipboard get of a password manager's copy (x-kde-passwordManagerHint among the targets)", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: ["details.reason is secret-hint", "the owner was asked for TARGETS only"] }),
  row({ id: "clipboard.refuse.paste-secure", wayland: WL_CLIPBOARD, app: "fixture", action: "paste --element-index (Password entry), granted", route: "none", expect: "POLICY_DENIED", grant: "foreground", oracles: ["the fixture received nothing", "the clipboard is unchanged (xclip -o)"] }),
  row({ id: "clipboard.refuse.confirm-required", wayland: WL_CLIPBOARD, app: "fixture", action: "clipboard set with no confirm hook", route: "none", expect: "CONFIRM_REQUIRED", grant: "none", oracles: ["the clipboard is unchanged (xclip -o)"] }),
  row({ id: "clipboard.secrets", wayland: WL_CLIPBOARD, app: "fixture", action: "clipboard set --text-stdin and paste --text-stdin with a marker secret (CLI and serve)", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the marker is in no stdout, stderr, audit line, state file or process argv", "it did reach the clipboard and the fixture"] }),
  row({ id: "clipboard.paste.chromium", wayland: WL_CLIPBOARD, capability: "clipboard", app: "chromium", action: "paste --element-index (the web form's Name input), granted, the previous clipboard set by xclip", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the page's input events (POSTed to the fixture server) show exactly the pasted text in Name and no other control changed", "served >= 1, verification.verified (read back through the tree)", "xclip -o shows the previous clipboard again (restored: text)"] }),
  row({ id: "clipboard.paste.writer", wayland: WL_CLIPBOARD, capability: "clipboard", app: "libreoffice-writer", action: "paste --element-index (a paragraph of an open .fodt document), granted, the previous clipboard set by xclip", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["served >= 1, verification.verified", "a fresh observation reads the pasted text in that paragraph", "xclip -o shows the previous clipboard again (restored: text)", "soffice.bin is alive"] }),
  row({ id: "clipboard.paste.gtk4", wayland: WL_CLIPBOARD, capability: "clipboard", app: "gtk4-fixture", action: "paste --element-index (Name entry), granted: refused; then a granted click into Name and paste (to the focused control), the previous clipboard set by xclip", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["with --element-index: ACTION_FAILED (GTK 4.8 answers Component.GrabFocus NotSupported), the fixture got nothing, the clipboard unchanged", "to the focused entry: served >= 1, verification.verified null (GTK 4.8's entry reads back \"\" through Text, so no read-back is claimed)", "the fixture's own log shows exactly the pasted text in Name and no other control changed", "xclip -o shows the previous clipboard again (restored: text)"] }),
  // ---- end clipboard

  // ---- issue 13: menus (test/live/menus.test.ts)
  row({ id: "menus.fixture.list", wayland: RUNS, capability: "menus", app: "fixture", action: "menu list (the menu bar, every menu closed)", route: "none", expect: "delivered", grant: "none", oracles: ["File, Edit and View with their items, nested (File>Recent>One, View>Panels>Sidebar)", "states: a disabled item and a disabled submenu, a check item unchecked, the checked radio item, shortcuts ctrl+shift+w and ctrl+shift+s", "the fixture received nothing, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.fixture.click-nested", wayland: RUNS, capability: "menus", app: "fixture", action: "menu click --path View>Panels>Sidebar (a check item two levels down)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the fixture logged exactly one menu activation: View/Panels/Sidebar, active true, and nothing else but the menu grab's focus moves (on Wayland also the pointer's leave and enter where it stands: the pointer oracle unchanged)", "checked read back false -> true", "no menu is open afterwards", WL_MENU_ORACLE] }),
  row({ id: "menus.fixture.refuse.missing", wayland: RUNS, app: "fixture", action: "menu click --path View>Panels>Toolbar (no such item)", route: "none", expect: "MENU_ITEM_NOT_FOUND", grant: "none", oracles: ["details.level 3, details.available lists Sidebar", "no menu activation logged, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.fixture.refuse.disabled", wayland: RUNS, app: "fixture", action: "menu click View>Print Preview (disabled), then View>Legacy>Old Thing (a disabled submenu on the way)", route: "none", expect: "MENU_ITEM_DISABLED", grant: "none", oracles: ["details.level 2 for both", "no menu activation logged, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.fixture.refuse.confirm-required", wayland: RUNS, app: "fixture", action: "menu click View>Delete All with no confirm hook", route: "none", expect: "CONFIRM_REQUIRED", grant: "none", oracles: ["decided before any menu opens", "no menu activation logged, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.fixture.context.not-exposed", wayland: RUNS, app: "fixture", action: "menu list --element-index (the Name entry, which has a context menu)", route: "none", expect: "MENU_NOT_EXPOSED", grant: "none", oracles: ["details.reason no-show-menu-action: GTK 3 advertises no action that opens a context menu", "nothing sent", WL_MENU_ORACLE] }),
  row({ id: "menus.qt5-fixture.list", wayland: RUNS, capability: "menus", app: "qt5-fixture", action: "menu list (the menu bar, every menu closed)", route: "none", expect: "delivered", grant: "none", oracles: ["File and View with their items, nested", "a disabled item and submenu, the checked radio item, shortcuts ctrl+n and ctrl+shift+w", "no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.qt5-fixture.click-nested", wayland: RUNS, capability: "menus", app: "qt5-fixture", action: "menu click --path View>Panels>Sidebar", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the fixture logged exactly one menu activation: View/Panels/Sidebar", "checked read back false -> true", "no menu is open afterwards (Qt leaves it open: closed through accessibility)", WL_MENU_ORACLE] }),
  row({ id: "menus.qt5-fixture.context", wayland: RUNS, app: "qt5-fixture", action: "menu list --element-index (the Tools button, which advertises ShowMenu), granted", route: "foreground_input", expect: "MENU_NOT_EXPOSED", grant: "foreground", oracles: ["the menu opened (a popup window appeared) but Qt 5 lists no accessible for it: details.reason popup-not-in-tree", "it was closed again with Escape through the focus guard: no popup window left", "the fixture logged its Tools menu shown once, then hidden (DECKHAND_FIXTURE_MENU_LOG=1); on Wayland deckhand sees no popup window (popupWindows 0: sway lists no xdg_popup) and this log is the one witness that the menu opened and closed", "nothing was activated", WL_MENU_ORACLE] }),
  row({ id: "menus.mousepad.list-click", wayland: RUNS, capability: "menus", app: "mousepad", action: "menu list; type text, select it, menu click Edit>Convert>To Uppercase, then Edit>Undo", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the menu bar lists File..Help with shortcuts (File>Save: ctrl+s)", "a check item (Document>Word Wrap) reports checked null: mousepad exposes no check state", "the document reads back upper-cased, then restored by Edit>Undo (GtkSourceView undoes the conversion in two steps: deletion, insertion)", "no menu is open afterwards", WL_MENU_ORACLE] }),
  row({ id: "menus.featherpad.list-click", wayland: RUNS, capability: "menus", app: "featherpad", action: "menu list; menu click Options>Wrap Lines twice", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the menu bar lists File..Help with shortcuts (File>Save As: ctrl+shift+s)", "Wrap Lines' checked state read back flipped, then restored (and menu list agrees)", "no menu is open afterwards", WL_MENU_ORACLE] }),
  row({ id: "menus.chromium.context", wayland: WL_CHROMIUM_MENU, capability: "menus", app: "chromium", action: "on test/fixtures/web/context.html: menu list --element-index (a link); menu click --path \"Copy link address\" on it; focus the Note input, menu click --path \"Select all\" on it; granted", route: "accessibility", expect: "delivered", grant: "foreground", oracles: ["Chromium advertises showContextMenu on web elements (blank localized names: read live with GetName); the menu is a popup window whose frame holds a menu bar > panels > an unnamed menu > the items, listed as one level", "the listing has Copy link address (enabled) and Open link in new tab; it was closed again with Escape (no accessibility call closes it), no popup left", "Copy link address ran through the item's default action (\"select\"): xclip reads the link's exact URL from the clipboard, the link was not followed (no request for it)", "Select all (named \"Select all Ctrl+A\" by Chromium) selected the whole input: the page saw select 0..17, no text change", "the page saw exactly one contextmenu event per opening, on the right control; no menu open afterwards"] }),
  row({ id: "menus.firefox.context", wayland: RUNS, capability: "menus", app: "firefox", action: "on test/fixtures/web/context.html: menu list --element-index (a link, then the Note input), menu click --element-index (the link)", route: "none", expect: "MENU_NOT_EXPOSED", grant: "none", oracles: ["details.reason no-show-menu-action: Firefox ESR's link advertises only jump and its input only activate (read live with GetName), no action opens a context menu (its XUL popups are children of the frame once open, but nothing opens one through accessibility)", "nothing sent: the page saw no contextmenu event, no popup window", WL_MENU_ORACLE] }),
  // ---- end menus

  // ---- issue 13 coverage: menus and element drag on more toolkits (test/live/menus.test.ts "more toolkits", test/live/drag-lease.test.ts "issue 13 coverage")
  row({ id: "menus.writer.list-click", wayland: RUNS, capability: "menus", app: "libreoffice-writer", action: "menu list; menu click View>Formatting Marks, then again", route: "accessibility", expect: "delivered", grant: "none", oracles: ["one menu bar, File..Help (LibreOffice's own 0 px tall VCL menu bar beside the native GTK one is left out), not truncated", "states and shortcuts: Edit>Cut disabled (nothing selected), Tools>Automatic Spell Checking checked shift+F7, View>Formatting Marks unchecked ctrl+F10", "the Standard toolbar's Formatting Marks toggle reads 0 -> 1, then back to 0 (the effect read from the tree: the native menu's own check mark is refreshed only when its menu is opened again)", "no menu is open afterwards", WL_MENU_ORACLE] }),
  row({ id: "menus.writer.refuse.missing", wayland: RUNS, app: "libreoffice-writer", action: "menu click --path View>No Such View", route: "none", expect: "MENU_ITEM_NOT_FOUND", grant: "none", oracles: ["details.level 2, details.available lists View's items (Normal, Status Bar, Formatting Marks, Zoom...)", "the toolbar toggle unchanged, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "menus.gtk4.refuse.not-exposed", wayland: RUNS, capability: "menus", app: "gtk4-fixture", action: "menu list, then menu click View>Word Wrap, on a Gtk.PopoverMenuBar (GTK 4.8)", route: "none", expect: "MENU_NOT_EXPOSED", grant: "none", oracles: ["GTK 4.8's menu bar items advertise no action and their menus enter the tree only once the pointer opens them: details.reason no-open-action, details.available File | View", "nothing sent: the fixture logged nothing, no menu opened", WL_MENU_ORACLE] }),
  row({ id: "drag.qt5.elements", wayland: RUNS, capability: "element drag", app: "qt5-fixture", action: "drag --from-element-index (Apple, a QListWidget item) --to-element-index (the Drop here QLabel), granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the fixture logged one drag of Apple and one drop of \"Apple\" on the label", "verification.verified is true: the label's name changed (read back from its tree)", "buttons released, pointer restored (Wayland: it is never put back, the receipt says pointer_restored false; the oracle is that the fixture saw the pointer last over its window and then hold still)", "a fresh observation reads \"Dropped: Apple\""] }),
  row({ id: "drag.gtk4.elements", wayland: RUNS, capability: "element drag", app: "gtk4-fixture", action: "drag --from-element-index (the Apple label, a Gtk.DragSource) --to-element-index (the Drop here label, a Gtk.DropTarget), granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the fixture logged one drag of Apple and one drop of \"Apple\" on the target", "verification.verified is true: the target's name changed (read back from its tree)", "buttons released, pointer restored (Wayland: it is never put back, the receipt says pointer_restored false; the oracle is that the fixture saw the pointer last over its window and then hold still)", "a fresh observation reads \"Dropped: Apple\""] }),
  row({ id: "drag.firefox.elements", wayland: RUNS, capability: "element drag", app: "firefox", action: "drag --from-element-index (an HTML5 draggable item) --to-element-index (the drop zone) on test/fixtures/web/dnd.html, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the page saw one dragstart of Apple and one drop of \"Apple\" on the zone", "verification.verified is true: the zone's tree changed", "the browser is alive"] }),
  // ---- end issue 13 coverage

  // ---- issue 13: element drag, foreground lease, serve retries (test/live/drag-lease.test.ts)
  row({ id: "drag.fixture.elements", wayland: RUNS, capability: "element drag", app: "dnd-fixture", action: "drag --from-element-index (Apple) --to-element-index (Drop here), its window moved after the snapshot, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the app saw one drag of Apple and one drop of \"Apple\" on the target, no click", "verification.verified is true: the target's name changed (read back from its tree)", "the points were the live centres, not the snapshot's", "buttons released, pointer restored (Wayland: it is never put back, the receipt says pointer_restored false; the oracle is that the fixture saw the pointer last over its window and then hold still)", "a fresh observation reads \"Dropped: Apple\""] }),
  row({ id: "drag.fixture.no-drop", wayland: RUNS, capability: "element drag", app: "dnd-fixture", action: "drag --from-element-index (Banana) --to-element-index (a label that takes no drops), granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the drag began (the app saw it) and nothing was dropped", "ok, with verification.verified false and a detail saying the target's tree did not change"] }),
  row({ id: "drag.refuse.ungranted", wayland: RUNS, app: "dnd-fixture", action: "drag --from-element-index --to-element-index, no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: ["the fixture received nothing", ...UNCHANGED] }),
  row({ id: "drag.chromium.elements", wayland: RUNS, capability: "element drag", app: "chromium", action: "drag --from-element-index (an HTML5 draggable item) --to-element-index (the drop zone) on test/fixtures/web/dnd.html, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["the page saw one dragstart of Apple and one drop of \"Apple\" on the zone", "verification.verified is true: the zone's tree changed", "the browser is alive"] }),
  row({ id: "lease.two-processes", wayland: RUNS, app: "dnd-fixture", action: "two deckhand processes (serve sessions sharing a state dir) type 1000 characters each into the focused Name at once, granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["both ok", "Name holds one text then the other, each contiguous (never interleaved)", "the control (two state dirs: two leases) interleaves"] }),
  row({ id: "lease.busy", wayland: RUNS, app: "dnd-fixture", action: "a granted click on the canvas while a live process holds the foreground lease (DECKHAND_FOREGROUND_WAIT_MS=1500)", route: "none", expect: "FOREGROUND_BUSY", grant: "foreground", oracles: ["it waited 1.5 s, then named the holder (holderPid, holderCommand, holderSince)", "the fixture received nothing", ...UNCHANGED] }),
  row({ id: "serve.retry.once", wayland: RUNS, app: "dnd-fixture", action: "serve: click --element-index (OK) sent three times under one id (twice back to back, once after)", route: "accessibility", expect: "delivered", grant: "none", oracles: ["exactly one click reached OK", "the second and third answers are the first envelope, marked replayed", "status lists the id once, ok"] }),
  row({ id: "serve.client-deadline", wayland: RUNS, app: "dnd-fixture", action: "serve: a program holding Shift for 10 s (hold-key) with deadlineMs 800, granted", route: "foreground_input", expect: "TIMEOUT", grant: "foreground", oracles: ["answered TIMEOUT, reason client-deadline, within 2 s of the deadline, delivery partial, the step's receipt with keys released", "the app saw Shift pressed, then released when the deadline passed, not 10 s later"] }),
  // ---- end drag-lease

  // ---- issue 14: compact observation, paging, diffs (test/live/observation.test.ts)
  row({ id: "observe.compact.widget-factory", wayland: RUNS, capability: "compact / diff", app: "gtk3-widget-factory", action: "get-app-state --format full, then every compact page of the same snapshot (--snapshot-id --offset), and a fresh compact observation", route: "none", expect: "delivered", grant: "none", oracles: ["every actionable element of the full output (an action, secure, focused, or an input role) is a numbered line of the compact pages", "the compact output is at least 3x smaller in bytes (before/after in the metrics)"] }),
  row({ id: "observe.page.widget-factory", wayland: RUNS, capability: "compact / diff", app: "gtk3-widget-factory", action: "get-app-state --max-bytes 2000, focus an entry past the first page, page on (--snapshot-id --offset), focus it again", route: "accessibility", expect: "delivered", grant: "none", oracles: ["page 1 is truncated with a nextOffset, every page's tree text within 2000 bytes", "the entry past the page is refused ELEMENT_BEYOND_HORIZON (reason page, nextOffset, not dispatched)", "once a page shows it, focus on it is ok"] }),
  row({ id: "observe.compact.writer", wayland: RUNS, capability: "compact / diff", app: "libreoffice-writer", action: "get-app-state --format full of a three-paragraph document, then every compact page of the same snapshot, and a fresh compact observation", route: "none", expect: "delivered", grant: "none", oracles: ["every actionable element of the full output is a numbered line of the compact pages", "the compact output is at least 3x smaller in bytes", "the paragraphs' text is in the compact tree text"] }),
  row({ id: "observe.compact.chromium-article", wayland: WL_BROWSER_FORM.chromium, capability: "compact / diff", app: "chromium", action: "get-app-state --format full of a long page (test/fixtures/web/article.html: navigation, search, 12 sections, a table, a footer), then every compact page of the same snapshot, and a fresh compact observation", route: "none", expect: "delivered", grant: "none", oracles: ["every actionable element of the full output is a numbered line of the compact pages", "the compact output is at least 3x smaller in bytes", "links and headings are there, the paragraphs' running text is not"] }),
  row({ id: "observe.diff.fixture", wayland: RUNS, capability: "compact / diff", app: "fixture", action: "get-app-state, set-value Name, get-app-state --since; click OK by its old index; --since again; --since from the other window", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the diff is applied: Name changed (value, its line shows the new text), nothing added or removed, the tree text empty", "OK keeps its index: the click by it reaches OK", "an unchanged window gives an empty applied diff", "another window: applied false, reason window_changed, with the full page"] }),
  // ---- end compact observation
  // ---- issue 14: set-of-marks (test/live/marks.test.ts)
  row({ id: "marks.fixture.get-app-state", wayland: RUNS, capability: "marks", app: "fixture", action: "get-app-state --marks (compact default)", route: "none", expect: "delivered", grant: "none", oracles: MARKS_IMAGE }),
  row({ id: "marks.fixture.click-by-number", wayland: RUNS, capability: "marks", app: "fixture", action: "read the number on the OK button's box off the marks image, then click --element-index <that number>", route: "accessibility", expect: "delivered", grant: "none", oracles: ["the label reads back as OK's element index", "exactly one click reached OK", "no other control received anything"] }),
  row({ id: "marks.fixture.screenshot", wayland: RUNS, capability: "marks", app: "fixture", action: "screenshot --app --marks, then click Subscribe by the number read off the image with the returned snapshotId", route: "accessibility", expect: "delivered", grant: "none", oracles: [...MARKS_IMAGE, "snapshotId is stored: the click acts on it", "Subscribe toggled exactly once"] }),
  row({ id: "marks.fixture.page-horizon", wayland: RUNS, app: "fixture", action: "get-app-state --marks --max-bytes 2000: a page cut by its budget", route: "none", expect: "delivered", grant: "none", oracles: ["only elements up to the page's last position are numbered (count = interactive shown)", "no box for an element beyond the horizon", ...MARKS_IMAGE.slice(1)] }),
  row({ id: "marks.fixture.adapter-scaled", wayland: RUNS, capability: "marks", app: "fixture", action: "serve --adapter openai --marks --max-width 400: a screenshot call", route: "none", expect: "delivered", grant: "none", oracles: ["the image handed to the model is the marks PNG, 400 pixels wide (scaled by the helper)", "its map is the screenshot's (same origin and scale)", "each box sits on its element's bounds mapped through origin and scale", "image.marks names the snapshot whose indices the numbers are"] }),
  row({ id: "marks.widget-factory.get-app-state", wayland: RUNS, capability: "marks", app: "gtk3-widget-factory", action: "get-app-state --marks", route: "none", expect: "delivered", grant: "none", oracles: MARKS_IMAGE }),
  row({ id: "marks.qt5-fixture.click-by-number", wayland: RUNS, capability: "marks", app: "qt5-fixture", action: "get-app-state --marks, then click the OK button by the number read off the image", route: "accessibility", expect: "delivered", grant: "none", oracles: [...MARKS_IMAGE, "exactly one click reached OK"] }),
  row({ id: "marks.chromium.get-app-state", wayland: WL_BROWSER_FORM.chromium, capability: "marks", app: "chromium", action: "get-app-state --marks on test/fixtures/web/form.html", route: "none", expect: "delivered", grant: "none", oracles: [...MARKS_IMAGE, "the form's fields and buttons are among the numbered"] }),
  // ---- end set-of-marks
  // ---- issue 14: OCR (test/live/ocr.test.ts)
  row({ id: "ocr.tk.automatic", wayland: RUNS, capability: "OCR", app: "tk-fixture", action: "get-app-state of an app without a tree: OCR without being asked (real tesseract)", route: "none", expect: "delivered", grant: "none", oracles: [WL_XWAYLAND, "ocr.automatic true, engine tesseract x.y", "at least 95% of the known words read (words expected vs found recorded)", "each known line's OCR bounds lie inside the window and over the fixture's own box of that text", "no tree read; the no-tree warning stays"] }),
  row({ id: "ocr.tk.click.granted", wayland: RUNS, capability: "OCR", app: "tk-fixture", action: "click --element-index on the OCR text \"Open Report\", granted", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: [WL_XWAYLAND, "the fixture logged exactly one click, of Open Report, and one button press and release inside its box", "no other control received anything", "the pointer was restored (Wayland: never put back, the receipt says pointer_restored false, and nothing reads where it is)"] }),
  row({ id: "ocr.tk.click.ungranted", wayland: RUNS, app: "tk-fixture", action: "click --element-index on OCR text, no grant", route: "none", expect: "FOREGROUND_REQUIRED", grant: "none", oracles: [WL_XWAYLAND, "the fixture received nothing"] }),
  row({ id: "ocr.tk.refuse.set-value", wayland: RUNS, app: "tk-fixture", action: "set-value (and focus) on an OCR element, granted", route: "none", expect: "ACTION_UNSUPPORTED", grant: "foreground", oracles: [WL_XWAYLAND, "details.reason ocr-point-only", "the fixture received nothing"] }),
  row({ id: "ocr.tk.refuse.sensitive", wayland: RUNS, app: "tk-fixture", action: "click --element-index on the OCR text \"Delete Draft\", granted, no confirm hook", route: "none", expect: "CONFIRM_REQUIRED", grant: "foreground", oracles: [WL_XWAYLAND, "the decision read the OCR text (reason names Delete Draft)", "the fixture received nothing"] }),
  row({ id: "ocr.tk.scaled", wayland: RUNS, capability: "OCR", app: "tk-fixture", action: "observe with a max width (half size) and OCR: the text is read from a full-resolution capture", route: "none", expect: "delivered", grant: "none", oracles: [WL_XWAYLAND, "the snapshot's image is half size; OCR bounds still land on the fixture's boxes", "the words read match the full-size read (>= 95%), where reading the half-size image itself loses words (both recorded)", "the full-resolution capture is not left behind"] }),
  row({ id: "ocr.lo-gen.automatic", wayland: RUNS, capability: "OCR", app: "libreoffice-gen", action: "get-app-state of LibreOffice Writer on its X11 plugin (no tree): automatic OCR of a known document", route: "none", expect: "delivered", grant: "none", oracles: [WL_XWAYLAND, "the document's three known lines read (words expected vs found recorded)", "the menu bar's items read as separate elements", "bounds inside the window"] }),
  row({ id: "ocr.fixture.explicit", wayland: RUNS, capability: "OCR", app: "fixture", action: "get-app-state --ocr beside a tree, a revealed password in a field remembered secure", route: "none", expect: "delivered", grant: "none", oracles: ["the tree's elements are unchanged; OCR elements come after them, indexed past every tree index", "the controls' labels read, each over its tree element's bounds", "the revealed password is in no OCR line (its field blacked out), though tesseract reads it from a capture of the window's pixels by a tool that is not deckhand (X11: ImageMagick import of the root window; Wayland: grim); set-up: the field focused through deckhand, the password typed by xdotool / wtype, revealed by an accessibility click on Show password"] }),
  row({ id: "ocr.widget-factory.explicit", wayland: RUNS, capability: "OCR", app: "gtk3-widget-factory", action: "get-app-state --ocr", route: "none", expect: "delivered", grant: "none", oracles: ["OCR lines added beside the tree", "at least half of the visible named labels and buttons read over their tree bounds (recall recorded)"] }),
  row({ id: "ocr.featherpad.explicit", wayland: RUNS, capability: "OCR", app: "featherpad", action: "get-app-state --ocr on a known text file", route: "none", expect: "delivered", grant: "none", oracles: ["the file's three known lines read (words expected vs found recorded)", "bounds inside the window"] }),
  row({ id: "ocr.chromium.explicit", wayland: RUNS, capability: "OCR", app: "chromium", action: "get-app-state --ocr on test/fixtures/web/form.html", route: "none", expect: "delivered", grant: "none", oracles: ["the page's heading, labels, button and result text read", "the heading's OCR box over its tree bounds"] }),
  row({ id: "ocr.xterm.refused", wayland: RUNS, app: "xterm", action: "get-app-state --ocr on xterm (a built-in denied terminal)", route: "none", expect: "POLICY_DENIED", grant: "none", oracles: [WL_XWAYLAND, "rule builtin:terminal:xterm", "no screenshot written, nothing read"] }),
  // ---- end OCR
  // ---- issue 14: screenshot options (test/live/matrix/image-options-rows.ts: image-options.test.ts on X11, matrix-wayland.test.ts on Wayland)
  row({ id: "image-options.fixture.region", wayland: RUNS, capability: "image options", app: "fixture", action: "screenshot --region x,y,w,h in window coordinates, and the same rectangle with --region-coords screen", route: "none", expect: "delivered", grant: "none", oracles: ["the image is pixel for pixel the crop of the full window capture at (x, y)", "origin = the window's bounds origin + (x, y); screenRect is the region", "the same pixels through --region-coords screen", "the screen itself shows those pixels at screenRect (X11: ImageMagick's import of the root window; Wayland: grim, run as the desktop's user, which reads the screen through the same wlr-screencopy protocol as the helper, though not through deckhand's code)"] }),
  row({ id: "image-options.fixture.max-width", wayland: RUNS, capability: "image options", app: "fixture", action: "screenshot --region (even size) --max-width half its width", route: "none", expect: "delivered", grant: "none", oracles: ["width = --max-width, scale = width / region width, screenRect = the region", "each pixel is the mean of the 2x2 window pixels the map puts under it (within 1)"] }),
  row({ id: "image-options.fixture.formats", wayland: RUNS, capability: "image options", app: "fixture", action: "get-app-state and screenshot --image-format jpeg / webp (--quality 80)", route: "none", expect: "delivered", grant: "none", oracles: ["the files are .jpg / .webp, their magic bytes and ImageMagick's identify say JPEG / WEBP of the reported size", "decoded, they are close to the PNG (mean error per channel < 6)", "an element's bounds map into the image through screenRect and scale"] }),
  row({ id: "image-options.fixture.refuse.region-outside", wayland: RUNS, app: "fixture", action: "screenshot --region entirely outside the window", route: "none", expect: "INVALID_ARGUMENTS", grant: "none", oracles: ["details.reason region-outside-window", "no image file was written"] }),
  row({ id: "image-options.widget-factory.formats", wayland: RUNS, capability: "image options", app: "gtk3-widget-factory", action: "screenshot of the window resized to 1600x1000 (Wayland: floated at that size by sway): PNG, then JPEG and WebP at quality 30, 80 and 95", route: "none", expect: "delivered", grant: "none", oracles: ["JPEG and WebP at 80 are smaller than the PNG (byte counts recorded)", "a lower quality gives a smaller file, for both formats", "each decodes (ImageMagick) to the window's size, close to the PNG"] }),
  row({ id: "image-options.widget-factory.region", wayland: RUNS, capability: "image options", app: "gtk3-widget-factory", action: "screenshot --region in window coordinates, and --max-width", route: "none", expect: "delivered", grant: "none", oracles: ["pixel for pixel the crop of the full capture", "--max-width: width at most the cap, scale and screenRect as the map says"] }),
  row({ id: "image-options.featherpad.region", wayland: RUNS, capability: "image options", app: "featherpad", action: "screenshot --region in window coordinates; the same region as WebP", route: "none", expect: "delivered", grant: "none", oracles: ["pixel for pixel the crop of the full capture", "the WebP decodes to the region's size, close to the PNG crop"] }),
  row({ id: "image-options.chromium.region", wayland: RUNS, capability: "image options", app: "chromium", action: "screenshot --region in window coordinates over a static page; the same region as JPEG", route: "none", expect: "delivered", grant: "none", oracles: ["pixel for pixel the crop of the full capture", "the JPEG decodes to the region's size, close to the PNG crop"] }),
  row({ id: "image-options.screen.region", wayland: RUNS, capability: "image options", app: "fixture", action: "screenshot with no app --region in screen coordinates (over the fixture), and --max-width", route: "none", expect: "delivered", grant: "none", oracles: ["pixel for pixel the crop of the whole-screen capture", "screenRect is the region; scaled, width <= the cap"] }),
  // ---- end screenshot options
  // ---- issue 15: observation (matrix/observe-direct-rows.ts: test/live/observe-direct.test.ts on X11, matrix-wayland.test.ts on Wayland, deckhand run as the apps' user)
  row({ id: "observe.direct.fixture", wayland: RUNS, capability: "observe", app: "fixture", action: "get_tree over the app's own socket (at-spi2-atk's GetApplicationBusAddress), and get-app-state through serve with a password typed in", route: "none", expect: "delivered", grant: "none", oracles: ["the helper read the tree over a direct connection to the app's pid", "the same tree, node for node, as read through the bus daemon (DECKHAND_NO_DIRECT=1)", "the password field is black in the get-app-state screenshot, the window is not"] }),
  row({ id: "observe.direct.chromium", wayland: RUNS, capability: "observe", app: "chromium", action: "get_tree over Chromium's own socket, and get-app-state through serve with a password typed into test/fixtures/web/form.html", route: "none", expect: "delivered", grant: "none", oracles: ["the helper read the tree over a direct connection to the browser's pid", "the same tree as through the bus daemon", "the password field is black in the get-app-state screenshot (found by Collection), the page is not"] }),
  row({ id: "observe.direct.qt5-fallback", wayland: RUNS, app: "qt5-fixture", action: "get_tree of a Qt 5 app (its bridge offers no socket of its own)", route: "none", expect: "delivered", grant: "none", oracles: ["the helper says no direct connection and reads through the bus", "the same tree as with direct connections switched off"] }),
  // ---- end observation
  // ---- issue 15: click (test/live/coordinate-click.test.ts: a granted click at a point is one point_click request)
  row({ id: "click.point.fixture.canvas", wayland: RUNS, capability: "click", app: "fixture", action: "serve --allow-foreground: click --x --y on the canvas, 20 times", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["each click is one list_windows and one point_click request (DECKHAND_TRACE_OPS), no hit_test, tree read or input op", "the fixture logged one press and one release of button 1 on the Canvas at the point per click (and the pointer's motion there), and nothing else", "the pointer is back where it was; focus and stacking unchanged after the first click", "the median round trip is recorded"] }),
  row({ id: "click.point.fixture.sensitive.refused", wayland: RUNS, app: "fixture", action: "serve --allow-foreground, no confirm hook: click --x --y on the Delete button", route: "none", expect: "CONFIRM_REQUIRED", grant: "foreground", oracles: ["the helper held it: one point_click, delivery not_dispatched", "the fixture received nothing", ...UNCHANGED] }),
  row({ id: "click.point.fixture.sensitive.confirmed", wayland: RUNS, app: "fixture", action: "serve --allow-foreground --confirm-cmd (allows): click --x --y on the Delete button", route: "accessibility", expect: "delivered", grant: "confirm-hook", oracles: ["two point_click requests: the held one, then the one for the confirmed chain", "exactly one click reached Delete", "no other control received anything"] }),
  row({ id: "click.point.widget-factory.check", wayland: RUNS, capability: "click", app: "gtk3-widget-factory", action: "serve --allow-foreground: click --x --y on an unchecked check button of page 1", route: "accessibility", expect: "delivered", grant: "foreground", oracles: ["one point_click request, route accessibility (pressed)", "a fresh observation shows it checked", "the pointer did not move (X11: the X server's pointer; Wayland: not checked, no client can read the pointer and gtk3-widget-factory logs none)"] }),
  row({ id: "click.point.widget-factory.entry", wayland: RUNS, capability: "click", app: "gtk3-widget-factory", action: "serve --allow-foreground: click --x --y in a text entry of page 1", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one point_click request, route foreground_input", "a fresh observation shows the entry focused", "the pointer is back where it was (X11: the X server's pointer; Wayland: it is never put back, the receipt says pointer_restored false, and nothing reads where it is: gtk3-widget-factory logs no pointer events)"] }),
  row({ id: "click.point.qt5-fixture.check", wayland: { notApplicable: "its route (accessibility, pressed) does not hold on sway: a Qt 5 app's open menu cannot be told there, so the click goes by pointer (row wayland.click.point.qt5-fixture.check)" }, capability: "click", app: "qt5-fixture", action: "serve --allow-foreground: click --x --y on the Subscribe check box", route: "accessibility", expect: "delivered", grant: "foreground", oracles: ["one point_click request, route accessibility", "Subscribe toggled exactly once", "nothing else reached the fixture"] }),
  row({ id: "wayland.click.point.qt5-fixture.check", wayland: RUNS, x11NotApplicable: "on X11 the click is pressed through accessibility (row click.point.qt5-fixture.check)", capability: "click", app: "qt5-fixture", action: "serve --allow-foreground: click --x --y on the Subscribe check box", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: [WL_QT_POINT, "helper ops: list_windows, point_click (held), get_tree, point_click", "Subscribe toggled exactly once; nothing else reached the fixture but the click's own: the pointer entering its window and the focus moving to Subscribe", "the fixture saw the pointer last over its window, and it holds still"] }),
  row({ id: "click.point.qt5-fixture.entry", wayland: RUNS, capability: "click", app: "qt5-fixture", action: "serve --allow-foreground: click --x --y in the Name line edit", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["one point_click request, route foreground_input (the button held until Qt read the press); Wayland: two, with a get_tree between (" + WL_QT_POINT + ")", "the Name line edit took focus, nothing else reached the fixture (Wayland: but the pointer entering its window)", "the pointer is back where it was (Wayland: never put back, the receipt says pointer_restored false; the fixture saw the pointer last over its window, and it holds still)"] }),
  row({ id: "settle.fixture.typed-keys", wayland: RUNS, app: "fixture", action: "serve --allow-foreground: run [click --x --y in the Name entry, type-text (keys, no element)] with its final observation, 5 times with different text", route: "foreground_input", expect: "delivered", grant: "foreground", oracles: ["each final observation shows Name holding exactly the text typed (the keys' effect, which the app applies after the input returns)", "receipt.settle says settled; its waitedMs is recorded"] }),
  // ---- end click
]);
