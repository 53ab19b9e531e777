// The dispatcher: one handler per command of the frozen inventory. The
// failure order is fixed: routing and flag parsing happen before we get here;
// then helper resolution, action support, permission gate, stdin read, app,
// window, snapshot, element, replay, OS call.
import { asUnverified } from "../engine/permissions.ts";
import { DeckhandError } from "../protocol/errors.ts";
import { ARGS, COMMANDS, MUTATING_COMMANDS, ACTIONS, exclusiveConflict, type CommandArgs, type CommandName } from "../protocol/commands.ts";
import { ACTION_COMMANDS, declOf, stdinField, stepSecret, type ActionCommandName } from "../protocol/actions.ts";
import { argumentsError, flagOf } from "../protocol/arg-errors.ts";
import type { ActionCommand, CommandResult, ReadonlyDeep } from "../protocol/results.ts";
import { parseProgram, type Program } from "../protocol/program.ts";
import { traceRefused } from "../program/trace-recorder.ts";
import { PROTOCOL_VERSION, type PermissionCheck as WirePermissionCheck } from "../wire/messages.ts";
import { GATING_PERMISSIONS } from "../wire/vocabulary.ts";
import type { Engine } from "../engine/engine.ts";
import { requireCapability, type HelperPort, type PermissionsPort, type SerialPort } from "../engine/ports.ts";
import { appStateResult, captureWindow, checkPageObservable, observe, pageResult, rememberedSecureRects, viewOptions } from "../engine/observe.ts";
import { checkObservationArgs } from "../protocol/observation.ts";
import { targetKeyOf } from "../session/snapshot.ts";
import type { ViewOptions } from "../session/view.ts";
import { captureScreen } from "../engine/screen.ts";
import { appWindows, resolveApp, resolveWindow, type AppCache, type ResolvedApp } from "../engine/resolve.ts";
import { compileCommand, withStdin } from "../program/compile.ts";
import { runProgram, type CancelToken, type ProgramPorts, type ProgramReceipt, type ProgramRun } from "../program/executor.ts";
import { actionSupported, validateProgram } from "../program/validate.ts";
import { VERSION } from "../version.ts";
import { auditAppId } from "../engine/safety.ts";
import { pause as pauseFlag, resume as resumeFlag } from "../audit/pause.ts";
import { scrubError, scrubStepErrors, scrubText, secretsOf } from "../protocol/scrub.ts";
import { auditSourceOf, isAgentMode, operatorOnlyError, type Caller } from "../protocol/caller.ts";
// ---- issue 13: clipboard
import { clipboardGet, clipboardSet } from "./clipboard.ts";
// ---- end clipboard
// issue 13: menus
import { menuClick, menuList } from "./menus.ts";
// ---- issue 13: app lifecycle
import { activateApp, launchApp, listApps, quitApp } from "./lifecycle.ts";
// ---- end lifecycle
// ---- issue 14: screenshot --marks
import { screenshotWithMarks } from "./marks.ts";
// ---- end screenshot --marks
// ---- issue 14: screenshot options
import { appStateImageOptions, screenshotWithImageOptions } from "./screenshot-options.ts";
// ---- end screenshot options

export interface CallContext {
  /** Reads stdin once (secrets, programs). Absent in serve/MCP: values travel in args. */
  readStdin?: () => Promise<string>;
  cancel?: CancelToken;
  /**
   * Who sent the command (src/protocol/caller.ts). Operator-only commands
   * (`resume`) run only for "operator"; absent counts as an agent.
   */
  caller?: Caller;
}

/** A command's handler: its result is typed by RESULTS[C] (src/protocol/results.ts), the published contract. */
type Handler<C extends CommandName> = (engine: Engine, args: CommandArgs<C>, ctx: CallContext) => Promise<ReadonlyDeep<CommandResult<C>>>;

/** Helpers (by their hello) whose permissions were already probed in this process, with the advisory checks seen denied. */
const permissionChecked = new WeakMap<object, WirePermissionCheck[]>();

