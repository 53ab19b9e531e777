// The durable snapshot store: atomic 0600 files, a latest pointer per app that
// another process sees, bounded retention.
import { describe, expect, it, vi } from "vitest";
import fs, { readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join } from "node:path";
import { MEMORY_SNAPSHOT_BYTES, MEMORY_SNAPSHOTS, pruneSlack, SnapshotStore, STORE_FILE_NAMES, writeFileAtomic } from "../../../src/session/store.ts";
import { snap, tempDirs } from "./fixtures.ts";

const tmp = tempDirs("deckhand-store-");

describe("SnapshotStore", () => {
  it("save: 0600 files in 0700 dirs, no temp files left", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    const s = snap();
    store.save(s);
    for (const d of ["snapshots", "latest", "screenshots"]) expect(statSync(join(root, d)).mode & 0o777).toBe(0o700);
    for (const d of ["snapshots", "latest"]) {
      const names = readdirSync(join(root, d));
      expect(names).toHaveLength(1);
      expect(names[0]!.endsWith(".tmp")).toBe(false);
      expect(statSync(join(root, d, names[0]!)).mode & 0o777).toBe(0o600);
    }
  });

  it("another store on the same dir (another process) sees the record and the latest pointer", () => {
    const root = tmp();
    const a = new SnapshotStore(root);
    const s1 = snap();
    a.save(s1);
    const b = new SnapshotStore(root);
    expect(b.get(s1.snapshotId)).toEqual(s1);
    expect(b.latestId(s1.targetKey)).toBe(s1.snapshotId);
    const s2 = snap();
    b.save(s2);
    // a reads latest from disk, not from its memory.
    expect(a.latestId(s1.targetKey)).toBe(s2.snapshotId);
    expect(a.latestId("exe:/other")).toBeNull();
    expect(a.get("cs_doesnotexist0000")).toBeNull();
  });

  it("latest pointers are per target", () => {
    const store = new SnapshotStore(tmp());
    const a = snap("exe:/a");
    const b = snap("exe:/b");
    store.save(a);
    store.save(b);
    expect(store.latestId("exe:/a")).toBe(a.snapshotId);
    expect(store.latestId("exe:/b")).toBe(b.snapshotId);
  });

  it("a corrupt record reads as missing, not as a crash", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    writeFileSync(join(root, "snapshots", "cs_corrupt0000000000.json"), "{not json");
    expect(store.get("cs_corrupt0000000000")).toBeNull();
  });

  it("retention: old records and screenshots are pruned, the newest kept", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    const old = Date.now() / 1000 - 1000;
    // More than the 200 kept plus the slack (pruneSlack) allowed between scans.
    for (let i = 0; i < 225; i++) {
      const p = join(root, "snapshots", `cs_old${String(i).padStart(14, "0")}.json`);
      writeFileSync(p, "{}");
      utimesSync(p, old + i, old + i);
    }
    for (let i = 0; i < 35; i++) {
      // Named as the screenshot command names its files: retention deletes deckhand's files only.
      const p = join(root, "screenshots", `shot_${i.toString(36)}_abc123.png`);
      writeFileSync(p, "");
      utimesSync(p, old + i, old + i);
    }
    const s = snap();
    store.save(s);
    const names = readdirSync(join(root, "snapshots"));
    expect(names).toHaveLength(200);
    expect(names).toContain(`${s.snapshotId}.json`);
    expect(names).not.toContain(`cs_old${"0".repeat(14)}.json`);
    expect(readdirSync(join(root, "screenshots"))).toHaveLength(30);
  });

  it("issue 15 (memory): after 500 observations the store holds at most MEMORY_SNAPSHOTS in memory; older ones are read from their files", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    const saved = [];
    for (let i = 0; i < 500; i++) {
      const s = snap(`exe:/usr/bin/app${i % 3}`);
      store.save(s);
      saved.push(s);
    }
    const held = store.memoryHeld;
    expect(MEMORY_SNAPSHOTS).toBeLessThanOrEqual(16);
    expect(held.snapshots).toBe(MEMORY_SNAPSHOTS);
    expect(held.latest).toBe(3);
    // Out of memory, still on disk (the newest 200 are kept there): read back whole.
    const older = saved[500 - 100]!;
    expect(store.get(older.snapshotId)).toEqual(older);
    expect(store.memoryHeld.snapshots).toBe(MEMORY_SNAPSHOTS);
    expect(store.latestId("exe:/usr/bin/app1")).toBe(saved[499]!.snapshotId); // 499 % 3 === 1
  });

  it("issue 15 (memory): big snapshots are held up to MEMORY_SNAPSHOT_BYTES of JSON, not MEMORY_SNAPSHOTS of them", () => {
    const store = new SnapshotStore(tmp());
    const big = () => {
      const s = snap();
      // About 3 MB of JSON: a very large tree's worth.
      s.nodes = Array.from({ length: 3000 }, (_, i) => ({ path: [i], role: "label", nativeRole: "label", name: "n".repeat(1000), states: [], actions: [] }) as unknown as (typeof s.nodes)[number]);
      return s;
    };
    for (let i = 0; i < 6; i++) store.save(big());
    const held = store.memoryHeld;
    expect(held.bytes).toBeLessThanOrEqual(MEMORY_SNAPSHOT_BYTES);
    expect(held.snapshots).toBeLessThan(6);
    expect(held.snapshots).toBeGreaterThan(0);
  });

  it("retention scans once per slack of writes: up to keep + slack files stay, one more brings it back to keep", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    expect(pruneSlack(200)).toBe(20);
    expect(pruneSlack(30)).toBe(3);
    expect(pruneSlack(5)).toBe(1);
    const old = Date.now() / 1000 - 1000;
    const records = () => readdirSync(join(root, "snapshots")).filter((n) => STORE_FILE_NAMES.snapshot.test(n));
    for (let i = 0; i < 219; i++) {
      const p = join(root, "snapshots", `cs_old${String(i).padStart(14, "0")}.json`);
      writeFileSync(p, "{}");
      utimesSync(p, old + i, old + i);
    }
    store.save(snap());
    expect(records()).toHaveLength(220); // keep + slack: not yet scanned
    const newest = snap();
    store.save(newest);
    const left = records();
    expect(left).toHaveLength(200);
    expect(left).toContain(`${newest.snapshotId}.json`);
    // The 21 oldest went.
    for (let i = 0; i < 21; i++) expect(left).not.toContain(`cs_old${String(i).padStart(14, "0")}.json`);
  });

  it("snapshot records are written without fsync, the secure-field memory with it", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    const calls: string[] = [];
    const spy = vi.spyOn(fs, "fsyncSync").mockImplementation(() => {
      calls.push("fsync");
    });
    // The store imports fsyncSync by name: make the named export follow the spy.
    syncBuiltinESMExports();
    try {
      store.save(snap());
      expect(calls).toEqual([]);
      store.rememberSecure("w", [{ path: [0, 1], identifier: "" }], Date.now() + 1000);
      expect(calls).toEqual(["fsync"]);
    } finally {
      spy.mockRestore();
      syncBuiltinESMExports();
    }
  });

  it("writeFileAtomic replaces content and keeps mode 0600", () => {
    const root = tmp();
    const p = join(root, "f.json");
    writeFileAtomic(p, "one");
    writeFileAtomic(p, Buffer.from("two"));
    expect(statSync(p).mode & 0o777).toBe(0o600);
    expect(readdirSync(root)).toEqual(["f.json"]);
  });
});
