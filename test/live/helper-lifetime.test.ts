// The helper lives no longer than deckhand, however deckhand ends. deckhand
// kills a helper by stopping its process group, walking its tree and then
// SIGKILLing it (src/helpers/supervisor.ts killHelperTree); a deckhand
// SIGKILLed in between (an agent framework's timeout) left the helper
// stopped for ever, with its X and accessibility connections: the end of
// its stdin cannot wake a stopped process. The helper now asks the kernel
// to SIGKILL it when its parent dies (PR_SET_PDEATHSIG), which reaches a
// stopped process too. The real helper, on the real desktop.
import { readdirSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newStateDir, requireBuild, Serve } from "./deckhand.ts";
import { alivePid, describeLive, useDesktop, waitUntil } from "./harness.ts";

/** The helper processes whose parent is `pid`. */
function helpersOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "latin1");
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return ppid === pid && readFileSync(`/proc/${d}/cmdline`, "latin1").includes("deckhand-helper");
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** A process's state letter (R, S, T for stopped...). */
function stateOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
}

describeLive("the helper lives no longer than deckhand", () => {
  const desktop = useDesktop();
  beforeAll(() => requireBuild());
  let serve: Serve | undefined;
  afterAll(async () => {
    if (serve?.child.exitCode === null) serve.child.kill("SIGKILL");
  });

  it("deckhand SIGKILLed while its helper is stopped: the helper dies too", async () => {
    serve = new Serve(desktop, { stateDir: newStateDir() });
    await serve.ok("list-apps");
    const [helper] = helpersOf(serve.child.pid!);
    expect(helper, "serve started its helper").toBeDefined();
    // What killHelperTree does first, and the moment deckhand dies.
    process.kill(helper!, "SIGSTOP");
    await waitUntil("the helper stopped", 3000, async () => stateOf(helper!) === "T");
    serve.child.kill("SIGKILL");
    await waitUntil(`helper ${helper} gone after deckhand died`, 5000, async () => !alivePid(helper!));
  }, 30_000);

  it("deckhand SIGKILLed while its helper is idle: the helper dies too", async () => {
    serve = new Serve(desktop, { stateDir: newStateDir() });
    await serve.ok("list-apps");
    const [helper] = helpersOf(serve.child.pid!);
    expect(helper).toBeDefined();
    serve.child.kill("SIGKILL");
    await waitUntil(`helper ${helper} gone after deckhand died`, 5000, async () => !alivePid(helper!));
  }, 30_000);
});
