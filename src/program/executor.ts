// The one executor: a validated program runs step by step against one target,
// with the snapshot checks and cancellation before each step, per-step
// receipts, and one final observation.
import { DeckhandError, type ErrorDetails } from "../protocol/errors.ts";
import type { Program, Step } from "../protocol/program.ts";
import type { Element, Snapshot } from "../session/snapshot.ts";
import type { Delivery, Hello, InputStep, Receipt, Route, WireLocator, WireWindow } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";
import { auditAppId } from "../engine/safety.ts";
import { appStateResult, observe } from "../engine/observe.ts";
import { resolveApp, resolveWindow, type ResolvedApp } from "../engine/resolve.ts";
import { checkCurrent, lookupElement, resolveSnapshot } from "./snapshot-check.ts";
import { stepUsesElement } from "./compile.ts";

export interface StepReceipt {
  index: number;
  action: Step["action"];
  status: "completed" | "failed" | "unattempted";
  delivery: Delivery;
  route: Route | null;
  elementIndex: number | null;
  verification: { verified: boolean | null; predicate: string | null };
  cleanup: Receipt["cleanup"] | null;
  error?: { code: string; message: string; details: ErrorDetails };
}

export interface ProgramReceipt {
  app: { name: string; pid: number };
  snapshotId: string | null;
  windowId: number | null;
  steps: StepReceipt[];
  firstFailure: number | null;
  observation: ReturnType<typeof appStateResult> | null;
  observationError?: { code: string; message: string };
}

export interface CancelToken {
  cancelled: boolean;
  reason?: string;
}

const NO_CLEANUP: Receipt["cleanup"] = { keys_released: true, buttons_released: true, pointer_restored: null };

function toLocator(el: Element): WireLocator {
  return { path: el.locator.path, role: el.locator.role, name: el.locator.name, identifier: el.locator.identifier };
}

/** What a step will ask of the helper. Built before dispatch so refusals send nothing. */
type Plan =
  | {
      kind: "element";
      action: "click" | "set_value" | "type_text" | "select_text" | "focus" | "scroll_into_view" | "secondary";
      element: Element;
      text?: string;
      start?: number;
      end?: number;
      actionName?: string;
      /** Input that follows, e.g. a key pressed once the element has focus. */
      then?: InputStep[];
      /** A point click's element lives in the window the hit test found. */
      hitWindow?: number;
    }
  | { kind: "input"; steps: InputStep[]; pointer: boolean; keyboard: boolean; keepPointer?: boolean }
  | { kind: "wait"; ms: number };

const DRAG_STEP_MS = 15;
const SCROLL: Record<string, [number, number]> = { up: [0, -1], down: [0, 1], left: [-1, 0], right: [1, 0] };

