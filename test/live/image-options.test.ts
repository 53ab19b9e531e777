// Screenshot options (issue 14) on the X11 desktop: the rows are in
// matrix/image-options-rows.ts (shared with the Wayland run).
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { imageOptionsRows } from "./matrix/image-options-rows.ts";

const FILE = "image-options.test.ts";

describeLive("screenshot options through the real helper", () => {
  const desktop = useDesktop();
  imageOptionsRows("x11", () => x11Desk(desktop), FILE);
});
