// Where the platform helper binary comes from, in order: --helper PATH,
// DECKHAND_HELPER, beside the deckhand executable, the repo's build output.
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DeckhandError } from "../protocol/errors.ts";

export const HELPER_NAMES: Record<string, string> = {
  linux: "deckhand-helper-linux",
  darwin: "deckhand-helper-macos",
  win32: "deckhand-helper-windows.exe",
};

export type HelperSource = "flag" | "env" | "beside-executable" | "repo-build";

export interface HelperLocation {
  path: string;
  source: HelperSource;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    // A directory is "executable" (searchable) too, but cannot be spawned.
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The repo root, found from this module's location (works from src/ and in tests). */
function repoRoot(): string | null {
  try {
    const here = dirname(fileURLToPath(import.meta.url));
    const root = resolve(here, "..", "..");
    return existsSync(join(root, "package.json")) ? root : null;
  } catch {
    return null;
  }
}

export function discoverHelper(opts: {
  flag?: string;
  env?: NodeJS.ProcessEnv;
  platform?: string;
  execPath?: string;
}): HelperLocation {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const name = HELPER_NAMES[platform];
  const explicit: [string | undefined, HelperSource][] = [
    [opts.flag, "flag"],
    [env.DECKHAND_HELPER, "env"],
  ];
  for (const [path, source] of explicit) {
    if (!path) continue;
    if (!isExecutable(path)) {
      throw new DeckhandError("HELPER_UNAVAILABLE", `helper from ${source} is not an executable file`, {
        details: { source, path },
      });
    }
    return { path: resolve(path), source };
  }
  if (!name) {
    throw new DeckhandError("UNSUPPORTED_PLATFORM", `no helper exists for platform ${platform}`, {
      details: { platform },
    });
  }
  const candidates: [string, HelperSource][] = [];
  const execPath = opts.execPath ?? process.execPath;
  // A compiled deckhand ships with its helper next to it; node/bun themselves do not.
  if (!/\/(node|bun)$/.test(execPath)) candidates.push([join(dirname(execPath), name), "beside-executable"]);
  const root = repoRoot();
  if (root) {
    candidates.push([join(root, "dist", name), "repo-build"]);
    candidates.push([join(root, "helpers", "linux-rust", "target", "release", name), "repo-build"]);
  }
  for (const [path, source] of candidates) if (isExecutable(path)) return { path, source };
  throw new DeckhandError("HELPER_UNAVAILABLE", `helper ${name} not found`, {
    details: { searched: candidates.map(([p]) => p).join(":") },
  });
}
