import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { decideApp } from "../../../src/policy/decide.ts";
import {
  adminPolicyPath,
  defaultUserPolicyPath,
  describePolicy,
  loadAdminPolicy,
  loadPolicy,
  parsePolicyText,
  pauseOnUserInput,
} from "../../../src/policy/load.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { ident, tempDir } from "./helpers.ts";

const EXAMPLE = `# deckhand policy
default = "allow"
blocked_urls = ["*://*.bank.example/*", "*://mail.example.com/*"]
foreground = "deny"
pause_on_user_input = true

[confirm]
command = ["/usr/local/bin/ask", "--title", "deckhand"]
timeout_ms = 15000

[[deny]]
id = "thunderbird"

[[allow]]
id = "firefox"
path = "/usr/lib/firefox/*"
`;

function invalidLine(text: string): number {
  try {
    parsePolicyText(text, { layer: "user", file: "/p.toml" });
  } catch (e) {
    expect(e).toBeInstanceOf(DeckhandError);
    expect((e as DeckhandError).code).toBe("INVALID_ARGUMENTS");
    return (e as DeckhandError).details.line as number;
  }
  throw new Error("expected INVALID_ARGUMENTS");
}

describe("parsePolicyText", () => {
  it("reads every key", () => {
    const l = parsePolicyText(EXAMPLE, { layer: "user", file: "/p.toml" });
    expect(l).toEqual({
      source: "user",
      file: "/p.toml",
      default: "allow",
      allow: [{ id: "firefox", path: "/usr/lib/firefox/*" }],
      deny: [{ id: "thunderbird" }],
      blockedUrls: ["*://*.bank.example/*", "*://mail.example.com/*"],
      confirm: { command: ["/usr/local/bin/ask", "--title", "deckhand"], timeoutMs: 15000 },
      foreground: "deny",
      pauseOnUserInput: true,
      broken: null,
    });
  });

  it("an empty file is an empty layer", () => {
    expect(parsePolicyText("", { layer: "user", file: "/p.toml" })).toMatchObject({ default: null, allow: [], deny: [], blockedUrls: [] });
  });

  it("names the line of a TOML syntax error", () => {
    expect(invalidLine(`default = "allow"\n\n[[deny]]\nid = "x\n`)).toBe(4);
  });

  it("names the line of a schema error", () => {
    expect(invalidLine(`# c\ndefault = "maybe"\n`)).toBe(2);
    expect(invalidLine(`[[deny]]\nid = "a"\n[[deny]]\nid = "b"\nidd = "c"\n`)).toBe(5);
    expect(invalidLine(`[[allow]]\nid = "a"\n[[allow]]\npath = "relative/path"\n`)).toBe(4);
    expect(invalidLine(`[[allow]]\nid = "a"\n[[allow]]\n`)).toBe(3);
    expect(invalidLine(`default = "deny"\n[confirm]\ncommand = []\n`)).toBe(3);
    expect(invalidLine(`default = "deny"\n[confirm]\ntimeout_ms = -5\n`)).toBe(3);
    expect(invalidLine(`foreground = "yes"`)).toBe(1);
    expect(invalidLine(`\n\nblocked_urls = "not-a-list"`)).toBe(3);
    expect(invalidLine(`\nunknown_key = 1`)).toBe(2);
    expect(invalidLine(`[[deny]]\nid = ""\n`)).toBe(2);
  });

  it("the message names file and line", () => {
    try {
      parsePolicyText(`x = 1`, { layer: "user", file: "/home/u/p.toml" });
    } catch (e) {
      expect((e as DeckhandError).message).toContain("/home/u/p.toml, line 1");
      expect((e as DeckhandError).details).toMatchObject({ file: "/home/u/p.toml", line: 1, layer: "user" });
    }
  });
});

