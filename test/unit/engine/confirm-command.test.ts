// Safety.confirmCommand: the confirm hook for commands sensitive as a whole
// (quit, set the clipboard). The hook reads the description on stdin, the
// decision is audited, and nothing of a value travels to the hook.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSafety } from "../../../src/engine/default-safety.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

const fx = (name: string) => join(import.meta.dirname, "..", "confirm", "fixtures", name);
const app = { name: "Mousepad", pid: 4242, executable: "/usr/bin/mousepad", desktopId: "org.xfce.mousepad.desktop", startTime: null };
const dirs: string[] = [];
function env() {
  const dir = mkdtempSync(join(tmpdir(), "dh-confirm-cmd-"));
  dirs.push(dir);
  return { dir, env: { ...process.env, DECKHAND_STATE_DIR: dir, DECKHAND_CONFIRM_CMD: "", XDG_CONFIG_HOME: dir } as NodeJS.ProcessEnv };
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const auditLines = (dir: string) =>
  readFileSync(join(dir, "audit.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));

describe("Safety.confirmCommand", () => {
  it("without a hook: CONFIRM_REQUIRED, audited as a denial", async () => {
    const { dir, env: e } = env();
    const safety = createSafety({}, e);
    const err = await safety.confirmCommand({ app, window: null, command: "quit", action: "quit", reason: "closes the app's windows" }).catch((x) => x);
    expect(err).toBeInstanceOf(DeckhandError);
    expect((err as DeckhandError).code).toBe("CONFIRM_REQUIRED");
    const last = auditLines(dir).at(-1);
    expect(last).toMatchObject({ command: "quit", decision: "deny", decision_source: "confirm", rule: "command:quit", outcome: "CONFIRM_REQUIRED", delivery: "not_dispatched" });
  });

  it("the hook gets the description on stdin and its allow is audited", async () => {
    const { dir, env: e } = env();
    const out = join(dir, "hook-input.json");
    const safety = createSafety({ confirmCmd: `${fx("record.sh")} ${out}` }, e);
    await safety.confirmCommand({ app, window: { windowId: 77, title: "notes.txt" }, command: "clipboard-set", action: "set_clipboard", reason: "replaces the clipboard" });
    const seen = JSON.parse(readFileSync(out, "utf8"));
    expect(seen).toMatchObject({ version: 1, command: "clipboard-set", action: "set_clipboard", app: { name: "Mousepad", pid: 4242 }, window: { id: 77, title: "notes.txt" } });
    expect(auditLines(dir).at(-1)).toMatchObject({ command: "clipboard-set", decision: "allow", decision_source: "confirm", outcome: "OK" });
  });

  it("a refusing hook: CONFIRM_DENIED, audited", async () => {
    const { dir, env: e } = env();
    const safety = createSafety({ confirmCmd: fx("deny.sh") }, e);
    const err = await safety.confirmCommand({ app: null, window: null, command: "clipboard-set", action: "set_clipboard", reason: "replaces the clipboard" }).catch((x) => x);
    expect((err as DeckhandError).code).toBe("CONFIRM_DENIED");
    expect(auditLines(dir).at(-1)).toMatchObject({ decision: "deny", outcome: "CONFIRM_DENIED" });
  });
});
