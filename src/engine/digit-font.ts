// The set-of-marks labels' font: the ten digits as 5x7 bitmaps (the classic
// dot-matrix shapes, with a slashless 0 that is still told apart from 8 by
// its open middle), drawn at an integer scale. Embedded so that drawing a
// label needs no font file and looks the same on every machine.

export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;
/** Columns of space between two digits, before scaling. */
export const GLYPH_GAP = 1;

/** Rows of each digit, top to bottom; bit 4 is the leftmost column. */
const GLYPHS: readonly (readonly number[])[] = [
  [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110], // 0
  [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110], // 1
  [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111], // 2
  [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110], // 3
  [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010], // 4
  [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110], // 5
  [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110], // 6
  [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000], // 7
  [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110], // 8
  [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100], // 9
];

/** Whether the unscaled glyph of `digit` has its dot at column `x`, row `y`. */
export function glyphDot(digit: number, x: number, y: number): boolean {
  const rows = GLYPHS[digit];
  if (!rows || x < 0 || x >= GLYPH_WIDTH || y < 0 || y >= GLYPH_HEIGHT) return false;
  return ((rows[y]! >> (GLYPH_WIDTH - 1 - x)) & 1) === 1;
}

/** The size in pixels of a run of digits at `scale` (no padding). */
export function textSize(text: string, scale: number): { width: number; height: number } {
  const n = text.length;
  return { width: n === 0 ? 0 : (n * (GLYPH_WIDTH + GLYPH_GAP) - GLYPH_GAP) * scale, height: GLYPH_HEIGHT * scale };
}

/**
 * The pixels of a run of digits at `scale`, relative to its top-left corner:
 * calls `dot(x, y)` for each pixel that is ink. Anything but 0-9 is refused
 * (a label is an element index).
 */
export function forEachInk(text: string, scale: number, dot: (x: number, y: number) => void): void {
  if (!/^[0-9]*$/.test(text)) throw new Error(`the digit font draws 0-9 only, not ${JSON.stringify(text)}`);
  const s = Math.max(1, Math.floor(scale));
  for (let i = 0; i < text.length; i++) {
    const digit = text.charCodeAt(i) - 48;
    const left = i * (GLYPH_WIDTH + GLYPH_GAP) * s;
    for (let gy = 0; gy < GLYPH_HEIGHT; gy++) {
      for (let gx = 0; gx < GLYPH_WIDTH; gx++) {
        if (!glyphDot(digit, gx, gy)) continue;
        for (let dy = 0; dy < s; dy++) for (let dx = 0; dx < s; dx++) dot(left + gx * s + dx, gy * s + dy);
      }
    }
  }
}
