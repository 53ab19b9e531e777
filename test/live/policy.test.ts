// Issue: safety on the real desktop. A terminal (xterm: X11, no
// accessibility) is listed — policy must see it — and every way of reaching
// it is denied: by name, by pid, through a symlink, as a renamed copy.
import { copyFileSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { describeLive, launchApp, useDesktop } from "./harness.ts";
import { deckhand, newStateDir, ok, requireBuild } from "./deckhand.ts";

describeLive("policy against real processes", () => {
  const desktop = useDesktop();
  let state: string;
  beforeAll(() => {
    requireBuild();
    state = newStateDir();
  });

  async function expectDenied(selector: string, appPid: number) {
    const apps = await ok(desktop, ["list-apps"], { stateDir: state });
    const listed = apps.apps.find((a: any) => a.pid === appPid);
    expect(listed, "the terminal is listed even without accessibility").toBeDefined();
    expect(listed.accessible).toBe(false);
    const check = await ok(desktop, ["policy-check", "--app", selector], { stateDir: state });
    expect(check).toMatchObject({ decision: "deny", source: "builtin" });
    for (const args of [["get-app-state", "--app", selector], ["screenshot", "--app", selector], ["list-windows", "--app", selector]]) {
      const r = await deckhand(desktop, args, { stateDir: state });
      expect(r.envelope.error?.code, args.join(" ")).toBe("POLICY_DENIED");
    }
  }

  it("xterm by name and by pid", async () => {
    const app = await launchApp(desktop, ["/usr/bin/xterm", "-geometry", "60x10+1200+600"]);
    try {
      await expectDenied("xterm", app.pid);
      await expectDenied(`pid:${app.pid}`, app.pid);
    } finally {
      await app.stop();
    }
  });

  it("a symlink to xterm with another name", async () => {
    const dir = mkdtempSync(join(tmpdir(), "deckhand-policy-"));
    const link = join(dir, "notes-viewer");
    symlinkSync("/usr/bin/xterm", link);
    const app = await launchApp(desktop, [link, "-geometry", "60x10+1200+600"]);
    try {
      await expectDenied(`pid:${app.pid}`, app.pid);
    } finally {
      await app.stop();
    }
  });

  it("a renamed copy of the xterm binary (content fingerprint)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "deckhand-policy-"));
    const copy = join(dir, "calculator");
    copyFileSync("/usr/bin/xterm", copy);
    const app = await launchApp(desktop, [copy, "-geometry", "60x10+1200+600"]);
    try {
      await expectDenied(`pid:${app.pid}`, app.pid);
    } finally {
      await app.stop();
    }
  });
});
