import { describe, expect, it } from "vitest";
import { normalizeKey, splitChord } from "../../../src/protocol/keys.ts";

describe("vendor key names -> xdotool names", () => {
  it("OpenAI upper-case names", () => {
    const pairs: [string, string][] = [
      ["CTRL", "ctrl"], ["CONTROL", "ctrl"], ["ALT", "alt"], ["OPTION", "alt"], ["SHIFT", "shift"], ["CMD", "super"], ["META", "super"], ["SUPER", "super"], ["WIN", "super"],
      ["ENTER", "Return"], ["RETURN", "Return"], ["ESC", "Escape"], ["ESCAPE", "Escape"], ["BACKSPACE", "BackSpace"], ["DELETE", "Delete"], ["TAB", "Tab"], ["SPACE", "space"],
      ["ARROWUP", "Up"], ["ARROWDOWN", "Down"], ["ARROWLEFT", "Left"], ["ARROWRIGHT", "Right"], ["UP", "Up"], ["PAGEUP", "Page_Up"], ["PAGEDOWN", "Page_Down"],
      ["HOME", "Home"], ["END", "End"], ["INSERT", "Insert"], ["CAPSLOCK", "Caps_Lock"], ["F1", "F1"], ["F12", "F12"], ["F24", "F24"], ["PRINTSCREEN", "Print"],
    ];
    for (const [from, to] of pairs) expect(normalizeKey(from, { lowerLetters: true }), from).toBe(to);
  });
  it("single letters: OpenAI's S is the s key; xdotool's S stays S", () => {
    expect(normalizeKey("S", { lowerLetters: true })).toBe("s");
    expect(normalizeKey("S")).toBe("S");
    expect(normalizeKey("1", { lowerLetters: true })).toBe("1");
    expect(normalizeKey("/", { lowerLetters: true })).toBe("/");
    expect(normalizeKey(" ")).toBe("space");
    expect(normalizeKey("+")).toBe("plus");
  });
  it("xdotool names pass through; unknown names are left for the helper to judge", () => {
    for (const k of ["Return", "BackSpace", "Page_Up", "KP_Enter", "XF86AudioMute", "F35"]) expect(normalizeKey(k)).toBe(k);
  });
  it("splitChord", () => {
    expect(splitChord("ctrl+shift+t")).toEqual(["ctrl", "shift", "t"]);
    expect(splitChord("ctrl++")).toEqual(["ctrl", "+"]);
    expect(splitChord("+")).toEqual(["+"]);
    expect(() => splitChord("")).toThrow();
  });
});
