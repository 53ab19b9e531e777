// The MCP tool inventory is derived from ARGS and Program; its JSON Schemas
// must be plain objects at the top with anyOf (never oneOf) inside.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ARGS } from "../../../src/protocol/commands.ts";
import { MCP_TOOLS, McpProgram, parseMcpArgs } from "../../../src/adapters/mcp.ts";

const NAMES = ["list_apps", "get_app_state", "click", "set_value", "type_text", "press_key", "hotkey", "scroll", "drag", "select_text", "perform_secondary_action", "screenshot", "run_program"];

describe("MCP tools", () => {
  it("has a tool named after each command", () => {
    const names = MCP_TOOLS.map((t) => t.name);
    for (const n of NAMES) expect(names).toContain(n);
    for (const t of MCP_TOOLS) expect(t.name).toBe(t.command === "run" ? "run_program" : t.command.replaceAll("-", "_"));
  });

  it("every input schema is an object at the top with no oneOf anywhere", () => {
    for (const t of MCP_TOOLS) {
      const js = z.toJSONSchema(t.schema, { io: "input" }) as Record<string, unknown>;
      expect(js.type, t.name).toBe("object");
      expect(JSON.stringify(js), t.name).not.toContain('"oneOf"');
    }
    expect(JSON.stringify(z.toJSONSchema(McpProgram, { io: "input" }))).toContain('"anyOf"');
  });

  it("uses the command schemas themselves, minus stdin-only fields", () => {
    const click = MCP_TOOLS.find((t) => t.name === "click")!;
    expect(click.schema).toBe(ARGS.click);
    const sv = MCP_TOOLS.find((t) => t.name === "set_value")!.schema;
    expect(Object.keys(sv.shape)).not.toContain("valueStdin");
    expect(sv.safeParse({ app: "a", elementIndex: 1 }).success).toBe(false);
    expect(sv.safeParse({ app: "a", elementIndex: 1, value: "v" }).success).toBe(true);
    expect(sv.safeParse({ app: "a", elementIndex: 1, value: "v", valueStdin: true }).success).toBe(false);
    const tt = MCP_TOOLS.find((t) => t.name === "type_text")!.schema;
    expect(Object.keys(tt.shape)).not.toContain("textStdin");
  });

  it("operator flags are not tool inputs", () => {
    for (const t of MCP_TOOLS) {
      for (const k of ["allowForeground", "helper", "confirmCmd", "policy", "helperPath", "policyPath"]) expect(Object.keys(t.schema.shape), `${t.name}.${k}`).not.toContain(k);
    }
  });

  it("run_program accepts what Program accepts and refuses unknown steps", () => {
    expect(McpProgram.safeParse({ app: "a", steps: [{ action: "click", elementIndex: 1 }, { action: "wait", ms: 5 }] }).success).toBe(true);
    expect(McpProgram.safeParse({ app: "a", steps: [{ action: "teleport" }] }).success).toBe(false);
    expect(McpProgram.safeParse({ app: "a", steps: [{ action: "click", elementIndex: 1, extra: 1 }] }).success).toBe(false);
  });

  it("parses the operator flags and refuses others", () => {
    expect(parseMcpArgs(["--allow-foreground", "--helper", "/h", "--confirm-cmd", "/c", "--policy", "/p", "--max-width", "1024"])).toEqual({
      allowForeground: true,
      helperPath: "/h",
      confirmCmd: "/c",
      policyPath: "/p",
      maxWidth: 1024,
    });
    expect(() => parseMcpArgs(["--app", "x"])).toThrow(/unknown mcp flag/);
    expect(() => parseMcpArgs(["--max-width", "wide"])).toThrow(/max-width/);
  });
});
