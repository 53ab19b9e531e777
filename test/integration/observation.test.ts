// Issue 14 through the CLI and serve, against the scripted helper: compact by
// default, full on request, pages of a stored snapshot, the horizon refusal,
// diffs with kept indices, and the flag combinations refused up front.
import { afterAll, describe, expect, it } from "vitest";
import { cleanupSandboxes, cli, expectError, expectOk, sandbox } from "./harness.ts";
import { DEFAULT_COMPACT_MAX_BYTES } from "../../src/protocol/commands.ts";

afterAll(cleanupSandboxes);

const observe = async (sb: ReturnType<typeof sandbox>, extra: string[] = []) =>
  expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--format", "compact", ...extra]), "get-app-state");
const mutations = (ops: string[]) => ops.filter((o) => o === "element_action" || o === "input");

describe("compact by default, full on request", () => {
  it("the default (no --format at all) is compact: tree text of controls and landmarks, no elements[], the budget stated", async () => {
    const sb = sandbox();
    const serve = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot"], { asGiven: true }), "get-app-state");
    expect(serve.snapshot).toMatchObject({ format: "compact", offset: 0, truncated: false, budget: { maxNodes: null, maxBytes: DEFAULT_COMPACT_MAX_BYTES } });
    expect(serve.snapshot.elements).toBeUndefined();
    const text: string = serve.snapshot.treeText;
    for (const want of ['[1] button "OK"', '[3] text_field "Name"', '[4] secure_text_field "Password" (secure)', '[6] checkbox "Subscribe"']) expect(text).toContain(want);
    // The unnamed container around Subscribe is not a line; Subscribe moves up under the window.
    expect(text).not.toContain("container");
    expect(text).toContain('\n  [6] checkbox "Subscribe"');
  });

  it("--format full: every node and the elements", async () => {
    const sb = sandbox();
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--format", "full"]), "get-app-state");
    expect(r.snapshot.format).toBe("full");
    expect(r.snapshot.treeText).toContain("container");
    expect(r.snapshot.elements.map((e: any) => e.index)).toEqual([0, 1, 2, 3, 4, 6, 7]);
    expect(r.snapshot.budget).toEqual({ maxNodes: null, maxBytes: null });
  });

  it("--with-bounds: lines carry bounds and actions", async () => {
    const sb = sandbox();
    const r = await observe(sb, ["--with-bounds"]);
    expect(r.snapshot.treeText).toMatch(/\[1\] button "OK" @-?\d+,-?\d+ \d+x\d+ \[press\]/);
  });
});

describe("pages and the horizon", () => {
  it("--max-nodes 2 cuts the page; an element past it is ELEMENT_BEYOND_HORIZON (nothing sent) until the next page is read; then it is acted on", async () => {
    const sb = sandbox();
    const p1 = await observe(sb, ["--max-nodes", "2"]);
    expect(p1.snapshot).toMatchObject({ truncated: true, nextOffset: 2 });
    expect(p1.snapshot.treeText.split("\n")).toHaveLength(2);
    const id = p1.snapshot.snapshotId;

    const refused = expectError(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "3"]), "click", "ELEMENT_BEYOND_HORIZON");
    expect(refused.details).toMatchObject({ elementIndex: 3, snapshotId: id, reason: "page", nextOffset: 2, delivery: "not_dispatched" });
    expect(mutations(sb.ops())).toEqual([]);
    // What was shown is acted on.
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]), "click");

    const before = sb.ops().filter((o) => o === "get_tree").length;
    const p2 = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--snapshot-id", id, "--offset", "2", "--max-nodes", "2"]), "get-app-state");
    expect(p2.snapshot).toMatchObject({ snapshotId: id, offset: 2, truncated: true, nextOffset: 4 });
    expect(p2.snapshot.treeText).toContain('[3] text_field "Name"');
    // Paging reads no tree.
    expect(sb.ops().filter((o) => o === "get_tree").length).toBe(before);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "3"]), "click");
    // Still beyond: Subscribe (6).
    expectError(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "6"]), "click", "ELEMENT_BEYOND_HORIZON");
    // The last page lifts the horizon.
    const p3 = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--snapshot-id", id, "--offset", "4"]), "get-app-state");
    expect(p3.snapshot.nextOffset).toBeUndefined();
    expect(p3.snapshot.truncated).toBe(false);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "6"]), "click");
  });

  it("paging refusals: --offset without --snapshot-id, an unknown snapshot, another app's snapshot", async () => {
    const sb = sandbox();
    expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--offset", "2"]), "get-app-state", "INVALID_ARGUMENTS");
    expect(sb.ops()).toEqual([]);
    const unknown = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", "--snapshot-id", "cs_NOSUCHSNAPSHOT0000", "--offset", "0"]), "get-app-state", "SNAPSHOT_STALE");
    expect(unknown.details.reason).toBe("not-found");
    const s = await observe(sb);
    sb.control({ toolkits: true });
    const other = await cli(sb, ["get-app-state", "--app", "firefox", "--snapshot-id", s.snapshot.snapshotId, "--offset", "0"]);
    if (!other.envelope.ok) expect(other.envelope.error!.code).toMatch(/SNAPSHOT_STALE|APP_NOT_FOUND|AMBIGUOUS_APP/);
    else throw new Error("another app's snapshot was paged");
  });
});

