// The result contract (src/protocol/results.ts) against real outputs. The
// harness checks every envelope any suite parses; this suite makes sure every
// command is run at least once to ok:true (with its optional parts: a fresh
// observation, settle), and that each MCP tool advertises its outputSchema
// and its structuredContent conforms to it, checked the way an MCP client
// checks it (the SDK's JSON Schema validator, ajv).
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { COMMANDS, type CommandName } from "../../src/protocol/commands.ts";
import { envelopeIssues, mcpOutputSchema, resultJsonSchema } from "../../src/protocol/results.ts";
import { MCP_TOOLS } from "../../src/adapters/mcp.ts";
import { BUN, cleanupSandboxes, cli, contractViolation, expectOk, MAIN, observedSandbox, REPO, sandbox, ServeProcess, type Sandbox } from "./harness.ts";
import { PNG_HELPER } from "./adapters/common.ts";

afterAll(cleanupSandboxes);

const fg = ["--allow-foreground"];
const app = ["--app", "fixture-app"];

/** One ok:true run of every command, in an order that works in one sandbox. */
const RUNS: [CommandName, string[], { stdin?: string }?][] = [
  ["capabilities", []],
  ["permissions", []],
  ["list-apps", []],
  ["list-windows", app],
  ["get-app-state", app],
  ["screenshot", []],
  ["screenshot", app],
  ["click", [...app, "--element-index", "1", "--state"]],
  ["set-value", [...app, "--element-index", "3", "--value", "Ada"]],
  ["type-text", [...app, "--element-index", "3", "--text", "x"]],
  ["press-key", [...app, "--key", "Return", ...fg]],
  ["hotkey", [...app, "--keys", "ctrl+s", ...fg]],
  ["scroll", [...app, "--element-index", "7"]],
  ["drag", [...app, "--from-x", "100", "--from-y", "400", "--to-x", "300", "--to-y", "450", ...fg]],
  ["select-text", [...app, "--element-index", "3", "--start", "0", "--end", "1"]],
  ["focus", [...app, "--element-index", "3"]],
  ["perform-secondary-action", [...app, "--element-index", "6", "--action", "toggle-extra"]],
  ["run", [], { stdin: JSON.stringify({ app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }, { action: "wait", ms: 1 }], noScreenshot: true }) }],
  ["policy-check", app],
  // ---- issue 13: clipboard
  ["clipboard-set", ["--text", "copied", "--confirm-cmd", "/bin/true"]],
  ["clipboard-get", []],
  ["paste", [...app, "--text", "pasted", ...fg]],
  // ---- end clipboard
  // ---- issue 13: menus
  ["menu-list", app],
  ["menu-click", [...app, "--path", "File>New"]],
  // ---- end menus
  ["pause", ["--reason", "contract check"]],
  ["resume", []],
  // ---- issue 13: app lifecycle (the fake's installed "Example Editor"; `true` as the confirm hook allows)
  ["list-apps", ["--all"]],
  ["launch", ["--app", "org.example.Editor", "--timeout-ms", "5000"]],
  ["activate", [...app, ...fg]],
  ["quit", [...app, "--timeout-ms", "200", "--confirm-cmd", "true"]],
  // ---- end lifecycle
];