/**
 * Stage "permission gate": a definitively denied accessibility bus stops
 * everything but reporting. Advisory checks (the session's accessibility
 * flag being off: GTK3 trees are readable anyway) never gate; they are kept
 * to explain an empty tree.
 */
async function permissionGate(engine: HelperPort & PermissionsPort): Promise<WirePermissionCheck[]> {
  const { supervisor, hello } = await engine.helper();
  const seen = permissionChecked.get(hello);
  if (seen) return seen;
  let advisories: WirePermissionCheck[] = [];
  if (hello.capabilities.permissions?.supported) {
    const { result } = await supervisor.request("permissions", {});
    // Neutral ids only (wire/vocabulary.ts): the orchestrator knows no platform's probe names.
    const advisory = (c: WirePermissionCheck) => c.advisory === true || c.id === "accessibility_enabled";
    const gating = (c: WirePermissionCheck) => !advisory(c) && (GATING_PERMISSIONS as readonly string[]).includes(c.id);
    const denied = result.checks.find((c) => c.status === "denied" && gating(c));
    if (denied) {
      throw new DeckhandError("PERMISSION_DENIED", `${denied.id}: ${denied.detail}`, { remediation: denied.remediation, details: { permission: denied.id } });
    }
    advisories = result.checks.filter((c) => c.status === "denied" && advisory(c));
    // Unknown is not denied: the request is attempted, and a failure shaped like a missing permission says so.
    engine.permissionsUnknown = result.checks.filter((c) => c.status === "unknown" && gating(c)).map((c) => c.id);
  }
  permissionChecked.set(hello, advisories);
  return advisories;
}

/**
 * Start `work` now and read its outcome later: a rejection is held (not
 * unhandled) until the caller asks, so a permission gate awaited in between
 * reports its own refusal first (issue 15: reads overlap the gate).
 */
function settledLater<T>(work: Promise<T>): () => Promise<T> {
  const held = work.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return async () => {
    const r = await held;
    if (!r.ok) throw r.error;
    return r.value;
  };
}

/**
 * An observation whose tree is empty or only the window's frame, while the
 * session's accessibility flag is off, is most likely the flag's doing
 * (Qt, Chromium, Firefox do not expose trees without it): say so, with the fix.
 */
function accessibilityWarnings(advisories: WirePermissionCheck[], elementCount: number): { code: string; message: string; remediation: string }[] {
  if (!advisories.length || elementCount > 1) return [];
  return advisories.map((c) => ({
    code: "ACCESSIBILITY_DISABLED",
    message: `the tree is ${elementCount === 0 ? "empty" : "only the window frame"}, and ${c.id} is off: ${c.detail}`,
    remediation: c.remediation || "run `deckhand permissions --enable-accessibility`, then restart the app",
  }));
}

async function readSecret(ctx: CallContext, flag: string): Promise<string> {
  if (!ctx.readStdin) throw new DeckhandError("INVALID_ARGUMENTS", `${flag} reads stdin, which this mode does not have; pass the value in the request`);
  const raw = await ctx.readStdin();
  // One trailing newline is the shell's, not the secret's.
  return raw.endsWith("\r\n") ? raw.slice(0, -2) : raw.endsWith("\n") ? raw.slice(0, -1) : raw;
}

/** A single command's result: its one step's receipt (a failed step throws its error, it is not a result). */
function singleResult<C extends ActionCommand>(command: C, run: ProgramRun): ReadonlyDeep<CommandResult<C>> {
  if (run.failure) throw run.failure;
  const { receipt } = run;
  const step = receipt.steps[0]!;
  const result: ReadonlyDeep<CommandResult<ActionCommand>> = {
    action: command as ActionCommand,
    app: receipt.app,
    snapshotId: receipt.snapshotId,
    windowId: receipt.windowId,
    elementIndex: step.elementIndex,
    performed: step.delivery === "submitted",
    delivery: step.delivery,
    route: step.route,
    verification: step.verification,
    cleanup: step.cleanup,
    ...(step.nativeAction ? { nativeAction: step.nativeAction } : {}),
    ...(step.fallback ? { fallback: step.fallback, fallbackFrom: step.fallbackFrom } : {}),
    ...(typeof step.charsSent === "number" ? { charsSent: step.charsSent } : {}),
    // ---- issue 13: clipboard
    ...(step.paste ? { paste: step.paste } : {}),
    // ---- end clipboard
    ...(step.drag ? { drag: step.drag } : {}),
    observation: receipt.observation,
    ...(receipt.settle ? { settle: receipt.settle } : {}),
    ...(receipt.observationError ? { observationError: receipt.observationError } : {}),
  };
  return result as ReadonlyDeep<CommandResult<C>>;
}

