// Policy applies to observation, not only to actions: a browser on a blocked
// page is not observed (get-app-state, screenshot --app), and a whole-screen
// screenshot blacks out every window observation may not show (denied apps,
// blocked pages, unknown owners) and says how many and why.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, sandbox, type Sandbox } from "./harness.ts";

afterAll(cleanupSandboxes);

const BLOCKED = 'blocked_urls = ["*://*.blocked.example/*"]\n';
function policyFile(sb: Sandbox, text: string): string {
  const p = join(sb.dir, "policy.toml");
  writeFileSync(p, text);
  return p;
}
const screenshots = (sb: Sandbox) => sb.requests().filter((r) => r.op === "screenshot");
const auditLines = (sb: Sandbox) => readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

// The fake desktop (test/fixtures/helpers/fake-helper.mjs): xterm (built-in
// denied) at {0, 700, 640x300}; with {browser: true} Firefox at {100, 100, 900x700}.
// Denied windows are blacked out with the window manager's frame: 40 px above, 8 px around.
const XTERM_FRAMED = { x: -8, y: 660, width: 656, height: 348 };
const FIREFOX_FRAMED = { x: 92, y: 60, width: 916, height: 748 };

describe("blocked URLs apply to observation", () => {
  it("get-app-state of a browser on a blocked page is BLOCKED_URL: nothing captured or saved, the audit names the rule, never the URL", async () => {
    const sb = sandbox();
    sb.control({ browser: true });
    const policy = policyFile(sb, BLOCKED);
    const e = expectError(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy]), "get-app-state", "BLOCKED_URL");
    expect(e.details.rule).toBe("user:blocked_urls[0]");
    expect(JSON.stringify(e)).not.toContain("blocked.example/account");
    expect(screenshots(sb)).toEqual([]);
    // No snapshot and no image of the page: the state dir holds the audit log only.
    expect(sb.stateFiles().map((f) => f.path.split("/").pop())).toEqual(["audit.jsonl"]);
    const audit = auditLines(sb);
    expect(audit.at(-1)).toMatchObject({ command: "get-app-state", decision: "deny", outcome: "BLOCKED_URL", rule: "user:blocked_urls[0]", delivery: "not_dispatched" });
    expect(readFileSync(join(sb.stateDir, "audit.jsonl"), "utf8")).not.toContain("blocked.example");
  });

  it("issue 14: a stored snapshot of a page blocked since is not paged either (BLOCKED_URL, audited)", async () => {
    const sb = sandbox();
    sb.control({ browser: true, url: "https://www.allowed.example/a" });
    const policy = policyFile(sb, BLOCKED);
    const st = expectOk(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy, "--no-screenshot", "--format", "compact"]), "get-app-state");
    expectOk(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy, "--snapshot-id", st.snapshot.snapshotId, "--offset", "0"]), "get-app-state");
    sb.control({ browser: true, url: "https://www.blocked.example/account" });
    const e = expectError(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy, "--snapshot-id", st.snapshot.snapshotId, "--offset", "0"]), "get-app-state", "BLOCKED_URL");
    expect(JSON.stringify(e)).not.toContain("blocked.example/account");
    expect(auditLines(sb).at(-1)).toMatchObject({ command: "get-app-state", decision: "deny", outcome: "BLOCKED_URL" });
  });

  it("screenshot --app of a browser on a blocked page is BLOCKED_URL; no capture is asked for", async () => {
    const sb = sandbox();
    sb.control({ browser: true });
    const policy = policyFile(sb, BLOCKED);
    expectError(await cli(sb, ["screenshot", "--app", "firefox-esr", "--policy", policy]), "screenshot", "BLOCKED_URL");
    expect(screenshots(sb)).toEqual([]);
  });

  it("a browser whose URL cannot be read is not observed while URLs are blocked (url_unreadable)", async () => {
    const sb = sandbox();
    sb.control({ browser: true, url: "" });
    const policy = policyFile(sb, BLOCKED);
    const e = expectError(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy]), "get-app-state", "BLOCKED_URL");
    expect(e.details.reason).toBe("url_unreadable");
    expect(screenshots(sb)).toEqual([]);
  });

  it("the same browser on an allowed page is observed, screenshot included", async () => {
    const sb = sandbox();
    sb.control({ browser: true, url: "https://docs.example.org/start" });
    const policy = policyFile(sb, BLOCKED);
    const state = expectOk(await cli(sb, ["get-app-state", "--app", "firefox-esr", "--policy", policy]), "get-app-state");
    expect(state.screenshot).not.toBeNull();
    expect(expectOk(await cli(sb, ["screenshot", "--app", "firefox-esr", "--policy", policy]), "screenshot").screenshot.path).toBeTruthy();
  });
});

