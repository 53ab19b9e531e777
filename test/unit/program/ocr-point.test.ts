// Acting on OCR text (src/program/ocr-point.ts, planStep): a click becomes a
// coordinate click at the centre of its box, always as foreground input
// (never routed to a node that happens to be under it), inside the pointer
// guard; every other element action on it is refused ACTION_UNSUPPORTED
// "ocr-point-only" before the helper is asked anything; the confirm decision
// reads the text clicked when nothing under the pointer says more.
import { describe, expect, it } from "vitest";
import { isOcrElement, ocrClickPoint, refuseOcrAction, withOcrText } from "../../../src/program/ocr-point.ts";
import { planStep } from "../../../src/program/plan.ts";
import { ocrElement } from "../../../src/engine/ocr-snapshot.ts";
import { POLICY_CONFIRM_FACTS, permissiveSafety } from "../../../src/engine/safety.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { stepSchema } from "../../../src/protocol/program.ts";
import type { Element } from "../../../src/session/snapshot.ts";
import type { ResolvedApp } from "../../../src/engine/resolve.ts";

const ocr = ocrElement({ text: "Submit Order", conf: 96, box: { x: 0, y: 0, width: 1, height: 1 } }, 7, { x: 100, y: 200, width: 51, height: 20 });
const treeEl = { ...ocr, index: 2, source: undefined, locator: { ...ocr.locator, kind: "atspi-path" as const, path: [0] } } as Element;
const app = { pid: 10, name: "tk", accessible: false } as ResolvedApp;

