/**
 * sql.js (SQLite compiled to WASM), with the WASM embedded in the compiled binary. The `type: "file"`
 * import makes `bun build --compile` embed the file and gives its `/$bunfs/...` path; passing the
 * bytes as `wasmBinary` avoids sql.js looking for the file next to the build machine's node_modules
 * (see reference/bun-engineering.md §1). Initialising costs ~60 ms: only code that needs it calls it.
 */
import initSqlJs, { type SqlJsStatic } from "sql.js";
import wasmPath from "sql.js/dist/sql-wasm.wasm" with { type: "file" };

let engine: Promise<SqlJsStatic> | undefined;

/** The sql.js module, initialised once per process. */
export function loadSqlJs(): Promise<SqlJsStatic> {
  engine ??= Bun.file(wasmPath)
    .arrayBuffer()
    .then((wasmBinary) => initSqlJs({ wasmBinary }));
  return engine;
}