describe("diffs", () => {
  it("--since: a renamed element is changed with its index kept; the rest unchanged; the tree text is empty", async () => {
    const sb = sandbox();
    const base = await observe(sb);
    sb.control({ replaced: ["0"] });
    const r = await observe(sb, ["--since", base.snapshot.snapshotId]);
    expect(r.snapshot.diff).toMatchObject({ since: base.snapshot.snapshotId, applied: true, added: [], removed: [] });
    expect(r.snapshot.diff.changed).toEqual([{ index: 1, line: '[1] button "OK (replaced)"', changed: ["title"] }]);
    expect(r.snapshot.diff.unchanged).toBe(6);
    expect(r.snapshot.treeText).toBe("");
    expect(r.snapshot.snapshotId).not.toBe(base.snapshot.snapshotId);
    // The new snapshot is the one acted on; index 1 is still OK.
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "1"]), "click");
  });

  it("--since an unknown or expired snapshot: applied false with the reason, and the full page", async () => {
    const sb = sandbox();
    const r = await observe(sb, ["--since", "cs_NOSUCHSNAPSHOT0000"]);
    expect(r.snapshot.diff).toMatchObject({ applied: false, reason: "snapshot_unknown" });
    expect(r.snapshot.treeText).toContain('[1] button "OK"');
    const sb2 = sandbox();
    const old = expectOk(await cli(sb2, ["get-app-state", "--app", "fixture-app", "--no-screenshot", "--format", "compact"], { env: { DECKHAND_SNAPSHOT_TTL_MS: "1" } }), "get-app-state");
    const r2 = await observe(sb2, ["--since", old.snapshot.snapshotId]);
    expect(r2.snapshot.diff).toMatchObject({ applied: false, reason: "snapshot_expired" });
  });

  it("--since another window's snapshot: window_changed", async () => {
    const sb = sandbox();
    const main = await observe(sb);
    const r = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--window-index", "1", "--no-screenshot", "--format", "compact", "--since", main.snapshot.snapshotId]), "get-app-state");
    expect(r.snapshot.diff).toMatchObject({ applied: false, reason: "window_changed" });
  });
});

describe("flag combinations refused before the helper is asked", () => {
  const cases: [string[], string][] = [
    [["--snapshot-id", "cs_X", "--since", "cs_Y"], "--since"],
    [["--no-screenshot", "--marks"], "--marks"],
    [["--no-screenshot", "--ocr"], "--ocr"],
    [["--marks", "--image-format", "jpeg"], "--image-format"],
    [["--quality", "50"], "--quality"],
    [["--region-coords", "screen"], "--region-coords"],
  ];
  for (const [flags, named] of cases) {
    it(`${flags.join(" ")} -> INVALID_ARGUMENTS naming ${named}`, async () => {
      const sb = sandbox();
      const e = expectError(await cli(sb, ["get-app-state", "--app", "fixture-app", ...flags]), "get-app-state", "INVALID_ARGUMENTS");
      expect(e.message).toContain(named);
      expect(sb.ops()).toEqual([]);
    });
  }
});

describe("the horizon only narrows what was never shown", () => {
  it("a snapshot shown whole stays actionable whole after a small page of it", async () => {
    const sb = sandbox();
    const whole = await observe(sb);
    expect(whole.snapshot.truncated).toBe(false);
    const small = expectOk(await cli(sb, ["get-app-state", "--app", "fixture-app", "--snapshot-id", whole.snapshot.snapshotId, "--offset", "0", "--max-nodes", "1"]), "get-app-state");
    expect(small.snapshot.nextOffset).toBe(1);
    expectOk(await cli(sb, ["click", "--app", "fixture-app", "--element-index", "6"]), "click");
  });
});
