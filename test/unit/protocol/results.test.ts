// RESULTS: one result schema per command, exactly; JSON Schema generation
// works for every one of them (and for the MCP output schemas), and the
// envelope check catches drift.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { toJsonSchemaCompat } from "@modelcontextprotocol/sdk/server/zod-json-schema-compat.js";
import { COMMANDS } from "../../../src/protocol/commands.ts";
import {
  AppState,
  envelopeIssues,
  ErrorEnvelope,
  EXTRA_RESULTS,
  mcpOutputSchema,
  resultJsonSchema,
  RESULTS,
  type CommandResult,
} from "../../../src/protocol/results.ts";
import { MCP_TOOLS } from "../../../src/adapters/mcp.ts";
import { RoleSchema, StatesSchema } from "../../../src/wire/vocabulary.ts";
import type { HANDLERS } from "../../../src/commands/index.ts";

const REPO = join(import.meta.dirname, "..", "..", "..");

type Schema = z.core.$ZodType;
/** Every schema reachable from s (wrappers, fields, items, options). */
function walk(s: Schema, seen = new Set<Schema>()): Set<Schema> {
  if (seen.has(s)) return seen;
  seen.add(s);
  const d = s._zod.def as unknown as Record<string, any>;
  const next: Schema[] = [];
  if (d.innerType) next.push(d.innerType);
  if (d.shape) next.push(...Object.values(d.shape as Record<string, Schema>));
  if (d.catchall) next.push(d.catchall);
  if (d.element) next.push(d.element);
  if (d.valueType) next.push(d.valueType);
  if (d.options) next.push(...(d.options as Schema[]));
  if (d.in) next.push(d.in, d.out);
  for (const n of next) walk(n, seen);
  return seen;
}

const element = {
  index: 1,
  role: "button",
  nativeRole: "push button",
  title: "OK",
  value: null,
  label: "",
  enabled: true,
  focused: false,
  secure: false,
  bounds: { x: 1, y: 2, width: 3, height: 4 },
  actions: ["press"],
  nativeActions: ["click"],
  locator: { kind: "atspi-path", path: [0], role: "button", nativeRole: "push button", identifier: "ok", name: "OK" },
};
const appState = {
  app: { name: "fixture-app", pid: 42, executable: "/usr/bin/fixture", desktopId: null },
  window: { windowId: 7, title: "t", bounds: { x: 0, y: 0, width: 10, height: 10 } },
  snapshot: {
    snapshotId: "cs_ABCDEFGHIJKLMNOPQRST",
    targetKey: "exe:/usr/bin/fixture",
    windowKey: "exe:/usr/bin/fixture#7",
    capturedAt: "2026-01-01T00:00:00.000Z",
    expiresAt: "2026-01-01T00:05:00.000Z",
    treeText: '[1] button "OK"',
    elementCount: 1,
    truncated: false,
    format: "full",
    offset: 0,
    budget: { maxNodes: null, maxBytes: null },
    elements: [element],
  },
  screenshot: null,
};
const ok = (command: string, result: unknown) => ({ schemaVersion: 1, ok: true, command, result });

describe("RESULTS", () => {
  it("has one schema per command: none missing, none extra", () => {
    expect(Object.keys(RESULTS).sort()).toEqual([...COMMANDS].sort());
    for (const c of COMMANDS) expect(RESULTS[c], c).toBeInstanceOf(z.ZodType);
    // Envelopes that are no command's are kept apart.
    for (const k of Object.keys(EXTRA_RESULTS)) expect(COMMANDS as readonly string[]).not.toContain(k);
  });

  it("is plain data: no transform, pipe, catch or default, so its input and output JSON Schemas are one", () => {
    for (const [c, s] of Object.entries(RESULTS)) {
      for (const x of walk(s)) expect(["transform", "pipe", "catch", "default", "prefault", "any"], c).not.toContain((x._zod.def as { type: string }).type);
      expect(z.toJSONSchema(s, { io: "input", target: "draft-7" }), c).toEqual(resultJsonSchema(s));
    }
  });

  it("every result converts to JSON Schema, an object at the top (or a reference to one)", () => {
    for (const [c, s] of Object.entries({ ...RESULTS, ...EXTRA_RESULTS })) {
      const js = resultJsonSchema(s) as { type?: string; $ref?: string; definitions?: Record<string, { type?: string }> };
      const top = js.$ref ? js.definitions![js.$ref.replace("#/definitions/", "")] : js;
      expect(top?.type, c).toBe("object");
      expect(JSON.stringify(js), c).not.toContain('"oneOf"');
    }
  });

  it("the wire vocabulary's tolerant parsers (catch, transform) convert on their input side, which is why RESULTS does not use them", () => {
    expect(z.toJSONSchema(RoleSchema, { io: "input" })).toMatchObject({ type: "string" });
    expect(z.toJSONSchema(StatesSchema, { io: "input" })).toMatchObject({ type: "array" });
    expect(() => z.toJSONSchema(StatesSchema, { io: "output" })).toThrow();
  });

  it("each MCP tool's outputSchema is its command's envelope, converted as the SDK converts it for tools/list", () => {
    for (const t of MCP_TOOLS) {
      const sdk = toJsonSchemaCompat(t.outputSchema as never, { strictUnions: true, pipeStrategy: "output" }) as Record<string, any>;
      expect(sdk.type, t.name).toBe("object");
      expect(Object.keys(sdk.properties).sort(), t.name).toEqual(["command", "error", "image", "ok", "result", "schemaVersion"]);
      expect(sdk.properties.command.const, t.name).toBe(t.command);
      expect(sdk, t.name).toEqual(resultJsonSchema(mcpOutputSchema(t.command)));
    }
  });

  it("an MCP structuredContent pairs ok with result and not-ok with error", () => {
    const s = mcpOutputSchema("pause");
    const error = { code: "PAUSED", message: "m", remediation: "r", details: {} };
    expect(s.safeParse({ schemaVersion: 1, ok: true, command: "pause", result: { paused: true } }).success).toBe(true);
    expect(s.safeParse({ schemaVersion: 1, ok: false, command: "pause", error }).success).toBe(true);
    expect(s.safeParse({ schemaVersion: 1, ok: true, command: "pause", error }).success).toBe(false);
    expect(s.safeParse({ schemaVersion: 1, ok: false, command: "pause", result: { paused: true } }).success).toBe(false);
    expect(s.safeParse({ schemaVersion: 1, ok: true, command: "click", result: { paused: true } }).success).toBe(false);
  });
});

