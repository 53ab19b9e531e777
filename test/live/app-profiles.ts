// Throwaway profiles and arguments for the real apps the live tests start
// (browsers on the web fixture, LibreOffice): no first-run pages, nothing
// talking to the network. The one copy of the browser settings: every live
// file that starts Chromium or Firefox takes them from here.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The browser window's size: the web fixture pages fit it. */
export type WindowSize = { width: number; height: number };
const DEFAULT_SIZE: WindowSize = { width: 1200, height: 900 };

export const CHROMIUM_FLAGS = (profile: string, size: WindowSize = DEFAULT_SIZE): string[] => [
  "--no-sandbox",
  "--no-first-run",
  "--no-default-browser-check",
  "--disable-gpu",
  `--user-data-dir=${profile}`,
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--password-store=basic",
  "--window-position=0,0",
  `--window-size=${size.width},${size.height}`,
];

/** Firefox's command-line arguments before the URL (the profile passed explicitly, no remote instance). */
export const FIREFOX_FLAGS = (profile: string, size: WindowSize = DEFAULT_SIZE): string[] => ["-no-remote", "-profile", profile, "-width", String(size.width), "-height", String(size.height)];

/**
 * A browser started directly on `url` (not through deckhand launch):
 * Chromium with its renderer accessibility switched on by the flag, Firefox
 * by FIREFOX_ENV (pass it as the process environment).
 */
export function browserArgv(kind: "chromium" | "firefox", url: string, profile: string, size: WindowSize = DEFAULT_SIZE): string[] {
  return kind === "chromium" ? ["/usr/bin/chromium", "--force-renderer-accessibility", ...CHROMIUM_FLAGS(profile, size), url] : ["/usr/bin/firefox-esr", ...FIREFOX_FLAGS(profile, size), url];
}

/** Firefox's own environment: GNOME_ACCESSIBILITY=1 enables its accessibility service at start. */
export const FIREFOX_ENV = { GNOME_ACCESSIBILITY: "1", MOZ_CRASHREPORTER_DISABLE: "1", MOZ_DISABLE_AUTO_SAFE_MODE: "1" };

/** A fresh browser profile directory (the caller removes it); Firefox's gets a user.js without first-run, telemetry or update traffic. */
export function browserProfile(kind: "chromium" | "firefox", prefix = "deckhand-browser-"): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}${kind}-`));
  if (kind === "firefox") writeFirefoxPrefs(dir);
  return dir;
}

/** Firefox's user.js in a profile directory: no first-run pages, telemetry, updates or prompts; the only tab is the fixture. */
export function writeFirefoxPrefs(dir: string): void {
  writeFileSync(
    join(dir, "user.js"),
    [
      'user_pref("browser.shell.checkDefaultBrowser", false);',
      'user_pref("browser.aboutwelcome.enabled", false);',
      'user_pref("browser.startup.homepage_override.mstone", "ignore");',
      'user_pref("startup.homepage_welcome_url", "");',
      'user_pref("startup.homepage_welcome_url.additional", "");',
      'user_pref("datareporting.policy.dataSubmissionEnabled", false);',
      'user_pref("datareporting.healthreport.uploadEnabled", false);',
      'user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);',
      'user_pref("app.update.auto", false);',
      'user_pref("app.update.enabled", false);',
      'user_pref("browser.safebrowsing.malware.enabled", false);',
      'user_pref("browser.safebrowsing.phishing.enabled", false);',
      'user_pref("network.captive-portal-service.enabled", false);',
      'user_pref("network.connectivity-service.enabled", false);',
      'user_pref("extensions.update.enabled", false);',
      'user_pref("browser.newtabpage.enabled", false);',
      'user_pref("signon.rememberSignons", false);',
      'user_pref("accessibility.force_disabled", -1);',
      'user_pref("browser.tabs.warnOnClose", false);',
      'user_pref("browser.warnOnQuit", false);',
      'user_pref("browser.sessionstore.resume_from_crash", false);',
      "",
    ].join("\n"),
  );
}

/** A fresh LibreOffice user installation: no tip-of-the-day, no first-run wizard, no autosave (the caller removes it). */
export function libreOfficeProfile(prefix = "deckhand-lo-profile-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const prop = (path: string, name: string, value: string) => `<item oor:path="${path}"><prop oor:name="${name}" oor:op="fuse"><value>${value}</value></prop></item>`;
  const user = join(dir, "user");
  mkdirSync(user, { recursive: true });
  writeFileSync(
    join(user, "registrymodifications.xcu"),
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
      prop("/org.openoffice.Office.Common/Misc", "ShowTipOfTheDay", "false"),
      prop("/org.openoffice.Office.Common/Misc", "FirstRun", "false"),
      prop("/org.openoffice.Setup/Office", "ooSetupInstCompleted", "true"),
      prop("/org.openoffice.Office.Common/Save/Document", "AutoSave", "false"),
      "</oor:items>",
      "",
    ].join("\n"),
  );
  return dir;
}

/** soffice's flags for a test run: no restore dialog, no splash, no lock file, the given profile. */
export function libreOfficeFlags(profile: string): string[] {
  return ["--norestore", "--nologo", "--nolockcheck", `-env:UserInstallation=file://${profile}`];
}

/** The soffice command line for a module (--writer, --calc) with these flags and files. */
export function sofficeArgv(module: "--writer" | "--calc", profile: string, ...files: string[]): string[] {
  return ["/usr/bin/soffice", ...libreOfficeFlags(profile), module, ...files];
}

/** A flat ODF text document with these paragraphs, in dir. */
export function writerDocument(dir: string, name: string, paragraphs: string[]): string {
  const doc = join(dir, `${name}.fodt`);
  writeFileSync(
    doc,
    [
      '<?xml version="1.0" encoding="UTF-8"?>',
      '<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2" office:mimetype="application/vnd.oasis.opendocument.text">',
      "<office:body><office:text>",
      ...paragraphs.map((p) => `<text:p>${p}</text:p>`),
      "</office:text></office:body></office:document>",
      "",
    ].join("\n"),
  );
  return doc;
}