describe("every command's result matches RESULTS", () => {
  it("runs every command once to ok:true (the harness checks each envelope)", async () => {
    const sb = await observedSandbox();
    const seen = new Set<string>();
    for (const [command, argv, opts] of RUNS) {
      const result = expectOk(await cli(sb, [command, ...argv], { stdin: opts?.stdin }), command);
      seen.add(command);
      if (command === "click") expect(result.observation.snapshot.snapshotId).toMatch(/^cs_/);
    }
    expect([...seen].sort()).toEqual([...COMMANDS].sort());
  });

  it("deckhand --version --json", async () => {
    const r = await cli(sandbox(), ["--version"]);
    expect(r.envelope).toMatchObject({ ok: true, command: "version" });
  });

  it("serve responses, a program's and a cancel's included", async () => {
    const sb = await observedSandbox();
    const s = new ServeProcess(sb);
    try {
      expect((await s.request({ id: 1, command: "list-windows", args: { app: "fixture-app" } })).ok).toBe(true);
      const run = await s.request({ id: 2, command: "run", args: { program: { app: "fixture-app", steps: [{ action: "focus", elementIndex: 3 }] } } });
      expect(run.ok, JSON.stringify(run.error)).toBe(true);
      expect((await s.request({ id: 3, command: "cancel", args: { id: 99 } })).result).toEqual({ id: 99, cancelled: false });
      expect((await s.request({ id: 4, command: "click", args: { app: "no-such-app", elementIndex: 1 } })).error.code).toBe("APP_NOT_FOUND");
    } finally {
      await s.close();
    }
  });

  it("a drifted envelope is reported with its zod issues", () => {
    const drifted = { schemaVersion: 1, ok: true, command: "pause", result: { paused: true, since: "2026-01-01T00:00:00Z", extra: 1 } };
    expect(envelopeIssues(drifted)).toContain('Unrecognized key: "extra"');
    expect(contractViolation("test", drifted)).toMatch(/pause result does not match src\/protocol\/results\.ts/);
    const nested = { schemaVersion: 1, ok: false, command: "click", error: { code: "APP_NOT_FOUND", message: "m", remediation: "r", details: { app: { nested: true } } } };
    expect(envelopeIssues(nested)).toMatch(/error\.details\.app/);
  });
});

describe("MCP tools: outputSchema and structuredContent", () => {
  const open: Client[] = [];
  afterEach(async () => {
    for (const c of open.splice(0)) await c.close().catch(() => undefined);
  });

  async function connect(sb: Sandbox): Promise<Client> {
    const env = Object.fromEntries(Object.entries(sb.env()).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const transport = new StdioClientTransport({ command: BUN, args: [MAIN, "mcp", "--helper", PNG_HELPER], env, cwd: REPO, stderr: "pipe" });
    const client = new Client({ name: "deckhand-results-test", version: "0.0.0" });
    await client.connect(transport);
    open.push(client);
    return client;
  }

  it("every tool advertises its command's envelope as outputSchema, and every result conforms (ajv, as clients check it)", async () => {
    const sb = sandbox();
    const client = await connect(sb);
    // listTools also arms the client's own outputSchema validation of every later callTool.
    const { tools } = await client.listTools();
    const ajv = new AjvJsonSchemaValidator();
    const validators = new Map<string, ReturnType<AjvJsonSchemaValidator["getValidator"]>>();
    for (const t of MCP_TOOLS) {
      const listed = tools.find((x) => x.name === t.name);
      expect(listed?.outputSchema, t.name).toBeDefined();
      expect(listed!.outputSchema!.type).toBe("object");
      expect(listed!.outputSchema).toEqual(resultJsonSchema(mcpOutputSchema(t.command)));
      validators.set(t.name, ajv.getValidator(listed!.outputSchema as never));
    }
    const calls: [string, Record<string, unknown>, boolean][] = [
      ["capabilities", {}, true],
      ["permissions", {}, true],
      ["list_apps", {}, true],
      ["list_windows", { app: "fixture-app" }, true],
      ["get_app_state", { app: "fixture-app" }, true],
      ["screenshot", {}, true],
      ["click", { app: "fixture-app", elementIndex: 1, state: true }, true],
      ["set_value", { app: "fixture-app", elementIndex: 3, value: "Ada" }, true],
      ["focus", { app: "fixture-app", elementIndex: 3 }, true],
      ["run_program", { app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }], noScreenshot: true }, true],
      ["click", { app: "no-such-app", elementIndex: 1 }, false],
      ["run_program", { app: "fixture-app", steps: [{ action: "click", elementIndex: 99 }] }, false],
      ["pause", { reason: "mcp contract check" }, true],
    ];
    for (const [name, args, ok] of calls) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, `${name}: ${JSON.stringify(r.content).slice(0, 400)}`).toBe(!ok);
      const v = validators.get(name)!(r.structuredContent);
      expect(v.valid, `${name}: ${v.errorMessage}`).toBe(true);
      const tool = MCP_TOOLS.find((t) => t.name === name)!;
      const parsed = mcpOutputSchema(tool.command).safeParse(r.structuredContent);
      expect(parsed.success, `${name}: ${parsed.error?.message}`).toBe(true);
    }
  });
});
