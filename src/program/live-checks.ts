// Live checks made just before dispatch: what has focus, read from the
// accessibility tree at that moment. (Which page a browser shows:
// src/engine/page-url.ts.)
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import type { HelperPort, StorePort } from "../engine/ports.ts";
import { appWindows, type ResolvedApp } from "../engine/resolve.ts";
import { parseChord } from "../protocol/keys.ts";
import { isSecureNode, rememberedSecure, windowKeyOf } from "../session/snapshot.ts";
import type { SnapshotStore } from "../session/store.ts";
import type { WireNode } from "../wire/messages.ts";

/** Chords that paste the clipboard into the focused control. */
const PASTE_CHORDS: readonly (readonly string[])[] = [
  ["ctrl", "v"],
  ["shift", "insert"],
  ["shift", "kp_insert"],
  ["ctrl", "shift", "v"],
];

/** Whether keys (canonical names, src/protocol/keys.ts) are a paste chord: ctrl+v, shift+Insert, ctrl+shift+v. */
export function isPasteChord(keys: readonly string[]): boolean {
  const set = new Set(keys.map((k) => k.toLowerCase()));
  // ctrl+V (upper case: shift+v in xdotool's reading) is ctrl+shift+v.
  if (keys.some((k) => k === "V")) set.add("shift");
  return PASTE_CHORDS.some((c) => c.length === set.size && c.every((k) => set.has(k)));
}

/** The node that has keyboard focus in the app, wherever it is, and its window. */
export interface FocusedNode {
  windowId: number | null;
  node: WireNode | null;
}

/**
 * What holds keyboard focus in the app, read live. With the helper's
 * focused_element op: one bounded query over the whole app, every window,
 * nodes a tree walk would prune (scrolled away, inside collapsed
 * containers) included; when it finds nothing, the target window's tree is
 * read as well. Without the op (older helpers): the trees of the target
 * window and the app's other windows.
 */
export async function focusedNode(engine: HelperPort, app: ResolvedApp, windowId: number | null): Promise<FocusedNode> {
  const { supervisor, hello } = await engine.helper();
  if (hello.capabilities.focused_element?.supported) {
    const { result } = await supervisor.request("focused_element", { pid: app.pid });
    if (result.node || windowId === null) return { windowId: result.window_id, node: result.node };
    // "Nothing focused" just before keys go: the target window's own tree is
    // asked too (one read, only then), so a helper's query that misses what
    // the tree shows never lets keys through.
    return await focusedInTrees(engine, app, [windowId]);
  }
  const ids: number[] = windowId !== null ? [windowId] : [];
  if (hello.capabilities.list_windows?.supported) {
    for (const w of await appWindows(engine, app.pid)) if (!ids.includes(w.window_id)) ids.push(w.window_id);
  }
  return await focusedInTrees(engine, app, ids);
}

async function focusedInTrees(engine: HelperPort, app: ResolvedApp, ids: number[]): Promise<FocusedNode> {
  const { supervisor } = await engine.helper();
  for (const id of ids) {
    const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: id, max_depth: 64, max_children: 1000, max_nodes: 5000 });
    const focused = result.nodes.find((n) => n.states.includes("focused"));
    if (focused) return { windowId: id, node: focused };
  }
  return { windowId: null, node: null };
}

/** Whether a focused node is a secure field: the helper's flag, the secure role or state, or a field seen secure earlier in its window. */
export function focusedIsSecure(store: SnapshotStore, app: ResolvedApp, f: FocusedNode): boolean {
  if (!f.node) return false;
  if (isSecureNode(f.node)) return true;
  return f.windowId !== null && rememberedSecure(f.node, store.secureLocators(windowKeyOf(app, f.windowId)));
}

/**
 * Keys sent with no target element land in whatever has focus, and a
 * middle-button press pastes into it. If that is a secure (password) field
 * anywhere in the app, in any of its windows, refuse: an agent must not
 * type or paste into one, even by way of the keyboard. Read live, because
 * focus moves.
 */
export async function checkFocusNotSecure(engine: HelperPort & StorePort, app: ResolvedApp, windowId: number | null, step: Step, opts: { paste?: boolean } = {}): Promise<void> {
  const paste = opts.paste === true || (step.action === "hotkey" && isPasteChord(step.keys)) || (step.action === "press-key" && isPasteChord(parseChord(step.key, { field: "key" })));
  const focused = await focusedNode(engine, app, windowId);
  if (focusedIsSecure(engine.store, app, focused)) {
    const what = paste ? "would paste into" : "would type into";
    throw new DeckhandError("POLICY_DENIED", `${step.action} ${what} a secure (password) field, which has focus`, {
      details: {
        source: "builtin",
        rule: "builtin:secure_field",
        action: step.action,
        reason: paste ? "paste" : "focused-secure",
        ...(focused.windowId !== null ? { windowId: focused.windowId } : {}),
        delivery: "not_dispatched",
      },
    });
  }
}
