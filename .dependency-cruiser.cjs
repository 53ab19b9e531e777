// The dependency rules of src/ (docs/layers.md), checked by dependency-cruiser:
// `npm run depcheck`, run by scripts/test.sh next to the type check. Type-only
// imports count like any other.
//
// TypeScript 7's package has no compiler API for dependency-cruiser: swc parses
// the TypeScript. Without it dependency-cruiser would fall back to a parser that
// cannot read TypeScript, so its absence fails here, loudly.
require.resolve("@swc/core");

// Layers, lowest first. A folder imports its own files and folders of lower
// layers only; folders of one layer do not import each other.
const LAYERS = [
  ["wire"], // the helper wire protocol
  ["protocol"], // the public contract: commands, results, errors, actions, who is asking
  ["session", "platform"], // snapshots and the state dir; host process facts
  ["policy", "audit"], // the safety rules; the audit log and the pause flag
  ["confirm"], // the confirm hook (reads the policy's [confirm])
  ["helpers", "desktop", "viewer"], // helper discovery and supervision; the private X11 desktop and the trace viewer (tools of their own)
  ["engine"], // the engine, its ports and the Safety seam
  ["program"], // planning and running a program
  ["commands"], // one handler per command
  ["frontend"], // what every front end shares: envelope, human output, session flags, run-command, the engine
  ["adapters"], // the vendor adapters and the MCP server
  ["cli"], // argv, serve and the dispatch to every other front end
];
// src/version.ts is below everything, src/main.ts above everything.

const folder = (names) => `^src/(${names.join("|")})/`;

const layerRules = LAYERS.flatMap((layer, i) => {
  const above = LAYERS.slice(i + 1).flat();
  const rules = [];
  if (above.length) {
    rules.push({
      name: `layer-${layer.join("-")}`,
      comment: `${layer.join(", ")} may not import a higher layer (${above.join(", ")}): docs/layers.md`,
      severity: "error",
      from: { path: folder(layer) },
      to: { path: folder(above) },
    });
  }
  for (const name of layer) {
    const siblings = layer.filter((n) => n !== name);
    if (!siblings.length) continue;
    rules.push({
      name: `layer-${name}-siblings`,
      comment: `${name} may not import ${siblings.join(", ")}, of its own layer: docs/layers.md`,
      severity: "error",
      from: { path: folder([name]) },
      to: { path: folder(siblings) },
    });
  }
  return rules;
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No import cycles between modules, type-only imports included.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: "policy-only-via-the-seam",
      comment:
        "Policy decisions are reached through the Safety seam (engine.safety), never by importing src/policy. " +
        "Allowed: the safety rules themselves (src/policy; src/confirm reads the [confirm] table), and the seam: " +
        "src/engine/safety.ts (the interface, the facts' types, the confirm decision's rules as Safety.confirmFacts) " +
        "and src/engine/default-safety.ts (the implementation).",
      severity: "error",
      from: { pathNot: ["^src/policy/", "^src/confirm/", "^src/engine/safety\\.ts$", "^src/engine/default-safety\\.ts$"] },
      to: { path: "^src/policy/" },
    },
    {
      name: "confirm-only-via-the-seam",
      comment: "The confirm hook runs only where the seam's implementation (src/engine/default-safety.ts) asks it to.",
      severity: "error",
      from: { pathNot: ["^src/confirm/", "^src/engine/default-safety\\.ts$"] },
      to: { path: "^src/confirm/" },
    },
    {
      name: "no-engine-class-below-commands",
      comment:
        "The engine's and the program's functions take the narrow ports they use (src/engine/ports.ts), never the whole Engine. " +
        "Allowed: src/engine/default-safety.ts reads the OperatorOptions type.",
      severity: "error",
      from: { path: "^src/(engine|program)/", pathNot: ["^src/engine/engine\\.ts$", "^src/engine/default-safety\\.ts$"] },
      to: { path: "^src/engine/engine\\.ts$" },
    },
    {
      name: "desktop-only-from-cli",
      comment: "The private desktop is a tool of its own: only the CLI dispatches to it.",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/desktop/", "^src/cli/"] },
      to: { path: "^src/desktop/" },
    },
    {
      name: "viewer-only-from-cli",
      comment: "The trace viewer is a tool of its own: only the CLI dispatches to it (`deckhand trace show`).",
      severity: "error",
      from: { path: "^src/", pathNot: ["^src/viewer/", "^src/cli/"] },
      to: { path: "^src/viewer/" },
    },
    {
      name: "main-is-the-entry",
      comment: "Nothing imports src/main.ts.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^src/main\\.ts$" },
    },
    {
      name: "no-src-to-test",
      comment: "The product never imports the tests.",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^test/" },
    },
    {
      name: "not-to-unresolvable",
      comment: "Every import resolves (a moved file leaves no dangling import behind).",
      severity: "error",
      from: { path: "^src/" },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    parser: "swc",
    tsPreCompilationDeps: true,
    doNotFollow: { path: "node_modules" },
    exclude: { path: "node_modules" },
    moduleSystems: ["es6", "cjs"],
    // Packages' "exports" maps (the MCP SDK's subpaths) as Node and Bun resolve them.
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default"], mainFields: ["module", "main"] },
  },
};