function refusal(fn: () => unknown): DeckhandError {
  try {
    fn();
  } catch (err) {
    if (err instanceof DeckhandError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

/** A fake engine: what the helper was asked, in order. */
function engine(opts: { hitTest?: boolean; hit?: { pid: number; window_id: number | null; node: unknown } } = {}) {
  const asked: string[] = [];
  const requests: { op: string; args: unknown }[] = [];
  return {
    asked,
    requests,
    safety: permissiveSafety(true),
    store: { secureLocators: () => [] },
    async helper() {
      return {
        hello: { helper: { platform: "linux" }, capabilities: { list_windows: { supported: true }, hit_test: { supported: opts.hitTest ?? true } } },
        supervisor: {
          async request(op: string, args: unknown) {
            asked.push(op);
            requests.push({ op, args });
            if (op === "list_windows") return { result: { windows: [{ window_id: 5, pid: 10, z_index: 1, title: "tk", bounds: { x: 50, y: 50, width: 400, height: 300 }, minimized: false }] } };
            if (op === "hit_test") return { result: opts.hit ?? { pid: 10, window_id: 5, node: { role: "button", actions: [{ name: "press", native: "click" }], name: "Submit", path: [0], native_role: "b", identifier: "", states: [], bounds: null, value: null, description: "", secure: false, child_count: 0 } } };
            throw new Error(`unexpected ${op}`);
          },
        },
      };
    },
  };
}

describe("which elements are OCR text", () => {
  it("locator kind ocr-box (or source ocr)", () => {
    expect(isOcrElement(ocr)).toBe(true);
    expect(isOcrElement(treeEl)).toBe(false);
    expect(isOcrElement(null)).toBe(false);
  });
});

describe("refusals: only a click acts on OCR text", () => {
  const steps: Record<string, unknown> = {
    "set-value": { action: "set-value", elementIndex: 7, value: "x" },
    "type-text": { action: "type-text", elementIndex: 7, text: "x" },
    "press-key": { action: "press-key", elementIndex: 7, key: "Return" },
    scroll: { action: "scroll", elementIndex: 7 },
    "select-text": { action: "select-text", elementIndex: 7, start: 0, end: 1 },
    focus: { action: "focus", elementIndex: 7 },
    "perform-secondary-action": { action: "perform-secondary-action", elementIndex: 7, name: "expand" },
    paste: { action: "paste", elementIndex: 7, text: "x" },
  };
  for (const [action, raw] of Object.entries(steps)) {
    it(`${action} on an OCR element: ACTION_UNSUPPORTED ocr-point-only, nothing asked of the helper`, async () => {
      const e = engine();
      const step = stepSchema().parse(raw);
      let err: unknown;
      try {
        await planStep(e as never, step, ocr, app);
      } catch (x) {
        err = x;
      }
      expect(err).toBeInstanceOf(DeckhandError);
      expect((err as DeckhandError).code).toBe("ACTION_UNSUPPORTED");
      expect((err as DeckhandError).details).toMatchObject({ reason: "ocr-point-only", elementIndex: 7, action, delivery: "not_dispatched" });
      expect(e.asked).toEqual([]);
    });
  }

  it("a drag from or to an OCR element is refused the same way", async () => {
    const e = engine();
    const step = stepSchema().parse({ action: "drag", fromElementIndex: 2, toElementIndex: 7 });
    await expect(planStep(e as never, step, null, app, undefined, { elements: [treeEl, ocr], windowId: 5 })).rejects.toMatchObject({ code: "ACTION_UNSUPPORTED", details: { reason: "ocr-point-only", elementIndex: 7 } });
    expect(e.asked).toEqual([]);
  });

  it("a click is not refused; tree elements are never refused for being near OCR", () => {
    expect(() => refuseOcrAction(stepSchema().parse({ action: "click", elementIndex: 7 }), ocr)).not.toThrow();
    expect(() => refuseOcrAction(stepSchema().parse({ action: "set-value", elementIndex: 2, value: "x" }), treeEl)).not.toThrow();
  });
});

describe("a click on OCR text", () => {
  it("is a left click at the centre of its box, as foreground input inside the pointer guard", async () => {
    const e = engine();
    const plan = await planStep(e as never, stepSchema().parse({ action: "click", elementIndex: 7 }), ocr, app);
    expect(plan).toMatchObject({
      kind: "input",
      steps: [{ kind: "click", x: 125, y: 210, button: "left", count: 1, modifiers: [] }],
      pointer: true,
      keyboard: false,
      guard: { pid: 10, allowed: [5] },
      ocr,
    });
    // The helper's hit test agreed on the window; the pressable node under the point did not turn it into an accessibility press.
    expect(e.asked).toEqual(["list_windows", "hit_test"]);
  });

  it("works without a hit test too", async () => {
    const e = engine({ hitTest: false });
    const plan = await planStep(e as never, stepSchema().parse({ action: "click", elementIndex: 7 }), ocr, app);
    expect(plan).toMatchObject({ kind: "input", steps: [{ kind: "click", x: 125, y: 210 }] });
  });

  it("a centre outside the target's windows is refused POLICY_DENIED point-outside-target, nothing sent", async () => {
    const e = engine();
    const off = { ...ocr, bounds: { x: 900, y: 900, width: 10, height: 10 } };
    await expect(planStep(e as never, stepSchema().parse({ action: "click", elementIndex: 7 }), off, app)).rejects.toMatchObject({ code: "POLICY_DENIED", details: { reason: "point-outside-target", delivery: "not_dispatched" } });
    expect(e.asked).toEqual(["list_windows"]);
  });

  it("the helper's hit test finding another app there refuses it", async () => {
    const e = engine({ hit: { pid: 99, window_id: 77, node: null } });
    await expect(planStep(e as never, stepSchema().parse({ action: "click", elementIndex: 7 }), ocr, app)).rejects.toMatchObject({ code: "POLICY_DENIED" });
  });

  it("its point is the centre, rounded down; no bounds: refused", () => {
    expect(ocrClickPoint(ocr)).toEqual({ x: 125, y: 210 });
    expect(refusal(() => ocrClickPoint({ ...ocr, bounds: null })).details.reason).toBe("ocr-point-only");
  });
});

describe("the confirm decision sees the text clicked", () => {
  const pointer = (node: { role: "button" | "label"; name: string; states: string[] } | null) => ({ pointer: [{ gesture: "click" as const, button: "left", count: 1, modifiers: [], node }] });
  const del = { ...ocr, title: "Delete account" };

  it("sensitive text stands in for an unnamed or absent node under the pointer", () => {
    expect(withOcrText(pointer(null), del, POLICY_CONFIRM_FACTS).pointer![0]!.node).toMatchObject({ role: "label", name: "Delete account", index: 7 });
    expect(withOcrText(pointer({ role: "button", name: "", states: [] }), del, POLICY_CONFIRM_FACTS).pointer![0]!.node!.name).toBe("Delete account");
  });

  it("a sensitive node under the pointer stays; harmless text changes nothing", () => {
    const facts = pointer({ role: "button", name: "Delete everything", states: [] });
    expect(withOcrText(facts, del, POLICY_CONFIRM_FACTS)).toEqual(facts);
    const plain = pointer(null);
    expect(withOcrText(plain, { ...ocr, title: "Quarterly Report" }, POLICY_CONFIRM_FACTS)).toBe(plain);
  });
});
