// Issue 10.3: the state directory's subdirectories are deckhand's own. One
// replaced by a symlink is refused (INTERNAL, details.reason
// "state-dir-symlink") and nothing is read, written or deleted through it;
// retention deletes only regular files named as deckhand names them.
import { describe, expect, it } from "vitest";
import { existsSync, lstatSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SnapshotStore, STORE_FILE_NAMES } from "../../../src/session/store.ts";
import { newSnapshotId } from "../../../src/session/snapshot.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { snap, tempDirs } from "./fixtures.ts";

const tmp = tempDirs("deckhand-statedir-");

const OLD = Date.now() / 1000 - 100_000;
function oldFile(path: string, age: number, data = ""): void {
  writeFileSync(path, data);
  utimesSync(path, OLD + age, OLD + age);
}
/** Named as the screenshot command names its files. */
const deckhandShot = (i: number) => `shot_${i.toString(36)}_x${i}.png`;

function thrown(fn: () => unknown): DeckhandError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DeckhandError);
    return err as DeckhandError;
  }
  throw new Error("expected a DeckhandError");
}

describe("a state subdirectory replaced by a symlink", () => {
  it("screenshots/ -> a directory of someone else's files: save is refused, every file there survives", () => {
    const root = tmp();
    const elsewhere = tmp();
    // 40 old PNGs, named as deckhand names them, plus a canary: retention through the link would delete 10.
    for (let i = 0; i < 40; i++) oldFile(join(elsewhere, deckhandShot(i)), 10 + i);
    oldFile(join(elsewhere, "canary.png"), 0, "precious");
    const before = readdirSync(elsewhere).sort();
    const store = new SnapshotStore(root);
    rmSync(join(root, "screenshots"), { recursive: true });
    symlinkSync(elsewhere, join(root, "screenshots"));

    const e = thrown(() => store.save(snap()));
    expect(e.code).toBe("INTERNAL");
    expect(e.details).toMatchObject({ reason: "state-dir-symlink", path: join(root, "screenshots") });
    expect(e.remediation).toMatch(/Remove .*screenshots/);
    expect(readdirSync(elsewhere).sort()).toEqual(before);
    // Nor does a screenshot get a path through it.
    expect(thrown(() => store.screenshotPath("cs_abcdefghijkl")).details.reason).toBe("state-dir-symlink");
  });

  it("a store made while the link is already there refuses the same way (snapshots/, latest/)", () => {
    for (const sub of ["snapshots", "latest"]) {
      const root = tmp();
      const elsewhere = tmp();
      for (let i = 0; i < 210; i++) oldFile(join(elsewhere, `cs_${String(i).padStart(12, "0")}.json`), i, "{}");
      symlinkSync(elsewhere, join(root, sub));
      const store = new SnapshotStore(root);
      expect(lstatSync(join(root, sub)).isSymbolicLink(), "the link is left alone").toBe(true);
      expect(thrown(() => store.save(snap())).details.reason, sub).toBe("state-dir-symlink");
      expect(thrown(() => store.get("cs_000000000000")).details.reason).toBe("state-dir-symlink");
      expect(thrown(() => store.latestId("exe:/usr/bin/a")).details.reason).toBe("state-dir-symlink");
      expect(readdirSync(elsewhere)).toHaveLength(210);
    }
  });

  it("a dangling symlink is refused too, and nothing is created at its target", () => {
    const root = tmp();
    const target = join(tmp(), "not-there");
    symlinkSync(target, join(root, "snapshots"));
    const store = new SnapshotStore(root);
    expect(thrown(() => store.save(snap())).details.reason).toBe("state-dir-symlink");
    expect(existsSync(target)).toBe(false);
  });

  it("a regular file where a directory belongs: state-dir-not-a-directory; a removed directory is made again", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    rmSync(join(root, "latest"), { recursive: true });
    writeFileSync(join(root, "latest"), "x");
    expect(thrown(() => store.save(snap())).details.reason).toBe("state-dir-not-a-directory");
    rmSync(join(root, "latest"));
    const s = snap();
    store.save(s);
    expect(lstatSync(join(root, "latest")).isDirectory()).toBe(true);
    expect(lstatSync(join(root, "latest")).mode & 0o777).toBe(0o700);
    expect(store.latestId(s.targetKey)).toBe(s.snapshotId);
  });
});

