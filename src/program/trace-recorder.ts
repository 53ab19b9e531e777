// Recording a trace of programs (issue 16; the format is src/protocol/trace.ts).
// The executor calls a ProgramTrace at the program's start, after each step
// and at its end; each capture is one screenshot (scaled down, JPEG when the
// helper can) and one tree read of the target window, so tracing costs the
// target app a bounded amount of work: two helper reads per step, each under
// its deadline, and nothing at all when no trace was asked for.
//
// Secrets: a step's secret field is written as its length, error text is
// scrubbed of every secret the program carries, tree lines come from the
// helper (which never reads a secure field's value), and images are taken
// with the same redaction as every screenshot (secure fields and remembered
// secure rectangles blacked out by the helper).
import { createHash } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Step } from "../protocol/program.ts";
import { DeckhandError, publicError } from "../protocol/errors.ts";
import { declOf, stepSecret } from "../protocol/actions.ts";
import { scrubText, secretsOf } from "../protocol/scrub.ts";
import { TRACE_FILE, TRACE_FORMAT_VERSION, TRACE_IMAGE_DIR, TRACE_LIMITS } from "../protocol/trace-limits.ts";
import type { TraceDecision, TraceEvent, TraceImage, TraceMarks, TraceTreeDiff } from "../protocol/trace.ts";
import { buildTree, locatorKindOf, windowKeyOf } from "../session/snapshot.ts";
import type { Hello, WireNode } from "../wire/messages.ts";
import { captureWindow, rememberedSecureRects, rememberedSecureRectsIn, type Observer } from "../engine/observe.ts";
import type { ResolvedApp } from "../engine/resolve.ts";
import { VERSION } from "../version.ts";
import type { Plan } from "./plan.ts";

export type TraceMode = "cli" | "serve" | "mcp";

/** What the engine offers a trace: its directory and mode (operator options `--trace DIR`). */
export interface TracePort {
  readonly traceDir?: string;
  readonly traceMode?: TraceMode;
}

type Capture = { image: TraceImage | { missing: string } | null; lines: string[] | null };

/**
 * One trace directory's writer, shared by every program of a process (a
 * serve session appends its requests to one file): program ids, the image
 * budget and the session line are per directory.
 */
class TraceWriter {
  private programs = 0;
  private imageBytes = 0;
  private started = false;
  private readonly known = new Set<string>();
  private fileBytes = 0;
  private full = false;
  private readonly maxFileBytes = traceFileLimit();

  constructor(
    readonly dir: string,
    private readonly mode: TraceMode,
  ) {}

  private open(helper: string | null): void {
    if (this.started) return;
    // A directory deckhand creates is 0700 (a umask only removes bits); an
    // existing one (`--trace /tmp/x`, the operator's) keeps its mode: every
    // file written in it is 0600 whatever the directory allows.
    mkdirSync(join(this.dir, TRACE_IMAGE_DIR), { recursive: true, mode: 0o700 });
    // An existing trace's images count against the budget (and are reused: same bytes, same name).
    for (const f of readdirSync(join(this.dir, TRACE_IMAGE_DIR))) {
      try {
        this.imageBytes += statSync(join(this.dir, TRACE_IMAGE_DIR, f)).size;
      } catch {
        /* gone meanwhile */
      }
    }
    try {
      const file = join(this.dir, TRACE_FILE);
      if (existsSync(file)) {
        this.fileBytes = statSync(file).size;
        const prior = readFileSync(file, "utf8").match(/"id":"p(\d+)"/g) ?? [];
        this.programs = prior.reduce((max, m) => Math.max(max, Number(m.slice(7, -1))), 0);
      }
    } catch {
      /* an unreadable old trace: new ids may repeat; the viewer shows both */
    }
    this.started = true;
    this.append({ type: "session", version: TRACE_FORMAT_VERSION, mode: this.mode, deckhand: VERSION, helper, startedAt: new Date().toISOString(), pid: process.pid });
  }

  append(event: TraceEvent): void {
    if (this.full) return;
    const line = JSON.stringify(event) + "\n";
    const bytes = Buffer.byteLength(line);
    if (this.fileBytes + bytes > this.maxFileBytes) {
      this.full = true;
      process.stderr.write(`deckhand: trace: ${join(this.dir, TRACE_FILE)} reached ${this.maxFileBytes} bytes; nothing more is recorded in it\n`);
      return;
    }
    // One write per event: a crash leaves at most a torn last line (the viewer skips it).
    appendFileSync(join(this.dir, TRACE_FILE), line, { mode: 0o600 });
    this.fileBytes += bytes;
  }

