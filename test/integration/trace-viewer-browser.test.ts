// Issue 16.3: the trace page in a real browser. A synthetic trace directory
// (real PNG window images, test/support/trace-fixture.ts) goes through the
// real CLI (`bun src/main.ts trace show DIR --open`), and the file it writes
// is loaded from disk in Debian's Chromium, headless, via playwright-core.
// Then the same on a trace the real recorder wrote (`deckhand run --trace`
// against the scripted fake helper): recorder and viewer agree. Needs
// Chromium only (ci/apt-packages.txt), no desktop. Every expectation is
// computed from the trace's own numbers and the page's layout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BUN, cleanupSandboxes, cli, MAIN, observedSandbox, REPO } from "./harness.ts";
import { TRACE_FILE, TraceEvent, type TraceImage, type TraceProgramEvent, type TraceStepEvent } from "../../src/protocol/trace.ts";
import { HOSTILE, writeSyntheticTrace, type SyntheticTrace } from "../support/trace-fixture.ts";
import {
  chromiumAvailable,
  CHROMIUM,
  clickMarkerInBox,
  foreignRequests,
  launchViewerBrowser,
  listedSteps,
  openViewerPage,
  stepCard,
  type OpenedPage,
  type ViewerBrowser,
} from "../support/trace-browser.ts";

const SCREENSHOT = join(REPO, ".state", "test-output", "trace-viewer.png");

let root: string;
let trace: SyntheticTrace;
let pagePath: string;
let browser: ViewerBrowser;
let opened: OpenedPage;

/** `bun src/main.ts trace show DIR --open` as the operator: the page's path. */
function traceShow(dir: string): string {
  const env = { ...process.env };
  delete env.DECKHAND_AGENT_MODE;
  const r = spawnSync(BUN, [MAIN, "trace", "show", dir, "--open"], { cwd: REPO, env, encoding: "utf8", timeout: 30_000 });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  const page = join(dir, "trace.html");
  expect(r.stdout).toBe(`${page}\n`);
  return page;
}

