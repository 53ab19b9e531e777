// Turning a helper's flat node list into an immutable snapshot: sparse
// element indices, a locator per element, and compact numbered tree text.
import { randomBytes } from "node:crypto";
import type { Rect, WireNode } from "../wire/messages.ts";

export interface Locator {
  kind: "atspi-path" | "ax-path" | "uia-path" | "scripted-path";
  path: number[];
  role: string;
  identifier: string;
  name: string;
}

export interface Element {
  index: number;
  role: string;
  title: string;
  value: string | null;
  label: string;
  enabled: boolean;
  focused: boolean;
  secure: boolean;
  bounds: Rect | null;
  actions: string[];
  locator: Locator;
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
}

export interface SnapshotApp {
  pid: number;
  startTime: number | null;
  name: string;
  executable: string | null;
  desktopId: string | null;
}

export interface SnapshotWindow {
  windowId: number;
  title: string;
  bounds: Rect;
}

export interface Snapshot {
  snapshotId: string;
  targetKey: string;
  windowKey: string;
  app: SnapshotApp;
  window: SnapshotWindow;
  capturedAt: string;
  expiresAt: string;
  treeText: string;
  elementCount: number;
  truncated: boolean;
  elements: Element[];
  screenshot: ScreenshotInfo | null;
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

// AT-SPI "password text", AX "AXSecureTextField", UIA "password": a backstop for a helper's flag.
const SECURE_ROLE = /password|secure[\s_-]?text/i;

/** Whether a node is a secure field: the helper's flag, or a password role. */
export function isSecureNode(n: { secure: boolean; role: string }): boolean {
  return n.secure === true || SECURE_ROLE.test(n.role);
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

// Roles that only group other nodes: they get no element index of their own
// unless they carry a name, a value or an action.
const STRUCTURAL = new Set(["filler", "panel", "scroll pane", "viewport", "layered pane", "split pane", "section", "unknown", "redundant object", "invalid"]);

function isElement(n: WireNode): boolean {
  if (n.actions.length > 0) return true;
  if (n.secure) return true;
  if (n.value !== null && n.value !== "") return true;
  if (n.states.includes("focusable") || n.states.includes("editable")) return true;
  if (STRUCTURAL.has(n.role)) return false;
  return n.name !== "";
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
  treeText: string;
  truncated: boolean;
}

/**
 * Nodes arrive in pre-order. Every node gets its pre-order number; only the
 * nodes worth acting on or reading become elements, so indices are sparse.
 */
export function buildTree(nodes: WireNode[], kind: Locator["kind"], caps: TreeCaps = DEFAULT_TREE_CAPS): BuiltTree {
  const elements: Element[] = [];
  const lines: string[] = [];
  let chars = 0;
  let truncated = false;
  nodes.forEach((n, i) => {
    const value = n.secure ? null : n.value === null ? null : stripUrlQuery(n.value);
    const element = isElement(n);
    if (element) {
      elements.push({
        index: i,
        role: n.role,
        title: n.name,
        value,
        label: n.description,
        enabled: n.states.includes("enabled") || n.states.includes("sensitive"),
        focused: n.states.includes("focused"),
        secure: n.secure,
        bounds: n.bounds,
        actions: n.actions,
        locator: { kind, path: n.path, role: n.role, identifier: n.identifier, name: n.name },
      });
    }
    if (truncated) return;
    const flags: string[] = [];
    if (n.states.includes("focused")) flags.push("focused");
    if (n.states.includes("checked")) flags.push("checked");
    if (n.states.includes("selected")) flags.push("selected");
    if (!(n.states.includes("enabled") || n.states.includes("sensitive")) && element) flags.push("disabled");
    if (n.secure) flags.push("secure");
    let line = "  ".repeat(n.path.length) + (element ? `[${i}] ` : "") + n.role;
    if (n.name) line += " " + quote(n.name, caps.maxValueChars);
    if (value !== null && value !== "" && value !== n.name) line += " value=" + quote(value, caps.maxValueChars);
    if (flags.length) line += ` (${flags.join(", ")})`;
    if (lines.length >= caps.maxLines || chars + line.length + 1 > caps.maxChars) {
      truncated = true;
      return;
    }
    lines.push(line);
    chars += line.length + 1;
  });
  return { elements, treeText: lines.join("\n"), truncated };
}
