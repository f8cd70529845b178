/**
 * `npm run bench -- <name> [<name> …]` runs the named benchmarks (bench/<name>.ts); no name lists them.
 * `BENCH_ROUNDS=N` overrides the rounds.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { type Benchmark, runBenchmark } from "./_harness.ts";

const dir = import.meta.dir;
const available = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.startsWith("_") && f !== "run.ts")
  .map((f) => f.slice(0, -3))
  .sort();

const names = process.argv.slice(2);
if (names.length === 0) {
  console.log(`benchmarks: ${available.join(", ")}\nusage: npm run bench -- <name> [<name> …]`);
  process.exit(0);
}
for (const name of names) {
  if (!available.includes(name)) {
    console.error(`unknown benchmark "${name}" (have: ${available.join(", ")})`);
    process.exit(2);
  }
  const mod = (await import(join(dir, `${name}.ts`))) as { default: Benchmark };
  await runBenchmark(mod.default);
}