beforeAll(async () => {
  if (!chromiumAvailable()) throw new Error(`Chromium is needed for this test and is not at ${CHROMIUM} (Debian's chromium package; ci/apt-packages.txt)`);
  root = mkdtempSync(join(tmpdir(), "deckhand-viewer-browser-"));
  browser = await launchViewerBrowser({ viewport: { width: 1280, height: 900 } });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  cleanupSandboxes();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe("the trace page in Chromium", () => {
  beforeAll(async () => {
    // A crash mid-write leaves half a line at the end: the page still opens, and says so.
    trace = await writeSyntheticTrace(join(root, "trace"), { truncatedTail: '{"type":"step","program":"p3","ind' });
    pagePath = traceShow(trace.dir);
    opened = await openViewerPage(browser, pagePath);
  }, 60_000);

  it("lists every step in program and step order, with its status; the script ran without an error", async () => {
    expect(opened.errors).toEqual([]);
    expect(await listedSteps(opened.page)).toEqual(trace.order);
    expect(await opened.page.$$eval("section.program", (els) => els.map((e) => e.getAttribute("data-program")))).toEqual(["p1", "p2", "p3", "p4"]);
    await expect(opened.page.locator("#counts").textContent()).resolves.toMatch(/4 programs.*5 steps.*2 failed.*1 refused.*1 skipped lines/);
    await expect(opened.page.locator("#skipped").textContent()).resolves.toContain("cut short");
  });

  it("the failed step is marked failed, with its code and remediation visible", async () => {
    const card = stepCard(opened.page, trace.failed.program, trace.failed.index);
    expect(await card.getAttribute("data-status")).toBe("failed");
    await expect(card.locator(".badge").textContent()).resolves.toBe("failed");
    const mark = card.locator(".failure");
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.locator(".code").textContent()).toBe(trace.failed.code);
    expect(await mark.locator(".remediation").textContent()).toBe(trace.failed.remediation);
    // Colour: a failed card's edge is red, a completed one's green (what "status colours" means to the eye).
    const edge = (program: string, index: number) => stepCard(opened.page, program, index).evaluate((e) => getComputedStyle(e).borderLeftColor);
    expect(await edge(trace.failed.program, trace.failed.index)).toBe("rgb(198, 40, 40)");
    expect(await edge("p1", 0)).toBe("rgb(31, 138, 76)");
  });

  it("a refused step is marked refused, with the policy's code and remediation visible", async () => {
    const card = stepCard(opened.page, trace.refused.program, trace.refused.index);
    expect(await card.getAttribute("data-refused")).toBe("true");
    await expect(card.locator(".badge").textContent()).resolves.toBe("refused");
    const mark = card.locator(".failure");
    expect(await mark.isVisible()).toBe(true);
    expect(await mark.locator(".code").textContent()).toBe(trace.refused.code);
    expect(await mark.locator(".remediation").textContent()).toBe(trace.refused.remediation);
  });

  it("the click marker sits on the clicked element's box, on both images, at any page width", async () => {
    const map = trace.images.before;
    const card = stepCard(opened.page, "p1", 0);
    for (const width of [1280, 720, 420]) {
      await opened.page.setViewportSize({ width, height: 900 });
      for (const which of ["before", "after"] as const) {
        const m = await clickMarkerInBox(card, trace.clickBox, map, { which, screenPoint: trace.clickPoint });
        expect(m.inside, `${which} at ${width}px: ${JSON.stringify(m)}`).toBe(true);
        expect(m.pointError!, `${which} at ${width}px`).toBeLessThan(1.5);
        // The image is shown, not a sliver: the box check means something.
        expect(m.image.width).toBeGreaterThan(100);
      }
    }
    await opened.page.setViewportSize({ width: 1280, height: 900 });
    // The box itself is drawn where the element is (its client rect includes the stroke: compare centres, and sizes within it).
    const img = (await card.locator('figure[data-which="before"] img').boundingBox())!;
    const rect = (await card.locator('figure[data-which="before"] .mark-box').boundingBox())!;
    const k = img.width / map.width;
    const box = trace.clickBox;
    expect(Math.abs(rect.x + rect.width / 2 - (img.x + (box.x + box.width / 2 - map.origin.x) * map.scale * k))).toBeLessThan(1.5);
    expect(Math.abs(rect.y + rect.height / 2 - (img.y + (box.y + box.height / 2 - map.origin.y) * map.scale * k))).toBeLessThan(1.5);
    expect(Math.abs(rect.width - box.width * map.scale * k)).toBeLessThan(4);
    expect(Math.abs(rect.height - box.height * map.scale * k)).toBeLessThan(4);
    // A drag's path is drawn with an arrowhead.
    expect(await stepCard(opened.page, "p3", 0).locator('figure[data-which="before"] polyline.mark-path').getAttribute("marker-end")).toMatch(/^url\(#arrow-\d+\)$/);
  });

  it("hostile app text is shown as text, never as markup", async () => {
    expect(await opened.page.locator('section.program[data-program="p2"] .program-head .app').textContent()).toBe(HOSTILE);
    const srcs = await opened.page.$$eval("img", (els) => els.map((e) => e.getAttribute("src") ?? ""));
    expect(srcs.length).toBeGreaterThan(0);
    for (const s of srcs) expect(s.startsWith("data:image/png;base64,")).toBe(true);
    await expect(stepCard(opened.page, "p2", 0).locator('figure[data-which="after"] .missing').textContent()).resolves.toContain("refused");
  });

  it("the filters hide steps: failed only, by app, and both", async () => {
    const page = opened.page;
    const visible = async () => {
      const out: string[] = [];
      for (const s of await page.locator("section.step").all()) if (await s.isVisible()) out.push(`${await s.getAttribute("data-program")}#${await s.getAttribute("data-index")}`);
      return out;
    };
    expect(await visible()).toEqual(["p1#0", "p1#1", "p1#2", "p2#0", "p3#0", "p4#0"]);
    await page.check("#filter-failed");
    expect(await visible()).toEqual(["p1#1", "p2#0"]);
    expect(await page.locator('section.program[data-program="p3"]').isVisible()).toBe(false);
    // Refused before any step ran: no failed step, but the program failed, and its error stays in view.
    expect(await page.locator('section.program[data-program="p4"]').isVisible()).toBe(true);
    expect(await page.locator('section.program[data-program="p4"] > .failure .code').textContent()).toBe("APP_NOT_FOUND");
    await page.selectOption("#filter-app", "fixture-app");
    expect(await visible()).toEqual(["p1#1"]);
    await page.uncheck("#filter-failed");
    expect(await visible()).toEqual(["p1#0", "p1#1", "p1#2", "p3#0"]);
    expect(await page.locator('section.program[data-program="p2"]').isVisible()).toBe(false);
    await page.selectOption("#filter-app", HOSTILE);
    expect(await visible()).toEqual(["p2#0"]);
    await page.selectOption("#filter-app", "");
    expect(await visible()).toEqual(["p1#0", "p1#1", "p1#2", "p2#0", "p3#0", "p4#0"]);
  });

  it("makes no network request: the only request is the page file itself", async () => {
    expect(opened.requests).toContain(opened.url);
    expect(foreignRequests(opened)).toEqual([]);
  });

  it("the request recorder sees a page that does fetch (so the check above can fail)", async () => {
    const control = join(root, "control.html");
    writeFileSync(control, '<!DOCTYPE html><html><body><div id="timeline"></div><img src="http://127.0.0.1:9/x.png"></body></html>');
    const other = await launchViewerBrowser();
    try {
      const o = await openViewerPage(other, control);
      expect(foreignRequests(o)).toEqual(["http://127.0.0.1:9/x.png"]);
    } finally {
      await other.close();
    }
  });

  it("saves a screenshot of the viewer", async () => {
    mkdirSync(join(REPO, ".state", "test-output"), { recursive: true });
    await opened.page.setViewportSize({ width: 1280, height: 900 });
    await opened.page.screenshot({ path: SCREENSHOT, fullPage: true });
    console.log(`trace viewer screenshot: ${SCREENSHOT}`);
  });
});

describe("a trace recorded by deckhand run --trace (the fake helper)", () => {
  let page: OpenedPage;
  let program: TraceProgramEvent;
  let steps: TraceStepEvent[];

  beforeAll(async () => {
    const sb = await observedSandbox();
    const dir = join(sb.dir, "trace");
    // click, set-value, then set-value into the fixture's password field (refused), then a click never attempted.
    const run = { app: "fixture-app", steps: [{ action: "click", elementIndex: 1 }, { action: "set-value", elementIndex: 3, value: "abc" }, { action: "set-value", elementIndex: 4, value: "hunter22" }, { action: "click", elementIndex: 1 }] };
    const r = await cli(sb, ["run", "--trace", dir], { stdin: JSON.stringify(run) });
    expect(r.envelope.error?.code).toBe("POLICY_DENIED");
    const events = readFileSync(join(dir, TRACE_FILE), "utf8").trimEnd().split("\n").map((l) => TraceEvent.parse(JSON.parse(l)));
    program = events.find((e) => e.type === "program") as TraceProgramEvent;
    steps = events.filter((e) => e.type === "step") as TraceStepEvent[];
    page = await openViewerPage(browser, traceShow(dir));
  }, 60_000);

  it("lists the recorded steps in order with their status; the refused one carries the policy's code and remediation", async () => {
    expect(page.errors).toEqual([]);
    expect(await listedSteps(page.page)).toEqual(steps.map((s) => [s.program, s.index, s.status]));
    const refused = steps.find((s) => s.decision.verdict === "deny")!;
    const card = stepCard(page.page, refused.program, refused.index);
    expect(await card.getAttribute("data-refused")).toBe("true");
    expect(await card.locator(".failure .code").textContent()).toBe(refused.decision.code);
    expect(await card.locator(".failure .remediation").textContent()).toBe(refused.error?.remediation ?? refused.decision.remediation);
  });

  it("the click marker sits on the clicked element's box as the recorder marked it", async () => {
    const click = steps.find((s) => s.action === "click" && s.status === "completed")!;
    expect(click.marks.box).not.toBeNull();
    const before = (click.index === 0 ? program.before : steps.find((s) => s.index === click.index - 1)!.after) as TraceImage;
    expect(before).toHaveProperty("file");
    const m = await clickMarkerInBox(stepCard(page.page, click.program, click.index), click.marks.box!, before, { screenPoint: click.marks.points[0] });
    expect(m.inside, JSON.stringify(m)).toBe(true);
    expect(m.pointError!).toBeLessThan(1.5);
  });

  it("makes no network request", () => {
    expect(foreignRequests(page)).toEqual([]);
  });
});
