// What the orchestrator may learn of the host OS without the helper, behind
// one neutral interface. The helper is the primary source of every platform
// fact (process identity included: list_apps); the host is asked only where
// the helper said nothing (see src/platform/linux.ts, the only module that
// reads the OS itself). On a host without such a reader every answer is null.
import { LINUX_TOOLKIT_TREE_ADVICE, procAlive, procComm, procExe, procIsDescendant, procStartTime } from "./linux.ts";

export interface HostProcessFacts {
  /**
   * The live process start witness, comparable to the helper's WireApp
   * start_time (same pid + same start time = same process); null when the
   * process is gone or the host gives no such reading.
   */
  startTime(pid: number): number | null;
  /** The executable the OS records for a live process, and whether it was replaced on disk since it started. */
  executable(pid: number): { path: string; deleted: boolean } | null;
  /** The name the OS records for the process (at most 15 characters on Linux). */
  processName(pid: number): string | null;
}

// ---- issue 13: app lifecycle
/**
 * Process tree facts for waiting on a launched app: whether a process runs,
 * and whether it descends from another (the window of an app started
 * through a wrapper belongs to a child). Null where the host cannot tell.
 */
export interface HostProcessTree {
  /** The process runs (not exited, not an unreaped zombie); null when unknown. */
  alive(pid: number): boolean | null;
  /** `ancestor` is a parent, grandparent... of `pid`; null when unknown. */
  isDescendant(pid: number, ancestor: number): boolean | null;
}

/** The host's process tree facts: read from the OS on Linux; elsewhere every answer is null, `alive` asked of the OS by signal 0. */
export function hostProcessTree(platform: NodeJS.Platform = process.platform, opts: { procRoot?: string } = {}): HostProcessTree {
  if (platform !== "linux") {
    return {
      alive: (pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch (err) {
          return (err as NodeJS.ErrnoException).code === "EPERM" ? true : false;
        }
      },
      isDescendant: () => null,
    };
  }
  return { alive: (pid) => procAlive(pid, opts.procRoot), isDescendant: (pid, ancestor) => procIsDescendant(pid, ancestor, opts.procRoot) };
}
// ---- end lifecycle

/** A host the orchestrator cannot read: every fact comes from the helper. */
export const NO_HOST_FACTS: HostProcessFacts = Object.freeze({
  startTime: () => null,
  executable: () => null,
  processName: () => null,
});

/** The host's process facts: read from the OS on Linux, none elsewhere. `procRoot`: tests only. */
export function hostProcessFacts(platform: NodeJS.Platform = process.platform, opts: { procRoot?: string } = {}): HostProcessFacts {
  if (platform !== "linux") return NO_HOST_FACTS;
  return {
    startTime: (pid) => procStartTime(pid, opts.procRoot),
    executable: (pid) => procExe(pid, opts.procRoot),
    processName: (pid) => procComm(pid, opts.procRoot),
  };
}

/** Advice for an app of `toolkit` (as the helper names it) that exposes no accessibility tree, if any is known. */
export function toolkitTreeAdvice(toolkit: string): string | undefined {
  return Object.hasOwn(LINUX_TOOLKIT_TREE_ADVICE, toolkit) ? LINUX_TOOLKIT_TREE_ADVICE[toolkit] : undefined;
}
