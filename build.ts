/**
 * Build the self-contained `freecode` executable.
 *
 *   bun build.ts                          dist/freecode for this machine
 *   bun build.ts --target bun-linux-arm64 dist/freecode-linux-arm64 (also darwin-arm64, darwin-x64,
 *                                         windows-x64, linux-x64-musl, linux-arm64-musl)
 *   bun build.ts --entry FILE --outfile F build another entry with the same flags (benchmarks)
 *
 * Flags that matter (reference/bun-engineering.md §1–2): the sql.js WASM is embedded through a
 * `type: "file"` import; `.env` and `bunfig.toml` in the user's directory are not auto-loaded;
 * source maps are embedded so stack traces name our `.ts` lines; bytecode (ESM) halves the time to
 * parse the bundle at startup.
 *
 * Cross targets: Bun downloads the target runtime from the npm registry. Offline, fetch it first with
 * `npm pack @oven/bun-linux-aarch64@<bun version>` (or @oven/bun-darwin-aarch64, @oven/bun-windows-x64,
 * …), unpack it, and pass `--executable package/bin/bun`.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    target: { type: "string" },
    entry: { type: "string", default: "src/cli/main.ts" },
    outfile: { type: "string" },
    executable: { type: "string" },
  },
});

const target = values.target as Bun.Build.CompileTarget | undefined;
const suffix = target ? `-${target.replace(/^bun-/, "")}` : "";
const outfile = values.outfile ?? `dist/freecode${suffix}${target?.includes("windows") ? ".exe" : ""}`;

const t0 = performance.now();
const result = await Bun.build({
  entrypoints: [values.entry!],
  compile: {
    outfile,
    ...(target ? { target } : {}),
    ...(values.executable ? { executablePath: values.executable } : {}),
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  minify: true,
  bytecode: true,
  format: "esm",
  sourcemap: "linked",
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
});

if (!result.success) {
  for (const message of result.logs) console.error(message);
  process.exit(1);
}
// The map is embedded in the executable; the linked copy beside it is not needed.
rmSync(`${outfile}.map`, { force: true });
const size = Bun.file(outfile).size;
console.error(
  `built ${outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${Math.round(performance.now() - t0)} ms`,
);
