// Issue 10.1: the one confirm decision (decideStep) for every route to a
// control whose name has a sensitive word, given what the executor read.
import { describe, expect, it } from "vitest";
import { decideStep, sensitiveDefault, stepNeedsFocus, type Control, type Scene } from "../../../src/policy/sensitive.ts";
import type { Step } from "../../../src/protocol/program.ts";
import type { Role } from "../../../src/wire/vocabulary.ts";

const c = (role: Role, name: string, states: string[] = ["focusable"], extra: Partial<Control> = {}): Control => ({ role, name, states, actions: ["press"], index: null, ...extra });
const reason = c("text_field", "Reason", ["focusable", "editable"], { actions: ["press"] });
const cancel = c("button", "Cancel");
const del = c("button", "Delete", ["focusable", "default"]);
const dialog: Scene = { title: "Delete file?", role: "dialog", controls: [c("dialog", "Delete file?", []), reason, cancel, del], statesKnown: true };
const plainWindow: Scene = { title: "main", role: "window", controls: [c("window", "main", []), c("button", "OK"), c("button", "Delete"), c("text_field", "Name", ["focusable", "editable"])], statesKnown: true };

describe("1a: activating a text field", () => {
  it.each<[string, Step]>([
    ["the Activate action", { action: "perform-secondary-action", elementIndex: 1, name: "activate" }],
    ["any action of a text field", { action: "perform-secondary-action", elementIndex: 1, name: "paste" }],
    ["a click (its first action)", { action: "click", elementIndex: 1 }],
    ["Return on it", { action: "press-key", elementIndex: 1, key: "Return" }],
    ["KP_Enter on it", { action: "press-key", elementIndex: 1, key: "kp_enter" }],
  ])("%s, in a dialog whose default button is Delete", (_, step) => {
    const d = decideStep(step, { element: { ...reason, index: 1 }, elementScene: dialog });
    expect(d).toMatchObject({ route: "entry-activation", control: { name: "Delete" } });
    expect(d!.reason).toMatch(/"Delete"/);
  });

  it("is not asked for in a window without a default button, or for keys that do not activate", () => {
    expect(decideStep({ action: "perform-secondary-action", elementIndex: 3, name: "activate" }, { element: c("text_field", "Name"), elementScene: plainWindow })).toBeNull();
    expect(decideStep({ action: "press-key", elementIndex: 1, key: "a" }, { element: reason, elementScene: dialog })).toBeNull();
    expect(decideStep({ action: "type-text", elementIndex: 1, text: "x\n" }, { element: reason, elementScene: dialog })).toBeNull(); // inserted through accessibility
    expect(decideStep({ action: "set-value", elementIndex: 1, value: "x" }, { element: reason, elementScene: dialog })).toBeNull();
  });

  it("which button is the default", () => {
    expect(sensitiveDefault(dialog)?.name).toBe("Delete");
    // Another button is the default: Delete is not pressed by Return.
    expect(sensitiveDefault({ ...dialog, controls: [reason, c("button", "Cancel", ["default"]), c("button", "Delete")] })).toBeNull();
    // A dialog with no default state read: every sensitive button may be it.
    expect(sensitiveDefault({ ...dialog, controls: [reason, cancel, c("button", "Delete")] })?.name).toBe("Delete");
    // Web content: Return in a field submits its form.
    expect(sensitiveDefault({ title: "Shop", role: "window", controls: [c("web_document", "Shop"), c("text_field", "Card"), c("button", "Pay now")], statesKnown: true })?.name).toBe("Pay now");
    // A plain window that reports no default: none.
    expect(sensitiveDefault(plainWindow)).toBeNull();
    // States not read (snapshot elements): conservative.
    expect(sensitiveDefault({ ...plainWindow, statesKnown: false })?.name).toBe("Delete");
  });
});