  nextProgram(helper: string | null): string {
    this.open(helper);
    return `p${++this.programs}`;
  }

  /** Store an image file under img/<hash>, once per content; null when the budget is spent. */
  storeImage(path: string, ext: string): string | { missing: string } {
    const bytes = readFileSync(path);
    rmSync(path, { force: true });
    const name = `${TRACE_IMAGE_DIR}/${createHash("sha256").update(bytes).digest("hex").slice(0, 32)}.${ext}`;
    if (this.known.has(name) || existsSync(join(this.dir, name))) {
      this.known.add(name);
      return name;
    }
    if (this.imageBytes + bytes.length > TRACE_LIMITS.maxImageBytes) return { missing: `the trace's image budget (${TRACE_LIMITS.maxImageBytes} bytes) is spent` };
    writeFileSync(join(this.dir, name), bytes, { mode: 0o600 });
    this.imageBytes += bytes.length;
    this.known.add(name);
    return name;
  }
}

/** trace.jsonl's bound: TRACE_LIMITS, or the operator's lower DECKHAND_TRACE_MAX_BYTES. */
function traceFileLimit(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.DECKHAND_TRACE_MAX_BYTES);
  return Number.isInteger(n) && n > 0 ? Math.min(n, TRACE_LIMITS.maxTraceFileBytes) : TRACE_LIMITS.maxTraceFileBytes;
}

const writers = new Map<string, TraceWriter>();
let captures = 0;

function writerFor(port: TracePort): TraceWriter | null {
  if (!port.traceDir) return null;
  let w = writers.get(port.traceDir);
  if (!w) writers.set(port.traceDir, (w = new TraceWriter(port.traceDir, port.traceMode ?? "cli")));
  return w;
}

/** A step as recorded: its secret field as a length. */
export function traceStep(step: Step): Record<string, unknown> {
  const out: Record<string, unknown> = { ...step };
  const field = declOf(step.action).secret;
  if (field !== undefined && typeof out[field] === "string") out[field] = { redacted: true, length: [...(out[field] as string)].length };
  for (const k of Object.keys(out)) if (k.endsWith("Stdin")) delete out[k];
  return out;
}

/** What a step aimed at, in screen coordinates, read off its plan. */
export function marksOf(plan: Plan | null): TraceMarks {
  const marks: TraceMarks = { points: [], path: [], box: null };
  if (!plan) return marks;
  const centre = (b: { x: number; y: number; width: number; height: number }) => ({ x: b.x + b.width / 2, y: b.y + b.height / 2 });
  if (plan.kind === "element") {
    marks.box = plan.element.bounds ?? null;
    if (plan.action === "click" && plan.element.bounds) marks.points.push({ ...centre(plan.element.bounds), kind: "click" });
  } else if (plan.kind === "point") {
    marks.points.push({ x: plan.x, y: plan.y, kind: "click" });
  } else if (plan.kind === "paste") {
    marks.box = plan.element?.bounds ?? null;
  } else if (plan.kind === "input") {
    if (plan.ocr?.bounds) marks.box = plan.ocr.bounds;
    let at: { x: number; y: number } | null = null;
    let down = false;
    for (const s of plan.steps) {
      if (s.kind === "move") {
        at = { x: s.x, y: s.y };
        if (down) marks.path.push(at);
        else marks.points.push({ ...at, kind: "move" });
      } else if (s.kind === "click") {
        marks.points.push({ x: s.x, y: s.y, kind: "click" });
      } else if (s.kind === "button" && at) {
        down = s.down;
        if (s.down) marks.path.push(at);
        marks.points.push({ ...at, kind: s.down ? "press" : "release" });
      } else if (s.kind === "scroll") {
        const p = s.x !== null && s.y !== null ? { x: s.x, y: s.y } : at;
        if (p) marks.points.push({ ...p, kind: "scroll" });
      }
    }
    // A plain move before a click at the same place says nothing more.
    marks.points = marks.points.filter((p, i, all) => p.kind !== "move" || !all.some((q, j) => j > i && q.kind !== "move" && q.x === p.x && q.y === p.y));
    if (marks.path.length < 2) marks.path = [];
  }
  return marks;
}

