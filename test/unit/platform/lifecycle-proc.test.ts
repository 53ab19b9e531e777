// issue 13 (lifecycle): the process-tree facts a launch waits with
// (src/platform/linux.ts procAlive, procIsDescendant), on a fake procfs
// root and on this process.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { procAlive, procIsDescendant } from "../../../src/platform/linux.ts";
import { hostProcessTree } from "../../../src/platform/index.ts";

const root = mkdtempSync(join(tmpdir(), "deckhand-proc-tree-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fake /proc/PID/stat: comm (with spaces and parentheses), state, ppid. */
function proc(pid: number, ppid: number, state = "S"): void {
  mkdirSync(join(root, String(pid)), { recursive: true });
  writeFileSync(join(root, String(pid), "stat"), `${pid} (a (b) c) ${state} ${ppid} ${pid} ${pid} 0 -1 4194560\n`);
}

describe("process tree (fake root)", () => {
  proc(10, 1);
  proc(20, 10);
  proc(30, 20);
  proc(40, 1, "Z");
  proc(50, 30, "X");

  it("descendants through any number of parents; not itself, not a sibling", () => {
    expect(procIsDescendant(30, 10, root)).toBe(true);
    expect(procIsDescendant(20, 10, root)).toBe(true);
    expect(procIsDescendant(10, 10, root)).toBe(false);
    expect(procIsDescendant(10, 30, root)).toBe(false);
    expect(procIsDescendant(40, 10, root)).toBe(false);
    expect(procIsDescendant(99, 10, root)).toBe(false);
    expect(procIsDescendant(30, 0, root)).toBe(false);
  });

  it("a zombie or a dead process is not alive; a missing one neither", () => {
    expect(procAlive(10, root)).toBe(true);
    expect(procAlive(40, root)).toBe(false);
    expect(procAlive(50, root)).toBe(false);
    expect(procAlive(99, root)).toBe(false);
  });

  it("a parent loop ends (bounded)", () => {
    proc(60, 61);
    proc(61, 60);
    expect(procIsDescendant(60, 70, root)).toBe(false);
  });
});

describe("the live host", () => {
  it("this process descends from its parent and is alive; elsewhere the answers are unknown", () => {
    expect(procIsDescendant(process.pid, process.ppid)).toBe(true);
    expect(hostProcessTree("linux").alive(process.pid)).toBe(true);
    expect(hostProcessTree("linux").isDescendant(process.pid, process.ppid)).toBe(true);
    expect(hostProcessTree("darwin").isDescendant(process.pid, process.ppid)).toBeNull();
    expect(hostProcessTree("darwin").alive(process.pid)).toBe(true);
  });
});