describe("loadPolicy", () => {
  const t = tempDir();
  afterAll(t.cleanup);
  const write = (name: string, text: string) => {
    const p = join(t.dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("missing files are no policy", () => {
    const env = { HOME: join(t.dir, "nohome"), XDG_CONFIG_HOME: "", DECKHAND_ADMIN_POLICY: join(t.dir, "none.toml") };
    expect(loadPolicy({ env })).toEqual({ admin: null, user: null });
  });

  it("default paths: DECKHAND_ADMIN_POLICY, XDG_CONFIG_HOME, ~/.config", () => {
    expect(adminPolicyPath({})).toBe("/etc/deckhand/policy.toml");
    expect(adminPolicyPath({ DECKHAND_ADMIN_POLICY: "/x.toml" })).toBe("/x.toml");
    expect(defaultUserPolicyPath({ XDG_CONFIG_HOME: "/cfg", HOME: "/h" })).toBe("/cfg/deckhand/policy.toml");
    expect(defaultUserPolicyPath({ HOME: "/h" })).toBe("/h/.config/deckhand/policy.toml");
  });

  it("reads the user file from XDG_CONFIG_HOME and the admin file from the env override", () => {
    const cfg = join(t.dir, "cfg");
    mkdirSync(join(cfg, "deckhand"), { recursive: true });
    writeFileSync(join(cfg, "deckhand", "policy.toml"), `[[deny]]\nid = "gedit"\n`);
    const admin = write("admin.toml", `pause_on_user_input = true\n`);
    const p = loadPolicy({ env: { XDG_CONFIG_HOME: cfg, DECKHAND_ADMIN_POLICY: admin } });
    expect(p.user?.deny).toEqual([{ id: "gedit" }]);
    expect(p.admin?.file).toBe(admin);
    expect(pauseOnUserInput(p)).toBe(true);
    expect(describePolicy(p)).toEqual({ admin: { file: admin, broken: null }, user: { file: join(cfg, "deckhand", "policy.toml") } });
  });

  it("an explicit --policy file must exist", () => {
    expect(() => loadPolicy({ userPath: join(t.dir, "missing.toml"), adminPath: join(t.dir, "none") })).toThrow(/does not exist/);
  });

  it("a broken user file is INVALID_ARGUMENTS naming the line", () => {
    const user = write("user-broken.toml", `default = "deny"\n[[allow]]\nid = 7\n`);
    try {
      loadPolicy({ userPath: user, adminPath: join(t.dir, "none") });
      expect.unreachable();
    } catch (e) {
      expect((e as DeckhandError).code).toBe("INVALID_ARGUMENTS");
      expect((e as DeckhandError).details).toMatchObject({ file: user, line: 3 });
    }
  });

  it("a broken admin file fails closed: every app denied, reason kept", () => {
    const admin = write("admin-broken.toml", `default = "allow"\n[[deny]\n`);
    const p = loadPolicy({ adminPath: admin, userPath: write("user-ok.toml", `default = "allow"\n`) });
    expect(p.admin?.broken).toMatchObject({ line: 2 });
    expect(p.admin?.foreground).toBe("deny");
    expect(decideApp(p, ident(), undefined, { fingerprints: null })).toMatchObject({ decision: "deny", source: "admin", rule: "admin:broken" });
    expect(describePolicy(p).admin?.broken).toContain("line 2");
  });

  it("an admin path that is a directory, unreadable, oversize or not UTF-8 fails closed", () => {
    const dir = join(t.dir, "admindir");
    mkdirSync(dir);
    expect(loadAdminPolicy(dir)?.broken?.message).toBe("not a regular file");
    expect(loadAdminPolicy(write("big.toml", "#".repeat(1024 * 1024 + 1)))?.broken).toBeTruthy();
    const latin1 = join(t.dir, "latin1.toml");
    writeFileSync(latin1, Buffer.from([0x23, 0xe9, 0x0a]));
    expect(loadAdminPolicy(latin1)?.broken?.message).toBe("not valid UTF-8");
    if (process.getuid?.() !== 0) {
      const locked = write("locked.toml", `default = "allow"\n`);
      chmodSync(locked, 0);
      expect(loadAdminPolicy(locked)?.broken).toBeTruthy();
    }
  });

  it("a user file cannot loosen the admin file", () => {
    const admin = write("admin-strict.toml", `default = "deny"\nforeground = "deny"\nblocked_urls = ["*://*.bank.example/*"]\n[[allow]]\nid = "gedit"\n`);
    const user = write("user-loose.toml", `default = "allow"\nforeground = "allow"\nblocked_urls = []\n[[allow]]\nid = "*"\n`);
    const p = loadPolicy({ adminPath: admin, userPath: user });
    expect(decideApp(p, ident({ executable: "/usr/bin/firefox", desktopId: "firefox" }), undefined, { fingerprints: null }).decision).toBe("deny");
    expect(p.admin?.blockedUrls).toEqual(["*://*.bank.example/*"]);
  });
});

describe("fuzzed policy files", () => {
  // TOML-ish fragments: real keys and values, broken syntax, junk.
  const fragment = fc.oneof(
    fc.constantFrom(
      'default = "allow"',
      'default = "deny"',
      'default = "perhaps"',
      "[[allow]]",
      "[[deny]]",
      "[confirm]",
      "[[confirm]]",
      "[allow]",
      'id = "xterm"',
      'id = ""',
      "id = 3",
      'path = "/usr/bin/*"',
      'path = "bin"',
      'name = "Fire*"',
      'window_title = "*"',
      'command = ["/bin/true"]',
      "command = []",
      "timeout_ms = 100",
      "timeout_ms = 1e99",
      'blocked_urls = ["*://x/*"]',
      "blocked_urls = [1, 2]",
      'foreground = "allow"',
      "pause_on_user_input = true",
      "pause_on_user_input = 1979-05-27",
      "__proto__ = 1",
      '"constructor" = {}',
      "a.b.c = 1",
      "x = [[[[[[[[[[]]]]]]]]]]",
      '"""',
      "'''",
      "[",
      "=",
      "#",
      "\u0000",
      "\uFEFF",
    ),
    fc.string({ maxLength: 40 }),
  );
  const doc = fc.array(fragment, { maxLength: 12 }).map((lines) => lines.join("\n"));

  it("a user file is always a layer or INVALID_ARGUMENTS with a line", () => {
    fc.assert(
      fc.property(doc, (text) => {
        try {
          const layer = parsePolicyText(text, { layer: "user", file: "/f.toml" });
          expect(layer.source).toBe("user");
          expect(Array.isArray(layer.allow) && Array.isArray(layer.deny)).toBe(true);
        } catch (e) {
          expect(e).toBeInstanceOf(DeckhandError);
          expect((e as DeckhandError).code).toBe("INVALID_ARGUMENTS");
          const line = (e as DeckhandError).details.line;
          expect(Number.isInteger(line) && (line as number) >= 1).toBe(true);
          expect(line as number).toBeLessThanOrEqual(Math.max(1, text.split(/\r\n|\n|\r/).length));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("an admin file is always a layer, and a broken one denies everything", () => {
    const t = tempDir();
    try {
      const path = join(t.dir, "admin.toml");
      fc.assert(
        fc.property(doc, (text) => {
          writeFileSync(path, text);
          const layer = loadAdminPolicy(path);
          expect(layer).not.toBeNull();
          if (layer!.broken) {
            expect(decideApp({ admin: layer, user: null }, ident(), undefined, { fingerprints: null }).decision).toBe("deny");
          }
        }),
        { numRuns: 500 },
      );
    } finally {
      t.cleanup();
    }
  });
});
