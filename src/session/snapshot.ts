// Turning a helper's flat node list into an immutable snapshot: sparse
// element indices, a locator per element, and compact numbered tree text.
// Everything decided here reads the neutral vocabulary (src/wire/vocabulary.ts);
// the platform's own words (native role, native action names) are carried
// along for display and for the helper, never decided on.
import { randomBytes } from "node:crypto";
import type { Hello, Rect, WireNode } from "../wire/messages.ts";
import type { ActionName, NodeAction, Role } from "../wire/vocabulary.ts";

/** How an element is found again: a child-index path, by platform. */
export type LocatorKind = "atspi-path" | "ax-path" | "uia-path" | "scripted-path" | "ocr-box";

export interface Locator {
  kind: LocatorKind;
  path: number[];
  /** Neutral role the element had when observed. */
  role: Role;
  /** The platform's role it had ("" when the helper gave none): the helper re-checks this one when non-empty. */
  nativeRole: string;
  identifier: string;
  name: string;
}

export interface Element {
  index: number;
  /** Neutral role (src/wire/vocabulary.ts ROLES). */
  role: Role;
  /** The platform's role name: shown, never decided on. */
  nativeRole: string;
  title: string;
  value: string | null;
  label: string;
  enabled: boolean;
  focused: boolean;
  secure: boolean;
  bounds: Rect | null;
  /** Neutral names of the advertised actions, de-duplicated, in the platform's order. */
  actions: ActionName[];
  /** The platform's names of the advertised actions, in the node's order (one per advertised action). */
  nativeActions: string[];
  locator: Locator;
  /** "ocr": read from the window image, no tree behind it (actionable only by point). */
  source?: "ocr";
}

/** The locator kind of a helper platform (hello.helper.platform). */
export function locatorKindOf(platform: Hello["helper"]["platform"]): LocatorKind {
  switch (platform) {
    case "linux":
      return "atspi-path";
    case "macos":
      return "ax-path";
    case "windows":
      return "uia-path";
    default:
      return "scripted-path";
  }
}

export interface ScreenshotInfo {
  path: string;
  width: number;
  height: number;
  scale: number;
  /** image pixel (ix, iy) shows screen point (origin.x + ix / scale, origin.y + iy / scale). */
  origin: { x: number; y: number };
  method: string;
  redacted: number;
  /** The file's image format. */
  format: "png" | "jpeg" | "webp";
  /** The screen rectangle the image shows (origin and size / scale). */
  screenRect: Rect;
}

export interface SnapshotApp {
  pid: number;
  startTime: number | null;
  name: string;
  executable: string | null;
  desktopId: string | null;
  /** The helper's process identity (WireApp process_name, executable_deleted, bundle_id); absent when it said nothing. */
  processName?: string | null;
  executableDeleted?: boolean;
  bundleId?: string | null;
}

export interface SnapshotWindow {
  windowId: number;
  title: string;
  bounds: Rect;
}

/**
 * One node of a stored snapshot's tree, in pre-order (its position is its
 * place in Snapshot.nodes): what the tree text pages are rendered from
 * (src/session/view.ts). Short keys: a snapshot record holds thousands.
 */
export interface StoredNode {
  /** Depth in the full tree (0: the window). */
  d: number;
  /** The line without indent and index: role "name" value="..." (flags). */
  t: string;
  /** The node's element index, when it is an element. */
  e?: number;
  /** Compact view: present when the node is shown there, its depth among the nodes shown. */
  k?: number;
  /** 1: interactive (isInteractiveNode): what set-of-marks numbers. */
  a?: 1;
}

export interface Snapshot {
  snapshotId: string;
  targetKey: string;
  windowKey: string;
  app: SnapshotApp;
  window: SnapshotWindow;
  capturedAt: string;
  expiresAt: string;
  elementCount: number;
  /** The helper cut the tree read short (max_nodes and the like): nodes past the cut are not in the snapshot. */
  truncated: boolean;
  elements: Element[];
  /** Every node read, in pre-order (src/session/view.ts renders pages of them). */
  nodes: StoredNode[];
  /**
   * The furthest node position shown to the agent, when a page budget cut
   * the output short; absent when everything was shown. An element beyond
   * it is refused ELEMENT_BEYOND_HORIZON (src/program/snapshot-check.ts).
   */
  horizon?: number;
  screenshot: ScreenshotInfo | null;
  /**
   * Not part of any result: for the elements whose de-duplicated neutral
   * actions no longer line up with nativeActions (two natives with one
   * neutral name), each advertised action as the helper paired it, by
   * element index. Resolves a neutral action name to the native one.
   */
  actionPairs?: Record<string, NodeAction[]>;
}

