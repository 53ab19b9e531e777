// Issue 10.1 (orchestrator side): which window a point is over, judged from
// the listed stacking order with window-manager frames, and paste chords.
import { describe, expect, it } from "vitest";
import { pointVerdict, pointerGuard, type PointerScope } from "../../../src/program/pointer.ts";
import { isPasteChord } from "../../../src/program/live-checks.ts";
import { parseChord } from "../../../src/protocol/keys.ts";
import type { WireWindow } from "../../../src/wire/messages.ts";

const win = (window_id: number, pid: number | null, z_index: number, x: number, y: number, width: number, height: number, minimized = false): WireWindow => ({
  window_id,
  pid,
  z_index,
  title: `w${window_id}`,
  bounds: { x, y, width, height },
  minimized,
});

// Target pid 10: window 1 allowed, window 2 denied by policy (e.g. a window_title rule).
// Pid 20 (a terminal) has window 3, above window 1 and overlapping its lower part.
const scope: PointerScope = {
  pid: 10,
  allowed: [1],
  windows: [win(1, 10, 1, 100, 100, 400, 300), win(2, 10, 2, 600, 100, 200, 200), win(3, 20, 3, 300, 300, 300, 200), win(4, 20, 9, 0, 0, 50, 50, true)],
  denied: new Map([[2, { source: "user", rule: "user:deny[0]" }]]),
};

describe("pointVerdict", () => {
  it("a point in an allowed window's client area is allowed", () => {
    expect(pointVerdict(scope, 150, 150)).toEqual({ ok: true, windowId: 1 });
  });

  it("a point over another app's window above it is refused, client area or frame (title bar)", () => {
    expect(pointVerdict(scope, 350, 350)).toMatchObject({ ok: false, pid: 20, windowId: 3, frame: false });
    // 20 px above window 3's client area: its title bar, over window 1's client area.
    expect(pointVerdict(scope, 350, 280)).toMatchObject({ ok: false, pid: 20, windowId: 3, frame: true });
  });

  it("a point over a window of the target that policy denies is refused", () => {
    expect(pointVerdict(scope, 650, 150)).toMatchObject({ ok: false, pid: 10, windowId: 2 });
    expect(pointVerdict(scope, 650, 80)).toMatchObject({ ok: false, pid: 10, windowId: 2, frame: true });
  });

  it("a point over no window (the root) is refused; minimized windows are not under any point", () => {
    expect(pointVerdict(scope, 1500, 900)).toEqual({ ok: false, pid: null, windowId: null, frame: false });
    expect(pointVerdict(scope, 10, 10)).toMatchObject({ ok: false, pid: null });
  });

  it("an allowed window's own title bar is allowed (the helper, knowing the real frame, decides)", () => {
    expect(pointVerdict(scope, 150, 80)).toEqual({ ok: true, windowId: 1 });
  });

  it("the wire guard names the allowed windows only", () => {
    expect(pointerGuard(scope)).toEqual({ pid: 10, windows: [1] });
  });
});

describe("isPasteChord", () => {
  it("ctrl+v, shift+Insert and ctrl+shift+v, however written", () => {
    for (const c of ["ctrl+v", "Control+V", "shift+Insert", "shift+ins", "ctrl+shift+v", "shift+ctrl+v", "CTRL+SHIFT+V", "v+ctrl"]) {
      expect(isPasteChord(parseChord(c)), c).toBe(true);
    }
  });

  it("other chords are not", () => {
    for (const c of ["ctrl+c", "v", "ctrl+alt+v", "Insert", "ctrl+Insert", "shift+v", "ctrl+s"]) {
      expect(isPasteChord(parseChord(c)), c).toBe(false);
    }
  });
});
