// Set-of-marks (issue 14) on the X11 desktop: the rows are in
// matrix/marks-rows.ts (shared with the Wayland run).
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { marksRows } from "./matrix/marks-rows.ts";

const FILE = "marks.test.ts";

describeLive("set-of-marks", () => {
  const desktop = useDesktop();
  marksRows("x11", () => x11Desk(desktop), FILE);
});
