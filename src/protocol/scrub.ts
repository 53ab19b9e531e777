// Secrets (values and text a command was given, --value-stdin / --text-stdin
// above all) never leave in an error: a helper may echo what it was sent in
// its message ("\"S3cret\" is not a number", cut or escaped), and deckhand's
// own messages must not either. Errors of a command that carried a secret
// pass through scrubError on their way out.
import { DeckhandError, type ErrorDetails } from "./errors.ts";

export const REDACTED = "[redacted]";

/** Shortest prefix of a secret that is redacted on its own (a cut echo: `"S3cr..."`). */
const MIN_PREFIX = 4;
/** Shorter secrets are too common as substrings to redact anywhere they appear. */
const MIN_SECRET = 3;

/** How a secret may be spelled in a message: as is, JSON-escaped, Rust Debug-escaped ({:?}). */
function spellings(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const rust = [...secret]
    .map((c) => {
      const cp = c.codePointAt(0)!;
      if (c === "\\") return "\\\\";
      if (c === '"') return '\\"';
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      if (c === "\t") return "\\t";
      if (cp < 0x20 || cp === 0x7f) return `\\u{${cp.toString(16)}}`;
      return c;
    })
    .join("");
  return [...new Set([secret, json, rust])].filter((s) => s.length >= MIN_SECRET).sort((a, b) => b.length - a.length);
}

/** Replace every occurrence of the secret, and of each prefix of it of MIN_PREFIX characters or more, with [redacted]. */
export function scrubText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    for (const s of spellings(secret)) {
      const min = Math.min(MIN_PREFIX, s.length);
      let result = "";
      let i = 0;
      while (i < out.length) {
        let n = 0;
        while (n < s.length && i + n < out.length && out[i + n] === s[n]) n++;
        if (n >= min) {
          result += REDACTED;
          i += n;
        } else {
          result += out[i];
          i++;
        }
      }
      out = result;
    }
  }
  return out;
}

function scrubDetails(details: ErrorDetails, secrets: readonly string[]): ErrorDetails {
  const out: ErrorDetails = {};
  for (const [k, v] of Object.entries(details)) out[k] = typeof v === "string" ? scrubText(v, secrets) : v;
  return out;
}

/** The secrets worth scrubbing: non-empty values, without duplicates. */
export function secretsOf(values: readonly (string | null | undefined)[]): string[] {
  return [...new Set(values.filter((v): v is string => typeof v === "string" && v.length >= MIN_SECRET))];
}

/**
 * The error, with every secret (and its prefixes) out of its message,
 * remediation and details; the same object when nothing matched. Anything
 * that is not a DeckhandError becomes INTERNAL (its text is never shown).
 */
export function scrubError(err: unknown, secrets: readonly string[]): unknown {
  if (!secrets.length || !(err instanceof DeckhandError)) return err;
  const message = scrubText(err.message, secrets);
  const remediation = scrubText(err.remediation, secrets);
  const details = scrubDetails(err.details, secrets);
  const changed = message !== err.message || remediation !== err.remediation || Object.keys(details).some((k) => details[k] !== err.details[k]);
  if (!changed) return err;
  const clean = new DeckhandError(err.code, message, { remediation, details });
  // Keep what callers read besides the fields (a receipt attached by the executor).
  for (const [k, v] of Object.entries(err)) if (!(k in clean)) (clean as unknown as Record<string, unknown>)[k] = v;
  // A failed program's receipts (scrubbed by scrubStepErrors before the error was made).
  if (err.program) clean.program = err.program;
  clean.stack = `${clean.name}: ${message}`;
  return clean;
}

/** A program receipt's step errors (run): messages and details scrubbed in place. */
export function scrubStepErrors(steps: { error?: { code: string; message: string; details: ErrorDetails } }[], secrets: readonly string[]): void {
  if (!secrets.length) return;
  for (const s of steps) {
    if (!s.error) continue;
    s.error = { ...s.error, message: scrubText(s.error.message, secrets), details: scrubDetails(s.error.details, secrets) };
  }
}
