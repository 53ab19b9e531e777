// Driving the trace viewer page in a real browser: Debian's Chromium, headless,
// through playwright-core (never a downloaded browser). Shared by the viewer's
// browser test on a synthetic trace and the live test on a recorded one.
//
// What is checked here is computed from the trace's own numbers and the page's
// layout, not from the viewer's code: where a click marker should sit is the
// element's screen rect mapped onto the <img> as the browser laid it out.
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type BrowserContext, type Locator, type Page } from "playwright-core";

export const CHROMIUM = process.env.DECKHAND_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export function chromiumAvailable(): boolean {
  return existsSync(CHROMIUM);
}

export interface ViewerBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh user data dir (removed on close). */
export async function launchViewerBrowser(opts: { viewport?: { width: number; height: number } } = {}): Promise<ViewerBrowser> {
  const profile = mkdtempSync(join(tmpdir(), "deckhand-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: opts.viewport ?? { width: 1280, height: 900 },
    offline: true,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface OpenedPage {
  page: Page;
  url: string;
  /** Every URL the page requested (each once), the page itself included; anything but the page and data: URLs was aborted. */
  requests: string[];
  /** Uncaught script errors and console errors (a CSP violation is logged as one). */
  errors: string[];
}

/**
 * Opens a page file from disk, recording every request two ways: the
 * context's routing (which also aborts anything that is not the file or a
 * data: URL, so nothing reaches a network even if asked) and request events.
 */
export async function openViewerPage(browser: ViewerBrowser, htmlPath: string): Promise<OpenedPage> {
  const url = pathToFileURL(htmlPath).href;
  const requests: string[] = [];
  const errors: string[] = [];
  const seen = (u: string) => {
    if (!requests.includes(u)) requests.push(u);
  };
  await browser.context.route("**", (route) => {
    const u = route.request().url();
    seen(u);
    if (u === url || u.startsWith("data:")) return route.continue();
    return route.abort();
  });
  const page = await browser.context.newPage();
  page.on("request", (r) => seen(r.url()));
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("#timeline", { state: "attached" });
  return { page, url, requests, errors };
}

/** Requests other than the page file itself and data: URLs (there should be none). */
export function foreignRequests(opened: OpenedPage): string[] {
  return opened.requests.filter((u) => u !== opened.url && !u.startsWith("data:"));
}

/** A step's card on the page. */
export function stepCard(page: Page, program: string, index: number): Locator {
  return page.locator(`section.step[data-program="${program}"][data-index="${index}"]`);
}

/** Every step card in page order: [program, index, status]. */
export async function listedSteps(page: Page): Promise<[string, number, string][]> {
  return page.$$eval("section.step", (els) => els.map((e) => [e.getAttribute("data-program") ?? "", Number(e.getAttribute("data-index")), e.getAttribute("data-status") ?? ""] as [string, number, string]));
}

/** A step's image map: a TraceImage of the trace (src/protocol/trace.ts) is one, pass it as it is. */
export interface ImageMap {
  origin: { x: number; y: number };
  scale: number;
  /** The image's size in pixels (the trace's width and height). */
  width: number;
  height: number;
}

export interface MarkerCheck {
  /** Centre of the click marker's circle, in page (client) pixels. */
  centre: { x: number; y: number };
  /** The element's screen rect mapped onto the displayed image, in client pixels. */
  box: { left: number; top: number; right: number; bottom: number };
  /** The displayed image's rect. */
  image: { x: number; y: number; width: number; height: number };
  inside: boolean;
  /** With a screen point (the click's, from the trace): the marker centre's distance from where it maps, in client pixels. */
  pointError: number | null;
}

/**
 * Whether the click marker drawn on a step's image (`which`: before or after)
 * lies inside the element's box: `screenBox` (screen coordinates, from the
 * trace) mapped through `map` (imageX = (screenX - origin.x) * scale) and the
 * <img>'s laid-out size, compared with the marker circle's own client rect.
 */
export async function clickMarkerInBox(
  card: Locator,
  screenBox: { x: number; y: number; width: number; height: number },
  map: ImageMap,
  opts: { which?: "before" | "after"; screenPoint?: { x: number; y: number } } = {},
): Promise<MarkerCheck> {
  const which = opts.which ?? "before";
  const figure = card.locator(`figure[data-which="${which}"]`);
  const img = await figure.locator("img").boundingBox();
  const circle = await figure.locator(".mark-click circle").first().boundingBox();
  if (!img) throw new Error(`no ${which} image shown`);
  if (!circle) throw new Error(`no click marker on the ${which} image`);
  const sx = img.width / map.width;
  const sy = img.height / map.height;
  const box = {
    left: img.x + (screenBox.x - map.origin.x) * map.scale * sx,
    top: img.y + (screenBox.y - map.origin.y) * map.scale * sy,
    right: img.x + (screenBox.x + screenBox.width - map.origin.x) * map.scale * sx,
    bottom: img.y + (screenBox.y + screenBox.height - map.origin.y) * map.scale * sy,
  };
  const centre = { x: circle.x + circle.width / 2, y: circle.y + circle.height / 2 };
  const p = opts.screenPoint;
  const pointError = p ? Math.hypot(img.x + (p.x - map.origin.x) * map.scale * sx - centre.x, img.y + (p.y - map.origin.y) * map.scale * sy - centre.y) : null;
  return { centre, box, image: img, inside: centre.x >= box.left && centre.x <= box.right && centre.y >= box.top && centre.y <= box.bottom, pointError };
}
