// Issue 15: a granted coordinate click in one helper request (point_click,
// protocol 2.3), against the scripted helper (mode point-click: the rule of
// helpers/linux-rust/src/ops/point_click.rs). The request log is the oracle:
// which ops reached the "app" and what they carried. What must still hold:
// nothing is sent over another app's window or a window policy denies; a
// sensitive control under the point is confirmed (or refused) before any
// click, whichever route (press or input) it would take; after a
// confirmation the click goes only to the control that was confirmed; a
// helper without the op gets the separate requests.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, FIXTURE_WINDOW, ServeProcess, XTERM_WINDOW, type Sandbox, sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const MODE = "point-click";
const fg = ["--allow-foreground"];
/**
 * The fake's main window: Delete at 30..130 x 70..94 (path [1]); the Name
 * entry at 30..130 x 100..124 (path [2]: named, not press-like, like a
 * canvas: a click there is input); (700, 500) is over no node.
 */
const DELETE_POINT = { x: 80, y: 82 };
const NAME_POINT = { x: 80, y: 110 };
const EMPTY_POINT = { x: 700, y: 500 };
const clickAt = (p: { x: number; y: number }, extra: string[] = []) => ["click", "--app", "fixture-app", "--x", String(p.x), "--y", String(p.y), ...extra];
const sent = (sb: Sandbox) => sb.requests().filter((r) => ["element_action", "input", "point_click"].includes(r.op));
const clicks = (sb: Sandbox) => sb.requests().filter((r) => r.op === "point_click");

/** A confirm hook that appends what it read on stdin to a file, then allows (or exits 1). */
function recorder(sb: Sandbox, allow = true): { cmd: string; asked: () => any[] } {
  const script = join(sb.dir, "hook.sh");
  if (!existsSync(script)) {
    writeFileSync(script, '#!/bin/sh\ncat >> "$1"\nexit "${2:-0}"\n');
    chmodSync(script, 0o755);
  }
  const log = join(sb.dir, allow ? "asked-allow.jsonl" : "asked-deny.jsonl");
  return {
    cmd: `${script} ${log}${allow ? "" : " 1"}`,
    asked: () => (existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []),
  };
}

describe("a granted click at a point is one point_click request", () => {
  it("over a node that is no press-like control: list_windows once, one point_click, no hit_test, tree read or input op", async () => {
    const sb = sandbox();
    const r = await cli(sb, clickAt(NAME_POINT, fg), { mode: MODE });
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ delivery: "submitted", route: "foreground_input", cleanup: { pointer_restored: true } });
    const ops = sb.ops().filter((op) => !["permissions", "list_apps"].includes(op));
    expect(ops).toEqual(["list_windows", "point_click"]);
    const [pc] = clicks(sb);
    // What the helper decides with: the target's allowed windows, the confirm decision's words, the press rule.
    expect(pc!.args).toMatchObject({ x: NAME_POINT.x, y: NAME_POINT.y, pid: 4242, button: "left", count: 1, windows: [FIXTURE_WINDOW, 0x200002], expect: null, restore_pointer: true });
    expect(pc!.args.hold_words).toEqual(expect.arrayContaining(["delete", "send", "pay", "quit"]));
    expect((pc!.args.press as any).roles).toContain("button");
  });

  it("over the OK button: pressed through accessibility in the same request", async () => {
    const sb = sandbox();
    const r = await cli(sb, clickAt({ x: 50, y: 50 }, fg), { mode: MODE });
    const result = expectOk(r, "click");
    expect(result).toMatchObject({ delivery: "submitted", route: "accessibility" });
    expect(sent(sb).map((x) => x.op)).toEqual(["point_click"]);
  });

  it("a serve session: every click is list_windows + point_click, nothing read twice", async () => {
    const sb = sandbox();
    const serve = new ServeProcess(sb, fg, { mode: MODE });
    try {
      for (let i = 0; i < 3; i++) {
        const res = await serve.request({ id: i, command: "click", args: { app: "fixture-app", x: NAME_POINT.x, y: NAME_POINT.y } });
        expect(res.ok, JSON.stringify(res.error)).toBe(true);
      }
    } finally {
      await serve.close();
    }
    const ops = sb.ops().filter((op) => !["permissions", "list_apps"].includes(op));
    expect(ops).toEqual(["list_windows", "point_click", "list_windows", "point_click", "list_windows", "point_click"]);
  });
});

