// The LibreOffice rows (VCL's gtk3 plugin): Writer's paragraphs are seen;
// Calc is observed without walking its 2^31-child sheet, and a number and a
// formula entered in cells give a computed result read back from the tree.
// Each app runs with a fresh user profile in a temp dir. Registered on a desk
// (desk.ts): the X11 run (test/live/toolkits-libreoffice.test.ts) and the
// Wayland run (test/live/matrix-wayland.test.ts, LibreOffice as a native
// Wayland client) share them. Rows: rows.ts.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect } from "vitest";
import { alivePid, processTree, treeUsage, waitUntil, type TreeApp } from "../harness.ts";
import { newStateDir, requireBuild, Serve } from "../deckhand.ts";
import { libreOfficeProfile, sofficeArgv, writerDocument } from "../app-profiles.ts";
import { rowTest, startFailed, type MatrixDesk } from "./desk.ts";
import { metric } from "./results.ts";
import type { MatrixDesktop } from "./rows.ts";
import { expectNoHarm, observeN, observeTimed, waitAccessible } from "./toolkit.ts";

const OBSERVE_BOUND_MS = 10_000;
const PARAGRAPHS = ["First paragraph from deckhand.", "Second paragraph, with a comma.", "Third and last paragraph."];

/** soffice with a fresh profile that the desktop's apps own. */
function soffice(desk: MatrixDesk, module: "--writer" | "--calc", ...files: string[]): string[] {
  return sofficeArgv(module, desk.handOver(libreOfficeProfile()), ...files);
}

/** LibreOffice's own GUI plugin: gtk3, whose AT-SPI bridge is what users of GNOME desktops get. */
const LO_ENV = { SAL_USE_VCLPLUGIN: "gtk3" };

/** The text a cell shows, from an observation (its name is its reference, its text the value). */
function cellText(st: any, ref: string): string | undefined {
  const el = st.snapshot.elements.find((e: any) => /cell/.test(e.role) && (e.title === ref || String(e.title ?? "").split(/[\s,:]+/).includes(ref)));
  if (!el) return undefined;
  return [el.value, el.title].filter((v) => v !== null && v !== undefined).join(" | ");
}

