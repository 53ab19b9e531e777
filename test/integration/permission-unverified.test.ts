// PERMISSION_UNVERIFIED (issue 12 item 7, the reference contract's rule): a
// gating permission the helper reports as `unknown` does not refuse the
// request; deckhand attempts it, and a failure shaped like a missing
// permission (PERMISSION_DENIED from the helper) becomes
// PERMISSION_UNVERIFIED naming the permissions that were unknown.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, observedSandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

describe("an unknown permission probe", () => {
  it("is not a refusal: the request is attempted and succeeds", async () => {
    const sb = await observedSandbox();
    sb.control({ unknownPermission: "accessibility" });
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    expect(r.snapshot.elementCount).toBeGreaterThan(0);
  });

  it("then a permission-shaped failure of the tree read: PERMISSION_UNVERIFIED naming it", async () => {
    const sb = await observedSandbox();
    sb.control({ unknownPermission: "accessibility" });
    const e = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { mode: "error-on:get_tree:PERMISSION_DENIED" }), "get-app-state", "PERMISSION_UNVERIFIED");
    expect(e.details).toMatchObject({ permissions: "accessibility", helperCode: "PERMISSION_DENIED" });
  });

  it("then a permission-shaped failure of an action: PERMISSION_UNVERIFIED in its step", async () => {
    const sb = await observedSandbox();
    sb.control({ unknownPermission: "accessibility" });
    const e = expectError(await cli(sb, ["focus", "--app", "fixture-app", "--element-index", "3"], { mode: "error-on:element_action:PERMISSION_DENIED" }), "focus", "PERMISSION_UNVERIFIED");
    expect(e.details).toMatchObject({ permissions: "accessibility" });
  });

  it("with every permission known, the same failure stays PERMISSION_DENIED", async () => {
    const sb = await observedSandbox();
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { mode: "error-on:get_tree:PERMISSION_DENIED" }), "get-app-state", "PERMISSION_DENIED");
  });
});
