// Whether deckhand may touch an app (observe or act): built-in deny, then the
// admin and user layers. Deny wins everywhere; the user layer can only narrow
// what the admin layer allows. See docs/policy.md for the precedence table.
import { DeckhandError } from "../protocol/errors.ts";
import { BUILTIN_DENY, PRIVACY_PANE_IDENTIFIER_PARTS, PRIVACY_PANE_TITLE_WORDS, SETTINGS_APPS, type BuiltinApp, type KnownApp, type SettingsApp } from "./builtin.ts";
import { defaultFingerprintIndex, type FingerprintIndex } from "./fingerprint.ts";
import { globMatch } from "./glob.ts";
import { describeIdentity, identityKeys, normalizeDesktopId, normalizeExecutableName, type AppIdentity, type IdentityKeys } from "./identity.ts";
import type { Policy, PolicyEntry, PolicyLayer } from "./load.ts";

/** The window an action or observation targets, when there is one. */
export type WindowInfo = { title: string; identifier?: string | null };

export type DecisionSource = "builtin" | "admin" | "user" | "default";

export type AppDecision = {
  decision: "allow" | "deny";
  source: DecisionSource;
  /**
   * Which rule decided, e.g. `builtin:terminal:xterm`,
   * `builtin:privacy_pane:gnome-settings`, `admin:deny[0]`, `user:allow[2]`,
   * `admin:default=deny`, `admin:broken`, `default:allow`.
   */
  rule: string;
  /** What matched: executable, comm, desktop_id, name, fingerprint, window_title, window_identifier, entry or default. */
  matchedBy: string;
};

export type DecideOptions = {
  /**
   * Content fingerprints of built-in binaries (renamed-copy detection).
   * Default: the process-wide index; null disables the check.
   */
  fingerprints?: FingerprintIndex | null;
};

// ---------------------------------------------------------------- built-ins

const COMM_LEN = 15; // Linux TASK_COMM_LEN - 1: comm is the exec'd basename, truncated

/** Which identity key (if any) names one of `app`'s known executables, ids or names. */
export function knownAppMatch(keys: IdentityKeys, app: KnownApp): "executable" | "comm" | "desktop_id" | "name" | null {
  if (keys.executable && app.executables.includes(keys.executable)) return "executable";
  if (keys.comm) {
    const comm = normalizeExecutableName(keys.comm);
    if (app.executables.some((e) => e === comm || (comm.length === COMM_LEN && e.slice(0, COMM_LEN) === comm))) return "comm";
  }
  for (const id of [keys.desktopId, keys.bundleId]) {
    if (!id) continue;
    // Snap desktop ids are "<snap>_<app>"; either half may name the app.
    const ids = [id, ...id.split("_").filter(Boolean)];
    if (ids.some((x) => app.desktopIds.includes(x))) return "desktop_id";
  }
  if (keys.names.some((n) => app.names.includes(n))) return "name";
  return null;
}

export type BuiltinMatch = { app: BuiltinApp; matchedBy: "executable" | "comm" | "desktop_id" | "name" | "fingerprint" };

/** The built-in denied app this identity is, or null. */
export function builtinDenyMatch(identity: AppIdentity, opts: DecideOptions = {}): BuiltinMatch | null {
  const keys = identityKeys(identity);
  for (const app of BUILTIN_DENY) {
    const by = knownAppMatch(keys, app);
    if (by) return { app, matchedBy: by };
  }
  const index = opts.fingerprints === undefined ? defaultFingerprintIndex() : opts.fingerprints;
  const fp = index?.lookup(identity.executable) ?? null;
  return fp ? { app: fp.app, matchedBy: "fingerprint" } : null;
}

/** The OS settings app this identity is (by executable, comm or desktop id; never by display name). */
export function settingsApp(identity: AppIdentity): SettingsApp | null {
  const keys = identityKeys(identity);
  const byIdOnly: IdentityKeys = { ...keys, names: [] };
  return SETTINGS_APPS.find((app) => knownAppMatch(byIdOnly, { ...app, names: [] }) !== null) ?? null;
}

const INVISIBLE = /[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]/g;
const TITLE_WORDS = PRIVACY_PANE_TITLE_WORDS.map(
  (w) => [w, new RegExp(`(?<![\\p{L}\\p{N}])${w.replace(/ /g, "\\s+")}(?![\\p{L}\\p{N}])`, "iu")] as const,
);

/**
 * Whether a window shows a privacy or security pane, by title (whole word,
 * case-insensitive) or identifier (substring, case-insensitive). Meaningful
 * only for a settings app's window: see decideApp.
 */
export function privacyPaneMatch(window: WindowInfo): { matchedBy: "window_title" | "window_identifier"; word: string } | null {
  const title = window.title.normalize("NFKC").replace(INVISIBLE, "");
  for (const [word, re] of TITLE_WORDS) if (re.test(title)) return { matchedBy: "window_title", word };
  const ident = (window.identifier ?? "").normalize("NFKC").replace(INVISIBLE, "").toLowerCase();
  if (ident) for (const part of PRIVACY_PANE_IDENTIFIER_PARTS) if (ident.includes(part)) return { matchedBy: "window_identifier", word: part };
  return null;
}

