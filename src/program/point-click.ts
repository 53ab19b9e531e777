// A granted click at a point in one helper request (point_click, protocol
// 2.3; issue 15). What the separate requests decided before sending anything
// (planPointClick's hit test against the pointer guard, the route, and the
// confirm decision's read of the control under the point) the helper now
// decides with what the request carries, in the same order, and sends
// nothing when the decision needs this side:
// - a name under the point may be sensitive (the safety seam's words): the
//   helper holds and answers the chain (the node and its ancestors); the
//   confirm decision (Safety.checkStep) judges the control exactly as it
//   would have (activation.ts controlOfChain, or the node itself for a
//   press), and only once it allows does a second request click, and only
//   if the chain under the point is still the one judged (`expect`);
// - no node at the point in an app with a tree: the window is read here
//   (activation.ts controlAroundPoint), as before, then the same second
//   request.
import { DeckhandError } from "../protocol/errors.ts";
import { elementOf, locatorKindOf, type Element } from "../session/snapshot.ts";
import type { OpResult, Receipt, WireNode } from "../wire/messages.ts";
import { PRESS_ACTIONS, PRESS_ROLES } from "../wire/vocabulary.ts";
import type { HelperPort, SafetyPort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { Control, StepFacts } from "../engine/safety.ts";
import { controlAroundPoint, controlOfChain } from "./activation.ts";
import { pressLike, type Plan } from "./plan.ts";
import { outsideTarget, pointerScope, pointVerdict } from "./pointer.ts";

/** The confirm decision for what the helper found under the point (Safety.checkStep with these facts). */
export type PointConfirm = (facts: StepFacts, element: Element | null) => Promise<void>;

type PointPlan = Extract<Plan, { kind: "point" }>;
type PointResult = OpResult<"point_click">;

/** What a point step's receipt says (the executor adds index, action and element). */
export interface PointReceipt {
  status: "completed";
  delivery: Receipt["delivery"];
  route: Receipt["route"];
  verification: { verified: boolean | null; predicate: string | null };
  cleanup: Receipt["cleanup"];
  nativeAction?: string;
}

/** The levels `expect` names: the ancestors below the root, outermost first, then the node. */
export function chainLevels(node: WireNode | null, ancestors: readonly WireNode[]): { path: number[]; native_role: string; name: string }[] {
  return [...ancestors, ...(node ? [node] : [])].map((n) => ({ path: [...n.path], native_role: n.native_role, name: n.name }));
}

/**
 * Run a point plan: one point_click request, or, when the helper held, the
 * decision on what it found and one more request for exactly that.
 */
export async function pointStep(engine: HelperPort & SafetyPort, plan: PointPlan, app: ResolvedApp, confirm: PointConfirm): Promise<PointReceipt> {
  const { supervisor } = await engine.helper();
  const what = `the point (${plan.x}, ${plan.y})`;
  const args = {
    x: plan.x,
    y: plan.y,
    pid: app.pid,
    button: plan.button,
    count: plan.count,
    windows: [...plan.guard.allowed],
    press: plan.press ? { roles: [...PRESS_ROLES], actions: [...PRESS_ACTIONS] } : null,
    hold_words: [...plan.words],
    expect: null,
    restore_pointer: true,
  };
  const ask = async (a: typeof args | (Omit<typeof args, "expect"> & { expect: ReturnType<typeof chainLevels> })) => {
    try {
      return await supervisor.request("point_click", a);
    } catch (err) {
      throw await asOutside(engine, app, err, plan, what);
    }
  };
  let reply = await ask(args);
  if (reply.result.outcome === "held") {
    const first = reply.result;
    const { facts, element } = await decisionFacts(engine, plan, app, first);
    await confirm(facts, element);
    reply = await ask({ ...args, hold_words: [], expect: chainLevels(first.node, first.ancestors) });
    if (reply.result.outcome === "held") {
      throw new DeckhandError("ACTION_FAILED", `${what} shows another control than the one the click was decided for: nothing was sent`, {
        details: { reason: "point-changed", delivery: "not_dispatched" },
      });
    }
  }
  const receipt = reply.receipt!;
  const r = reply.result;
  return {
    status: "completed",
    delivery: receipt.delivery,
    route: receipt.route,
    verification: { verified: r.verified, predicate: r.verification },
    cleanup: receipt.cleanup,
    ...(r.native_action ? { nativeAction: r.native_action } : {}),
  };
}

/**
 * The facts the confirm decision gets for a held click, the same the
 * separate requests gathered: a press-like node pressed through
 * accessibility is the element acted on; otherwise the pointer fact of a
 * click over the control the chain stands for (or, with no node, the
 * window's actionable nodes under the point).
 */
async function decisionFacts(engine: HelperPort & SafetyPort, plan: PointPlan, app: ResolvedApp, held: PointResult): Promise<{ facts: StepFacts; element: Element | null }> {
  const { hello } = await engine.helper();
  const n = held.node;
  if (n && plan.press && pressLike(n)) return { facts: {}, element: elementOf(n, -1, locatorKindOf(hello.helper.platform)) };
  let node: Control | null;
  if (n) node = controlOfChain(engine.safety.confirmFacts, n, held.ancestors);
  else node = app.accessible ? await controlAroundPoint(engine, app, plan.x, plan.y, held.window_id) : null;
  return { facts: { pointer: [{ gesture: "click", button: plan.button, count: plan.count, modifiers: [], node }] }, element: null };
}

/**
 * The helper's guard refusal (nothing sent) as the same POLICY_DENIED the
 * separate requests give: every window listed (only now, on a refusal) to
 * name what covers the point, its frame included; else from the helper's
 * own details.
 */
async function asOutside(engine: HelperPort & SafetyPort, app: ResolvedApp, err: unknown, plan: PointPlan, what: string): Promise<unknown> {
  if (!(err instanceof DeckhandError) || err.code !== "POLICY_DENIED" || err.details.reason !== "point-outside-target") return err;
  if ((err.details.delivery ?? "not_dispatched") !== "not_dispatched") return err;
  try {
    const full = await pointerScope(engine, app);
    const v = pointVerdict(full, plan.x, plan.y);
    if (!v.ok) return outsideTarget(full, v, what);
  } catch {
    // The listing failed: the helper's own words below.
  }
  const pid = typeof err.details.pid === "number" && err.details.pid >= 0 ? err.details.pid : null;
  const windowId = typeof err.details.window_id === "number" && err.details.window_id > 0 ? err.details.window_id : null;
  return outsideTarget(plan.guard, { ok: false, pid, windowId, frame: false }, what);
}
