// Menus by path (issue 13): the arguments of `menu list` and `menu click`
// (spread into ARGS by src/protocol/commands.ts), and how a menu path is
// written and its names matched. The handlers are src/commands/menus.ts.
import { z } from "zod";
import { app, elementIndex, snapshotId, windowId, windowIndex } from "./actions.ts";
import { DeckhandError } from "./errors.ts";
import { lazyTable, once } from "../lazy-table.ts";

/** Longest menu path accepted (characters). */
export const MAX_MENU_PATH = 1000;
/** Most levels in a menu path. */
export const MAX_MENU_LEVELS = 16;

const contextElement = once(() =>
  elementIndex.describe("an element of the snapshot whose context menu to use instead of the menu bar (it must advertise show_menu; opening it is an action)"),
);

/** Built on first use (src/lazy-table.ts). */
export const MENU_ARGS = lazyTable({
  "menu-list": () =>
    z.strictObject({
      app,
      windowId: windowId.optional(),
      windowIndex: windowIndex.optional(),
      maxItems: z.number().int().min(1).max(5000).optional().describe("cap on the items read, every level counted (default 1000)"),
      elementIndex: contextElement().optional(),
      snapshotId: snapshotId.optional(),
    }),
  "menu-click": () =>
    z.strictObject({
      app,
      windowId: windowId.optional(),
      windowIndex: windowIndex.optional(),
      path: z
        .string()
        .min(1)
        .max(MAX_MENU_PATH)
        .describe('the item to activate: names from the menu bar down joined by ">" ("File>Save As…"); a ">" inside a name is written "\\>"'),
      elementIndex: contextElement().optional(),
      snapshotId: snapshotId.optional(),
    }),
});

export const MENU_SUMMARY = {
  "menu-list": "The menu bar (or an element's context menu) as a tree of items with their states: enabled, checked, shortcut.",
  "menu-click": "Activate an item of a menu by its path (File>Save As…), opening each submenu through accessibility, never coordinates.",
} as const;

/** Split a menu path on ">" (a "\>" is a ">" inside a name); names are trimmed, none may be empty. */
export function parseMenuPath(path: string): string[] {
  const levels: string[] = [];
  let cur = "";
  for (let i = 0; i < path.length; i++) {
    const c = path[i]!;
    if (c === "\\" && path[i + 1] === ">") {
      cur += ">";
      i++;
    } else if (c === ">") {
      levels.push(cur);
      cur = "";
    } else cur += c;
  }
  levels.push(cur);
  const names = levels.map((l) => l.trim());
  if (names.some((n) => n === "")) {
    throw new DeckhandError("INVALID_ARGUMENTS", 'path has an empty level: write names joined by ">", e.g. "File>Save As…"', { details: { field: "path" } });
  }
  if (names.length > MAX_MENU_LEVELS) {
    throw new DeckhandError("INVALID_ARGUMENTS", `path has ${names.length} levels; at most ${MAX_MENU_LEVELS}`, { details: { field: "path" } });
  }
  return names;
}

/** A name as it goes into a path: ">" escaped. */
export function escapeMenuName(name: string): string {
  return name.replace(/>/g, "\\>");
}

/**
 * A name as the loose comparison reads it: mnemonic markers ("_" and "&")
 * removed, "…" read as "...", whitespace collapsed and trimmed, case ignored.
 */
export function normalizeMenuName(name: string): string {
  return name
    .normalize("NFKC")
    .replace(/…/g, "...")
    .replace(/[_&]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/**
 * A name without the shortcut text a toolkit appended to it: Chromium gives
 * the items of its context menus names like "Select all Ctrl+A", "Paste as plain text
 * Ctrl+Shift+V". Only a trailing modifier combination is taken off.
 */
export function withoutShortcutText(name: string): string {
  return name.replace(/\s+(?:(?:ctrl|control|shift|alt|super|meta|cmd)\+)+\S+$/i, "");
}

/**
 * The entry a path level names among `candidates` (by their names, in menu
 * order): the first with exactly that name, else the first whose trimmed
 * name is it, else the first equal after normalizeMenuName, else the first
 * equal once a trailing shortcut text is taken off (withoutShortcutText).
 * -1: none.
 */
export function matchMenuName(wanted: string, candidates: readonly string[]): number {
  const exact = candidates.indexOf(wanted);
  if (exact >= 0) return exact;
  const trimmed = candidates.findIndex((c) => c.trim() === wanted.trim());
  if (trimmed >= 0) return trimmed;
  const w = normalizeMenuName(wanted);
  const loose = candidates.findIndex((c) => normalizeMenuName(c) === w);
  if (loose >= 0) return loose;
  return candidates.findIndex((c) => normalizeMenuName(withoutShortcutText(c)) === w);
}
