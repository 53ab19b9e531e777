// The Wayland desktop's seat keeps a keyboard after a virtual keyboard that
// typed is gone (docs/wayland.md, the seat devices): a client started then
// is given a keymap. Without one, Chromium with its renderer accessibility
// on died of SIGSEGV at start. The oracle is what the compositor tells a new
// client (wl_keymap_probe.py: the wl_keyboard.keymap event); the control, a
// desktop without the seat-devices holder, shows the probe sees the failure.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";
import { startDesktop, type Desktop } from "../../src/desktop/index.ts";
import { desktopEnv } from "./harness.ts";
import { HELPER, requireBuild } from "./deckhand.ts";
import { describeWayland } from "./wayland.ts";

const run = promisify(execFile);
const PROBE = join(import.meta.dirname, "wl_keymap_probe.py");
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The keymap a client connecting now is given: "xkb_v1 SIZE", "no_keymap 0" or "none". */
async function keymapOfANewClient(d: Desktop): Promise<string> {
  return (await run("/usr/bin/python3", [PROBE], { env: desktopEnv(d), timeout: 10_000 })).stdout.trim();
}

/** A short-lived virtual keyboard types one key (as the oracle self-check does), and goes. */
async function wtypeOnce(d: Desktop): Promise<void> {
  await run("wtype", ["x"], { env: desktopEnv(d), timeout: 10_000 });
  // sway's input event, and the holder's reconfiguration, come just after.
  await sleep(500);
}

describeWayland("Wayland desktop: the seat keeps a keyboard after a virtual keyboard that typed is gone", () => {
  const desktops: Desktop[] = [];
  afterAll(async () => {
    for (const d of desktops) await d.stop();
  });

  it("with the seat devices: a client started after `wtype x` is given the seat keyboard's keymap", async () => {
    requireBuild();
    const d = await startDesktop({ wayland: true, width: 800, height: 600, seatDevices: HELPER });
    desktops.push(d);
    const before = await keymapOfANewClient(d);
    expect(before).toMatch(/^xkb_v1 [1-9]\d*$/);
    await wtypeOnce(d);
    expect(await keymapOfANewClient(d)).toBe(before);
  }, 60_000);

  it("control, without the seat devices: after `wtype x` a new client is given no keymap (what the holder repairs)", async () => {
    const d = await startDesktop({ wayland: true, width: 800, height: 600 });
    desktops.push(d);
    await wtypeOnce(d);
    expect(await keymapOfANewClient(d)).toMatch(/^(?:none|no_keymap 0)$/);
  }, 60_000);
});
