// Which helper requests are foreground input, and the hook that makes each
// of them hold the cross-process foreground lease (src/session/foreground-lease.ts):
// inside a program the first one takes it for the rest of the program (the
// executor's scope), anywhere else it is held around that one request.
import { Supervisor, type HelperReply, type RequestOptions, type SupervisorOptions } from "../helpers/supervisor.ts";
import type { ForegroundLease } from "../session/foreground-lease.ts";
import type { OpArgs, OpName } from "../wire/messages.ts";

/**
 * The helper ops that send real pointer or keyboard input (or take the
 * foreground): one process at a time. Ops added elsewhere that do (a paste,
 * activating a window) belong here too.
 */
export const FOREGROUND_OPS: readonly string[] = Object.freeze([
  "input",
  "paste",
  // ---- issue 15: click
  // It may send XTest input (a point that is no press-like control).
  "point_click",
  // ---- end click
]);

/**
 * Whether this request takes the foreground: an op of FOREGROUND_OPS, or
 * window_op's `activate` (it moves keyboard focus to another window, which
 * would redirect another process's typing mid-text); restore and close do not.
 */
export function isForegroundOp(op: string, args?: unknown): boolean {
  if (op === "window_op") return (args as { op?: unknown } | undefined)?.op === "activate";
  return FOREGROUND_OPS.includes(op);
}

/** The engine's supervisor: every foreground op goes through the lease, waiting (bounded, cancellable) for it. */
export class LeasedSupervisor extends Supervisor {
  constructor(
    opts: SupervisorOptions,
    private readonly lease: ForegroundLease,
  ) {
    super(opts);
    this.ambient = opts.ambientSignal;
  }

  private readonly ambient: SupervisorOptions["ambientSignal"];

  override async request<O extends OpName>(op: O, args: OpArgs<O>, opts: RequestOptions = {}): Promise<HelperReply<O>> {
    if (!isForegroundOp(op, args)) return await super.request(op, args, opts);
    // The wait ends with the request's cancellation, as the request itself would.
    const signal = opts.signal === undefined ? this.ambient?.() : (opts.signal ?? undefined);
    return await this.lease.hold(`helper ${op}`, { signal }, () => super.request(op, args, opts));
  }
}
