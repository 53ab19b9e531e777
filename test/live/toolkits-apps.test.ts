// Acceptance rows for real GTK4 and Qt5 applications: gtk4-demo
// (observe shows more than the frame; gtk4-widget-factory is not used: under
// Xvfb its endless animations kept it from ever registering on the AT-SPI
// registry in most starts, so its rows measured the machine, not deckhand) and FeatherPad (a Qt5 editor: observe
// and type into it). Rows: test/live/matrix/rows.ts.
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { toolkitAppRows } from "./matrix/toolkit-app-rows.ts";

const FILE = "toolkits-apps.test.ts";

describeLive("toolkit rows: real GTK4 and Qt5 apps", () => {
  const desktop = useDesktop();
  toolkitAppRows("x11", () => x11Desk(desktop), FILE);
});
