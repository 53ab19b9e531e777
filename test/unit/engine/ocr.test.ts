// The OCR engine's side (src/engine/ocr.ts): tesseract's TSV read into words,
// words grouped into lines (split at wide gaps, noise dropped, reading order),
// image boxes mapped to the screen through the image's origin and scale, and
// the engine run bounded: its deadline kills its whole process group, its
// output is capped, a missing or failing engine is OCR_UNAVAILABLE with a
// reason, a cancelled run stops it.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { engineVersion, groupLines, imageToScreen, mergeLines, ocrLanguages, ocrTimeoutMs, parseTsv, readText, runEngine, tesseractBinary, type OcrWord } from "../../../src/engine/ocr.ts";
import { DeckhandError } from "../../../src/protocol/errors.ts";
import { fakeTesseract, tsvOf, TSV_HEADER } from "../../fixtures/ocr/fake-tesseract.ts";
import { tempDirs } from "../session/fixtures.ts";

const tmp = tempDirs("deckhand-ocr-unit-");

function w(block: number, line: number, left: number, text: string, extra: Partial<OcrWord> = {}): OcrWord {
  return { block, par: 1, line, left, top: 10 * line, width: 8 * text.length, height: 12, conf: 95, text, ...extra };
}

async function rejection(p: Promise<unknown>): Promise<DeckhandError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DeckhandError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

/** Running (a zombie, reaped later by whoever inherited it, has exited). */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

describe("parseTsv", () => {
  it("reads level-5 words by the header's column names, skipping other levels, blank words and broken rows", () => {
    // Columns in another order than tesseract's: the header decides.
    const tsv = [
      "text\tconf\tlevel\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight",
      "\t-1\t1\t1\t0\t0\t0\t0\t0\t0\t400\t300",
      "\t-1\t4\t1\t1\t1\t1\t0\t20\t30\t200\t20",
      "Quarterly\t95.89\t5\t1\t1\t1\t1\t1\t27\t29\t116\t24",
      " \t95\t5\t1\t4\t1\t1\t1\t26\t227\t315\t11",
      "Report\tabc\t5\t1\t1\t1\t1\t2\t154\t30\t80\t23",
      "Overview\t96.3\t5\t1\t1\t1\t1\t3\t244\t29\t115\t19",
      "",
    ].join("\n");
    expect(parseTsv(tsv)).toEqual([
      { block: 1, par: 1, line: 1, left: 27, top: 29, width: 116, height: 24, conf: 95.89, text: "Quarterly" },
      { block: 1, par: 1, line: 1, left: 244, top: 29, width: 115, height: 19, conf: 96.3, text: "Overview" },
    ]);
  });

  it("a TSV without the columns it needs (or no TSV at all) has no words", () => {
    expect(parseTsv("")).toEqual([]);
    expect(parseTsv("level\ttext\n5\thello\n")).toEqual([]);
    expect(parseTsv("Error opening data file\n")).toEqual([]);
  });
});

