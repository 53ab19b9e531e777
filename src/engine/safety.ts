// The seam between the engine and the safety rules (src/policy, src/confirm,
// src/audit). The engine asks; these answer. Nothing here talks to a helper.
import type { Step } from "../protocol/program.ts";
import type { Element, SnapshotApp, SnapshotWindow } from "../session/snapshot.ts";

export interface AuditEntry {
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
  /** Per step, before dispatch: secure fields, sensitive actions (confirm hook), blocked URLs. */
  checkStep(ctx: { app: SnapshotApp; window: SnapshotWindow | null; step: Step; element: Element | null; command: string }): Promise<void>;
  /** Only the operator grants foreground input: a flag, a serve option, or policy. */
  foregroundGranted(): boolean;
  audit(entry: AuditEntry): void;
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