describe("whole-screen screenshot redaction", () => {
  it("the denied terminal's window (with its frame) is blacked out, and the result counts it", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot"]), "screenshot");
    const [shot] = screenshots(sb);
    expect(shot!.args).toMatchObject({ window_id: 0, redact_secure: true, redact: [XTERM_FRAMED] });
    expect(r.redacted).toEqual({ deniedWindows: 1, blockedUrls: 0, unidentifiedWindows: 0, secureFields: 1 });
    expect(r.windowId).toBe(0);
  });

  it("a browser on a blocked page is blacked out as well; on an allowed page it is not", async () => {
    const sb = sandbox();
    sb.control({ browser: true });
    const policy = policyFile(sb, BLOCKED);
    const r = expectOk(await cli(sb, ["screenshot", "--policy", policy]), "screenshot");
    expect(screenshots(sb)[0]!.args.redact).toEqual(expect.arrayContaining([XTERM_FRAMED, FIREFOX_FRAMED]));
    expect((screenshots(sb)[0]!.args.redact as unknown[]).length).toBe(2);
    expect(r.redacted).toMatchObject({ deniedWindows: 1, blockedUrls: 1, unidentifiedWindows: 0 });

    const sb2 = sandbox();
    sb2.control({ browser: true, url: "https://docs.example.org/start" });
    const r2 = expectOk(await cli(sb2, ["screenshot", "--policy", policyFile(sb2, BLOCKED)]), "screenshot");
    expect(screenshots(sb2)[0]!.args.redact).toEqual([XTERM_FRAMED]);
    expect(r2.redacted).toMatchObject({ deniedWindows: 1, blockedUrls: 0 });
  });

  it("window-level rules count: a window whose title a deny entry matches is blacked out, the app's other window is not", async () => {
    const sb = sandbox();
    const policy = policyFile(sb, '[[deny]]\nwindow_title = "*fixture 2*"\n');
    const r = expectOk(await cli(sb, ["screenshot", "--policy", policy]), "screenshot");
    // deckhand fixture 2 is at {900, 20, 300x200}.
    expect(screenshots(sb)[0]!.args.redact).toEqual(expect.arrayContaining([XTERM_FRAMED, { x: 892, y: -20, width: 316, height: 248 }]));
    expect((screenshots(sb)[0]!.args.redact as unknown[]).length).toBe(2);
    expect(r.redacted.deniedWindows).toBe(2);
  });

  it("a denied window that appears during the capture: the image is discarded and taken again with it blacked out", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["screenshot"], { mode: "late-xterm" }), "screenshot");
    const shots = screenshots(sb);
    expect(shots.map((s) => s.args.redact)).toEqual([[], [XTERM_FRAMED]]);
    expect(r.redacted.deniedWindows).toBe(1);
    expect(r.screenshot.path).toBe(shots[1]!.args.path);
    // Only the second image is kept.
    const pngs = sb.stateFiles().filter((f) => f.path.endsWith(".png"));
    expect(pngs.map((f) => f.path)).toEqual([r.screenshot.path]);
  });
});

describe("identity comes from the helper's list_apps (wire 2.0)", () => {
  it("the process name the helper reports decides like the executable: a terminal under another executable is denied", async () => {
    const sb = sandbox();
    // fixture-app's process is xterm as far as the OS is concerned (a wrapper's exe, the terminal's name).
    sb.control({ processNames: { "4242": "xterm" } });
    const e = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"]), "get-app-state", "POLICY_DENIED");
    expect(e.details).toMatchObject({ source: "builtin", matchedBy: "comm" });
    expect(sb.ops()).not.toContain("get_tree");
  });

  it("an executable the helper reports replaced on disk: an allow entry by path no longer lifts the default deny", async () => {
    const sb = sandbox();
    const policy = policyFile(sb, 'default = "deny"\n[[allow]]\npath = "/usr/bin/fixture-app"\n');
    expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--policy", policy]), "get-app-state");
    sb.control({ deletedExecutables: [4242] });
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--policy", policy]), "get-app-state", "POLICY_DENIED");
  });
});
