// The op checks: every read op the helper claims, sent with small, read-only
// arguments against whatever apps are running, its result validated against
// OPS[op].result and the contract's rules (limits honoured, secure values
// never read, the PNG really written). Mutating ops get harmless probes only.
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { join } from "node:path";
import { CAPABILITY_KEYS, type OpResult, type WireNode, type WireWindow } from "../../wire/messages.ts";
import { call, errorShape, errorText, judge, notAResponse, readFailure, supports, type CheckContext } from "./context.ts";
import { fail, pass, skip, type Outcome, type Probe } from "./probe.ts";

/** get_tree limits of the probe: a small read, whatever the window holds. */
const TREE_LIMITS = { max_depth: 4, max_children: 16, max_nodes: 40 };
/** The locator of an element that exists nowhere: the element_action probe acts on nothing. */
export const ABSENT_LOCATOR = {
  path: [65535],
  role: "button",
  native_role: "",
  name: "deckhand helper check: no such element",
  identifier: "deckhand-helper-check-absent",
};

const notClaimed = (key: string): Outcome => skip(`${key} not claimed (see refuse.${key})`);

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Secure fields must never carry a value; a node that does is named. */
function leakedSecure(nodes: WireNode[]): WireNode | undefined {
  return nodes.find((n) => (n.secure || n.role === "secure_text_field") && n.value !== null);
}

