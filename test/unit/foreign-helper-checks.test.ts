// The checks that stand in for a Swift and a .NET build on this machine
// (scripts/check-helper-sources.py, scripts/check-workflows.sh) must fail on
// a broken file: otherwise the macOS and Windows helpers could rot unseen.
// The tools come from scripts/setup.sh (.state/tools), which test.sh runs first.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "../..");
const python = join(root, ".state/tools/py/bin/python");

function checkSources(...paths: string[]) {
  return spawnSync(python, [join(root, "scripts/check-helper-sources.py"), ...paths], { encoding: "utf8" });
}

describe("helper source syntax check (tree-sitter)", () => {
  const dir = mkdtempSync(join(tmpdir(), "dh-syntax-"));
  writeFileSync(join(dir, "good.swift"), "import Foundation\nstruct Frame { let body: [UInt8] }\nfunc f() async throws -> Int { try await Task.sleep(nanoseconds: 1); return 1 }\n");
  writeFileSync(join(dir, "bad.swift"), "func f() -> Int {\n  let x = [1, 2\n  return x\n}\n");
  writeFileSync(join(dir, "good.cs"), "namespace D; public sealed record Frame(byte[] Body) { public int Length => Body.Length; }\n");
  writeFileSync(join(dir, "bad.cs"), "class A {\n  void M() { int x = ; }\n}\n");

  it("passes well-formed Swift and C#", () => {
    const r = checkSources(join(dir, "good.swift"), join(dir, "good.cs"));
    expect(r.stderr).toContain("1 Swift and 1 C# files parsed, 0 with syntax errors");
    expect(r.status).toBe(0);
  });
  it("fails a Swift syntax error, naming file and line", () => {
    const r = checkSources(join(dir, "bad.swift"));
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`${join(dir, "bad.swift")}:2:`);
  });
  it("fails a C# syntax error, naming file and line", () => {
    const r = checkSources(join(dir, "bad.cs"));
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`${join(dir, "bad.cs")}:2:`);
  });
  it("refuses a path that does not exist instead of passing", () => {
    expect(checkSources(join(dir, "nope")).status).toBe(2);
  });
});

describe("workflow lint (actionlint)", () => {
  it("fails a workflow with an undefined job dependency and a shell error", () => {
    const repo = mkdtempSync(join(tmpdir(), "dh-actionlint-"));
    mkdirSync(join(repo, "scripts"), { recursive: true });
    mkdirSync(join(repo, ".github/workflows"), { recursive: true });
    // The script resolves the tools from its own repo root: point it at ours.
    mkdirSync(join(repo, ".state/tools"), { recursive: true });
    spawnSync("ln", ["-s", join(root, ".state/tools/bin"), join(repo, ".state/tools/bin")]);
    spawnSync("cp", [join(root, "scripts/check-workflows.sh"), join(repo, "scripts/")]);
    writeFileSync(
      join(repo, ".github/workflows/bad.yml"),
      "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    needs: [missing]\n    steps:\n      - run: echo $UNQUOTED_VAR\n",
    );
    const r = spawnSync("bash", [join(repo, "scripts/check-workflows.sh")], { encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toMatch(/missing/);
  });
});
