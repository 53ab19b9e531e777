import type { StartContext } from "./context.ts";
import { pollUntil } from "./poll.ts";
import { spawnDaemon, type Daemon } from "./processes.ts";
import { X11Connection } from "./x11.ts";

/**
 * openbox, ready once it owns the WM_S0 selection and has published
 * _NET_SUPPORTING_WM_CHECK (EWMH: _NET_CLIENT_LIST, focus and stacking).
 */
export async function startWindowManager(ctx: StartContext, display: string): Promise<Daemon> {
  const daemon = await spawnDaemon("openbox", ["openbox", "--sm-disable"], ctx.daemonOptions());
  ctx.started.push(daemon);
  const x = await X11Connection.open(display);
  try {
    const wmS0 = await x.internAtom("WM_S0");
    const check = await x.internAtom("_NET_SUPPORTING_WM_CHECK");
    await pollUntil(
      "openbox",
      daemon,
      ctx.timeoutMs,
      async () => (await x.getSelectionOwner(wmS0)) !== 0 && (await x.getProperty32(x.root, check)).length > 0,
    );
  } finally {
    x.close();
  }
  return daemon;
}
