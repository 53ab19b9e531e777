// Live checks made just before dispatch: what has focus, which page a
// browser shows. Both read the accessibility tree at that moment.
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import type { Engine } from "../engine/engine.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import type { WireNode } from "../wire/messages.ts";

/**
 * Keys typed with no target element land in whatever has focus. If that is a
 * secure (password) field, refuse: an agent must not type into one, even by
 * way of the keyboard. Read live, because focus moves.
 */
export async function checkFocusNotSecure(engine: Engine, app: ResolvedApp, windowId: number | null, step: Step): Promise<void> {
  if (windowId === null) return;
  const { supervisor } = await engine.helper();
  const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 64, max_children: 1000, max_nodes: 5000 });
  const focused = result.nodes.find((n) => n.states.includes("focused"));
  if (focused?.secure) {
    throw new DeckhandError("POLICY_DENIED", `${step.action} would type into a secure (password) field, which has focus`, {
      details: { source: "builtin", rule: "builtin:secure_field", action: step.action },
    });
  }
}

/**
 * Browsers: the current page URL, read live from the accessibility tree,
 * must not match a blocked-URL glob. Only asked when the policy has globs.
 */
export async function checkBrowserUrl(engine: Engine, app: ResolvedApp, windowId: number | null): Promise<void> {
  const safety = engine.safety;
  if (!safety.checkUrl || !safety.isBrowser?.(app) || !safety.hasBlockedUrls?.()) return;
  let url: string | null = null;
  if (windowId !== null) {
    const { supervisor } = await engine.helper();
    const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 40, max_children: 500, max_nodes: 3000 });
    url = pageUrl(result.nodes);
  }
  safety.checkUrl(app, url);
}

/** The page URL a browser's tree shows (its address bar's value), or null. */
export function pageUrl(nodes: readonly WireNode[]): string | null {
  const urlLike = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
  const node = nodes.find((n) => !n.secure && n.value && urlLike.test(n.value) && /entry|text|combo/.test(n.role)) ?? nodes.find((n) => !n.secure && n.value && urlLike.test(n.value));
  return node?.value ?? null;
}
