// The bounded caches of long-running sessions (issue 15, memory): an LRU
// bounded in entries and weight, and a Map bounded in keys.
import { describe, expect, it } from "vitest";
import { BoundedMap, Lru } from "../../../src/session/lru.ts";

describe("Lru", () => {
  it("keeps at most maxEntries, the least recently used going first (a get refreshes)", () => {
    const l = new Lru<string, number>(3);
    l.set("a", 1);
    l.set("b", 2);
    l.set("c", 3);
    expect(l.get("a")).toBe(1); // a is now the most recent
    l.set("d", 4);
    expect(l.size).toBe(3);
    expect(l.peek("b")).toBeUndefined();
    expect([l.peek("a"), l.peek("c"), l.peek("d")]).toEqual([1, 3, 4]);
  });

  it("keeps at most maxWeight; an entry heavier than it is not kept; replacing re-weighs", () => {
    const l = new Lru<string, string>(100, 10);
    l.set("a", "x", 4);
    l.set("b", "y", 4);
    l.set("c", "z", 4);
    expect(l.weight).toBeLessThanOrEqual(10);
    expect(l.peek("a")).toBeUndefined();
    l.set("huge", "h", 11);
    expect(l.peek("huge")).toBeUndefined();
    expect(l.size).toBe(2);
    l.set("b", "y2", 1);
    expect(l.weight).toBe(5);
    expect(l.delete("b")).toBe(true);
    expect(l.weight).toBe(4);
  });

  it("after 10,000 sets it still holds its bound", () => {
    const l = new Lru<number, number>(16, 1000);
    for (let i = 0; i < 10_000; i++) l.set(i, i, 50);
    expect(l.size).toBe(16);
    expect(l.weight).toBe(800);
    expect(l.peek(9_999)).toBe(9_999);
  });
});

describe("BoundedMap", () => {
  it("a Map that forgets its oldest key past max; replacing a key does not evict", () => {
    const m = new BoundedMap<string, number>(2);
    m.set("a", 1).set("b", 2);
    m.set("a", 10);
    expect(m.size).toBe(2);
    m.set("c", 3);
    expect([...m.keys()]).toEqual(["b", "c"]);
    for (let i = 0; i < 1000; i++) m.set(`k${i}`, i);
    expect(m.size).toBe(2);
    expect(m).toBeInstanceOf(Map);
  });
});
