// Acting on text read with OCR (issue 14, docs/ocr.md). An OCR element has no
// tree behind it: nothing to invoke, focus or set through accessibility. The
// one thing it supports is a click at the centre of its box, planned as the
// coordinate click it is (src/program/plan.ts planPointClick): foreground
// input under the operator's grant, inside the pointer guard, the point
// checked against the target's windows first. Every other element action on
// it is refused before anything is sent.
import { DeckhandError } from "../protocol/errors.ts";
import type { Step } from "../protocol/program.ts";
import type { Element } from "../session/snapshot.ts";
import type { ConfirmFacts, StepFacts } from "../engine/safety.ts";

/** Whether an element is text read from the window image (no tree behind it). */
export function isOcrElement(el: Pick<Element, "locator" | "source"> | null | undefined): boolean {
  return !!el && (el.locator.kind === "ocr-box" || el.source === "ocr");
}

/**
 * ACTION_UNSUPPORTED (details.reason "ocr-point-only") for any step that acts
 * on an OCR element other than a click of it: `element` the step's element,
 * `named` the elements it names besides (an element drag's two).
 */
export function refuseOcrAction(step: Step, element: Element | null, named: readonly Element[] = []): void {
  const ocr = [element, ...named].find(isOcrElement);
  if (!ocr) return;
  if (step.action === "click" && element === ocr) return;
  throw new DeckhandError(
    "ACTION_UNSUPPORTED",
    `element ${ocr.index} is text read from the window image (OCR): it has no tree behind it, so ${step.action} cannot act on it. Only a click at its centre is possible, as foreground input (click --element-index ${ocr.index} under --allow-foreground, or click --x --y)`,
    { details: { reason: "ocr-point-only", elementIndex: ocr.index, action: step.action, delivery: "not_dispatched" } },
  );
}

/** The screen point a click on an OCR element goes to: the centre of its box. */
export function ocrClickPoint(el: Element): { x: number; y: number } {
  if (!el.bounds) {
    throw new DeckhandError("ACTION_UNSUPPORTED", `element ${el.index} (OCR) has no bounds to click`, { details: { reason: "ocr-point-only", elementIndex: el.index, delivery: "not_dispatched" } });
  }
  return { x: Math.floor(el.bounds.x + el.bounds.width / 2), y: Math.floor(el.bounds.y + el.bounds.height / 2) };
}

/**
 * The confirm decision sees a point click over the OCR text: when what is
 * under the pointer says nothing sensitive (an app without a tree says
 * nothing at all), the text read there stands in for it, so that clicking
 * "Delete account" read from the pixels asks as clicking that button would.
 */
export function withOcrText(facts: StepFacts, el: Element, rules: Pick<ConfirmFacts, "controlSensitivity">): StepFacts {
  if (!facts.pointer?.length || !rules.controlSensitivity(el.title)) return facts;
  const text = { role: el.role, name: el.title, states: [], actions: [], index: el.index };
  return { ...facts, pointer: facts.pointer.map((p) => (p.node && rules.controlSensitivity(p.node.name) ? p : { ...p, node: text })) };
}
