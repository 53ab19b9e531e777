// OCR beside a tree (issue 14) on real apps whose tree is there:
// gtk3-widget-factory, FeatherPad (Qt5) and Chromium, get-app-state --ocr.
// Registered on a desk (desk.ts): the X11 run (test/live/ocr.test.ts, which
// also has the rows of apps without a tree, X11-only) and the Wayland run
// (test/live/matrix-wayland.test.ts) share them. The OCR helpers here are
// the X11 file's too.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect } from "vitest";
import { startWebFixture, type WebFixture } from "../../fixtures/web/server.ts";
import { browserArgv, browserProfile } from "../app-profiles.ts";
import { readText } from "../../../src/engine/ocr.ts";
import type { RgbImage } from "../../integration/adapters/png-read.ts";
import { newStateDir, Serve } from "../deckhand.ts";
import { waitUntil, type TreeApp } from "../harness.ts";
import { nativeBrowserArgv, rowTest, useServe, type MatrixDesk } from "./desk.ts";
import { crop } from "./image-compare.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { waitAccessible } from "./toolkit.ts";

export const DOC_LINES = ["Release checklist for version three", "Backup the database before upgrading", "Notify customers by email"];

export type Rect = { x: number; y: number; width: number; height: number };
export const ocrOf = (st: any): any[] => st.snapshot.elements.filter((e: any) => e.source === "ocr");
export const words = (s: string) => s.split(/\s+/).map((w) => w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "").toLowerCase()).filter(Boolean);
export const overlaps = (a: Rect, b: Rect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
export const inside = (b: Rect, w: Rect, slack = 2) => b.x >= w.x - slack && b.y >= w.y - slack && b.x + b.width <= w.x + w.width + slack && b.y + b.height <= w.y + w.height + slack;

/** Words expected vs found: each expected word (case folded, edge punctuation off) matched once against the words read. */
export function accuracy(expected: readonly string[], read: readonly string[]): { expected: number; found: number; missing: string[]; rate: number } {
  const pool = new Map<string, number>();
  for (const w of read.flatMap(words)) pool.set(w, (pool.get(w) ?? 0) + 1);
  const missing: string[] = [];
  let found = 0;
  for (const w of expected.flatMap(words)) {
    const n = pool.get(w) ?? 0;
    if (n > 0) {
      found++;
      pool.set(w, n - 1);
    } else missing.push(w);
  }
  const total = found + missing.length;
  return { expected: total, found, missing, rate: total ? found / total : 1 };
}

export function recordAccuracy(row: string, acc: ReturnType<typeof accuracy>, prefix = ""): void {
  metric(row, `${prefix}words_expected`, acc.expected);
  metric(row, `${prefix}words_found`, acc.found);
  if (acc.missing.length) metric(row, `${prefix}words_missing`, acc.missing.join(" "));
}

/** The OCR line read for a known line: the one whose text matches best (most shared words). */
export function lineFor(st: any, text: string): any {
  const want = words(text);
  let best: any = null;
  let score = 0;
  for (const e of ocrOf(st)) {
    const got = words(e.title);
    const s = want.filter((w) => got.includes(w)).length / want.length;
    if (s > score) [best, score] = [e, s];
  }
  if (!best || score < 0.5) throw new Error(`no OCR line for ${JSON.stringify(text)} in:\n${ocrOf(st).map((e: any) => e.title).join("\n")}`);
  return best;
}

export function timing(row: string, st: any, ms: number): void {
  metric(row, "ocr_ms", st.ocr?.ms ?? -1);
  metric(row, "observe_ms", ms);
  metric(row, "ocr_lines", st.ocr?.lines ?? 0);
}

/** get-app-state through a serve session, timed. */
export async function timed(s: Serve, args: Record<string, unknown>): Promise<{ st: any; ms: number }> {
  const t0 = performance.now();
  const r = await s.request("get-app-state", args);
  const ms = Math.round(performance.now() - t0);
  if (!r.ok) throw new Error(`get-app-state ${JSON.stringify(args)} failed: ${JSON.stringify(r.error)}`);
  return { st: r.result, ms };
}

/** Registers the OCR-beside-a-tree rows inside the caller's describe; `file` names the test file in the results. */
export function ocrTreeRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  const serve = useServe(desk);
  const rowIt = rowTest(on, desk, file, 120_000);

  describe("--ocr beside a tree (apps with a tree)", () => {
    rowIt("ocr.widget-factory.explicit", async () => {
      const wf = await desk().launchAppTree(["/usr/bin/gtk3-widget-factory"]);
      try {
        await waitAccessible(serve(), wf.pid);
        // A window mapped and on the bus may not be painted yet (its image blank: nothing to read):
        // start-up, not OCR. Observe again until the first frame is there (the CI run caught this).
        const { st, ms } = await waitUntil("widget-factory painted (OCR reads its text)", 20_000, async () => {
          const o = await timed(serve(), { app: `pid:${wf.pid}`, windowId: wf.windows[0], ocr: true });
          return o.st.ocr?.lines > 10 ? o : undefined;
        });
        timing("ocr.widget-factory.explicit", st, ms);
        expect(st.ocr.lines).toBeGreaterThan(10);
        // Recall: visible named buttons and labels whose name is read over their bounds.
        const w = st.window.bounds;
        const named = st.snapshot.elements.filter(
          (e: any) => e.source !== "ocr" && /^(button|label|checkbox|radio_button|toggle_button|tab)$/.test(e.role) && /^[A-Za-z][\w ]{2,30}$/.test(e.title) && e.bounds && e.bounds.width > 0 && inside(e.bounds, w, 0),
        );
        const read = named.filter((e: any) => ocrOf(st).some((o: any) => words(o.title).join(" ").includes(words(e.title).join(" ")) && overlaps(o.bounds, e.bounds)));
        metric("ocr.widget-factory.explicit", "named_controls_read", `${read.length}/${named.length}`);
        expect(named.length).toBeGreaterThan(5);
        expect(read.length / named.length, `read: ${read.map((e: any) => e.title).join(", ")}`).toBeGreaterThanOrEqual(0.5);
      } finally {
        await wf.stop();
      }
    });

    rowIt("ocr.featherpad.explicit", async () => {
      const dir = mkdtempSync(join(tmpdir(), "deckhand-ocr-fp-"));
      const file = join(dir, "known.txt");
      writeFileSync(file, DOC_LINES.join("\n") + "\n");
      desk().handOver(dir);
      // Qt's platform (xcb or wayland) is the session's: QT_QPA_PLATFORM in its environment.
      const fp = await desk().launchAppTree(["/usr/bin/featherpad", file], { env: { QT_ACCESSIBILITY: "1" } });
      try {
        await waitAccessible(serve(), fp.pid);
        const { st, ms } = await waitUntil("FeatherPad's text read", 20_000, async () => {
          const o = await timed(serve(), { app: `pid:${fp.pid}`, windowId: fp.windows[0], ocr: true });
          return accuracy(DOC_LINES, ocrOf(o.st).map((e) => e.title)).rate >= 0.9 ? o : undefined;
        });
        timing("ocr.featherpad.explicit", st, ms);
        const acc = accuracy(DOC_LINES, ocrOf(st).map((e) => e.title));
        recordAccuracy("ocr.featherpad.explicit", acc);
        for (const line of DOC_LINES) expect(inside(lineFor(st, line).bounds, st.window.bounds)).toBe(true);
      } finally {
        await fp.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });

    rowIt(
      "ocr.chromium.explicit",
      async () => {
        const web: WebFixture = await startWebFixture();
        const profile = desk().handOver(browserProfile("chromium", "deckhand-ocr-chromium-"));
        let browser: TreeApp | undefined;
        try {
          browser = await desk().launchAppTree(nativeBrowserArgv(desk(), "chromium", browserArgv("chromium", web.url, profile)), { env: desk().browser("chromium").env, timeoutMs: 90_000, titleMatches: /deckhand web fixture/ });
          await web.waitFor((e) => e.event === "ready", 60_000);
          await waitAccessible(serve(), browser.pid);
          const want = ["deckhand web fixture", "Name", "Subscribe", "Password", "Preview", "Result: none"];
          const { st, ms, heading } = await waitUntil("the page's text read beside its tree", 30_000, async () => {
            const o = await timed(serve(), { app: `pid:${browser!.pid}`, windowId: browser!.windows[0], ocr: true });
            const heading = o.st.snapshot.elements.find((e: any) => e.source !== "ocr" && e.role === "heading" && e.title === "deckhand web fixture" && e.bounds);
            // "Password" sits beside its field, blacked out as a secure field: the black box beside it spoils that word (docs/ocr.md).
            return heading && accuracy(want, ocrOf(o.st).map((e) => e.title)).rate >= 0.85 ? { ...o, heading } : undefined;
          });
          timing("ocr.chromium.explicit", st, ms);
          const acc = accuracy(want, ocrOf(st).map((e) => e.title));
          recordAccuracy("ocr.chromium.explicit", acc);
          const titles = ocrOf(st).map((e) => e.title);
          for (const t of ["deckhand web fixture", "Name", "Subscribe", "Preview", "Result: none"]) expect(titles, `${t} among the OCR lines ${JSON.stringify(titles)}`).toContain(t);
          // The page's heading (the tab shows the same words: the one over the heading counts).
          expect(ocrOf(st).some((e) => e.title === "deckhand web fixture" && overlaps(e.bounds, heading.bounds))).toBe(true);
          expect(st.screenshot.redacted).toBeGreaterThanOrEqual(1);
        } finally {
          await browser?.stop();
          await web.close();
          rmSync(profile, { recursive: true, force: true });
        }
      },
      180_000,
    );
  });

  describe("--ocr beside a tree (the GTK3 fixture)", () => {
    rowIt("ocr.fixture.explicit", async () => {
      const f = await desk().launchFixture();
      const fg = new Serve(desk().desktop, { stateDir: newStateDir(), args: ["--allow-foreground"] });
      try {
        await waitAccessible(serve(), f.pid);
        const win = await desk().windowId(f, "deckhand fixture");
        const app = `pid:${f.pid}`;
        // One session throughout: it acts on its own snapshots, and it is the one that remembers the field secure.
        const plain = (await timed(fg, { app, windowId: win })).st;
        const pw = plain.snapshot.elements.find((e: any) => e.title === "Password" && e.secure);
        const show = plain.snapshot.elements.find((e: any) => e.title === "Show password");
        // A password typed in and revealed: the field is remembered secure, so it stays blacked out.
        // Set-up: the field focused (deckhand), the password typed by a tool that is not deckhand (deckhand refuses to
        // type into a secure field), then revealed through the check box (an accessibility click).
        const secret = "Zebra7Quartz";
        await desk().raise(win);
        await fg.ok("focus", { app, windowId: win, elementIndex: pw.index });
        await f.waitFor((e) => e.event === "focus" && e.control === "Password" && e.in === true, 5000);
        await desk().typeRaw(secret);
        const shown = f.events().length;
        await fg.ok("click", { app, windowId: win, elementIndex: show.index });
        await f.waitFor((e) => e.event === "toggled" && e.control === "Show password" && e.active === true, 5000, shown);
        // The control: the window's pixels as the display server shows them (no deckhand) give the password to the
        // same engine, once the app drew it (it logs the toggle before it redraws; under load a capture came first).
        const raw = join(mkdtempSync(join(tmpdir(), "deckhand-ocr-raw-")), "window.ppm");
        const b = plain.window.bounds;
        let rawText = "";
        const drawn = await waitUntil("the revealed password in a raw capture", 10_000, async () => {
          writePpm(raw, crop(await desk().screenImage(), b.x, b.y, b.width, b.height));
          rawText = (await readText(raw, process.env)).lines.map((l) => l.text).join("\n");
          return rawText.includes(secret);
        }).catch(() => false);
        rmSync(dirname(raw), { recursive: true, force: true });
        metric("ocr.fixture.explicit", "raw_capture_reads_password", drawn ? "yes" : "no");
        expect(rawText, "tesseract reads the revealed password from a raw capture (the control)").toContain(secret);

        // The tree as it is now (the field revealed), without OCR and with it.
        const now = (await timed(fg, { app, windowId: win })).st;
        expect(now.snapshot.elements.find((e: any) => e.title === "Password")).toMatchObject({ secure: true, value: null });
        const { st, ms } = await timed(fg, { app, windowId: win, ocr: true });
        timing("ocr.fixture.explicit", st, ms);
        expect(st.ocr).toMatchObject({ automatic: false });
        const tree = st.snapshot.elements.filter((e: any) => e.source !== "ocr");
        expect(tree.map((e: any) => [e.index, e.role, e.title])).toEqual(now.snapshot.elements.map((e: any) => [e.index, e.role, e.title]));
        const maxTree = Math.max(...tree.map((e: any) => e.index));
        expect(ocrOf(st).every((e) => e.index > maxTree)).toBe(true);
        expect(st.screenshot.redacted).toBeGreaterThanOrEqual(1);
        expect(ocrOf(st).map((e: any) => e.title).join("\n")).not.toContain(secret);
        expect(ocrOf(st).some((e: any) => overlaps(e.bounds, pw.bounds))).toBe(false);
        // The controls' labels, each read over its tree element.
        const labels = ["OK", "Delete", "Submit", "Subscribe", "Show password", "Small", "Medium", "Large"];
        const hits = labels.filter((l) => {
          const treeEl = tree.find((e: any) => e.title === l && e.bounds);
          return treeEl && ocrOf(st).some((o: any) => words(o.title).join(" ").includes(words(l).join(" ")) && overlaps(o.bounds, treeEl.bounds));
        });
        metric("ocr.fixture.explicit", "labels_read_over_their_element", `${hits.length}/${labels.length}`);
        expect(hits.length, `read over their elements: ${hits.join(", ")}`).toBeGreaterThanOrEqual(6);
      } finally {
        await fg.close();
        await f.stop();
      }
    });
  });
}

/** An image as a binary PPM file (tesseract reads it as it is). */
function writePpm(path: string, img: RgbImage): void {
  writeFileSync(path, Buffer.concat([Buffer.from(`P6\n${img.width} ${img.height}\n255\n`, "latin1"), Buffer.from(img.data)]));
}