const ID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZabcdefghijkmnopqrstuvwxyz";
export function newSnapshotId(): string {
  const bytes = randomBytes(20);
  let s = "cs_";
  for (const b of bytes) s += ID_ALPHABET[b % ID_ALPHABET.length];
  return s;
}

export function targetKeyOf(app: SnapshotApp): string {
  return app.executable ? `exe:${app.executable}` : `pid:${app.pid}`;
}

/** The key of one window of an app: what the store remembers secure fields by. */
export function windowKeyOf(app: SnapshotApp, windowId: number): string {
  return `${targetKeyOf(app)}#${windowId}`;
}

/**
 * What identifies an element seen secure across trees of its window: its
 * path and its identifier (an app's "show password" toggle changes the
 * role, not these).
 */
export interface SecureLocator {
  path: number[];
  identifier: string;
}

/**
 * Whether a node is a secure field: the helper's flag, or (a backstop for
 * it) the neutral secure role or state.
 */
export function isSecureNode(n: { secure: boolean; role: string; states?: readonly string[] }): boolean {
  return n.secure === true || n.role === "secure_text_field" || (n.states?.includes("secure") ?? false);
}

export function sameLocator(a: SecureLocator, b: SecureLocator): boolean {
  return a.identifier === b.identifier && a.path.length === b.path.length && a.path.every((p, i) => p === b.path[i]);
}

/** Whether a node is one of the remembered secure locators. */
export function rememberedSecure(n: SecureLocator, remembered: readonly SecureLocator[]): boolean {
  return remembered.some((r) => sameLocator(r, n));
}

/**
 * Once secure, secure for the memory's lifetime: a node the store remembers
 * as secure is treated as one (value dropped, secure flag set) even when the
 * helper now reports it as plain text, e.g. a password revealed by the app's
 * "show password" toggle.
 */
export function applySecureMemory(nodes: WireNode[], remembered: readonly SecureLocator[]): WireNode[] {
  return nodes.map((n) => (!n.secure && (isSecureNode(n) || rememberedSecure(n, remembered)) ? { ...n, secure: true, value: null } : n));
}

/** The locators of a tree's secure nodes. */
export function secureLocatorsOf(nodes: readonly WireNode[]): SecureLocator[] {
  return nodes.filter(isSecureNode).map((n) => ({ path: [...n.path], identifier: n.identifier }));
}

