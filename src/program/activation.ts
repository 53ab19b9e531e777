// What the confirm decision (src/policy/sensitive.ts decideStep) needs to
// know that the step itself does not say, read live just before the step:
// the window of the element acted on (its default button), where keyboard
// focus is, and what is under the pointer where a button goes down or up.
// Read only when the step could activate something through them, so most
// steps cost no extra request: which facts the decision can use, the safety
// seam says (Safety.confirmFacts).
import type { HelperPort, SafetyPort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { Control, PointerFact, Scene, StepFacts } from "../engine/safety.ts";
import type { Step } from "../protocol/program.ts";
import type { Element, Snapshot } from "../session/snapshot.ts";
import type { InputStep, WireNode } from "../wire/messages.ts";
import { focusedNode } from "./live-checks.ts";
import type { Plan } from "./plan.ts";

const TREE_LIMITS = { max_depth: 64, max_children: 1000, max_nodes: 5000 } as const;

export function controlOfNode(n: WireNode): Control {
  return { role: n.role, name: n.name, states: n.states, actions: [...new Set(n.actions.map((a) => a.name))], index: null };
}

function controlOfElement(e: Element): Control {
  return { role: e.role, name: e.title, states: e.focused ? ["focused"] : [], actions: e.actions, index: e.index };
}

async function windowNodes(engine: HelperPort, app: ResolvedApp, windowId: number, maxDepth?: number): Promise<WireNode[]> {
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, ...TREE_LIMITS, ...(maxDepth !== undefined ? { max_depth: Math.min(maxDepth, TREE_LIMITS.max_depth) } : {}) });
  return result.nodes;
}

/** A window read live: every node with its states (the default button's included). */
export async function liveScene(engine: HelperPort, app: ResolvedApp, windowId: number): Promise<Scene> {
  // An app without a tree has no controls to read: nothing is asked of it,
  // and the decision rests on the policy's app and title rules alone
  // (docs/security.md, "Apps without an accessibility tree").
  if (!app.accessible) return { title: "", role: null, controls: [], statesKnown: false };
  const nodes = await windowNodes(engine, app, windowId);
  const root = nodes.find((n) => n.path.length === 0);
  return { title: root?.name ?? "", role: root?.role ?? null, controls: nodes.map(controlOfNode), statesKnown: true };
}

/** A snapshot's window from its elements: no states, so every sensitive button may be the default. */
export function snapshotScene(snapshot: Snapshot): Scene {
  return { title: snapshot.window.title, role: null, controls: snapshot.elements.map(controlOfElement), statesKnown: false };
}

export interface ActivationContext {
  app: ResolvedApp;
  step: Step;
  plan: Plan;
  /** The element the step acts on (a snapshot element, or a hit-tested node routed to accessibility). */
  element: Element | null;
  snapshot: Snapshot | null;
  /** The target window (the snapshot's, or the resolved one). */
  windowId: number | null;
}

/**
 * The live facts for the confirm decision. A read that fails fails the step
 * (nothing is sent), except the element's window, where the snapshot's
 * elements stand in (every sensitive button counted as the default).
 */
export async function activationFacts(engine: HelperPort & SafetyPort, ctx: ActivationContext): Promise<StepFacts> {
  const { app, step, plan, element, snapshot, windowId } = ctx;
  const rules = engine.safety.confirmFacts;
  const facts: StepFacts = {};
  // The action a secondary step runs, by the platform's name: the decision reads its words too.
  if (plan.kind === "element" && plan.action === "secondary" && plan.actionName !== undefined) facts.nativeAction = plan.actionName;
  if (element) {
    const el = controlOfElement(element);
    const wantsScene = (step.action === "press-key" && rules.stepNeedsFocus(step)) || ((step.action === "click" || step.action === "perform-secondary-action") && rules.stepActivatesElement(step) && rules.isTextLike(el));
    if (wantsScene) facts.elementScene = await elementScene(engine, ctx);
    return facts;
  }
  if (rules.stepNeedsFocus(step)) Object.assign(facts, await focusFacts(engine, app, windowId, snapshot));
  if (plan.kind === "input" && plan.pointer) {
    const pointer: PointerFact[] = [];
    for (const p of pointerPoints(plan.steps)) {
      if (p.button !== "left" && p.button !== "middle") continue;
      pointer.push({ ...p, node: await controlAt(engine, app, p.x, p.y, windowId) });
    }
    if (pointer.length) facts.pointer = pointer;
  }
  return facts;
}

/** The element's window: from the snapshot when it has no sensitive button at all, else read live for the default state. */
async function elementScene(engine: HelperPort & SafetyPort, ctx: ActivationContext): Promise<Scene | null> {
  const { app, plan, snapshot, windowId } = ctx;
  const rules = engine.safety.confirmFacts;
  const hitWindow = plan.kind === "element" ? plan.hitWindow : undefined;
  const fromSnapshot = snapshot && hitWindow === undefined ? snapshotScene(snapshot) : null;
  if (fromSnapshot && !snapshot!.truncated && rules.sensitiveDefault(fromSnapshot) === null) return fromSnapshot;
  const win = hitWindow ?? snapshot?.window.windowId ?? windowId;
  if (win === null || win === undefined) return fromSnapshot;
  try {
    return await liveScene(engine, app, win);
  } catch (err) {
    if (fromSnapshot) return fromSnapshot;
    throw err;
  }
}

/**
 * Where keyboard focus is: the focused node and its window, or (none focused:
 * the window is not active) the target window, whose focus the toolkit
 * restores when the focus guard activates it and which no one can read
 * before. A node focused in another window of the app than the target is
 * judged both ways: the guard may accept that window (a dialog of the
 * target) or activate the target instead.
 */
