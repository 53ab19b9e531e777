// The engine's parts, each behind a narrow interface. A function of the
// engine or the program takes only the ports it uses (its parameter's type
// says which), and the Engine (src/engine/engine.ts) implements them all: a
// caller passes the engine, a test can pass a small fake.
import { DeckhandError } from "../protocol/errors.ts";
import type { Supervisor } from "../helpers/supervisor.ts";
import type { SnapshotStore } from "../session/store.ts";
import type { CapabilityKey, Hello, Rect } from "../wire/messages.ts";
import type { Safety } from "./safety.ts";

/** The helper of this process and what it said it can do. */
export interface HelperSession {
  supervisor: Supervisor;
  hello: Hello;
}

/** Stage "helper resolution": the helper, found and started on first use. */
export interface HelperPort {
  helper(): Promise<HelperSession>;
}

/** The cancellation signal of the command running here, if any (a wait ends with it). */
export interface CancelSignal {
  readonly cancelSignal: AbortSignal | undefined;
}

/** Running code under a cancellation, or outside any (Engine.withCancel). */
export interface CancelScope extends CancelSignal {
  withCancel<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T>;
  withoutCancel<T>(fn: () => Promise<T>): Promise<T>;
}

/** Mutations on one target, one after the other (serve pipelines requests). */
export interface SerialPort {
  serialized<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

/** Snapshots, screenshot files, and the fields remembered secure across commands (src/session/store.ts). */
export interface StorePort {
  readonly store: SnapshotStore;
}

/** The safety seam (src/engine/safety.ts): every policy, confirm and audit decision goes through it. */
export interface SafetyPort {
  readonly safety: Safety;
}

/** The environment the engine was started with (the snapshot TTL, the pause flag's state dir). */
export interface EnvPort {
  readonly env: NodeJS.ProcessEnv;
}

/**
 * Gating permission checks the helper reported as `unknown` at this
 * process's permission gate (src/commands/index.ts permissionGate): a request
 * that then fails with PERMISSION_DENIED is PERMISSION_UNVERIFIED instead.
 */
export interface PermissionsPort {
  permissionsUnknown: string[];
}

/**
 * What a long operation is doing now, for a person watching a terminal: the
 * one-shot CLI draws it as one line on stderr when stderr is a TTY
 * (src/cli/progress.ts). Never part of a result, a log or an envelope; it
 * names actions and apps only, never a value typed or pasted.
 */
export type ProgressEvent =
  /** A program's step starts (index from 0). */
  | { kind: "step"; index: number; total: number; action: string }
  /** After the last step: waiting for the app's events to quiesce. */
  | { kind: "settle" }
  /** After the last step: the program's final observation. */
  | { kind: "observe" }
  /** An accessibility tree is being read (shown only when it takes a while). */
  | { kind: "tree"; app: string }
  /** The operator's confirm hook runs now: it may prompt on the same terminal, so the line is erased until the next event. */
  | { kind: "confirm" };

/** Where progress goes; absent when nobody watches (serve, MCP, a pipe, a test's engine). */
export interface ProgressPort {
  readonly progress?: (event: ProgressEvent) => void;
}

/** How the screenshots of the command running here are cropped and scaled (Engine.withScreenshotOptions). */
export interface ScreenshotScope {
  readonly screenshotOptions: ScreenshotOptions | undefined;
}

export interface ImageSize {
  width: number;
  height: number;
}

/**
 * A width chosen for what is captured (the vendor adapters' and MCP's image
 * caps), and a check of the PNG the helper wrote.
 */
export interface WidthPlan {
  /** max_width for a capture of `area` (screen pixels; null when not known before the capture: a first whole-screen shot). */
  widthFor(area: ImageSize | null): number;
  /** Does a PNG of this size do? If not it is taken once more, its width chosen for the area the first one showed. */
  fits(size: ImageSize): boolean;
}

/**
 * How the helper crops and scales a screenshot (capability screenshot.scale).
 * The PNG it writes is what the result describes: its width, height, origin
 * and scale (image pixel i shows screen point origin + i / scale).
 */
export interface ScreenshotOptions {
  /** Crop to this screen rectangle, clipped to the window (the op's `region`). */
  region?: Rect;
  /** Scale down (never up, aspect kept) to at most this many pixels wide (the op's `max_width`), or a plan that picks it. */
  maxWidth?: number | WidthPlan;
  /**
   * A helper without screenshot.scale then captures at its own size (the
   * caller checks what it got: MCP attaches only an image inside its caps);
   * otherwise the screenshot fails ACTION_UNSUPPORTED. Never drops `format`.
   */
  ifSupported?: boolean;
  // ---- issue 14: screenshot options
  /** The file's format (the op's `format`, capability screenshot.formats for jpeg and webp); default png. */
  format?: "png" | "jpeg" | "webp";
  /** JPEG / WebP quality 1-100 (the op's `quality`; the helper's default 80). */
  quality?: number;
  // ---- end screenshot options
}

/** Stage "action support": refuse before dispatch what the helper lacks. */
export function requireCapability(hello: Hello, key: CapabilityKey, what: string): void {
  const cap = hello.capabilities[key];
  if (!cap?.supported) {
    throw new DeckhandError("ACTION_UNSUPPORTED", `${what} is not supported by helper ${hello.helper.name} ${hello.helper.version}`, {
      details: { capability: key, helper: hello.helper.name },
    });
  }
}
