// drag --from-element-index A --to-element-index B against the scripted
// helper: both elements resolved from the LIVE tree (not the snapshot's
// bounds), one input from the centre of A to the centre of B under the
// pointer guard, the drop read back from the target's tree; and every
// refusal before anything is sent. The fake's main window (0x200001,
// {10, 20, 800x600}): OK [0] centre (80, 52), Delete [1] (80, 82), Name [2]
// (80, 112), Password [3] (secure).
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, FIXTURE_WINDOW, FIXTURE_WINDOW_2, observedSandbox, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const fg = ["--allow-foreground"];
const inputs = (sb: Sandbox) => sb.requests().filter((r) => r.op === "input");
/** Element indices of the fake's main window snapshot, by title. */
const IDX = { OK: 1, Delete: 2, Name: 3, Password: 4 };
const drag = (sb: Sandbox, from: number, to: number, extra: string[] = fg, mode?: string) =>
  cli(sb, ["drag", "--app", "fixture-app", "--from-element-index", String(from), "--to-element-index", String(to), ...extra], { mode });

type Move = { kind: "move"; x: number; y: number };
function motion(sb: Sandbox) {
  const sent = inputs(sb);
  expect(sent).toHaveLength(1);
  const steps = sent[0]!.args.steps as { kind: string; x?: number; y?: number; down?: boolean; button?: string }[];
  const moves = steps.filter((s): s is Move => s.kind === "move");
  const downAt = steps.findIndex((s) => s.kind === "button" && s.down === true);
  const upAt = steps.findIndex((s) => s.kind === "button" && s.down === false);
  const lastMoveBefore = (i: number) => steps.slice(0, i).filter((s): s is Move => s.kind === "move").at(-1)!;
  return { args: sent[0]!.args, steps, moves, press: lastMoveBefore(downAt), release: lastMoveBefore(upAt), downAt, upAt };
}

