// Element-to-element drag (drag --from-element-index A --to-element-index B):
// where the pointer goes is decided from the LIVE tree, not the snapshot's
// bounds (a window moved, a list scrolled), from the centre of A to the
// centre of B, with the motion drag-and-drop protocols need; and whether the
// drop did anything is read back from the target's own tree.
//
// The rule for the result (docs/cli.md, ElementDrag): the drop is verified
// when the target's node or anything under it reads differently after the
// drop than just before it (verification.verified true, `targetChanged`
// says what). When it reads the same, verified is false and the step still
// completes (ok: true): the input was delivered whole (every button
// released), and what a drop does is the app's to decide: it may refuse it,
// or put its effect elsewhere (the source list, a file, another window);
// deckhand cannot know which was meant, so it reports the evidence instead of
// guessing a failure. null: the target could not be read again.
import { DeckhandError } from "../protocol/errors.ts";
import type { Role } from "../wire/vocabulary.ts";
import type { InputStep, WireNode } from "../wire/messages.ts";
import { isSecureNode, rememberedSecure, windowKeyOf, type Element } from "../session/snapshot.ts";
import type { CancelSignal, HelperPort, StorePort } from "../engine/ports.ts";
import type { ResolvedApp } from "../engine/resolve.ts";

/** The same bounds as every other live read of a window's tree (activation.ts, live-checks.ts). */
const TREE_LIMITS = { max_depth: 64, max_children: 1000, max_nodes: 5000 } as const;

/** How long the target is watched for the drop's effect, and how often it is read. */
export const DROP_WATCH_MS = 1500;
const DROP_POLL_MS = 100;

export interface DragEndInfo {
  index: number;
  role: Role;
  title: string;
  point: { x: number; y: number };
}

export type TargetChange = "name" | "value" | "description" | "children" | "removed";

export interface ElementDragReport {
  from: DragEndInfo;
  to: DragEndInfo;
  targetChanged: TargetChange[];
  detail: string;
}

/** What the drop target read like just before the input: what verifyDrop compares with. */
interface TargetState {
  name: string;
  value: string | null;
  description: string;
  /** Every node under the target (relative path, role, name, value, description), one line each. */
  subtree: string;
}

/** What the executor needs after the input to verify the drop (Plan `drop`). */
export interface DropCheck {
  pid: number;
  windowId: number;
  from: DragEndInfo;
  to: DragEndInfo;
  targetPath: number[];
  targetNativeRole: string;
  before: TargetState;
}

const samePath = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
const under = (n: WireNode, root: readonly number[]) => n.path.length > root.length && root.every((v, i) => n.path[i] === v);

function stateOf(nodes: readonly WireNode[], target: WireNode): TargetState {
  const subtree = nodes
    .filter((n) => under(n, target.path))
    .map((n) => [n.path.slice(target.path.length).join("."), n.role, n.name, isSecureNode(n) ? null : n.value, n.description].map((v) => JSON.stringify(v)).join(" "))
    .join("\n");
  return { name: target.name, value: isSecureNode(target) ? null : target.value, description: target.description, subtree };
}

/** The node the locator names in a live tree: the same path, native role (or role), name and identifier, as the helper resolves it. */
function located(nodes: readonly WireNode[], el: Element): WireNode | null {
  const n = nodes.find((x) => samePath(x.path, el.locator.path));
  if (!n) return null;
  const sameRole = el.locator.nativeRole !== "" ? n.native_role === el.locator.nativeRole : n.role === el.locator.role;
  return sameRole && n.name === el.locator.name && n.identifier === el.locator.identifier ? n : null;
}

function centre(n: WireNode, end: "from" | "to", el: Element): { x: number; y: number } {
  const b = n.bounds;
  if (!b || b.width <= 0 || b.height <= 0) {
    throw new DeckhandError("ACTION_FAILED", `the drag's ${end} element ${el.index} has no on-screen bounds in the live tree: nothing was sent`, {
      details: { reason: "no-bounds", elementIndex: el.index, end, delivery: "not_dispatched" },
    });
  }
  return { x: b.x + Math.floor(b.width / 2), y: b.y + Math.floor(b.height / 2) };
}

/**
 * Both ends read from one live read of the window: each element found again
 * where the snapshot saw it (else ELEMENT_UNRESOLVABLE), neither secure (a
 * drop into a password field would paste into it), each with on-screen
 * bounds; and the target's state before the drop.
 */
export async function liveDragEnds(engine: HelperPort & StorePort, app: ResolvedApp, windowId: number, from: Element, to: Element): Promise<Omit<DropCheck, "pid">> {
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, ...TREE_LIMITS });
  const remembered = engine.store.secureLocators(windowKeyOf(app, windowId));
  const ends = ([["from", from], ["to", to]] as const).map(([end, el]) => {
    const n = located(result.nodes, el);
    if (!n) {
      throw new DeckhandError("ELEMENT_UNRESOLVABLE", `the drag's ${end} element ${el.index} is no longer where the snapshot saw it (same place, role, name and identifier): nothing was sent`, {
        details: { elementIndex: el.index, end, delivery: "not_dispatched" },
      });
    }
    if (el.secure || isSecureNode(n) || rememberedSecure(n, remembered)) {
      throw new DeckhandError("POLICY_DENIED", `the drag's ${end} element ${el.index} is a secure (password) field: a drag there would move text into or out of it`, {
        details: { source: "builtin", rule: "builtin:secure_field", reason: "drag", elementIndex: el.index, end, delivery: "not_dispatched" },
      });
    }
    const info: DragEndInfo = { index: el.index, role: el.role, title: el.title, point: centre(n, end, el) };
    return { n, info };
  });
  const [a, b] = ends as [(typeof ends)[0], (typeof ends)[0]];
  return { windowId, from: a.info, to: b.info, targetPath: [...b.n.path], targetNativeRole: b.n.native_role, before: stateOf(result.nodes, b.n) };
}

