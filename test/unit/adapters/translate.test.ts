// Every vendor action in the fixtures -> the deckhand steps (image pixels),
// then through a map to a Program the canonical schema accepts.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { programSchema } from "../../../src/protocol/program.ts";
import { translateOpenAICall, translateOpenAIAction, OPENAI_ACTIONS, OPENAI_BUTTONS, openaiOutput } from "../../../src/adapters/openai.ts";
import { translateAnthropicCall, ANTHROPIC_ACTIONS, anthropicImageResult, anthropicErrorResult, anthropicCursorResult } from "../../../src/adapters/anthropic.ts";
import { buildProgram, needsMap, toScreenSteps, type Translation } from "../../../src/adapters/translate.ts";
import { makeMap, screenToImage } from "../../../src/adapters/coords.ts";
import { COMPUTER_MEMBER_NAME_VALUES } from "@anthropic-ai/sdk/resources/messages/messages";

const VENDOR = join(__dirname, "..", "..", "fixtures", "vendor");
// `screen`: the steps after the map (and deckhand's pointer, for a click at it); `field`: the error's details.field;
// `cursor`: answered by cursor_position; `why`: why an untyped case is not SDK-shaped.
type Case = { name: string; call: unknown; steps?: unknown[]; screen?: unknown[]; screenshot?: boolean; zoom?: number[]; cursor?: boolean; error?: string; field?: string; why?: string };
const openai = JSON.parse(readFileSync(join(VENDOR, "openai.json"), "utf8")) as { cases: Case[]; untyped_cases: Case[]; safety_check_call: unknown; output_example: Record<string, unknown> };
const anthropic = JSON.parse(readFileSync(join(VENDOR, "anthropic.json"), "utf8")) as {
  cases: Case[];
  untyped_cases: Case[];
  toolset_cases: Case[];
  untyped_toolset_cases: Case[];
  pointer: { x: number; y: number };
  output_example: Record<string, unknown>;
  toolset_output_example: Record<string, unknown>;
  cursor_output_example: Record<string, unknown>;
};
const OPENAI_CASES = [...openai.cases, ...openai.untyped_cases];
const ANTHROPIC_CASES = [...anthropic.cases, ...anthropic.untyped_cases, ...anthropic.toolset_cases, ...anthropic.untyped_toolset_cases];

function errorOf(fn: () => unknown): DeckhandError | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (err instanceof DeckhandError) return err;
    throw err;
  }
}

function codeOf(fn: () => unknown): string | null {
  return errorOf(fn)?.code ?? null;
}

function expectError(fn: () => unknown, c: Case): void {
  const e = errorOf(fn);
  expect(e?.code).toBe(c.error);
  if (c.field) expect(e?.details.field, "details.field names it").toBe(c.field);
}

function expectTranslation(t: Translation, c: Case): void {
  if (c.screenshot) expect(t).toEqual({ kind: "screenshot" });
  else if (c.zoom) expect(t).toEqual({ kind: "zoom", region: c.zoom });
  else if (c.cursor) expect(t).toEqual({ kind: "cursor" });
  else expect(t).toEqual({ kind: "steps", steps: c.steps });
}

// A 1920x1080 screen at origin (100, 50) the helper wrote at 1440x810 (scale 0.75); deckhand left the pointer at screen (500, 400).
const MAP = makeMap({ width: 1440, height: 810, scale: 0.75, origin: { x: 100, y: 50 } });
const POINTER = anthropic.pointer;

function programOf(t: Translation, c?: Case) {
  if (t.kind !== "steps") return null;
  const program = buildProgram("fixture-app", 7, toScreenSteps(t.steps, MAP, POINTER));
  const parsed = programSchema().safeParse(program);
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  if (c?.screen) expect(program.steps).toEqual(c.screen);
  return program;
}

