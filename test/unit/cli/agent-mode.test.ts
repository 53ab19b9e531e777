// Issue 10.1: who may lift operator controls. The rules as functions; the
// CLI, serve and MCP wiring is tested in test/integration/security-boundary.test.ts.
import { describe, expect, it } from "vitest";
import { auditSourceOf, cliCaller, isAgentMode, operatorOnlyError, OPERATOR_FLAGS, OPERATOR_ONLY_COMMANDS } from "../../../src/protocol/caller.ts";
import { parseSessionFlags } from "../../../src/frontend/session-flags.ts";
import { MCP_TOOLS } from "../../../src/adapters/mcp.ts";
import { validateAuditRecord } from "../../../src/audit/log.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { COMMANDS } from "../../../src/protocol/commands.ts";

describe("agent mode", () => {
  it("DECKHAND_AGENT_MODE: off when unset, empty, 0, false, no, off (any case, blanks ignored); on for anything else", () => {
    for (const v of [undefined, "", "0", "false", "FALSE", "no", "off", " off "]) expect(isAgentMode({ DECKHAND_AGENT_MODE: v }), String(v)).toBe(false);
    for (const v of ["1", "true", "yes", "on", "agent", "2", "0x"]) expect(isAgentMode({ DECKHAND_AGENT_MODE: v }), v).toBe(true);
    expect(cliCaller({})).toBe("operator");
    expect(cliCaller({ DECKHAND_AGENT_MODE: "1" })).toBe("agent_cli");
  });

  it("the audit source of each caller; an unknown caller never reads as the operator", () => {
    expect(auditSourceOf("operator")).toBe("operator");
    expect(auditSourceOf("serve")).toBe("serve_client");
    expect(auditSourceOf("mcp")).toBe("mcp_client");
    expect(auditSourceOf("agent_cli")).toBe("agent_cli");
    expect(auditSourceOf(undefined)).toBe("agent_cli");
    for (const source of ["operator", "agent_cli", "serve_client", "mcp_client", "user_input", "pause"]) {
      expect(() => validateAuditRecord({ event: "resume", command: "resume", decision_source: source as never, outcome: "OK" }), source).not.toThrow();
    }
  });

  it("operator-only refusals: POLICY_DENIED, reason operator-only, with the caller and the command or flag", () => {
    const c = operatorOnlyError("resume", "serve");
    expect(c).toBeInstanceOf(DeckhandError);
    expect(c.code).toBe("POLICY_DENIED");
    expect(c.details).toEqual({ reason: "operator-only", caller: "serve", command: "resume" });
    expect(c.remediation).toMatch(/operator/);
    const f = operatorOnlyError("--allow-foreground", "agent_cli");
    expect(f.details).toEqual({ reason: "operator-only", caller: "agent_cli", flag: "--allow-foreground" });
    expect(f.message).toMatch(/--allow-foreground is operator-only/);
  });

  it("the operator-only inventory: resume, desktop, helper check and trace show; the five operator flags", () => {
    expect([...OPERATOR_ONLY_COMMANDS].sort()).toEqual(["desktop", "helper", "resume", "trace"]);
    expect([...OPERATOR_FLAGS].sort()).toEqual(["--allow-foreground", "--confirm-cmd", "--helper", "--policy", "--trace"]);
    // Every command of the inventory but resume is an agent's to ask for.
    expect(COMMANDS.filter((c) => OPERATOR_ONLY_COMMANDS.includes(c))).toEqual(["resume"]);
  });

  it("serve / mcp flags: each operator flag is refused in agent mode, accepted otherwise", () => {
    const argv: Record<string, string[]> = {
      "--allow-foreground": ["--allow-foreground"],
      "--helper": ["--helper", "/x"],
      "--confirm-cmd": ["--confirm-cmd", "/bin/true"],
      "--policy": ["--policy", "/p.toml"],
      "--trace": ["--trace", "/tmp/deckhand-agent-mode-trace"],
    };
    for (const [flag, args] of Object.entries(argv)) {
      expect(() => parseSessionFlags(args, "serve", {}, undefined, {})).not.toThrow();
      try {
        parseSessionFlags(["--max-width", "800", ...args], "serve", {}, undefined, { DECKHAND_AGENT_MODE: "1" });
        expect.unreachable(flag);
      } catch (err) {
        expect((err as DeckhandError).code).toBe("POLICY_DENIED");
        expect((err as DeckhandError).details).toMatchObject({ reason: "operator-only", flag });
      }
    }
    expect(parseSessionFlags(["--max-width", "800"], "mcp", {}, undefined, { DECKHAND_AGENT_MODE: "1" })).toEqual({ maxWidth: 800 });
  });

  it("MCP has a pause tool and no tool for an operator-only command", () => {
    const names = MCP_TOOLS.map((t) => t.name);
    expect(names).toContain("pause");
    for (const t of MCP_TOOLS) expect(OPERATOR_ONLY_COMMANDS, t.name).not.toContain(t.command);
    expect(names).not.toContain("resume");
    expect(names).not.toContain("desktop");
  });
});
