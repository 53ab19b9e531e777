// `deckhand mcp`: a stdio MCP server (official TypeScript SDK). One tool per
// command, inputs validated by the same zod schemas as the CLI and serve,
// results as structured content (the deckhand envelope, advertised as each
// tool's outputSchema from src/protocol/results.ts) plus a short text
// summary, screenshots as image content: taken by the helper already
// scaled to fit the image caps (screenshot.scale), so the result describes
// the very PNG attached. stdout is the protocol: every
// diagnostic goes to stderr. Operator flags (--allow-foreground, --helper,
// --confirm-cmd, --policy) are set on the command line, never by a tool.
// Operator-only commands (`resume`, `desktop`) are no tools: a client may
// `pause`, never lift a pause.
import { readFileSync } from "node:fs";
import { z } from "zod";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { ARGS, COMMAND_SUMMARY, type CommandName } from "../protocol/commands.ts";
import { ACTION_COMMANDS, declOf, stdinField, type ActionCommandName } from "../protocol/actions.ts";
import { mcpOutputSchema } from "../protocol/results.ts";
import { programSchema, stepSchema } from "../protocol/program.ts";
import { parseSessionFlags } from "../frontend/session-flags.ts";
import { DeckhandError } from "../protocol/errors.ts";
import { runProgramValue } from "../commands/index.ts";
import type { Engine, OperatorOptions } from "../engine/engine.ts";
import { openEngine } from "../frontend/engine.ts";
import { Cancellation, type ProgramReceipt } from "../program/executor.ts";
import type { ScreenshotInfo } from "../session/snapshot.ts";
import type { ScreenshotOptions } from "../engine/ports.ts";
import { fail, ok, type Envelope } from "../frontend/envelope.ts";
import { humanOutput } from "../frontend/human.ts";
import { runCommand } from "../frontend/run-command.ts";
import { VERSION } from "../version.ts";
import { adapterFit, fitsCaps, imagePlan, makeMap, type FitOptions } from "./coords.ts";

const log = (m: string) => process.stderr.write(`deckhand mcp: ${m}\n`);

export interface McpOptions extends OperatorOptions, FitOptions {}

export interface McpTool {
  name: string;
  /** The deckhand command it runs ("run" for run_program). */
  command: CommandName;
  schema: z.ZodObject;
  /** What its structuredContent is: the command's envelope (RESULTS[command] or an Error) plus the image's map. */
  outputSchema: ReturnType<typeof mcpOutputSchema>;
  description: string;
  readOnly: boolean;
}

/**
 * Program for MCP clients: steps as a plain union, so its JSON Schema is
 * anyOf (clients that forward tool schemas to OpenAI reject oneOf). The
 * executor validates the program again with the canonical schema.
 */
export const McpProgram = z.strictObject({ ...programSchema().shape, steps: z.array(z.union(stepSchema().options)).min(1).max(100) });

/**
 * An action command's tool input: its ARGS, with a secret field's stdin flag
 * dropped and the field itself required as the step declares it (MCP has no
 * stdin; the value travels in the request).
 */
function actionToolSchema(command: ActionCommandName): z.ZodObject {
  const decl = declOf(command);
  const args = ARGS[command] as z.ZodObject;
  if (decl.secret === undefined) return args;
  const drop = { [stdinField(decl.secret)]: true } as Parameters<typeof args.omit>[0];
  return args.omit(drop).extend({ [decl.secret]: decl.step[decl.secret]! });
}

/**
 * The tools, derived from ARGS and the action declarations (one tool per
 * action command, src/protocol/actions.ts): nothing is written twice by hand.
 */
