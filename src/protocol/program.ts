// A program: one target, 1..N steps, validated whole before any step runs.
// Single action commands compile to a one-step program (src/program/compile.ts).
import { z } from "zod";
import { Button, MAX_DRAG_POINTS, Point } from "./commands.ts";

const uint = z.number().int().nonnegative();
const int = z.number().int();

export const Step = z.discriminatedUnion("action", [
  z.strictObject({
    action: z.literal("click"),
    elementIndex: uint.optional(),
    x: int.optional(),
    y: int.optional(),
    button: Button.optional(),
    count: z.number().int().min(1).max(3).optional(),
    modifiers: z.array(z.string()).optional(),
  }),
  z.strictObject({ action: z.literal("set-value"), elementIndex: uint, value: z.string() }),
  z.strictObject({ action: z.literal("type-text"), elementIndex: uint.optional(), text: z.string() }),
  z.strictObject({
    action: z.literal("press-key"),
    elementIndex: uint.optional(),
    key: z.string().min(1),
    repeat: z.number().int().min(1).max(100).optional(),
  }),
  z.strictObject({ action: z.literal("hotkey"), keys: z.array(z.string().min(1)).min(1) }),
  z.strictObject({
    action: z.literal("scroll"),
    elementIndex: uint.optional(),
    direction: z.enum(["up", "down", "left", "right"]).optional(),
    amount: z.number().int().min(1).max(100).optional(),
    x: int.optional(),
    y: int.optional(),
    /** Keys held while the wheel turns (ctrl, shift, alt, super): pressed and released in the same input. */
    modifiers: z.array(z.string()).optional(),
  }),
  z.strictObject({
    action: z.literal("drag"),
    path: z.array(Point).min(2).max(MAX_DRAG_POINTS),
    button: Button.optional(),
    /** Keys held for the whole drag: pressed and released in the same input. */
    modifiers: z.array(z.string()).optional(),
  }),
  z.strictObject({ action: z.literal("select-text"), elementIndex: uint, start: uint, end: uint }),
  z.strictObject({ action: z.literal("focus"), elementIndex: uint }),
  z.strictObject({ action: z.literal("perform-secondary-action"), elementIndex: uint, name: z.string().min(1) }),
  z.strictObject({ action: z.literal("wait"), ms: z.number().int().min(0).max(10_000) }),
  // Hover: the pointer stays where it was moved (the one pointer step that is not restored).
  z.strictObject({ action: z.literal("move"), x: int, y: int, modifiers: z.array(z.string()).optional() }),
  // Press a key, hold it for ms, release it: one input, so the release is guaranteed.
  z.strictObject({ action: z.literal("hold-key"), key: z.string().min(1), ms: z.number().int().min(1).max(10_000) }),
]);
export type Step = z.infer<typeof Step>;

export const Program = z.strictObject({
  app: z.string().min(1),
  windowId: uint.optional(),
  windowIndex: uint.optional(),
  snapshotId: z.string().regex(/^cs_[A-Za-z0-9]{10,40}$/).optional(),
  steps: z.array(Step).min(1).max(100),
  /** One final observation after the last step (default true for `run`). */
  observe: z.boolean().optional(),
  noScreenshot: z.boolean().optional(),
});
export type Program = z.infer<typeof Program>;

export const StepStatus = z.enum(["completed", "failed", "unattempted"]);