/** URLs keep scheme, host and path; the query and fragment may carry tokens. */
export function stripUrlQuery(value: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return value;
  return value.replace(/[?#].*$/s, "");
}

// "container" (the structural role) only groups other nodes: no element
// index of its own unless it carries a value, an action or focus; its name
// alone does not make it one.
function isElement(n: WireNode): boolean {
  if (n.actions.length > 0) return true;
  if (isSecureNode(n)) return true;
  if (n.value !== null && n.value !== "") return true;
  if (n.states.includes("focusable") || n.states.includes("editable")) return true;
  if (n.role === "container") return false;
  return n.name !== "";
}

/** Neutral action names, de-duplicated, first occurrence first. */
function neutralActions(actions: readonly NodeAction[]): ActionName[] {
  return [...new Set(actions.map((a) => a.name))];
}

/** An element of a node (`index`: its pre-order number; -1 for a node outside any snapshot, e.g. a hit test's). */
export function elementOf(n: WireNode, index: number, kind: LocatorKind): Element {
  const secure = isSecureNode(n);
  return {
    index,
    role: n.role,
    nativeRole: n.native_role,
    title: n.name,
    value: secure || n.value === null ? null : stripUrlQuery(n.value),
    label: n.description,
    enabled: n.states.includes("enabled"),
    focused: n.states.includes("focused"),
    secure,
    bounds: n.bounds,
    actions: neutralActions(n.actions),
    nativeActions: n.actions.map((a) => a.native),
    locator: { kind, path: n.path, role: n.role, nativeRole: n.native_role, identifier: n.identifier, name: n.name },
  };
}

/**
 * The native name to invoke for an action the caller named: by its native
 * name (exact, else the one native equal to it ignoring case), or by its
 * neutral one; null when the element advertises no such action, or when a
 * neutral "other" names more than one.
 * `pairs`: the snapshot's actionPairs entry for the element, if any.
 */
export function resolveNativeAction(element: Pick<Element, "actions" | "nativeActions">, name: string, pairs?: readonly NodeAction[]): string | null {
  if (element.nativeActions.includes(name)) return name;
  const folded = [...new Set(element.nativeActions.filter((n) => n.toLowerCase() === name.toLowerCase()))];
  if (folded.length === 1) return folded[0]!;
  const paired: readonly NodeAction[] =
    pairs ?? (element.actions.length === element.nativeActions.length ? element.nativeActions.map((native, i) => ({ name: element.actions[i]!, native })) : []);
  const matches = paired.filter((p) => p.name === name);
  if (matches.length === 0 || (name === "other" && matches.length > 1)) return null;
  return matches[0]!.native;
}

export interface TreeCaps {
  maxLines: number;
  maxChars: number;
  maxValueChars: number;
}
export const DEFAULT_TREE_CAPS: TreeCaps = { maxLines: 2000, maxChars: 120_000, maxValueChars: 120 };

function quote(s: string, max: number): string {
  const clipped = s.length > max ? s.slice(0, max) + "…" : s;
  return JSON.stringify(clipped);
}

export interface BuiltTree {
  elements: Element[];
  /** The whole tree as text within the caps, built on first read (observations show pages of `nodes`). */
  treeText: string;
  truncated: boolean;
  /** See Snapshot.actionPairs. */
  actionPairs: Record<string, NodeAction[]>;
  /** Every node, in pre-order, with its line and its place in the compact view. */
  nodes: StoredNode[];
}

/**
 * Element indices of a diff's base snapshot (src/session/diff.ts): an element
 * whose identity it knows keeps its index; a new one gets the next free index.
 */
export interface IndexReuse {
  indexOf(n: WireNode): number | undefined;
  /** The least index no element of the base snapshot has. */
  nextFree: number;
}

/**
 * Roles an agent acts on whatever the toolkit advertises: GTK's notebook
 * tabs advertise no action (their tab list selects them), Chromium's links
 * none in a tree read.
 */
const CONTROL_ROLES: ReadonlySet<string> = new Set(["button", "toggle_button", "checkbox", "radio", "text_field", "text_area", "secure_text_field", "combo_box", "spin_button", "slider", "link", "tab", "menu_item"]);

/** What can be acted on: an advertised action, a control's role, or a node that takes focus, text or selection. */
export function isInteractiveNode(n: WireNode): boolean {
  if (n.actions.length > 0 || isSecureNode(n) || CONTROL_ROLES.has(n.role)) return true;
  return n.states.includes("editable") || n.states.includes("focusable") || n.states.includes("focused") || n.states.includes("selectable");
}

/** Roles that frame what is inside them: shown in the compact view when something inside is. */
const LANDMARK_ROLES: ReadonlySet<string> = new Set(["window", "dialog", "menu_bar", "menu", "toolbar", "tab_list", "form", "web_document", "document", "table", "list", "tree", "group"]);
/** Landmarks worth a line even without a name (they say what kind of place this is). */
const ALWAYS_NAMED_LANDMARKS: ReadonlySet<string> = new Set(["window", "dialog", "menu_bar", "menu", "toolbar", "tab_list", "form", "web_document", "document"]);

/**
 * The compact view (issue 14): every interactive element; headings; the
 * named texts beside an interactive element (its labels); and the landmarks
 * (named, or of a framing role) that contain any of these. Unnamed fillers,
 * texts far from any control and empty structure are left out. Returns, per
 * node, its depth among the nodes shown, or -1 when it is not shown.
 */
function compactDepths(nodes: readonly WireNode[], isEl: readonly boolean[]): number[] {
  const n = nodes.length;
  const parent = new Array<number>(n).fill(-1);
  const stack: number[] = [];
  for (let i = 0; i < n; i++) {
    const d = nodes[i]!.path.length;
    while (stack.length > d) stack.pop();
    parent[i] = stack.length ? stack[stack.length - 1]! : -1;
    stack[d] = i;
    stack.length = d + 1;
  }
  const interactive = nodes.map(isInteractiveNode);
  const hasInteractiveChild = new Array<boolean>(n).fill(false);
  for (let i = 0; i < n; i++) if (interactive[i] && parent[i]! >= 0) hasInteractiveChild[parent[i]!] = true;
  const shown = new Array<boolean>(n).fill(false);
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    if (interactive[i]) shown[i] = true;
    else if (node.role === "heading" && node.name !== "") shown[i] = true;
    else if (isEl[i] && node.role !== "container" && parent[i]! >= 0 && hasInteractiveChild[parent[i]!]) shown[i] = true;
  }
  // Landmarks around what is shown (children come after their parent: walk backwards).
  const hasShownInside = new Array<boolean>(n).fill(false);
  for (let i = n - 1; i >= 0; i--) {
    if ((shown[i] || hasShownInside[i]) && parent[i]! >= 0) hasShownInside[parent[i]!] = true;
  }
  for (let i = 0; i < n; i++) {
    const node = nodes[i]!;
    if (shown[i] || !hasShownInside[i]) continue;
    if (i === 0 || (LANDMARK_ROLES.has(node.role) && (node.name !== "" || ALWAYS_NAMED_LANDMARKS.has(node.role)))) shown[i] = true;
  }
  const depth = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i++) {
    if (!shown[i]) continue;
    let p = parent[i]!;
    while (p >= 0 && !shown[p]) p = parent[p]!;
    depth[i] = p < 0 ? 0 : depth[p]! + 1;
  }
  return depth;
}