export const MCP_TOOLS: readonly McpTool[] = (() => {
  const tool = (name: string, command: CommandName, schema: z.ZodObject, readOnly: boolean, description = COMMAND_SUMMARY[command]): McpTool => ({
    name,
    command,
    schema,
    outputSchema: mcpOutputSchema(command),
    description,
    readOnly,
  });
  return [
    tool("capabilities", "capabilities", ARGS.capabilities, true),
    tool("permissions", "permissions", ARGS.permissions, true),
    tool("list_apps", "list-apps", ARGS["list-apps"], true),
    tool("list_windows", "list-windows", ARGS["list-windows"], true),
    tool("get_app_state", "get-app-state", ARGS["get-app-state"], true),
    tool("screenshot", "screenshot", ARGS.screenshot, true),
    ...ACTION_COMMANDS.map((c) => tool(c.replaceAll("-", "_"), c, actionToolSchema(c), false)),
    tool("run_program", "run", McpProgram, false, "Run a program: one target app, 1-100 steps validated before any runs, per-step receipts, one final observation."),
    // Issue 13: app lifecycle, clipboard, menus. An MCP client has no stdin
    // of deckhand's: the clipboard text travels in `text`, never --text-stdin.
    tool("launch", "launch", ARGS.launch, false),
    tool("activate", "activate", ARGS.activate, false),
    tool("quit", "quit", ARGS.quit, false),
    tool("clipboard_get", "clipboard-get", ARGS["clipboard-get"], true),
    tool("clipboard_set", "clipboard-set", ARGS["clipboard-set"].omit({ textStdin: true }), false),
    // Not read-only: with an element it opens that element's context menu.
    tool("menu_list", "menu-list", ARGS["menu-list"], false),
    tool("menu_click", "menu-click", ARGS["menu-click"], false),
    // Stopping is always allowed; lifting a pause (`resume`) is operator-only and is no tool.
    tool("pause", "pause", ARGS.pause, false, `${COMMAND_SUMMARY.pause} Only the operator can resume.`),
  ];
})();

type Any = Record<string, any>;

// ---- issue 14: screenshot options
/** The MIME type of each screenshot format (ScreenshotInfo.format). */
export const MIME_TYPE: Readonly<Record<ScreenshotInfo["format"], string>> = Object.freeze({ png: "image/png", jpeg: "image/jpeg", webp: "image/webp" });
// ---- end screenshot options

/** Screenshots a result carries: a screenshot's, a snapshot's, or an action's fresh observation's. */
function screenshotOf(command: CommandName, result: Any): ScreenshotInfo | null {
  if (!result || typeof result !== "object") return null;
  // ---- issue 14: set-of-marks: asked for (marks: true), the marked image is attached instead (same size and map)
  if ((command === "screenshot" || command === "get-app-state") && result.marks) return result.marks;
  // ---- end set-of-marks
  if (command === "screenshot" || command === "get-app-state") return result.screenshot ?? null;
  return result.observation?.screenshot ?? null;
}

function summary(command: CommandName, env: Envelope): string {
  if (!env.ok) return `${env.error.code}: ${env.error.message}\nhint: ${env.error.remediation}`;
  const r = env.result as Any;
  if (command === "run") {
    const p = r as ProgramReceipt;
    const done = p.steps.filter((s) => s.status === "completed").length;
    const head = `program on ${p.app.name} (pid ${p.app.pid}): ${done}/${p.steps.length} steps completed`;
    const failure = p.firstFailure !== null ? `\nstep ${p.firstFailure} failed: ${p.steps[p.firstFailure]!.error?.code}: ${p.steps[p.firstFailure]!.error?.message}` : "";
    const obs = p.observation ? `\n\nnew snapshot ${p.observation.snapshot.snapshotId}\n${p.observation.snapshot.treeText}` : "";
    return head + failure + obs;
  }
  const text = humanOutput(command, r);
  if (r && typeof r === "object" && r.observation?.snapshot?.treeText && command !== "get-app-state") return `${text}\n\n${r.observation.snapshot.treeText}`;
  return text;
}

