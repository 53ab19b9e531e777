// Wire 1.2 contract, items 5 and 6, against the scripted desktop's
// {toolkits: true} apps: app resolution through wrapper names and case
// (thunderbird is thunderbird-bin, soffice/libreoffice is soffice.bin,
// FIREFOX is firefox), list-apps' toolkit, list-windows' popup, a default
// window that is never a popup, and an app without an accessibility tree
// observed as its screenshot alone with a toolkit-specific warning.
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { noTreeWarning } from "../../src/engine/tree-advice.ts";
import { cleanupSandboxes, cli, expectError, expectOk, FIXTURE_WINDOW, sandbox, ServeProcess, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);
const procs: ServeProcess[] = [];
afterEach(() => {
  for (const p of procs.splice(0)) p.kill();
});

const TB_POPUP = 0x710001;
const TB_MAIN = 0x710002;
const QT_WINDOW = 0x740001;

function desktop(extra: { browser?: boolean } = {}): Sandbox {
  const sb = sandbox();
  sb.control({ toolkits: true, ...extra });
  return sb;
}

function serve(sb: Sandbox, args: string[] = []): ServeProcess {
  const p = new ServeProcess(sb, args);
  procs.push(p);
  return p;
}

describe("app resolution: exact first, then case-insensitive through wrapper names", () => {
  it("each selector resolves to the one app it names", async () => {
    const sb = desktop();
    const p = serve(sb);
    const cases: [string, number][] = [
      ["thunderbird", 7001],
      ["Thunderbird", 7001],
      ["thunderbird-bin", 7001],
      ["/usr/lib/thunderbird/thunderbird-bin", 7001],
      ["soffice", 7002],
      ["soffice.bin", 7002],
      ["libreoffice", 7002],
      ["LibreOffice", 7002],
      ["firefox", 7003],
      ["Firefox", 7003],
      ["FIREFOX", 7003],
      ["fixture-app", 4242],
      ["pid:7004", 7004],
    ];
    const got: [string, number | string][] = [];
    for (const [i, [selector]] of cases.entries()) {
      const r = await p.request({ id: i, command: "list-windows", args: { app: selector } });
      got.push([selector, r.ok ? r.result.app.pid : r.error.code]);
    }
    expect(got).toEqual(cases);
  });

  it("an exact hit is never made ambiguous by a loose one; two loose hits are AMBIGUOUS_APP; no hit is APP_NOT_FOUND", async () => {
    // With the browser fixture, firefox-esr (pid 6001) is a loose "firefox" too.
    const sb = desktop({ browser: true });
    const p = serve(sb);
    const exact = await p.request({ id: 1, command: "list-windows", args: { app: "firefox" } });
    expect(exact.result?.app.pid, JSON.stringify(exact)).toBe(7003);
    const esr = await p.request({ id: 2, command: "list-windows", args: { app: "firefox-esr" } });
    expect(esr.result?.app.pid, JSON.stringify(esr)).toBe(6001);
    const loose = await p.request({ id: 3, command: "list-windows", args: { app: "FIREFOX" } });
    expect(loose.error, JSON.stringify(loose)).toMatchObject({ code: "AMBIGUOUS_APP", details: { app: "FIREFOX" } });
    expect(loose.error.details.candidates).toContain("pid:6001");
    expect(loose.error.details.candidates).toContain("pid:7003");
    const twins = await p.request({ id: 4, command: "list-windows", args: { app: "TWIN" } });
    expect(twins.error?.code).toBe("AMBIGUOUS_APP");
    for (const [id, selector] of [[5, "thunderbird2"], [6, "bird"], [7, "office"]] as const) {
      const none = await p.request({ id, command: "list-windows", args: { app: selector } });
      expect(none.error, `${selector}: ${JSON.stringify(none)}`).toMatchObject({ code: "APP_NOT_FOUND", details: { app: selector } });
    }
  });
});

