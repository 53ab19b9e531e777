// `deckhand desktop` start-up progress (issue 16 item 4), on a real private
// desktop: the phases startDesktop reports, in order, and the CLI drawing
// them on a TTY stderr only, erased before the command inside the desktop
// writes anything.
import { spawn } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDesktop } from "../../src/desktop/index.ts";
import { describeLive } from "./harness.ts";

const REPO = join(import.meta.dirname, "..", "..");
const BUN = join(REPO, "node_modules", ".bin", "bun");
const MAIN = join(REPO, "src", "main.ts");
const PTY = join(REPO, "test", "fixtures", "pty-stderr.py");
const ERASE = "\r\x1b[2K";

const PHASES = [
  "desktop: starting the X server (Xvfb)…",
  "desktop: starting the session D-Bus…",
  "desktop: starting the AT-SPI accessibility bus and registry…",
  "desktop: starting the window manager (openbox)…",
];

/** `deckhand desktop ARGV` with stdout a pipe and stderr a pty (or a pipe). */
function desktopCli(argv: string[], stderr: "pty" | "pipe", env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = [PTY, ...(stderr === "pipe" ? ["--pipe"] : []), "--", BUN, MAIN, "desktop", ...argv];
  return new Promise((resolve, reject) => {
    const child = spawn("python3", args, { cwd: REPO, env, stdio: ["pipe", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (d) => (out += d));
    child.on("error", reject);
    child.on("close", (code) => {
      if (code !== 0) return reject(new Error(`pty-stderr.py exited ${code}`));
      const r = JSON.parse(out) as { code: number; stdout: string; stderr: string };
      const utf8 = (s: string) => Buffer.from(s, "latin1").toString("utf8");
      resolve({ code: r.code, stdout: utf8(r.stdout), stderr: utf8(r.stderr) });
    });
    child.stdin.end();
  });
}

describeLive("desktop start-up progress", () => {
  it("startDesktop reports each phase in order, then null once it is up", async () => {
    const phases: (string | null)[] = [];
    const desktop = await startDesktop({ progress: (p) => phases.push(p) });
    try {
      expect(phases).toEqual([...PHASES, null]);
    } finally {
      await desktop.stop();
    }
  });

  it("a failed start-up says it is cleaning up, then null", async () => {
    const phases: (string | null)[] = [];
    await expect(startDesktop({ depth: 7, progress: (p) => phases.push(p) })).rejects.toThrow(/xvfb/);
    expect(phases).toEqual([PHASES[0], "desktop: start-up failed, cleaning up…", null]);
  });

  describe("deckhand desktop run", () => {
    const inside = ["run", "--", "sh", "-c", "echo out; echo err >&2"];

    it("on a TTY stderr: the first phase shows, and the line is erased before the command's own stderr", async () => {
      const r = await desktopCli(inside, "pty");
      expect(r.code).toBe(0);
      expect(r.stdout).toBe("out\n");
      expect(r.stderr).toContain(`${ERASE}${PHASES[0]}`);
      // Everything before the command's line is progress, erased; the command's line is untouched (the pty adds \r).
      expect(r.stderr.endsWith(`${ERASE}err\r\n`)).toBe(true);
      const before = r.stderr.slice(0, -"err\r\n".length);
      expect(before.split(ERASE).filter(Boolean).every((t) => PHASES.includes(t))).toBe(true);
    });

    it("on a piped stderr, or with DECKHAND_PROGRESS=0: only the command's own output", async () => {
      const piped = await desktopCli(inside, "pipe");
      expect(piped).toEqual({ code: 0, stdout: "out\n", stderr: "err\n" });
      const off = await desktopCli(inside, "pty", { ...process.env, DECKHAND_PROGRESS: "0" });
      expect(off).toEqual({ code: 0, stdout: "out\n", stderr: "err\r\n" });
    });
  });
});
