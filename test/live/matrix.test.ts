// Runs the acceptance matrix (test/live/matrix/rows.ts) against the real
// desktop through the compiled deckhand, and records each row's outcome in
// .state/matrix-results.json (untracked; merged with the rows other files
// run, see matrix/results.ts), from which docs/support.md is generated. The
// rows count only after the run proved its oracles (matrix/oracles.ts:
// proveOracles injects a focus steal, a pointer nudge and a stray keystroke
// and requires each oracle to catch it).
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, launchApp, useDesktop } from "./harness.ts";
import { newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { appliesOn, ROWS } from "./matrix/rows.ts";
import { oracleProof, proveOracles } from "./matrix/oracles.ts";
import { record as recordRow } from "./matrix/results.ts";
import { mousepadRow, widgetFactoryRows } from "./matrix/app-runners.ts";
import { x11Desk } from "./matrix/desk.ts";
import { FIXTURE_RUNNERS, type Ctx } from "./matrix/fixture-runners.ts";

const FILE = "matrix.test.ts";

function record(id: string, fn: () => Promise<void>): Promise<void> {
  return recordRow(id, FILE, fn);
}

describeLive("acceptance matrix: fixture app", () => {
  const desktop = useDesktop();
  const ctx = {} as Ctx;
  beforeAll(async () => {
    requireBuild();
    ctx.desk = x11Desk(desktop);
    // Before any row counts: the oracles must catch what they are there to catch.
    await proveOracles(desktop);
    ctx.stateDir = newStateDir();
    ctx.fixture = await ctx.desk.launchFixture();
    ctx.mainWindow = await ctx.desk.windowId(ctx.fixture, "deckhand fixture");
    ctx.bg = new Serve(desktop, { stateDir: ctx.stateDir });
    ctx.fg = new Serve(desktop, { stateDir: ctx.stateDir, args: ["--allow-foreground"] });
  });
  afterAll(async () => {
    await ctx.bg?.close();
    await ctx.fg?.close();
    await ctx.fixture?.stop();
  });
  it("oracle self-check: a focus steal, a pointer nudge and a stray keystroke are each caught", () => {
    const proof = oracleProof();
    for (const c of proof?.checks ?? []) console.log(`[oracles] ${c.injection} -> ${c.oracle}: ${c.caught ? "caught" : "quiet"} ${JSON.stringify(c.report).slice(0, 200)}`);
    expect(proof?.ok, JSON.stringify(proof, null, 2)).toBe(true);
    for (const c of proof!.checks) expect(c.caught, c.injection).toBe(c.injection !== "none");
  });
  // Rows of other files that also use the fixture (issue 13: clipboard.*) are theirs to run.
  for (const r of ROWS.filter((x) => x.app === "fixture" && x.id.startsWith("fixture.") && appliesOn(x, "x11"))) {
    it(`${r.id}: ${r.action} -> ${r.expect}`, async () => {
      const run = FIXTURE_RUNNERS[r.id];
      if (!run) throw new Error(`row ${r.id} has no runner`);
      await record(r.id, () => run(ctx));
    });
  }
});

describeLive("acceptance matrix: real applications", () => {
  const desktop = useDesktop();
  let stateDir: string;
  let bg: Serve;
  beforeAll(async () => {
    requireBuild();
    // Proved once per run; again here when only these rows were selected.
    if (!oracleProof()?.ok) await proveOracles(desktop);
    stateDir = newStateDir();
    bg = new Serve(desktop, { stateDir });
  });
  afterAll(async () => {
    await bg?.close();
  });

  it("widget-factory.observe / click.page / set-value.entry", async () => {
    const app = await launchApp(desktop, ["/usr/bin/gtk3-widget-factory"]);
    try {
      await widgetFactoryRows(bg, app.pid, record);
    } finally {
      await app.stop();
    }
  });

  it("mousepad.type-select-replace-undo", async () => {
    await record("mousepad.type-select-replace-undo", async () => {
      const app = await launchApp(desktop, ["/usr/bin/mousepad", "--disable-server"]);
      try {
        await mousepadRow(bg, app.pid);
      } finally {
        await app.stop();
      }
    });
  });
});

