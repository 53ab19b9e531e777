// Menus by path (issue 13): `menu list` and `menu click`.
//
// The helper's menu_tree reads a window's menu bar (or one node's subtree)
// whether its menus are open or not; everything else is element_action on
// the nodes it returns: a submenu is opened through its own accessibility
// action (press, else show_menu), never by coordinates; the item is
// activated by a press. menu_close closes what was opened, through
// accessibility; where no accessibility way exists Escape goes through the
// focus-guarded keyboard, under the operator's foreground grant only.
//
// Safety: the app passes policy (checkApp) before anything is read; `menu
// click` is mutating (PAUSED applies, checked again just before the
// activation) and its item passes the same confirm decision as a click on
// an element of that name (Safety.checkStep with a click step, the item as
// the control): "Delete All", "Quit"... need the confirm hook, decided
// before any menu is opened. Opening a context menu is an action too
// (PAUSED applies); the popup is closed again, or the result says it was not.
import { DeckhandError } from "../protocol/errors.ts";
import type { CommandArgs } from "../protocol/commands.ts";
import type { CommandResult, MenuEntryOut } from "../protocol/results.ts";
import type { Step } from "../protocol/program.ts";
import { escapeMenuName, matchMenuName, parseMenuPath } from "../protocol/menus.ts";
import type { Engine } from "../engine/engine.ts";
import { requireCapability } from "../engine/ports.ts";
import { appWindows, resolveApp, resolveWindow, type ResolvedApp } from "../engine/resolve.ts";
import { auditAppId, type Control } from "../engine/safety.ts";
import { lookupElement, resolveSnapshot } from "../program/snapshot-check.ts";
import { resolveNativeAction, type Element } from "../session/snapshot.ts";
import type { OpResult, Receipt, WireLocator, WireNode, WireWindow } from "../wire/messages.ts";

type MenuTree = OpResult<"menu_tree">;
type WireMenuItem = MenuTree["items"][number];
type ContextReport = NonNullable<CommandResult<"menu-list">["contextMenu"]>;

/** Bounds of one command's reads. */
const DEFAULT_MAX_ITEMS = 1000;
const MAX_DEPTH = 16;
/** How long a submenu may take to show its items once opened, and the poll step. */
const OPEN_WAIT_MS = 2000;
/** How long the menu may take to close after the activation before deckhand closes it. */
const CLOSE_WAIT_MS = 500;
const POLL_MS = 50;
/** How long a new popup window may take to show an accessible of its own. */
const POPUP_GRACE_MS = 400;
/** Most names listed in details.available. */
const MAX_AVAILABLE = 40;