// ---------------------------------------------------------------- entries

function isWindowsPath(p: string): boolean {
  return /^[A-Za-z]:[\\/]/.test(p) || p.startsWith("\\\\");
}

/**
 * Whether a policy entry matches. Every key given must match. Deny entries
 * match an `id` against more keys (comm, names) than allow entries (canonical
 * executable basename and desktop id only): matching wider can only deny more.
 */
export function entryMatches(entry: PolicyEntry, identity: AppIdentity, window: WindowInfo | undefined, kind: "allow" | "deny"): boolean {
  const keys = identityKeys(identity);
  if (entry.id !== undefined) {
    const pattern = normalizeExecutableName(normalizeDesktopId(entry.id));
    const candidates = [keys.executable, keys.desktopId, keys.bundleId ?? null];
    if (kind === "deny") candidates.push(keys.comm, ...keys.names);
    if (!candidates.some((c) => c !== null && globMatch(pattern, c, true))) return false;
  }
  if (entry.path !== undefined) {
    if (!identity.executable) return false;
    if (kind === "allow" && identity.executableDeleted) return false;
    if (!globMatch(entry.path, identity.executable, isWindowsPath(entry.path))) return false;
  }
  if (entry.name !== undefined) {
    if (!keys.names.some((n) => globMatch(entry.name!, n, true))) return false;
  }
  if (entry.window_title !== undefined) {
    if (!window || !globMatch(entry.window_title, window.title, true)) return false;
  }
  return true;
}

function firstMatch(entries: PolicyEntry[], identity: AppIdentity, window: WindowInfo | undefined, kind: "allow" | "deny"): number {
  return entries.findIndex((e) => entryMatches(e, identity, window, kind));
}

// ---------------------------------------------------------------- decision

const deny = (source: DecisionSource, rule: string, matchedBy: string): AppDecision => ({ decision: "deny", source, rule, matchedBy });
const allow = (source: DecisionSource, rule: string, matchedBy: string): AppDecision => ({ decision: "allow", source, rule, matchedBy });

/**
 * Decide whether `identity` (and, when given, its `window`) may be observed
 * or acted on.
 *
 * 1. Built-in deny (terminals, password managers, keyrings; a settings app's
 *    privacy/security pane) — no policy can lift it.
 * 2. A broken admin file denies everything.
 * 3. Any admin [[deny]] match, then any user [[deny]] match.
 * 4. Admin `default = "deny"`: only an admin [[allow]] match can allow.
 * 5. User `default = "deny"`: a user [[allow]] match is needed as well.
 * 6. Otherwise allowed (source "default", or the layer whose [[allow]] matched).
 */
export function decideApp(policy: Policy, identity: AppIdentity, window?: WindowInfo, opts: DecideOptions = {}): AppDecision {
  const builtin = builtinDenyMatch(identity, opts);
  if (builtin) return deny("builtin", `builtin:${builtin.app.category}:${builtin.app.key}`, builtin.matchedBy);
  if (window) {
    const settings = settingsApp(identity);
    const pane = settings ? privacyPaneMatch(window) : null;
    if (settings && pane) return deny("builtin", `builtin:privacy_pane:${settings.key}`, pane.matchedBy);
  }

  const { admin, user } = policy;
  if (admin?.broken) return deny("admin", "admin:broken", "default");
  for (const layer of [admin, user]) {
    if (!layer) continue;
    const i = firstMatch(layer.deny, identity, window, "deny");
    if (i >= 0) return deny(layer.source, `${layer.source}:deny[${i}]`, "entry");
  }

  let granted: AppDecision | null = null;
  for (const layer of [admin, user] as (PolicyLayer | null)[]) {
    if (!layer) continue;
    const i = firstMatch(layer.allow, identity, window, "allow");
    if (layer.default === "deny" && i < 0) return deny(layer.source, `${layer.source}:default=deny`, "default");
    if (i >= 0 && (layer.default === "deny" || !granted)) granted = allow(layer.source, `${layer.source}:allow[${i}]`, "entry");
  }
  return granted ?? allow("default", "default:allow", "default");
}

/** decideApp, throwing POLICY_DENIED (details: source, rule) on deny. */
export function assertAllowed(policy: Policy, identity: AppIdentity, window?: WindowInfo, opts: DecideOptions = {}): AppDecision {
  const d = decideApp(policy, identity, window, opts);
  if (d.decision === "deny") {
    const what = d.rule.startsWith("builtin:privacy_pane") ? "this settings pane" : describeIdentity(identity);
    throw new DeckhandError("POLICY_DENIED", `policy denies ${what} (${d.rule})`, {
      details: { source: d.source, rule: d.rule },
    });
  }
  return d;
}
