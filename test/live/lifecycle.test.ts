// issue 13 (lifecycle) on a real X11 desktop: the rows of
// matrix/lifecycle-rows.ts (launch, list-apps --all, activate,
// --restore-window, quit, the accessibility environment a launch adds, a
// launch that never shows a window, a denied terminal) on Xvfb + openbox,
// the window manager's word read through xdotool (matrix/lifecycle-oracles.ts).
// The Wayland run of the same rows is in matrix-wayland.test.ts.
// Rows: test/live/matrix/rows.ts (lifecycle.*).
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { lifecycleRows } from "./matrix/lifecycle-rows.ts";

const FILE = "lifecycle.test.ts";

describeLive("app lifecycle: launch, list-apps --all, activate, --restore-window, quit", () => {
  const desktop = useDesktop();
  lifecycleRows("x11", () => x11Desk(desktop), FILE);
});
