// Every benchmark, one table each: `npm run bench` (after scripts/build.sh).
import { runCoreBench } from "./core.ts";
import { runLinuxBench } from "./linux.ts";
import { printTable } from "./stats.ts";

console.log(`# deckhand benchmarks (${new Date().toISOString()}, ${process.platform}, 2-core machine)\n`);
printTable("core: orchestrator overhead and cold start", await runCoreBench());
printTable("Linux: observation, actions, programs vs peers (same desktop, same run)", await runLinuxBench());