/**
 * The lines of two tree reads that differ, in order: a common head and tail
 * are skipped, the rest compared as multisets (a moved line is unchanged).
 * Lines carry no element indices (two reads number elements apart).
 */
export function diffLines(before: string[], after: string[]): TraceTreeDiff {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (tail < before.length - head && tail < after.length - head && before[before.length - 1 - tail] === after[after.length - 1 - tail]) tail++;
  const midBefore = before.slice(head, before.length - tail);
  const midAfter = after.slice(head, after.length - tail);
  const count = new Map<string, number>();
  for (const l of midBefore) count.set(l, (count.get(l) ?? 0) + 1);
  const added: string[] = [];
  for (const l of midAfter) {
    const n = count.get(l) ?? 0;
    if (n > 0) count.set(l, n - 1);
    else added.push(l);
  }
  const removed: string[] = [];
  for (const l of midBefore) {
    const n = count.get(l) ?? 0;
    if (n > 0) {
      removed.push(l);
      count.set(l, n - 1);
    }
  }
  const max = TRACE_LIMITS.maxDiffLines;
  return {
    added: added.slice(0, max),
    removed: removed.slice(0, max),
    unchanged: before.length - removed.length,
    truncated: added.length > max || removed.length > max,
  };
}

/** Which rule decided: a refusal names its own (builtin:secure_field...), else the app's decision. */
function refusalSource(err: unknown, app: { source: string | null; rule: string | null }): { source: string | null; rule: string | null } {
  const d = err instanceof DeckhandError ? err.details : {};
  return typeof d.rule === "string" ? { source: typeof d.source === "string" ? d.source : null, rule: d.rule } : app;
}

/** The step's policy verdict for the trace. */
export function decisionOf(opts: { reached: boolean; source: string | null; rule: string | null; error: { code: string; remediation: string } | null }): TraceDecision {
  const refused = opts.error !== null && /POLICY|CONFIRM|BLOCKED|FOREGROUND|PAUSED/.test(opts.error.code);
  return {
    verdict: refused ? "deny" : opts.reached ? "allow" : "not-reached",
    source: opts.source,
    rule: opts.rule,
    code: refused ? opts.error!.code : null,
    remediation: refused ? opts.error!.remediation : null,
  };
}

type Engine = Observer & TracePort;

/**
 * The quiet window before a step's "after" capture: shorter than the final
 * observation's (SETTLE_QUIET_MS, executor.ts), since the trace waits after
 * every step; an image taken a frame early shows the step's effect on the
 * next step's "after" anyway (measured: bench/README.md, issue 16).
 */
const TRACE_SETTLE_QUIET_MS = 40;

/** One program's trace; every method swallows its own failures (a trace never fails a program). */
export class ProgramTrace {
  private readonly secrets: string[];
  private readonly started = Date.now();
  private id: string | null = null;
  private app: ResolvedApp | null = null;
  private windowId: number | null = null;
  private last: Capture = { image: null, lines: null };
  private stepStarted = 0;
  private stepStartedAt = "";
  private platform: Hello["helper"]["platform"] = "linux";

  constructor(
    private readonly engine: Engine,
    private readonly writer: TraceWriter,
    private readonly command: string,
    private readonly steps: readonly Step[],
  ) {
    this.secrets = secretsOf(steps.map(stepSecret));
  }

  private scrub(s: string): string {
    return scrubText(s, this.secrets);
  }

  private errorOf(err: unknown): { code: string; message: string; remediation: string } {
    const { code, message, remediation } = publicError(err, () => {});
    return { code, message: this.scrub(message), remediation: this.scrub(remediation) };
  }

  private async helperName(): Promise<string | null> {
    try {
      const { hello } = await this.engine.helper();
      this.platform = hello.helper.platform;
      return `${hello.helper.name} ${hello.helper.version} (${hello.helper.platform}, ${hello.helper.backend})`;
    } catch {
      return null;
    }
  }