async function planStep(engine: Engine, step: Step, element: Element | null, app: ResolvedApp): Promise<Plan> {
  switch (step.action) {
    case "click":
      if (element) return { kind: "element", action: "click", element };
      return await planPointClick(engine, step, app);
    case "set-value":
      return { kind: "element", action: "set_value", element: element!, text: step.value };
    case "type-text":
      if (element) return { kind: "element", action: "type_text", element, text: step.text };
      return { kind: "input", steps: [{ kind: "type", text: step.text }], pointer: false, keyboard: true };
    case "press-key": {
      const tap: InputStep = { kind: "tap", keys: [step.key], repeat: step.repeat ?? 1 };
      if (element) return { kind: "element", action: "focus", element, then: [tap] };
      return { kind: "input", steps: [tap], pointer: false, keyboard: true };
    }
    case "hotkey":
      return { kind: "input", steps: [{ kind: "tap", keys: step.keys, repeat: 1 }], pointer: false, keyboard: true };
    case "scroll": {
      if (element && step.direction === undefined) return { kind: "element", action: "scroll_into_view", element };
      if (element) throw new DeckhandError("INVALID_ARGUMENTS", "scroll with --element-index scrolls it into view; drop --direction, or scroll by --x/--y");
      const [sx, sy] = SCROLL[step.direction ?? "down"]!;
      const n = step.amount ?? 3;
      return {
        kind: "input",
        steps: [{ kind: "scroll", x: step.x ?? null, y: step.y ?? null, dx: sx * n, dy: sy * n }],
        pointer: true,
        keyboard: false,
      };
    }
    case "drag": {
      const button = step.button ?? "left";
      const [first, ...rest] = step.path;
      // Toolkits need time between drag events: GTK compresses motion that
      // arrives in one burst and reports the release where the pointer was
      // restored. A short pause per point, as a person's drag has.
      const pause: InputStep = { kind: "wait", ms: DRAG_STEP_MS };
      const steps: InputStep[] = [
        { kind: "move", x: first!.x, y: first!.y },
        pause,
        { kind: "button", button, down: true },
        ...rest.flatMap((p) => [pause, { kind: "move" as const, x: p.x, y: p.y }]),
        pause,
        { kind: "button", button, down: false },
        pause,
      ];
      return { kind: "input", steps, pointer: true, keyboard: false };
    }
    case "select-text":
      return { kind: "element", action: "select_text", element: element!, start: step.start, end: step.end };
    case "focus":
      return { kind: "element", action: "focus", element: element! };
    case "perform-secondary-action":
      if (!element!.actions.includes(step.name)) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `element ${element!.index} does not advertise action ${JSON.stringify(step.name)}`, {
          details: { elementIndex: element!.index, available: element!.actions.join(",") },
        });
      }
      return { kind: "element", action: "secondary", element: element!, actionName: step.name };
    case "wait":
      return { kind: "wait", ms: step.ms };
    case "move":
      return { kind: "input", steps: [{ kind: "move", x: step.x, y: step.y }], pointer: true, keyboard: false, keepPointer: true };
    case "hold-key":
      return {
        kind: "input",
        steps: [
          { kind: "key", key: step.key, down: true },
          { kind: "wait", ms: step.ms },
          { kind: "key", key: step.key, down: false },
        ],
        pointer: false,
        keyboard: true,
      };
  }
}

/**
 * A left single click at a point: if the point hit-tests to an actionable
 * element of the target app, press it through accessibility (background);
 * otherwise it is foreground input. A point over another app is refused.
 */
async function planPointClick(engine: Engine, step: Extract<Step, { action: "click" }>, app: ResolvedApp): Promise<Plan> {
  const { supervisor, hello } = await engine.helper();
  const button = step.button ?? "left";
  const count = step.count ?? 1;
  const modifiers = step.modifiers ?? [];
  const input: Plan = {
    kind: "input",
    steps: [{ kind: "click", x: step.x!, y: step.y!, button, count, modifiers }],
    pointer: true,
    keyboard: modifiers.length > 0,
  };
  if (!hello.capabilities.hit_test?.supported) return input;
  const { result } = await supervisor.request("hit_test", { x: step.x!, y: step.y! });
  if (result.pid !== app.pid) {
    // Over another app, or over no window at all (the root): never ours to click.
    throw new DeckhandError("POLICY_DENIED", result.pid === null ? "the point is not over any window of the target app" : "the point is over another application's window", {
      details: { reason: "point-outside-target", ...(result.pid !== null ? { pid: result.pid } : {}) },
    });
  }
  const n = result.node;
  if (n && button === "left" && count === 1 && modifiers.length === 0 && pressLike(n.role, n.actions) && result.window_id !== null) {
    const element: Element = {
      index: -1,
      role: n.role,
      title: n.name,
      value: null,
      label: n.description,
      enabled: true,
      focused: false,
      secure: n.secure,
      bounds: n.bounds,
      actions: n.actions,
      locator: { kind: "atspi-path", path: n.path, role: n.role, identifier: n.identifier, name: n.name },
    };
    return { kind: "element", action: "click", element, hitWindow: result.window_id };
  }
  return input;
}

/**
 * Controls whose default action is what a left click does. A click into a
 * text field or a canvas also moves focus and the caret, which no default
 * action does: those stay foreground input.
 */
