// Wire 2.0 nodes for unit tests: a neutral role with a made-up native role
// beside it (as a helper reports both), actions as {name, native} pairs.
import type { WireNode } from "../../src/wire/messages.ts";
import type { ActionName, NodeAction, Role } from "../../src/wire/vocabulary.ts";

/** A scripted platform's native role for a neutral one: what tests show is carried, never decided on. */
export const NATIVE_ROLE: Partial<Record<Role, string>> = {
  window: "frame",
  button: "push button",
  text_field: "text",
  secure_text_field: "password text",
  container: "panel",
  checkbox: "check box",
  label: "label",
  dialog: "dialog",
};

const ACTION_OF: Record<string, ActionName> = { click: "press", press: "press", activate: "press", toggle: "toggle", expand: "expand" };

/** Advertised actions by native name; the neutral name a helper would give each (unknown: other). */
export function acts(...natives: string[]): NodeAction[] {
  return natives.map((native) => ({ name: ACTION_OF[native] ?? "other", native }));
}

export function node(path: number[], role: Role, name: string, extra: Partial<WireNode> = {}): WireNode {
  return {
    path,
    role,
    native_role: NATIVE_ROLE[role] ?? role,
    name,
    description: "",
    value: null,
    states: ["enabled", "visible"],
    bounds: { x: 0, y: 0, width: 10, height: 10 },
    actions: [],
    identifier: "",
    secure: false,
    child_count: 0,
    ...extra,
  };
}
