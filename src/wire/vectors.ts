// Golden wire messages: every helper, in any language, must decode these
// bytes to these meanings and encode these meanings to these bytes (modulo
// map key order). scripts/gen-protocol.ts writes them to helpers/protocol/vectors.
import type { OpName } from "./messages.ts";

export interface Vector {
  name: string;
  description: string;
  op?: OpName;
  message: Record<string, unknown>;
}

const caps = { permissions: { supported: true, verified: "live" }, get_tree: { supported: true, verified: "live", note: "AT-SPI Cache.GetItems" }, "input.pointer": { supported: false, verified: "unverified" } };
const rect = { x: 10, y: 20, width: 800, height: 600 };
const cleanupNone = { keys_released: true, buttons_released: true, pointer_restored: null };

export const VECTORS: Vector[] = [
  {
    name: "hello",
    description: "first frame from a helper",
    message: { type: "hello", protocol: [1, 0], helper: { name: "deckhand-helper-linux", version: "0.1.0", platform: "linux", backend: "atspi+x11" }, capabilities: caps, limits: { max_frame_bytes: 16777216 } },
  },
  { name: "request-permissions", description: "a request with empty args", op: "permissions", message: { type: "request", id: 1, op: "permissions", deadline_ms: 5000, args: {} } },
  {
    name: "response-permissions",
    description: "permission checks",
    op: "permissions",
    message: { type: "response", id: 1, ok: true, result: { checks: [{ id: "atspi_bus", status: "granted", detail: "org.a11y.Bus answered", remediation: "" }, { id: "mit_shm", status: "unknown", detail: "not probed", remediation: "install Xvfb with MIT-SHM" }] } },
  },
  { name: "request-list-windows-null-pid", description: "nil in args", op: "list_windows", message: { type: "request", id: 2, op: "list_windows", deadline_ms: 10000, args: { pid: null } } },
  {
    name: "response-list-apps",
    description: "apps with nullable fields and a start time above 2^32",
    op: "list_apps",
    message: { type: "response", id: 3, ok: true, result: { apps: [{ pid: 4242, name: "gtk3-widget-factory", executable: "/usr/bin/gtk3-widget-factory", desktop_id: null, accessible: true, start_time: 5000000000, window_count: 1 }] } },
  },
  {
    name: "request-get-tree",
    description: "tree request with bounds",
    op: "get_tree",
    message: { type: "request", id: 4, op: "get_tree", deadline_ms: 20000, args: { pid: 4242, window_id: 2097153, max_depth: 64, max_children: 1000, max_nodes: 2000 } },
  },
  {
    name: "response-get-tree",
    description: "flat pre-order nodes; a secure field has value nil",
    op: "get_tree",
    message: {
      type: "response",
      id: 4,
      ok: true,
      result: {
        nodes: [
          { path: [], role: "frame", name: "deckhand fixture", description: "", value: null, states: ["active", "showing"], bounds: rect, actions: [], identifier: "", secure: false, child_count: 2 },
          { path: [0], role: "push button", name: "OK", description: "", value: null, states: ["enabled", "focusable"], bounds: { x: -5, y: 40, width: 80, height: 24 }, actions: ["click"], identifier: "ok", secure: false, child_count: 0 },
          { path: [1], role: "password text", name: "Password", description: "", value: null, states: ["editable"], bounds: null, actions: [], identifier: "", secure: true, child_count: 0 },
        ],
        truncated: false,
        source: "cache",
      },
    },
  },
  {
    name: "request-screenshot",
    description: "screenshot with redaction",
    op: "screenshot",
    message: { type: "request", id: 5, op: "screenshot", deadline_ms: 15000, args: { window_id: 2097153, path: "/tmp/state/screenshots/cs_x.png", redact_secure: true, redact: [rect] } },
  },
  {
    name: "response-screenshot",
    description: "a float scale",
    op: "screenshot",
    message: { type: "response", id: 5, ok: true, result: { path: "/tmp/state/screenshots/cs_x.png", width: 800, height: 600, origin: { x: 10, y: 20 }, scale: 1.5, method: "composite+shm", redacted: 1 } },
  },
  {
    name: "request-element-action",
    description: "a mutation with a locator and unicode text",
    op: "element_action",
    message: { type: "request", id: 6, op: "element_action", deadline_ms: 10000, args: { pid: 4242, window_id: 2097153, locator: { path: [0, 3], role: "text", name: "Name", identifier: "" }, action: "type_text", text: "héllo ✓", start: null, end: null, action_name: null } },
  },
  {
    name: "response-element-action",
    description: "a mutation's response carries a receipt",
    op: "element_action",
    message: { type: "response", id: 6, ok: true, result: { performed: true, verified: null, verification: null }, receipt: { delivery: "submitted", route: "accessibility", cleanup: cleanupNone } },
  },
  {
    name: "response-error-with-receipt",
    description: "a refused mutation: error and receipt",
    message: { type: "response", id: 7, ok: false, error: { code: "ELEMENT_UNRESOLVABLE", message: "role differs", details: { expected: "push button", found: "label" } }, receipt: { delivery: "not_dispatched", route: "accessibility", cleanup: cleanupNone } },
  },
  {
    name: "request-input",
    description: "foreground input steps of every kind",
    op: "input",
    message: {
      type: "request",
      id: 8,
      op: "input",
      deadline_ms: 10000,
      args: {
        steps: [
          { kind: "move", x: 100, y: -1 },
          { kind: "click", x: 100, y: 200, button: "left", count: 2, modifiers: ["ctrl"] },
          { kind: "button", button: "right", down: true },
          { kind: "key", key: "shift", down: false },
          { kind: "tap", keys: ["ctrl", "s"], repeat: 1 },
          { kind: "type", text: "hello world" },
          { kind: "scroll", x: null, y: null, dx: 0, dy: 3 },
          { kind: "wait", ms: 10 },
        ],
        restore_pointer: true,
      },
    },
  },
  {
    name: "response-input-partial",
    description: "partial delivery with cleanup",
    op: "input",
    message: { type: "response", id: 8, ok: true, result: { steps_completed: 3 }, receipt: { delivery: "partial", route: "foreground_input", cleanup: { keys_released: true, buttons_released: true, pointer_restored: true } } },
  },
  { name: "event-user-input", description: "kill-switch event", message: { type: "event", event: "user_input", data: { kind: "key" } } },
  { name: "cancel", description: "best-effort cancel", message: { type: "cancel", id: 9 } },
];