describe("the pointer guard still holds", () => {
  it("a point over another app's window (xterm raised over the fixture): POLICY_DENIED, nothing sent", async () => {
    const sb = sandbox();
    sb.control({ xterm: { bounds: { x: 600, y: 400, width: 300, height: 200 }, z_index: 9 } });
    const r = await cli(sb, clickAt(EMPTY_POINT, fg), { mode: MODE });
    const e = expectError(r, "click", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "point-outside-target", delivery: "not_dispatched", windowId: XTERM_WINDOW, pid: 4343 });
    expect(e.message).toMatch(/another application's window/);
    // The helper was asked (it alone knows what covers the point) and sent nothing.
    expect(sb.requests().filter((x) => x.op === "input" || x.op === "element_action")).toEqual([]);
  });

  it("a window of the target that policy denies is left out of the request's windows, and a point over it refused before any request", async () => {
    const sb = sandbox();
    const policy = join(sb.dir, "policy.toml");
    writeFileSync(policy, '[[deny]]\nwindow_title = "deckhand fixture 2"\n');
    const e = expectError(await cli(sb, ["click", "--app", "fixture-app", "--x", "950", "--y", "60", "--policy", policy, ...fg], { mode: MODE }), "click", "POLICY_DENIED");
    expect(e.details).toMatchObject({ reason: "point-outside-target", pid: 4242, windowId: 0x200002, source: "user", rule: "user:deny[0]", delivery: "not_dispatched" });
    expect(clicks(sb)).toEqual([]);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--x", String(NAME_POINT.x), "--y", String(NAME_POINT.y), "--policy", policy, ...fg], { mode: MODE }), "click");
    expect(clicks(sb)[0]!.args.windows).toEqual([FIXTURE_WINDOW]);
  });

  it("a point outside every window of the target: refused before any request", async () => {
    const sb = sandbox();
    const r = await cli(sb, clickAt({ x: 1500, y: 900 }, fg), { mode: MODE });
    expect(r.envelope.ok).toBe(false);
    expect(clicks(sb)).toEqual([]);
  });
});