describe("list-apps toolkit, list-windows popup, and the default window", () => {
  it("list-apps reports each app's toolkit (null when unknown)", async () => {
    const sb = desktop();
    const { apps } = expectOk(await cli(sb, ["list-apps"]), "list-apps");
    const byName = Object.fromEntries(apps.map((a: { name: string; toolkit: string | null; accessible: boolean }) => [a.name, [a.toolkit, a.accessible]]));
    expect(byName).toMatchObject({
      Thunderbird: ["gtk3", true],
      "soffice.bin": ["libreoffice", true],
      Firefox: ["firefox", true],
      "qt-notes": ["qt5", false],
      "canvas-app": [null, false],
      "fixture-app": [null, true],
    });
  });

  it("list-windows marks the open menu as a popup; a window without the field is not one", async () => {
    const sb = desktop();
    const tb = expectOk(await cli(sb, ["list-windows", "--app", "thunderbird"]), "list-windows");
    expect(tb.windows.map((w: { windowId: number; windowIndex: number; popup: boolean }) => [w.windowId, w.windowIndex, w.popup])).toEqual([
      [TB_POPUP, 0, true],
      [TB_MAIN, 1, false],
    ]);
    const fx = expectOk(await cli(sb, ["list-windows", "--app", "fixture-app"]), "list-windows");
    expect(fx.windows.map((w: { popup: boolean }) => w.popup)).toEqual([false, false]);
  });

  it("the default window is never the popup, though it is listed first and on top; an explicit index still reaches it", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "thunderbird", "--no-screenshot"]), "get-app-state");
    expect(state.window.windowId).toBe(TB_MAIN);
    expect(sb.requests().filter((r) => r.op === "get_tree").map((r) => r.args.window_id)).toEqual([TB_MAIN]);
    const popup = expectOk(await cli(sb, ["get-app-state", "--app", "thunderbird", "--no-screenshot", "--window-index", "0"]), "get-app-state");
    expect(popup.window.windowId).toBe(TB_POPUP);
  });

  it("a program on the app without a window flag acts on (and observes) the main window, not the popup", async () => {
    const sb = desktop();
    const program = { app: "thunderbird", noScreenshot: true, steps: [{ action: "press-key", key: "Escape" }] };
    const result = expectOk(await cli(sb, ["run", "--allow-foreground"], { stdin: JSON.stringify(program) }), "run");
    expect(result.windowId).toBe(TB_MAIN);
    const input = sb.requests().find((r) => r.op === "input");
    expect((input!.args.focus as { window_id: number }).window_id).toBe(TB_MAIN);
    expect(result.observation.window.windowId).toBe(TB_MAIN);
  });
});

describe("an app without an accessibility tree", () => {
  it("qt5, accessible:false: screenshot-only snapshot, no get_tree, the Qt remediation", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "qt-notes"]), "get-app-state");
    expect(sb.ops()).not.toContain("get_tree");
    expect(sb.ops()).toContain("screenshot");
    expect(state.window.windowId).toBe(QT_WINDOW);
    expect(state.snapshot).toMatchObject({ elementCount: 0, elements: [], truncated: false });
    expect(state.screenshot.path).toBeTruthy();
    expect(state.warnings).toEqual([noTreeWarning({ name: "qt-notes", toolkit: "qt5" })]);
    const [w] = state.warnings;
    expect(w.code).toBe("NO_ACCESSIBILITY_TREE");
    expect(w.message).toContain("qt-notes");
    expect(w.message).toContain("qt5");
    expect(w.remediation).toContain("QT_ACCESSIBILITY=1");
  });

  it("no toolkit recognised: the generic remediation (screenshot plus foreground coordinates)", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "canvas-app", "--no-screenshot"]), "get-app-state");
    expect(sb.ops()).not.toContain("get_tree");
    expect(state.snapshot.elementCount).toBe(0);
    expect(state.warnings).toHaveLength(1);
    expect(state.warnings[0]).toEqual(noTreeWarning({ name: "canvas-app", toolkit: null }));
    expect(state.warnings[0].remediation).not.toContain("QT_ACCESSIBILITY");
    expect(state.warnings[0].remediation).toContain("foreground");
  });

  it("an app with a tree carries no such warning", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "thunderbird", "--no-screenshot"]), "get-app-state");
    expect(state.warnings).toBeUndefined();
    expect(sb.ops()).toContain("get_tree");
  });

  it("a program's final observation of it: the same warning, still no get_tree", async () => {
    const sb = desktop();
    const program = { app: "qt-notes", steps: [{ action: "press-key", key: "a" }] };
    const result = expectOk(await cli(sb, ["run", "--allow-foreground"], { stdin: JSON.stringify(program) }), "run");
    expect(result.observation.snapshot.elementCount).toBe(0);
    expect(result.observation.warnings).toEqual([noTreeWarning({ name: "qt-notes", toolkit: "qt5" })]);
    expect(result.settle).toEqual({ waitedMs: 100, events: 0, settled: true });
    // The observation after the keys reads no tree (the pre-send safety
    // check of a key press may read one live: that is not the observation).
    const ops = sb.ops();
    expect(ops.slice(ops.indexOf("input"))).toEqual(["input", "settle", "screenshot"]);
  });

  it("the fixture's own windows are unaffected by the extra apps", async () => {
    const sb = desktop();
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state");
    expect(state.window.windowId).toBe(FIXTURE_WINDOW);
    expect(state.snapshot.elementCount).toBe(7);
    expectError(await cli(sb, ["list-windows", "--app", "nothing-like-this"]), "list-windows", "APP_NOT_FOUND");
  });
});
