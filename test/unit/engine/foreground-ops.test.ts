// Which helper requests hold the cross-process foreground lease.
import { describe, expect, it } from "vitest";
import { FOREGROUND_OPS, isForegroundOp } from "../../../src/engine/foreground-ops.ts";
import { OP_NAMES } from "../../../src/wire/messages.ts";

describe("isForegroundOp", () => {
  it("real input and the paste chord hold the lease", () => {
    expect(isForegroundOp("input")).toBe(true);
    expect(isForegroundOp("paste")).toBe(true);
  });
  it("window_op holds it only to activate (focus moves); restore and close do not", () => {
    expect(isForegroundOp("window_op", { window_id: 1, op: "activate" })).toBe(true);
    expect(isForegroundOp("window_op", { window_id: 1, op: "restore" })).toBe(false);
    expect(isForegroundOp("window_op", { window_id: 1, op: "close" })).toBe(false);
  });
  it("reading and accessibility actions never wait for it", () => {
    for (const op of ["get_tree", "list_apps", "element_action", "clipboard_get", "clipboard_set", "menu_tree", "launch"]) expect(isForegroundOp(op), op).toBe(false);
  });
  it("names only ops of the wire contract", () => {
    for (const op of FOREGROUND_OPS) expect(OP_NAMES).toContain(op);
  });
});
