// Issue 14 item 4 on a real desktop with the real tesseract: OCR where the
// tree is empty or thin. The Tk fixture (test/fixtures/apps/tk_fixture.py:
// Tk has no accessibility bridge) is read without being asked, its known
// text found where the fixture says it drew it; its OCR'd button is clicked
// by point under the foreground grant (the fixture logs exactly one click),
// refused without it, and every other element action on OCR text is refused
// ocr-point-only. A half-size observation reads a full-resolution capture.
// LibreOffice on its plain X11 plugin (no tree) is read automatically;
// --ocr adds lines beside the tree of the GTK3 fixture (a revealed password
// in a field remembered secure is never read), gtk3-widget-factory,
// FeatherPad (Qt5) and Chromium; xterm (a built-in denied terminal) is
// refused before anything is captured. The rows are shared with the Wayland
// run: matrix/ocr-notree-rows.ts and matrix/ocr-rows.ts. Rows: test/live/matrix/rows.ts
// ("issue 14: OCR"); words expected vs found and timings are row metrics.
import { describeLive, useDesktop } from "./harness.ts";
import { x11Desk } from "./matrix/desk.ts";
import { ocrNoTreeRows } from "./matrix/ocr-notree-rows.ts";
import { ocrTreeRows } from "./matrix/ocr-rows.ts";

const FILE = "ocr.test.ts";

describeLive("OCR where the tree is empty or thin (issue 14)", () => {
  const desktop = useDesktop();
  // The apps without a tree (Tk, LibreOffice's X11 plugin, xterm): shared with the Wayland run (as Xwayland windows).
  ocrNoTreeRows("x11", () => x11Desk(desktop), FILE);

  // gtk3-widget-factory, FeatherPad, Chromium and the GTK3 fixture (a revealed password): shared with the Wayland run.
  ocrTreeRows("x11", () => x11Desk(desktop), FILE);
});
