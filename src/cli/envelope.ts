// The JSON envelope: exactly one object per command on stdout.
import { DeckhandError, type ErrorDetails } from "../protocol/errors.ts";

export const SCHEMA_VERSION = 1;

export interface OkEnvelope {
  schemaVersion: 1;
  ok: true;
  command: string;
  result: unknown;
}
export interface ErrEnvelope {
  schemaVersion: 1;
  ok: false;
  command: string;
  error: { code: string; message: string; remediation: string; details: EnvelopeDetails };
}
/** Flat facts, plus a failed program's evidence under its own keys. */
export type EnvelopeDetails = { [key: string]: string | number | boolean | unknown[] | unknown };
/** A failed program's receipts (and observation) in its error's details: the one structured exception to flat details. */
export interface ProgramEvidence {
  receipts?: unknown[];
  observation?: unknown;
  settle?: unknown;
}
export type Envelope = OkEnvelope | ErrEnvelope;

export function ok(command: string, result: unknown): OkEnvelope {
  return { schemaVersion: SCHEMA_VERSION, ok: true, command, result };
}

/** Details must be a flat map of strings, numbers and booleans. */
function flatDetails(details: ErrorDetails): ErrorDetails {
  const out: ErrorDetails = {};
  for (const [k, v] of Object.entries(details)) {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[k] = v;
  }
  return out;
}

function programEvidence(err: DeckhandError): ProgramEvidence {
  if (!err.program) return {};
  return {
    receipts: err.program.receipts,
    ...(err.program.observation !== undefined ? { observation: err.program.observation } : {}),
    ...(err.program.settle !== undefined ? { settle: err.program.settle } : {}),
  };
}

/** Any failure becomes an error envelope; unexpected ones are redacted to INTERNAL. */
export function fail(command: string, err: unknown, log: (msg: string) => void = () => {}): ErrEnvelope {
  if (err instanceof DeckhandError) {
    return {
      schemaVersion: SCHEMA_VERSION,
      ok: false,
      command,
      error: { code: err.code, message: err.message, remediation: err.remediation, details: { ...flatDetails(err.details), ...programEvidence(err) } },
    };
  }
  // The stack goes to stderr only; stdout never carries it.
  log(`internal error in ${command}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  const e = new DeckhandError("INTERNAL", "an unexpected error occurred");
  return fail(command, e);
}
