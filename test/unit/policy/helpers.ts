// Shared fixtures for policy tests: temp dirs, policy layers, fake processes.
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AppIdentity } from "../../../src/policy/identity.ts";
import { parsePolicyText, type Policy } from "../../../src/policy/load.ts";

export function tempDir(prefix = "deckhand-policy-"): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function policyOf(admin: string | null, user: string | null): Policy {
  return {
    admin: admin === null ? null : parsePolicyText(admin, { layer: "admin", file: "/etc/deckhand/policy.toml" }),
    user: user === null ? null : parsePolicyText(user, { layer: "user", file: "/home/u/.config/deckhand/policy.toml" }),
  };
}

export function ident(over: Partial<AppIdentity> = {}): AppIdentity {
  return { pid: 4242, executable: "/usr/bin/gedit", name: "gedit", desktopId: "org.gnome.gedit", accessibleName: null, comm: "gedit", ...over };
}

/** A copy of /bin/sleep at `path` (a harmless stand-in for a real binary). */
export function fakeBinary(path: string): string {
  copyFileSync("/bin/sleep", path);
  return path;
}

const children: ChildProcess[] = [];
/** Run `path 30` and return its pid; killed by killAll(). */
export function run(path: string): number {
  const child = spawn(path, ["30"], { stdio: "ignore" });
  children.push(child);
  if (!child.pid) throw new Error(`could not start ${path}`);
  return child.pid;
}
export function killAll(): void {
  for (const c of children.splice(0)) c.kill("SIGKILL");
}
