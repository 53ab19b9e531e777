import type { Daemon, SpawnDaemonOptions } from "./processes.ts";

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
  daemonOptions(extra?: Partial<SpawnDaemonOptions>): SpawnDaemonOptions;
}