describe("envelopeIssues", () => {
  it("accepts a conforming result, refuses drift with the issue's path", () => {
    expect(envelopeIssues(ok("get-app-state", appState))).toBeNull();
    expect(envelopeIssues(ok("get-app-state", { ...appState, extra: 1 }))).toContain('Unrecognized key: "extra"');
    const { nativeRole: _n, ...noNative } = element;
    expect(envelopeIssues(ok("get-app-state", { ...appState, snapshot: { ...appState.snapshot, elements: [noNative] } }))).toContain("result.snapshot.elements.0.nativeRole");
    // Roles are the neutral vocabulary, never a platform's words.
    expect(envelopeIssues(ok("get-app-state", { ...appState, snapshot: { ...appState.snapshot, elements: [{ ...element, role: "push button" }] } }))).toContain("result.snapshot.elements.0.role");
    expect(envelopeIssues(ok("pause", { paused: "yes" }))).toContain("result.paused");
    expect(envelopeIssues(ok("resume", { paused: true, wasPaused: true }))).toContain("result.paused");
  });

  it("an action result names its own command", () => {
    const click = {
      action: "click",
      app: { name: "a", pid: 1 },
      snapshotId: null,
      windowId: 7,
      elementIndex: null,
      performed: true,
      delivery: "submitted",
      route: "foreground_input",
      verification: { verified: null, predicate: null },
      cleanup: { keys_released: true, buttons_released: true, pointer_restored: true },
      observation: appState,
      settle: { waitedMs: 3, events: 0, settled: true },
    };
    expect(envelopeIssues(ok("click", click))).toBeNull();
    expect(envelopeIssues(ok("focus", click))).toContain("result.action");
  });

  it("error envelopes: flat details, plus a failed program's receipts and observation", () => {
    const receipt = {
      index: 0,
      action: "click",
      status: "failed",
      delivery: "not_dispatched",
      route: null,
      elementIndex: 99,
      verification: { verified: null, predicate: null },
      cleanup: null,
      error: { code: "ELEMENT_INDEX_NOT_FOUND", message: "no element 99", details: { elementIndex: 99 } },
    };
    const err = (details: Record<string, unknown>, code = "ELEMENT_INDEX_NOT_FOUND") => ({ schemaVersion: 1, ok: false, command: "run", error: { code, message: "m", remediation: "r", details } });
    expect(envelopeIssues(err({ step: 0, delivery: "not_dispatched", receipts: [receipt], observation: appState }))).toBeNull();
    expect(ErrorEnvelope.safeParse(err({ nested: { a: 1 } })).success).toBe(false);
    expect(envelopeIssues(err({}, "NOT_A_CODE"))).toContain("error.code");
    expect(envelopeIssues(err({ receipts: [{ ...receipt, status: "maybe" }] }))).toContain("error.details.receipts.0.status");
  });

  it("envelopes that are no command's: version, serve's cancel; unknown ones are refused", () => {
    expect(envelopeIssues(ok("version", { version: "0.1.0" }))).toBeNull();
    expect(envelopeIssues(ok("cancel", { id: 7, cancelled: true }))).toBeNull();
    expect(envelopeIssues(ok("frobnicate", {}))).toContain("no result schema");
  });

  it("adapter responses: the receipt is a program receipt", () => {
    const base = { schemaVersion: 1, ok: true, command: "computer", adapter: "openai", output: { type: "computer_call_output" }, steps: null, receipt: null, image: null };
    expect(envelopeIssues(base)).toBeNull();
    expect(envelopeIssues({ ...base, receipt: { app: { name: "a", pid: 1 } } })).toContain("receipt.steps");
  });
});

describe("docs", () => {
  it("docs/cli.md has a result table per command, docs/results.schema.json a schema per command", () => {
    const md = readFileSync(join(REPO, "docs", "cli.md"), "utf8");
    const section = md.slice(md.indexOf("<!-- results:start -->"), md.indexOf("<!-- results:end -->"));
    for (const c of COMMANDS) expect(section, c).toContain(`### ${c} result\n`);
    const js = JSON.parse(readFileSync(join(REPO, "docs", "results.schema.json"), "utf8"));
    expect(Object.keys(js.properties.results.properties).sort()).toEqual([...COMMANDS].sort());
    expect(Object.keys(js.mcpTools).sort()).toEqual(MCP_TOOLS.map((t) => t.name).sort());
  });
});

describe("handler types", () => {
  it("handlers return their command's result type", () => {
    expectTypeOf<Awaited<ReturnType<(typeof HANDLERS)["policy-check"]>>["decision"]>().toEqualTypeOf<"allow" | "deny">();
    expectTypeOf<CommandResult<"get-app-state">>().toEqualTypeOf<z.output<typeof AppState>>();
  });
});
