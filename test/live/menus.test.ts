// Menus by path (issue 13) on the X11 desktop: the rows ("menus." in
// test/live/matrix/rows.ts) are test/live/matrix/menu-rows.ts's, registered
// on the X11 desk; test/live/matrix-wayland.test.ts runs the same rows on
// sway. Every row ends with no menu of its app open (no popup window).
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { menuRows } from "./matrix/menu-rows.ts";

const FILE = "menus.test.ts";

describeLive("menus by path", () => {
  const desktop = useDesktop();
  menuRows("x11", () => x11Desk(desktop), FILE);
});