  /** The window's image and tree lines now (each bounded by its helper deadline; failures recorded, not thrown). */
  private async capture(): Promise<Capture> {
    const app = this.app;
    const windowId = this.windowId;
    if (!app || !windowId) return { image: { missing: "no target window" }, lines: null };
    // Where the store remembers secure fields, the image's redaction needs the tree: read it first
    // (one read for both); elsewhere the two run together.
    if (this.engine.store.secureLocators(windowKeyOf(app, windowId)).length) {
      const nodes = await this.tree(app, windowId);
      const image = await this.image(app, windowId, nodes);
      return { image, lines: nodes && this.linesOf(nodes) };
    }
    const [nodes, image] = await Promise.all([this.tree(app, windowId), this.image(app, windowId, [])]);
    return { image, lines: nodes && this.linesOf(nodes) };
  }

  private async image(app: ResolvedApp, windowId: number, nodes: WireNode[] | null): Promise<TraceImage | { missing: string }> {
    try {
      const { hello } = await this.engine.helper();
      const jpeg = hello.capabilities["screenshot.formats"]?.supported === true;
      const redact = nodes ? rememberedSecureRectsIn(this.engine, app, windowId, nodes) : await rememberedSecureRects(this.engine, app, windowId);
      // A name of its own per capture: a serve session traces programs on several apps at once.
      const shot = await captureWindow(this.engine, windowId, `trace-${process.pid}-${++captures}`, redact, {
        maxWidth: TRACE_LIMITS.imageMaxWidth,
        ifSupported: true,
        ...(jpeg ? { format: "jpeg" as const, quality: TRACE_LIMITS.jpegQuality } : {}),
      });
      if (!shot.screenshot) return { missing: `${shot.screenshotError?.code ?? "SCREENSHOT_FAILED"}: ${this.scrub(shot.screenshotError?.message ?? "no image")}` };
      const s = shot.screenshot;
      const file = this.writer.storeImage(s.path, s.format === "jpeg" ? "jpg" : "png");
      if (typeof file !== "string") return file;
      return { file, width: s.width, height: s.height, origin: s.origin, scale: s.scale, redacted: s.redacted };
    } catch (err) {
      return { missing: this.errorOf(err).message };
    }
  }

  private async tree(app: ResolvedApp, windowId: number): Promise<WireNode[] | null> {
    if (!app.accessible) return null;
    try {
      const { supervisor, hello } = await this.engine.helper();
      if (!hello.capabilities.get_tree?.supported) return null;
      const { result } = await supervisor.request("get_tree", { pid: app.pid, window_id: windowId, max_depth: 64, max_children: 1000, max_nodes: TRACE_LIMITS.maxTreeLines });
      return result.nodes as WireNode[];
    } catch {
      return null;
    }
  }

  /** The compact tree's lines, without element indices (two reads number elements apart), secrets scrubbed. */
  private linesOf(nodes: WireNode[]): string[] {
    const built = buildTree(nodes, locatorKindOf(this.platform));
    return built.nodes.filter((n) => n.k !== undefined).map((n) => this.scrub("  ".repeat(n.k!) + n.t));
  }

  /** The target is known (app resolved, window chosen): the program line and the first image. */
  async begin(app: ResolvedApp, windowId: number | null, snapshotId: string | null): Promise<void> {
    try {
      this.app = app;
      this.windowId = windowId;
      this.id = this.writer.nextProgram(await this.helperName());
      this.last = await this.capture();
      this.writer.append({
        type: "program",
        id: this.id,
        command: this.command,
        app: { name: app.name, pid: app.pid },
        windowId,
        snapshotId,
        startedAt: new Date(this.started).toISOString(),
        steps: this.steps.map(traceStep),
        before: this.last.image,
      });
    } catch (err) {
      process.stderr.write(`deckhand: trace: ${(err as Error).message}\n`);
    }
  }

  stepStart(): void {
    this.stepStarted = performance.now();
    this.stepStartedAt = new Date().toISOString();
  }