/** An item of a menu, with its submenu's items (groups folded away). */
interface Entry {
  item: WireMenuItem;
  /** Names from the top of the listing down to this item. */
  names: string[];
  children: Entry[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const displayName = (n: WireNode) => n.name.trim();
const isSubmenu = (e: Entry) => e.item.kind === "submenu";
const enabled = (e: Entry) => e.item.node.states.includes("enabled");
function checkedOf(e: Entry): boolean | null {
  if (e.item.node.states.includes("checked")) return true;
  return e.item.checkable ? false : null;
}
export function locatorOf(n: WireNode): WireLocator {
  return { path: n.path, role: n.role, native_role: n.native_role, name: n.name, identifier: n.identifier };
}

/**
 * The entries of a menu_tree answer: each item under its parent item, the
 * children of a group (a submenu's menu as a node of its own) under the
 * submenu, the roots' children at the top. `prefix`: the names above the top.
 */
export function buildEntries(tree: MenuTree, prefix: readonly string[] = []): Entry[] {
  const top: Entry[] = [];
  const where = new Map<string, { list: Entry[]; names: readonly string[]; role: string | null }>();
  for (const r of tree.roots) where.set(r.path.join("."), { list: top, names: prefix, role: null });
  for (const item of tree.items) {
    const key = item.node.path.join(".");
    const parent = where.get(item.node.path.slice(0, -1).join("."));
    if (!parent) continue; // below a node the bounds cut
    if (item.kind === "group") {
      where.set(key, parent);
      continue;
    }
    // A label inside a menu entry is the entry's own caption (GTK 4's menu bar
    // items hold one), not an item of a submenu: nothing to list or activate.
    if (item.node.role === "label" && parent.role === "menu_item") continue;
    const e: Entry = { item, names: [...parent.names, displayName(item.node)], children: [] };
    parent.list.push(e);
    where.set(key, { list: e.children, names: e.names, role: item.node.role });
  }
  return top;
}

/**
 * A menu bar is exposed only if something in it can be reached: when none of
 * its top-level items lists items or advertises any action (GTK 4.8's
 * PopoverMenuBar: its menus enter the tree only once opened by the pointer,
 * and the items advertise no action that opens them), listing those names as
 * leaf items, or saying a path "opens no submenu", would be a guess.
 */
function requireReachableBar(top: readonly Entry[], app: string, title: string, windowId: number, delivery?: "not_dispatched"): void {
  if (!top.length || top.some((e) => e.children.length > 0 || e.item.node.actions.length > 0)) return;
  throw new DeckhandError("MENU_NOT_EXPOSED", `${app}'s window ${JSON.stringify(title)} has a menu bar whose items advertise no action and list no items: its menus are not reachable through accessibility`, {
    details: { reason: "no-open-action", windowId, ...available(top), ...(delivery ? { delivery } : {}) },
  });
}

function countEntries(list: readonly Entry[]): number {
  return list.reduce((n, e) => n + 1 + countEntries(e.children), 0);
}

function toOut(e: Entry): MenuEntryOut {
  return {
    name: displayName(e.item.node),
    path: e.names.map(escapeMenuName).join(">"),
    role: e.item.node.role,
    enabled: enabled(e),
    checked: checkedOf(e),
    shortcut: e.item.shortcut,
    submenu: isSubmenu(e),
    children: e.children.map(toOut),
  };
}

function available(list: readonly Entry[]): { available: string; availableCount: number } {
  const names = list.map((e) => displayName(e.item.node));
  return { available: names.slice(0, MAX_AVAILABLE).join(" | "), availableCount: names.length };
}

/** The entry a level names in `list`, or MENU_ITEM_NOT_FOUND naming the level and what is there. */
function pick(list: readonly Entry[], wanted: string, level: number, matched: readonly string[]): Entry {
  const i = matchMenuName(
    wanted,
    list.map((e) => e.item.node.name),
  );
  if (i < 0) {
    throw new DeckhandError("MENU_ITEM_NOT_FOUND", `no item ${JSON.stringify(wanted)} at level ${level}${matched.length ? ` (under ${matched.join(">")})` : ""}`, {
      details: { level, name: wanted, ...available(list), delivery: "not_dispatched" },
    });
  }
  return list[i]!;
}

/** The chain of entries a path names, every level checked: found, a submenu where one is needed, enabled. */
export function resolveMenuPath(top: readonly Entry[], levels: readonly string[]): Entry[] {
  const chain: Entry[] = [];
  let list = top;
  for (let i = 0; i < levels.length; i++) {
    const e = pick(list, levels[i]!, i + 1, chain.map((c) => displayName(c.item.node)));
    chain.push(e);
    const last = i === levels.length - 1;
    if (!last && !isSubmenu(e)) {
      throw new DeckhandError("MENU_ITEM_NOT_FOUND", `${JSON.stringify(displayName(e.item.node))} (level ${i + 1}) opens no submenu, so it has no item ${JSON.stringify(levels[i + 1])}`, {
        details: { level: i + 2, name: levels[i + 1]!, reason: "not-a-submenu", available: "", availableCount: 0, delivery: "not_dispatched" },
      });
    }
    if (last && isSubmenu(e)) {
      throw new DeckhandError("MENU_ITEM_NOT_FOUND", `${JSON.stringify(displayName(e.item.node))} opens a submenu: name an item in it`, {
        details: { level: i + 2, name: "", reason: "ends-at-submenu", ...available(e.children), delivery: "not_dispatched" },
      });
    }
    list = e.children;
  }
  for (let i = 0; i < chain.length; i++) {
    const e = chain[i]!;
    if (!enabled(e)) {
      throw new DeckhandError("MENU_ITEM_DISABLED", `the item ${JSON.stringify(e.names.join(">"))} is disabled${i < chain.length - 1 ? " (a submenu on the way)" : ""}: nothing was activated`, {
        details: { level: i + 1, name: displayName(e.item.node), path: e.names.join(">"), delivery: "not_dispatched" },
      });
    }
  }
  return chain;
}

/** What one menu command needs of the engine, resolved once. */
interface Target {
  engine: Engine;
  app: ResolvedApp;
  window: WireWindow;
  windows: WireWindow[];
}

async function menuTree(t: Target, root: WireLocator | null, maxNodes: number, maxDepth = MAX_DEPTH, windowId = t.window.window_id): Promise<MenuTree> {
  const { supervisor } = await t.engine.helper();
  const { result } = await supervisor.request("menu_tree", { pid: t.app.pid, window_id: windowId, root, max_nodes: maxNodes, max_depth: maxDepth });
  return result;
}

async function elementAction(t: Target, node: WireNode, action: "click" | "secondary", actionName: string | null): Promise<{ result: OpResult<"element_action">; receipt?: Receipt }> {
  const { supervisor } = await t.engine.helper();
  return await supervisor.request("element_action", { pid: t.app.pid, window_id: t.window.window_id, locator: locatorOf(node), action, text: null, start: null, end: null, action_name: actionName });
}

/** Open a submenu through its own action: a press where it has one (GTK), else its show_menu action (Qt's menu bar items). */
async function openSubmenu(t: Target, e: Entry): Promise<void> {
  const { hello } = await t.engine.helper();
  const acts = e.item.node.actions;
  if (acts.some((a) => a.name === "press")) {
    requireCapability(hello, "action.click", "opening a submenu");
    await elementAction(t, e.item.node, "click", null);
    return;
  }
  const show = acts.find((a) => a.name === "show_menu");
  if (!show) {
    throw new DeckhandError("MENU_NOT_EXPOSED", `the submenu ${JSON.stringify(e.names.join(">"))} advertises no action that opens it`, {
      details: { reason: "no-open-action", path: e.names.join(">"), delivery: "not_dispatched" },
    });
  }
  requireCapability(hello, "action.secondary", "opening a submenu");
  await elementAction(t, e.item.node, "secondary", show.native);
}

/**
 * After opening `opened`: its items, read again until the one named `wanted`
 * is on screen (bounded). The fresh entry, or null when it never showed.
 */
async function waitShowing(t: Target, opened: Entry, wanted: string): Promise<Entry | null> {
  const until = Date.now() + OPEN_WAIT_MS;
  for (;;) {
    const sub = buildEntries(await menuTree(t, locatorOf(opened.item.node), 500, 3), opened.names);
    const i = matchMenuName(
      wanted,
      sub.map((e) => e.item.node.name),
    );
    if (i >= 0 && sub[i]!.item.showing) return sub[i]!;
    if (Date.now() >= until) return null;
    await sleep(POLL_MS);
  }
}

/** Whether any item below `opener` is on screen. */
async function anyShowing(t: Target, opener: WireNode): Promise<boolean> {
  const tree = await menuTree(t, locatorOf(opener), 500, 4);
  return tree.items.some((i) => i.showing);
}

interface CloseOutcome {
  closed: boolean;
  closedBy: "accessibility" | "escape" | null;
  note: string;
}

/**
 * Close what `opener` opened: menu_close (accessibility), else Escape through
 * the focus-guarded keyboard under the foreground grant, else leave it open.
 * `stillOpen` reads whether it is still open.
 */
async function closeMenu(t: Target, opener: WireNode | null, stillOpen: () => Promise<boolean>): Promise<CloseOutcome> {
  // Cleanup runs even for a cancelled command: what it opened is closed.
  return await t.engine.withoutCancel(() => closeMenuNow(t, opener, stillOpen));
}

async function closeMenuNow(t: Target, opener: WireNode | null, stillOpen: () => Promise<boolean>): Promise<CloseOutcome> {
  const { supervisor, hello } = await t.engine.helper();
  let note = "";
  if (opener && hello.capabilities.menu_close?.supported) {
    try {
      const { result } = await supervisor.request("menu_close", { pid: t.app.pid, window_id: t.window.window_id, opener: locatorOf(opener) });
      if (result.closed && result.method) return { closed: true, closedBy: "accessibility", note: `closed through ${result.method}` };
      if (result.closed && !(await stillOpen())) return { closed: true, closedBy: null, note: "it had closed already" };
      note = result.method ? `${result.method} did not close it` : "no accessibility call closes it";
    } catch (err) {
      note = `closing through accessibility failed: ${err instanceof Error ? err.message : String(err)}`;
    }
  } else note = opener ? "the helper cannot close menus through accessibility (menu_close)" : "the popup has no node to close it through";
  if (!t.engine.safety.foregroundGranted() || !hello.capabilities["input.keyboard"]?.supported || !hello.capabilities["input.focus_guard"]?.supported) {
    return { closed: false, closedBy: null, note: `${note}; Escape needs the operator's foreground grant: left open` };
  }
  try {
    await supervisor.request("input", {
      steps: [{ kind: "tap", keys: ["Escape"], repeat: 1 }],
      restore_pointer: false,
      // Activation asked of the window manager first, as press-key does under the grant.
      focus: { window_id: t.window.window_id, pid: t.app.pid, activate: true },
    });
  } catch (err) {
    return { closed: false, closedBy: null, note: `${note}; Escape was refused (${err instanceof DeckhandError ? err.code : "error"}): left open` };
  }
  const until = Date.now() + CLOSE_WAIT_MS;
  for (;;) {
    if (!(await stillOpen())) return { closed: true, closedBy: "escape", note: `${note}; closed with Escape (focus-guarded, foreground grant)` };
    if (Date.now() >= until) return { closed: false, closedBy: null, note: `${note}; Escape was sent but it is still open` };
    await sleep(POLL_MS);
  }
}

/** App, window, policy: what every menu command does first. */
async function target(engine: Engine, args: { app: string; windowId?: number; windowIndex?: number }, command: string): Promise<Target> {
  const app = await resolveApp(engine, args.app);
  const { window, windows } = await resolveWindow(engine, app, args);
  engine.safety.checkApp(app, window, command);
  return { engine, app, window, windows };
}

// ---------------------------------------------------------------- context menus

interface OpenedContext {
  element: Element;
  /** The popup's items (top level). */
  top: Entry[];
  truncated: boolean;
  /** Closes it again (and says how). */
  close: () => Promise<CloseOutcome>;
  stillOpen: () => Promise<boolean>;
}

/**
 * Whether a menu below an element is on screen (Qt's "popup menu"): an item
 * of a menu, not just any child of it (a link's own text is on screen too).
 */
function menuShowing(tree: MenuTree | null): boolean {
  return tree?.items.some((i) => i.showing && (i.kind !== "item" || i.node.role === "menu_item")) === true;
}

/** A snapshot element as a wire node (what its locator needs). */
function elementNode(element: Element): WireNode {
  return {
    path: element.locator.path,
    role: element.locator.role,
    native_role: element.locator.nativeRole,
    name: element.locator.name,
    description: "",
    value: null,
    states: [],
    bounds: element.bounds,
    actions: [],
    identifier: element.locator.identifier,
    secure: element.secure,
    child_count: 0,
  };
}

const popupIds = async (t: Target) => new Set((await appWindows(t.engine, t.app.pid, { popups: true })).filter((w) => w.popup).map((w) => w.window_id));

/**
 * Open the context menu of a snapshot element through its show_menu action
 * and find its items: below the element (a toolkit that attaches the popup
 * to it), or in a popup window of the app whose accessible the toolkit
 * lists. Not found: it is closed again (or left open, said so) and the
 * answer is MENU_NOT_EXPOSED reason popup-not-in-tree.
 */
async function openContext(t0: Target, args: { elementIndex?: number; snapshotId?: string; windowId?: number; windowIndex?: number }, maxItems: number, command: string): Promise<{ t: Target; ctx: OpenedContext }> {
  const { engine, app } = t0;
  const snapshot = resolveSnapshot(engine.store, app, { snapshotId: args.snapshotId, windowId: args.windowId, windowIndex: args.windowIndex, windows: t0.windows, windowsKnown: true });
  engine.safety.checkApp(app, snapshot.window, command);
  const window = t0.windows.find((w) => w.window_id === snapshot.window.windowId)!;
  const t: Target = { ...t0, window };
  const element = lookupElement(snapshot, args.elementIndex!);
  let native = element.actions.includes("show_menu") ? resolveNativeAction(element, "show_menu", snapshot.actionPairs?.[String(element.index)]) : null;
  let advertised = element.nativeActions;
  if (!native) {
    // An observation leaves out actions whose localized name is blank
    // (Chromium names none): the element's exact actions, read live (menu_tree
    // reads a root's action names with GetName where they are blank).
    const live = await menuTree(t, locatorOf(elementNode(element)), 1, 1);
    const show = live.roots[0]?.actions.find((a) => a.name === "show_menu");
    advertised = live.roots[0]?.actions.map((a) => a.native) ?? advertised;
    native = show?.native ?? null;
  }
  if (!native) {
    throw new DeckhandError("MENU_NOT_EXPOSED", `element ${element.index} (${element.role} ${JSON.stringify(element.title)}) advertises no show_menu action: its context menu, if it has one, is not reachable through accessibility`, {
      details: { reason: "no-show-menu-action", elementIndex: element.index, actions: advertised.join(","), delivery: "not_dispatched" },
    });
  }
  const { hello } = await engine.helper();
  requireCapability(hello, "action.secondary", "opening a context menu");
  const before = await popupIds(t);
  const node = elementNode(element);
  engine.safety.audit({ event: "decision", command, appId: auditAppId(app), pid: app.pid, windowId: window.window_id, elementIndex: element.index, decision: "allow", rule: "open-context-menu", outcome: "OK", delivery: "not_dispatched" });
  let openNote = "";
  try {
    await elementAction(t, node, "secondary", native);
  } catch (err) {
    // Sent, but no answer: Qt 5 runs a button's menu in a nested event
    // loop and answers the show-menu action only once the menu closes.
    const sent = err instanceof DeckhandError && ((err as { receipt?: Receipt }).receipt?.delivery ?? err.details.delivery) !== "not_dispatched";
    if (!sent) throw err;
    openNote = `the app did not answer its show-menu action (${(err as DeckhandError).code}); `;
  }
  engine.safety.audit({ command, appId: auditAppId(app), pid: app.pid, windowId: window.window_id, elementIndex: element.index, decision: "allow", rule: "open-context-menu", outcome: "OK", delivery: "submitted" });
  const newPopups = async () => [...(await popupIds(t))].filter((id) => !before.has(id));
  const stillOpen = async () => (await newPopups()).length > 0 || menuShowing(await menuTree(t, locatorOf(node), 200, 4).catch(() => null));
  // Where the toolkit put its items: below the element, or a popup window's own tree.
  const until = Date.now() + OPEN_WAIT_MS;
  let found: { tree: MenuTree; opener: WireNode | null; windowId: number } | null = null;
  // A popup window that shows no tree of its own for this long is taken as not exposed.
  let popupSeen: number | null = null;
  while (!found) {
    const own: MenuTree = await menuTree(t, locatorOf(node), maxItems, MAX_DEPTH);
    if (menuShowing(own)) found = { tree: own, opener: node, windowId: window.window_id };
    const popups: number[] = found ? [] : await newPopups();
    if (popups.length) popupSeen ??= Date.now();
    for (const id of popups) {
      const popup: MenuTree | null = await menuTree(t, null, maxItems, MAX_DEPTH, id).catch(() => null);
      if (popup && popup.roots.length) {
        found = { tree: popup, opener: null, windowId: id };
        break;
      }
    }
    if (found || Date.now() >= until || (popupSeen !== null && Date.now() - popupSeen > POPUP_GRACE_MS)) break;
    await sleep(POLL_MS);
  }
  if (!found) {
    const popups = await newPopups();
    const c = await closeMenu(t, null, stillOpen);
    throw new DeckhandError(
      "MENU_NOT_EXPOSED",
      `${openNote}the context menu of element ${element.index} ${popups.length ? "opened (a popup window appeared) but its items are not in the app's accessibility tree" : "did not show any item in the accessibility tree"}; ${c.note}`,
      { details: { reason: "popup-not-in-tree", elementIndex: element.index, popupWindows: popups.length, closed: c.closed, closedBy: c.closedBy ?? "none", leftOpen: !c.closed, delivery: "submitted" } },
    );
  }
  const tt = { ...t, window: found.windowId === window.window_id ? window : { ...window, window_id: found.windowId } };
  const top = buildEntries(found.tree);
  return {
    t: tt,
    ctx: {
      element,
      top,
      truncated: found.tree.truncated,
      close: () => closeMenu(t, found!.opener, stillOpen),
      stillOpen,
    },
  };
}

function contextReport(element: Element, c: CloseOutcome, closedBy?: ContextReport["closedBy"]): ContextReport {
  return { element: { index: element.index, role: element.role, name: element.title }, opened: true, closed: c.closed, closedBy: closedBy ?? c.closedBy, note: c.note };
}

// ---------------------------------------------------------------- menu list

export async function menuList(engine: Engine, args: CommandArgs<"menu-list">, gate: () => Promise<unknown>): Promise<CommandResult<"menu-list">> {
  const { hello } = await engine.helper();
  requireCapability(hello, "menu_tree", "menu list");
  const context = args.elementIndex !== undefined;
  if (!context && args.snapshotId !== undefined) throw new DeckhandError("INVALID_ARGUMENTS", "--snapshot-id goes with --element-index (a context menu)", { details: { field: "snapshotId" } });
  // Opening a context menu is an action: refused while paused, as menu click is.
  if (context) engine.safety.checkPaused("menu-click");
  await gate();
  const maxItems = args.maxItems ?? DEFAULT_MAX_ITEMS;
  const t0 = await target(engine, args, "menu-list");
  const run = async (): Promise<CommandResult<"menu-list">> => {
    if (context) {
      const { t, ctx } = await openContext(t0, args, maxItems, "menu-list");
      const items = ctx.top.map(toOut);
      const c = await ctx.close();
      return { app: { name: t.app.name, pid: t.app.pid }, windowId: t0.window.window_id, source: "context_menu", items, itemCount: countEntries(ctx.top), truncated: ctx.truncated, contextMenu: contextReport(ctx.element, c) };
    }
    const tree = await menuTree(t0, null, maxItems);
    if (!tree.roots.length) {
      throw new DeckhandError("MENU_NOT_EXPOSED", `${t0.app.name}'s window ${JSON.stringify(t0.window.title)} exposes no menu bar through accessibility`, {
        details: { reason: "no-menu-bar", windowId: t0.window.window_id },
      });
    }
    const top = buildEntries(tree);
    requireReachableBar(top, t0.app.name, t0.window.title, t0.window.window_id);
    return { app: { name: t0.app.name, pid: t0.app.pid }, windowId: t0.window.window_id, source: "menu_bar", items: top.map(toOut), itemCount: countEntries(top), truncated: tree.truncated, contextMenu: null };
  };
  const result = context ? await engine.serialized(`pid:${t0.app.pid}`, run) : await run();
  engine.safety.audit({ command: "menu-list", appId: auditAppId(t0.app), pid: t0.app.pid, windowId: t0.window.window_id, decision: "allow", outcome: "OK" });
  return result;
}

// ---------------------------------------------------------------- menu click

/**
 * How an item is activated: its press (click), else, for an item of role
 * menu_item whose first (default) action is "select", that action: Chromium
 * names the default action of its items so, and it runs the item (its
 * disabled items say "doDefault" instead). Null: nothing activates it.
 */
export function activationOf(n: WireNode): { action: "click" | "secondary"; native: string | null } | null {
  if (n.actions.some((a) => a.name === "press")) return { action: "click", native: null };
  const first = n.actions[0];
  if (n.role === "menu_item" && first?.name === "select") return { action: "secondary", native: first.native };
  return null;
}

/** The item as the confirm decision reads it: a control of its role and name (no snapshot index). */
function controlOf(n: WireNode): Control {
  return { role: n.role, name: n.name.trim(), states: n.states, actions: [...new Set(n.actions.map((a) => a.name))], index: null };
}

export async function menuClick(engine: Engine, args: CommandArgs<"menu-click">, gate: () => Promise<unknown>): Promise<CommandResult<"menu-click">> {
  const levels = parseMenuPath(args.path);
  const { hello } = await engine.helper();
  requireCapability(hello, "menu_tree", "menu click");
  requireCapability(hello, "action.click", "menu click");
  const context = args.elementIndex !== undefined;
  if (!context && args.snapshotId !== undefined) throw new DeckhandError("INVALID_ARGUMENTS", "--snapshot-id goes with --element-index (a context menu)", { details: { field: "snapshotId" } });
  engine.safety.checkPaused("menu-click");
  await gate();
  const t0 = await target(engine, args, "menu-click");
  return await engine.serialized(`pid:${t0.app.pid}`, async () => {
    let t = t0;
    let top: Entry[];
    let ctx: OpenedContext | null = null;
    if (context) {
      ({ t, ctx } = await openContext(t0, args, 5000, "menu-click"));
      top = ctx.top;
    } else {
      const tree = await menuTree(t, null, 5000);
      if (!tree.roots.length) {
        throw new DeckhandError("MENU_NOT_EXPOSED", `${t.app.name}'s window ${JSON.stringify(t.window.title)} exposes no menu bar through accessibility`, {
          details: { reason: "no-menu-bar", windowId: t.window.window_id, delivery: "not_dispatched" },
        });
      }
      top = buildEntries(tree);
      requireReachableBar(top, t.app.name, t.window.title, t.window.window_id, "not_dispatched");
    }
    const opened: string[] = [];
    let openerNode: WireNode | null = null;
    const windowFacts = { windowId: t.window.window_id, title: t.window.title, bounds: t.window.bounds };
    const decision = engine.safety.checkApp(t.app, t.window, "menu-click");
    const audit = (outcome: string, delivery: string, denied = false) =>
      engine.safety.audit({ command: "menu-click", appId: auditAppId(t.app), pid: t.app.pid, windowId: t.window.window_id, decision: denied ? "deny" : "allow", decisionSource: decision.source, outcome, delivery });
    /** On a refusal once something was opened: close it, say so in the error, rethrow. */
    const fail = async (err: unknown): Promise<never> => {
      const anyOpen = opened.length > 0 || ctx !== null;
      // The item itself was not activated (a failed activation carries its own receipt's delivery).
      if (err instanceof DeckhandError && err.details.delivery === undefined) err.details.delivery = "not_dispatched";
      if (err instanceof DeckhandError && anyOpen) {
        const c = ctx ? await ctx.close() : await closeMenu(t, openerNode, () => anyShowing(t, openerNode!));
        Object.assign(err.details, { opened: opened.join(">"), closed: c.closed, closedBy: c.closedBy ?? "none", closeNote: c.note.slice(0, 300) });
      }
      try {
        audit(err instanceof DeckhandError ? err.code : "INTERNAL", err instanceof DeckhandError ? String(err.details.delivery ?? "not_dispatched") : "unknown", err instanceof DeckhandError && /POLICY|CONFIRM|PAUSED/.test(err.code));
      } catch {
        /* the error itself is what the caller needs */
      }
      throw err;
    };
    try {
      // Every level found, submenus where needed, all enabled: before anything is opened.
      let chain = resolveMenuPath(top, levels);
      const leaf = chain[chain.length - 1]!;
      // The confirm decision of a click on an item of that name: before any menu opens.
      await engine.safety.checkStep({ app: t.app, window: windowFacts, step: { action: "click" } as Step, element: null, command: "menu-click", facts: { element: controlOf(leaf.item.node) } });
      // Open each submenu in turn, then find the next level again, on screen.
      for (let i = 0; i < chain.length - 1; i++) {
        const sub = chain[i]!;
        await openSubmenu(t, sub);
        if (i === 0) openerNode = sub.item.node;
        opened.push(displayName(sub.item.node));
        const next = await waitShowing(t, sub, levels[i + 1]!);
        if (!next) {
          throw new DeckhandError("ACTION_FAILED", `the submenu ${JSON.stringify(sub.names.join(">"))} was opened but ${JSON.stringify(levels[i + 1])} did not show within ${OPEN_WAIT_MS} ms`, {
            details: { reason: "submenu-not-shown", level: i + 2, delivery: "submitted" },
          });
        }
        if (!enabled(next)) {
          throw new DeckhandError("MENU_ITEM_DISABLED", `the item ${JSON.stringify(next.names.join(">"))} is disabled now that its menu is open: nothing was activated`, {
            details: { level: i + 2, name: displayName(next.item.node), path: next.names.join(">"), delivery: "not_dispatched" },
          });
        }
        // Its fresh states stand (read on screen); deeper levels are read again as they open.
        chain = [...chain.slice(0, i + 1), next, ...chain.slice(i + 2)];
      }
      const item = chain[chain.length - 1]!;
      engine.safety.checkPaused("menu-click");
      engine.safety.audit({ event: "decision", command: "menu-click", appId: auditAppId(t.app), pid: t.app.pid, windowId: t.window.window_id, decision: "allow", decisionSource: decision.source, rule: decision.rule, outcome: "OK", delivery: "not_dispatched" });
      const before = item.item.node.states.includes("checked");
      // Neither: the click is asked for and the helper refuses it (ACTION_UNSUPPORTED, nothing run).
      const how = activationOf(item.item.node) ?? { action: "click" as const, native: null };
      if (how.action === "secondary") requireCapability(hello, "action.secondary", "menu click");
      const reply = await elementAction(t, item.item.node, how.action, how.native);
      audit("OK", reply.receipt?.delivery ?? "submitted");
      // Read back: the item's check state (through its parent's items), and whether the menu closed.
      const parent = chain.length > 1 ? chain[chain.length - 2]! : null;
      let after: boolean | null = null;
      let checkableAfter = false;
      if (parent) {
        const again = buildEntries(await menuTree(t, locatorOf(parent.item.node), 500, 3).catch(() => ({ roots: [], items: [], truncated: false, calls: 0 })), parent.names);
        const i = matchMenuName(
          item.item.node.name,
          again.map((e) => e.item.node.name),
        );
        if (i >= 0) {
          after = again[i]!.item.node.states.includes("checked");
          checkableAfter = again[i]!.item.checkable;
        }
      }
      let menuClosed: boolean | null = null;
      let closeNote = "";
      let report: ContextReport | null = null;
      if (ctx) {
        // The activated item closes its menu in the app's next frames: a
        // bounded wait before deckhand closes it (Escape, under the grant).
        const until = Date.now() + CLOSE_WAIT_MS;
        let open = await ctx.stillOpen();
        while (open && Date.now() < until) {
          await sleep(POLL_MS);
          open = await ctx.stillOpen();
        }
        const c = open ? await ctx.close() : { closed: true, closedBy: null, note: "the activated item closed it" };
        report = contextReport(ctx.element, c, c.closedBy ?? (c.closed ? "activation" : null));
        menuClosed = c.closed;
      } else if (openerNode) {
        const opener = openerNode;
        const until = Date.now() + CLOSE_WAIT_MS;
        for (;;) {
          if (!(await anyShowing(t, opener))) {
            menuClosed = true;
            closeNote = "the menu closed";
            break;
          }
          if (Date.now() >= until) {
            // Qt 5 runs the action and leaves its menu open: close it.
            const c = await closeMenu(t, opener, () => anyShowing(t, opener));
            menuClosed = c.closed;
            closeNote = c.note;
            break;
          }
          await sleep(POLL_MS);
        }
      }
      // A check or radio item: the toolkit says so, or its checked state shows
      // (Qt 5 marks no unchecked item checkable: no checked state is unchecked there).
      const checkable = item.item.checkable || checkableAfter || before || after === true;
      const changed = after !== null && before !== after;
      const checked = checkable ? { before, after } : null;
      // Claimed only when read back: the helper's own check, else a check state that changed.
      const verified = reply.result.verified ?? (checked && changed ? true : null);
      const predicate = reply.result.verification ?? (checked ? `checked state ${before} -> ${after}` : null);
      return {
        app: { name: t.app.name, pid: t.app.pid },
        windowId: t.window.window_id,
        path: chain.map((e) => displayName(e.item.node)).join(">"),
        item: { name: displayName(item.item.node), role: item.item.node.role },
        opened,
        activated: true as const,
        delivery: reply.receipt?.delivery ?? "submitted",
        route: reply.receipt?.route ?? "accessibility",
        nativeAction: reply.result.native_action ?? null,
        verification: { verified, predicate: predicate ?? (menuClosed ? closeNote || "the menu closed" : null), menuClosed, checked },
        contextMenu: report,
      };
    } catch (err) {
      return await fail(err);
    }
  });
}

/** For tests: the entries and the path resolution without a helper. */
export const __test = { buildEntries, resolveMenuPath, toOut, activationOf, requireReachableBar };
