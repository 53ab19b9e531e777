// `clipboard get` and `clipboard set` (issue 13). The paste step is a
// program step (src/program/paste.ts).
//
// get: the metadata first (who owns the selection, who has focus, what the
// owner offers; no text), then the refusals, then the text, read only from
// the owner that was checked. Refused (POLICY_DENIED, details.reason) when
// policy denies the owner app (owner-denied), when the owner marks the
// content secret (secret-hint: password managers do), when the focused
// control is a secure field (secure-focus), or when the owner app's focused
// control is (secure-source: the last copy likely came from it).
//
// set: sensitive as a whole (the confirm hook decides, it never sees the
// text); PAUSED applies. The text (--text-stdin for a secret) is in no
// error, audit record or log: only its size is reported.
import { DeckhandError } from "../protocol/errors.ts";
import type { CommandArgs } from "../protocol/commands.ts";
import type { CommandResult, ReadonlyDeep } from "../protocol/results.ts";
import { scrubError, secretsOf } from "../protocol/scrub.ts";
import type { WireApp } from "../wire/messages.ts";
import type { Engine } from "../engine/engine.ts";
import { requireCapability } from "../engine/ports.ts";
import { toApp, type ResolvedApp } from "../engine/resolve.ts";
import { auditAppId } from "../engine/safety.ts";
import { focusedIsSecure, focusedNode } from "../program/live-checks.ts";

/** What `clipboard get` returns at most by default (--max-bytes). */
export const DEFAULT_MAX_BYTES = 1024 * 1024;

interface Ctx {
  readStdin?: () => Promise<string>;
}

type Result<C extends "clipboard-get" | "clipboard-set"> = ReadonlyDeep<CommandResult<C>>;

/** One refusal of `clipboard get`: audited (no text was read), then thrown. */
function refusal(engine: Engine, owner: ResolvedApp | null, ownerPid: number | null, reason: string, rule: string, message: string): DeckhandError {
  engine.safety.audit({
    event: "decision",
    command: "clipboard-get",
    appId: owner ? auditAppId(owner) : null,
    pid: ownerPid,
    decision: "deny",
    decisionSource: "builtin",
    rule,
    outcome: "POLICY_DENIED",
    delivery: "not_dispatched",
  });
  return new DeckhandError("POLICY_DENIED", message, { details: { reason, source: "builtin", rule } });
}

export async function clipboardGet(engine: Engine, args: CommandArgs<"clipboard-get">): Promise<Result<"clipboard-get">> {
  const { supervisor, hello } = await engine.helper();
  requireCapability(hello, "clipboard.get", "clipboard get");
  const selection = args.selection ?? "clipboard";
  const maxBytes = args.maxBytes ?? DEFAULT_MAX_BYTES;
  const meta = (await supervisor.request("clipboard_get", { selection, read_text: false, max_bytes: maxBytes })).result;
  if (meta.owner_window === null) {
    engine.safety.audit({ command: "clipboard-get", decision: "allow", decisionSource: "default", outcome: "OK" });
    return { selection, text: null, bytes: 0, truncated: false, owner: null, targets: [] };
  }
  const apps = (await supervisor.request("list_apps", {})).result.apps;
  const byPid = (pid: number | null): WireApp | undefined => (pid === null ? undefined : apps.find((a) => a.pid === pid));
  const ownerWire = byPid(meta.owner_pid);
  const owner = ownerWire ? toApp(ownerWire) : null;
  let decisionSource = "default";
  if (owner) {
    try {
      decisionSource = engine.safety.checkApp(owner, null, "clipboard-get").source;
    } catch (err) {
      // checkApp audited the denial.
      if (err instanceof DeckhandError && err.code === "POLICY_DENIED") err.details.reason = "owner-denied";
      throw err;
    }
  }
  if (meta.secret_hint) {
    throw refusal(engine, owner, meta.owner_pid, "secret-hint", "builtin:secret_hint", "the clipboard's owner marks its content secret (a password manager's copy): it is not read");
  }
  // Read live: a secure field with focus now, or in the app the text came from.
  const focusWire = byPid(meta.focus_pid);
  if (focusWire?.accessible) {
    const focusApp = toApp(focusWire);
    if (focusedIsSecure(engine.store, focusApp, await focusedNode(engine, focusApp, meta.focus_window))) {
      throw refusal(engine, owner, meta.owner_pid, "secure-focus", "builtin:secure_field", "a secure (password) field has focus: the clipboard is not read");
    }
  }
  if (owner?.accessible && owner.pid !== focusWire?.pid) {
    if (focusedIsSecure(engine.store, owner, await focusedNode(engine, owner, null))) {
      throw refusal(engine, owner, meta.owner_pid, "secure-source", "builtin:secure_field", "the clipboard's owner app has a secure (password) field focused: the text likely came from it and is not read");
    }
  }
  const read = (await supervisor.request("clipboard_get", { selection, read_text: true, max_bytes: maxBytes, expect_owner: meta.owner_window })).result;
  if (read.owner_window !== meta.owner_window || read.secret_hint) {
    engine.safety.audit({ command: "clipboard-get", appId: owner ? auditAppId(owner) : null, pid: meta.owner_pid, decision: "allow", decisionSource: decisionSource as never, outcome: "ACTION_FAILED" });
    throw new DeckhandError("ACTION_FAILED", "the clipboard changed owner while it was checked: its text was not read", {
      remediation: "Another app copied something meanwhile: run clipboard get again.",
      details: { reason: "owner-changed" },
    });
  }
  engine.safety.audit({ command: "clipboard-get", appId: owner ? auditAppId(owner) : null, pid: meta.owner_pid, decision: "allow", decisionSource: decisionSource as never, outcome: "OK" });
  return {
    selection,
    text: read.text,
    bytes: read.bytes,
    truncated: read.truncated,
    owner: { name: owner?.name ?? meta.owner_name ?? null, pid: meta.owner_pid },
    targets: read.targets,
  };
}

