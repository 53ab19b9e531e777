// src/platform/linux.ts: the orchestrator's only reader of the Linux host
// (procfs), asked only where the helper said nothing. A fake procfs root
// shows the parsing; the live process shows it agrees with the kernel.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LINUX_TOOLKIT_TREE_ADVICE, procComm, procExe, procStartTime } from "../../../src/platform/linux.ts";
import { hostProcessFacts, NO_HOST_FACTS, toolkitTreeAdvice } from "../../../src/platform/index.ts";

const root = mkdtempSync(join(tmpdir(), "deckhand-proc-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function fakeProc(pid: number, files: { stat?: string; comm?: string; exe?: string }): void {
  const dir = join(root, String(pid));
  mkdirSync(dir, { recursive: true });
  if (files.stat !== undefined) writeFileSync(join(dir, "stat"), files.stat);
  if (files.comm !== undefined) writeFileSync(join(dir, "comm"), files.comm);
  if (files.exe !== undefined) symlinkSync(files.exe, join(dir, "exe"));
}

describe("procfs readers (a fake root)", () => {
  it("start time: field 22 of stat, past a comm holding spaces and parentheses", () => {
    const rest = Array.from({ length: 30 }, (_, i) => String(i + 3));
    rest[19] = "987654"; // field 22
    fakeProc(101, { stat: `101 (my (odd) app) ${rest.join(" ")}\n` });
    expect(procStartTime(101, root)).toBe(987654);
    fakeProc(102, { stat: "102 (x) S" });
    expect(procStartTime(102, root)).toBeNull();
    expect(procStartTime(103, root)).toBeNull();
  });

  it("comm trimmed of its newline; empty is none", () => {
    fakeProc(201, { comm: "gnome-terminal-\n" });
    fakeProc(202, { comm: "\n" });
    expect(procComm(201, root)).toBe("gnome-terminal-");
    expect(procComm(202, root)).toBeNull();
  });

  it("exe: the link's target, and whether the kernel marks it deleted", () => {
    fakeProc(301, { exe: "/usr/bin/xterm" });
    fakeProc(302, { exe: "/usr/bin/xterm (deleted)" });
    expect(procExe(301, root)).toEqual({ path: "/usr/bin/xterm", deleted: false });
    expect(procExe(302, root)).toEqual({ path: "/usr/bin/xterm", deleted: true });
  });

  it("invalid pids read nothing", () => {
    for (const pid of [0, -1, 1.5, Number.NaN]) {
      expect(procExe(pid, root)).toBeNull();
      expect(procComm(pid, root)).toBeNull();
      expect(procStartTime(pid, root)).toBeNull();
    }
  });

  it("hostProcessFacts reads the root on Linux only", () => {
    expect(hostProcessFacts("linux", { procRoot: root }).processName(201)).toBe("gnome-terminal-");
    expect(hostProcessFacts("darwin", { procRoot: root })).toBe(NO_HOST_FACTS);
    expect(NO_HOST_FACTS.executable(301)).toBeNull();
  });
});

describe.runIf(process.platform === "linux")("procfs readers (this process)", () => {
  it("agree with the kernel about the test runner itself", () => {
    expect(procStartTime(process.pid)).toBeGreaterThan(0);
    expect(procExe(process.pid)).toMatchObject({ path: expect.stringMatching(/^\//), deleted: false });
    expect(procComm(process.pid)).toBeTruthy();
    expect(hostProcessFacts().startTime(process.pid)).toBe(procStartTime(process.pid));
  });
});

describe("toolkit advice", () => {
  it("is the Linux table's, and none for a toolkit it does not know", () => {
    expect(toolkitTreeAdvice("qt5")).toBe(LINUX_TOOLKIT_TREE_ADVICE.qt5);
    expect(toolkitTreeAdvice("something-new")).toBeUndefined();
    expect(toolkitTreeAdvice("constructor")).toBeUndefined();
  });
});
