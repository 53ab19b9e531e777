// The JSON envelope: exactly one object per command on stdout.
import { DeckhandError, publicError } from "../protocol/errors.ts";

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

function programEvidence(err: DeckhandError): ProgramEvidence {
  if (!err.program) return {};
  return {
    receipts: err.program.receipts,
    ...(err.program.observation !== undefined ? { observation: err.program.observation } : {}),
    ...(err.program.settle !== undefined ? { settle: err.program.settle } : {}),
  };
}

/**
 * Any failure becomes an error envelope (publicError: unexpected ones are
 * INTERNAL, their stack on stderr only), with a failed program's evidence.
 */
export function fail(command: string, err: unknown, log: (msg: string) => void = () => {}): ErrEnvelope {
  const e = publicError(err, (stack) => log(`internal error in ${command}: ${stack}`));
  const evidence = err instanceof DeckhandError ? programEvidence(err) : {};
  return { schemaVersion: SCHEMA_VERSION, ok: false, command, error: { ...e, details: { ...e.details, ...evidence } } };
}
