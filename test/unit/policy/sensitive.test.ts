import { describe, expect, it } from "vitest";
import { closingChord, normalizeChord, sensitiveWord, sensitivity } from "../../../src/policy/sensitive.ts";

describe("sensitive controls", () => {
  it.each(["Delete", "delete", "DELETE ALL", "Send", "Send & Archive", "Pay now", "Purchase", "Submit order", "Transfer funds", "Erase disk", "delete_row", "Delete…", "Move to trash / Delete", "Quit", "Sen\u200bd"])(
    "%j is sensitive",
    (name) => {
      expect(sensitivity({ kind: "click", elementName: name }).sensitive).toBe(true);
    },
  );

  it.each(["Undelete", "Deleted items", "Sender", "PayPal", "Payment history", "Transferred", "Submitted", "Resend", "Open", "", "Quitting tips"])("%j is not", (name) => {
    expect(sensitivity({ kind: "click", elementName: name }).sensitive).toBe(false);
  });

  it("the reason names the rule, not the control", () => {
    expect(sensitivity({ kind: "click", elementName: "Delete my diary" }).reason).toBe('control name contains "delete"');
    expect(sensitiveWord("Send")).toBe("send");
  });

  it("a secondary action's name counts too", () => {
    expect(sensitivity({ kind: "secondary", elementName: "Row 3", actionName: "delete" }).sensitive).toBe(true);
  });

  it("quitting and setting the clipboard are always sensitive", () => {
    expect(sensitivity({ kind: "quit" })).toEqual({ sensitive: true, reason: "quitting an app" });
    expect(sensitivity({ kind: "set_clipboard" }).sensitive).toBe(true);
  });

  it("other kinds are not", () => {
    expect(sensitivity({ kind: "scroll", elementName: "Delete" }).sensitive).toBe(false);
  });
});

describe("closing hotkeys", () => {
  it.each([
    [["ctrl", "q"]],
    [["Control", "Q"]],
    [["ctrl+q"]],
    [["Ctrl+Shift+Q"]],
    [["alt+F4"]],
    [["Alt_L", "F4"]],
    [["cmd", "q"]],
    [["command+q"]],
    [["super+q"]],
    [["ctrl+w"]],
    [["Tab", "ctrl+q"]],
    [["⌘Q".slice(0, 1), "q"]],
    [["option", "cmd", "esc"]],
  ])("%j closes an app", (keys) => {
    expect(sensitivity({ kind: "hotkey", keys }).sensitive).toBe(true);
    expect(sensitivity({ kind: "press_key", keys }).sensitive).toBe(true);
  });

  it.each([[["ctrl", "c"]], [["ctrl+v"]], [["q"]], [["alt", "f5"]], [["Return"]], [[]]])("%j does not", (keys) => {
    expect(sensitivity({ kind: "hotkey", keys }).sensitive).toBe(false);
  });

  it("normalises aliases and order", () => {
    expect(normalizeChord(["Shift", "CTRL", "q"])).toBe("ctrl+shift+q");
    expect(closingChord(["ctrl++"])).toBeNull();
    expect(normalizeChord(["ctrl", "+"])).toBe("ctrl++");
  });
});