const PRESS_ROLES = /^(push button|button|toggle button|check box|radio button|menu item|check menu item|radio menu item|menu|link|page tab|combo box|spin button)$/;
const PRESS_ACTIONS = new Set(["click", "press", "activate", "toggle", "jump", "open"]);
function pressLike(role: string, actions: string[]): boolean {
  return PRESS_ROLES.test(role) && actions.length > 0 && PRESS_ACTIONS.has(actions[0]!.toLowerCase());
}

function capabilityFor(plan: Plan): string[] {
  if (plan.kind === "element") {
    const caps = [`action.${plan.action}`];
    if (plan.then) caps.push("input.keyboard");
    return caps;
  }
  if (plan.kind === "input") return [...(plan.pointer ? ["input.pointer"] : []), ...(plan.keyboard ? ["input.keyboard"] : [])];
  return [];
}

function failReceipt(index: number, step: Step, err: unknown, elementIndex: number | null): StepReceipt {
  const e = err instanceof DeckhandError ? err : new DeckhandError("INTERNAL", "unexpected failure");
  const receipt = (err as { receipt?: Receipt }).receipt;
  const delivery = (receipt?.delivery ?? (e.details.delivery as Delivery | undefined) ?? "not_dispatched") as Delivery;
  return {
    index,
    action: step.action,
    status: "failed",
    delivery,
    route: receipt?.route ?? null,
    elementIndex,
    verification: { verified: null, predicate: null },
    cleanup: receipt?.cleanup ?? null,
    error: { code: e.code, message: e.message, details: e.details },
  };
}

/**
 * Static checks of the whole program before anything is resolved or sent:
 * contradictory steps, capabilities the helper lacks, and foreground input
 * that the operator has not granted. A program either starts with the
 * authority it needs for every step or does not start.
 */
export function validateProgram(engine: Engine, hello: Hello, program: Program): void {
  program.steps.forEach((step, i) => {
    checkStepShape(step, i);
    for (const any of staticCapabilities(step)) {
      if (!any.some((c) => hello.capabilities[c]?.supported)) {
        throw new DeckhandError("ACTION_UNSUPPORTED", `step ${i} (${step.action}) needs ${any.join(" or ")}, which helper ${hello.helper.name} ${hello.helper.version} does not support`, {
          details: { capability: any.join("|"), step: i },
        });
      }
    }
    if (definitelyForeground(step) && !engine.safety.foregroundGranted()) {
      throw new DeckhandError("FOREGROUND_REQUIRED", `step ${i} (${step.action}) needs the real pointer or keyboard (foreground input), which the operator has not granted`, {
        details: { action: step.action, step: i },
      });
    }
  });
}

function checkStepShape(step: Step, i: number): void {
  const bad = (m: string) => new DeckhandError("INVALID_ARGUMENTS", `step ${i} (${step.action}): ${m}`, { details: { step: i } });
  if (step.action === "click") {
    const point = step.x !== undefined || step.y !== undefined;
    if (point && (step.x === undefined || step.y === undefined)) throw bad("a point needs both x and y");
    if (point === (step.elementIndex !== undefined)) throw bad("give either elementIndex or x and y");
    if (step.elementIndex !== undefined && (step.button || step.count || step.modifiers)) throw bad("button, count and modifiers apply to point clicks only");
  }
  if (step.action === "scroll") {
    if ((step.x === undefined) !== (step.y === undefined)) throw bad("give both x and y or neither");
    if (step.elementIndex === undefined && step.direction === undefined) throw bad("give a direction, or an elementIndex to scroll into view");
    if (step.elementIndex !== undefined && (step.direction !== undefined || step.x !== undefined)) throw bad("elementIndex scrolls into view; drop direction and x/y");
  }
  if (step.action === "select-text" && step.end < step.start) throw bad("end must not be before start");
}