describe("OpenAI computer_call fixtures", () => {
  for (const c of OPENAI_CASES) {
    it(c.name, () => {
      if (c.error) {
        expectError(() => translateOpenAICall(c.call, "fallback"), c);
        return;
      }
      const r = translateOpenAICall(c.call, "fallback");
      expectTranslation(r.translation, c);
      const callId = (c.call as { call_id?: string }).call_id;
      expect(r.callId).toBe(callId ?? "fallback");
      programOf(r.translation, c);
    });
  }

  it("covers every documented action type and button", () => {
    const used = new Set<string>();
    const buttons = new Set<string>();
    for (const c of OPENAI_CASES) {
      type A = { type: string; button?: string };
      const call = c.call as { action?: A; actions?: A[]; type: string };
      const list: A[] = call.action ? [call.action] : (call.actions ?? [call as A]);
      for (const a of list) {
        used.add(a.type);
        if (a.button) buttons.add(a.button);
      }
    }
    for (const a of OPENAI_ACTIONS) expect(used, a).toContain(a);
    for (const b of Object.keys(OPENAI_BUTTONS)) expect(buttons, b).toContain(b);
  });

  it("maps image pixels to screen pixels in the program", () => {
    const r = translateOpenAICall({ type: "computer_call", call_id: "c", action: { type: "click", button: "left", x: 0, y: 0 }, pending_safety_checks: [] }, "f");
    expect(programOf(r.translation)).toEqual({ app: "fixture-app", windowId: 7, observe: false, steps: [{ action: "click", x: 100, y: 50, button: "left" }] });
    const far = translateOpenAICall({ type: "drag", path: [{ x: 1439, y: 809 }, { x: 720, y: 405 }] }, "f");
    expect(programOf(far.translation)!.steps).toEqual([{ action: "drag", button: "left", path: [{ x: 100 + 1919, y: 50 + 1079 }, { x: 100 + 960, y: 50 + 540 }] }]);
  });

  it("a wait uses the session's configured default", () => {
    expect(translateOpenAIAction({ type: "wait" }, { waitMs: 0 })).toEqual([{ action: "wait", ms: 0 }]);
  });

  it("pending_safety_checks travel with the call", () => {
    const r = translateOpenAICall(openai.safety_check_call, "f");
    expect(r.pendingSafetyChecks).toEqual([expect.objectContaining({ id: "cu_sc_67cb", code: "malicious_instructions" })]);
  });

  it("the output item has the documented shape", () => {
    const out = openaiOutput("call_zw3", "AAAA", []);
    expect(Object.keys(out).sort()).toEqual(Object.keys(openai.output_example).sort());
    expect(out).toEqual({ type: "computer_call_output", call_id: "call_zw3", output: { type: "computer_screenshot", image_url: "data:image/png;base64,AAAA" } });
    const acked = openaiOutput("c", "AAAA", [{ id: "cu_sc_1", code: "irrelevant_domain", message: "m" }]);
    expect(acked.acknowledged_safety_checks).toEqual([{ id: "cu_sc_1", code: "irrelevant_domain", message: "m" }]);
  });
});

