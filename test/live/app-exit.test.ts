// An app that dies during an action is reported as such (issue 11): the
// fixture exits inside the OK button's grab-focus handler, which GTK runs
// within the accessibility call (GrabFocus), so the call was sent and never
// answered. The answer is APP_EXITED with delivery submitted, never ok and
// never a "name mismatch". (A click's DoAction GTK answers first and runs
// from an idle: an app exiting in its handler has answered, and the click
// was delivered.)
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeLive, launchFixture, useDesktop, type Fixture } from "./harness.ts";
import { deckhand, newStateDir, requireBuild } from "./deckhand.ts";

describeLive("an app that exits during an action", () => {
  const desktop = useDesktop();
  const state = newStateDir();
  let fixture: Fixture;

  beforeAll(async () => {
    requireBuild();
    fixture = await launchFixture(desktop, { env: { DECKHAND_FIXTURE_EXIT_ON: "OK" } });
  });
  afterAll(async () => {
    await fixture?.stop();
  });

  it("focus OK, whose grab-focus handler exits the process: APP_EXITED, delivery submitted", async () => {
    const main = String((fixture.events().find((e) => e.event === "ready") as any).windows.find((w: any) => w.title === "deckhand fixture").xid);
    const st = await deckhand(desktop, ["get-app-state", "--app", `pid:${fixture.pid}`, "--window-id", main, "--no-screenshot", "--json"], { stateDir: state });
    expect(st.envelope.ok, JSON.stringify(st.envelope.error)).toBe(true);
    const ok = (st.envelope.result as any).snapshot.elements.find((e: any) => e.role === "button" && e.title === "OK");
    expect(ok).toBeDefined();
    const r = await deckhand(desktop, ["focus", "--app", `pid:${fixture.pid}`, "--element-index", String(ok.index), "--json"], { stateDir: state });
    expect(r.envelope.ok).toBe(false);
    expect(r.envelope.error?.code, JSON.stringify(r.envelope.error)).toBe("APP_EXITED");
    expect(r.envelope.error?.details.delivery).toBe("submitted");
    // The app really died in that handler: its exit code is the handler's.
    const status = await fixture.exit;
    expect(status.code, "the exit code the handler chose").toBe(3);
  });
});