/** For each need, any one of the listed capabilities will do. */
function staticCapabilities(step: Step): string[][] {
  const el = "elementIndex" in step && step.elementIndex !== undefined;
  switch (step.action) {
    case "click":
      return el ? [["action.click"]] : [["input.pointer", "action.click"]];
    case "set-value":
      return [["action.set_value"]];
    case "type-text":
      return el ? [["action.type_text"]] : [["input.keyboard"]];
    case "press-key":
      return el ? [["action.focus"], ["input.keyboard"]] : [["input.keyboard"]];
    case "hotkey":
      return [["input.keyboard"]];
    case "scroll":
      return el ? [["action.scroll_into_view"]] : [["input.pointer"]];
    case "drag":
      return [["input.pointer"]];
    case "select-text":
      return [["action.select_text"]];
    case "focus":
      return [["action.focus"]];
    case "perform-secondary-action":
      return [["action.secondary"]];
    case "wait":
      return [];
    case "move":
      return [["input.pointer"]];
    case "hold-key":
      return [["input.keyboard"]];
  }
}

/** Steps that need foreground input whatever the screen looks like. */
function definitelyForeground(step: Step): boolean {
  switch (step.action) {
    case "type-text":
      return step.elementIndex === undefined;
    case "press-key":
    case "hotkey":
    case "drag":
    case "move":
    case "hold-key":
      return true;
    case "scroll":
      return step.elementIndex === undefined;
    case "click":
      // A plain left click at a point may hit an element (background route); anything else is input.
      return step.elementIndex === undefined && ((step.button ?? "left") !== "left" || (step.count ?? 1) !== 1 || (step.modifiers?.length ?? 0) > 0);
    default:
      return false;
  }
}