describe("1b: keys while focus is somewhere", () => {
  const live = (node: Control | null, scene: Scene) => ({ focus: { source: "live" as const, node, scene } });

  it.each<[string, Step, Control | null, Scene, string | null]>([
    ["Return in the dialog's entry", { action: "press-key", key: "Return" }, reason, dialog, "default-button"],
    ["0xff0d in the dialog's entry", { action: "press-key", key: "0xff0d" }, reason, dialog, "default-button"],
    ["ISO_Enter in the dialog's entry", { action: "hotkey", keys: ["ISO_Enter"] }, reason, dialog, "default-button"],
    ["shift+Return", { action: "hotkey", keys: ["shift+Return"] }, reason, dialog, "default-button"],
    ["a typed newline", { action: "type-text", text: "because\n" }, reason, dialog, "default-button"],
    ["a typed carriage return", { action: "type-text", text: "because\r" }, reason, dialog, "default-button"],
    ["Return held", { action: "hold-key", key: "Return", ms: 100 }, reason, dialog, "default-button"],
    ["space on Delete", { action: "press-key", key: "space" }, del, dialog, "focused"],
    ["KP_Space on Delete", { action: "press-key", key: "KP_Space" }, del, dialog, "focused"],
    ["a typed space on Delete", { action: "type-text", text: " " }, del, dialog, "focused"],
    ["Return on a focused Send button", { action: "press-key", key: "Return" }, c("button", "Send"), plainWindow, "focused"],
    ["Return in a chat box named Send message", { action: "press-key", key: "Return" }, c("text_field", "Send message", ["editable", "focused"]), plainWindow, "focused"],
    ["Tab then space (typed)", { action: "type-text", text: "\t " }, reason, dialog, "unknown-focus"],
    ["a Tab+Return chord", { action: "hotkey", keys: ["Tab", "Return"] }, c("button", "OK"), plainWindow, "unknown-focus"],
    ["alt+d", { action: "hotkey", keys: ["alt+d"] }, reason, dialog, "mnemonic"],
    ["alt+x (no such mnemonic)", { action: "hotkey", keys: ["alt+x"] }, reason, dialog, null],
    ["a typed space in a text field", { action: "type-text", text: "two words" }, reason, dialog, null],
    ["space in a text field named Send message", { action: "press-key", key: "space" }, c("text_field", "Send message", ["editable"]), plainWindow, null],
    ["Return on OK, no default button", { action: "press-key", key: "Return" }, c("button", "OK"), plainWindow, null],
    ["ctrl+a", { action: "hotkey", keys: ["ctrl+a"] }, del, dialog, null],
  ])("%s", (_, step, node, scene, route) => {
    const d = decideStep(step, live(node, scene));
    if (route === null) expect(d).toBeNull();
    else expect(d?.route).toBe(route);
  });

  it("the Tab+Return chord moves focus first: asked only where a sensitive control can take the focus", () => {
    const unfocusable: Scene = { ...plainWindow, controls: [c("button", "OK"), c("button", "Submit", [])] };
    expect(decideStep({ action: "hotkey", keys: ["Tab", "Return"] }, live(c("button", "OK"), unfocusable))).toBeNull();
    expect(decideStep({ action: "hotkey", keys: ["Return", "Tab"] }, live(c("button", "OK"), plainWindow))).toBeNull();
  });

  it("focus not known (no node focused: the window is not active yet)", () => {
    expect(decideStep({ action: "press-key", key: "Return" }, live(null, dialog))).toMatchObject({ route: "unknown-focus", control: { name: "Delete" } });
    expect(decideStep({ action: "press-key", key: "space" }, live(null, dialog))).toMatchObject({ route: "unknown-focus", control: { name: "Delete" } });
    // A window whose sensitive buttons cannot take focus.
    expect(decideStep({ action: "press-key", key: "Return" }, live(null, { ...plainWindow, controls: [c("button", "Delete", [])] }))).toBeNull();
    // A typed space while focus is unknown is the documented gap (docs/security.md): not judged.
    expect(decideStep({ action: "type-text", text: "echo pwned" }, live(null, dialog))).toBeNull();
    // A typed newline is.
    expect(decideStep({ action: "type-text", text: "echo pwned\n" }, live(null, dialog))?.route).toBe("unknown-focus");
  });

  it("focus in another window of the app: judged there, and as the target window's unknown focus (the guard may activate it)", () => {
    const second: Scene = { title: "second", role: "window", controls: [c("button", "Second OK", ["focusable", "focused"])], statesKnown: true };
    const facts = { focus: { source: "live" as const, node: second.controls[0]!, scene: second }, focusIfActivated: { source: "live" as const, node: null, scene: plainWindow } };
    expect(decideStep({ action: "press-key", key: "Return" }, facts)).toMatchObject({ route: "unknown-focus", control: { name: "Delete" } });
    expect(decideStep({ action: "press-key", key: "Return" }, { ...facts, focusIfActivated: { source: "live", node: null, scene: { ...plainWindow, controls: [c("button", "OK")] } } })).toBeNull();
  });

  it("which steps read the focus at all", () => {
    expect(stepNeedsFocus({ action: "press-key", key: "Return" })).toBe(true);
    expect(stepNeedsFocus({ action: "press-key", key: "0xff8d" })).toBe(true);
    expect(stepNeedsFocus({ action: "type-text", text: "a b" })).toBe(true);
    expect(stepNeedsFocus({ action: "hotkey", keys: ["alt+d"] })).toBe(true);
    expect(stepNeedsFocus({ action: "hotkey", keys: ["ctrl+s"] })).toBe(false);
    expect(stepNeedsFocus({ action: "type-text", text: "abc" })).toBe(false);
    expect(stepNeedsFocus({ action: "type-text", elementIndex: 1, text: "a\n" })).toBe(false);
  });

  it("the hook is told the keys, never typed text", () => {
    const k = decideStep({ action: "press-key", key: "0xff0d" }, live(reason, dialog))!;
    expect(k.keys).toEqual(["Return"]);
    const t = decideStep({ action: "type-text", text: "secret words\n" }, live(reason, dialog))!;
    expect(t.keys).toBeUndefined();
    expect(JSON.stringify(t)).not.toContain("secret");
  });
});

