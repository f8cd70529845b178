/**
 * Shared test helpers: disposable temp homes, running the CLI from source or as the compiled binary.
 * Every test that touches disk uses its own temp home (`await using home = await tempHome()`).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "..");
/** The real public transcripts of `shared/corpus`, copied verbatim (with their SOURCES.md) so a
 * clean clone tests on its own. */
export const CORPUS = resolve(ROOT, "test", "corpus");
export const BUN = process.execPath;

/** A temp directory removed when the `await using` scope ends. */
export async function tempDir(prefix = "freecode-test-"): Promise<{ path: string } & AsyncDisposable> {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return {
    path,
    async [Symbol.asyncDispose]() {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/** A temp freecode home. */
export const tempHome = () => tempDir("freecode-home-");

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  home?: string;
  stdin?: string | Uint8Array;
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
}

function baseEnv(opts: RunOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, NO_COLOR: "1", ...opts.env })) {
    if (v !== undefined) env[k] = v;
  }
  if (opts.home) env.FREECODE_HOME = opts.home;
  return env;
}

function run(cmd: string[], opts: RunOptions): RunResult {
  const proc = Bun.spawnSync(cmd, {
    cwd: opts.cwd ?? ROOT,
    env: baseEnv(opts),
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
    timeout: opts.timeoutMs ?? 60_000,
  });
  return { code: proc.exitCode ?? -1, stdout: proc.stdout.toString(), stderr: proc.stderr.toString() };
}

/**
 * `runCli` without blocking this process: for tests whose own event loop serves the CLI (a fake
 * provider or a server started in the test process).
 */
export async function runCliAsync(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  const proc = Bun.spawn([BUN, join(ROOT, "src/cli/main.ts"), ...args], {
    cwd: opts.cwd ?? ROOT,
    env: baseEnv(opts),
    stdin: opts.stdin === undefined ? "ignore" : new Blob([opts.stdin]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  return { code, stdout, stderr };
}

/** Run `freecode <args>` from source (fast; use `runBinary` for end-to-end tests). */
export function runCli(args: string[], opts: RunOptions = {}): RunResult {
  return run([BUN, join(ROOT, "src/cli/main.ts"), ...args], opts);
}

let built: string | undefined;

/**
 * Build the binary once per test process into a private temp dir (never dist/, so concurrent test
 * runs do not race) and return its path.
 */
export function binaryPath(): string {
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), "freecode-bin-"));
  const out = join(dir, "freecode");
  const proc = Bun.spawnSync([BUN, join(ROOT, "build.ts"), "--outfile", out], { cwd: ROOT, stderr: "pipe" });
  if (proc.exitCode !== 0) throw new Error(`build failed: ${proc.stderr.toString()}`);
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  built = out;
  return out;
}

/** Run the compiled binary (built on first use). */
export function runBinary(args: string[], opts: RunOptions = {}): RunResult {
  return run([binaryPath(), ...args], opts);
}

/** Parse stdout as one JSON document, failing the test with the output when it is not. */
export function parseJson<T = unknown>(result: RunResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`stdout is not JSON (exit ${result.code}):\n${result.stdout}\nstderr:\n${result.stderr}`);
  }
}
