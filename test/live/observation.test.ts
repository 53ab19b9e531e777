// Issue 14 on real apps: the compact observation against the full one (bytes,
// and nothing actionable lost), paging a real tree with the horizon refusal,
// and a diff after a real change. The full and compact outputs compared are of
// the SAME snapshot (the compact one pages it: --snapshot-id --offset 0), so
// the comparison is exact. Rows: test/live/matrix/rows.ts (capability
// "compact / diff").
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { observationRows } from "./matrix/observation-rows.ts";

const FILE = "observation.test.ts";

describeLive("issue 14: compact observation, pages and diffs on real apps", () => {
  const desktop = useDesktop();
  observationRows("x11", () => x11Desk(desktop), FILE);
});
