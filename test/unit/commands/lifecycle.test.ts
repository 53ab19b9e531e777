// issue 13 (lifecycle): what `launch --app X` starts (pickLaunchTarget) and
// the identities policy decides on before anything is spawned
// (launchIdentities): a terminal behind a wrapper is a terminal.
import { describe, expect, it } from "vitest";
import { launchIdentities, pickLaunchTarget, whichOnPath, type InstalledEntry } from "../../../src/commands/lifecycle.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";

const e = (desktop_id: string, name: string, exec: string[], executable: string | null, extra: Partial<InstalledEntry> = {}): InstalledEntry => ({
  desktop_id, name, exec, executable, terminal: false, no_display: false, ...extra,
});
const INSTALLED = [
  e("org.xfce.mousepad.desktop", "Mousepad", ["mousepad"], "/usr/bin/mousepad"),
  e("org.xfce.mousepad-settings.desktop", "Text Editor Settings", ["mousepad", "--preferences"], "/usr/bin/mousepad"),
  e("a.desktop", "Twin", ["twin-a"], "/opt/a/twin"),
  e("b.desktop", "Twin", ["twin-b"], "/opt/b/twin"),
  e("htop.desktop", "Htop", ["htop"], "/usr/bin/htop", { terminal: true }),
  e("gone.desktop", "Gone", ["deckhand-not-installed"], null),
];
const PATH = process.env.PATH;

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DeckhandError) return `${err.code}${err.details.reason ? `:${err.details.reason}` : ""}`;
    throw err;
  }
  return "ok";
}

describe("pickLaunchTarget", () => {
  it("by desktop id (with or without .desktop), by exact name, by program: the entry's Exec, then the caller's args", () => {
    for (const sel of ["org.xfce.mousepad", "org.xfce.mousepad.desktop", "Mousepad", "mousepad", "/usr/bin/mousepad"]) {
      const t = pickLaunchTarget(sel, INSTALLED, ["--x"], PATH);
      expect(t.entry?.desktop_id, sel).toBe("org.xfce.mousepad.desktop");
      expect(t.executable).toBe("/usr/bin/mousepad");
      expect(t.args).toEqual(["--x"]);
    }
    expect(pickLaunchTarget("org.xfce.mousepad-settings", INSTALLED, ["f"], PATH).args).toEqual(["--preferences", "f"]);
  });

  it("an ambiguous name is AMBIGUOUS_APP; terminal apps and missing programs are LAUNCH_FAILED", () => {
    expect(code(() => pickLaunchTarget("Twin", INSTALLED, [], PATH))).toBe("AMBIGUOUS_APP");
    expect(code(() => pickLaunchTarget("htop", INSTALLED, [], PATH))).toBe("LAUNCH_FAILED:terminal-app");
    expect(code(() => pickLaunchTarget("gone", INSTALLED, [], PATH))).toBe("LAUNCH_FAILED:not-found");
  });

  it("else an executable: an absolute path as given, a name on PATH, nothing else", () => {
    expect(pickLaunchTarget("/bin/sleep", INSTALLED, ["1"], PATH)).toEqual({ entry: null, executable: "/bin/sleep", args: ["1"] });
    expect(pickLaunchTarget("sh", [], [], PATH).executable).toBe(whichOnPath("sh", PATH));
    expect(code(() => pickLaunchTarget("bin/sh", [], [], PATH))).toBe("INVALID_ARGUMENTS");
    expect(code(() => pickLaunchTarget("deckhand-no-such-program", [], [], PATH))).toBe("LAUNCH_FAILED:not-found");
  });
});

describe("launchIdentities", () => {
  it("the program alone, named as its entry is", () => {
    const ids = launchIdentities(pickLaunchTarget("mousepad", INSTALLED, ["xterm"], PATH), PATH);
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatchObject({ name: "Mousepad", executable: "/usr/bin/mousepad", desktopId: "org.xfce.mousepad" });
  });

  it("through a wrapper, every word that names a program or an app too", () => {
    const sh = whichOnPath("sh", PATH)!;
    const ids = launchIdentities({ entry: null, executable: sh, args: ["-c", "exec xterm -e 'top'; true"] }, PATH);
    const names = ids.map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(["exec", "xterm", "top", "true"]));
    expect(names).not.toContain("-c");
    const env = launchIdentities({ entry: null, executable: "/usr/bin/env", args: ["FOO=1", "/usr/bin/xterm"] }, PATH);
    expect(env.find((i) => i.name === "xterm")).toMatchObject({ executable: "/usr/bin/xterm", desktopId: "xterm" });
  });
});
