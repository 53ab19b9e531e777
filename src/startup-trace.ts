// DECKHAND_TRACE_STARTUP=1: where a one-shot CLI call spends its time, as
// phases on stderr (milliseconds since the process started), for bench/ and
// for anyone chasing the cold path. Off, it costs one environment read.
const on = process.env.DECKHAND_TRACE_STARTUP === "1";
const marks: [string, number][] = [];

/** Note that a phase ended now. */
export function mark(phase: string): void {
  if (on) marks.push([phase, performance.now()]);
}

/** Print the phases (once, at exit). */
export function flushTrace(): void {
  if (!on || marks.length === 0) return;
  process.stderr.write(`deckhand: startup ${marks.map(([p, t]) => `${p}=${t.toFixed(1)}`).join(" ")}\n`);
  marks.length = 0;
}