async function focusFacts(engine: HelperPort, app: ResolvedApp, windowId: number | null, snapshot: Snapshot | null): Promise<Pick<StepFacts, "focus" | "focusIfActivated">> {
  const f = await focusedNode(engine, app, windowId);
  const target = async () => (windowId !== null ? await liveScene(engine, app, windowId) : snapshot ? snapshotScene(snapshot) : null);
  if (!f.node) return { focus: { source: "live", node: null, scene: await target() } };
  const win = f.windowId ?? windowId;
  const focus = { source: "live" as const, node: controlOfNode(f.node), scene: win !== null ? await liveScene(engine, app, win) : snapshot ? snapshotScene(snapshot) : null };
  if (win === windowId || windowId === null) return { focus };
  return { focus, focusIfActivated: { source: "live", node: null, scene: await target() } };
}

/** A button going down or up at a point. */
export type PointAt = Omit<PointerFact, "node"> & { x: number; y: number };

/** Points where a pointer button goes down or up in an input plan, with the keys held then. */
export function pointerPoints(steps: readonly InputStep[]): PointAt[] {
  const out: PointAt[] = [];
  const held: string[] = [];
  let at: { x: number; y: number } | null = null;
  for (const s of steps) {
    if (s.kind === "key") {
      if (s.down) held.push(s.key);
      else held.splice(held.lastIndexOf(s.key), 1);
    } else if (s.kind === "move") {
      at = { x: s.x, y: s.y };
    } else if (s.kind === "click") {
      at = { x: s.x, y: s.y };
      out.push({ gesture: "click", button: s.button, count: s.count, modifiers: [...held, ...s.modifiers], x: s.x, y: s.y });
    } else if (s.kind === "button" && at) {
      out.push({ gesture: s.down ? "press" : "release", button: s.button, count: 1, modifiers: [...held], x: at.x, y: at.y });
    }
  }
  return out;
}

const contains = (b: WireNode["bounds"], x: number, y: number) => !!b && x >= b.x && y >= b.y && x < b.x + b.width && y < b.y + b.height;
const isPrefix = (p: readonly number[], of: readonly number[]) => p.length < of.length && p.every((v, i) => of[i] === v);

/**
 * The control under a point: the hit-tested node when its name is
 * sensitive; else, for a part of a control (no name, or no action of its
 * own: an icon or a label inside a button), the nearest actionable node
 * around it; with no hit test, the nodes of the window whose bounds hold
 * the point. Null when the point is not over the app (the pointer guard
 * refuses those) or nothing is there.
 */
async function controlAt(engine: HelperPort & SafetyPort, app: ResolvedApp, x: number, y: number, windowId: number | null): Promise<Control | null> {
  const rules = engine.safety.confirmFacts;
  const { supervisor, hello } = await engine.helper();
  if (hello.capabilities.hit_test?.supported) {
    const { result } = await supervisor.request("hit_test", { x, y });
    if (result.pid !== app.pid) return null;
    const n = result.node;
    if (n && settlesOnNode(rules, n)) return controlOfNode(n);
    if (result.window_id === null) return n ? controlOfNode(n) : null;
    // issue 14: OCR. An app without a tree has no nodes to read around the point (liveScene's rule).
    if (!app.accessible) return n ? controlOfNode(n) : null;
    if (!n) return await controlAroundPoint(engine, app, x, y, result.window_id);
    // The controls around a hit node are its ancestors: no deeper node is needed (a window's
    // lists and documents below them are not read).
    const nodes = await windowNodes(engine, app, result.window_id, Math.max(0, n.path.length - 1));
    return controlOfChain(rules, n, nodes.filter((a) => isPrefix(a.path, n.path)));
  }
  if (windowId === null || !app.accessible) return null;
  const under = (await windowNodes(engine, app, windowId)).filter((a) => a.path.length > 0 && contains(a.bounds, x, y)).sort((p, q) => q.path.length - p.path.length);
  const hit = under.find((a) => rules.controlSensitivity(a.name)) ?? under[0];
  return hit ? controlOfNode(hit) : null;
}

type Rules = SafetyPort["safety"]["confirmFacts"];

/** The hit node itself decides: its name is sensitive, or it is a named control of its own. */
function settlesOnNode(rules: Rules, n: WireNode): boolean {
  return rules.controlSensitivity(n.name) !== null || (n.name !== "" && n.actions.length > 0);
}

/**
 * The control a point's hit node stands for, from the node and its
 * ancestors (any order; the window root is left out): the node when it
 * settles it, else the nearest actionable ancestor, a sensitive one first,
 * else the node itself.
 */
export function controlOfChain(rules: Rules, n: WireNode, ancestors: readonly WireNode[]): Control {
  if (settlesOnNode(rules, n)) return controlOfNode(n);
  const around = ancestors.filter((a) => a.path.length > 0 && isPrefix(a.path, n.path) && a.actions.length).sort((p, q) => q.path.length - p.path.length);
  const named = around.find((a) => rules.controlSensitivity(a.name)) ?? around[0];
  return controlOfNode(named ?? n);
}

/**
 * A point the hit test found no node at, in a window of an app with a tree:
 * the actionable nodes of the window whose bounds hold it, the deepest (a
 * sensitive one first); null when none does.
 */
export async function controlAroundPoint(engine: HelperPort & SafetyPort, app: ResolvedApp, x: number, y: number, windowId: number): Promise<Control | null> {
  const rules = engine.safety.confirmFacts;
  const around = (await windowNodes(engine, app, windowId)).filter((a) => a.path.length > 0 && a.actions.length && contains(a.bounds, x, y)).sort((p, q) => q.path.length - p.path.length);
  const named = around.find((a) => rules.controlSensitivity(a.name)) ?? around[0];
  return named ? controlOfNode(named) : null;
}