describe("a sensitive control under the point is confirmed before any click", () => {
  for (const [label, point, control, route] of [
    ["pressed through accessibility (Delete is press-like)", DELETE_POINT, {}, "accessibility"],
    ["sent as input (an unnamed icon inside Delete, found among the ancestors)", DELETE_POINT, { hitLeaf: true }, "foreground_input"],
  ] as const) {
    it(`${label}: no hook -> CONFIRM_REQUIRED, a refusing hook -> CONFIRM_DENIED, nothing sent; allowed -> one click`, async () => {
      const sb = sandbox();
      sb.control(control);
      // No hook: the helper held (nothing sent), the decision refused.
      expectError(await cli(sb, clickAt(point, fg), { mode: MODE }), "click", "CONFIRM_REQUIRED");
      expect(clicks(sb)).toHaveLength(1);
      expect(sb.requests().filter((x) => x.op === "input" || x.op === "element_action")).toEqual([]);

      const deny = recorder(sb, false);
      expectError(await cli(sb, clickAt(point, [...fg, "--confirm-cmd", deny.cmd]), { mode: MODE }), "click", "CONFIRM_DENIED");
      expect(deny.asked()).toHaveLength(1);
      expect(deny.asked()[0]).toMatchObject({ action: "click", element: { name: "Delete" } });

      const allow = recorder(sb);
      const before = clicks(sb).length;
      const result = expectOk(await cli(sb, clickAt(point, [...fg, "--confirm-cmd", allow.cmd]), { mode: MODE }), "click");
      expect(result.route).toBe(route);
      expect(allow.asked()).toHaveLength(1);
      expect(allow.asked()[0]).toMatchObject({ action: "click", element: { name: "Delete" } });
      // Held, decided, then sent once, for exactly the confirmed chain.
      const pair = clicks(sb).slice(before);
      expect(pair).toHaveLength(2);
      expect(pair[0]!.args.expect).toBeNull();
      expect(pair[1]!.args.hold_words).toEqual([]);
      const levels = pair[1]!.args.expect as { name: string }[];
      expect(levels.map((l) => l.name)).toContain("Delete");
    });
  }

  it("the control changed between the confirmation and the click: nothing sent (ACTION_FAILED point-changed)", async () => {
    const sb = sandbox();
    // The hook renames Delete (as an app relabelling its button would) before allowing.
    const control = join(sb.dir, "control.json");
    const hook = join(sb.dir, "renaming-hook.sh");
    writeFileSync(hook, `#!/bin/sh\ncat > /dev/null\necho '{"replaced": ["1"]}' > ${control}\nexit 0\n`);
    chmodSync(hook, 0o755);
    const e = expectError(await cli(sb, clickAt(DELETE_POINT, [...fg, "--confirm-cmd", hook]), { mode: MODE }), "click", "ACTION_FAILED");
    expect(e.details).toMatchObject({ reason: "point-changed", delivery: "not_dispatched" });
    expect(clicks(sb)).toHaveLength(2);
    expect(sb.requests().filter((x) => x.op === "input" || x.op === "element_action")).toEqual([]);
  });

  it("a name the helper holds that the decision clears (\"Undelete\": the word is only a substring) is clicked after one more request, without asking", async () => {
    const sb = sandbox();
    sb.control({ pointNames: { "1": "Undelete" } });
    const allow = recorder(sb);
    const result = expectOk(await cli(sb, clickAt(DELETE_POINT, [...fg, "--confirm-cmd", allow.cmd]), { mode: MODE }), "click");
    expect(result.route).toBe("accessibility");
    expect(allow.asked()).toEqual([]);
    const [first, second] = clicks(sb);
    expect(first!.args.expect).toBeNull();
    expect(second!.args.expect).toEqual([{ path: [1], native_role: "push button", name: "Undelete" }]);
  });

  it("a right click never presses a control: no words, no press route, no hold", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, clickAt(DELETE_POINT, ["--button", "right", ...fg]), { mode: MODE }), "click");
    const [pc] = clicks(sb);
    expect(pc!.args).toMatchObject({ button: "right", hold_words: [], press: null });
    expect(clicks(sb)).toHaveLength(1);
  });

  it("no node at the point in an app with a tree: the helper holds, the window is read here, then the click (only if still no node)", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, clickAt(EMPTY_POINT, fg), { mode: MODE }), "click");
    const ops = sb.ops().filter((op) => !["permissions", "list_apps"].includes(op));
    expect(ops).toEqual(["list_windows", "point_click", "get_tree", "point_click"]);
    expect(clicks(sb)[1]!.args.expect).toEqual([]);
  });
});

describe("helpers without the op, and clicks it does not take", () => {
  it("a 2.2 helper (no point_click): hit_test, tree read and input as before", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, clickAt(EMPTY_POINT, fg), { mode: `${MODE},drop-cap:point_click` }), "click");
    expect(clicks(sb)).toEqual([]);
    expect(sb.ops()).toContain("hit_test");
    expect(sb.ops()).toContain("input");
  });

  it("a helper claiming point_click but not the pointer guard: the separate requests, which refuse the input (ACTION_UNSUPPORTED), nothing sent", async () => {
    const sb = sandbox();
    const e = expectError(await cli(sb, clickAt(NAME_POINT, fg), { mode: `${MODE},drop-cap:input.pointer_guard` }), "click", "ACTION_UNSUPPORTED");
    expect(String(e.message)).toMatch(/input\.pointer_guard/);
    expect(clicks(sb)).toEqual([]);
    expect(sent(sb)).toEqual([]);
  });

  it("without the grant: the separate requests (a press-like control is still pressed through accessibility)", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, clickAt({ x: 50, y: 50 }), { mode: MODE }), "click");
    expect(clicks(sb)).toEqual([]);
    expect(sent(sb).map((x) => x.op)).toEqual(["element_action"]);
  });

  it("a middle click (a primary-selection paste) and a click with keys held: the separate requests", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, clickAt(EMPTY_POINT, ["--button", "middle", ...fg]), { mode: MODE }), "click");
    expectOk(await cli(sb, clickAt(EMPTY_POINT, ["--modifiers", "shift", ...fg]), { mode: MODE }), "click");
    expect(clicks(sb)).toEqual([]);
    expect(sent(sb).map((x) => x.op)).toEqual(["input", "input"]);
  });
});
