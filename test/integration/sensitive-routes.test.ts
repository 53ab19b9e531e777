// Issue 10.1 at the orchestrator's edge, against the scripted helper: every
// route that can activate a control whose name has a sensitive word goes
// through the one confirm decision (src/policy/sensitive.ts decideStep), with
// and without the foreground grant, whatever the front end. With no hook it
// is CONFIRM_REQUIRED and nothing is sent; a hook is asked once, told the
// route, and its refusal sends nothing either. The oracle is the helper's
// request log (what reached the "app") and what the hook read on stdin.
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BUN, cleanupSandboxes, cli, expectError, expectOk, failedProgram, FAKE, FIXTURE_WINDOW, MAIN, REPO, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const DIALOG = 0x200003;
/** The fake's main-window Delete button (bounds 30..130 x 70..94) and its OK button (40..64). */
const DELETE_POINT = { x: 80, y: 82 };
const fg = ["--allow-foreground"];
const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

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

async function dialogState(sb: Sandbox): Promise<any> {
  return expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--window-id", String(DIALOG), "--no-screenshot"]), "get-app-state");
}
const indexOf = (state: any, title: string) => state.snapshot.elements.find((e: any) => e.title === title).index as number;

/**
 * One route, all three outcomes: no hook (CONFIRM_REQUIRED, nothing sent), a
 * refusing hook (CONFIRM_DENIED, nothing sent), an allowing hook (asked once
 * with the route, the action sent once).
 */
async function expectConfirmed(sb: Sandbox, argv: string[], command: string, want: { route: string; action: string; element?: string; reason?: RegExp; keys?: string[]; sends?: number }) {
  const before = mutations(sb).length;
  expectError(await cli(sb, argv), command, "CONFIRM_REQUIRED");
  expect(mutations(sb).length, "sent with no hook").toBe(before);

  const deny = recorder(sb, false);
  const denied = deny.asked().length;
  expectError(await cli(sb, [...argv, "--confirm-cmd", deny.cmd]), command, "CONFIRM_DENIED");
  expect(mutations(sb).length, "sent after a refusal").toBe(before);
  expect(deny.asked()).toHaveLength(denied + 1);

  const allow = recorder(sb);
  const n = allow.asked().length;
  expectOk(await cli(sb, [...argv, "--confirm-cmd", allow.cmd]), command);
  expect(mutations(sb).length, "sent once when allowed").toBe(before + (want.sends ?? 1));
  const asked = allow.asked();
  expect(asked).toHaveLength(n + 1);
  const d = asked.at(-1);
  expect(d).toMatchObject({ version: 1, command, action: want.action, route: want.route });
  if (want.element) expect(d.element?.name).toBe(want.element);
  if (want.reason) expect(d.reason).toMatch(want.reason);
  if (want.keys) expect(d.keys).toEqual(want.keys);
  return d;
}

