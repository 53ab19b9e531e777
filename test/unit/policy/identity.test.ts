import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { decideApp } from "../../../src/policy/decide.ts";
import { FingerprintIndex, fileSha256 } from "../../../src/policy/fingerprint.ts";
import { identityFromWireApp, identityKeys } from "../../../src/policy/identity.ts";
import { hostProcessFacts, NO_HOST_FACTS, type HostProcessFacts } from "../../../src/platform/index.ts";
import { procComm, procExe } from "../../../src/platform/linux.ts";
import { EMPTY_POLICY } from "../../../src/policy/load.ts";
import { fakeBinary, ident, killAll, policyOf, run, tempDir } from "./helpers.ts";

const linux = process.platform === "linux";
const noFingerprints = { fingerprints: null };

/** A process the helper did not list (no process identity reported): the host fills in what it reads. */
const unlisted = (pid: number) => identityFromWireApp({ pid, name: "", executable: null, desktop_id: null });

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

  it("a process the helper did not list is judged by what the host reads of its pid, not by any typed name", () => {
    const pid = run(xterm);
    const id = unlisted(pid);
    expect(id.executable).toBe(xterm);
    expect(id.comm).toBe("xterm");
    expect(procExe(pid)).toEqual({ path: xterm, deleted: false });
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", source: "builtin", rule: "builtin:terminal:xterm" });
  });

  it("a symlink named innocently still resolves to xterm", () => {
    const link = join(t.dir, "notes-app");
    symlinkSync(xterm, link);
    const pid = run(link);
    const id = unlisted(pid);
    expect(id.executable).toBe(xterm);
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "executable" });
  });

  it("a renamed copy is caught by content fingerprint", () => {
    const copy = fakeBinary(join(t.dir, "foo"));
    const pid = run(copy);
    const id = unlisted(pid);
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
    expect(procComm(pid)).toBe("XTerm");
    expect(decideApp(EMPTY_POLICY, unlisted(pid), undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "executable" });
  });

  it("a user allow entry cannot lift the built-in deny of a pid", () => {
    const pid = run(xterm);
    const policy = policyOf(null, `default = "allow"\n[[allow]]\nid = "xterm"\n[[allow]]\npath = "${xterm}"\n`);
    expect(decideApp(policy, unlisted(pid), undefined, noFingerprints).source).toBe("builtin");
  });

  it("a dead pid has no executable and no comm", () => {
    expect(procExe(2 ** 22 + 12345)).toBeNull();
    expect(procComm(2 ** 22 + 12345)).toBeNull();
    expect(procExe(-1)).toBeNull();
    expect(unlisted(2 ** 22 + 12345)).toMatchObject({ executable: null, comm: null });
  });
});

describe("identity from the helper's report (wire 2.0 list_apps)", () => {
  /** A host that fails the test if it is asked at all. */
  const untouchable: HostProcessFacts = {
    startTime: () => expect.unreachable("host start time read"),
    executable: () => expect.unreachable("host executable read"),
    processName: () => expect.unreachable("host process name read"),
  };

  it("process_name, executable_deleted and bundle_id come from the helper; the host is not asked", () => {
    const id = identityFromWireApp(
      { pid: 7, name: "Text Editor", executable: "/nonexistent/bin/gedit", desktop_id: null, process_name: "terminator", executable_deleted: true, bundle_id: "org.example.App" },
      {},
      { host: untouchable },
    );
    expect(id).toMatchObject({ pid: 7, executable: "/nonexistent/bin/gedit", executableDeleted: true, comm: "terminator", bundleId: "org.example.App" });
    // A python script's terminal: its process name says what it is.
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "comm" });
  });

  it("a null process name is the helper's answer too (the host is not asked)", () => {
    const id = identityFromWireApp({ pid: 7, name: "x", executable: null, desktop_id: null, process_name: null, executable_deleted: false, bundle_id: null }, {}, { host: untouchable });
    expect(id).toMatchObject({ executable: null, comm: null, bundleId: null });
    expect(id.executableDeleted).toBeUndefined();
  });

  it("the bundle id is matched like a desktop id (built-in deny list and policy entries)", () => {
    const id = identityFromWireApp({ pid: 9, name: "", executable: null, desktop_id: null, process_name: null, executable_deleted: false, bundle_id: "com.apple.Terminal" }, {}, { host: untouchable });
    expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints)).toMatchObject({ decision: "deny", matchedBy: "desktop_id" });
    const policy = policyOf(null, `default = "deny"\n[[allow]]\nid = "org.example.notes"\n`);
    const notes = identityFromWireApp({ pid: 9, name: "Notes", executable: null, desktop_id: null, process_name: "notes", executable_deleted: false, bundle_id: "org.example.Notes" }, {}, { host: untouchable });
    expect(decideApp(policy, notes, undefined, noFingerprints).decision).toBe("allow");
  });

  it("an unlisted process on a host that cannot be read has only what the helper said", () => {
    const id = identityFromWireApp({ pid: 1, name: "", executable: null, desktop_id: null }, {}, { host: NO_HOST_FACTS });
    expect(id).toMatchObject({ executable: null, comm: null });
    expect(hostProcessFacts("darwin")).toBe(NO_HOST_FACTS);
    expect(hostProcessFacts("win32").startTime(process.pid)).toBeNull();
  });

  it("an unlisted process: the host's deleted flag and process name fill in", () => {
    const host: HostProcessFacts = { startTime: () => null, executable: () => ({ path: "/usr/bin/xterm", deleted: true }), processName: () => "xterm" };
    const id = identityFromWireApp({ pid: 3, name: "", executable: null, desktop_id: null }, {}, { host });
    expect(id).toMatchObject({ executable: "/usr/bin/xterm", executableDeleted: true, comm: "xterm" });
    // The helper's executable stands; the host still says it was replaced.
    expect(identityFromWireApp({ pid: 3, name: "", executable: "/opt/x/xterm", desktop_id: null }, {}, { host })).toMatchObject({ executable: "/opt/x/xterm", executableDeleted: true });
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

  it("identityFromWireApp canonicalises the helper's path with realpath", () => {
    const t = tempDir();
    try {
      const real = fakeBinary(join(t.dir, "konsole"));
      const link = join(t.dir, "editor");
      symlinkSync(real, link);
      const id = identityFromWireApp({ pid: 1, name: "Editor", executable: link, desktop_id: null }, {}, { host: NO_HOST_FACTS });
      expect(id.executable).toBe(real);
      expect(id.comm).toBeNull();
      expect(decideApp(EMPTY_POLICY, id, undefined, noFingerprints).rule).toBe("builtin:terminal:konsole");
    } finally {
      t.cleanup();
    }
  });
});