/** Registers the LibreOffice rows inside the caller's describe; `file` names the test file in the results. */
export function libreOfficeRows(on: MatrixDesktop, desk: () => MatrixDesk, file: string): void {
  let bg: Serve;
  let fg: Serve;
  beforeAll(async () => {
    requireBuild();
    await desk().proveOracles();
    const stateDir = newStateDir();
    bg = new Serve(desk().desktop, { stateDir });
    fg = new Serve(desk().desktop, { stateDir, args: ["--allow-foreground"] });
  }, 90_000);
  afterAll(async () => {
    await bg?.close();
    await fg?.close();
  });

  /** Why Writer or Calc could not be started: its rows then fail, recorded, with that reason. */
  const startFailure = new Map<string, Error>();
  const rowIt = rowTest(on, desk, file, 180_000, (id) => startFailed(startFailure, id.split(".")[0]!));

  describe("Writer", () => {
    let app: TreeApp;
    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), "deckhand-writer-"));
      const doc = writerDocument(dir, "deckhand-paragraphs", PARAGRAPHS);
      desk().handOver(dir);
      try {
        app = await desk().launchAppTree(soffice(desk(), "--writer", doc), { env: LO_ENV, timeoutMs: 120_000, titleMatches: /deckhand-paragraphs/ });
        await waitAccessible(bg, app.pid);
      } catch (err) {
        startFailure.set("writer", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await app?.stop();
    }, 30_000);

    rowIt("writer.observe", async () => {
      const o = await waitUntil("Writer's paragraphs in the tree", 60_000, async () => {
        const o = await observeTimed(bg, { app: `pid:${app.pid}`, windowId: app.windows[0] });
        const text = JSON.stringify(o.st.snapshot.elements.filter((e: any) => e.nativeRole === "paragraph").map((e: any) => [e.title, e.value]));
        return PARAGRAPHS.every((p) => text.includes(p)) ? o : (console.log(`[writer] ${o.ms} ms, no paragraphs yet:\n${String(o.st.snapshot.treeText).slice(0, 1500)}`), undefined);
      }).catch(async (err) => {
        const o = await observeTimed(bg, { app: `pid:${app.pid}`, windowId: app.windows[0] }).catch((e) => ({ st: { snapshot: { treeText: String(e) } }, ms: -1 }));
        throw new Error(`${(err as Error).message}; last observation (${o.ms} ms):\n${String(o.st.snapshot.treeText).slice(0, 3000)}`);
      });
      metric("writer.observe", "observe_ms", o.ms);
      console.log(`[observe] libreoffice-writer: ${o.ms} ms, ${o.st.snapshot.elementCount} elements, truncated ${o.st.snapshot.truncated}`);
      expect(o.ms).toBeLessThan(OBSERVE_BOUND_MS);
    });
    rowIt("writer.harm", async () => {
      await expectNoHarm("writer.harm", app.pid, () => processTree(app.rootPid), async () => {
        const times = await observeN(bg, { app: `pid:${app.pid}`, windowId: app.windows[0] }, 5, "writer.harm");
        console.log(`[observe] libreoffice-writer x5: ${times.join(", ")} ms`);
      });
    });
  });

  describe("Calc", () => {
    let app: TreeApp;
    const obs = (s: Serve, row?: string) => observeTimed(s, { app: `pid:${app.pid}`, windowId: app.windows[0] }, row);
    beforeAll(async () => {
      try {
        app = await desk().launchAppTree(soffice(desk(), "--calc"), { env: LO_ENV, timeoutMs: 120_000, titleMatches: /Calc/ });
        await waitAccessible(bg, app.pid);
      } catch (err) {
        startFailure.set("calc", err as Error);
      }
    }, 150_000);
    afterAll(async () => {
      await app?.stop();
    }, 30_000);

    rowIt("calc.observe", async () => {
      const before = treeUsage(processTree(app.rootPid));
      const o = await obs(bg, "calc.observe");
      console.log(`[observe] libreoffice-calc: ${o.ms} ms, ${o.st.snapshot.elementCount} elements, truncated ${o.st.snapshot.truncated}`);
      expect(alivePid(app.pid), "soffice.bin alive").toBe(true);
      expect(o.ms).toBeLessThan(OBSERVE_BOUND_MS);
      // A bounded observation leaves the sheet idle: no walk of its 2^31
      // children goes on inside soffice after the answer.
      const after = treeUsage(before.pids);
      await new Promise((r) => setTimeout(r, 1000));
      const idle = treeUsage(before.pids).cpuSeconds - after.cpuSeconds;
      metric("calc.observe", "cpu_s", +(after.cpuSeconds - before.cpuSeconds).toFixed(2));
      metric("calc.observe", "idle_cpu_s", +idle.toFixed(2));
      expect(idle, "soffice CPU seconds in the second after the observation").toBeLessThan(0.5);
      expect(cellText(o.st, "A1"), `cell A1 in:\n${String(o.st.snapshot.treeText).slice(0, 3000)}`).toBeDefined();
    });

    rowIt("calc.formula.typed", async () => {
      const app_ = `pid:${app.pid}`;
      for (const [step, args] of [
        ["type-text", { app: app_, text: "42" }],
        ["press-key", { app: app_, key: "Return" }],
        ["type-text", { app: app_, text: "=A1*2" }],
        ["press-key", { app: app_, key: "Return" }],
      ] as const) {
        const r = await fg.request(step, args);
        if (!alivePid(app.pid)) throw new Error(`soffice.bin died during ${step}; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        expect(r.ok, `${step} ${JSON.stringify(args)}: ${JSON.stringify(r.error)}`).toBe(true);
      }
      await waitUntil("A2 to show 84", 10_000, async () => (cellText((await obs(bg)).st, "A2") ?? "").includes("84")).catch(async (err) => {
        const o = await obs(bg);
        throw new Error(`${(err as Error).message}; A1 = ${cellText(o.st, "A1")}, A2 = ${cellText(o.st, "A2")}; tree:\n${String(o.st.snapshot.treeText).slice(0, 2500)}`);
      });
    });

    rowIt("calc.set-value.cell", async () => {
      const st = (await obs(fg)).st;
      const cell = (ref: string) => st.snapshot.elements.find((e: any) => /cell/.test(e.role) && (e.title === ref || String(e.title ?? "").split(/[\s,:]+/).includes(ref)));
      const setCell = async (ref: string, value: string) => {
        const el = cell(ref);
        expect(el, `cell ${ref} in:\n${String(st.snapshot.treeText).slice(0, 2500)}`).toBeDefined();
        const r = await fg.request("set-value", { app: `pid:${app.pid}`, elementIndex: el.index, value });
        if (!alivePid(app.pid)) throw new Error(`soffice.bin died during set-value ${ref}; deckhand reported ${JSON.stringify(r.ok ? "ok:true" : r.error)}`);
        metric("calc.set-value.cell", `route_${ref}`, String(r.result?.route ?? r.error?.code));
        return r;
      };
      // A number goes through Value and is read back.
      const b1 = await setCell("B1", "7");
      expect(b1.ok, `set-value B1=7: ${JSON.stringify(b1.error)}`).toBe(true);
      expect(b1.result.verification.verified).toBe(true);
      // A formula cannot go through Value; the typing fallback needs keyboard
      // focus on the cell, which Calc does not give a cell on GrabFocus: the
      // exact refusal, nothing typed.
      const b2 = await setCell("B2", "=B1+1");
      expect(b2.ok).toBe(false);
      expect(b2.error).toMatchObject({ code: "ACTION_FAILED", details: { reason: "focus-elsewhere", delivery: "not_dispatched", fallback: "focus+select-all+type" } });
      await waitUntil("B1 to show 7", 10_000, async () => /(^|\D)7(\D|$)/.test(cellText((await obs(bg)).st, "B1") ?? ""));
      // An empty cell reads as value 0: B2 must not hold the formula or its result.
      expect(cellText((await obs(bg)).st, "B2") ?? "", "B2 untouched").not.toMatch(/=|(^|\D)8(\D|$)/);
    });

    rowIt("calc.harm", async () => {
      await expectNoHarm("calc.harm", app.pid, () => processTree(app.rootPid), async () => {
        const times = await observeN(bg, { app: `pid:${app.pid}`, windowId: app.windows[0] }, 5, "calc.harm");
        console.log(`[observe] libreoffice-calc x5: ${times.join(", ")} ms`);
        await fg.request("type-text", { app: `pid:${app.pid}`, text: "1" });
        await fg.request("press-key", { app: `pid:${app.pid}`, key: "Return" });
      });
    });
  });
}