describe("Anthropic tool_use fixtures", () => {
  for (const [group, list] of [
    ["computer tool", [...anthropic.cases, ...anthropic.untyped_cases]],
    ["computer toolset", [...anthropic.toolset_cases, ...anthropic.untyped_toolset_cases]],
  ] as const) {
    describe(group, () => {
      for (const c of list) {
        it(c.name, () => {
          if (c.error) {
            expectError(() => translateAnthropicCall(c.call, "fallback"), c);
            return;
          }
          const r = translateAnthropicCall(c.call, "fallback");
          expectTranslation(r.translation, c);
          expect(r.toolUseId).toBe((c.call as { id?: string }).id ?? "fallback");
          // A toolset member's tool_result must carry toolset_name; the single tool's carries none.
          expect(r.toolsetName).toBe((c.call as { toolset_name?: string | null }).toolset_name ?? null);
          programOf(r.translation, c);
        });
      }
    });
  }

  it("covers every action of computer_20250124 and computer_20251124", () => {
    const used = new Set([...anthropic.cases, ...anthropic.untyped_cases].map((c) => ((c.call as { input?: { action: string }; action?: string }).input ?? (c.call as { action: string })).action));
    for (const a of ANTHROPIC_ACTIONS) expect(used, a).toContain(a);
  });

  it("covers every member of computer_toolset_20260801, as the SDK lists them", () => {
    const used = new Set(anthropic.toolset_cases.map((c) => (c.call as { name: string }).name));
    expect([...COMPUTER_MEMBER_NAME_VALUES].sort()).toEqual([...ANTHROPIC_ACTIONS].sort());
    for (const a of COMPUTER_MEMBER_NAME_VALUES) expect(used, a).toContain(a);
  });

  it("a click without a coordinate needs a pointer deckhand knows, inside the last screenshot", () => {
    const t = translateAnthropicCall({ type: "tool_use", id: "t", name: "left_click", toolset_name: "computer", input: {} }, "f").translation;
    if (t.kind !== "steps") throw new Error("steps expected");
    const unknown = errorOf(() => toScreenSteps(t.steps, MAP, null));
    expect(unknown?.code).toBe("ACTION_UNSUPPORTED");
    expect(unknown?.details.reason).toBe("pointer-unknown");
    expect(codeOf(() => toScreenSteps(t.steps, null, POINTER))).toBe("SCREENSHOT_REQUIRED");
    const outside = errorOf(() => toScreenSteps(t.steps, MAP, { x: 99, y: 400 }));
    expect(outside?.code).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(outside?.details.reason).toBe("pointer-outside-screenshot");
  });

  it("the result blocks have the documented shape", () => {
    expect(anthropicImageResult("toolu_01A", "iVBORw0KGgo...")).toEqual(anthropic.output_example);
    expect(anthropicErrorResult("toolu_1", "COORDINATE_OUT_OF_BOUNDS: ...")).toEqual({ type: "tool_result", tool_use_id: "toolu_1", is_error: true, content: [{ type: "text", text: "COORDINATE_OUT_OF_BOUNDS: ..." }] });
  });

  it("a toolset member's result blocks carry toolset_name", () => {
    expect(anthropicImageResult("toolu_ts20", "iVBORw0KGgo...", "computer")).toEqual(anthropic.toolset_output_example);
    expect(anthropicCursorResult("toolu_ts05", screenToImage(MAP, POINTER.x, POINTER.y), "computer")).toEqual(anthropic.cursor_output_example);
    expect(anthropicErrorResult("toolu_1", "X: y", "computer")).toEqual({ type: "tool_result", tool_use_id: "toolu_1", toolset_name: "computer", is_error: true, content: [{ type: "text", text: "X: y" }] });
  });
});

describe("coordinates need the last screenshot", () => {
  it("no map: SCREENSHOT_REQUIRED for a point, none needed without one", () => {
    expect(codeOf(() => toScreenSteps([{ action: "click", x: 1, y: 1 }], null))).toBe("SCREENSHOT_REQUIRED");
    expect(codeOf(() => toScreenSteps([{ action: "drag", path: [{ x: 1, y: 1 }, { x: 2, y: 2 }] }], null))).toBe("SCREENSHOT_REQUIRED");
    expect(toScreenSteps([{ action: "type-text", text: "x" }, { action: "scroll", direction: "down", amount: 1 }], null)).toHaveLength(2);
    expect(needsMap([{ action: "scroll", direction: "down" }])).toBe(false);
  });

  it("a point outside the image: COORDINATE_OUT_OF_BOUNDS, whichever step carries it", () => {
    expect(codeOf(() => toScreenSteps([{ action: "click", x: 1440, y: 0 }], MAP))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(codeOf(() => toScreenSteps([{ action: "scroll", direction: "down", x: 0, y: 810 }], MAP))).toBe("COORDINATE_OUT_OF_BOUNDS");
    expect(codeOf(() => toScreenSteps([{ action: "drag", path: [{ x: 0, y: 0 }, { x: -1, y: 5 }] }], MAP))).toBe("COORDINATE_OUT_OF_BOUNDS");
  });
});
