import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Live tests share one X display per file; keep files in separate forks
    // but not too many at once on a 2-core machine.
    pool: "forks",
    maxWorkers: 2,
  },
});
