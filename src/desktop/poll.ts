import { DesktopStartError, tail, type Daemon } from "./processes.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Polls `check` until it returns a value other than undefined/false, with a
 * monotonic deadline and a short, growing interval; never a fixed sleep.
 * Fails early, with its log, if `daemon` exits meanwhile.
 */
export async function pollUntil<T>(
  step: string,
  daemon: Daemon | undefined,
  timeoutMs: number,
  check: () => Promise<T | undefined | false> | T | undefined | false,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let interval = 2;
  for (;;) {
    if (daemon?.exit) {
      const how = daemon.exit.signal ? `signal ${daemon.exit.signal}` : `code ${daemon.exit.code}`;
      throw new DesktopStartError(step, `${daemon.name} exited early (${how})`, tail(daemon.logPath));
    }
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (performance.now() > deadline) {
      throw new DesktopStartError(step, `not ready after ${timeoutMs} ms`, daemon ? tail(daemon.logPath) : "");
    }
    await sleep(interval);
    interval = Math.min(interval * 1.5, 25);
  }
}