describe("drag from one element onto another", () => {
  it("the snapshot names the elements the test uses", async () => {
    const sb = sandbox();
    const st = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    const byTitle = Object.fromEntries(st.snapshot.elements.map((e: any) => [e.title, e.index]));
    expect(byTitle).toMatchObject(IDX);
  });

  it("granted: one input from the centre of A to the centre of B, guarded; the drop that changes the target is verified", async () => {
    const sb = await observedSandbox();
    const r = expectOk(await drag(sb, IDX.OK, IDX.Name, fg, "drop-sets-value"), "drag");
    const m = motion(sb);
    expect(m.press).toEqual({ kind: "move", x: 80, y: 52 });
    expect(m.release).toEqual({ kind: "move", x: 80, y: 112 });
    expect(m.downAt).toBeLessThan(m.upAt);
    // Enough motion for drag thresholds and DnD protocols: several moves with the button held, pauses between.
    expect(m.moves.length).toBeGreaterThan(10);
    expect(m.steps.filter((s) => s.kind === "wait").length).toBeGreaterThan(10);
    expect(m.args.pointer_guard).toEqual({ pid: 4242, windows: [FIXTURE_WINDOW, FIXTURE_WINDOW_2] });
    expect(m.args.restore_pointer).toBe(true);
    // The tree was read before the input (live bounds) and after it (the drop).
    const ops = sb.ops();
    const i = ops.indexOf("input");
    expect(ops.slice(0, i)).toContain("get_tree");
    expect(ops.slice(i + 1)).toContain("get_tree");
    expect(r).toMatchObject({
      action: "drag",
      performed: true,
      delivery: "submitted",
      route: "foreground_input",
      elementIndex: null,
      verification: { verified: true, predicate: expect.stringContaining("drop target") },
      drag: {
        from: { index: IDX.OK, role: "button", title: "OK", point: { x: 80, y: 52 } },
        to: { index: IDX.Name, role: "text_field", title: "Name", point: { x: 80, y: 112 } },
        targetChanged: ["value"],
      },
    });
    expect(r.snapshotId).toMatch(/^cs_/);
  });

  it("a drop the target's tree does not show: ok (the input was delivered), verified false, and the detail says so", async () => {
    const sb = await observedSandbox();
    const t0 = Date.now();
    const r = expectOk(await drag(sb, IDX.OK, IDX.Name), "drag");
    expect(r.verification).toEqual({ verified: false, predicate: expect.stringContaining("drop target") });
    expect(r.drag.targetChanged).toEqual([]);
    expect(r.drag.detail).toMatch(/did not change/);
    // The target was watched (bounded) before giving up.
    expect(Date.now() - t0).toBeGreaterThan(1500);
    expect(inputs(sb)).toHaveLength(1);
  });

  it("uses the live bounds, not the snapshot's: the window scrolled since the snapshot", async () => {
    const sb = await observedSandbox();
    sb.control({ shiftBounds: { dx: 5, dy: 30 } } as never);
    const r = expectOk(await drag(sb, IDX.OK, IDX.Name, fg, "drop-sets-value"), "drag");
    const m = motion(sb);
    expect(m.press).toEqual({ kind: "move", x: 85, y: 82 });
    expect(m.release).toEqual({ kind: "move", x: 85, y: 142 });
    expect(r.drag.from.point).toEqual({ x: 85, y: 82 });
    expect(r.verification.verified).toBe(true);
  });

  it("as a program step (fromElementIndex/toElementIndex) through serve", async () => {
    const sb = await observedSandbox();
    const s = new ServeProcess(sb, fg, { mode: "drop-sets-value" });
    try {
      const line = await s.request({ id: 1, command: "run", args: { program: { app: "fixture-app", observe: false, steps: [{ action: "drag", fromElementIndex: IDX.OK, toElementIndex: IDX.Name }] } } });
      expect(line.ok, JSON.stringify(line.error)).toBe(true);
      expect(line.result.steps[0]).toMatchObject({ action: "drag", status: "completed", verification: { verified: true }, drag: { from: { title: "OK" }, to: { title: "Name" } } });
    } finally {
      s.kill();
    }
  });

  describe("refused before anything is sent", () => {
    it("no foreground grant: FOREGROUND_REQUIRED, nothing resolved or sent", async () => {
      const sb = await observedSandbox();
      const e = expectError(await drag(sb, IDX.OK, IDX.Name, []), "drag", "FOREGROUND_REQUIRED");
      expect(e.details).toMatchObject({ action: "drag", delivery: "not_dispatched" });
      expect(sb.ops().filter((o) => o === "input" || o === "get_tree")).toEqual([]);
    });

    it("onto a secure (password) field: POLICY_DENIED builtin:secure_field, reason drag", async () => {
      const sb = await observedSandbox();
      const e = expectError(await drag(sb, IDX.OK, IDX.Password), "drag", "POLICY_DENIED");
      expect(e.details).toMatchObject({ rule: "builtin:secure_field", reason: "drag", elementIndex: IDX.Password, end: "to", delivery: "not_dispatched" });
      expect(inputs(sb)).toEqual([]);
    });

    it("an element no longer where the snapshot saw it: ELEMENT_UNRESOLVABLE naming the end", async () => {
      const sb = await observedSandbox();
      sb.control({ replaced: ["2"] });
      const e = expectError(await drag(sb, IDX.OK, IDX.Name), "drag", "ELEMENT_UNRESOLVABLE");
      expect(e.details).toMatchObject({ elementIndex: IDX.Name, end: "to", delivery: "not_dispatched" });
      expect(inputs(sb)).toEqual([]);
    });

    it("an index the snapshot does not have: ELEMENT_INDEX_NOT_FOUND", async () => {
      const sb = await observedSandbox();
      expectError(await drag(sb, IDX.OK, 999), "drag", "ELEMENT_INDEX_NOT_FOUND");
      expect(inputs(sb)).toEqual([]);
    });

    it("no snapshot: SNAPSHOT_REQUIRED", async () => {
      const sb = sandbox();
      expectError(await drag(sb, IDX.OK, IDX.Name), "drag", "SNAPSHOT_REQUIRED");
      expect(inputs(sb)).toEqual([]);
    });

    it("pressed over a sensitive control (Delete): the confirm hook decides, none configured: CONFIRM_REQUIRED", async () => {
      const sb = await observedSandbox();
      const e = expectError(await drag(sb, IDX.Delete, IDX.Name), "drag", "CONFIRM_REQUIRED");
      expect(e.details.delivery).toBe("not_dispatched");
      expect(inputs(sb)).toEqual([]);
    });

    it("a helper without get_tree cannot run an element drag: ACTION_UNSUPPORTED at validation", async () => {
      const sb = await observedSandbox();
      const e = expectError(await drag(sb, IDX.OK, IDX.Name, fg, "drop-cap:get_tree"), "drag", "ACTION_UNSUPPORTED");
      expect(e.details.capability).toBe("get_tree");
      expect(inputs(sb)).toEqual([]);
    });

    it("contradictory flags: INVALID_ARGUMENTS before a helper is looked for", async () => {
      const sb = sandbox();
      const e = expectError(await cli(sb, ["drag", "--app", "fixture-app", "--from-element-index", "1", ...fg]), "drag", "INVALID_ARGUMENTS");
      expect(e.message).toBe("drag: an element drag needs both fromElementIndex and toElementIndex");
      expect(sb.ops()).toEqual([]);
    });
  });
});