async function readSecret(ctx: Ctx): Promise<string> {
  if (!ctx.readStdin) throw new DeckhandError("INVALID_ARGUMENTS", "--text-stdin reads stdin, which this mode does not have; pass the text in the request");
  const raw = await ctx.readStdin();
  // One trailing newline is the shell's, not the text's.
  return raw.endsWith("\r\n") ? raw.slice(0, -2) : raw.endsWith("\n") ? raw.slice(0, -1) : raw;
}

export async function clipboardSet(engine: Engine, args: CommandArgs<"clipboard-set">, ctx: Ctx): Promise<Result<"clipboard-set">> {
  const given = [args.text !== undefined, args.textStdin === true, args.clear === true].filter(Boolean).length;
  let text = args.text;
  try {
    if (given !== 1) throw new DeckhandError("INVALID_ARGUMENTS", "give exactly one of --text, --text-stdin and --clear", { details: { field: "text" } });
    const { supervisor, hello } = await engine.helper();
    requireCapability(hello, "clipboard.set", "clipboard set");
    engine.safety.checkPaused("clipboard-set");
    if (args.textStdin) text = await readSecret(ctx);
    const selection = args.selection ?? "clipboard";
    const clear = args.clear === true;
    // Audited by the seam, allowed or not; the hook is told no text.
    await engine.safety.confirmCommand({ app: null, window: null, command: "clipboard-set", action: "set_clipboard", reason: clear ? "clearing the clipboard" : "setting the clipboard" });
    let result;
    try {
      result = (await supervisor.request("clipboard_set", { selection, text: clear ? null : text! })).result;
      if (!result.set) throw new DeckhandError("ACTION_FAILED", `the ${selection} selection could not be ${clear ? "cleared" : "set"} (not confirmed)`, { details: { delivery: "unknown" } });
    } catch (err) {
      const code = err instanceof DeckhandError ? err.code : "INTERNAL";
      engine.safety.audit({ command: "clipboard-set", decision: "allow", decisionSource: "confirm", outcome: code, delivery: "unknown" });
      throw err;
    }
    engine.safety.audit({ command: "clipboard-set", pid: result.owner_pid, decision: "allow", decisionSource: "confirm", outcome: "OK", delivery: "submitted" });
    return { selection, set: true, cleared: clear, bytes: clear ? 0 : Buffer.byteLength(text!, "utf8"), ownerPid: result.owner_pid };
  } catch (err) {
    if (err instanceof DeckhandError && err.details.delivery === undefined) err.details.delivery = "not_dispatched";
    // Never with the text (a helper may echo what it was sent).
    throw scrubError(err, secretsOf([text]));
  }
}
