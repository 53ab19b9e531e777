import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decideApp } from "../../../src/policy/decide.ts";
import { FingerprintIndex, fileSha256 } from "../../../src/policy/fingerprint.ts";
import {
  canonicalExecutable,
  identityFromPid,
  identityFromWireApp,
  identityKeys,
  processComm,
} from "../../../src/policy/identity.ts";
import { EMPTY_POLICY } from "../../../src/policy/load.ts";
import { fakeBinary, ident, killAll, policyOf, run, tempDir } from "./helpers.ts";

const linux = process.platform === "linux";
const noFingerprints = { fingerprints: null };

describe.runIf(linux)("identity of a live process (bypass attempts)", () => {
  const t = tempDir();
  // A "terminal install": a directory holding the real-named binary.
  const bin = join(t.dir, "bin");
  let xterm: string;
  beforeAll(() => {
    mkdirSync(bin);
    xterm = fakeBinary(join(bin, "xterm"));
  });
  afterEach(killAll);
  afterAll(t.cleanup);

  it("pid:N resolves through /proc, not through any typed name", () => {
    const pid = run(xterm);
    const id = identityFromPid(pid);
    expect(id.executable).toBe(xterm);
    expect(id.comm).toBe("xterm");
    expect(canonicalExecutable(pid)).toBe(xterm);
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", source: "builtin", rule: "builtin:terminal:xterm" });
  });

  it("a helper report that lies about the executable is overridden by /proc", () => {
    const pid = run(xterm);
    const id = identityFromWireApp({ pid, name: "Text Editor", executable: "/usr/bin/gedit", desktop_id: null });
    expect(id.executable).toBe(xterm);
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints).decision).toBe("deny");
  });

  it("a symlink named innocently still resolves to xterm", () => {
    const link = join(t.dir, "notes-app");
    symlinkSync(xterm, link);
    const pid = run(link);
    const id = identityFromPid(pid);
    expect(id.executable).toBe(xterm);
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "executable" });
  });

  it("a renamed copy is caught by content fingerprint", () => {
    const copy = fakeBinary(join(t.dir, "foo"));
    const pid = run(copy);
    const id = identityFromPid(pid);
    expect(id.executable).toBe(copy);
    expect(id.comm).toBe("foo");
    // Without fingerprints the renamed copy would pass: that is the gap they close.
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints).decision).toBe("allow");
    const fingerprints = new FingerprintIndex({ dirs: [bin] });
    expect(fingerprints.knownPaths()).toEqual([xterm]);
    expect(decideApp(EMPTY_POLICY, id, undefined, { fingerprints })).toMatchObject({
      decision: "deny",
      source: "builtin",
      rule: "builtin:terminal:xterm",
      matchedBy: "fingerprint",
    });
  });

  it("a renamed copy with a case change is caught by name, case-insensitively", () => {
    const copy = fakeBinary(join(t.dir, "XTerm"));
    const pid = run(copy);
    expect(processComm(pid)).toBe("XTerm");
    expect(decideApp(EMPTY_POLICY, identityFromPid(pid), undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "executable" });
  });

  it("a user allow entry cannot lift the built-in deny of a pid", () => {
    const pid = run(xterm);
    const policy = policyOf(null, `default = "allow"\n[[allow]]\nid = "xterm"\n[[allow]]\npath = "${xterm}"\n`);
    expect(decideApp(policy, identityFromPid(pid), undefined, noFingerprints).source).toBe("builtin");
  });

  it("a dead pid has no executable and no comm", () => {
    expect(canonicalExecutable(2 ** 22 + 12345)).toBeNull();
    expect(processComm(2 ** 22 + 12345)).toBeNull();
    expect(canonicalExecutable(-1)).toBeNull();
  });
});

describe("fingerprint index", () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it("never fingerprints a shared launcher a built-in name links to", () => {
    const bin = join(t.dir, "snapbin");
    mkdirSync(bin);
    const launcher = join(t.dir, "snap");
    writeFileSync(launcher, "#!/bin/sh\necho launcher\n", { mode: 0o755 });
    symlinkSync(launcher, join(bin, "alacritty"));
    const index = new FingerprintIndex({ dirs: [bin] });
    expect(index.knownPaths()).toEqual([]);
    expect(index.lookup(launcher)).toBeNull();
  });

  it("hashes only same-size files and caches by inode and mtime", () => {
    const bin = join(t.dir, "fpbin");
    mkdirSync(bin);
    writeFileSync(join(bin, "kitty"), "terminal-bytes");
    const other = join(t.dir, "other");
    writeFileSync(other, "different-size-bytes");
    const same = join(t.dir, "same");
    writeFileSync(same, "terminal-bytes");
    const index = new FingerprintIndex({ dirs: [bin] });
    expect(index.lookup(other)).toBeNull();
    expect(index.lookup(same)?.app.key).toBe("kitty");
    const h1 = fileSha256(same);
    writeFileSync(same, "terminal-bytez"); // same size, new content
    utimesSync(same, new Date(2000, 1, 1), new Date(2000, 1, 1)); // a distinct mtime even on coarse clocks
    expect(fileSha256(same)).not.toBe(h1);
    expect(index.lookup(same)).toBeNull();
    expect(index.lookup("/nonexistent/file")).toBeNull();
    expect(index.lookup(null)).toBeNull();
  });
});

describe("identity keys", () => {
  it("normalises case, .exe and .desktop", () => {
    const keys = identityKeys(ident({ executable: "C:\\Windows\\System32\\CMD.EXE", desktopId: "Org.Gnome.Terminal.desktop", name: " XTerm ", comm: null }));
    expect(keys).toEqual({ executable: "cmd", comm: null, desktopId: "org.gnome.terminal", names: ["xterm"] });
  });

  it("identityFromWireApp canonicalises a non-Linux path with realpath", () => {
    const t = tempDir();
    try {
      const real = fakeBinary(join(t.dir, "konsole"));
      const link = join(t.dir, "editor");
      symlinkSync(real, link);
      const id = identityFromWireApp({ pid: 1, name: "Editor", executable: link, desktop_id: null }, {}, { platform: "darwin" });
      expect(id.executable).toBe(real);
      expect(id.comm).toBeNull();
      expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints).rule).toBe("builtin:terminal:konsole");
    } finally {
      t.cleanup();
    }
  });
});
