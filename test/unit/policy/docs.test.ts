// docs/policy.md is checked against the code: its example parses, and every
// policy.toml key and sensitive word is documented.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePolicyText, policyFileSchema } from "../../../src/policy/load.ts";
import { SENSITIVE_WORDS } from "../../../src/policy/sensitive.ts";
import { PRIVACY_PANE_TITLE_WORDS } from "../../../src/policy/builtin.ts";

const doc = readFileSync(join(import.meta.dirname, "..", "..", "..", "docs", "policy.md"), "utf8");

describe("docs/policy.md", () => {
  it("the example policy.toml parses", () => {
    const toml = /```toml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(toml).toBeTruthy();
    const layer = parsePolicyText(toml!, { layer: "user", file: "docs/policy.md" });
    expect(layer.deny.length).toBeGreaterThan(0);
    expect(layer.allow.length).toBeGreaterThan(0);
    expect(layer.blockedUrls.length).toBeGreaterThan(0);
  });

  it("documents every key", () => {
    const keys = [...Object.keys(policyFileSchema().shape), "id", "path", "name", "window_title", "timeout_ms", "command"];
    for (const k of keys) {
      const spelled = `\`${k === "command" || k === "timeout_ms" ? `confirm.${k}` : k}\``;
      expect(doc.includes(spelled), spelled).toBe(true);
    }
  });

  it("lists every sensitive word and privacy pane word", () => {
    const flat = doc.replace(/\s+/g, " ");
    for (const w of [...SENSITIVE_WORDS, ...PRIVACY_PANE_TITLE_WORDS]) expect(flat.includes(w), w).toBe(true);
  });
});
