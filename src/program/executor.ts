// The one executor: a validated program runs step by step against one target,
// with the snapshot checks and cancellation before each step, per-step
// receipts, and one final observation.
import { DeckhandError, type ErrorDetails } from "../protocol/errors.ts";
import type { Program, Step } from "../protocol/program.ts";
import type { Element, Snapshot } from "../session/snapshot.ts";
import type { Delivery, Receipt, Route, WireLocator, WireWindow } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";
import { auditAppId } from "../engine/safety.ts";
import { appStateResult, observe } from "../engine/observe.ts";
import { resolveApp, resolveWindow, type ResolvedApp } from "../engine/resolve.ts";
import { checkCurrent, lookupElement, resolveSnapshot } from "./snapshot-check.ts";
import { stepUsesElement } from "./compile.ts";
import { capabilityFor, planStep, type Plan } from "./plan.ts";
import { validateProgram } from "./validate.ts";
import { checkBrowserUrl, checkFocusNotSecure } from "./live-checks.ts";

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

export async function runProgram(
  engine: Engine,
  program: Program,
  opts: { command: string; cancel?: CancelToken; /** Already resolved by the caller (to pick its lock): not listed again. */ app?: ResolvedApp },
): Promise<ProgramReceipt> {
  const { hello } = await engine.helper();
  validateProgram(engine, hello, program);
  const app = opts.app ?? (await resolveApp(engine, program.app));
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