  /**
   * A step ended (or was refused): its line, with the window after it. A
   * step that sent nothing changed nothing: its "after" is its "before",
   * and no capture is taken.
   */
  async stepEnd(e: {
    index: number;
    step: Step;
    plan: Plan | null;
    receipt: { status: "completed" | "failed" | "unattempted"; delivery: string };
    reached: boolean;
    decision: { source: string | null; rule: string | null };
    error: unknown;
  }): Promise<void> {
    if (!this.id) return;
    try {
      const durationMs = Math.round((performance.now() - this.stepStarted) * 10) / 10;
      const error = e.error === null || e.error === undefined ? null : this.errorOf(e.error);
      const sent = e.receipt.delivery !== "not_dispatched";
      let after: Capture = this.last;
      let treeDiff: TraceTreeDiff | null = null;
      if (sent && e.step.action !== "wait") {
        await this.settle();
        after = await this.capture();
        if (this.last.lines && after.lines) treeDiff = diffLines(this.last.lines, after.lines);
      }
      this.writer.append({
        type: "step",
        program: this.id,
        index: e.index,
        action: e.step.action,
        request: traceStep(e.step),
        status: e.receipt.status,
        decision: decisionOf({ reached: e.reached, ...refusalSource(e.error, e.decision), error }),
        receipt: JSON.parse(this.scrub(JSON.stringify(e.receipt))) as Record<string, unknown>,
        error,
        startedAt: this.stepStartedAt,
        durationMs,
        marks: marksOf(e.plan),
        after: after.image,
        treeDiff,
      });
      this.last = after;
    } catch (err) {
      process.stderr.write(`deckhand: trace: ${(err as Error).message}\n`);
    }
  }

  /** A step not attempted (an earlier one failed): its line, without captures. */
  unattempted(index: number, step: Step, receipt: object): void {
    if (!this.id) return;
    try {
      this.writer.append({
        type: "step",
        program: this.id,
        index,
        action: step.action,
        request: traceStep(step),
        status: "unattempted",
        decision: decisionOf({ reached: false, source: null, rule: null, error: null }),
        receipt: JSON.parse(this.scrub(JSON.stringify(receipt))) as Record<string, unknown>,
        error: null,
        startedAt: new Date().toISOString(),
        durationMs: 0,
        marks: { points: [], path: [], box: null },
        after: null,
        treeDiff: null,
      });
    } catch (err) {
      process.stderr.write(`deckhand: trace: ${(err as Error).message}\n`);
    }
  }

  /** Let the app show what the step did before the "after" capture (the helper's bounded settle). */
  private async settle(): Promise<void> {
    try {
      const { supervisor, hello } = await this.engine.helper();
      if (!this.app || !hello.capabilities.settle?.supported) return;
      await supervisor.request("settle", { pid: this.app.pid, quiet_ms: TRACE_SETTLE_QUIET_MS, max_ms: 300 });
    } catch {
      /* the capture is taken anyway */
    }
  }

  /** The program ended: its outcome line. A program refused before its target was known gets its program line here. */
  end(e: { firstFailure: number | null; error: unknown; settle: { waitedMs: number; events: number; settled: boolean } | null; observationError: { code: string; message: string } | null; selector?: string }): void {
    try {
      if (!this.id) {
        this.id = this.writer.nextProgram(null);
        this.writer.append({
          type: "program",
          id: this.id,
          command: this.command,
          app: { name: this.app?.name ?? this.scrub(e.selector ?? "?"), pid: this.app?.pid ?? 0 },
          windowId: this.windowId,
          snapshotId: null,
          startedAt: new Date(this.started).toISOString(),
          steps: this.steps.map(traceStep),
          before: null,
        });
      }
      this.writer.append({
        type: "program-end",
        program: this.id,
        firstFailure: e.firstFailure,
        error: e.error === null || e.error === undefined ? null : this.errorOf(e.error),
        durationMs: Date.now() - this.started,
        settle: e.settle,
        observationError: e.observationError ? { code: e.observationError.code, message: this.scrub(e.observationError.message) } : null,
      });
    } catch (err) {
      process.stderr.write(`deckhand: trace: ${(err as Error).message}\n`);
    }
  }
}

/** A trace of this program, or null when the engine records none. */
export function traceProgram(engine: Engine, command: string, steps: readonly Step[]): ProgramTrace | null {
  const writer = writerFor(engine);
  return writer ? new ProgramTrace(engine, writer, command, steps) : null;
}

/**
 * A program refused before it ran (validation: an unsupported action, a
 * foreground step without the grant; the pause; the permission gate; the
 * target's resolution): its program and program-end lines, so a trace shows
 * every program an agent asked for, refused ones too.
 */
export function traceRefused(engine: Engine, command: string, program: { app: string; steps: readonly Step[] }, err: unknown): void {
  traceProgram(engine, command, program.steps)?.end({ firstFailure: null, error: err, settle: null, observationError: null, selector: program.app });
}
