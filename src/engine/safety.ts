// The seam between the engine and the safety rules (src/policy, src/confirm,
// src/audit). The engine asks; these answer. Nothing here talks to a helper.
import { basename } from "node:path";
import type { Step } from "../protocol/program.ts";
import type { Element, SnapshotApp, SnapshotWindow } from "../session/snapshot.ts";
import type { StepFacts } from "../policy/sensitive.ts";

export interface AuditEntry {
  event?: "decision" | "action" | "pause" | "resume";
  rule?: string | null;
  command: string;
  appId?: string | null;
  pid?: number | null;
  windowId?: number | null;
  elementIndex?: number | null;
  decision: "allow" | "deny" | "n/a";
  decisionSource?: string;
  outcome: string;
  delivery?: string;
}

export interface Safety {
  /** PAUSED for a mutating command while paused. */
  checkPaused(command: string): void;
  /** POLICY_DENIED when policy forbids observing or acting on this app/window. */
  checkApp(app: SnapshotApp, window: { title: string } | null, command: string): { source: string; rule: string };
  /**
   * Per step, before dispatch: secure fields, sensitive actions (confirm hook), blocked URLs.
   * `facts`: what the executor read live for the confirm decision (src/program/activation.ts):
   * the element's window, where keyboard focus is, what is under the pointer.
   */
  checkStep(ctx: { app: SnapshotApp; window: SnapshotWindow | null; step: Step; element: Element | null; command: string; facts?: StepFacts }): Promise<void>;
  /**
   * The same decision as checkApp, without throwing or auditing: whole-screen
   * screenshots ask it for every window on screen. Optional for unit-test safeties.
   */
  decideApp?(app: SnapshotApp, window: { title: string } | null): { decision: "allow" | "deny"; source: string; rule: string };
  /** Only the operator grants foreground input: a flag, a serve option, or policy. */
  foregroundGranted(): boolean;
  audit(entry: AuditEntry): void;
  /** Blocked URLs (browsers only); optional so that unit tests can omit them. */
  isBrowser?(app: SnapshotApp): boolean;
  hasBlockedUrls?(): boolean;
  checkUrl?(app: SnapshotApp, url: string | null): void;
  pauseOnUserInput?(): boolean;
  /** The loaded policy (for policy-check's report); absent in unit-test safeties. */
  readonly policy?: import("../policy/load.ts").Policy;
}

/** Used by unit tests of the engine alone: allows everything, records nothing. */
export const permissiveSafety = (foreground = false): Safety => ({
  checkPaused() {},
  checkApp() {
    return { source: "default", rule: "allow" };
  },
  async checkStep() {},
  foregroundGranted: () => foreground,
  audit() {},
});

/** The app id an audit line carries: desktop id or executable basename, never a path or URL. */
export function auditAppId(app: { executable?: string | null; desktopId?: string | null; name: string }): string | null {
  const raw = app.desktopId ?? (app.executable ? basename(app.executable) : app.name);
  const clean = raw.replace(/[/:]/g, "_").replace(/^[^\p{L}\p{N}]+/u, "").slice(0, 200);
  return clean || null;
}
