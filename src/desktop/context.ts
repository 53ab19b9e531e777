import type { Daemon, SpawnDaemonOptions } from "./processes.ts";
import type { DesktopUser } from "./user.ts";

/** What every start-up step shares. */
export interface StartContext {
  /** Environment for the desktop's own daemons. */
  env: Record<string, string>;
  logDir: string;
  persistent: boolean;
  timeoutMs: number;
  /** Every process started so far, for tear-down on failure. */
  started: Daemon[];
  log?: (line: string) => void;
  /** Who the desktop's processes run as (a Wayland desktop started by root); undefined: deckhand's own user. */
  user?: DesktopUser;
  /** HOME for processes run as `user`. */
  home?: string;
  daemonOptions(extra?: Partial<SpawnDaemonOptions>): SpawnDaemonOptions;
}