export async function toolResult(command: CommandName, env: Envelope, fit: FitOptions) {
  const head = { type: "text" as const, text: summary(command, env) };
  const content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string })[] = [head];
  const structured: Any = { ...env };
  const shot = env.ok ? screenshotOf(command, env.result as Any) : null;
  if (shot) {
    try {
      // The same caps as the vendor adapters (width, longest side, area): a client model never rescales it.
      // The helper scaled it (the command ran with imagePlan); one that cannot scale is attached only when it fits as it is.
      if (!fitsCaps(shot, adapterFit(fit))) {
        throw new Error(`the ${shot.width}x${shot.height} image is over the image caps, and the helper cannot scale screenshots (screenshot.scale)`);
      }
      // issue 14: the file's own format (--image-format jpeg / webp of screenshot and get-app-state).
      content.push({ type: "image", data: readFileSync(shot.path).toString("base64"), mimeType: MIME_TYPE[shot.format ?? "png"] });
      const map = makeMap(shot);
      structured.image = { width: shot.width, height: shot.height, origin: map.origin, scaleX: map.scaleX, scaleY: map.scaleY };
      // ---- issue 14: set-of-marks
      if ("count" in shot && env.ok) {
        const r = env.result as Any;
        head.text += `\nimage with ${shot.count} numbered boxes: each number is an element index of snapshot ${r.snapshotId ?? r.snapshot?.snapshotId}`;
      }
      // ---- end set-of-marks
      head.text += `\nimage ${shot.width}x${shot.height}: screen x = ${map.origin.x} + image x / ${+map.scaleX.toFixed(6)}, screen y = ${map.origin.y} + image y / ${+map.scaleY.toFixed(6)}`;
    } catch (err) {
      head.text += `\n(screenshot not attached: ${err instanceof Error ? err.message : String(err)})`;
    }
  }
  return { content, structuredContent: structured, isError: !env.ok };
}

export function createMcpServer(engine: Engine, fit: FitOptions = {}): McpServer {
  const server = new McpServer({ name: "deckhand", version: VERSION }, { capabilities: { tools: {} } });
  const images: ScreenshotOptions = { maxWidth: imagePlan(adapterFit(fit)), ifSupported: true };
  for (const t of MCP_TOOLS) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: t.schema, outputSchema: t.outputSchema, annotations: { readOnlyHint: t.readOnly, openWorldHint: false } },
      async (args: unknown, extra: { signal?: AbortSignal }) => {
        // The client's notifications/cancelled aborts extra.signal: every
        // helper request of the call gets a wire cancel, and a program stops.
        const cancel = new Cancellation(extra?.signal, "the MCP client cancelled the request");
        // An MCP client is an agent: operator-only commands are refused for it.
        const ctx = { cancel, caller: "mcp" as const };
        // Every screenshot the call takes is scaled by the helper to fit the image caps (when it can).
        const scoped = <T>(fn: () => Promise<T>) => engine.withCancel(cancel.signal, () => engine.withScreenshotOptions(images, fn));
        let env: Envelope;
        if (t.command === "run") {
          try {
            env = ok("run", await scoped(() => runProgramValue(engine, args, ctx)));
          } catch (err) {
            env = fail("run", err, log);
          }
        } else {
          env = await scoped(() => runCommand(engine, t.command, args, ctx, log));
        }
        return await toolResult(t.command, env, fit);
      },
    );
  }
  return server;
}

export function parseMcpArgs(argv: string[]): McpOptions {
  return parseSessionFlags(argv, "mcp", {} as McpOptions);
}

export const MCP_USAGE = [
  "Usage: deckhand mcp [--helper PATH] [--allow-foreground] [--confirm-cmd CMD] [--policy FILE] [--max-width N] [--max-side N] [--max-pixels N]",
  "",
  "An MCP server on stdio (JSON-RPC on stdout, diagnostics on stderr). Tools:",
  ...MCP_TOOLS.map((t) => `  ${t.name.padEnd(26)} ${t.description}`),
  "",
  "Operator flags are set here, never by a tool. See docs/adapters.md.",
].join("\n");

export async function mcpMain(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(MCP_USAGE + "\n");
    return 0;
  }
  let opts: McpOptions;
  let engine: Engine;
  try {
    opts = parseMcpArgs(argv);
    const session = `mcp-${process.pid}-${Date.now().toString(36)}`;
    engine = openEngine(opts, { sessionGrant: opts.allowForeground === true, session });
  } catch (err) {
    // Nothing on stdout: it belongs to the protocol even before a client speaks.
    const e = fail("mcp", err, log);
    log(`${e.error.code}: ${e.error.message}`);
    return 1;
  }
  const server = createMcpServer(engine, opts);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
    process.stdin.once("close", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  await engine.close();
  return 0;
}
