// Issue 15, observation over a direct connection to the application, on the
// X11 desktop: the rows are matrix/observe-direct-rows.ts, shared with the
// Wayland run (test/live/matrix-wayland.test.ts).
import { x11Desk } from "./matrix/desk.ts";
import { observeDirectRows } from "./matrix/observe-direct-rows.ts";
import { describeLive, useDesktop } from "./harness.ts";

describeLive("observation over a direct connection to the application (issue 15)", () => {
  const desktop = useDesktop();
  observeDirectRows("x11", () => x11Desk(desktop), "observe-direct.test.ts");
});
