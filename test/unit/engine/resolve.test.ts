// App resolution (src/engine/resolve.ts): appKey folds wrapper names and case
// into one key per app family; matchApp tries pid:N, then exact executable /
// basename / desktop id, then exact name, then the loose key, and an exact
// hit is never made ambiguous by loose ones.
import { describe, expect, it } from "vitest";
import { appKey, matchApp } from "../../../src/engine/resolve.ts";
import type { WireApp } from "../../../src/wire/messages.ts";
import { thrown } from "../throws.ts";

let nextPid = 100;
function app(name: string, executable: string | null, extra: Partial<WireApp> = {}): WireApp {
  return { pid: nextPid++, name, executable, desktop_id: null, accessible: true, start_time: 1, window_count: 1, ...extra } as WireApp;
}

describe("appKey", () => {
  it.each([
    ["thunderbird", "thunderbird"],
    ["thunderbird-bin", "thunderbird"],
    ["/usr/lib/thunderbird/thunderbird-bin", "thunderbird"],
    ["Thunderbird", "thunderbird"],
    ["soffice.bin", "soffice"],
    ["/usr/lib/libreoffice/program/soffice.bin", "soffice"],
    ["soffice", "soffice"],
    ["libreoffice", "soffice"],
    ["LibreOffice", "soffice"],
    ["Firefox", "firefox"],
    ["firefox-esr", "firefox"],
    ["/usr/lib/firefox-esr/firefox-esr", "firefox"],
    ["chromium-browser", "chromium"],
    ["google-chrome", "chrome"],
    ["org.gnome.Calculator.desktop", "org.gnome.calculator"],
    ["gedit.real", "gedit"],
    ["code-wrapped", "code"],
    ["  xterm  ", "xterm"],
  ])("%j -> %j", (input, key) => {
    expect(appKey(input)).toBe(key);
  });

  it("only a trailing wrapper suffix is folded, and only once", () => {
    expect(appKey("bin-tool")).toBe("bin-tool");
    expect(appKey("foo.bin.bin")).toBe("foo.bin");
    expect(appKey("binary")).toBe("binary");
    expect(appKey("thunderbird-binx")).toBe("thunderbird-binx");
  });

  it("is always a string: names that are Object.prototype keys are not aliases", () => {
    for (const s of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      expect(typeof appKey(s)).toBe("string");
      expect(appKey(s)).toBe(s.toLowerCase());
    }
  });

  it("distinct apps keep distinct keys", () => {
    expect(appKey("thunderbird")).not.toBe(appKey("firefox"));
    expect(appKey("soffice")).not.toBe(appKey("office"));
  });
});

describe("matchApp", () => {
  const tb = app("Thunderbird", "/usr/lib/thunderbird/thunderbird-bin");
  const lo = app("soffice.bin", "/usr/lib/libreoffice/program/soffice.bin");
  const ff = app("Firefox", "/usr/lib/firefox/firefox");
  const esr = app("firefox-esr", "/usr/lib/firefox-esr/firefox-esr", { desktop_id: "firefox-esr.desktop" });
  const calc = app("Calculator", "/usr/bin/gnome-calculator", { desktop_id: "org.gnome.Calculator.desktop" });
  const apps = [tb, lo, ff, calc];

  it.each([
    ["thunderbird", tb],
    ["thunderbird-bin", tb],
    ["THUNDERBIRD", tb],
    ["soffice", lo],
    ["libreoffice", lo],
    ["soffice.bin", lo],
    ["firefox", ff],
    ["FireFox", ff],
    ["Calculator", calc],
    ["calculator", calc],
    ["org.gnome.Calculator", calc],
    ["org.gnome.Calculator.desktop", calc],
    ["gnome-calculator", calc],
    ["/usr/bin/gnome-calculator", calc],
  ] as const)("%j resolves to %s", (selector, want) => {
    expect(matchApp(selector, apps).pid).toBe(want.pid);
  });

  it("pid:N is exact and alone", () => {
    expect(matchApp(`pid:${lo.pid}`, apps)).toBe(lo);
    const e = thrown(() => matchApp("pid:999999", apps), "APP_NOT_FOUND");
    expect(e.details.app).toBe("pid:999999");
  });

  it("an exact hit wins over loose ones: firefox is /usr/lib/firefox/firefox, not firefox-esr", () => {
    expect(matchApp("firefox", [esr, ff]).pid).toBe(ff.pid);
    expect(matchApp("firefox-esr", [esr, ff]).pid).toBe(esr.pid);
  });

  it("two loose hits and no exact one: AMBIGUOUS_APP naming both", () => {
    const e = thrown(() => matchApp("FIREFOX", [esr, ff]), "AMBIGUOUS_APP");
    expect(e.details.app).toBe("FIREFOX");
    expect(String(e.details.candidates)).toContain(`pid:${esr.pid}`);
    expect(String(e.details.candidates)).toContain(`pid:${ff.pid}`);
  });

  it("two exact hits: AMBIGUOUS_APP (the loose pass does not pick one)", () => {
    const a = app("twin", "/opt/a/twin");
    const b = app("twin", "/opt/b/twin");
    thrown(() => matchApp("twin", [a, b]), "AMBIGUOUS_APP");
    thrown(() => matchApp("TWIN", [a, b]), "AMBIGUOUS_APP");
    expect(matchApp("/opt/b/twin", [a, b])).toBe(b);
  });

  it("an exact name beats a loose executable match", () => {
    const named = app("soffice", "/usr/bin/some-launcher");
    expect(matchApp("soffice", [lo, named])).toBe(named);
  });

  it("no hit at all: APP_NOT_FOUND; substrings and prefixes do not match", () => {
    for (const s of ["thunder", "bird", "office", "fire", "calc", "thunderbird2", ""]) {
      const e = thrown(() => matchApp(s, apps), "APP_NOT_FOUND");
      expect(e.details.app).toBe(s);
    }
  });

  it("apps without an executable or desktop id still resolve by name", () => {
    const anon = app("Some Tool", null);
    expect(matchApp("Some Tool", [anon])).toBe(anon);
    expect(matchApp("some tool", [anon])).toBe(anon);
  });
});
