// Acceptance rows for LibreOffice (VCL's gtk3 plugin): Writer's paragraphs
// are seen; Calc is observed without walking its 2^31-child sheet, and a
// number and a formula entered in cells give a computed result read back
// from the tree. Each app runs with a fresh user profile in a temp dir.
// Rows: test/live/matrix/rows.ts.
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { libreOfficeRows } from "./matrix/libreoffice-rows.ts";

const FILE = "toolkits-libreoffice.test.ts";

describeLive("toolkit rows: LibreOffice", () => {
  const desktop = useDesktop();
  libreOfficeRows("x11", () => x11Desk(desktop), FILE);
});
