import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  DEFAULT_CONFIRM_TIMEOUT_MS,
  resolveConfirm,
  resolveConfirmCommand,
  runConfirm,
  splitCommandLine,
  type ConfirmDescription,
} from "../../../src/confirm/hook.ts";
import { EMPTY_POLICY } from "../../../src/policy/load.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { policyOf, tempDir } from "../policy/helpers.ts";

const fx = (name: string) => join(import.meta.dirname, "fixtures", name);
const posix = process.platform !== "win32";

const description: ConfirmDescription = {
  version: 1,
  command: "click",
  action: "click",
  reason: 'control name contains "delete"',
  session: "s_1",
  app: { id: "org.gnome.Nautilus", name: "Files", pid: 1234, executable: "/usr/bin/nautilus" },
  window: { id: 77, title: "Home" },
  element: { index: 12, role: "push button", name: "Delete" },
};

async function codeOf(p: Promise<unknown>): Promise<DeckhandError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(DeckhandError);
    return e as DeckhandError;
  }
  throw new Error("expected a DeckhandError");
}

describe("splitCommandLine (no shell)", () => {
  it("splits on whitespace and honours quotes and backslashes", () => {
    expect(splitCommandLine("ask --title 'Deckhand asks' \"a \\\"b\\\" c\" d\\ e")).toEqual(["ask", "--title", "Deckhand asks", 'a "b" c', "d e"]);
    expect(splitCommandLine("  a\t b \n")).toEqual(["a", "b"]);
    expect(splitCommandLine("a '' b")).toEqual(["a", "", "b"]);
  });

  it("passes shell syntax through as literal text", () => {
    expect(splitCommandLine("hook $HOME `id` ; rm -rf / && x | y > z *")).toEqual(["hook", "$HOME", "`id`", ";", "rm", "-rf", "/", "&&", "x", "|", "y", ">", "z", "*"]);
  });

  it.each(["a 'b", 'a "b', "a\\"])("%j is INVALID_ARGUMENTS", (line) => {
    expect(() => splitCommandLine(line)).toThrow(expect.objectContaining({ code: "INVALID_ARGUMENTS" }));
  });
});

describe("resolveConfirmCommand", () => {
  const user = policyOf(null, `[confirm]\ncommand = ["/user/hook"]\ntimeout_ms = 5000\n`);
  const admin = policyOf(`[confirm]\ncommand = ["/admin/hook", "--strict"]\n`, `[confirm]\ncommand = ["/user/hook"]\ntimeout_ms = 5000\n`);

  it("order: flag, env, user policy", () => {
    expect(resolveConfirmCommand({ flag: "/flag/hook -x", env: { DECKHAND_CONFIRM_CMD: "/env/hook" }, policy: user })).toEqual(["/flag/hook", "-x"]);
    expect(resolveConfirmCommand({ flag: ["/flag/hook", "a b"], env: {}, policy: user })).toEqual(["/flag/hook", "a b"]);
    expect(resolveConfirmCommand({ env: { DECKHAND_CONFIRM_CMD: "'/env dir/hook' y" }, policy: user })).toEqual(["/env dir/hook", "y"]);
    expect(resolveConfirm({ env: {}, policy: user })).toEqual({ command: ["/user/hook"], source: "user", timeoutMs: 5000 });
  });

  it("the admin policy's hook cannot be replaced by the operator or the user", () => {
    expect(resolveConfirm({ flag: "/bin/true", env: { DECKHAND_CONFIRM_CMD: "/bin/true" }, policy: admin })).toEqual({
      command: ["/admin/hook", "--strict"],
      source: "admin",
      timeoutMs: 5000,
    });
  });

  it("none configured (empty strings count as unset)", () => {
    expect(resolveConfirm({ flag: "", env: { DECKHAND_CONFIRM_CMD: "  " }, policy: EMPTY_POLICY })).toEqual({
      command: null,
      source: null,
      timeoutMs: DEFAULT_CONFIRM_TIMEOUT_MS,
    });
  });
});