/**
 * Nodes arrive in pre-order. Every node gets its pre-order position; only
 * the nodes worth acting on or reading become elements, so indices are
 * sparse. An element's index is its position, unless `reuse` (a diff's base)
 * knows it: then it keeps the base's index, and new elements are numbered on
 * from reuse.nextFree. The tree text shows neutral roles and states only.
 */
export function buildTree(nodes: WireNode[], kind: LocatorKind, caps: TreeCaps = DEFAULT_TREE_CAPS, reuse?: IndexReuse): BuiltTree {
  const elements: Element[] = [];
  const actionPairs: Record<string, NodeAction[]> = {};
  const stored: StoredNode[] = [];
  const isEl = nodes.map(isElement);
  const compact = compactDepths(nodes, isEl);
  let nextFree = reuse?.nextFree ?? 0;
  const taken = new Set<number>();
  nodes.forEach((n, i) => {
    let index = i;
    if (reuse && isEl[i]) {
      const kept = reuse.indexOf(n);
      index = kept !== undefined && !taken.has(kept) ? kept : nextFree++;
      taken.add(index);
    }
    const element = isEl[i] ? elementOf(n, index, kind) : null;
    if (element) {
      elements.push(element);
      if (element.actions.length !== element.nativeActions.length) actionPairs[String(index)] = n.actions.map((a) => ({ name: a.name, native: a.native }));
    }
    const secure = isSecureNode(n);
    const value = secure || n.value === null ? null : stripUrlQuery(n.value);
    const flags: string[] = [];
    if (n.states.includes("focused")) flags.push("focused");
    if (n.states.includes("checked")) flags.push("checked");
    if (n.states.includes("selected")) flags.push("selected");
    if (n.states.includes("expanded")) flags.push("expanded");
    if (!n.states.includes("enabled") && element) flags.push("disabled");
    if (secure) flags.push("secure");
    let text = n.role;
    if (n.name) text += " " + quote(n.name, caps.maxValueChars);
    if (value !== null && value !== "" && value !== n.name) text += " value=" + quote(value, caps.maxValueChars);
    if (flags.length) text += ` (${flags.join(", ")})`;
    stored.push({ d: n.path.length, t: text, ...(element ? { e: index } : {}), ...(compact[i]! >= 0 ? { k: compact[i]! } : {}), ...(element && isInteractiveNode(n) ? { a: 1 as const } : {}) });
  });
  // The whole tree as one text within the caps, built only when read: an
  // observation shows pages of `nodes` instead (src/session/view.ts).
  let whole: { text: string; truncated: boolean } | null = null;
  const wholeText = () => (whole ??= capText(stored, caps));
  return {
    elements,
    actionPairs,
    nodes: stored,
    get treeText() {
      return wholeText().text;
    },
    get truncated() {
      return wholeText().truncated;
    },
  };
}

/** The stored nodes as numbered lines, cut at the caps' line and character counts. */
function capText(nodes: readonly StoredNode[], caps: TreeCaps): { text: string; truncated: boolean } {
  const lines: string[] = [];
  let chars = 0;
  for (const n of nodes) {
    const line = "  ".repeat(n.d) + (n.e !== undefined ? `[${n.e}] ` : "") + n.t;
    if (lines.length >= caps.maxLines || chars + line.length + 1 > caps.maxChars) return { text: lines.join("\n"), truncated: true };
    lines.push(line);
    chars += line.length + 1;
  }
  return { text: lines.join("\n"), truncated: false };
}
