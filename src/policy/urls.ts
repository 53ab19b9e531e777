// Blocked URLs. For a browser, the orchestrator reads the current page URL
// from the accessibility tree (the address bar / document URL) and checks it
// here before anything is observed or dispatched. A URL never appears in an
// error, a log or the audit: only the glob that matched and its layer.
import { DeckhandError } from "../protocol/errors.ts";
import { BROWSERS, type KnownApp } from "./builtin.ts";
import { knownAppMatch } from "./decide.ts";
import { globMatch } from "./glob.ts";
import { identityKeys, type AppIdentity } from "./identity.ts";
import { layers, type Policy, type PolicySource } from "./load.ts";

/** The known browser this identity is, or null. */
export function browserOf(identity: AppIdentity): KnownApp | null {
  const keys = identityKeys(identity);
  return BROWSERS.find((b) => knownAppMatch(keys, b) !== null) ?? null;
}

/** Whether the app is a browser whose page URL must be checked against `blocked_urls`. */
export function isBrowser(identity: AppIdentity): boolean {
  return browserOf(identity) !== null;
}

export type BlockedUrlMatch = { glob: string; source: PolicySource; index: number };

/** Every blocked-URL glob in effect (admin's first; the user layer can only add). */
export function blockedUrlGlobs(policy: Policy): BlockedUrlMatch[] {
  return layers(policy).flatMap((l) => l.blockedUrls.map((glob, index) => ({ glob, source: l.source, index })));
}

type SplitUrl = { head: string; tail: string };

// "scheme://authority" and the rest ("/path?query#fragment"), for a URL or a glob.
function split(s: string): SplitUrl | null {
  const sep = s.indexOf("://");
  if (sep < 0) return null;
  const slash = s.indexOf("/", sep + 3);
  return slash < 0 ? { head: s, tail: "" } : { head: s.slice(0, slash), tail: s.slice(slash) };
}

/** Normalised spellings of a page URL to match: with and without userinfo and port. */
function urlForms(url: string): { whole: string; parts: SplitUrl[] } {
  const trimmed = url.trim();
  let parsed: URL | null = null;
  try {
    parsed = new URL(trimmed);
  } catch {
    parsed = null;
  }
  if (!parsed || !parsed.host) {
    const s = split(trimmed);
    return { whole: trimmed, parts: s ? [s] : [] };
  }
  const tail = `${parsed.pathname}${parsed.search}${parsed.hash}`;
  const scheme = parsed.protocol.replace(/:$/, "");
  const heads = new Set([`${scheme}://${parsed.host}`, `${scheme}://${parsed.hostname}`]);
  // A trailing dot names the same host ("bank.example." == "bank.example").
  if (parsed.hostname.endsWith(".")) heads.add(`${scheme}://${parsed.hostname.slice(0, -1)}`);
  return { whole: parsed.href, parts: [...heads].map((head) => ({ head, tail })) };
}

/**
 * The first blocked-URL glob matching `url`, or null.
 *
 * Globs: `*` matches any run of characters. A glob with "://" is split into
 * scheme+host (matched case-insensitively against the URL's scheme and host,
 * with or without port) and path (matched case-sensitively against path,
 * query and fragment); a glob without a path part matches every path. A
 * glob without "://" is matched case-insensitively against the whole URL.
 */
export function matchBlockedUrlEntry(policy: Policy, url: string): BlockedUrlMatch | null {
  const globs = blockedUrlGlobs(policy);
  if (globs.length === 0) return null;
  const forms = urlForms(url);
  for (const g of globs) {
    const gs = split(g.glob);
    if (!gs) {
      if (globMatch(g.glob, forms.whole, true) || globMatch(g.glob, url.trim(), true)) return g;
      continue;
    }
    const tailGlob = gs.tail === "" ? "*" : gs.tail;
    for (const p of forms.parts) {
      if (globMatch(gs.head, p.head, true) && globMatch(tailGlob, p.tail, false)) return g;
      // "https://example.com" (no path) is the page "/".
      if (p.tail === "" && globMatch(gs.head, p.head, true) && globMatch(tailGlob, "/", false)) return g;
    }
  }
  return null;
}

/** The glob that matched `url`, or null. Never echo the URL itself anywhere. */
export function matchBlockedUrl(policy: Policy, url: string): string | null {
  return matchBlockedUrlEntry(policy, url)?.glob ?? null;
}

/**
 * Refuse (BLOCKED_URL) when `identity` is a browser on a blocked page. With
 * blocked URLs configured, a browser whose URL could not be read (`url` null)
 * is refused too: deckhand fails closed rather than guessing the page.
 * Details carry the layer and the glob's index, never the URL.
 */
export function assertUrlAllowed(policy: Policy, identity: AppIdentity, url: string | null | undefined): void {
  if (!isBrowser(identity)) return;
  if (blockedUrlGlobs(policy).length === 0) return;
  if (url === null || url === undefined || url.trim() === "") {
    throw new DeckhandError("BLOCKED_URL", "the browser's page URL could not be read and blocked URLs are configured", {
      details: { reason: "url_unreadable" },
    });
  }
  const m = matchBlockedUrlEntry(policy, url);
  if (m) {
    throw new DeckhandError("BLOCKED_URL", `the page's URL matches ${m.source} blocked_urls[${m.index}]`, {
      details: { source: m.source, rule: `${m.source}:blocked_urls[${m.index}]`, glob: m.glob },
    });
  }
}
