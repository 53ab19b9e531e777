// What to tell an agent (and its operator) when an app shows no
// accessibility tree: the fix depends on the toolkit, which the helper
// recognises (list_apps `toolkit`). Every toolkit decides at start-up whether
// to expose its tree, so the advice nearly always ends in "restart it".

/** A warning carried by an observation: stable code, what happened, what to do. */
export interface ObservationWarning {
  code: string;
  message: string;
  remediation: string;
}

const BY_TOOLKIT: Readonly<Record<string, string>> = Object.freeze({
  chromium:
    "Chromium builds its accessibility tree only when the session's accessibility flag was on when it started, or with --force-renderer-accessibility: run `deckhand permissions --enable-accessibility`, then restart the browser.",
  electron:
    "Electron apps build their accessibility tree only when the accessibility flag was on when they started, or with --force-renderer-accessibility: run `deckhand permissions --enable-accessibility`, then restart the app.",
  qt5: "Qt enables its AT-SPI bridge only when QT_ACCESSIBILITY=1 is in its environment (or the accessibility flag was on when it started): restart the app with QT_ACCESSIBILITY=1.",
  qt6: "Qt enables its AT-SPI bridge only when QT_ACCESSIBILITY=1 is in its environment (or the accessibility flag was on when it started): restart the app with QT_ACCESSIBILITY=1.",
  firefox:
    "Firefox exposes its tree when the accessibility flag was on when it started (or with GNOME_ACCESSIBILITY=1): run `deckhand permissions --enable-accessibility`, then restart it.",
  libreoffice:
    "LibreOffice speaks AT-SPI only through its GTK3 plugin: install libreoffice-gtk3 and restart it (SAL_USE_VCLPLUGIN=gtk3 forces the plugin).",
  gtk3: "GTK 3 exposes its tree through the ATK bridge (Debian: libatk-adaptor), and not when NO_AT_BRIDGE=1 is set: install the bridge and restart the app.",
  gtk4: "GTK 4 exposes its tree unless GTK_A11Y=none is set: restart the app without it.",
});

const GENERIC =
  "The app exposes no accessibility tree (an old X toolkit, a canvas or remote-desktop app, or a toolkit whose bridge is off): the observation is the screenshot alone, and acting on it needs coordinates under the operator's foreground grant.";

/** The warning for an observation of an app without a tree. */
export function noTreeWarning(app: { name: string; toolkit?: string | null }): ObservationWarning {
  const specific = app.toolkit && Object.hasOwn(BY_TOOLKIT, app.toolkit) ? BY_TOOLKIT[app.toolkit] : undefined;
  return {
    code: "NO_ACCESSIBILITY_TREE",
    message: `${app.name} exposes no accessibility tree${app.toolkit ? ` (toolkit: ${app.toolkit})` : ""}: this snapshot is the screenshot only, with no elements`,
    remediation: specific ?? GENERIC,
  };
}