describe.runIf(posix)("runConfirm", () => {
  const t = tempDir("deckhand-confirm-");
  afterAll(t.cleanup);

  it("no hook: CONFIRM_REQUIRED and nothing runs", async () => {
    expect((await codeOf(runConfirm(null, description))).code).toBe("CONFIRM_REQUIRED");
    expect((await codeOf(runConfirm([], description))).code).toBe("CONFIRM_REQUIRED");
  });

  it("exit 0 allows", async () => {
    await expect(runConfirm([fx("allow.sh")], description)).resolves.toBeUndefined();
  });

  it("a non-zero exit denies, with the hook's first stdout line", async () => {
    const e = await codeOf(runConfirm([fx("deny.sh")], description));
    expect(e.code).toBe("CONFIRM_DENIED");
    expect(e.details).toEqual({ reason: "exit", exit_code: 1, hook_message: "operator said no" });
  });

  it.each([2, 3, 42, 255])("exit %i denies", async (code) => {
    const e = await codeOf(runConfirm([fx("exit-code.sh"), String(code)], description));
    expect(e.code).toBe("CONFIRM_DENIED");
    expect(e.details).toMatchObject({ reason: "exit", exit_code: code });
  });

  it("a hook that exits 0 without reading stdin allows (no EPIPE crash)", async () => {
    await expect(runConfirm([fx("exit-code.sh"), "0"], description)).resolves.toBeUndefined();
  });

  it("death by signal denies", async () => {
    const e = await codeOf(runConfirm([fx("self-kill.sh")], description));
    expect(e.code).toBe("CONFIRM_DENIED");
    expect(e.details).toMatchObject({ reason: "signal", signal: "SIGTERM" });
  });

  it("a timeout denies and kills the hook's whole process group", async () => {
    const pids = join(t.dir, "hang.pids");
    const started = Date.now();
    const e = await codeOf(runConfirm([fx("hang.sh"), pids], description, 500));
    expect(e.code).toBe("CONFIRM_DENIED");
    expect(e.details).toEqual({ reason: "timeout", timeout_ms: 500 });
    expect(Date.now() - started).toBeLessThan(5000);
    const [shell, sleeper] = readFileSync(pids, "utf8").trim().split(" ").map(Number);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return existsSync(`/proc/${pid}`) ? !readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z") : true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && (alive(shell!) || alive(sleeper!)); i++) await new Promise((r) => setTimeout(r, 20));
    expect(alive(shell!)).toBe(false);
    expect(alive(sleeper!)).toBe(false);
  });

  it("a hook that writes a lot to stdout is drained, not killed: its exit still decides", async () => {
    await expect(runConfirm(["sh", "-c", "head -c 200000 /dev/zero; exit 0"], description)).resolves.toBeUndefined();
    const e = await codeOf(runConfirm(["sh", "-c", "printf 'too long a reason %.0s' $(seq 1 5000); exit 4"], description));
    expect(e.details).toMatchObject({ reason: "exit", exit_code: 4 });
    expect(String(e.details.hook_message).length).toBeLessThanOrEqual(200);
  });

  // Grandchildren that outlive a hook: killed after each test (they hold the test's stderr otherwise).
  const strays = join(t.dir, "strays.pids");
  const stray = (cmd: string) => `${cmd} 2>/dev/null & echo $! >> '${strays}'`;
  afterEach(() => {
    if (!existsSync(strays)) return;
    for (const pid of readFileSync(strays, "utf8").split("\n").filter(Boolean).map(Number)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(strays, { force: true });
  });

  it("a grandchild left holding the hook's stdout does not hold up the decision", async () => {
    const started = Date.now();
    await expect(runConfirm(["sh", "-c", `${stray("sleep 30")}; exit 0`], description, 20_000)).resolves.toBeUndefined();
    const e = await codeOf(runConfirm(["sh", "-c", `${stray("setsid sleep 30")}; echo busy; exit 5`], description, 20_000));
    expect(e.details).toEqual({ reason: "exit", exit_code: 5, hook_message: "busy" });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("a timeout is not held up by a grandchild that left the group but holds stdout", async () => {
    const started = Date.now();
    const e = await codeOf(runConfirm(["sh", "-c", `${stray("setsid sleep 30")}; sleep 30`], description, 300));
    expect(e.details).toEqual({ reason: "timeout", timeout_ms: 300 });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("the hook's environment is exactly the one given (nothing of deckhand's is merged in)", async () => {
    const out = join(t.dir, "env.txt");
    await runConfirm(["/bin/sh", "-c", `env > '${out}'`], description, 5000, { env: { ONLY: "this", PATH: "/usr/bin:/bin" } });
    const names = readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => l.split("=")[0]);
    expect(names).toContain("ONLY");
    expect(names).not.toContain("HOME");
  });

  it("a missing or non-executable hook denies", async () => {
    const missing = await codeOf(runConfirm([join(t.dir, "no-such-hook")], description));
    expect(missing.code).toBe("CONFIRM_DENIED");
    expect(missing.details).toMatchObject({ reason: "spawn_failed", errno: "ENOENT" });
    const noexec = await codeOf(runConfirm([fx("not-executable.sh")], description));
    expect(noexec.code).toBe("CONFIRM_DENIED");
    expect(noexec.details).toMatchObject({ reason: "spawn_failed" });
  });

  it("the description arrives as one JSON line on stdin; argv is passed without a shell", async () => {
    const out = join(t.dir, "record.json");
    await runConfirm([fx("record.sh"), out, "$HOME", "a b", "; echo pwned"], description);
    const stdin = readFileSync(out, "utf8");
    expect(stdin.endsWith("\n")).toBe(true);
    expect(JSON.parse(stdin)).toEqual(description);
    expect(readFileSync(`${out}.args`, "utf8")).toBe("$HOME\na b\n; echo pwned\n");
  });

  it("a node hook can validate the description", async () => {
    await expect(runConfirm([fx("approve-if-valid.mjs")], description)).resolves.toBeUndefined();
  });

  it("a description carrying text, values, clipboard or URLs is rejected before anything runs", async () => {
    const out = join(t.dir, "never.json");
    for (const extra of [{ text: "hunter2" }, { value: "x" }, { clipboard: "x" }, { url: "https://bank.example/" }]) {
      const bad = { ...description, ...extra } as unknown as ConfirmDescription;
      const e = await codeOf(runConfirm([fx("record.sh"), out], bad));
      expect(e.code).toBe("INTERNAL");
      expect(e.message).not.toContain("hunter2");
    }
    const nested = { ...description, element: { ...description.element!, value: "secret" } } as unknown as ConfirmDescription;
    expect((await codeOf(runConfirm([fx("record.sh"), out], nested))).code).toBe("INTERNAL");
    expect(existsSync(out)).toBe(false);
  });
});
