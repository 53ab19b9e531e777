// Issue 15: point_click's hold words. The helper holds a click (sends
// nothing) when a name under the point may contain one of the words the
// confirm decision finds in names: an ASCII case-insensitive substring, or
// any character outside ASCII (helpers/linux-rust/src/ops/point_click.rs
// may_name, mirrored here). That must be wider than the decision itself
// (controlSensitivity: whole words after NFKC, invisible characters removed,
// Unicode case folding): every name the decision would confirm is held, so
// no click it would have confirmed is sent without it.
import { describe, expect, it } from "vitest";
import { controlSensitivity, NAME_WORDS, SENSITIVE_WORDS } from "../../src/policy/sensitive.ts";
import { POLICY_CONFIRM_FACTS } from "../../src/engine/safety.ts";

/** The helper's rule (point_click.rs may_name). */
function helperHolds(name: string, words: readonly string[]): boolean {
  if (!words.length) return false;
  if (!/^[\x00-\x7f]*$/.test(name)) return true;
  const lower = name.toLowerCase();
  return words.some((w) => w !== "" && lower.includes(w));
}

/** A deterministic generator (no flaky seeds). */
function* names(n: number): Generator<string> {
  let s = 0x9e3779b9;
  const next = () => ((s = (s * 1664525 + 1013904223) >>> 0), s);
  const words = [...NAME_WORDS, "ok", "save", "un", "er", "s", "ing", "ed"];
  const seps = [" ", "_", "-", "&", ".", "", "", "1", "(", ")", "'", "/"];
  for (let i = 0; i < n; i++) {
    let out = "";
    const parts = 1 + (next() % 4);
    for (let k = 0; k < parts; k++) {
      let w = words[next() % words.length]!;
      const c = next() % 3;
      if (c === 1) w = w.toUpperCase();
      if (c === 2) w = w[0]!.toUpperCase() + w.slice(1);
      out += w + seps[next() % seps.length]!;
    }
    yield out;
  }
}

describe("point_click hold words (issue 15)", () => {
  it("are the decision's words, lowercase ASCII, handed out by the safety seam", () => {
    expect(NAME_WORDS).toEqual([...SENSITIVE_WORDS, "quit"]);
    for (const w of NAME_WORDS) expect(w).toMatch(/^[a-z]+$/);
    expect(POLICY_CONFIRM_FACTS.nameWords).toBe(NAME_WORDS);
  });

  it("every generated ASCII name the decision confirms, the helper holds", () => {
    let confirmed = 0;
    for (const name of names(20_000)) {
      if (controlSensitivity(name) === null) continue;
      confirmed++;
      expect(helperHolds(name, NAME_WORDS), name).toBe(true);
    }
    expect(confirmed).toBeGreaterThan(1000);
  });

  it("names the decision confirms through folding or hidden characters are held (they are not ASCII)", () => {
    for (const name of ["ſend", "ｓｅｎｄ", "Sen\u200bd", "De\u00adlete", "\u{1d5e6}\u{1d5f2}\u{1d5fb}\u{1d5f1}", "Ｑuit"]) {
      expect(controlSensitivity(name), name).not.toBeNull();
      expect(helperHolds(name, NAME_WORDS), name).toBe(true);
    }
  });

  it("holding is wider, never narrower: substrings the decision clears are held too (it decides then)", () => {
    for (const name of ["Undelete", "Sender", "PayPal", "Deleted items"]) {
      expect(controlSensitivity(name), name).toBeNull();
      expect(helperHolds(name, NAME_WORDS), name).toBe(true);
    }
    for (const name of ["OK", "Canvas", "Save", "Row 2"]) expect(helperHolds(name, NAME_WORDS), name).toBe(false);
  });
});