describe("groupLines", () => {
  it("groups words by block, paragraph and line, in reading order, with the union of their boxes", () => {
    const lines = groupLines([w(2, 2, 10, "second"), w(1, 1, 10, "Hello"), w(1, 1, 60, "world"), w(2, 2, 64, "line")]);
    expect(lines.map((l) => l.text)).toEqual(["Hello world", "second line"]);
    expect(lines[0]!.box).toEqual({ x: 10, y: 10, width: 90, height: 12 });
    expect(lines[0]!.conf).toBe(95);
  });

  it("splits a line at a gap wider than 0.9 line heights (controls on one row), not at word spaces", () => {
    // Measured on the Tk fixture: "Submit Order" (gap 9 at height 18) and "Cancel" (gap 59) come out as one line.
    const row = [w(3, 1, 42, "Submit", { width: 77, height: 18 }), w(3, 1, 128, "Order", { width: 63, height: 18 }), w(3, 1, 250, "Cancel", { width: 73, height: 18 })];
    expect(groupLines(row).map((l) => [l.text, l.box.x, l.box.width])).toEqual([
      ["Submit Order", 42, 149],
      ["Cancel", 250, 73],
    ]);
    // A menu bar (LibreOffice, gap 13 at height 11): one element per item.
    const menu = [w(1, 1, 6, "File", { width: 18, height: 11 }), w(1, 1, 37, "Edit", { width: 21, height: 11 }), w(1, 1, 70, "View", { width: 26, height: 10 })];
    expect(groupLines(menu).map((l) => l.text)).toEqual(["File", "Edit", "View"]);
  });

  it("drops noise: low-confidence words and lines, lines without letters or digits, stray marks at a line's ends, lone low-confidence characters", () => {
    const lines = groupLines([
      w(1, 1, 0, "|", { conf: 89 }),
      w(1, 1, 12, "Page", { conf: 96 }),
      w(1, 1, 52, "one", { conf: 90 }),
      w(1, 1, 84, "|", { conf: 90 }),
      w(2, 2, 0, "Brit", { conf: 41 }), // a line averaging < 70
      w(3, 3, 0, "t=", { conf: 72 }), // one alphanumeric, < 90
      w(4, 4, 0, "7", { conf: 93 }), // one digit, sure: kept
      w(5, 5, 0, "--", { conf: 96 }), // no letter or digit
      w(6, 6, 0, "Salt", { conf: 95 }),
      w(6, 6, 36, "&", { conf: 80 }), // inside a line: kept
      w(6, 6, 48, "Pepper", { conf: 95 }),
      w(7, 7, 0, "ghost", { conf: 30 }), // a word below 40 goes, and with it its line
    ]);
    expect(lines.map((l) => l.text)).toEqual(["Page one", "7", "Salt & Pepper"]);
    expect(lines[0]!.box.x).toBe(12);
  });

  it("orders rows top to bottom and each row left to right, whatever the engine's block order", () => {
    const lines = groupLines([
      w(1, 1, 300, "Right", { top: 101 }),
      w(2, 2, 10, "Below", { top: 140 }),
      w(3, 3, 10, "Left", { top: 100 }),
      w(4, 4, 10, "Top", { top: 5 }),
    ]);
    expect(lines.map((l) => l.text)).toEqual(["Top", "Left", "Right", "Below"]);
  });

  it("caps the lines (400) and a line's text (300 characters)", () => {
    const many = Array.from({ length: 450 }, (_, i) => w(i + 1, 1, 0, `line${i}`, { top: i * 20 }));
    expect(groupLines(many)).toHaveLength(400);
    const long = Array.from({ length: 80 }, (_, i) => w(1, 1, i * 10, "abcdefgh", { width: 9 }));
    const [l] = groupLines(long);
    expect(l!.text).toHaveLength(301);
    expect(l!.text.endsWith("…")).toBe(true);
  });
});

describe("imageToScreen", () => {
  it("full size: the box moved by the image's origin", () => {
    expect(imageToScreen({ x: 27, y: 29, width: 116, height: 24 }, { origin: { x: 61, y: 80 }, scale: 1 })).toEqual({ x: 88, y: 109, width: 116, height: 24 });
  });

  it("scaled: image pixels divided by the scale, covering the box in whole screen pixels", () => {
    // Half size: image pixel 10 shows screen 100 + 20.
    expect(imageToScreen({ x: 10, y: 5, width: 31, height: 7 }, { origin: { x: 100, y: 200 }, scale: 0.5 })).toEqual({ x: 120, y: 210, width: 62, height: 14 });
    // A third: edges fall between screen pixels; the rectangle covers them.
    expect(imageToScreen({ x: 1, y: 1, width: 1, height: 1 }, { origin: { x: 0, y: 0 }, scale: 3 / 10 })).toEqual({ x: 3, y: 3, width: 4, height: 4 });
    // A region of a window: its origin is the region's corner.
    expect(imageToScreen({ x: 0, y: 0, width: 50, height: 10 }, { origin: { x: -20, y: 1040 }, scale: 1 })).toEqual({ x: -20, y: 1040, width: 50, height: 10 });
  });
});

describe("settings from the environment", () => {
  it("the binary: DECKHAND_TESSERACT, else tesseract on PATH", () => {
    expect(tesseractBinary({})).toBe("tesseract");
    expect(tesseractBinary({ DECKHAND_TESSERACT: " /opt/ocr/bin/tesseract " })).toBe("/opt/ocr/bin/tesseract");
  });

  it("languages: DECKHAND_OCR_LANGS when it is a plain list, else eng", () => {
    expect(ocrLanguages({})).toBe("eng");
    expect(ocrLanguages({ DECKHAND_OCR_LANGS: "eng+deu" })).toBe("eng+deu");
    expect(ocrLanguages({ DECKHAND_OCR_LANGS: "eng --psm 0" })).toBe("eng");
    expect(ocrLanguages({ DECKHAND_OCR_LANGS: "-c" })).toBe("eng");
  });

  it("the deadline: DECKHAND_OCR_TIMEOUT_MS within 1 ms..120 s, else 20 s", () => {
    expect(ocrTimeoutMs({})).toBe(20_000);
    expect(ocrTimeoutMs({ DECKHAND_OCR_TIMEOUT_MS: "300" })).toBe(300);
    expect(ocrTimeoutMs({ DECKHAND_OCR_TIMEOUT_MS: "0" })).toBe(20_000);
    expect(ocrTimeoutMs({ DECKHAND_OCR_TIMEOUT_MS: "999999" })).toBe(20_000);
  });
});