/**
 * A single action command: its arguments compiled to a one-step program
 * (checked once; its errors name the command, never "step 0"), run by the
 * one executor.
 */
function actionHandler<C extends ActionCommandName>(command: C): Handler<C> {
  const secretField = declOf(command).secret;
  const stdinFlag = secretField === undefined ? undefined : stdinField(secretField);
  return async (engine, args, ctx) => {
    const a = args as Record<string, unknown>;
    let secret: string | undefined;
    // issue 16: trace: a program refused before it ran is recorded too (runProgram records the rest).
    let asked: Program | undefined;
    let ran = false;
    try {
      // Flag combinations and the step's shape are part of flag parsing: checked before the helper is even found.
      // An action resolves its target only after the gate passed (nothing is read for a refused action).
      const compiled = (asked = compileCommand(command, a));
      const { hello } = await engine.helper();
      // Action support, then the permission gate, then (only then) stdin.
      let program = validateProgram(engine.safety, hello, compiled, command);
      engine.safety.checkPaused(command);
      await permissionGate(engine);
      if (stdinFlag && a[stdinFlag] === true) program = asked = withStdin(program, (secret = await readSecret(ctx, flagOf(stdinFlag))));
      const target = await resolveTarget(engine, program.app);
      ran = true;
      const run = await engine.serialized(target.key, () => runProgram(engine, program, { command, cancel: ctx.cancel, app: target.app }));
      return singleResult(command as ActionCommand, run) as ReadonlyDeep<CommandResult<C>>;
    } catch (err) {
      if (asked && !ran) traceRefused(engine, command, asked, err);
      // Anything refused before a step ran was never dispatched: say so.
      if (err instanceof DeckhandError && err.details.delivery === undefined) err.details.delivery = "not_dispatched";
      // The one place this command's errors leave: never with the secret it carried (a helper may echo it).
      throw scrubError(err, secretsOf([secret, secretField !== undefined && typeof a[secretField] === "string" ? (a[secretField] as string) : undefined]));
    }
  };
}

/** Every action command's handler (src/protocol/actions.ts). */
const ACTION_HANDLERS = Object.fromEntries(ACTION_COMMANDS.map((c) => [c, actionHandler(c)])) as { [C in ActionCommandName]: Handler<C> };

