// Single action commands compile to a one-step program: there is one executor.
import { DeckhandError } from "../protocol/errors.ts";
import type { CommandArgs } from "../protocol/commands.ts";
import type { Program, Step } from "../protocol/program.ts";
import { checkProgramShape } from "./validate.ts";
import { parseKeys } from "../protocol/keys.ts";

type Target = { app: string; windowId?: number; windowIndex?: number; snapshotId?: string; state?: boolean };

function program(t: Target, step: Step): Program {
  return {
    app: t.app,
    windowId: t.windowId,
    windowIndex: t.windowIndex,
    snapshotId: t.snapshotId,
    steps: [step],
    observe: t.state === true,
  };
}

function invalid(message: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", message);
}

/**
 * A single action command as a one-step program. The step's own shape
 * (element or point, x with y...) is checked here too, by the same rules as
 * any program step, so contradictory flags fail at flag parsing, before a
 * helper is looked for.
 */
export function compileCommand(command: string, a: Record<string, unknown>, secret?: string): Program {
  const compiled = compileStep(command, a, secret);
  checkProgramShape(compiled);
  return compiled;
}

function compileStep(command: string, a: Record<string, unknown>, secret?: string): Program {
  switch (command) {
    case "click": {
      const c = a as CommandArgs<"click">;
      return program(c, { action: "click", elementIndex: c.elementIndex, x: c.x, y: c.y, button: c.button, count: c.count, modifiers: c.modifiers });
    }
    case "set-value": {
      const c = a as CommandArgs<"set-value">;
      const value = c.valueStdin ? secret : c.value;
      if ((c.value !== undefined) === (c.valueStdin === true)) throw invalid("set-value takes exactly one of --value or --value-stdin");
      return program(c, { action: "set-value", elementIndex: c.elementIndex, value: value ?? "" });
    }
    case "type-text": {
      const c = a as CommandArgs<"type-text">;
      if ((c.text !== undefined) === (c.textStdin === true)) throw invalid("type-text takes exactly one of --text or --text-stdin");
      const text = c.textStdin ? secret : c.text;
      return program(c, { action: "type-text", elementIndex: c.elementIndex, text: text ?? "" });
    }
    case "press-key": {
      const c = a as CommandArgs<"press-key">;
      return program(c, { action: "press-key", elementIndex: c.elementIndex, key: c.key, repeat: c.repeat });
    }
    case "hotkey": {
      const c = a as CommandArgs<"hotkey">;
      return program(c, { action: "hotkey", keys: parseKeys(c.keys) });
    }
    case "scroll": {
      const c = a as CommandArgs<"scroll">;
      return program(c, { action: "scroll", elementIndex: c.elementIndex, direction: c.direction, amount: c.amount, x: c.x, y: c.y });
    }
    case "drag": {
      const c = a as CommandArgs<"drag">;
      const ends = [c.fromX, c.fromY, c.toX, c.toY];
      const someEnds = ends.some((v) => v !== undefined);
      if (someEnds && ends.some((v) => v === undefined)) throw invalid("drag needs all of --from-x --from-y --to-x --to-y");
      if (someEnds === (c.path !== undefined)) throw invalid("drag takes either --path or --from-x/--from-y/--to-x/--to-y");
      const path = c.path ?? [
        { x: c.fromX!, y: c.fromY! },
        { x: c.toX!, y: c.toY! },
      ];
      return program(c, { action: "drag", path, button: c.button });
    }
    case "select-text": {
      const c = a as CommandArgs<"select-text">;
      return program(c, { action: "select-text", elementIndex: c.elementIndex, start: c.start, end: c.end });
    }
    case "focus": {
      const c = a as CommandArgs<"focus">;
      return program(c, { action: "focus", elementIndex: c.elementIndex });
    }
    case "perform-secondary-action": {
      const c = a as CommandArgs<"perform-secondary-action">;
      return program(c, { action: "perform-secondary-action", elementIndex: c.elementIndex, name: c.action });
    }
  }
  throw invalid(`${command} is not an action`);
}

/** Steps that need the real pointer or keyboard unless a background route exists. */
export function stepUsesElement(step: Step): boolean {
  return "elementIndex" in step && step.elementIndex !== undefined;
}