describe("running the engine", () => {
  const image = () => {
    const p = join(tmp(), "shot.png");
    writeFileSync(p, "png bytes");
    return p;
  };

  it("readText: the version, then two passes on the image (global and local thresholds) with TSV output, no shell; their lines merged", async () => {
    const fake = fakeTesseract(tmp(), { tsv: tsvOf([[1, 1, 1, 10, 20, 50, 12, 96, "Hello"], [1, 1, 1, 64, 20, 50, 12, 94, "there"]]), version: "tesseract 5.3.0\n leptonica-1.82.0" });
    const img = image();
    const read = await readText(img, { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path });
    expect(read.engine).toBe("tesseract 5.3.0");
    expect(read.lines).toEqual([{ text: "Hello there", conf: 95, box: { x: 10, y: 20, width: 104, height: 12 } }]);
    expect(read.ms).toBeGreaterThanOrEqual(0);
    const runs = fake.runs();
    expect(runs[0]).toEqual(["--version"]);
    expect(runs.slice(1).map((r) => r.join(" ")).sort()).toEqual([`${img} stdout -l eng --psm 11 -c thresholding_method=2 tsv`, `${img} stdout -l eng --psm 11 tsv`]);
    expect(fake.images()).toEqual(["9", "9"]);
  });

  it("the version is asked once per binary and process", async () => {
    const fake = fakeTesseract(tmp(), { version: "tesseract v4.1.1-rc2" });
    const env = { PATH: process.env.PATH };
    expect(await engineVersion(fake.path, env)).toBe("tesseract 4.1.1-rc2");
    expect(await engineVersion(fake.path, env)).toBe("tesseract 4.1.1-rc2");
    expect(fake.runs().filter((r) => r[0] === "--version")).toHaveLength(1);
  });

  it("a missing engine is OCR_UNAVAILABLE, reason missing", async () => {
    const err = await rejection(readText(image(), { PATH: "/nonexistent", DECKHAND_TESSERACT: join(tmp(), "no-such-tesseract") }));
    expect(err.code).toBe("OCR_UNAVAILABLE");
    expect(err.details.reason).toBe("missing");
    expect(err.message).toMatch(/was not found/);
    // Not on PATH either.
    const none = await rejection(readText(image(), { PATH: tmp() }));
    expect(none.details).toMatchObject({ reason: "missing", engine: "tesseract" });
  });

  it("an engine that fails is OCR_UNAVAILABLE, reason failed, with its exit code and last stderr line", async () => {
    const fake = fakeTesseract(tmp(), { exitCode: 3 });
    const err = await rejection(readText(image(), { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path }));
    expect(err.code).toBe("OCR_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "failed", exitCode: 3 });
    expect(err.message).toContain("could not read the image");
  });

  it("past its deadline the engine's whole process group is killed, and the run is OCR_UNAVAILABLE, reason timeout", async () => {
    const fake = fakeTesseract(tmp(), { sleepS: 30 });
    const t0 = Date.now();
    const err = await rejection(readText(image(), { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path, DECKHAND_OCR_TIMEOUT_MS: "400" }));
    const ms = Date.now() - t0;
    expect(err.code).toBe("OCR_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "timeout", timeoutMs: 400 });
    expect(ms).toBeLessThan(3000);
    const pids = fake.pids();
    expect(pids).toHaveLength(4);
    // Both passes' scripts and the sleeps they started (grandchildren of deckhand): all gone.
    await new Promise((r) => setTimeout(r, 100));
    expect(pids.filter(alive)).toEqual([]);
  });

  it("output past the cap stops the engine: OCR_UNAVAILABLE, reason output-too-large", async () => {
    const fake = fakeTesseract(tmp(), { floodBytes: 64 * 1024 });
    const err = await rejection(runEngine(fake.path, [image()], { PATH: process.env.PATH }, { timeoutMs: 5000, maxOutputBytes: 1024 }));
    expect(err.details).toMatchObject({ reason: "output-too-large", maxOutputBytes: 1024 });
  });

  it("a cancelled run stops the engine's group: CANCELLED", async () => {
    const fake = fakeTesseract(tmp(), { sleepS: 30 });
    const ctl = new AbortController();
    const p = runEngine(fake.path, [image()], { PATH: process.env.PATH }, { timeoutMs: 10_000, maxOutputBytes: 1024, signal: ctl.signal });
    await new Promise((r) => setTimeout(r, 200));
    ctl.abort();
    const err = await rejection(p);
    expect(err.code).toBe("CANCELLED");
    await new Promise((r) => setTimeout(r, 100));
    expect(fake.pids().filter(alive)).toEqual([]);
    const before = await rejection(runEngine(fake.path, [], {}, { timeoutMs: 1000, maxOutputBytes: 10, signal: ctl.signal }));
    expect(before.code).toBe("CANCELLED");
  });

  it("the engine sees a bare environment: no secrets of deckhand's", async () => {
    const dir = tmp();
    const script = join(dir, "env-tesseract");
    writeFileSync(script, `#!/bin/sh\nenv | sort > '${join(dir, "env.txt")}'\n`, { mode: 0o755 });
    await runEngine(script, [], { PATH: process.env.PATH, SECRET_TOKEN: "hunter2", TESSDATA_PREFIX: "/data" }, { timeoutMs: 5000, maxOutputBytes: 1024 });
    expect(existsSync(join(dir, "env.txt"))).toBe(true);
    const env = readFileSync(join(dir, "env.txt"), "utf8");
    expect(env).not.toContain("hunter2");
    expect(env).toContain("OMP_THREAD_LIMIT=1");
    expect(env).toContain("TESSDATA_PREFIX=/data");
    expect(env).toContain("LC_ALL=C");
  });

  it("a TSV header alone is no lines", async () => {
    const fake = fakeTesseract(tmp(), { tsv: TSV_HEADER + "\n" });
    const read = await readText(image(), { PATH: process.env.PATH, DECKHAND_TESSERACT: fake.path });
    expect(read.lines).toEqual([]);
  });

  it("one pass failing stops the other: the run fails with the first failure, nothing left running", async () => {
    const dir = tmp();
    const script = join(dir, "half-broken");
    // The global pass hangs, the local one (-c thresholding_method=2) fails at once.
    writeFileSync(
      script,
      `#!/bin/sh\nif [ "$1" = "--version" ]; then echo "tesseract 5.0.0"; exit 0; fi\ncase "$*" in *thresholding_method*) echo "Error: broken pass" >&2; exit 2;; esac\nsleep 30 & echo $$ >> '${join(dir, "pids.log")}'; echo $! >> '${join(dir, "pids.log")}'; wait\n`,
      { mode: 0o755 },
    );
    const t0 = Date.now();
    const err = await rejection(readText(image(), { PATH: process.env.PATH, DECKHAND_TESSERACT: script }));
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(err.code).toBe("OCR_UNAVAILABLE");
    expect(err.details).toMatchObject({ reason: "failed", exitCode: 2 });
    await new Promise((r) => setTimeout(r, 200));
    const pids = readFileSync(join(dir, "pids.log"), "utf8").split("\n").filter(Boolean).map(Number);
    expect(pids.filter(alive)).toEqual([]);
  });
});

describe("mergeLines", () => {
  const line = (text: string, conf: number, x: number, y: number, width = 60, height = 12) => ({ text, conf, box: { x, y, width, height } });
  it("keeps each place once, the surer read; lines one read alone has are kept; reading order", () => {
    const global = [line("Name", 80, 20, 230), line("Preview", 75, 40, 320), line("Pssv0r", 10, 20, 290)];
    const local = [line("File", 86, 6, 4, 18, 11), line("Edit", 89, 37, 4, 21, 11), line("Nane", 38, 21, 231), line("Result: none", 96, 20, 360, 90)];
    expect(mergeLines(global, local).map((l) => l.text)).toEqual(["File", "Edit", "Name", "Pssv0r", "Preview", "Result: none"]);
  });

  it("a line covering half of another (or half covered by it) is the same text; at equal confidence the longer text wins", () => {
    const a = [line("Page lof 1", 82, 40, 1046, 60, 10)];
    const b = [line("Page 1 of 1 | 14 words", 82, 40, 1045, 150, 11), line("Default", 90, 300, 1046)];
    expect(mergeLines(a, b).map((l) => l.text)).toEqual(["Page 1 of 1 | 14 words", "Default"]);
  });
});
