// What to tell an agent (and its operator) when an app shows no
// accessibility tree: the fix depends on the toolkit, which the helper
// recognises (list_apps `toolkit`). Every toolkit decides at start-up whether
// to expose its tree, so the advice nearly always ends in "restart it"
// (the advice per toolkit: src/platform).
import { toolkitTreeAdvice } from "../platform/index.ts";

/** A warning carried by an observation: stable code, what happened, what to do. */
export interface ObservationWarning {
  code: string;
  message: string;
  remediation: string;
}

const GENERIC =
  "The app exposes no accessibility tree (an old toolkit, a canvas or remote-desktop app, or a toolkit whose bridge is off): the observation is its screenshot and the text OCR reads on it, and acting on it needs points (an OCR element's index, or coordinates) under the operator's foreground grant.";

/** The warning for an observation of an app without a tree. */
export function noTreeWarning(app: { name: string; toolkit?: string | null }): ObservationWarning {
  const specific = app.toolkit ? toolkitTreeAdvice(app.toolkit) : undefined;
  return {
    code: "NO_ACCESSIBILITY_TREE",
    message: `${app.name} exposes no accessibility tree${app.toolkit ? ` (toolkit: ${app.toolkit})` : ""}: this snapshot has no tree elements, only the screenshot and the text OCR reads on it (elements with source "ocr", actionable only by point)`,
    remediation: specific ?? GENERIC,
  };
}
