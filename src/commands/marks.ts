// `screenshot --app X --marks` (issue 14): the set-of-marks image needs
// element indices, so the window is observed (its tree read and a snapshot
// stored, like get-app-state) and the marks are drawn on that observation's
// screenshot. The result is the screenshot command's, with the snapshot id
// the numbers belong to and the marks image beside the plain one.
import { asUnverified } from "../engine/permissions.ts";
import { DeckhandError, type ErrorCode } from "../protocol/errors.ts";
import type { CommandArgs } from "../protocol/commands.ts";
import type { CommandResult, ReadonlyDeep } from "../protocol/results.ts";
import type { Engine } from "../engine/engine.ts";
import { requireCapability } from "../engine/ports.ts";
import { observe } from "../engine/observe.ts";
import { resolveApp, resolveWindow } from "../engine/resolve.ts";
import { auditAppId } from "../engine/safety.ts";

export async function screenshotWithMarks(engine: Engine, args: CommandArgs<"screenshot">, permissionGate: () => Promise<unknown>): Promise<ReadonlyDeep<CommandResult<"screenshot">>> {
  // Stage "flag parsing": a whole-screen image has no one tree to number.
  if (!args.app) {
    throw new DeckhandError("INVALID_ARGUMENTS", "--marks needs --app: the numbers are element indices of one app's window (a whole-screen image has no one tree)", {
      details: { flag: "--marks", needs: "--app" },
    });
  }
  const { hello } = await engine.helper();
  requireCapability(hello, "screenshot", "screenshot");
  requireCapability(hello, "get_tree", "screenshot --marks (it reads the window's tree for the element indices)");
  await permissionGate();
  const app = await resolveApp(engine, args.app);
  const { window } = await resolveWindow(engine, app, args);
  const decision = engine.safety.checkApp(app, window, "screenshot");
  // The default page (compact, its byte budget): what get-app-state would show; the numbers stop at its horizon.
  const obs = await observe(engine, app, window, { command: "screenshot", marks: true }).catch((err) => {
    throw asUnverified(err, engine.permissionsUnknown);
  });
  engine.safety.audit({ command: "screenshot", appId: auditAppId(app), pid: app.pid, windowId: window.window_id, decision: "allow", decisionSource: decision.source, outcome: "OK" });
  if (!obs.screenshot) {
    const e = obs.screenshotError ?? { code: "SCREENSHOT_FAILED", message: "the window could not be captured" };
    throw new DeckhandError(e.code === "TIMEOUT" ? "TIMEOUT" : "SCREENSHOT_FAILED", e.message);
  }
  if (!obs.marks) {
    const e = obs.marksError ?? { code: "SCREENSHOT_FAILED", message: "the set-of-marks image was not drawn" };
    throw new DeckhandError(e.code as ErrorCode, e.message, { details: { snapshotId: obs.snapshotId } });
  }
  const redacted = { deniedWindows: 0, blockedUrls: 0, unidentifiedWindows: 0, secureFields: obs.screenshot.redacted };
  return { app: { name: app.name, pid: app.pid }, windowId: window.window_id, screenshot: obs.screenshot, redacted, marks: obs.marks, snapshotId: obs.snapshotId };
}