describe("retention deletes deckhand's files only", () => {
  it("a stray file in screenshots/ (and one in snapshots/) survives retention; deckhand's old files are pruned", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    oldFile(join(root, "screenshots", "holiday.png"), 0, "mine");
    oldFile(join(root, "screenshots", "notes.txt"), 0, "mine");
    oldFile(join(root, "screenshots", "shot0.png"), 0, "mine");
    for (let i = 0; i < 35; i++) oldFile(join(root, "screenshots", deckhandShot(i)), 10 + i);
    for (let i = 0; i < 5; i++) oldFile(join(root, "screenshots", `cs_${String(i).padStart(20, "0")}.png`), 5 + i);
    oldFile(join(root, "snapshots", "my-notes.json"), 0, "mine");
    for (let i = 0; i < 225; i++) oldFile(join(root, "snapshots", `cs_old${String(i).padStart(14, "0")}.json`), 10 + i, "{}");

    store.save(snap());

    const shots = readdirSync(join(root, "screenshots"));
    for (const stray of ["holiday.png", "notes.txt", "shot0.png"]) expect(shots, stray).toContain(stray);
    expect(shots.filter((n) => STORE_FILE_NAMES.screenshot.test(n))).toHaveLength(30);
    // The oldest deckhand files went: the cs_ ones (ages 5-9) and the first shot_ ones.
    expect(shots.some((n) => n.startsWith("cs_"))).toBe(false);
    const snaps = readdirSync(join(root, "snapshots"));
    expect(snaps).toContain("my-notes.json");
    expect(snaps.filter((n) => STORE_FILE_NAMES.snapshot.test(n))).toHaveLength(200);
  });

  it("a symlink with a deckhand name is never followed: the file it points to survives", () => {
    const root = tmp();
    const outside = tmp();
    const store = new SnapshotStore(root);
    oldFile(join(outside, "precious.png"), 0, "precious");
    symlinkSync(join(outside, "precious.png"), join(root, "screenshots", "cs_aaaaaaaaaaaaaaaaaaaa.png"));
    for (let i = 0; i < 40; i++) oldFile(join(root, "screenshots", deckhandShot(i)), 10 + i);
    store.save(snap());
    expect(existsSync(join(outside, "precious.png"))).toBe(true);
    expect(lstatSync(join(root, "screenshots", "cs_aaaaaaaaaaaaaaaaaaaa.png")).isSymbolicLink()).toBe(true);
  });

  it("latest pointers are bounded too (the newest 200), by their own name pattern", () => {
    const root = tmp();
    const store = new SnapshotStore(root);
    for (let i = 0; i < 230; i++) oldFile(join(root, "latest", `${i.toString(16).padStart(32, "0")}.json`), i, "{}");
    oldFile(join(root, "latest", "README.json"), 0, "mine");
    const s = snap("exe:/usr/bin/newest");
    store.save(s);
    const names = readdirSync(join(root, "latest"));
    expect(names).toContain("README.json");
    expect(names.filter((n) => STORE_FILE_NAMES.keyed.test(n))).toHaveLength(200);
    expect(store.latestId(s.targetKey)).toBe(s.snapshotId);
  });

  it("the name patterns match what deckhand writes", () => {
    expect(STORE_FILE_NAMES.snapshot.test(`${newSnapshotId()}.json`)).toBe(true);
    expect(STORE_FILE_NAMES.screenshot.test(`${newSnapshotId()}.png`)).toBe(true);
    // The screenshot command's name (src/commands/index.ts).
    const shot = `shot_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}.png`;
    expect(STORE_FILE_NAMES.screenshot.test(shot)).toBe(true);
    // Strays, and the helper's temporary names (never pruned mid-write).
    for (const stray of ["a.png", "shot.png", "cs_short.png", "cs_aaaaaaaaaaaa.png.tmp", ".cs_aaaaaaaaaaaa.png", ".cs_aaaaaaaaaaaa.png.tmp-1-2", "x/cs_aaaaaaaaaaaa.png"]) {
      expect(STORE_FILE_NAMES.screenshot.test(stray), stray).toBe(false);
    }
  });
});