function comparePaths(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/** Visible windows of accessible apps, smallest first: a small window has a small tree. */
function candidateWindows(ctx: CheckContext): WireWindow[] {
  const { windows, apps } = ctx.targets;
  if (!windows) return [];
  const accessible = (pid: number) => (apps ? apps.some((a) => a.pid === pid && a.accessible) : true);
  return windows
    .filter((w) => !w.minimized && !w.popup && w.pid !== null && w.bounds.width >= 16 && w.bounds.height >= 16 && accessible(w.pid))
    .sort((a, b) => a.bounds.width * a.bounds.height - b.bounds.width * b.bounds.height);
}

const permissions: Probe = {
  name: "op.permissions",
  async run(ctx) {
    if (!supports(ctx, "permissions")) return notClaimed("permissions");
    const j = judge("permissions", await call(ctx, "permissions", {}));
    if (!j.ok) return readFailure(j);
    const checks = (j.result as OpResult<"permissions">).checks;
    const count = (s: string) => checks.filter((c) => c.status === s).length;
    return pass(`${plural(checks.length, "check")}: ${count("granted")} granted, ${count("denied")} denied, ${count("unknown")} unknown (${j.ms} ms)`);
  },
};

const listApps: Probe = {
  name: "op.list_apps",
  async run(ctx) {
    if (!supports(ctx, "list_apps")) return notClaimed("list_apps");
    const j = judge("list_apps", await call(ctx, "list_apps", {}));
    if (!j.ok) return readFailure(j);
    const apps = (j.result as OpResult<"list_apps">).apps;
    ctx.targets.apps = apps;
    return pass(`${plural(apps.length, "app")}, ${apps.filter((a) => a.accessible).length} accessible (${j.ms} ms)`);
  },
};

const listWindows: Probe = {
  name: "op.list_windows",
  async run(ctx) {
    if (!supports(ctx, "list_windows")) return notClaimed("list_windows");
    const j = judge("list_windows", await call(ctx, "list_windows", { pid: null }));
    if (!j.ok) return readFailure(j);
    const windows = (j.result as OpResult<"list_windows">).windows;
    ctx.targets.windows = windows;
    const target = candidateWindows(ctx)[0] ?? null;
    ctx.targets.window = target;
    ctx.targets.pid = target?.pid ?? ctx.targets.apps?.find((a) => a.accessible)?.pid ?? null;
    const pid = target?.pid ?? windows.find((w) => w.pid !== null)?.pid ?? null;
    if (pid === null || pid === undefined) return pass(`${plural(windows.length, "window")}; none has a known pid, so the pid filter was not tried (${j.ms} ms)`);
    const k = judge("list_windows", await call(ctx, "list_windows", { pid }));
    if (!k.ok) return readFailure(k, `with {pid: ${pid}}: `);
    const mine = (k.result as OpResult<"list_windows">).windows;
    const stranger = mine.find((w) => w.pid !== pid);
    if (stranger) return fail(`list_windows {pid: ${pid}} returned window ${stranger.window_id} of pid ${stranger.pid}`);
    if (mine.length === 0) return fail(`list_windows {pid: ${pid}} returned no window, though pid ${pid} owns one in the full list`);
    return pass(`${plural(windows.length, "window")}; {pid: ${pid}} gives its ${plural(mine.length, "window")} only (${j.ms} ms)`);
  },
};

const getTree: Probe = {
  name: "op.get_tree",
  async run(ctx) {
    if (!supports(ctx, "get_tree")) return notClaimed("get_tree");
    const candidates = candidateWindows(ctx).slice(0, 3);
    if (!candidates.length) return skip(ctx.targets.windows ? "no visible window of an accessible app is open" : "no window list (list_windows failed or is not claimed)");
    const errors: string[] = [];
    for (const w of candidates) {
      const j = judge("get_tree", await call(ctx, "get_tree", { pid: w.pid, window_id: w.window_id, ...TREE_LIMITS }, { maxMs: 10_000 }));
      if (!j.ok) {
        // An error answer on a real desktop may be the app's doing: try the next window.
        if (j.response && !j.response.ok && !errorShape("get_tree", j.response)) {
          errors.push(`window ${w.window_id}: ${errorText(j.response)}`);
          continue;
        }
        return fail(`window ${w.window_id} of pid ${w.pid}: ${j.reason}`);
      }
      const r = j.result as OpResult<"get_tree">;
      ctx.targets.window = w;
      ctx.targets.pid = w.pid;
      if (r.nodes.length > TREE_LIMITS.max_nodes) return fail(`${r.nodes.length} nodes for max_nodes ${TREE_LIMITS.max_nodes}`);
      const deep = r.nodes.find((n) => n.path.length > TREE_LIMITS.max_depth);
      if (deep) return fail(`node at path [${deep.path}] is deeper than max_depth ${TREE_LIMITS.max_depth}`);
      for (let i = 1; i < r.nodes.length; i++) {
        if (comparePaths(r.nodes[i - 1]!.path, r.nodes[i]!.path) >= 0) return fail(`nodes are not flat pre-order: path [${r.nodes[i]!.path}] comes after [${r.nodes[i - 1]!.path}]`);
      }
      const leak = leakedSecure(r.nodes);
      if (leak) return fail(`secure node at path [${leak.path}] carries a value (a secure field's value is always null)`);
      const where = `window ${w.window_id} "${w.title.slice(0, 40)}"`;
      return pass(`${where}: ${plural(r.nodes.length, "node")}, truncated ${r.truncated}, source ${r.source} (${j.ms} ms)`);
    }
    const all = `get_tree answered an error for every window tried: ${errors.join("; ")}`;
    return errors.every((e) => e.includes(": PERMISSION_DENIED")) ? skip(`the OS denies it here: ${all}`) : fail(all);
  },
};

const hitTest: Probe = {
  name: "op.hit_test",
  async run(ctx) {
    if (!supports(ctx, "hit_test")) return notClaimed("hit_test");
    const w = ctx.targets.window ?? ctx.targets.windows?.find((x) => !x.minimized && x.bounds.width > 0) ?? null;
    if (!w) return skip("no visible window to aim at");
    const x = w.bounds.x + Math.floor(w.bounds.width / 2);
    const y = w.bounds.y + Math.floor(w.bounds.height / 2);
    const j = judge("hit_test", await call(ctx, "hit_test", { x, y }));
    if (!j.ok) return readFailure(j);
    const r = j.result as OpResult<"hit_test">;
    if (r.node && r.node.secure && r.node.value !== null) return fail(`the secure node at (${x}, ${y}) carries a value`);
    const what = r.window_id === null ? "no window" : `window ${r.window_id}${r.window_id === w.window_id ? "" : " (another window covers the centre)"}${r.node ? `, a ${r.node.role}` : ", no node"}`;
    return pass(`(${x}, ${y}), the centre of window ${w.window_id}: ${what} (${j.ms} ms)`);
  },
};

/** A PNG's size from its IHDR chunk, or null when the file is not a PNG. */
export function pngSize(path: string): { width: number; height: number } | null {
  const buf = Buffer.alloc(24);
  const fd = openSync(path, "r");
  try {
    if (readSync(fd, buf, 0, 24, 0) < 24) return null;
  } finally {
    closeSync(fd);
  }
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!buf.subarray(0, 8).equals(signature) || buf.toString("latin1", 12, 16) !== "IHDR") return null;
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

/** Is the written file what the result says: there, a PNG of that size, private? null when so. */
function checkPng(ctx: CheckContext, path: string, r: OpResult<"screenshot">): string | null {
  let mode: number;
  try {
    mode = statSync(r.path).mode & 0o777;
  } catch {
    return `the result names ${r.path}, which does not exist`;
  }
  if (r.path !== path) return `wrote ${r.path}, not the path asked for (${path})`;
  const size = pngSize(r.path);
  if (!size) return `${r.path} is not a PNG`;
  // The scripted fake writes a 2x2 stand-in: only a real helper's size is held to the result.
  if (ctx.hello.helper.platform !== "fake" && (size.width !== r.width || size.height !== r.height)) {
    return `the PNG is ${size.width}x${size.height}, the result says ${r.width}x${r.height}`;
  }
  if (process.platform !== "win32" && (mode & 0o077) !== 0) return `the PNG has mode 0${mode.toString(8)}; the contract says 0600`;
  return null;
}

const screenshot: Probe = {
  name: "op.screenshot",
  async run(ctx) {
    if (!supports(ctx, "screenshot")) return notClaimed("screenshot");
    const w = ctx.targets.window ?? ctx.targets.windows?.find((x) => !x.minimized && !x.popup && x.bounds.width > 0) ?? null;
    if (!w) return skip("no visible window to capture");
    const path = join(ctx.tmp, `window-${w.window_id}.png`);
    const j = judge("screenshot", await call(ctx, "screenshot", { window_id: w.window_id, path, redact_secure: true, redact: [] }));
    if (!j.ok) return readFailure(j, `window ${w.window_id}: `);
    const r = j.result as OpResult<"screenshot">;
    const bad = checkPng(ctx, path, r);
    if (bad) return fail(`window ${w.window_id}: ${bad}`);
    return pass(`window ${w.window_id}: ${r.width}x${r.height} PNG at scale ${r.scale}, method ${r.method}, ${r.redacted} redacted (${j.ms} ms)`);
  },
};

const screenshotScale: Probe = {
  name: "op.screenshot.scale",
  async run(ctx) {
    if (!supports(ctx, "screenshot") || !supports(ctx, "screenshot.scale")) return skip("screenshot.scale not claimed");
    const w = ctx.targets.window ?? ctx.targets.windows?.find((x) => !x.minimized && !x.popup && x.bounds.width > 0) ?? null;
    if (!w) return skip("no visible window to capture");
    const maxWidth = 64;
    const path = join(ctx.tmp, `window-${w.window_id}-scaled.png`);
    const j = judge("screenshot", await call(ctx, "screenshot", { window_id: w.window_id, path, redact_secure: true, redact: [], region: null, max_width: maxWidth }));
    if (!j.ok) return readFailure(j, `window ${w.window_id}, max_width ${maxWidth}: `);
    const r = j.result as OpResult<"screenshot">;
    if (r.width > maxWidth) return fail(`max_width ${maxWidth} gave an image ${r.width} px wide`);
    if (r.scale > 1) return fail(`scale ${r.scale}: max_width only ever scales down`);
    const bad = checkPng(ctx, path, r);
    if (bad) return fail(bad);
    return pass(`max_width ${maxWidth}: ${r.width}x${r.height} at scale ${r.scale.toFixed(3)} (${j.ms} ms)`);
  },
};

const focusedElement: Probe = {
  name: "op.focused_element",
  async run(ctx) {
    if (!supports(ctx, "focused_element")) return notClaimed("focused_element");
    const pid = ctx.targets.pid;
    if (pid === null) return skip("no accessible app is running");
    const j = judge("focused_element", await call(ctx, "focused_element", { pid }));
    if (!j.ok) return readFailure(j, `pid ${pid}: `);
    const r = j.result as OpResult<"focused_element">;
    if (r.node && leakedSecure([r.node])) return fail(`pid ${pid}: the focused secure field carries a value`);
    return pass(`pid ${pid}: ${r.node ? `a ${r.node.role} in window ${r.window_id}` : "nothing focused"} (${j.ms} ms)`);
  },
};

const settle: Probe = {
  name: "op.settle",
  async run(ctx) {
    if (!supports(ctx, "settle")) return notClaimed("settle");
    const pid = ctx.targets.pid;
    if (pid === null) return skip("no accessible app is running");
    const j = judge("settle", await call(ctx, "settle", { pid, quiet_ms: 50, max_ms: 300 }, { maxMs: 3000 }));
    if (!j.ok) return readFailure(j, `pid ${pid}: `);
    const r = j.result as OpResult<"settle">;
    return pass(`pid ${pid}, quiet 50 ms, at most 300 ms: waited ${r.waited_ms} ms, ${plural(r.events, "event")}, settled ${r.settled} (${j.ms} ms)`);
  },
};

const watchUserInput: Probe = {
  name: "op.watch_user_input",
  async run(ctx) {
    if (!supports(ctx, "watch_user_input")) return notClaimed("watch_user_input");
    const j = judge("watch_user_input", await call(ctx, "watch_user_input", { enabled: false }));
    if (!j.ok) return readFailure(j, "{enabled: false}: ");
    if ((j.result as OpResult<"watch_user_input">).watching) return fail("{enabled: false} answered watching: true");
    return pass(`{enabled: false} only (never switched on): watching false (${j.ms} ms)`);
  },
};

const setAccessibility: Probe = {
  name: "op.set_accessibility",
  async run(ctx) {
    if (!supports(ctx, "set_accessibility")) return notClaimed("set_accessibility");
    return skip("claimed; not sent: it changes the session's accessibility flag");
  },
};

const input: Probe = {
  name: "op.input",
  async run(ctx) {
    if (!supports(ctx, "input.pointer") && !supports(ctx, "input.keyboard")) return skip("neither input.pointer nor input.keyboard is claimed");
    // A single 1 ms wait step: no event reaches the desktop.
    const j = judge("input", await call(ctx, "input", { steps: [{ kind: "wait", ms: 1 }], restore_pointer: false }));
    if (!j.ok) return readFailure(j, "safe probe (one 1 ms wait step): ");
    const r = j.result as OpResult<"input">;
    if (r.steps_completed !== 1) return fail(`one wait step answered steps_completed ${r.steps_completed}`);
    return pass(`safe probe, one 1 ms wait step, nothing sent: steps_completed 1, receipt ${j.response.receipt!.delivery} (${j.ms} ms)`);
  },
};

/** The least disruptive action the helper claims, with the args it needs. */
function harmlessAction(ctx: CheckContext): { action: string; text: string | null; start: number | null; end: number | null; action_name: string | null } | null {
  for (const action of ["focus", "scroll_into_view", "select_text", "secondary", "set_value", "type_text", "click"]) {
    if (!supports(ctx, `action.${action}`)) continue;
    return {
      action,
      text: action === "set_value" || action === "type_text" ? "" : null,
      start: action === "select_text" ? 0 : null,
      end: action === "select_text" ? 0 : null,
      action_name: action === "secondary" ? "deckhand-helper-check-absent" : null,
    };
  }
  return null;
}

export function elementActionArgs(w: WireWindow, a: NonNullable<ReturnType<typeof harmlessAction>>): Record<string, unknown> {
  return { pid: w.pid, window_id: w.window_id, locator: ABSENT_LOCATOR, ...a };
}

const elementAction: Probe = {
  name: "op.element_action",
  async run(ctx) {
    const a = harmlessAction(ctx);
    if (!a) return skip("no action.* capability is claimed");
    const w = ctx.targets.window;
    if (!w) return skip("no window of an accessible app to aim at");
    // The locator resolves to nothing: the contract says ELEMENT_UNRESOLVABLE, not_dispatched.
    const answer = await call(ctx, "element_action", elementActionArgs(w, a));
    const bad = notAResponse("element_action", answer);
    if (bad) return fail(bad);
    const r = (answer as Extract<typeof answer, { kind: "response" }>).response;
    if (r.ok) return fail(`${a.action} on a locator that resolves to nothing answered ok (performed ${String((r.result as { performed?: unknown })?.performed)})`);
    const shape = errorShape("element_action", r);
    if (shape) return fail(shape);
    if (r.error!.code !== "ELEMENT_UNRESOLVABLE") return fail(`${a.action} on an absent element answered ${errorText(r)}; the contract says ELEMENT_UNRESOLVABLE`);
    if (r.receipt!.delivery !== "not_dispatched") return fail(`ELEMENT_UNRESOLVABLE with delivery ${r.receipt!.delivery}; nothing may be dispatched for an element that is not there`);
    return pass(`safe probe, ${a.action} on an absent element of window ${w.window_id}: ELEMENT_UNRESOLVABLE, not_dispatched (${answer.ms} ms)`);
  },
};

const mutatingDeclared: Probe = {
  name: "declare.mutating",
  offline: true,
  async run(ctx) {
    const keys = CAPABILITY_KEYS.filter((k) => k.startsWith("action.") || k.startsWith("input."));
    const claimed = keys.filter((k) => supports(ctx, k));
    if (!claimed.length) return skip("no action.* or input.* capability is claimed");
    const caps = ctx.hello.capabilities;
    const group = (prefix: string) => {
      const names = claimed.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length) + (caps[k]!.verified === "live" ? "" : ` (${caps[k]!.verified})`));
      return names.length ? [`${prefix}{${names.join(", ")}}`] : [];
    };
    const note = supports(ctx, "input.keyboard") && !supports(ctx, "input.focus_guard") ? "; input.keyboard without input.focus_guard: deckhand sends it no keys" : "";
    return pass(`well-formed, run on real apps only as the harmless probes below: ${[...group("action."), ...group("input.")].join(", ")}${note}`);
  },
};

/** The op checks, in the order they run (later ones use the targets earlier ones found). */
export const READ_PROBES: Probe[] = [permissions, listApps, listWindows, getTree, hitTest, screenshot, screenshotScale, focusedElement, settle, watchUserInput, setAccessibility];
export const MUTATION_PROBES: Probe[] = [mutatingDeclared, input, elementAction];