describe("1c: clicks at a point", () => {
  const over = (node: Control | null, p: Partial<{ button: string; count: number; modifiers: string[]; gesture: "click" | "press" | "release" }> = {}) => ({
    pointer: [{ gesture: p.gesture ?? ("click" as const), button: p.button ?? "left", count: p.count ?? 1, modifiers: p.modifiers ?? [], node }],
  });
  const click = (extra: Partial<Extract<Step, { action: "click" }>> = {}): Step => ({ action: "click", x: 1, y: 2, ...extra });

  it.each<[string, Partial<{ button: string; count: number; modifiers: string[] }>, RegExp]>([
    ["shift-click", { modifiers: ["shift"] }, /^shift\+left click at a point over "Delete"/],
    ["ctrl-click", { modifiers: ["ctrl"] }, /^ctrl\+left click/],
    ["double click", { count: 2 }, /^left double click/],
    ["triple click", { count: 3 }, /^left triple click/],
    ["middle click", { button: "middle" }, /^middle click/],
  ])("%s over Delete", (_, p, re) => {
    const d = decideStep(click(), over(c("button", "Delete"), p));
    expect(d).toMatchObject({ route: "point", kind: "click", control: { name: "Delete" } });
    expect(d!.reason).toMatch(re);
  });

  it("right, back and forward buttons do not press; other controls are not asked", () => {
    for (const button of ["right", "back", "forward"]) expect(decideStep(click(), over(c("button", "Delete"), { button }))).toBeNull();
    expect(decideStep(click(), over(c("button", "OK"), { count: 2 }))).toBeNull();
    expect(decideStep(click(), over(null))).toBeNull();
  });

  it("a drag pressed or released over it", () => {
    const step: Step = { action: "drag", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }] };
    expect(decideStep(step, over(c("button", "Send"), { gesture: "release" }))).toMatchObject({ kind: "drag", route: "drag" });
  });

  it("a plain left click routed to accessibility is the element (a hit-tested node, index -1)", () => {
    expect(decideStep(click(), { element: c("button", "Pay now", [], { index: -1 }) })).toMatchObject({ route: "point", reason: 'control name contains "pay"' });
  });
});

describe("1d: closing chords in any spelling", () => {
  it.each([["0xffe3+q"], ["Control_R+q"], ["0xffe9+0xffc1"], ["alt+f04"]])("%j", (chord) => {
    expect(decideStep({ action: "hotkey", keys: [chord] })).toMatchObject({ route: "closing-chord" });
    expect(decideStep({ action: "press-key", key: chord })).toMatchObject({ route: "closing-chord" });
  });
});

describe("neutral words only", () => {
  it("a secondary action named neutrally is judged by its native name too", () => {
    const tools = c("button", "Tools", ["focusable"], { index: 4, actions: ["press", "other"] });
    const step: Step = { action: "perform-secondary-action", elementIndex: 4, name: "other" };
    expect(decideStep(step, { element: tools })).toBeNull();
    expect(decideStep(step, { element: tools, nativeAction: "delete-all" })).toMatchObject({ kind: "secondary", route: "element", reason: 'control name contains "delete"' });
    // Named by its native name: the step's name carries the word.
    expect(decideStep({ ...step, name: "delete-all" }, { element: tools })).toMatchObject({ route: "element" });
  });

  it("text roles come from the vocabulary; an editable node of any role is text-like", () => {
    for (const role of ["text_field", "secure_text_field", "text_area", "spin_button"] as const) {
      const d = decideStep({ action: "perform-secondary-action", elementIndex: 1, name: "press" }, { element: c(role, "Field", ["focusable"], { index: 1 }), elementScene: dialog });
      expect(d, role).toMatchObject({ route: "entry-activation" });
    }
    expect(decideStep({ action: "click", elementIndex: 1 }, { element: c("combo_box", "Kind", ["editable"], { index: 1 }), elementScene: dialog })).toMatchObject({ route: "entry-activation" });
    expect(decideStep({ action: "click", elementIndex: 1 }, { element: c("combo_box", "Kind", ["focusable"], { index: 1 }), elementScene: dialog })).toBeNull();
  });

  it("the default button is the neutral default state; only buttons count", () => {
    expect(sensitiveDefault({ ...dialog, controls: [reason, c("button", "Delete", ["default"])] })?.name).toBe("Delete");
    expect(sensitiveDefault({ ...plainWindow, controls: [c("link", "Delete", ["default"])] })).toBeNull();
    // A document (web page) makes Return in a field submit: dialog-like.
    expect(sensitiveDefault({ title: "Shop", role: "window", controls: [c("web_document", "Shop"), c("button", "Submit order")], statesKnown: true })?.name).toBe("Submit order");
    // An office document (a spreadsheet) is not a web form: Return in a cell presses no default button.
    expect(sensitiveDefault({ title: "Calc", role: "window", controls: [c("document", "Sheet1"), c("button", "Delete")], statesKnown: true })).toBeNull();
  });
});
