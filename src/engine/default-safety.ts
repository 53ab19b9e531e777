// Builds the Safety seam for one process (a CLI call, a serve or MCP session)
// from the operator's options, the policy files and the environment. Every
// rule lives in src/policy, src/confirm and src/audit; this file only decides
// when each is asked.
import { appendAudit } from "../audit/log.ts";
import { assertNotPaused } from "../audit/pause.ts";
import { resolveConfirm, runConfirm } from "../confirm/hook.ts";
import { MUTATING_COMMANDS, type CommandName } from "../protocol/commands.ts";
import { DeckhandError } from "../protocol/errors.ts";
import { decideApp, type AppDecision } from "../policy/decide.ts";
import { foregroundGranted } from "../policy/foreground.ts";
import { identityFromWireApp, type AppIdentity } from "../policy/identity.ts";
import { describePolicy, loadPolicy, pauseOnUserInput, type Policy } from "../policy/load.ts";
import { assertNotSecureTarget } from "../policy/secure.ts";
import { decideStep, type Control, type StepFacts } from "../policy/sensitive.ts";
import { assertUrlAllowed, blockedUrlGlobs, isBrowser } from "../policy/urls.ts";
import type { Step } from "../protocol/program.ts";
import type { Element, SnapshotApp } from "../session/snapshot.ts";
import type { OperatorOptions } from "./engine.ts";
import { auditAppId, POLICY_CONFIRM_FACTS, type AuditEntry, type Safety } from "./safety.ts";

export interface SessionOptions {
  /** A serve/MCP session started with --allow-foreground: fixed for its lifetime. */
  sessionGrant?: boolean;
  /** Audit session id (serve/MCP); null for a one-shot CLI call. */
  session?: string | null;
}


/** The policy identity of an app, from what the helper reported of it (the host asked only where it said nothing). */
function identityOf(app: SnapshotApp): AppIdentity {
  return identityFromWireApp({
    pid: app.pid,
    name: app.name,
    executable: app.executable,
    desktop_id: app.desktopId,
    ...(app.processName !== undefined ? { process_name: app.processName } : {}),
    ...(app.executableDeleted !== undefined ? { executable_deleted: app.executableDeleted } : {}),
    ...(app.bundleId !== undefined ? { bundle_id: app.bundleId } : {}),
  });
}

/** A snapshot element (or a hit-tested node routed to accessibility) as the decision reads it. */
function controlOf(element: Element): Control {
  return { role: element.role, name: element.title, states: element.focused ? ["focused"] : [], actions: element.actions, index: element.index };
}

/**
 * The one confirm decision for a step (src/policy/sensitive.ts decideStep),
 * with what the executor read live: the element acted on and its window,
 * where keyboard focus is, what is under the pointer.
 */
export function stepDecision(step: Step, element: Element | null, facts: StepFacts = {}) {
  return decideStep(step, { ...facts, element: element ? controlOf(element) : (facts.element ?? null) });
}

const SECURE_SENSITIVE_STEPS = new Set(["set-value", "type-text", "select-text", "press-key", "hotkey"]);

export interface PolicySafety extends Safety {
  readonly policy: Policy;
}

