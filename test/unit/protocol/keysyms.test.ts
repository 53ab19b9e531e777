// Issue 10.1d: every spelling the helper accepts for a key comes out of the
// one normaliser (src/protocol/keys.ts) under one canonical name, so the
// closing-chord and activation checks see what the helper will press.
// The helper's own tables (helpers/linux-rust/src/x11/keys.rs and
// keysym_table.rs) are read here to keep the two in step.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { charKeysym, KEYSYMS, keysymName, keysymOf, normalizeKey, parseChord, parseKeys } from "../../../src/protocol/keys.ts";
import { closingChord, normalizeChord } from "../../../src/policy/sensitive.ts";

const RUST = join(import.meta.dirname, "..", "..", "..", "helpers", "linux-rust", "src", "x11");
const TABLE = [...readFileSync(join(RUST, "keysym_table.rs"), "utf8").matchAll(/\("([^"]+)", (0x[0-9a-f]+)\)/g)].map((m) => [m[1]!, Number(m[2])] as const);
const RUST_ALIASES = (() => {
  const src = readFileSync(join(RUST, "keys.rs"), "utf8");
  const consts = Object.fromEntries([...src.matchAll(/pub const (XK_\w+): u32 = (0x[0-9a-f]+);/g)].map((m) => [m[1]!, Number(m[2])]));
  const block = /const ALIASES: &\[\(&str, u32\)\] = &\[([\s\S]*?)\];/.exec(src)![1]!;
  return [...block.matchAll(/\("([^"]+)", (\w+)\)/g)].map((m) => [m[1]!, m[2]!.startsWith("0x") ? Number(m[2]) : consts[m[2]!]!] as const);
})();

/**
 * The key a keysym presses, as the canonical names fold it: a right-hand
 * ctrl/alt/shift/super is that modifier (sent as the left one), and a Unicode
 * keysym 0x01000000 + U is the character U.
 */
function fold(ks: number | null): number | null {
  if (ks === null) return null;
  const right: Record<number, number> = { 0xffe2: 0xffe1, 0xffe4: 0xffe3, 0xffea: 0xffe9, 0xffec: 0xffeb };
  if (right[ks]) return right[ks]!;
  if (ks >= 0x0100_0000 && ks <= 0x0110_ffff) return charKeysym(ks - 0x0100_0000);
  return ks;
}

describe("normalizeKey: every form the helper accepts, one canonical name", () => {
  it.each([
    // names, aliases, case
    ["ctrl", "ctrl"],
    ["CONTROL", "ctrl"],
    ["Control_L", "ctrl"],
    ["control_r", "ctrl"],
    ["SUPER_R", "super"],
    ["cmd", "super"],
    ["Meta_L", "Meta_L"],
    ["hyper_r", "Hyper_R"],
    ["RETURN", "Return"],
    ["enter", "Return"],
    ["kp_enter", "KP_Enter"],
    ["ISO_ENTER", "ISO_Enter"],
    ["kp_space", "KP_Space"],
    ["prior", "Page_Up"],
    ["KP_Prior", "KP_Page_Up"],
    ["iso_left_tab", "ISO_Left_Tab"],
    ["Greek_switch", "Mode_switch"],
    // function keys: F1-F35, leading zeros as the helper reads them
    ["f4", "F4"],
    ["F04", "F4"],
    ["f004", "F4"],
    ["F35", "F35"],
    ["F36", "F36"],
    // keysym numbers (hex, any case of the prefix and digits)
    ["0xffe3", "ctrl"],
    ["0XFFE3", "ctrl"],
    ["0xFFE4", "ctrl"],
    ["0xffe9", "alt"],
    ["0xffeb", "super"],
    ["0xff0d", "Return"],
    ["0xff8d", "KP_Enter"],
    ["0xfe34", "ISO_Enter"],
    ["0x20", "space"],
    ["0x2b", "plus"],
    ["0x71", "q"],
    ["0x51", "Q"],
    ["0x0071", "q"],
    ["0xe9", "é"],
    ["0xffc1", "F4"],
    ["0xffff", "Delete"],
    // Unicode keysyms and U+ code points: the character, typed as the helper types it
    ["0x1000071", "q"],
    ["0x100000d", "Return"],
    ["0x10020ac", "€"],
    ["U+0071", "q"],
    ["u+000D", "Return"],
    ["U+000a", "Return"],
    ["U+0020", "space"],
    ["U+0009", "Tab"],
    ["U+00E9", "é"],
    // keysyms deckhand has no name for keep one spelling of their number
    ["0x1008FF12", "0x1008ff12"],
    // names only the helper's full table knows, and decimal numbers (which the helper refuses), pass through
    ["XF86AudioMute", "XF86AudioMute"],
    ["semicolon", "semicolon"],
    ["65293", "65293"],
    // single characters
    ["q", "q"],
    ["Q", "Q"],
    ["+", "plus"],
    [" ", "space"],
    ["\n", "Return"],
    ["\t", "Tab"],
  ])("%j -> %j", (raw, canonical) => {
    expect(normalizeKey(raw)).toBe(canonical);
    // Idempotent, and what is sent means the same key to the helper.
    expect(normalizeKey(canonical)).toBe(canonical);
    if (keysymOf(raw) !== null) expect(keysymOf(canonical)).toBe(fold(keysymOf(raw)));
  });

  it("parsed chords come out canonical: what the checks see is what the helper is sent", () => {
    expect(parseChord("0xffe3+q")).toEqual(["ctrl", "q"]);
    expect(parseChord("0xffe3+0x71")).toEqual(["ctrl", "q"]);
    expect(parseChord("Control_R+kp_enter")).toEqual(["ctrl", "KP_Enter"]);
    expect(parseKeys(["0xffe9", "f04"])).toEqual(["alt", "F4"]);
  });

  it("keysymOf resolves as the helper does, in its order", () => {
    expect(keysymOf("0xffe3")).toBe(0xffe3);
    expect(keysymOf("ctrl")).toBe(0xffe3);
    expect(keysymOf("meta")).toBe(0xffeb); // the helper's alias: Super_L
    expect(keysymOf("Meta_L")).toBe(0xffe7);
    expect(keysymOf("f+4")).toBe(0xffc1); // Rust's u32 parser takes a leading +
    expect(keysymOf("U+D800")).toBeNull(); // not a character
    expect(keysymOf("0x100000000")).toBeNull(); // not a u32
    expect(keysymOf("65293")).toBeNull();
    expect(keysymOf("XF86AudioMute")).toBeNull();
    expect(keysymName(0x1008ff12)).toBeNull();
  });
});

describe("the normaliser's tables match the helper's", () => {
  it("every name deckhand knows has the helper's keysym", () => {
    const table = new Map(TABLE);
    for (const [name, ks] of Object.entries(KEYSYMS)) expect(table.get(name), name).toBe(ks);
  });

  it("every name the helper's table has for a keysym deckhand checks is known, in any case", () => {
    const checked = new Set(Object.values(KEYSYMS));
    const names = TABLE.filter(([, ks]) => checked.has(ks));
    expect(names.length).toBeGreaterThan(50);
    for (const [name, ks] of names) {
      expect(keysymOf(name), name).toBe(ks);
      expect(keysymOf(name.toUpperCase()), name.toUpperCase()).toBe(ks);
      expect(keysymOf(normalizeKey(name)), `canonical of ${name}`).toBe(fold(ks));
    }
  });

  it("the helper's aliases resolve to the same keysyms", () => {
    expect(RUST_ALIASES.length).toBeGreaterThan(30);
    for (const [alias, ks] of RUST_ALIASES) {
      expect(keysymOf(alias), alias).toBe(ks);
      expect(keysymOf(normalizeKey(alias)), `canonical of ${alias}`).toBe(fold(ks));
    }
  });
});

describe("closing chords see canonical names", () => {
  it.each([
    ["0xffe3+q"],
    ["0xffe3+0x71"],
    ["0xFFE4+0x51"],
    ["Control_L+q"],
    ["control_r+Q"],
    ["0xffe9+0xffc1"],
    ["alt+f04"],
    ["Alt_R+F004"],
    ["Super_L+w"],
    ["0xffeb+0x77"],
    ["Meta_L+q"],
    ["ctrl+alt+KP_Delete"],
  ])("%j closes an app or window", (chord) => {
    expect(closingChord([chord])).not.toBeNull();
  });

  it("as names the policy normalises", () => {
    expect(normalizeChord(["0xffe3", "0x71"])).toBe("ctrl+q");
    expect(normalizeChord(["Control_R", "U+0071"])).toBe("ctrl+q");
    expect(normalizeChord(["0xffe9", "0xffc1"])).toBe("alt+f4");
    expect(closingChord(["0xffe3", "0x63"])).toBeNull(); // ctrl+c
  });
});