export async function runProgram(engine: Engine, program: Program, opts: { command: string; cancel?: CancelToken }): Promise<ProgramReceipt> {
  const { hello } = await engine.helper();
  validateProgram(engine, hello, program);
  const app = await resolveApp(engine, program.app);
  const needsSnapshot = program.steps.some(stepUsesElement);
  // Element-only programs act on the snapshot's own window: no window listing
  // is needed. If that window is gone the helper says WINDOW_NOT_FOUND before
  // any OS call, reported as SNAPSHOT_STALE window-gone.
  const elementOnly =
    needsSnapshot && program.windowId === undefined && program.windowIndex === undefined && program.steps.every((s) => stepUsesElement(s) || s.action === "wait");
  const { window, windows } = elementOnly ? { window: null, windows: [] } : await resolveWindowFor(engine, app, program, needsSnapshot);
  let decision = engine.safety.checkApp(app, window, opts.command);
  let snapshot: Snapshot | null = null;
  if (needsSnapshot) {
    snapshot = resolveSnapshot(engine.store, app, { snapshotId: program.snapshotId, windowId: program.windowId, windowIndex: program.windowIndex, windows, windowsKnown: !elementOnly });
    // Window-level rules (settings privacy panes) see the window acted on.
    if (elementOnly) decision = engine.safety.checkApp(app, snapshot.window, opts.command);
  }
  const windowId = snapshot?.window.windowId ?? window?.window_id ?? null;
  const receipts: StepReceipt[] = program.steps.map((s, i) => ({
    index: i,
    action: s.action,
    status: "unattempted",
    delivery: "not_dispatched",
    route: null,
    elementIndex: "elementIndex" in s && s.elementIndex !== undefined ? s.elementIndex : null,
    verification: { verified: null, predicate: null },
    cleanup: null,
  }));
  let firstFailure: number | null = null;

  for (let i = 0; i < program.steps.length; i++) {
    const step = program.steps[i]!;
    const elementIndex = receipts[i]!.elementIndex;
    try {
      if (opts.cancel?.cancelled) throw new DeckhandError("CANCELLED", `program cancelled before step ${i}${opts.cancel.reason ? ` (${opts.cancel.reason})` : ""}`);
      engine.safety.checkPaused(opts.command);
      let element: Element | null = null;
      if (elementIndex !== null) {
        if (i > 0) checkCurrent(snapshot!, app, { windowId: program.windowId, windowIndex: program.windowIndex, windows, windowsKnown: !elementOnly });
        element = lookupElement(snapshot!, elementIndex);
      }
      const plan = await planStep(engine, step, element, app);
      for (const cap of capabilityFor(plan)) engine.requireCapability(hello, cap as never, `${step.action} (${cap})`);
      const planElement = plan.kind === "element" ? plan.element : null;
      await engine.safety.checkStep({ app, window: snapshot?.window ?? (window ? { windowId: window.window_id, title: window.title, bounds: window.bounds } : null), step, element: planElement, command: opts.command });
      const foreground = plan.kind === "input" || (plan.kind === "element" && plan.then !== undefined);
      if (foreground && !engine.safety.foregroundGranted()) {
        throw new DeckhandError("FOREGROUND_REQUIRED", `${step.action} here needs the real pointer or keyboard (foreground input), which the operator has not granted`, {
          details: { action: step.action },
        });
      }
      if (plan.kind === "input" && plan.keyboard && !plan.steps.some((s) => s.kind === "click")) {
        await checkFocusNotSecure(engine, app, windowId, step);
      }
      if (engine.safety.checkUrl) await checkBrowserUrl(engine, app, windowId);
      // The decision is on record before anything is sent; if it cannot be, nothing is sent.
      engine.safety.audit({ event: "decision", command: opts.command, appId: auditAppId(app), pid: app.pid, windowId, elementIndex, decision: "allow", decisionSource: decision.source, rule: decision.rule, outcome: "OK", delivery: "not_dispatched" });
      receipts[i] = await dispatch(engine, plan, step, i, elementIndex, app, snapshot?.window.windowId ?? windowId ?? 0);
      engine.safety.audit({ command: opts.command, appId: auditAppId(app), pid: app.pid, windowId, elementIndex, decision: "allow", decisionSource: decision.source, outcome: "OK", delivery: receipts[i]!.delivery });
    } catch (err0) {
      let err = err0;
      if (err instanceof DeckhandError && err.code === "WINDOW_NOT_FOUND" && snapshot && (err.details.delivery ?? "not_dispatched") === "not_dispatched") {
        err = new DeckhandError("SNAPSHOT_STALE", "the snapshot's window is gone", { details: { reason: "window-gone", snapshotWindowId: snapshot.window.windowId, delivery: "not_dispatched" } });
      }
      receipts[i] = failReceipt(i, step, err, elementIndex);
      firstFailure = i;
      try {
        const refused = err instanceof DeckhandError && /POLICY|CONFIRM|BLOCKED|FOREGROUND|PAUSED/.test(err.code);
        engine.safety.audit({ command: opts.command, appId: auditAppId(app), pid: app.pid, windowId, elementIndex, decision: refused ? "deny" : "allow", decisionSource: decision.source, outcome: receipts[i]!.error!.code, delivery: receipts[i]!.delivery });
      } catch (auditErr) {
        process.stderr.write(`deckhand: audit write failed: ${(auditErr as Error).message}\n`);
      }
      break;
    }
  }

  const receipt: ProgramReceipt = {
    app: { name: app.name, pid: app.pid },
    snapshotId: snapshot?.snapshotId ?? null,
    windowId,
    steps: receipts,
    firstFailure,
    observation: null,
  };
  const snapshotWindow: WireWindow | null = snapshot
    ? { window_id: snapshot.window.windowId, title: snapshot.window.title, bounds: snapshot.window.bounds, z_index: 0, minimized: false, pid: app.pid }
    : null;
  if (program.observe && (window || snapshotWindow)) {
    try {
      const obsWindow = windows.find((w) => w.window_id === windowId) ?? window ?? snapshotWindow!;
      const s = await observe(engine, app, obsWindow, { noScreenshot: program.noScreenshot });
      receipt.observation = appStateResult(s, app);
    } catch (err) {
      const e = err instanceof DeckhandError ? err : new DeckhandError("INTERNAL", "observation failed");
      receipt.observationError = { code: e.code, message: e.message };
    }
  }
  return receipt;
}

