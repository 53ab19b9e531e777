// Acceptance rows for the browsers on the web fixture: Chromium and Firefox
// load test/fixtures/web/form.html from a loopback server started here, and
// every event the page receives is POSTed back to that server, so the oracle
// is what the page itself saw. Rows: test/live/matrix/rows.ts.
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { browserRows, BROWSERS } from "./matrix/web-rows.ts";

const FILE = "toolkits-web.test.ts";

for (const b of BROWSERS) {
  describeLive(`toolkit rows: ${b.id} on the web fixture`, () => {
    const desktop = useDesktop();
    browserRows("x11", () => x11Desk(desktop), FILE, b);
  });
}