export const HANDLERS: { [C in CommandName]: Handler<C> } = {
  async capabilities(engine) {
    const { supervisor, hello } = await engine.helper();
    const caps = hello.capabilities;
    const supportedCaps = (k: string) => caps[k]?.supported === true;
    const actions = ACTIONS.filter((a) => actionSupported(a, caps));
    return {
      deckhand: { version: VERSION, protocol: PROTOCOL_VERSION.join(".") },
      platform: process.platform,
      helper: {
        name: hello.helper.name,
        version: hello.helper.version,
        backend: hello.helper.backend,
        protocol: hello.protocol.join("."),
        path: engine.helperLocation?.path ?? null,
        source: engine.helperLocation?.source ?? null,
        pid: supervisor.pid,
      },
      supported: actions.length > 0,
      commands: COMMANDS,
      actions,
      unsupportedActions: ACTIONS.filter((a) => !actions.includes(a)),
      capabilities: caps,
      features: {
        screenshot: supportedCaps("screenshot"),
        occludedScreenshot: supportedCaps("screenshot.occluded"),
        stdinSecrets: true,
        crossInvocationSnapshots: true,
        foregroundInput: supportedCaps("input.pointer") || supportedCaps("input.keyboard"),
        foregroundGranted: engine.safety.foregroundGranted(),
      },
      limits: hello.limits,
      helperStderr: supervisor.stderr.tail(20),
    };
  },

  async permissions(engine, args) {
    const { supervisor, hello } = await engine.helper();
    let enabled: { enabled: boolean; previous: boolean | null; note: string } | undefined;
    if (args.enableAccessibility) {
      requireCapability(hello, "set_accessibility", "permissions --enable-accessibility");
      const { result } = await supervisor.request("set_accessibility", { enabled: true });
      enabled = {
        ...result,
        note:
          result.previous === true
            ? "accessibility was already on"
            : "accessibility is now on; apps started before this (Qt, Chromium/Electron, Firefox) must be restarted to expose their trees",
      };
    }
    const { result } = await supervisor.request("permissions", {});
    // Public results are camelCase: the wire's native_id is nativeId here.
    const checks = result.checks.map(({ native_id, ...c }) => ({
      ...c,
      ...(native_id !== undefined ? { nativeId: native_id } : {}),
      advisory: c.advisory === true || c.id === "accessibility_enabled",
      granted: c.status === "granted",
      probed: c.status !== "unknown",
    }));
    return {
      platform: process.platform,
      helper: `${hello.helper.name} ${hello.helper.version}`,
      allGranted: checks.every((c) => c.granted),
      /** Denied advisory checks: observation proceeds, some apps may show no tree. */
      warnings: checks.filter((c) => c.advisory && c.status === "denied").map((c) => ({ id: c.id, detail: c.detail, remediation: c.remediation })),
      checks,
      ...(enabled ? { enableAccessibility: enabled } : {}),
      helperStderr: supervisor.stderr.tail(20),
    };
  },

  // issue 13 (lifecycle): --all adds the installed apps (src/commands/lifecycle.ts).
  "list-apps": (engine, args) => listApps(engine, args),

  async "list-windows"(engine, args) {
    await engine.helper();
    const app = await resolveApp(engine, args.app);
    engine.safety.checkApp(app, null, "list-windows");
    // Its popups too (an open menu), as the X11 window list has them.
    const windows = await appWindows(engine, app.pid, { popups: true });
    return {
      app: { name: app.name, pid: app.pid, executable: app.executable },
      windows: windows.map((w, i) => ({ windowId: w.window_id, windowIndex: i, title: w.title, bounds: w.bounds, minimized: w.minimized, zIndex: w.z_index, popup: w.popup === true })),
    };
  },

  async "get-app-state"(engine, args) {
    // issue 14: flag combinations first (src/protocol/observation.ts), then the usual order.
    checkObservationArgs(args);
    const { hello } = await engine.helper();
    requireCapability(hello, "get_tree", "get-app-state");
    // The app and its window resolve (reads only) while the gate's request is in flight; the gate's verdict still comes first.
    const gate = permissionGate(engine);
    const resolving = settledLater(resolveApp(engine, args.app).then(async (app) => ({ app, window: args.snapshotId === undefined ? (await resolveWindow(engine, app, args)).window : null })));
    const advisories = await gate;
    const { app, window: resolved } = await resolving();
    const view = viewOptions({ format: args.format, maxNodes: args.maxNodes ?? null, maxBytes: args.maxBytes, offset: args.offset, withBounds: args.withBounds });
    if (args.snapshotId !== undefined) return await pageOfStored(engine, app, args.snapshotId, view);
    const window = resolved!;
    const decision = engine.safety.checkApp(app, window, "get-app-state");
    const snapshot = await observe(engine, app, window, {
      noScreenshot: args.noScreenshot,
      maxNodes: args.maxNodes,
      view,
      since: args.since,
      // ---- issue 14: get-app-state's image, OCR and marks options
      marks: args.marks, // marks
      image: await appStateImageOptions(engine, args, window), // image options
      ocr: args.ocr, // ocr
      // ---- end get-app-state options
    }).catch((err) => {
      throw asUnverified(err, engine.permissionsUnknown);
    });
    engine.safety.audit({ command: "get-app-state", appId: auditAppId(app), pid: app.pid, windowId: window.window_id, decision: "allow", decisionSource: decision.source, outcome: "OK" });
    const state = appStateResult(snapshot, app);
    // The tree's own elements decide: text OCR read off the image says nothing about the accessibility switch.
    const treeElements = snapshot.elements.filter((e) => e.source !== "ocr").length;
    const warnings = [...(state.warnings ?? []), ...accessibilityWarnings(advisories, treeElements)];
    return { ...state, ...(warnings.length ? { warnings } : {}) };
  },

  async screenshot(engine, args) {
    checkObservationArgs(args);
    // ---- issue 14: screenshot options (region, max width, format, quality)
    const imaged = await screenshotWithImageOptions(engine, args, () => permissionGate(engine), (a) => HANDLERS.screenshot(engine, a, {}));
    if (imaged) return imaged;
    // ---- end screenshot options
    // ---- issue 14: screenshot --marks
    if (args.marks) return await screenshotWithMarks(engine, args, () => permissionGate(engine));
    // ---- end screenshot --marks
    const { hello } = await engine.helper();
    requireCapability(hello, "screenshot", "screenshot");
    await permissionGate(engine);
    const name = `shot_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    if (!args.app) {
      if (args.windowId !== undefined || args.windowIndex !== undefined) throw new DeckhandError("INVALID_ARGUMENTS", "--window-id and --window-index need --app");
      // The whole screen: denied windows, blocked pages and secure fields blacked out.
      const { screenshot, redacted } = await captureScreen(engine, name);
      return { app: null, windowId: 0, screenshot, redacted };
    }
    const app = await resolveApp(engine, args.app);
    const { window } = await resolveWindow(engine, app, args);
    engine.safety.checkApp(app, window, "screenshot");
    await checkPageObservable(engine, app, window.window_id, "screenshot");
    // Fields once seen secure there stay blacked out, whatever the helper now reports (src/session/store.ts).
    const out = await captureWindow(engine, window.window_id, name, await rememberedSecureRects(engine, app, window.window_id));
    if (!out.screenshot) throw new DeckhandError(out.screenshotError!.code === "TIMEOUT" ? "TIMEOUT" : "SCREENSHOT_FAILED", out.screenshotError!.message);
    const redacted = { deniedWindows: 0, blockedUrls: 0, unidentifiedWindows: 0, secureFields: out.screenshot.redacted };
    return { app: { name: app.name, pid: app.pid }, windowId: window.window_id, screenshot: out.screenshot, redacted };
  },

  ...ACTION_HANDLERS,

  async run(engine, _args, ctx) {
    await engine.helper();
    engine.safety.checkPaused("run");
    await permissionGate(engine);
    if (!ctx.readStdin) throw new DeckhandError("INVALID_ARGUMENTS", "run reads its program from stdin; in serve use the program request");
    const raw = await ctx.readStdin();
    return await runProgramText(engine, raw, ctx);
  },

  async "policy-check"(engine, args) {
    await engine.helper();
    const app = await resolveApp(engine, args.app);
    const appOut = { name: app.name, pid: app.pid, executable: app.executable, desktopId: app.desktopId };
    const files = engine.safety.policyFiles?.() ?? null;
    try {
      const d = engine.safety.checkApp(app, null, "policy-check");
      return { app: appOut, decision: "allow", source: d.source, rule: d.rule, policyFiles: files };
    } catch (err) {
      if (err instanceof DeckhandError && err.code === "POLICY_DENIED") {
        return { app: appOut, decision: "deny", source: String(err.details.source ?? "policy"), rule: String(err.details.rule ?? ""), policyFiles: files };
      }
      throw err;
    }
  },

  // pause/resume need no helper: the flag file is the source of truth across processes.
  // Anyone may stop deckhand; the audit says who did (decision_source).
  async pause(engine, args, ctx) {
    const state = pauseFlag(engine.env, args.reason);
    engine.safety.audit({ event: "pause", command: "pause", decision: "n/a", decisionSource: auditSourceOf(ctx.caller), outcome: "OK" });
    return state;
  },
  // Only the operator lifts a pause: never a serve client, an MCP client, an
  // adapter or a CLI in agent mode. A refused attempt is audited as such.
  async resume(engine, _args, ctx) {
    const caller = ctx.caller ?? "agent_cli";
    if (caller !== "operator" || isAgentMode(engine.env)) {
      const who = caller === "operator" ? "agent_cli" : caller;
      const err = operatorOnlyError("resume", who);
      try {
        engine.safety.audit({ event: "resume", command: "resume", decision: "deny", decisionSource: auditSourceOf(who), rule: "operator-only", outcome: "POLICY_DENIED", delivery: "not_dispatched" });
      } catch {
        /* refused either way */
      }
      throw err;
    }
    const lifted = resumeFlag(engine.env);
    engine.safety.audit({ event: "resume", command: "resume", decision: "n/a", decisionSource: "operator", outcome: "OK" });
    return { paused: false, wasPaused: lifted.paused, ...(lifted.reason ? { liftedReason: lifted.reason } : {}) };
  },
  // ---- issue 13: app lifecycle
  launch: (engine, args) => launchApp(engine, args, { gate: () => permissionGate(engine) }),
  activate: (engine, args) => activateApp(engine, args),
  quit: (engine, args) => quitApp(engine, args),
  // ---- end lifecycle

  // ---- issue 13: clipboard
  "clipboard-get": (engine, args) => clipboardGet(engine, args),
  "clipboard-set": (engine, args, ctx) => clipboardSet(engine, args, ctx),
  // ---- end clipboard

  // ---- issue 13: menus
  "menu-list": (engine, args) => menuList(engine, args, () => permissionGate(engine)),
  "menu-click": (engine, args) => menuClick(engine, args, () => permissionGate(engine)),
  // ---- end menus
};

/**
 * get-app-state --snapshot-id S --offset N: a page of a stored snapshot, no
 * new observation. Policy is asked again (it may have changed since), and
 * the snapshot must be the app's, unexpired.
 */
async function pageOfStored(engine: Engine, app: ResolvedApp, snapshotId: string, view: ViewOptions) {
  const snapshot = engine.store.get(snapshotId);
  if (!snapshot) throw new DeckhandError("SNAPSHOT_STALE", `snapshot ${snapshotId} does not exist (expired and pruned, or never taken)`, { details: { reason: "not-found", snapshotId } });
  if (snapshot.targetKey !== targetKeyOf(app)) throw new DeckhandError("SNAPSHOT_STALE", `snapshot ${snapshotId} belongs to another app`, { details: { reason: "window-mismatch", snapshotId } });
  if (Date.now() >= Date.parse(snapshot.expiresAt)) throw new DeckhandError("SNAPSHOT_STALE", `snapshot ${snapshotId} expired`, { details: { reason: "expired", snapshotId, expiresAt: snapshot.expiresAt } });
  const window = (await appWindows(engine, app.pid)).find((w) => w.window_id === snapshot.window.windowId) ?? null;
  const decision = engine.safety.checkApp(app, window, "get-app-state");
  // A page blocked since the snapshot was taken is not shown from it either.
  if (window) await checkPageObservable(engine, app, window.window_id, "get-app-state");
  const page = pageResult(engine.store, snapshot, app, view);
  engine.safety.audit({ command: "get-app-state", appId: auditAppId(app), pid: app.pid, windowId: snapshot.window.windowId, decision: "allow", decisionSource: decision.source, outcome: "OK" });
  return page;
}

/** Parse and run a program (JSON text); used by `run` and serve's program requests. */
export async function runProgramText(engine: ProgramPorts & SerialPort, raw: string, ctx: CallContext) {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new DeckhandError("INVALID_ARGUMENTS", "the program is not valid JSON");
  }
  return await runProgramValue(engine, json, ctx);
}

/**
 * A program whose step failed is a failed request (ok:false): the failing
 * step's error, its message prefixed with the step ("step 2 (click): ..."),
 * with every step's receipt (and the final observation) in the error's
 * details, so nothing about what was sent is lost.
 */
export function programFailure(run: ProgramRun): DeckhandError | null {
  const { receipt, failure } = run;
  if (failure === null || receipt.firstFailure === null) return null;
  const step = receipt.steps[receipt.firstFailure]!;
  const err = new DeckhandError(failure.code, `step ${receipt.firstFailure} (${step.action}): ${failure.message}`, {
    remediation: failure.remediation,
    details: {
      ...failure.details,
      step: receipt.firstFailure,
      delivery: step.delivery,
      stepsCompleted: receipt.steps.filter((x) => x.status === "completed").length,
    },
  });
  err.program = {
    receipts: receipt.steps,
    ...(receipt.observation ? { observation: receipt.observation } : {}),
    ...(receipt.settle ? { settle: receipt.settle } : {}),
  };
  return err;
}

/**
 * Parse, validate and run a program (a JSON value): its receipt, and for a
 * failed step the `run` error (programFailure) rather than a throw. Values
 * and text the program carries are scrubbed from both (a helper may echo
 * them). Refusals before any step runs (shape, capabilities, grant, pause)
 * throw.
 */
export async function runProgramOutcome(engine: ProgramPorts & SerialPort, json: unknown, ctx: CallContext): Promise<{ receipt: ProgramReceipt; failure: DeckhandError | null }> {
  const program = parseProgram(json);
  const secrets = secretsOf(program.steps.map(stepSecret));
  let ran = false;
  try {
    engine.safety.checkPaused("run");
    const { hello } = await engine.helper();
    const runnable = validateProgram(engine.safety, hello, program, "run");
    const target = await resolveTarget(engine, program.app);
    ran = true;
    const run = await engine.serialized(target.key, () => runProgram(engine, runnable, { command: "run", cancel: ctx.cancel, app: target.app }));
    const { receipt } = run;
    scrubStepErrors(receipt.steps, secrets);
    if (receipt.observationError) receipt.observationError = { ...receipt.observationError, message: scrubText(receipt.observationError.message, secrets) };
    const failure = programFailure(run);
    return { receipt, failure: failure && (scrubError(failure, secrets) as DeckhandError) };
  } catch (err) {
    if (!ran) traceRefused(engine, "run", program, err); // issue 16: trace
    throw scrubError(err, secrets);
  }
}

/** A program's receipt; a failed step throws its `run` error (runProgramOutcome gives both: the adapters map the receipt themselves). */
export async function runProgramValue(engine: ProgramPorts & SerialPort, json: unknown, ctx: CallContext): Promise<ProgramReceipt> {
  const { receipt, failure } = await runProgramOutcome(engine, json, ctx);
  if (failure) throw failure;
  return receipt;
}

/**
 * What mutations are serialised on: the process, however the request named
 * it (a name and pid:N are one target). An unresolvable selector serialises
 * on itself; the executor reports the resolution error at its own stage.
 */
async function resolveTarget(engine: HelperPort & AppCache, selector: string): Promise<{ key: string; app?: ResolvedApp }> {
  try {
    const app = await resolveApp(engine, selector);
    return { key: `pid:${app.pid}`, app };
  } catch {
    return { key: `selector:${selector}` };
  }
}

export function isMutating(command: CommandName): boolean {
  return MUTATING_COMMANDS.has(command);
}

export function validateArgs<C extends CommandName>(command: C, raw: unknown): CommandArgs<C> {
  const parsed = ARGS[command].safeParse(raw ?? {});
  // Which field and what it must be ("app is required"); never the received value: it may be a secret.
  if (!parsed.success) throw argumentsError(parsed.error, raw ?? {});
  const conflict = exclusiveConflict(parsed.data);
  if (conflict) throw new DeckhandError("INVALID_ARGUMENTS", `${conflict[0]} and ${conflict[1]} both name a window; give one`, { details: { field: conflict[1] } });
  return parsed.data as CommandArgs<C>;
}
