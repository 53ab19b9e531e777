// Which page a browser shows, read live from its accessibility tree, and the
// blocked-URL check on it (docs/policy.md): before observation, before a
// whole-screen screenshot shows a browser window, and before each step.
import type { WireNode } from "../wire/messages.ts";
import type { Role } from "../wire/vocabulary.ts";
import { isSecureNode } from "../session/snapshot.ts";
import type { HelperPort, SafetyPort } from "./ports.ts";
import type { ResolvedApp } from "./resolve.ts";

/**
 * Browsers: the current page URL, read live from the accessibility tree,
 * must not match a blocked-URL glob. Only asked when the policy has globs.
 */
export async function checkBrowserUrl(engine: HelperPort & SafetyPort, app: ResolvedApp, windowId: number | null): Promise<void> {
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

/** Roles an address bar has. */
const URL_FIELD_ROLES: readonly Role[] = ["text_field", "combo_box"];

/** The page URL a browser's tree shows (its address bar's value), or null. */
export function pageUrl(nodes: readonly WireNode[]): string | null {
  const urlLike = /^[a-z][a-z0-9+.-]*:\/\/\S+$/i;
  const readable = (n: WireNode) => !isSecureNode(n) && !!n.value && urlLike.test(n.value);
  const node = nodes.find((n) => readable(n) && URL_FIELD_ROLES.includes(n.role)) ?? nodes.find(readable);
  return node?.value ?? null;
}