/**
 * Keys typed with no target element land in whatever has focus. If that is a
 * secure (password) field, refuse: an agent must not type into one, even by
 * way of the keyboard. Read live, because focus moves.
 */
async function checkFocusNotSecure(engine: Engine, app: ResolvedApp, windowId: number | null, step: Step): Promise<void> {
  if (windowId === null) return;
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 64, max_children: 1000, max_nodes: 5000 });
  const focused = result.nodes.find((n) => n.states.includes("focused"));
  if (focused?.secure) {
    throw new DeckhandError("POLICY_DENIED", `${step.action} would type into a secure (password) field, which has focus`, {
      details: { source: "builtin", rule: "builtin:secure_field", action: step.action },
    });
  }
}

/**
 * Browsers: the current page URL, read live from the accessibility tree,
 * must not match a blocked-URL glob. Only asked when the policy has globs.
 */
async function checkBrowserUrl(engine: Engine, app: ResolvedApp, windowId: number | null): Promise<void> {
  const safety = engine.safety;
  if (!safety.checkUrl || !safety.isBrowser?.(app) || !safety.hasBlockedUrls?.()) return;
  let url: string | null = null;
  if (windowId !== null) {
    const { supervisor } = await engine.helper();
    const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 40, max_children: 500, max_nodes: 3000 });
    const urlLike = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
    const node = result.nodes.find((n) => !n.secure && n.value && urlLike.test(n.value) && /entry|text|combo/.test(n.role)) ?? result.nodes.find((n) => !n.secure && n.value && urlLike.test(n.value));
    url = node?.value ?? null;
  }
  safety.checkUrl(app, url);
}

async function resolveWindowFor(engine: Engine, app: ResolvedApp, program: Program, needsSnapshot: boolean): Promise<{ window: WireWindow | null; windows: WireWindow[] }> {
  try {
    const r = await resolveWindow(engine, app, { windowId: program.windowId, windowIndex: program.windowIndex });
    return r;
  } catch (err) {
    // With a snapshot, a vanished window is a stale snapshot, reported at that stage.
    if (needsSnapshot && err instanceof DeckhandError && err.code === "WINDOW_NOT_FOUND" && program.windowId === undefined && program.windowIndex === undefined) {
      return { window: null, windows: [] };
    }
    throw err;
  }
}

async function dispatch(engine: Engine, plan: Plan, step: Step, index: number, elementIndex: number | null, app: ResolvedApp, windowId: number): Promise<StepReceipt> {
  const { supervisor } = await engine.helper();
  const base = { index, action: step.action, elementIndex } as const;
  if (plan.kind === "wait") {
    await new Promise((r) => setTimeout(r, plan.ms));
    return { ...base, status: "completed", delivery: "submitted", route: null, verification: { verified: null, predicate: null }, cleanup: NO_CLEANUP };
  }
  if (plan.kind === "element") {
    const hitWindow = plan.hitWindow;
    const reply = await supervisor.request("element_action", {
      pid: app.pid,
      window_id: hitWindow ?? windowId,
      locator: toLocator(plan.element),
      action: plan.action,
      text: plan.text ?? null,
      start: plan.start ?? null,
      end: plan.end ?? null,
      action_name: plan.actionName ?? null,
    });
    let receipt = reply.receipt!;
    if (plan.then) {
      const more = await supervisor.request("input", { steps: plan.then, restore_pointer: true });
      receipt = { ...more.receipt!, delivery: more.receipt!.delivery === "submitted" ? "submitted" : "partial" };
    }
    return {
      ...base,
      status: "completed",
      delivery: receipt.delivery,
      route: receipt.route,
      verification: { verified: reply.result.verified, predicate: reply.result.verification },
      cleanup: receipt.cleanup,
    };
  }
  const reply = await supervisor.request("input", { steps: plan.steps, restore_pointer: plan.pointer && !plan.keepPointer });
  const receipt = reply.receipt!;
  return { ...base, status: "completed", delivery: receipt.delivery, route: receipt.route, verification: { verified: null, predicate: null }, cleanup: receipt.cleanup };
}
