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

const caps = {
  permissions: { supported: true, verified: "live" },
  get_tree: { supported: true, verified: "live", note: "AT-SPI Cache.GetItems" },
  "input.pointer": { supported: false, verified: "unverified" },
  "screenshot.scale": { supported: true, verified: "vectors" },
};
const rect = { x: 10, y: 20, width: 800, height: 600 };
const cleanupNone = { keys_released: true, buttons_released: true, pointer_restored: null };

export const VECTORS: Vector[] = [
  {
    name: "hello",
    description: "first frame from a helper",
    message: { type: "hello", protocol: [2, 3], helper: { name: "deckhand-helper-linux", version: "0.1.0", platform: "linux", backend: "atspi+x11" }, capabilities: caps, limits: { max_frame_bytes: 16777216 } },
  },
  { name: "request-permissions", description: "a request with empty args", op: "permissions", message: { type: "request", id: 1, op: "permissions", deadline_ms: 5000, args: {} } },
  {
    name: "response-permissions",
    description: "permission checks: neutral ids, the platform's own beside them (2.0)",
    op: "permissions",
    message: {
      type: "response",
      id: 1,
      ok: true,
      result: {
        checks: [
          { id: "accessibility", native_id: "atspi_bus", status: "granted", detail: "org.a11y.Bus answered", remediation: "" },
          { id: "screen_capture_fast", native_id: "mit_shm", status: "unknown", detail: "not probed", remediation: "install Xvfb with MIT-SHM" },
        ],
      },
    },
  },
  { name: "request-list-windows-null-pid", description: "nil in args", op: "list_windows", message: { type: "request", id: 2, op: "list_windows", deadline_ms: 10000, args: { pid: null } } },
  {
    name: "response-list-apps",
    description: "apps with nullable fields, process identity (2.0) and a start time above 2^32",
    op: "list_apps",
    message: {
      type: "response",
      id: 3,
      ok: true,
      result: {
        apps: [
          {
            pid: 4242,
            name: "gtk3-widget-factory",
            executable: "/usr/bin/gtk3-widget-factory",
            executable_deleted: false,
            process_name: "gtk3-widget-fac",
            bundle_id: null,
            desktop_id: null,
            accessible: true,
            start_time: 5000000000,
            window_count: 1,
          },
        ],
      },
    },
  },
  {
    name: "request-get-tree",
    description: "tree request with bounds",
    op: "get_tree",
    message: { type: "request", id: 4, op: "get_tree", deadline_ms: 20000, args: { pid: 4242, window_id: 2097153, max_depth: 64, max_children: 1000, max_nodes: 2000 } },
  },
  {
    name: "response-get-tree",
    description: "flat pre-order nodes: neutral role, states and actions with the native role and action names (2.0); a secure field is a secure_text_field with state secure and value nil",
    op: "get_tree",
    message: {
      type: "response",
      id: 4,
      ok: true,
      result: {
        nodes: [
          { path: [], role: "window", native_role: "frame", name: "deckhand fixture", description: "", value: null, states: ["enabled", "visible"], bounds: rect, actions: [], identifier: "", secure: false, child_count: 2 },
          {
            path: [0],
            role: "button",
            native_role: "push button",
            name: "OK",
            description: "",
            value: null,
            states: ["focusable", "enabled"],
            bounds: { x: -5, y: 40, width: 80, height: 24 },
            actions: [{ name: "press", native: "click" }],
            identifier: "ok",
            secure: false,
            child_count: 0,
          },
          {
            path: [1],
            role: "secure_text_field",
            native_role: "password text",
            name: "Password",
            description: "",
            value: null,
            states: ["editable", "secure"],
            bounds: null,
            actions: [{ name: "other", native: "activate" }],
            identifier: "",
            secure: true,
            child_count: 0,
          },
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
    message: { type: "request", id: 6, op: "element_action", deadline_ms: 10000, args: { pid: 4242, window_id: 2097153, locator: { path: [0, 3], role: "text_field", native_role: "text", name: "Name", identifier: "" }, action: "type_text", text: "héllo ✓", start: null, end: null, action_name: null } },
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
  // Protocol 1.1 and forward compatibility: both ends ignore fields they do not know.
  {
    name: "hello-extra-fields",
    description: "a newer helper's hello: unknown fields at every level are ignored",
    message: {
      type: "hello",
      protocol: [2, 7],
      helper: { name: "deckhand-helper-future", version: "9.0.0", platform: "linux", backend: "atspi+x11", build: "abc123" },
      capabilities: { ...caps, "input.focus_guard": { supported: true, verified: "live", since: "1.1" }, "future.op": { supported: true, verified: "unverified" } },
      limits: { max_frame_bytes: 16777216, max_nodes: 100000 },
      session_id: "s-1",
    },
  },
  {
    name: "request-extra-fields",
    description: "a newer orchestrator's request: an unknown top-level field and an unknown argument are ignored",
    op: "list_windows",
    message: { type: "request", id: 10, op: "list_windows", deadline_ms: 5000, args: { pid: null, include_hidden: true }, trace_id: "t-1" },
  },
  {
    name: "response-extra-fields",
    description: "a newer helper's response: unknown fields in the frame and the result are ignored",
    op: "list_windows",
    message: { type: "response", id: 10, ok: true, result: { windows: [{ window_id: 2097153, z_index: 0, title: "fixture", bounds: rect, minimized: false, pid: 4242, workspace: 1 }], cursor: "c1" }, elapsed_us: 812 },
  },
  {
    name: "response-unknown-error-code",
    description: "an error code the orchestrator does not know: HELPER_ERROR with the helper's code in details",
    message: { type: "response", id: 11, ok: false, error: { code: "QUOTA_EXCEEDED", message: "a future refusal", details: { limit: 3 } } },
  },
  {
    name: "request-input-focus-guard",
    description: "keyboard input confined to a window (1.1)",
    op: "input",
    message: { type: "request", id: 12, op: "input", deadline_ms: 10000, args: { steps: [{ kind: "type", text: "hello" }], restore_pointer: false, focus: { window_id: 2097153, pid: 4242, activate: true } } },
  },
  {
    name: "response-focus-mismatch",
    description: "focus moved away after 8 characters: partial, keys released",
    message: {
      type: "response",
      id: 12,
      ok: false,
      error: { code: "FOCUS_MISMATCH", message: "focus is on another window", details: { expected_window: 2097153, focus_window: 4194305, focus_pid: 777, steps_completed: 0, chars_sent: 8 } },
      receipt: { delivery: "partial", route: "foreground_input", cleanup: { keys_released: true, buttons_released: true, pointer_restored: null } },
    },
  },
  {
    name: "response-input-chars",
    description: "input result with the 1.1 fields",
    op: "input",
    message: { type: "response", id: 13, ok: true, result: { steps_completed: 1, chars_sent: 5, focus_window: 2097153 }, receipt: { delivery: "submitted", route: "foreground_input", cleanup: cleanupNone } },
  },
  {
    name: "response-permissions-advisory",
    description: "an advisory (non-gating) permission check",
    op: "permissions",
    message: { type: "response", id: 14, ok: true, result: { checks: [{ id: "accessibility_enabled", native_id: "accessibility_enabled", status: "denied", detail: "IsEnabled is false", remediation: "deckhand permissions --enable-accessibility", advisory: true }] } },
  },
  {
    name: "request-input-pointer-guard",
    description: "a drag confined to the target's windows (1.1)",
    op: "input",
    message: {
      type: "request",
      id: 16,
      op: "input",
      deadline_ms: 10000,
      args: { steps: [{ kind: "move", x: 100, y: 100 }, { kind: "button", button: "left", down: true }, { kind: "move", x: 300, y: 120 }, { kind: "button", button: "left", down: false }], restore_pointer: true, pointer_guard: { pid: 4242, windows: [2097153, 2097160] } },
    },
  },
  {
    name: "response-pointer-outside-target",
    description: "the pointer guard refused a point over another window",
    message: {
      type: "response",
      id: 16,
      ok: false,
      error: { code: "POLICY_DENIED", message: "the point (300, 120) is over window 4194305, not the target's", details: { reason: "point-outside-target", x: 300, y: 120, window_id: 4194305, pid: 777, steps_completed: 2 } },
      receipt: { delivery: "partial", route: "foreground_input", cleanup: { keys_released: true, buttons_released: true, pointer_restored: true } },
    },
  },
  { name: "request-focused-element", description: "the focused node of an app (1.1)", op: "focused_element", message: { type: "request", id: 17, op: "focused_element", deadline_ms: 5000, args: { pid: 4242 } } },
  {
    name: "response-focused-element",
    description: "a focused secure field: value nil",
    op: "focused_element",
    message: {
      type: "response",
      id: 17,
      ok: true,
      result: {
        window_id: 2097153,
        node: {
          path: [0, 2],
          role: "secure_text_field",
          native_role: "password text",
          name: "Password",
          description: "",
          value: null,
          states: ["focused", "editable", "secure"],
          bounds: { x: 30, y: 90, width: 200, height: 24 },
          actions: [],
          identifier: "password",
          secure: true,
          child_count: 0,
        },
      },
    },
  },
  { name: "request-set-accessibility", description: "switch the accessibility flag on (1.1)", op: "set_accessibility", message: { type: "request", id: 15, op: "set_accessibility", deadline_ms: 5000, args: { enabled: true } } },
  { name: "response-set-accessibility", description: "previous value may be nil", op: "set_accessibility", message: { type: "response", id: 15, ok: true, result: { enabled: true, previous: false } } },
  { name: "request-settle", description: "wait for an app's accessibility events to quiesce (1.2)", op: "settle", message: { type: "request", id: 18, op: "settle", deadline_ms: 2000, args: { pid: 4242, quiet_ms: 100, max_ms: 500 } } },
  { name: "response-settle", description: "how long the wait took and whether it settled (1.2)", op: "settle", message: { type: "response", id: 18, ok: true, result: { waited_ms: 132, events: 7, settled: true } } },
  {
    name: "response-list-windows-popup",
    description: "an open menu: an override-redirect popup of the same pid (1.2)",
    op: "list_windows",
    message: { type: "response", id: 19, ok: true, result: { windows: [{ window_id: 2097153, z_index: 3, title: "Untitled 1 - LibreOffice Writer", bounds: rect, minimized: false, pid: 4242 }, { window_id: 2097400, z_index: 4, title: "", bounds: { x: 40, y: 60, width: 220, height: 300 }, minimized: false, pid: 4242, popup: true }] } },
  },
  {
    name: "response-list-apps-toolkit",
    description: "an app without a tree, with the toolkit the helper recognised (1.2)",
    op: "list_apps",
    message: { type: "response", id: 22, ok: true, result: { apps: [{ pid: 5151, name: "featherpad", executable: "/usr/bin/featherpad", desktop_id: null, accessible: false, start_time: 812345, window_count: 1, toolkit: "qt5" }] } },
  },
  {
    name: "response-element-action-native",
    description: "click ran the press-like action chosen by name (1.2)",
    op: "element_action",
    message: { type: "response", id: 20, ok: true, result: { performed: true, verified: null, verification: null, native_action: "press" }, receipt: { delivery: "submitted", route: "accessibility", cleanup: cleanupNone } },
  },
  {
    name: "response-error-verification-failed",
    description: "a set_value that was sent but did not read back (1.2)",
    op: "element_action",
    message: { type: "response", id: 21, ok: false, error: { code: "VERIFICATION_FAILED", message: "the value read back differs from the requested one", details: { delivery: "submitted", read_back_len: 0 } }, receipt: { delivery: "submitted", route: "accessibility", cleanup: cleanupNone } },
  },
  // Protocol 2.0.
  {
    name: "request-screenshot-region-scale",
    description: "crop to a screen rectangle, then scale down to at most 200 pixels wide (2.0)",
    op: "screenshot",
    message: {
      type: "request",
      id: 23,
      op: "screenshot",
      deadline_ms: 15000,
      args: { window_id: 2097153, path: "/tmp/state/screenshots/cs_zoom.png", redact_secure: true, redact: [], region: { x: 100, y: 80, width: 400, height: 300 }, max_width: 200 },
    },
  },
  {
    name: "response-screenshot-scaled",
    description: "the PNG's own size, origin and scale: image pixel i shows screen point origin + i / scale (2.0)",
    op: "screenshot",
    message: { type: "response", id: 23, ok: true, result: { path: "/tmp/state/screenshots/cs_zoom.png", width: 200, height: 150, origin: { x: 100, y: 80 }, scale: 0.5, method: "composite+shm+crop+box-scale", redacted: 0, popups: 0 } },
  },
  {
    name: "response-get-tree-unknown-words",
    description: "a newer helper's words: an unknown role reads as other, an unknown state is dropped, an unknown action name reads as other (its native name kept) (2.0)",
    op: "get_tree",
    message: {
      type: "response",
      id: 24,
      ok: true,
      result: {
        nodes: [
          {
            path: [],
            role: "hologram",
            native_role: "hologram view",
            name: "Preview",
            description: "",
            value: null,
            states: ["focused", "shimmering"],
            bounds: rect,
            actions: [{ name: "rotate", native: "rotate" }],
            identifier: "",
            secure: false,
            child_count: 0,
          },
        ],
        truncated: false,
        source: "walk",
      },
    },
  },
  {
    name: "response-list-apps-identity",
    description: "an app whose executable was replaced on disk, inside a Flatpak sandbox (2.0)",
    op: "list_apps",
    message: {
      type: "response",
      id: 25,
      ok: true,
      result: {
        apps: [
          {
            pid: 6161,
            name: "Text Editor",
            executable: "/app/bin/gnome-text-editor",
            executable_deleted: true,
            process_name: "gnome-text-edit",
            bundle_id: "org.gnome.TextEditor",
            desktop_id: "org.gnome.TextEditor.desktop",
            accessible: true,
            start_time: 771234,
            window_count: 1,
            toolkit: "gtk4",
          },
        ],
      },
    },
  },
  {
    name: "request-element-action-secondary",
    description: "a secondary action by its native name, on a locator carrying both roles (2.0)",
    op: "element_action",
    message: {
      type: "request",
      id: 26,
      op: "element_action",
      deadline_ms: 10000,
      args: { pid: 4242, window_id: 2097153, locator: { path: [0, 1, 4], role: "tree_item", native_role: "tree item", name: "src", identifier: "" }, action: "secondary", text: null, start: null, end: null, action_name: "expand or contract" },
    },
  },  // ---- issue 14: screenshot options (protocol 2.2)
  {
    name: "request-screenshot-format",
    description: "a region of the window as WebP at quality 60 (2.2)",
    op: "screenshot",
    message: {
      type: "request",
      id: 27,
      op: "screenshot",
      deadline_ms: 15000,
      args: { window_id: 2097153, path: "/tmp/state/screenshots/shot_x.webp", redact_secure: true, redact: [], region: { x: 110, y: 100, width: 300, height: 200 }, max_width: null, format: "webp", quality: 60 },
    },
  },
  {
    name: "response-screenshot-format",
    description: "the format of the file written (2.2; absent from a 2.1 helper: png)",
    op: "screenshot",
    message: { type: "response", id: 27, ok: true, result: { path: "/tmp/state/screenshots/shot_x.webp", width: 300, height: 200, origin: { x: 110, y: 100 }, scale: 1, method: "composite+shm+crop", redacted: 0, popups: 0, format: "webp" } },
  },
  // ---- end screenshot options
  // ---- issue 15: click (protocol 2.3)
  {
    name: "request-point-click",
    description: "a granted left click at a point: press a press-like node, hold on a possibly sensitive name (2.3)",
    op: "point_click",
    message: {
      type: "request",
      id: 28,
      op: "point_click",
      deadline_ms: 10000,
      args: {
        x: 608,
        y: 404,
        pid: 4242,
        button: "left",
        count: 1,
        windows: [2097153, 2097154],
        press: { roles: ["button", "checkbox"], actions: ["press", "toggle"] },
        hold_words: ["delete", "send", "quit"],
        expect: null,
        restore_pointer: true,
      },
    },
  },
  {
    name: "response-point-click-clicked",
    description: "XTest click on a canvas: nothing was held, the pointer put back (2.3)",
    op: "point_click",
    message: {
      type: "response",
      id: 28,
      ok: true,
      result: {
        outcome: "clicked",
        held: null,
        window_id: 2097153,
        node: { path: [0, 1, 1, 1, 0], role: "other", native_role: "drawing area", name: "Canvas", description: "", value: null, states: ["enabled", "visible"], bounds: { x: 588, y: 384, width: 282, height: 120 }, actions: [], identifier: "canvas", secure: false, child_count: 0 },
        ancestors: [],
        native_action: null,
        verified: null,
        verification: null,
      },
      receipt: { delivery: "submitted", route: "foreground_input", cleanup: { keys_released: true, buttons_released: true, pointer_restored: true } },
    },
  },
  {
    name: "request-point-click-expect",
    description: "the click after a confirmation: only if the chain is still the confirmed one (2.3)",
    op: "point_click",
    message: {
      type: "request",
      id: 29,
      op: "point_click",
      deadline_ms: 10000,
      args: {
        x: 60,
        y: 70,
        pid: 4242,
        button: "left",
        count: 1,
        windows: [2097153],
        press: null,
        hold_words: [],
        expect: [
          { path: [0], native_role: "panel", name: "" },
          { path: [0, 2], native_role: "push button", name: "Delete" },
        ],
        restore_pointer: true,
      },
    },
  },
  {
    name: "response-point-click-held",
    description: "held on a name that may be sensitive: nothing sent, the chain as full nodes (2.3)",
    op: "point_click",
    message: {
      type: "response",
      id: 30,
      ok: true,
      result: {
        outcome: "held",
        held: "name",
        window_id: 2097153,
        node: { path: [0, 2, 0], role: "image", native_role: "icon", name: "", description: "", value: null, states: ["enabled", "visible"], bounds: { x: 52, y: 62, width: 16, height: 16 }, actions: [], identifier: "", secure: false, child_count: 0 },
        ancestors: [
          { path: [0], role: "container", native_role: "panel", name: "", description: "", value: null, states: ["enabled", "visible"], bounds: rect, actions: [], identifier: "", secure: false, child_count: 3 },
          { path: [0, 2], role: "button", native_role: "push button", name: "Delete", description: "", value: null, states: ["enabled", "visible", "focusable"], bounds: { x: 50, y: 60, width: 80, height: 24 }, actions: [{ name: "press", native: "click" }], identifier: "delete-button", secure: false, child_count: 1 },
        ],
        native_action: null,
        verified: null,
        verification: null,
      },
      receipt: { delivery: "not_dispatched", route: "foreground_input", cleanup: cleanupNone },
    },
  },
  // ---- end click
];
