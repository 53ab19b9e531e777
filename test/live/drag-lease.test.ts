// Issue 13 items 4-6 on the X11 desktop: element-to-element drag, the
// cross-process foreground lease, and serve's safe retries. The rows are
// test/live/matrix/drag-rows.ts (shared with the Wayland run,
// test/live/matrix-wayland.test.ts); rows.ts ("drag-lease").
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { dragRows } from "./matrix/drag-rows.ts";

const FILE = "drag-lease.test.ts";

describeLive("element drag, the foreground lease, serve retries", () => {
  const desktop = useDesktop();
  dragRows("x11", () => x11Desk(desktop), FILE);
});