describe("1a: activating a text field presses its window's sensitive default button", () => {
  for (const grant of [[], fg]) {
    const label = grant.length ? "with the foreground grant" : "with no grant";
    it(`perform-secondary-action "activate" on the dialog's entry (${label})`, async () => {
      const sb = sandbox();
      sb.control({ dialog: true });
      const st = await dialogState(sb);
      const d = await expectConfirmed(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", String(indexOf(st, "Reason")), "--action", "activate", ...grant], "perform-secondary-action", {
        route: "entry-activation",
        action: "secondary",
        element: "Delete",
        reason: /"Reason".*default button "Delete"/,
      });
      expect(d.window).toMatchObject({ id: DIALOG, title: "Delete file?" });
    });

    it(`click on the dialog's entry (its first action is Activate) (${label})`, async () => {
      const sb = sandbox();
      sb.control({ dialog: true });
      const st = await dialogState(sb);
      await expectConfirmed(sb, ["click", "--app", "fixture-app", "--element-index", String(indexOf(st, "Reason")), ...grant], "click", { route: "entry-activation", action: "click", element: "Delete" });
    });
  }

  it("press-key Return on the entry element (granted): the entry is focused, Return presses the default", async () => {
    const sb = sandbox();
    sb.control({ dialog: true });
    const st = await dialogState(sb);
    const argv = ["press-key", "--app", "fixture-app", "--element-index", String(indexOf(st, "Reason")), "--key", "Return"];
    expectError(await cli(sb, argv), "press-key", "FOREGROUND_REQUIRED");
    expect(mutations(sb)).toEqual([]);
    // Allowed: the entry is focused (element_action), then Return is pressed (input).
    await expectConfirmed(sb, [...argv, ...fg], "press-key", { route: "entry-activation", action: "press_key", element: "Delete", keys: ["Return"], sends: 2 });
  });

  it("a dialog whose buttons report no default state: every sensitive button counts as the default", async () => {
    const sb = sandbox();
    sb.control({ dialog: "no-default" });
    const st = await dialogState(sb);
    await expectConfirmed(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", String(indexOf(st, "Reason")), "--action", "activate"], "perform-secondary-action", {
      route: "entry-activation",
      action: "secondary",
      element: "Delete",
    });
  });

  it("a text field in a plain window with no default button is activated without asking", async () => {
    const sb = sandbox();
    const st = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    expectOk(await cli(sb, ["perform-secondary-action", "--app", "fixture-app", "--element-index", String(indexOf(st, "Name")), "--action", "activate"]), "perform-secondary-action");
    expect(mutations(sb)).toHaveLength(1);
  });

  it("through a program: serve `run` and MCP run_program get the same decision", async () => {
    const sb = sandbox();
    sb.control({ dialog: true });
    const st = await dialogState(sb);
    const program = { app: "fixture-app", windowId: DIALOG, snapshotId: st.snapshot.snapshotId, steps: [{ action: "perform-secondary-action", elementIndex: indexOf(st, "Reason"), name: "activate" }], observe: false };
    const p = new ServeProcess(sb, fg);
    try {
      const r = await p.request({ id: 1, command: "run", args: { program } });
      expect(r.error, JSON.stringify(r)).toMatchObject({ code: "CONFIRM_REQUIRED", details: { step: 0, delivery: "not_dispatched" } });
      expect(r.error.details.receipts[0]).toMatchObject({ status: "failed", delivery: "not_dispatched", error: { code: "CONFIRM_REQUIRED" } });
    } finally {
      await p.close();
    }
    const env = Object.fromEntries(Object.entries(sb.env()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE], env, cwd: REPO, stderr: "ignore" });
    const client = new Client({ name: "deckhand-test", version: "0.0.0" });
    await client.connect(transport);
    try {
      const r: any = await client.callTool({ name: "run_program", arguments: program });
      // A failed program is a tool error; its receipts travel in the error's details.
      expect(r.isError, JSON.stringify(r.structuredContent)).toBe(true);
      expect(r.structuredContent?.error, JSON.stringify(r.structuredContent)).toMatchObject({ code: "CONFIRM_REQUIRED", details: { step: 0, delivery: "not_dispatched" } });
      expect(r.structuredContent.error.details.receipts[0]).toMatchObject({ status: "failed", error: { code: "CONFIRM_REQUIRED" } });
    } finally {
      await client.close();
    }
    expect(mutations(sb)).toEqual([]);
  });
});

