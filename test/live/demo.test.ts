// The README's main-job command stays true: the demo (run inside a private
// desktop by the compiled deckhand) observes the fixture and acts on it.
import { spawnSync } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { describeLive } from "./harness.ts";
import { DECKHAND, requireBuild } from "./deckhand.ts";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

describeLive("scripts/demo.sh (its part inside the desktop)", () => {
  it("observes the fixture, sets Name, clicks OK, and shows what the app received", () => {
    requireBuild();
    const r = spawnSync(DECKHAND, ["desktop", "run", "--", "bash", join(root, "scripts", "demo-inside.sh")], { cwd: root, encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("all granted");
    expect(r.stdout).toMatch(/set-value: delivery submitted via accessibility, verified/);
    expect(r.stdout).toContain('"event": "text_changed", "control": "Name", "text": "Ada Lovelace"');
    expect(r.stdout).toContain('"event": "clicked", "control": "OK"');
  });
});
