// The terminal progress line (src/cli/progress.ts): when it is drawn, the
// throttle and the tree read's delay (fake timers, so no wall-clock
// thresholds), erasing before any other write, and what it says.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { engineProgress, ProgressLine, progressText, progressWanted, THROTTLE_MS, TREE_DELAY_MS, type ProgressStream } from "../../../src/cli/progress.ts";

const ERASE = "\r\x1b[2K";

/** A terminal stream that records every write, by whoever made it. */
function fakeTerminal(columns = 80): ProgressStream & { writes: string[] } {
  const writes: string[] = [];
  return {
    isTTY: true,
    columns,
    writes,
    write(chunk: string | Uint8Array) {
      writes.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      return true;
    },
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const clock = () => Date.now();

describe("progressWanted", () => {
  it("only on a TTY, and never with DECKHAND_PROGRESS=0 or TERM=dumb", () => {
    expect(progressWanted({ isTTY: true }, {})).toBe(true);
    expect(progressWanted({ isTTY: false }, {})).toBe(false);
    expect(progressWanted({}, {})).toBe(false);
    expect(progressWanted({ isTTY: true }, { DECKHAND_PROGRESS: "0" })).toBe(false);
    expect(progressWanted({ isTTY: true }, { TERM: "dumb" })).toBe(false);
    expect(progressWanted({ isTTY: true }, { DECKHAND_PROGRESS: "1", TERM: "xterm-256color" })).toBe(true);
  });
});

describe("progressText", () => {
  it("numbers steps from 1 and names only the action; a tree read waits before it shows", () => {
    expect(progressText({ kind: "step", index: 1, total: 5, action: "click" })).toEqual(["step 2/5 click…", 0]);
    expect(progressText({ kind: "settle" })).toEqual(["settling…", 0]);
    expect(progressText({ kind: "observe" })).toEqual(["observing…", 0]);
    expect(progressText({ kind: "tree", app: "gedit" })).toEqual(["reading tree of gedit…", TREE_DELAY_MS]);
    expect(progressText({ kind: "confirm" })).toBeNull();
  });

  it("a confirm hook's run erases the line and drops what was waiting to be drawn", () => {
    const t = fakeTerminal();
    const line = new ProgressLine(t, clock);
    const sink = engineProgress(line);
    sink({ kind: "step", index: 0, total: 2, action: "click" });
    sink({ kind: "settle" }); // behind the throttle
    sink({ kind: "confirm" });
    vi.advanceTimersByTime(THROTTLE_MS * 10);
    expect(t.writes).toEqual([`${ERASE}step 1/2 click…`, ERASE]);
    line.dispose();
  });
});

describe("ProgressLine", () => {
  it("draws the first text at once, then at most once per throttle window, the latest text", () => {
    const t = fakeTerminal();
    const line = new ProgressLine(t, clock);
    line.show("step 1/3 click…");
    expect(t.writes).toEqual([`${ERASE}step 1/3 click…`]);
    line.show("step 2/3 wait…");
    line.show("step 3/3 focus…");
    expect(t.writes).toHaveLength(1);
    vi.advanceTimersByTime(THROTTLE_MS);
    // The step in between was never drawn: only the latest text is.
    expect(t.writes).toEqual([`${ERASE}step 1/3 click…`, `${ERASE}step 3/3 focus…`]);
    line.dispose();
  });

  it("a delayed text shows only if nothing replaces or clears it first", () => {
    const t = fakeTerminal();
    const line = new ProgressLine(t, clock);
    line.show("reading tree of gedit…", TREE_DELAY_MS);
    vi.advanceTimersByTime(TREE_DELAY_MS - 1);
    expect(t.writes).toEqual([]);
    line.clear();
    vi.advanceTimersByTime(TREE_DELAY_MS * 10);
    expect(t.writes).toEqual([]);
    line.show("reading tree of gedit…", TREE_DELAY_MS);
    vi.advanceTimersByTime(TREE_DELAY_MS);
    expect(t.writes).toEqual([`${ERASE}reading tree of gedit…`]);
    line.dispose();
  });

  it("clear erases a drawn line once and drops a pending one", () => {
    const t = fakeTerminal();
    const line = new ProgressLine(t, clock);
    line.clear();
    expect(t.writes).toEqual([]); // nothing drawn, nothing to erase
    line.show("a…");
    line.show("b…"); // pending behind the throttle
    line.clear();
    line.clear();
    vi.advanceTimersByTime(THROTTLE_MS * 10);
    expect(t.writes).toEqual([`${ERASE}a…`, ERASE]);
    line.dispose();
  });

  it("any other write to the stream erases the line first, and dispose gives the stream its write back", () => {
    const t = fakeTerminal();
    const own = t.write;
    const line = new ProgressLine(t, clock);
    expect(t.write).not.toBe(own);
    line.show("step 1/2 click…");
    t.write("deckhand: a diagnostic\n");
    t.write("deckhand: another\n");
    expect(t.writes).toEqual([`${ERASE}step 1/2 click…`, ERASE, "deckhand: a diagnostic\n", "deckhand: another\n"]);
    line.dispose();
    expect(t.write).toBe(own);
  });

  it("never wider than the terminal (a wrapped line could not be erased)", () => {
    const t = fakeTerminal(12);
    const line = new ProgressLine(t, clock);
    line.show("reading tree of a-very-long-app-name…");
    // 11 characters: the last column stays free, where some terminals wrap at once.
    expect(t.writes).toEqual([`${ERASE}reading tr…`]);
    line.dispose();
  });

  it("a terminal that reports 0 columns is taken as 80 wide", () => {
    const t = fakeTerminal(0);
    const line = new ProgressLine(t, clock);
    line.show("step 1/1 click…");
    expect(t.writes).toEqual([`${ERASE}step 1/1 click…`]);
    line.dispose();
  });
});