export function createSafety(operator: OperatorOptions, env: NodeJS.ProcessEnv, session: SessionOptions = {}): PolicySafety {
  // A broken user file is INVALID_ARGUMENTS naming the line; a broken admin file fails closed.
  const policy = loadPolicy({ userPath: operator.policyPath, env });
  const sessionId = session.session ?? null;
  const audit = (e: AuditEntry) => {
    appendAudit(
      {
        event: e.event ?? "action",
        session: sessionId,
        command: e.command,
        app_id: e.appId ?? null,
        pid: e.pid ?? null,
        window_id: e.windowId ?? null,
        element_index: e.elementIndex ?? null,
        decision: e.decision === "n/a" ? null : e.decision,
        decision_source: (e.decisionSource as never) ?? null,
        rule: e.rule ?? null,
        outcome: e.outcome as never,
        delivery: (e.delivery as never) ?? null,
      },
      env,
    );
  };

  return {
    policy,
    confirmFacts: POLICY_CONFIRM_FACTS,
    policyFiles: () => describePolicy(policy),
    checkPaused(command: string) {
      if (MUTATING_COMMANDS.has(command as CommandName) || command === "run") assertNotPaused(env);
    },

    checkApp(app, window, command) {
      const identity = identityOf(app);
      const d: AppDecision = decideApp(policy, identity, window ? { title: window.title } : undefined);
      if (d.decision === "deny") {
        audit({ event: "decision", command, appId: auditAppId(app), pid: app.pid, decision: "deny", decisionSource: d.source, rule: safeRule(d.rule), outcome: "POLICY_DENIED", delivery: "not_dispatched" });
        throw new DeckhandError("POLICY_DENIED", `policy denies ${command} on ${app.name} (${d.source})`, {
          details: { source: d.source, rule: d.rule, matchedBy: String(d.matchedBy ?? "") },
        });
      }
      return { source: d.source, rule: d.rule };
    },

    decideApp(app, window) {
      const d = decideApp(policy, identityOf(app), window ? { title: window.title } : undefined);
      return { decision: d.decision, source: d.source, rule: d.rule };
    },

    async checkStep({ app, window, step, element, command, facts }) {
      if (element && element.secure && SECURE_SENSITIVE_STEPS.has(step.action)) {
        assertNotSecureTarget(step.action.replace("-", "_"), { role: element.role, secure: true });
      }
      const d = stepDecision(step, element, facts);
      if (!d) return;
      const hook = resolveConfirm({ flag: operator.confirmCmd ?? null, env, policy });
      // The control the route reaches: the element acted on, the focused control, the default button, the node under the pointer.
      const control = d.control ?? (element ? controlOf(element) : null);
      const description = {
        version: 1 as const,
        command,
        action: d.kind,
        reason: d.reason.slice(0, 256),
        route: d.route,
        session: sessionId,
        app: { id: auditAppId(app), name: app.name, pid: app.pid, executable: app.executable },
        window: window ? { id: window.windowId, title: window.title } : null,
        element: control ? { index: control.index !== undefined && control.index !== null && control.index >= 0 ? control.index : null, role: control.role.slice(0, 128), name: control.name.slice(0, 1024) } : null,
        ...(d.keys ? { keys: d.keys.slice(0, 32).map((k) => k.slice(0, 64)) } : {}),
      };
      try {
        operator.progress?.({ kind: "confirm" });
        await runConfirm(hook.command, description, hook.timeoutMs, { env });
        audit({ event: "decision", command, appId: auditAppId(app), pid: app.pid, windowId: window?.windowId ?? null, elementIndex: element && element.index >= 0 ? element.index : null, decision: "allow", decisionSource: "confirm", rule: `route:${d.route}`, outcome: "OK" });
      } catch (err) {
        const code = err instanceof DeckhandError ? err.code : "INTERNAL";
        audit({ event: "decision", command, appId: auditAppId(app), pid: app.pid, windowId: window?.windowId ?? null, elementIndex: element && element.index >= 0 ? element.index : null, decision: "deny", decisionSource: "confirm", rule: `route:${d.route}`, outcome: code, delivery: "not_dispatched" });
        throw err;
      }
    },

    async confirmCommand({ app, window, command, action, reason }) {
      const hook = resolveConfirm({ flag: operator.confirmCmd ?? null, env, policy });
      const description = {
        version: 1 as const,
        command,
        action,
        reason: reason.slice(0, 256),
        session: sessionId,
        app: app ? { id: auditAppId(app), name: app.name, pid: app.pid, executable: app.executable } : { id: null, name: "(none)", pid: null, executable: null },
        window: window ? { id: window.windowId, title: window.title } : null,
      };
      const base = { event: "decision" as const, command, appId: app ? auditAppId(app) : null, pid: app?.pid ?? null, windowId: window?.windowId ?? null, decisionSource: "confirm", rule: `command:${action}` };
      try {
        operator.progress?.({ kind: "confirm" });
        await runConfirm(hook.command, description, hook.timeoutMs, { env });
        audit({ ...base, decision: "allow", outcome: "OK" });
      } catch (err) {
        audit({ ...base, decision: "deny", outcome: err instanceof DeckhandError ? err.code : "INTERNAL", delivery: "not_dispatched" });
        throw err;
      }
    },

    foregroundGranted() {
      return foregroundGranted({ flag: operator.allowForeground === true, sessionGrant: session.sessionGrant === true, policy });
    },

    audit(e) {
      audit({ ...e, rule: e.rule ? safeRule(e.rule) : null });
    },

    pauseOnUserInput() {
      return pauseOnUserInput(policy);
    },

    hasBlockedUrls() {
      return blockedUrlGlobs(policy).length > 0;
    },

    isBrowser(app) {
      return isBrowser(identityOf(app));
    },

    checkUrl(app, url) {
      assertUrlAllowed(policy, identityOf(app), url);
    },
  };
}

/** Rules are references like builtin:terminal:xterm; keep them inside the audit's alphabet. */
function safeRule(rule: string): string {
  return rule.replace(/[^A-Za-z0-9_.:=[\]-]/g, "_").slice(0, 128) || "unknown";
}
