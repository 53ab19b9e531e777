// `deckhand helper check` against the real Linux helper on a private desktop
// with the GTK fixture app running: every claimed op answers within the
// contract, the harmless probes stay harmless (the app sees no click, key or
// text change), and the check exits 0. Run through the source CLI with
// --helper, and through the compiled deckhand, which finds the helper beside it.
import { spawn } from "node:child_process";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { CheckReport, CheckRow } from "../../src/helpers/check.ts";
import { desktopEnv, describeLive, launchFixture, useDesktop, type DesktopLike, type Fixture } from "./harness.ts";
import { DECKHAND, HELPER, requireBuild } from "./deckhand.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const BUN = join(root, "node_modules", ".bin", "bun");
const MAIN = join(root, "src", "main.ts");

/** Rows a full Linux desktop must pass (the rest may pass or skip). */
const MUST_PASS = [
  "spawn",
  "handshake.hello",
  "handshake.protocol",
  "handshake.limits",
  "handshake.capabilities",
  "op.permissions",
  "op.list_apps",
  "op.list_windows",
  "op.get_tree",
  "op.hit_test",
  "op.screenshot",
  "op.focused_element",
  "op.settle",
  "op.watch_user_input",
  "declare.mutating",
  "op.input",
  "op.element_action",
  "refuse.unknown_op",
  "tolerance.unknown_fields",
  "cancel.unknown_id",
  "cancel.read",
  "cancel.input",
  "stream",
  "shutdown.eof",
  "frame_limit",
];

function run(desktop: DesktopLike, argv: string[]): Promise<{ code: number | null; report: CheckReport; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env: desktopEnv(desktop), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      try {
        resolveRun({ code, report: JSON.parse(stdout), stderr });
      } catch {
        reject(new Error(`${argv.join(" ")} printed no report (exit ${code}):\n${stdout}\n${stderr}`));
      }
    });
  });
}

function row(report: CheckReport, name: string): CheckRow {
  const r = report.checks.find((c) => c.name === name);
  if (!r) throw new Error(`no row ${name}`);
  return r;
}

function table(report: CheckReport): string {
  return report.checks.map((c) => `${c.name.padEnd(26)} ${c.status.padEnd(5)} ${c.reason}`).join("\n");
}

describeLive("deckhand helper check on the real desktop", () => {
  const desktop = useDesktop();
  let fixture: Fixture;

  beforeAll(async () => {
    requireBuild();
    fixture = await launchFixture(desktop);
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  async function expectConforming(argv: string[]): Promise<CheckReport> {
    const mark = fixture.events().length;
    const { code, report, stderr } = await run(desktop, argv);
    console.log(`${argv.slice(-4).join(" ")}:\n${table(report)}`);
    expect(report.checks.filter((c) => c.status === "fail"), `${table(report)}\n${stderr}`).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ ok: true, helper: { name: "deckhand-helper-linux", platform: "linux" }, protocol: { helper: report.protocol.deckhand } });
    for (const name of MUST_PASS) expect(row(report, name).status, `${name}: ${row(report, name).reason}`).toBe("pass");
    // The probes ran against the fixture, the only app on this desktop.
    expect(row(report, "op.get_tree").reason).toMatch(/"deckhand fixture/);
    expect(row(report, "op.element_action").reason).toMatch(/ELEMENT_UNRESOLVABLE, not_dispatched/);
    expect(row(report, "cancel.input").reason).toMatch(/ACTION_FAILED, cancelled, not_dispatched/);
    expect(row(report, "frame_limit").reason).toMatch(/refused with INVALID_ARGUMENTS, and the helper answers on/);
    // Harmless: the app saw no click, key, text change or toggle.
    const touched = fixture.events().slice(mark).filter((e) => ["clicked", "key", "text_changed", "toggled", "value_changed", "button"].includes(e.event));
    expect(touched).toEqual([]);
    expect(fixture.events().some((e) => e.event === "exit")).toBe(false);
    return report;
  }

  it("the Linux helper passes through the source CLI (--helper)", async () => {
    await expectConforming([BUN, MAIN, "helper", "check", "--helper", HELPER, "--json"]);
  }, 120_000);

  it("the compiled deckhand finds its helper beside it and passes", async () => {
    const report = await expectConforming([DECKHAND, "helper", "check", "--json"]);
    expect(report.helperPath).toMatch(/\/deckhand-helper-linux$/);
  }, 120_000);
});