describe("1b: keyboard activation reads the focus live", () => {
  const press = (key: string, extra: string[] = []) => ["press-key", "--app", "fixture-app", "--key", key, ...extra];

  it("Return while focus is in the dialog whose default is Delete: FOREGROUND_REQUIRED without the grant, confirmed with it", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    expectError(await cli(sb, press("Return")), "press-key", "FOREGROUND_REQUIRED");
    expect(mutations(sb)).toEqual([]);
    const d = await expectConfirmed(sb, press("Return", fg), "press-key", { route: "default-button", action: "press_key", element: "Delete", reason: /Return while focus is in "Delete file\?", whose default button is "Delete"/ });
    expect(d.keys).toEqual(["Return"]);
    // The focus was read live before the keys.
    expect(sb.ops()).toContain("focused_element");
    // The audit log records each confirm decision with its route.
    const audit = readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const confirms = audit.filter((a) => a.decision_source === "confirm");
    expect(confirms.map((a) => [a.decision, a.rule, a.outcome])).toEqual([
      ["deny", "route:default-button", "CONFIRM_REQUIRED"],
      ["deny", "route:default-button", "CONFIRM_DENIED"],
      ["allow", "route:default-button", "OK"],
    ]);
  });

  it("a helper without focused_element: the focus is read from the windows' trees, same decision", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    const r = await cli(sb, press("Return", fg), { mode: "drop-cap:focused_element" });
    expectError(r, "press-key", "CONFIRM_REQUIRED");
    expect(r.envelope.error!.message).toMatch(/sensitive/);
    expect(sb.ops()).not.toContain("focused_element");
    expect(sb.ops()).toContain("get_tree");
    expect(mutations(sb)).toEqual([]);
  });

  it("every spelling of Return and Enter, in press-key, hotkey and typed text, is the same decision", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    for (const key of ["Return", "RETURN", "enter", "KP_Enter", "kp_enter", "ISO_Enter", "0xff0d", "0XFF8D", "0xfe34", "Linefeed"]) {
      const e = expectError(await cli(sb, press(key, fg)), "press-key", "CONFIRM_REQUIRED");
      expect(e.message, key).toMatch(/sensitive/);
    }
    for (const keys of ["shift+Return", "ctrl+KP_Enter", "0xffe1+0xff0d"]) {
      expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", keys, ...fg]), "hotkey", "CONFIRM_REQUIRED");
    }
    const typed = recorder(sb);
    for (const text of ["a reason\n", "a reason\r"]) {
      expectError(await cli(sb, ["type-text", "--app", "fixture-app", "--text", text, ...fg]), "type-text", "CONFIRM_REQUIRED");
    }
    expectOk(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "a reason\n", ...fg, "--confirm-cmd", typed.cmd]), "type-text");
    const d = typed.asked()[0];
    expect(d).toMatchObject({ action: "type_text", route: "default-button", element: { name: "Delete" } });
    expect(JSON.stringify(d)).not.toContain("a reason"); // typed text never reaches the hook
    expect(mutations(sb)).toHaveLength(1);
  });

  it("space, and Return, while the Delete button has focus", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [1] } });
    for (const key of ["space", "Space", "KP_Space", "kp_space", "0x20", "0xff80"]) {
      expectError(await cli(sb, press(key, fg)), "press-key", "CONFIRM_REQUIRED");
    }
    expectError(await cli(sb, ["type-text", "--app", "fixture-app", "--text", " ", ...fg]), "type-text", "CONFIRM_REQUIRED");
    expect(mutations(sb)).toEqual([]);
    await expectConfirmed(sb, press("space", fg), "press-key", { route: "focused", action: "press_key", element: "Delete", reason: /space while "Delete" has focus/ });
    await expectConfirmed(sb, press("KP_Enter", fg), "press-key", { route: "focused", action: "press_key", element: "Delete", reason: /KP_Enter while "Delete" has focus/ });
  });

  it("press-key space or Return on the Delete button element itself (focused first, then the key)", async () => {
    const sb = sandbox();
    const st = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    const argv = (key: string) => ["press-key", "--app", "fixture-app", "--element-index", String(indexOf(st, "Delete")), "--key", key, ...fg];
    expectError(await cli(sb, argv("Return")), "press-key", "CONFIRM_REQUIRED");
    await expectConfirmed(sb, argv("space"), "press-key", { route: "focused", action: "press_key", element: "Delete", keys: ["space"], sends: 2 });
  });

  it("focus-then-space in one program: the focus step runs, the space is confirmed", async () => {
    const sb = sandbox();
    const st = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    // The scripted desktop: once focused, the Delete button reports the focus.
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [1] } });
    const program = { app: "fixture-app", snapshotId: st.snapshot.snapshotId, steps: [{ action: "focus", elementIndex: indexOf(st, "Delete") }, { action: "press-key", key: "space" }], observe: false };
    const e = expectError(await cli(sb, ["run", ...fg], { stdin: JSON.stringify(program) }), "run", "CONFIRM_REQUIRED");
    expect(e.details).toMatchObject({ step: 1, stepsCompleted: 1, delivery: "not_dispatched" });
    const { receipts } = failedProgram(e, 2);
    expect(receipts.map((s) => s.status)).toEqual(["completed", "failed"]);
    expect(receipts[0]).toMatchObject({ delivery: "submitted", route: "accessibility" });
    expect(receipts[1]!.error!.code).toBe("CONFIRM_REQUIRED");
    expect(mutations(sb).map((m) => m.args.action ?? "input")).toEqual(["focus"]);
  });

  it("Return when no node has focus (the window is not active yet): the window's default button is assumed", async () => {
    const sb = sandbox();
    sb.control({ dialog: true });
    await expectConfirmed(sb, press("Return", ["--window-id", String(DIALOG), ...fg]), "press-key", { route: "unknown-focus", action: "press_key", element: "Delete" });
  });

  it("a key that moves focus before the activating key, in one step (typed tab then space, a Tab+Return chord)", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    expectError(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "\t\t ", ...fg]), "type-text", "CONFIRM_REQUIRED");
    expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "Tab+space", ...fg]), "hotkey", "CONFIRM_REQUIRED");
    expect(mutations(sb)).toEqual([]);
  });

  it("alt+letter in a window with a sensitive button: its mnemonic", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    await expectConfirmed(sb, ["hotkey", "--app", "fixture-app", "--keys", "alt+d", ...fg], "hotkey", { route: "mnemonic", action: "hotkey", element: "Delete" });
  });

  it("Return with focus on a control that is not sensitive, in a window with no default button, is not asked", async () => {
    const sb = sandbox();
    sb.control({ focused: { window_id: FIXTURE_WINDOW, path: [0] } });
    expectOk(await cli(sb, press("Return", fg)), "press-key");
    expectOk(await cli(sb, ["type-text", "--app", "fixture-app", "--text", "two words", ...fg]), "type-text");
    expect(mutations(sb)).toHaveLength(2);
  });

  it("the OpenAI and Anthropic adapters' keys get the same decision", async () => {
    const sb = sandbox();
    sb.control({ dialog: true, focused: { window_id: DIALOG, path: [0] } });
    for (const adapter of ["openai", "anthropic"] as const) {
      const p = new ServeProcess(sb, ["--adapter", adapter, "--app", "fixture-app", ...fg]);
      try {
        const call =
          adapter === "openai"
            ? { call: { type: "computer_call", call_id: "call_1", action: { type: "keypress", keys: ["ENTER"] }, pending_safety_checks: [] } }
            : { call: { type: "tool_use", id: "toolu_1", name: "computer", input: { action: "key", text: "KP_Enter" } } };
        const r = await p.request({ id: 1, ...call } as never);
        expect(r.error?.code, JSON.stringify(r)).toBe("CONFIRM_REQUIRED");
      } finally {
        await p.close();
      }
    }
    expect(mutations(sb)).toEqual([]);
  });
});

