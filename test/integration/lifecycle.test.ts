// issue 13 (lifecycle): launch, activate, quit, list-apps --all and
// --restore-window against the fake helper: what reaches the helper, in
// which order, and what is refused before anything does. The fake's
// installed apps: Fixture, Example Editor (starts pid 7777 with a window and
// a tree), XTerm, a terminal behind `env`, Htop (Terminal=true), a
// NoDisplay URL handler (test/fixtures/helpers/fake-helper.mjs).
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, FIXTURE_WINDOW, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const launches = (sb: Sandbox) => sb.requests().filter((r) => r.op === "launch");
const windowOps = (sb: Sandbox) => sb.requests().filter((r) => r.op === "window_op");
const control = (sb: Sandbox, c: Record<string, unknown>) => sb.control(c as never);

function hook(sb: Sandbox, name: string, body: string): string {
  const path = join(sb.dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

function auditLines(sb: Sandbox): Record<string, unknown>[] {
  try {
    return readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}

describe("launch: policy first", () => {
  it.each([
    ["a terminal by desktop id", "debian-xterm"],
    ["a terminal by its name", "XTerm"],
    ["a terminal by executable path", "/usr/bin/xterm"],
    ["a terminal behind env (Exec=env FOO=1 xterm)", "env-xterm.desktop"],
  ])("%s -> POLICY_DENIED; no launch reaches the helper", async (_what, selector) => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["launch", "--app", selector]), "launch", "POLICY_DENIED");
    expect(e.details.source).toBe("builtin");
    expect(String(e.details.rule)).toMatch(/^builtin:terminal:/);
    expect(launches(sb)).toEqual([]);
    expect(sb.ops()).not.toContain("list_windows");
    // The refusal is on record.
    expect(auditLines(sb).some((l) => l.command === "launch" && l.decision === "deny" && l.outcome === "POLICY_DENIED")).toBe(true);
  });

  it("an app that runs inside a terminal -> LAUNCH_FAILED terminal-app, nothing started", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["launch", "--app", "htop"]), "launch", "LAUNCH_FAILED");
    expect(e.details).toMatchObject({ reason: "terminal-app", desktopId: "htop.desktop" });
    expect(launches(sb)).toEqual([]);
  });

  it("nothing by that name -> LAUNCH_FAILED not-found; while paused -> PAUSED; nothing started", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["launch", "--app", "deckhand-no-such-app"]), "launch", "LAUNCH_FAILED");
    expect(e.details.reason).toBe("not-found");
    expectOk(await cli(sb, ["pause"]), "pause");
    expectError(await cli(sb, ["launch", "--app", "org.example.Editor"]), "launch", "PAUSED");
    expect(launches(sb)).toEqual([]);
  });

  it("the helper's exec failure is LAUNCH_FAILED with its reason", async () => {
    const sb = sandbox();
    control(sb, { launchFails: "not-executable" });
    const e = expectError(await cli(sb, ["launch", "--app", "org.example.Editor"]), "launch", "LAUNCH_FAILED");
    expect(e.details.reason).toBe("not-executable");
    expect(launches(sb)).toHaveLength(1);
  });
});

