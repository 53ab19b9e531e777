// Wire 1.2 contract, item 1: a program whose step fails is a failed request
// (ok:false) on every surface (CLI `run`, serve `run`, MCP run_program). The
// error carries the failing step's code, "step N (action): ..." and the flat
// facts {step, delivery, stepsCompleted, ...the step's details}, plus the
// structured evidence: details.receipts (every step), details.observation
// (the final observation, when one was taken) and details.settle.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { BUN, cleanupSandboxes, cli, expectError, expectFlatDetails, FAKE, failedProgram, MAIN, observedSandbox, REPO, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);
const mutations = (sb: Sandbox) => sb.requests().filter((r) => r.op === "element_action" || r.op === "input");

const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
});

async function mcp(sb: Sandbox): Promise<Client> {
  const env = Object.fromEntries(Object.entries(sb.env()).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", FAKE], env, cwd: REPO, stderr: "ignore" });
  const client = new Client({ name: "deckhand-test", version: "0.0.0" });
  await client.connect(transport);
  clients.push(client);
  return client;
}

// Step 0 clicks OK (sent), step 1 sets Name (sent), step 2 names an element
// the snapshot does not have (fails before dispatch), step 3 never runs.
const PROGRAM = {
  app: "fixture-app",
  noScreenshot: true,
  format: "full",
  steps: [
    { action: "click", elementIndex: 1 },
    { action: "set-value", elementIndex: 3, value: "Ada" },
    { action: "click", elementIndex: 999 },
    { action: "click", elementIndex: 6 },
  ],
};

function expectEvidence(error: { code: string; message: string; details: Record<string, any> }) {
  expect(error.code).toBe("ELEMENT_INDEX_NOT_FOUND");
  expect(error.message).toMatch(/^step 2 \(click\): /);
  // The flat facts: which step, what it delivered, how many completed, and the step's own details.
  expect(error.details).toMatchObject({ step: 2, delivery: "not_dispatched", stepsCompleted: 2, elementIndex: 999 });
  expectFlatDetails(error.details);
  const receipts = error.details.receipts;
  expect(receipts.map((r: any) => [r.index, r.action, r.status, r.delivery])).toEqual([
    [0, "click", "completed", "submitted"],
    [1, "set-value", "completed", "submitted"],
    [2, "click", "failed", "not_dispatched"],
    [3, "click", "unattempted", "not_dispatched"],
  ]);
  expect(receipts[1].verification.verified).toBe(true);
  expect(receipts[2].error.code).toBe("ELEMENT_INDEX_NOT_FOUND");
  expect(receipts[3].error).toBeUndefined();
  // Something was sent, so the final observation was taken after the app settled.
  expect(error.details.settle).toEqual({ waitedMs: 100, events: 0, settled: true });
  expect(error.details.observation.snapshot.snapshotId).toMatch(/^cs_/);
  expect(error.details.observation.snapshot.elements.find((e: any) => e.title === "Name").value).toBe("Ada");
}

describe("a failed program is ok:false with its evidence", () => {
  it("CLI run: the envelope's error has the step's code, flat facts, receipts, observation and settle; nothing resent", async () => {
    const sb = await observedSandbox();
    const r = await cli(sb, ["run"], { stdin: JSON.stringify(PROGRAM) });
    const e = expectError(r, "run", "ELEMENT_INDEX_NOT_FOUND");
    expectEvidence(e);
    expect(failedProgram(e, 4).receipts[2]!.status).toBe("failed");
    expect(mutations(sb).map((m) => [m.args.action, (m.args.locator as { name: string }).name])).toEqual([
      ["click", "OK"],
      ["set_value", "Name"],
    ]);
  });

  it("serve run: the same error line", async () => {
    const sb = await observedSandbox();
    const p = new ServeProcess(sb);
    try {
      const line = await p.request({ id: "p", command: "run", args: { program: PROGRAM } });
      expect(line).toMatchObject({ id: "p", ok: false, command: "run" });
      expectEvidence(line.error);
      expect(mutations(sb)).toHaveLength(2);
    } finally {
      await p.close();
    }
  });

  it("MCP run_program: a tool error whose structured content is the same envelope", async () => {
    const sb = await observedSandbox();
    const client = await mcp(sb);
    const r: any = await client.callTool({ name: "run_program", arguments: PROGRAM });
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ schemaVersion: 1, ok: false, command: "run" });
    expectEvidence(r.structuredContent.error);
    expect(mutations(sb)).toHaveLength(2);
  });

  it("observe:false -> no observation and no settle in the details; nothing sent -> no settle request", async () => {
    const sb = await observedSandbox();
    const program = { app: "fixture-app", observe: false, steps: [{ action: "click", elementIndex: 999 }, { action: "click", elementIndex: 1 }] };
    const e = expectError(await cli(sb, ["run"], { stdin: JSON.stringify(program) }), "run", "ELEMENT_INDEX_NOT_FOUND");
    expect(Object.keys(e.details)).not.toContain("observation");
    expect(Object.keys(e.details)).not.toContain("settle");
    expect(failedProgram(e, 2).receipts.map((x) => x.status)).toEqual(["failed", "unattempted"]);
    expect(sb.ops()).not.toContain("settle");
    expect(mutations(sb)).toEqual([]);
  });

  it("a step that fails at the helper: its delivery and the helper's details are the envelope's flat facts", async () => {
    const sb = await observedSandbox();
    // set_value answers VERIFICATION_FAILED (sent, read back wrong); without the grant the error stands.
    const program = { app: "fixture-app", noScreenshot: true, steps: [{ action: "click", elementIndex: 1 }, { action: "set-value", elementIndex: 3, value: "Ada" }, { action: "click", elementIndex: 6 }] };
    const e = expectError(await cli(sb, ["run"], { stdin: JSON.stringify(program), mode: "set-value-fails:verification" }), "run", "VERIFICATION_FAILED");
    expect(e.message).toMatch(/^step 1 \(set-value\): /);
    expect(e.details).toMatchObject({ step: 1, delivery: "submitted", stepsCompleted: 1, read_back_length: 1 });
    const { receipts, observation, settle } = failedProgram(e, 3);
    expect(receipts.map((x) => [x.status, x.delivery])).toEqual([
      ["completed", "submitted"],
      ["failed", "submitted"],
      ["unattempted", "not_dispatched"],
    ]);
    expect(receipts[1]).toMatchObject({ route: "accessibility", error: { code: "VERIFICATION_FAILED" } });
    expect(settle).toEqual({ waitedMs: 100, events: 0, settled: true });
    expect(observation.snapshot.elementCount).toBe(7);
    // Sent once each, never retried; the third step never sent.
    expect(mutations(sb).map((m) => m.args.action)).toEqual(["click", "set_value"]);
  });

  it("the failed step's own error leaves as it was thrown: its remediation kept, for a program and a single command alike", async () => {
    const sb = await observedSandbox();
    // The password field (index 4): refused by the builtin secure-field rule, with its own remediation.
    const program = { app: "fixture-app", observe: false, steps: [{ action: "set-value", elementIndex: 4, value: "x" }] };
    const run = expectError(await cli(sb, ["run"], { stdin: JSON.stringify(program) }), "run", "POLICY_DENIED");
    const single = expectError(await cli(sb, ["set-value", "--app", "fixture-app", "--element-index", "4", "--value", "x"]), "set-value", "POLICY_DENIED");
    expect(run.remediation).toMatch(/password fields/);
    expect(single.remediation).toBe(run.remediation);
    expect(run.message).toBe(`step 0 (set-value): ${single.message}`);
    const { delivery, ...facts } = single.details;
    expect(delivery).toBe("not_dispatched");
    expect(failedProgram(run, 1).receipts[0]!.error).toMatchObject({ code: "POLICY_DENIED", message: single.message, details: facts });
    expect(mutations(sb)).toEqual([]);
  });
});
