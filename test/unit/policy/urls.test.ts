import { describe, expect, it } from "vitest";
import { globMatch } from "../../../src/policy/glob.ts";
import { EMPTY_POLICY, failClosedLayer } from "../../../src/policy/load.ts";
import { assertUrlAllowed, isBrowser, matchBlockedUrl } from "../../../src/policy/urls.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { ident, policyOf } from "./helpers.ts";

const p = policyOf(`blocked_urls = ["*://*.bank.example/*", "*://bank.example/*"]`, `blocked_urls = ["https://mail.example.com/Private/*", "*://intranet", "*evil*"]`);

describe("glob", () => {
  it("* matches any run, including / and nothing", () => {
    expect(globMatch("a*c", "ac", false)).toBe(true);
    expect(globMatch("a*c", "a/b/c", false)).toBe(true);
    expect(globMatch("a*c", "a/b/cd", false)).toBe(false);
    expect(globMatch("*", "", false)).toBe(true);
    expect(globMatch("a.c", "abc", false)).toBe(false);
    expect(globMatch("A*", "abc", true)).toBe(true);
    expect(globMatch("A*", "abc", false)).toBe(false);
  });

  it("is linear enough for hostile input", () => {
    const start = Date.now();
    expect(globMatch("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a".repeat(5000), false)).toBe(false);
    expect(Date.now() - start).toBeLessThan(2000);
  });
});

describe("blocked URLs", () => {
  it("matches scheme and host case-insensitively", () => {
    expect(matchBlockedUrl(p, "https://www.bank.example/login")).toBe("*://*.bank.example/*");
    expect(matchBlockedUrl(p, "HTTPS://WWW.BANK.EXAMPLE/login")).toBe("*://*.bank.example/*");
    expect(matchBlockedUrl(p, "https://bank.example/")).toBe("*://bank.example/*");
    expect(matchBlockedUrl(p, "https://bank.example")).toBe("*://bank.example/*");
  });

  it("matches the path case-sensitively", () => {
    expect(matchBlockedUrl(p, "https://mail.example.com/Private/inbox")).toBe("https://mail.example.com/Private/*");
    expect(matchBlockedUrl(p, "https://mail.example.com/private/inbox")).toBeNull();
  });

  it("ignores port and userinfo in the host part", () => {
    expect(matchBlockedUrl(p, "https://user:pw@a.bank.example:8443/x")).toBe("*://*.bank.example/*");
    expect(matchBlockedUrl(p, "https://a.bank.example./x")).toBe("*://*.bank.example/*");
  });

  it("a host glob cannot be satisfied through the path or query", () => {
    expect(matchBlockedUrl(p, "https://attacker.test/?next=x.bank.example/")).toBeNull();
    expect(matchBlockedUrl(p, "https://attacker.test/a.bank.example/")).toBeNull();
    expect(matchBlockedUrl(p, "https://bank.example.attacker.test/")).toBeNull();
  });

  it("a glob without a path matches every path; one without :// matches the whole URL", () => {
    expect(matchBlockedUrl(p, "http://intranet/wiki/page")).toBe("*://intranet");
    expect(matchBlockedUrl(p, "https://news.test/EVIL-story")).toBe("*evil*");
    expect(matchBlockedUrl(p, "about:blank")).toBeNull();
  });

  it("no globs, no match", () => {
    expect(matchBlockedUrl(EMPTY_POLICY, "https://bank.example/")).toBeNull();
  });
});

describe("browsers", () => {
  const firefox = ident({ executable: "/usr/lib/firefox/firefox", name: "Firefox", desktopId: "firefox.desktop", comm: "firefox" });
  const chrome = ident({ executable: "/opt/google/chrome/chrome", name: "Google Chrome", desktopId: "google-chrome.desktop", comm: "chrome" });
  const chromium = ident({ executable: "/usr/lib/chromium/chromium", name: "Chromium", desktopId: "chromium.desktop", comm: "chromium" });
  const epiphany = ident({ executable: "/usr/bin/epiphany", name: "Web", desktopId: "org.gnome.Epiphany", comm: "epiphany" });
  const brave = ident({ executable: null, name: "", desktopId: "com.brave.Browser", comm: null });

  it("knows Firefox, Chromium, Chrome, Epiphany and others by id", () => {
    for (const b of [firefox, chrome, chromium, epiphany, brave]) expect(isBrowser(b)).toBe(true);
    expect(isBrowser(ident())).toBe(false);
  });

  it("assertUrlAllowed refuses with BLOCKED_URL and never echoes the URL", () => {
    const url = "https://secret.bank.example/account?token=s3cr3t";
    try {
      assertUrlAllowed(p, firefox, url);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(DeckhandError);
      const err = e as DeckhandError;
      expect(err.code).toBe("BLOCKED_URL");
      expect(err.details).toMatchObject({ source: "admin", rule: "admin:blocked_urls[0]" });
      const all = JSON.stringify({ m: err.message, d: err.details, r: err.remediation });
      expect(all).not.toContain("secret.bank");
      expect(all).not.toContain("s3cr3t");
    }
    expect(() => assertUrlAllowed(p, firefox, "https://docs.example.org/")).not.toThrow();
    // Not a browser: URL rules do not apply.
    expect(() => assertUrlAllowed(p, ident(), "https://bank.example/")).not.toThrow();
  });

  it("an unreadable URL fails closed only when URLs are blocked", () => {
    expect(() => assertUrlAllowed(p, chrome, null)).toThrow(expect.objectContaining({ code: "BLOCKED_URL", details: { reason: "url_unreadable" } }));
    expect(() => assertUrlAllowed(EMPTY_POLICY, chrome, null)).not.toThrow();
  });

  it("a broken admin file blocks every page", () => {
    const broken = { admin: failClosedLayer("/etc/deckhand/policy.toml", "bad", 1), user: null };
    expect(() => assertUrlAllowed(broken, firefox, "https://example.org/")).toThrow(expect.objectContaining({ code: "BLOCKED_URL" }));
  });
});
