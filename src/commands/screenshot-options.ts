// The image flags of `screenshot` and `get-app-state` (issue 14; parsing and
// checks in src/engine/image-options.ts, docs/screenshots.md).
//
// screenshot: the flags are checked (helper capabilities, then the window
// and the region against it), then the command runs again without them
// under Engine.withScreenshotOptions: every capture it makes (the window's,
// the whole screen's, a set-of-marks image's) is cropped, scaled and encoded
// as asked, through the command's own policy checks and redaction. The
// window is resolved once and named by id, so both runs see the same one.
//
// get-app-state: the options for observe() (`image`), from the window
// already resolved and checked by the handler.
import type { CommandArgs } from "../protocol/commands.ts";
import type { CommandResult, ReadonlyDeep } from "../protocol/results.ts";
import type { WireWindow } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";
import { requireCapability, type ScreenshotOptions } from "../engine/ports.ts";
import { resolveApp, resolveWindow } from "../engine/resolve.ts";
import { hasImageOptions, imageOptionsOf, requireImageSupport, underScope, withoutImageArgs } from "../engine/image-options.ts";

type ScreenshotArgs = CommandArgs<"screenshot">;
type ScreenshotResult = ReadonlyDeep<CommandResult<"screenshot">>;

/**
 * The screenshot command with its image flags, or null when none was given
 * (the handler goes on as usual). `gate` is the handler's permission gate;
 * `rerun` the handler itself.
 */
export async function screenshotWithImageOptions(
  engine: Engine,
  args: ScreenshotArgs,
  gate: () => Promise<unknown>,
  rerun: (args: ScreenshotArgs) => Promise<ScreenshotResult>,
): Promise<ScreenshotResult | null> {
  if (!hasImageOptions(args)) return null;
  const rest = withoutImageArgs(args);
  // Without an app, a window selector is refused by the command itself, before anything else.
  if (!args.app && (args.windowId !== undefined || args.windowIndex !== undefined)) return await rerun(rest);
  const { hello } = await engine.helper();
  requireCapability(hello, "screenshot", "screenshot");
  // What the helper cannot do is refused before the window is looked at (stage "action support").
  requireImageSupport(hello, args, "screenshot");
  await gate();
  if (!args.app) {
    const options = underScope(engine.screenshotOptions, imageOptionsOf(args, null)!);
    return await engine.withScreenshotOptions(options, () => rerun(rest));
  }
  const app = await resolveApp(engine, args.app);
  const { window } = await resolveWindow(engine, app, args);
  // Policy before the window's bounds say anything about the region (an error must not describe a denied app's window).
  engine.safety.checkApp(app, window, "screenshot");
  const options = underScope(engine.screenshotOptions, imageOptionsOf(args, window.bounds)!);
  const { windowIndex: _index, ...sameWindow } = rest;
  return await engine.withScreenshotOptions(options, () => rerun({ ...sameWindow, app: args.app, windowId: window.window_id }));
}

/**
 * get-app-state's image options for observe() (`image`): undefined without
 * image flags (the front end's scope then applies as before). Throws
 * ACTION_UNSUPPORTED / INVALID_ARGUMENTS before anything is captured.
 */
export async function appStateImageOptions(engine: Engine, args: CommandArgs<"get-app-state">, window: WireWindow): Promise<ScreenshotOptions | undefined> {
  if (!hasImageOptions(args)) return undefined;
  const { hello } = await engine.helper();
  requireImageSupport(hello, args, "get-app-state");
  return underScope(engine.screenshotOptions, imageOptionsOf(args, window.bounds)!);
}
