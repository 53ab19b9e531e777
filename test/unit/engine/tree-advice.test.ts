// The warning an observation of an app without an accessibility tree carries
// (src/engine/tree-advice.ts): a stable code, the app and its toolkit in the
// message, and a remediation that depends on the toolkit.
import { describe, expect, it } from "vitest";
import { noTreeWarning } from "../../../src/engine/tree-advice.ts";

describe("noTreeWarning", () => {
  it("always NO_ACCESSIBILITY_TREE with exactly code, message and remediation", () => {
    for (const toolkit of ["qt5", "gtk3", null, undefined, "something-new"]) {
      const w = noTreeWarning({ name: "app", toolkit });
      expect(Object.keys(w).sort()).toEqual(["code", "message", "remediation"]);
      expect(w.code).toBe("NO_ACCESSIBILITY_TREE");
      expect(w.message).toContain("app");
      expect(w.message).toContain("screenshot");
      expect(w.remediation.length).toBeGreaterThan(20);
    }
  });

  it.each([
    ["qt5", /QT_ACCESSIBILITY=1/],
    ["qt6", /QT_ACCESSIBILITY=1/],
    ["chromium", /--force-renderer-accessibility|enable-accessibility/],
    ["electron", /--force-renderer-accessibility|enable-accessibility/],
    ["firefox", /GNOME_ACCESSIBILITY=1|enable-accessibility/],
    ["libreoffice", /libreoffice-gtk3|SAL_USE_VCLPLUGIN=gtk3/],
    ["gtk3", /NO_AT_BRIDGE|libatk-adaptor/],
    ["gtk4", /GTK_A11Y/],
  ])("toolkit %s: its own remediation", (toolkit, re) => {
    const w = noTreeWarning({ name: "Some App", toolkit });
    expect(w.remediation).toMatch(re);
    expect(w.message).toContain(`toolkit: ${toolkit}`);
    expect(w.remediation).not.toBe(noTreeWarning({ name: "Some App", toolkit: null }).remediation);
  });

  it("toolkit-specific advice differs between families", () => {
    const qt = noTreeWarning({ name: "a", toolkit: "qt5" }).remediation;
    const gtk = noTreeWarning({ name: "a", toolkit: "gtk3" }).remediation;
    const chromium = noTreeWarning({ name: "a", toolkit: "chromium" }).remediation;
    expect(new Set([qt, gtk, chromium]).size).toBe(3);
  });

  it("unknown or missing toolkit: the generic advice, and no toolkit named in the message", () => {
    const none = noTreeWarning({ name: "canvas", toolkit: null });
    expect(none.message).not.toContain("toolkit:");
    expect(none.remediation).toMatch(/screenshot/);
    expect(none.remediation).toMatch(/foreground/);
    expect(noTreeWarning({ name: "canvas" }).remediation).toBe(none.remediation);
    // A toolkit the table does not know is named, but gets the generic advice.
    const odd = noTreeWarning({ name: "canvas", toolkit: "tk" });
    expect(odd.message).toContain("toolkit: tk");
    expect(odd.remediation).toBe(none.remediation);
  });

  it("inherited object keys are not toolkits", () => {
    for (const toolkit of ["constructor", "toString", "__proto__"]) {
      const w = noTreeWarning({ name: "x", toolkit });
      expect(typeof w.remediation).toBe("string");
      expect(w.remediation).toBe(noTreeWarning({ name: "x", toolkit: null }).remediation);
    }
  });
});
