// The seam between the engine and the safety rules (src/policy, src/confirm,
// src/audit). The engine asks; these answer. Nothing here talks to a helper.
// Above the engine (src/program, src/commands, the front ends) nothing
// imports src/policy: every policy decision, and every rule of it the
// executor needs, is reached through this interface (the dependency rules
// in .dependency-cruiser.cjs check it; docs/layers.md).
import { basename } from "node:path";
import type { Step } from "../protocol/program.ts";
import type { Element, SnapshotApp, SnapshotWindow } from "../session/snapshot.ts";
import { controlSensitivity, isTextLike, sensitiveDefault, stepActivatesElement, stepNeedsFocus, type Control, type PointerFact, type Scene, type StepFacts } from "../policy/sensitive.ts";
import { NAME_WORDS } from "../policy/sensitive.ts"; // issue 15: click

/** What the confirm decision reads (src/policy/sensitive.ts), for the executor that gathers it (src/program/activation.ts). */
export type { Control, PointerFact, Scene, StepFacts };

/**
 * Which live facts the confirm decision can use for a step, so that the
 * executor reads only those (src/program/activation.ts): the policy's rules
 * of sensitive controls and activating keys.
 */
export interface ConfirmFacts {
  /** Whether a keyboard step needs to know where focus is (an activating key or a mnemonic). */
  stepNeedsFocus(step: Step): boolean;
  /** Whether the step activates its element (a click, a secondary action, an activating key). */
  stepActivatesElement(step: Step): boolean;
  /** Text fields, whose activation presses the window's default button. */
  isTextLike(control: Control): boolean;
  /** The window's sensitive default button, or null. */
  sensitiveDefault(scene: Scene | null | undefined): Control | null;
  /** Why a control's name makes pressing it sensitive, or null. */
  controlSensitivity(name: string | null | undefined): string | null;
  // ---- issue 15: click
  /**
   * The words controlSensitivity finds in names, lowercase, for a helper
   * that holds a click whose chain has a name containing one (or any name
   * outside ASCII) until the decision above has seen it. Absent: the
   * executor reads the point itself before every click.
   */
  readonly nameWords?: readonly string[];
  // ---- end click
}

/** The policy's rules (src/policy/sensitive.ts) as the seam hands them out. */
export const POLICY_CONFIRM_FACTS: ConfirmFacts = Object.freeze({ stepNeedsFocus, stepActivatesElement, isTextLike, sensitiveDefault, controlSensitivity, nameWords: NAME_WORDS });

/** The policy files in force, for policy-check's report. */
export interface PolicyFiles {
  admin: { file: string; broken: string | null } | null;
  user: { file: string } | null;
}

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
   * A command that is sensitive as a whole, not as a program step (quit an
   * app, set the clipboard): the confirm hook decides, its decision audited.
   * CONFIRM_REQUIRED without a hook, CONFIRM_DENIED when it refuses.
   * `action` is the hook's action kind (quit, set_clipboard); `reason` why it
   * is sensitive. Never pass values or clipboard text: the hook's
   * description has no field for them.
   */
  confirmCommand(ctx: { app: SnapshotApp | null; window: { windowId: number; title: string } | null; command: string; action: string; reason: string }): Promise<void>;
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
  /** Which live facts the confirm decision can use (src/program/activation.ts reads only those). */
  readonly confirmFacts: ConfirmFacts;
  /** The policy files in force (policy-check's report); absent in unit-test safeties. */
  policyFiles?(): PolicyFiles;
}

/** Used by unit tests of the engine alone: allows everything, records nothing. */
export const permissiveSafety = (foreground = false): Safety => ({
  checkPaused() {},
  checkApp() {
    return { source: "default", rule: "allow" };
  },
  async checkStep() {},
  async confirmCommand() {},
  foregroundGranted: () => foreground,
  audit() {},
  confirmFacts: POLICY_CONFIRM_FACTS,
});

/** The app id an audit line carries: desktop id or executable basename, never a path or URL. */
export function auditAppId(app: { executable?: string | null; desktopId?: string | null; name: string }): string | null {
  const raw = app.desktopId ?? (app.executable ? basename(app.executable) : app.name);
  const clean = raw.replace(/[/:]/g, "_").replace(/^[^\p{L}\p{N}]+/u, "").slice(0, 200);
  return clean || null;
}
