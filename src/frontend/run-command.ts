// One command, start to finish, in the fixed failure order. Shared by the
// one-shot CLI and serve so both give the same envelope for the same input.
import { DeckhandError } from "../protocol/errors.ts";
import { COMMANDS, type CommandName } from "../protocol/commands.ts";
import { HANDLERS, validateArgs, type CallContext } from "../commands/index.ts";
import type { Engine } from "../engine/engine.ts";
import { fail, ok, type Envelope } from "./envelope.ts";

export function isCommand(name: string): name is CommandName {
  return (COMMANDS as readonly string[]).includes(name);
}

export async function runCommand(engine: Engine, command: string, rawArgs: unknown, ctx: CallContext, log: (m: string) => void): Promise<Envelope> {
  try {
    if (!isCommand(command)) throw new DeckhandError("INVALID_ARGUMENTS", `unknown command ${JSON.stringify(command.slice(0, 60))}`, { details: { stage: "routing" } });
    const args = validateArgs(command, rawArgs);
    const handler = HANDLERS[command] as (e: Engine, a: unknown, c: CallContext) => Promise<unknown>;
    const result = await handler(engine, args, ctx);
    return ok(command, result);
  } catch (err) {
    return fail(isCommand(command) ? command : "deckhand", err, log);
  }
}
