// The one glob dialect of policy files: `*` matches any run of characters
// (including none, including `/`); every other character is literal. No `?`,
// no character classes, no escapes: a policy author can predict a match by eye.
//
// Matched with the classic two-pointer wildcard algorithm (O(n*m) worst case,
// no regular expression, so a hostile glob or URL cannot cause catastrophic
// backtracking).

/** Whether `text` matches `glob` as a whole. */
export function globMatch(glob: string, text: string, caseInsensitive: boolean): boolean {
  const p = caseInsensitive ? glob.toLowerCase() : glob;
  const s = caseInsensitive ? text.toLowerCase() : text;
  let pi = 0;
  let si = 0;
  let star = -1;
  let mark = 0;
  while (si < s.length) {
    if (pi < p.length && p[pi] !== "*" && p[pi] === s[si]) {
      pi++;
      si++;
    } else if (pi < p.length && p[pi] === "*") {
      star = pi++;
      mark = si;
    } else if (star !== -1) {
      pi = star + 1;
      si = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.length && p[pi] === "*") pi++;
  return pi === p.length;
}

/** Whether `glob` contains a wildcard at all. */
export function isGlob(glob: string): boolean {
  return glob.includes("*");
}
