// Issue 15: a granted coordinate click through serve is one point_click
// request (protocol 2.3): the helper checks the window at the point, hit-tests
// it, holds the click when a name there may be sensitive (the confirm decision
// then sees it), presses a press-like control through accessibility or clicks
// with XTest and puts the pointer back. On the real desktop: the GTK3 fixture
// (its log says what it received), gtk3-widget-factory (GTK3, a real app: a
// fresh observation says what changed) and the Qt5 fixture. The helper's ops
// come from DECKHAND_TRACE_OPS on serve's stderr. Rows: test/live/matrix/rows.ts
// ("click.point."). Timings are recorded as metrics, never asserted.
import { beforeAll } from "vitest";
import { describeLive, useDesktop } from "./harness.ts";
import { newStateDir, requireBuild } from "./deckhand.ts";
import { proveOracles } from "./matrix/oracles.ts";
import { x11Desk } from "./matrix/desk.ts";
import { pointClickFixtureRows } from "./matrix/point-click-rows.ts";
import { pointClickAppRows } from "./matrix/point-click-app-rows.ts";

const FILE = "coordinate-click.test.ts";

describeLive("a granted coordinate click is one point_click request", () => {
  const desktop = useDesktop();
  let stateDir: string;

  beforeAll(async () => {
    requireBuild();
    // Before any row counts: the oracles must catch what they are there to catch.
    await proveOracles(desktop);
    stateDir = newStateDir();
  }, 90_000);

  // The GTK3 fixture's rows: shared with the Wayland run.
  pointClickFixtureRows("x11", () => x11Desk(desktop), FILE, () => stateDir);

  // gtk3-widget-factory and the Qt5 fixture: shared with the Wayland run.
  pointClickAppRows("x11", () => x11Desk(desktop), FILE, () => stateDir);
});