describe("1c: every click at a point over a sensitive control", () => {
  const at = (extra: string[]) => ["click", "--app", "fixture-app", "--x", String(DELETE_POINT.x), "--y", String(DELETE_POINT.y), ...extra];

  for (const [name, extra, label] of [
    ["shift-click", ["--modifiers", "shift"], /shift\+left click at a point over "Delete"/],
    ["ctrl-click", ["--modifiers", "ctrl"], /ctrl\+left click/],
    ["double click", ["--count", "2"], /left double click/],
    ["triple click", ["--count", "3"], /left triple click/],
    ["middle click", ["--button", "middle"], /middle click/],
  ] as const) {
    it(`${name}: FOREGROUND_REQUIRED without the grant; confirmed with it`, async () => {
      const sb = sandbox();
      expectError(await cli(sb, at([...extra])), "click", "FOREGROUND_REQUIRED");
      expect(mutations(sb)).toEqual([]);
      await expectConfirmed(sb, at([...extra, ...fg]), "click", { route: "point", action: "click", element: "Delete", reason: label });
    });
  }

  it("a plain left click there is pressed through accessibility: confirmed as the element", async () => {
    const sb = sandbox();
    await expectConfirmed(sb, at([]), "click", { route: "point", action: "click", element: "Delete", reason: /control name contains "delete"/ });
    expect(mutations(sb)[0]!.op).toBe("element_action");
  });

  it("the point lands on an unnamed part of Delete: its control is found among the node's ancestors, reading the window no deeper than them", async () => {
    const sb = sandbox();
    sb.control({ hitLeaf: true });
    await expectConfirmed(sb, at(["--modifiers", "shift", ...fg]), "click", { route: "point", action: "click", element: "Delete" });
    // The hit node is at depth 2 ([1, 0]): its ancestors are at depth 1 at most, and nothing deeper is read.
    const reads = sb.requests().filter((r) => r.op === "get_tree");
    expect(reads.length).toBeGreaterThan(0);
    for (const r of reads) expect((r.args as { max_depth: number }).max_depth).toBe(1);
  });

  it("a right click is not activation: sent without asking", async () => {
    const sb = sandbox();
    expectOk(await cli(sb, at(["--button", "right", ...fg])), "click");
    expect(mutations(sb)).toHaveLength(1);
  });

  it("a drag pressed and released over it", async () => {
    const sb = sandbox();
    const path = JSON.stringify([DELETE_POINT, { x: DELETE_POINT.x + 5, y: DELETE_POINT.y }]);
    await expectConfirmed(sb, ["drag", "--app", "fixture-app", "--path", path, ...fg], "drag", { route: "drag", action: "drag", element: "Delete" });
  });

  it("the OpenAI adapter's keys held during a click, and a double click; Anthropic's shift-click", async () => {
    const sb = sandbox();
    // The fake's screenshot of the main window has origin (10, 20) at scale 1.
    const img = { x: DELETE_POINT.x - 10, y: DELETE_POINT.y - 20 };
    const openai = new ServeProcess(sb, ["--adapter", "openai", "--app", "fixture-app", ...fg]);
    try {
      await openai.request({ id: 0, call: { type: "computer_call", call_id: "c0", action: { type: "screenshot" }, pending_safety_checks: [] } } as never);
      for (const [i, action] of [{ type: "click", button: "left", x: img.x, y: img.y, keys: ["SHIFT"] }, { type: "double_click", x: img.x, y: img.y }].entries()) {
        const r = await openai.request({ id: i + 1, call: { type: "computer_call", call_id: `c${i + 1}`, action, pending_safety_checks: [] } } as never);
        expect(r.error?.code, JSON.stringify(r)).toBe("CONFIRM_REQUIRED");
      }
    } finally {
      await openai.close();
    }
    const anthropic = new ServeProcess(sb, ["--adapter", "anthropic", "--app", "fixture-app", ...fg]);
    try {
      await anthropic.request({ id: 0, call: { type: "tool_use", id: "t0", name: "computer", input: { action: "screenshot" } } } as never);
      const r = await anthropic.request({ id: 1, call: { type: "tool_use", id: "t1", name: "computer", input: { action: "left_click", coordinate: [img.x, img.y], text: "shift" } } } as never);
      expect(r.error?.code, JSON.stringify(r)).toBe("CONFIRM_REQUIRED");
    } finally {
      await anthropic.close();
    }
    expect(mutations(sb)).toEqual([]);
  });
});

describe("1d: chords are normalised before the checks", () => {
  for (const keys of ["0xffe3+q", "0xffe3+0x71", "Control_R+q", "control_l+Q", "0xffe9+0xffc1", "alt+f04", "alt+F004", "Super_L+w", "0xffeb+0x77"]) {
    it(`${keys} is a closing chord`, async () => {
      const sb = sandbox();
      const e = expectError(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", keys, ...fg]), "hotkey", "CONFIRM_REQUIRED");
      expect(e.details.delivery).toBe("not_dispatched");
      expect(mutations(sb)).toEqual([]);
    });
  }

  it("the hook and the helper both see the canonical names", async () => {
    const sb = sandbox();
    const hook = recorder(sb);
    expectOk(await cli(sb, ["hotkey", "--app", "fixture-app", "--keys", "0xffe3+0x71", ...fg, "--confirm-cmd", hook.cmd]), "hotkey");
    expect(hook.asked()[0]).toMatchObject({ action: "hotkey", route: "closing-chord", reason: "ctrl+q closes an app or window", keys: ["ctrl", "q"] });
    expect(sb.requests().find((r) => r.op === "input")!.args.steps).toEqual([{ kind: "tap", keys: ["ctrl", "q"], repeat: 1 }]);
  });
});