describe("launch: start and wait", () => {
  it("an installed app by desktop id: its entry's program, then its window and tree, as list-apps shows it", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["launch", "--app", "org.example.Editor.desktop", "--timeout-ms", "5000"]), "launch");
    expect(r.app).toMatchObject({ pid: 7777, name: "Example Editor", desktopId: "org.example.Editor.desktop", accessible: true, windowCount: 1 });
    expect(r.windows).toEqual([expect.objectContaining({ windowId: 0x777001, title: "Example Editor", windowIndex: 0 })]);
    expect(r.launched).toMatchObject({ pid: 7777, desktopId: "org.example.Editor.desktop", executable: "/usr/bin/example-editor", handedOff: false });
    expect(r.treeNodes).toBeGreaterThan(1);
    const sent = launches(sb);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.args).toEqual({ executable: "/usr/bin/example-editor", args: [], desktop_id: "org.example.Editor.desktop" });
    // Installed apps are read, and policy decided, before the launch.
    const ops = sb.ops();
    expect(ops.indexOf("list_installed")).toBeLessThan(ops.indexOf("launch"));
    expect(ops.slice(ops.indexOf("launch"))).toContain("get_tree");
  });

  it("by name and by program basename the same entry; serve passes args", async () => {
    const sb = sandbox();
    expect(expectOk(await cli(sb, ["launch", "--app", "Example Editor", "--timeout-ms", "5000"]), "launch").launched.desktopId).toBe("org.example.Editor.desktop");
    expect(expectOk(await cli(sb, ["launch", "--app", "example-editor", "--args", "--new", "--args", "a b", "--timeout-ms", "5000"]), "launch").launched.args).toEqual(["--new", "a b"]);
    expect(launches(sb).at(-1)!.args).toMatchObject({ args: ["--new", "a b"] });
  });

  it("a program that never shows a window -> LAUNCH_TIMEOUT stage window, left running (not killed)", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["launch", "--app", "/bin/sleep", "--args", "60", "--timeout-ms", "600"]), "launch", "LAUNCH_TIMEOUT");
    expect(e.details).toMatchObject({ stage: "window", pid: 7788 });
    expect(e.message).toMatch(/left running/);
    expect(launches(sb)[0]!.args).toMatchObject({ executable: "/bin/sleep", args: ["60"], desktop_id: null });
    expect(sb.ops().filter((o) => o === "window_op")).toEqual([]);
  });
});

describe("list-apps --all", () => {
  it("adds the installed apps not running (NoDisplay ones left out); running apps gain installed and a desktop id", async () => {
    const sb = sandbox();
    const plain = expectOk(await cli(sb, ["list-apps"]), "list-apps");
    expect(plain.apps.every((a: Record<string, unknown>) => !("running" in a) && !("installed" in a) && typeof a.pid === "number")).toBe(true);
    const all = expectOk(await cli(sb, ["list-apps", "--all"]), "list-apps").apps as Record<string, unknown>[];
    expect(all.find((a) => a.name === "Example Editor")).toMatchObject({ pid: null, running: false, installed: true, desktopId: "org.example.Editor.desktop", terminal: false });
    expect(all.find((a) => a.name === "URL Handler")).toBeUndefined();
    expect(all.find((a) => a.pid === 4242)).toMatchObject({ running: true, installed: true });
    // xterm runs (pid 4343) and is installed: matched, not listed twice.
    expect(all.filter((a) => a.name === "XTerm" || a.name === "xterm")).toEqual([expect.objectContaining({ pid: 4343, running: true, installed: true, desktopId: "debian-xterm.desktop" })]);
    expect(all.find((a) => a.pid === 5001)).toMatchObject({ running: true, installed: false });
  });
});

describe("activate", () => {
  it("without the foreground grant -> FOREGROUND_REQUIRED, nothing sent", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["activate", "--app", "fixture-app"]), "activate", "FOREGROUND_REQUIRED");
    expect(e.details.delivery).toBe("not_dispatched");
    expect(windowOps(sb)).toEqual([]);
  });

  it("granted: window_op activate on the app's window; a denied app is refused before", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["activate", "--app", "fixture-app", "--allow-foreground"]), "activate");
    expect(r).toMatchObject({ app: { pid: 4242 }, windowId: FIXTURE_WINDOW, activated: true, wasMinimized: false });
    expect(windowOps(sb).map((r) => r.args)).toEqual([{ window_id: FIXTURE_WINDOW, op: "activate" }]);
    expectError(await cli(sb, ["activate", "--app", "xterm", "--allow-foreground"]), "activate", "POLICY_DENIED");
    expect(windowOps(sb)).toHaveLength(1);
  });
});

