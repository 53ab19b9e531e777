// The README's main-job command stays true: the demo (run inside a private
// desktop by the compiled deckhand) observes the fixture and acts on it, and
// the trace of its program opens in a real browser (issue 16): Debian's
// Chromium, headless, driven by playwright-core, the page loaded from disk.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, expect, it } from "vitest";
import { TraceEvent, TRACE_FILE, type TraceImage, type TraceProgramEvent, type TraceStepEvent } from "../../src/protocol/trace.ts";
import { clickMarkerInBox, foreignRequests, launchViewerBrowser, listedSteps, openViewerPage, stepCard, type ViewerBrowser } from "../support/trace-browser.ts";
import { describeLive } from "./harness.ts";
import { DECKHAND, requireBuild } from "./deckhand.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
let browser: ViewerBrowser | null = null;
afterAll(async () => {
  await browser?.close();
});

describeLive("scripts/demo.sh (its part inside the desktop)", () => {
  const trace = join(mkdtempSync(join(tmpdir(), "deckhand-demo-")), "trace");
  let demo: SpawnSyncReturns<string> | undefined;

  it("observes the fixture, sets Name, clicks OK, and shows what the app received", () => {
    requireBuild();
    demo = spawnSync(DECKHAND, ["desktop", "run", "--", "bash", join(root, "scripts", "demo-inside.sh")], { cwd: root, encoding: "utf8", timeout: 90_000, env: { ...process.env, DECKHAND_DEMO_TRACE: trace } });
    expect(demo.status, demo.stderr).toBe(0);
    expect(demo.stdout).toContain("all granted");
    expect(demo.stdout).toMatch(/set-value: delivery submitted via accessibility, verified/);
    expect(demo.stdout).toContain('"event": "text_changed", "control": "Name", "text": "Ada Lovelace"');
    expect(demo.stdout).toContain('"event": "clicked", "control": "OK"');
    // The traced program: Name set again, OK clicked again, the password field refused.
    expect(demo.stdout).toContain(`trace: ${trace}/trace.html`);
  });

  it("the demo's trace opens in Chromium: its steps in order, the refused one marked, the click marker on OK, no network request", async () => {
    expect(demo?.status).toBe(0);
    const events = readFileSync(join(trace, TRACE_FILE), "utf8").trimEnd().split("\n").map((l) => TraceEvent.parse(JSON.parse(l)));
    const program = events.find((e) => e.type === "program") as TraceProgramEvent;
    const steps = events.filter((e) => e.type === "step") as TraceStepEvent[];
    expect(steps.map((s) => [s.action, s.status])).toEqual([
      ["set-value", "completed"],
      ["click", "completed"],
      ["set-value", "failed"],
    ]);
    // The secret typed into the password field is its length only, here and in the page.
    expect(readFileSync(join(trace, TRACE_FILE), "utf8")).not.toContain("not-a-real-secret");
    expect(readFileSync(join(trace, "trace.html"), "utf8")).not.toContain("not-a-real-secret");

    browser = await launchViewerBrowser();
    const opened = await openViewerPage(browser, join(trace, "trace.html"));
    expect(opened.errors).toEqual([]);
    expect(await listedSteps(opened.page)).toEqual(steps.map((s) => [s.program, s.index, s.status]));
    const refused = stepCard(opened.page, program.id, 2);
    expect(await refused.getAttribute("data-status")).toBe("failed");
    expect(await refused.getAttribute("data-refused")).toBe("true");
    expect(await refused.locator(".failure .code").textContent()).toBe("POLICY_DENIED");
    // The click on OK (which the app itself logged as clicked): the marker on the before image sits in OK's box.
    const click = steps[1]!;
    const before = steps[0]!.after as TraceImage;
    expect(before).toHaveProperty("file");
    const m = await clickMarkerInBox(stepCard(opened.page, program.id, 1), click.marks.box!, before, { screenPoint: click.marks.points[0] });
    expect(m.inside, JSON.stringify(m)).toBe(true);
    expect(m.pointError!).toBeLessThan(1.5);
    // The image is the real window's (the helper's JPEG), decoded by the browser.
    const natural = await stepCard(opened.page, program.id, 1).locator('figure[data-which="before"] img').evaluate((i: HTMLImageElement) => [i.naturalWidth, i.naturalHeight]);
    expect(natural).toEqual([before.width, before.height]);
    expect(foreignRequests(opened)).toEqual([]);
    // The viewer as an operator sees it, for the note (not committed).
    const out = join(root, ".state", "test-output");
    mkdirSync(out, { recursive: true });
    await opened.page.screenshot({ path: join(out, "trace-demo-viewer.png"), fullPage: true });
    console.log(`[trace] viewer screenshot: ${join(out, "trace-demo-viewer.png")}`);
  }, 60_000);
});
