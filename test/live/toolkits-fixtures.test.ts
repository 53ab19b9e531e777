// Acceptance rows for the GTK4 and Qt5 fixtures (test/fixtures/apps/
// gtk4_fixture.py, qt5_fixture.py): what each receives is what its log says.
// Each asserts the behaviour issue 11 requires; rows are in
// test/live/matrix/rows.ts and their results go to .state/matrix-results.json.
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { KITS, toolkitFixtureRows } from "./matrix/toolkit-fixture-rows.ts";

const FILE = "toolkits-fixtures.test.ts";

for (const kit of KITS) {
  describeLive(`toolkit rows: ${kit.app}`, () => {
    const desktop = useDesktop();
    toolkitFixtureRows("x11", () => x11Desk(desktop), FILE, kit);
  });
}