describe("quit", () => {
  it("without a confirm hook -> CONFIRM_REQUIRED, no window closed", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, ["quit", "--app", "fixture-app"]), "quit", "CONFIRM_REQUIRED");
    expect(e.details.delivery ?? "not_dispatched").toBe("not_dispatched");
    expect(windowOps(sb)).toEqual([]);
  });

  it("a hook that refuses -> CONFIRM_DENIED, nothing closed; a denied app is refused before the hook runs", async () => {
    const sb = sandbox();
    const asked = join(sb.dir, "asked.json");
    const deny = hook(sb, "deny.sh", `cat > "${asked}"\nexit 1`);
    expectError(await cli(sb, ["quit", "--app", "fixture-app", "--confirm-cmd", deny]), "quit", "CONFIRM_DENIED");
    expect(JSON.parse(readFileSync(asked, "utf8"))).toMatchObject({ version: 1, command: "quit", action: "quit", app: { pid: 4242 }, window: { id: FIXTURE_WINDOW } });
    expect(windowOps(sb)).toEqual([]);
    writeFileSync(asked, "");
    expectError(await cli(sb, ["quit", "--app", "xterm", "--confirm-cmd", deny]), "quit", "POLICY_DENIED");
    expect(readFileSync(asked, "utf8")).toBe("");
  });

  it("a hook that allows: close on each top-level window, never a kill", async () => {
    const sb = sandbox();
    const allow = hook(sb, "allow.sh", "cat >/dev/null\nexit 0");
    const r = expectOk(await cli(sb, ["quit", "--app", "fixture-app", "--confirm-cmd", allow, "--timeout-ms", "300"]), "quit");
    expect(windowOps(sb).map((x) => x.args)).toEqual([
      { window_id: FIXTURE_WINDOW, op: "close" },
      { window_id: 0x200002, op: "close" },
    ]);
    expect(r.windowsClosed).toBe(2);
    expect(r.app.pid).toBe(4242);
  });
});

describe("--restore-window", () => {
  it("a minimized target window is restored before the step; without the flag nothing is restored", async () => {
    const sb = sandbox();
    control(sb, { minimizedWindows: [FIXTURE_WINDOW] });
    const click = ["click", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--x", "50", "--y", "50"];
    // Minimized, the window is not under its point: the click is refused there.
    expect(expectError(await cli(sb, click), "click", "POLICY_DENIED").details.reason).toBe("point-outside-target");
    expect(windowOps(sb)).toEqual([]);
    expectOk(await cli(sb, [...click, "--restore-window"]), "click");
    const ops = sb.ops();
    const last = ops.lastIndexOf("window_op");
    expect(windowOps(sb).map((x) => x.args)).toEqual([{ window_id: FIXTURE_WINDOW, op: "restore" }]);
    expect(ops.indexOf("element_action", last)).toBeGreaterThan(last);
  });

  it("a window that is not minimized: nothing sent; a program's restoreWindow does the same", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--window-id", String(FIXTURE_WINDOW), "--x", "50", "--y", "50", "--restore-window"]), "click");
    expect(windowOps(sb)).toEqual([]);
    control(sb, { minimizedWindows: [FIXTURE_WINDOW] });
    const program = { app: "fixture-app", windowId: FIXTURE_WINDOW, restoreWindow: true, steps: [{ action: "click", x: 50, y: 50 }], observe: false };
    expectOk(await cli(sb, ["run"], { stdin: JSON.stringify(program) }), "run");
    expect(windowOps(sb).map((x) => x.args)).toEqual([{ window_id: FIXTURE_WINDOW, op: "restore" }]);
  });
});

describe("a helper without the lifecycle ops (a macOS or Windows helper today)", () => {
  it("launch, list-apps --all, activate and quit are refused by capability: ACTION_UNSUPPORTED, nothing sent", async () => {
    const sb = sandbox();
    const cases: [string[], string, string][] = [
      [["launch", "--app", "org.example.Editor"], "launch", "launch"],
      [["list-apps", "--all"], "list-apps", "list_installed"],
      [["activate", "--app", "fixture-app", "--allow-foreground"], "activate", "window_op"],
      [["quit", "--app", "fixture-app", "--confirm-cmd", "/bin/true"], "quit", "window_op"],
    ];
    for (const [argv, command, capability] of cases) {
      const e = expectError(await cli(sb, argv, { mode: `drop-cap:${capability}` }), command, "ACTION_UNSUPPORTED");
      expect(e.details.capability, command).toBe(capability);
    }
    expect(launches(sb)).toEqual([]);
    expect(windowOps(sb)).toEqual([]);
  });
});
