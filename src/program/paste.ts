// The paste step (issue 13): text through the clipboard into the target.
// With an element: focus it through accessibility and check that keyboard
// focus landed on it (never on a secure field); without one: the focused
// control must not be secure. Then the helper's `paste` op owns the
// selection with the text, sends the paste chord under the focus guard,
// serves the target's requests and puts the previous clipboard back. A
// target that never asked for the text, or an element whose value does not
// read back containing it, is a failure (VERIFICATION_FAILED, delivery
// submitted), never ok.
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import { isSecureNode, type Element } from "../session/snapshot.ts";
import type { Receipt, WireNode } from "../wire/messages.ts";
import type { CancelSignal, HelperPort, StorePort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import { checkFocusNotSecure } from "./live-checks.ts";
import type { Plan } from "./plan.ts";

export type PastePlan = Extract<Plan, { kind: "paste" }>;

/** How long the helper serves the target's requests at most (it stops ~150 ms after the text was taken). */
export const PASTE_WAIT_MS = 2000;
/** How long focus may take to land on the element, and the pasted text to read back. */
const POLL_MS = 1000;
const POLL_STEP_MS = 40;

/** What the executor makes the step's receipt of. */
export interface PasteOutcome {
  delivery: Receipt["delivery"];
  route: Receipt["route"];
  cleanup: Receipt["cleanup"];
  verification: { verified: boolean | null; predicate: string | null };
  paste: { chars: number; served: number; restored: "text" | "cleared" | "not_restorable" | "skipped" };
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(new DeckhandError("CANCELLED", "paste was cancelled", { details: { delivery: "not_dispatched" } }));
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** focused_element until `done` holds or POLL_MS pass; the last answer. */
async function pollFocused(engine: HelperPort & CancelSignal, app: ResolvedApp, done: (n: WireNode | null) => boolean): Promise<WireNode | null> {
  const { supervisor } = await engine.helper();
  const until = Date.now() + POLL_MS;
  for (;;) {
    const node = (await supervisor.request("focused_element", { pid: app.pid })).result.node;
    if (done(node) || Date.now() >= until) return node;
    await sleep(POLL_STEP_MS, engine.cancelSignal);
  }
}

function locatorOf(el: Element) {
  return { path: el.locator.path, role: el.locator.role, native_role: el.locator.nativeRole, name: el.locator.name, identifier: el.locator.identifier };
}

/** The element's value from its window's tree until `done` holds or POLL_MS pass; null when it cannot be read (gone, no value). */
async function pollValue(engine: HelperPort & CancelSignal, app: ResolvedApp, windowId: number, el: Element, done: (v: string) => boolean): Promise<string | null> {
  const { supervisor } = await engine.helper();
  const until = Date.now() + POLL_MS;
  const path = el.locator.path;
  for (;;) {
    const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: path.length, max_children: 1000, max_nodes: 5000 });
    const n = result.nodes.find((x) => x.path.length === path.length && x.path.every((p, i) => p === path[i]));
    const value = n && isElement(n, el) ? n.value : null;
    if ((value !== null && done(value)) || Date.now() >= until) return value;
    await sleep(POLL_STEP_MS, engine.cancelSignal);
  }
}

/** Whether a node is the element: its native role (or neutral one) and name, as the executor's locator check. */
function isElement(n: WireNode, el: Element): boolean {
  const sameRole = el.locator.nativeRole !== "" ? n.native_role === el.locator.nativeRole : n.role === el.locator.role;
  return sameRole && n.name === el.locator.name;
}

/**
 * Run a paste step. `guard` gives the focus guard of the target window
 * (asked only once keys are about to go: it records the activation).
 */