const DRAG_PAUSE_MS = 15;

/**
 * The pointer motion of one drag from a to b, button held. Toolkits start a
 * drag only once the pointer moved past a threshold with the button down
 * (GTK 3: 8 px), and see motion that arrives in one burst as one event; a
 * browser's HTML5 drag needs several moves over the target (dragenter, then
 * dragover) before a drop is accepted. So: press, a few small steps past the
 * threshold, the way there in short steps, a few small moves over the target,
 * then the release, with a short pause after each as a person's hand makes.
 * After the release the pointer stirs 1 px and comes back to B: on Wayland
 * Qt 5 takes the compositor's pointer enter at the drop's end as nothing
 * (its window left at the drag's start, and it logged no Enter after the
 * drop until the pointer moved), so without it the app holds the pointer to
 * be outside its window where a person's hand would have moved on.
 */
export function dragMotion(a: { x: number; y: number }, b: { x: number; y: number }, button: "left" | "right" | "middle" | "back" | "forward"): InputStep[] {
  const pause = (ms: number): InputStep => ({ kind: "wait", ms });
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const dist = Math.hypot(dx, dy);
  const at = (d: number) => ({ kind: "move" as const, x: Math.round(a.x + (dx * d) / dist), y: Math.round(a.y + (dy * d) / dist) });
  const steps: InputStep[] = [{ kind: "move", x: a.x, y: a.y }, pause(60), { kind: "button", button, down: true }, pause(80)];
  // Past the drag threshold a few pixels at a time.
  for (const d of [3, 6, 10, 16]) if (d < dist) steps.push(at(d), pause(25));
  // The way there: about every 24 px, 6 to 40 moves.
  const n = Math.max(6, Math.min(40, Math.round(dist / 24)));
  for (let i = 1; i <= n; i++) steps.push(at(16 + ((dist - 16) * i) / n), pause(DRAG_PAUSE_MS));
  // Over the target: small moves around its centre, then still.
  for (const [ox, oy] of [[2, 0], [0, 2], [-2, 0], [0, -2]] as const) steps.push({ kind: "move", x: b.x + ox, y: b.y + oy }, pause(50));
  steps.push({ kind: "move", x: b.x, y: b.y }, pause(150), { kind: "button", button, down: false }, pause(150));
  steps.push({ kind: "move", x: b.x + 1, y: b.y }, pause(25), { kind: "move", x: b.x, y: b.y }, pause(25));
  return steps;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

const PREDICATE = "the drop target's node or subtree reads differently after the drop than just before it";

/**
 * After the input: watch the target (bounded, DROP_WATCH_MS) until its tree
 * reads differently from before the drop. Never throws: the input was
 * already delivered, so a failed read makes the verification unknown (null),
 * not the step failed.
 */
export async function verifyDrop(engine: HelperPort & CancelSignal, drop: DropCheck): Promise<{ verification: { verified: boolean | null; predicate: string | null }; drag: ElementDragReport }> {
  const report = (targetChanged: TargetChange[], detail: string) => ({ from: drop.from, to: drop.to, targetChanged, detail });
  const until = Date.now() + DROP_WATCH_MS;
  try {
    const { supervisor } = await engine.helper();
    for (;;) {
      const { result } = await supervisor.request("get_tree", { pid: drop.pid, window_id: drop.windowId, ...TREE_LIMITS });
      let changed = changesOf(result.nodes, drop);
      // A target gone from its place may be a tree caught mid-update: it counts only if a second read agrees.
      if (changed.length === 1 && changed[0] === "removed") {
        await sleep(DROP_POLL_MS, engine.cancelSignal);
        changed = changesOf((await supervisor.request("get_tree", { pid: drop.pid, window_id: drop.windowId, ...TREE_LIMITS })).result.nodes, drop);
      }
      if (changed.length) {
        return { verification: { verified: true, predicate: PREDICATE }, drag: report(changed, `the drop target's ${changed.join(", ")} changed after the drop (read back from its tree)`) };
      }
      if (Date.now() >= until || engine.cancelSignal?.aborted) break;
      await sleep(DROP_POLL_MS, engine.cancelSignal);
    }
    return {
      verification: { verified: false, predicate: PREDICATE },
      drag: report(
        [],
        `the drop target's tree did not change within ${DROP_WATCH_MS} ms of the drop: the input was delivered, but no effect on the target could be read (the app may have refused the drop, or shown its effect elsewhere)`,
      ),
    };
  } catch (err) {
    const code = err instanceof DeckhandError ? err.code : "INTERNAL";
    return { verification: { verified: null, predicate: null }, drag: report([], `the drop target could not be read again after the drop (${code}): whether the drop took is unknown`) };
  }
}

/** What reads differently at the target's place in the tree. */
function changesOf(nodes: readonly WireNode[], drop: DropCheck): TargetChange[] {
  const n = nodes.find((x) => samePath(x.path, drop.targetPath));
  if (!n || n.native_role !== drop.targetNativeRole) return ["removed"];
  const now = stateOf(nodes, n);
  const out: TargetChange[] = [];
  if (now.name !== drop.before.name) out.push("name");
  if (now.value !== drop.before.value) out.push("value");
  if (now.description !== drop.before.description) out.push("description");
  if (now.subtree !== drop.before.subtree) out.push("children");
  return out;
}