export async function pasteStep(
  engine: HelperPort & StorePort & CancelSignal,
  plan: PastePlan,
  step: Step,
  app: ResolvedApp,
  windowId: number,
  guard: () => { window_id: number; pid: number; activate: boolean },
): Promise<PasteOutcome> {
  const { supervisor, hello } = await engine.helper();
  const el = plan.element;
  // The focus guard is asked once keys are about to go; with an element,
  // before its focus, which may use the program's activation (below).
  let g = el ? guard() : null;
  if (el) {
    const focusElement = async () => {
      const focused = await supervisor.request("element_action", {
        pid: app.pid,
        window_id: windowId,
        locator: locatorOf(el),
        action: "focus",
        text: null,
        start: null,
        end: null,
        action_name: null,
      });
      // The chord goes where keyboard focus is: this element (the focus action
      // read its focused state back, or the app's focused node is it), and
      // nothing secure. Qt reports a second focused node (its tab), so the
      // app's one focused node need not be the element.
      const readBack = focused.result.verified === true;
      const f = await pollFocused(engine, app, (n) => n !== null && (readBack || isSecureNode(n) || isElement(n, el)));
      return { readBack, f, secure: f !== null && isSecureNode(f) };
    };
    let { readBack, f, secure } = await focusElement();
    // On Wayland a toolkit cannot raise its own window (GTK 3 on sway: the
    // element takes the focus inside its window, which stays inactive, so it
    // never reads back focused). With the grant to activate, the window is
    // activated and the element focused again; on X11 the toolkit's own
    // presenting made this unneeded, and it does not run.
    if (!secure && !(readBack || (f !== null && isElement(f, el))) && g!.activate && hello.capabilities["window_op"]?.supported) {
      await supervisor.request("window_op", { window_id: windowId, op: "activate" });
      ({ readBack, f, secure } = await focusElement());
    }
    if (secure || !(readBack || (f !== null && isElement(f, el)))) {
      throw new DeckhandError(secure ? "POLICY_DENIED" : "ACTION_FAILED", secure ? "focus is on a secure field: nothing pasted, the clipboard untouched" : "focusing the element did not move keyboard focus to it: nothing pasted, the clipboard untouched", {
        details: { reason: secure ? "secure-field-focused" : "focus-elsewhere", delivery: "not_dispatched", ...(secure ? { source: "builtin", rule: "builtin:secure_field" } : {}) },
      });
    }
  } else {
    await checkFocusNotSecure(engine, app, windowId, step, { paste: true });
  }
  g ??= guard();
  const reply = await supervisor.request(
    "paste",
    { selection: plan.selection, text: plan.text, chord: plan.chord, focus: g, restore: plan.restore, wait_ms: PASTE_WAIT_MS },
    { deadlineMs: PASTE_WAIT_MS + 8000 },
  );
  const receipt = reply.receipt!;
  const { served, restored, chars } = reply.result;
  const paste = { chars, served, restored };
  if (served === 0) {
    throw Object.assign(
      new DeckhandError("VERIFICATION_FAILED", "the paste chord was sent, but the target never asked for the clipboard's text: nothing was pasted", {
        remediation: "The focused control did not paste (it may not take text, or not react to the chord). Check what has focus (get-app-state), or use set-value / type-text.",
        details: { reason: "not-requested", served, restored, delivery: receipt.delivery },
      }),
      { receipt },
    );
  }
  let verification: PasteOutcome["verification"] = { verified: null, predicate: null };
  if (el) {
    // The app inserts the text once it has it: read the element back from
    // its window's tree (bounded by its depth), polling briefly.
    const value = await pollValue(engine, app, windowId, el, (v) => v.includes(plan.text));
    if (value !== null && !value.includes(plan.text)) {
      throw Object.assign(
        new DeckhandError("VERIFICATION_FAILED", "the target took the clipboard's text, but the element does not read back containing it", {
          details: { reason: "read-back", served, restored, delivery: receipt.delivery, readBackLength: [...value].length },
        }),
        { receipt },
      );
    }
    if (value !== null) verification = { verified: true, predicate: "the element's value read back contains the pasted text" };
  }
  return { delivery: receipt.delivery, route: receipt.route, cleanup: receipt.cleanup, verification, paste };
}
