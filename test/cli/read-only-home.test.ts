/**
 * A home this process cannot write — a read-only mount, a cache restored read-only, another user's
 * files — is read as it is: listing, showing, tracing and evaluating work and write nothing there.
 * The compiled binary runs as a user that may not write the home: as root, the home is given to
 * `nobody` with every write bit off and the binary runs as `nobody` (`setpriv`); as anyone else, the
 * write bits are taken off. Listing needs its index, which lived only in the home (`state/`): it was
 * `cannot open …/index.lock: permission denied` (exit 74), and eval gave no verdict.
 */
import { expect, test } from "bun:test";
import {
  appendFileSync,
  chmodSync,
  chownSync,
  copyFileSync,
  cpSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import sqlite from "../../src/storage/adapters/sqlite.ts";
import { binaryPath, CORPUS, runCli, tempDir } from "../_helpers.ts";

const root = process.getuid?.() === 0;
const setpriv = Bun.which("setpriv");
const NOBODY = 65534;

/** Every path under `dir` with its size and modification time: what a write would move. */
function snapshot(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const st = statSync(p);
      out.push(`${p} ${st.size} ${st.mtimeMs}`);
      if (st.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

/** Take every write bit off under `dir` (and, as root, give it to nobody, who must read it). */
function readOnly(dir: string): void {
  const walk = (p: string) => {
    const st = statSync(p);
    if (root) chownSync(p, NOBODY, NOBODY);
    chmodSync(p, st.isDirectory() ? 0o555 : 0o444);
    if (st.isDirectory()) for (const name of readdirSync(p)) walk(join(p, name));
  };
  walk(dir);
}

/** A folder anyone may enter, holding a copy of the compiled binary anyone may run. */
function shared(dir: string): string {
  chmodSync(dir, 0o755);
  const bin = join(dir, "freecode");
  copyFileSync(binaryPath(), bin);
  chmodSync(bin, 0o755);
  return bin;
}

/** Run `bin` on `home` with `store` as a user who may not write it (nobody, as root). */
function runOn(bin: string, home: string, store: string, args: string[]) {
  const cli = [bin, ...args, "--home", home, "--store", store];
  const argv = root ? [setpriv!, `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...cli] : cli;
  const p = Bun.spawnSync(argv, {
    cwd: dirname(bin),
    env: { ...process.env, NODE_ENV: "test" },
    stderr: "pipe",
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
}

test.skipIf(root && !setpriv)(
  "regression: a home that cannot be written is listed, traced and evaluated, and nothing in it changes, on every store that keeps files (listing died with EACCES, exit 74)",
  async () => {
    await using dir = await tempDir();
    const bin = shared(dir.path);
    const cases = join(dir.path, "cases.yaml");
    writeFileSync(cases, "- id: no-hung-calls\n  sessions: all\n  expect:\n    - noHung: true\n");
    chmodSync(cases, 0o644);
    for (const store of ["files", "sqlite", "sqljs", "json"]) {
      const home = join(dir.path, store);
      const corpus = join(CORPUS, "claude", "drmaciver_claude-reliability");
      expect(runCli(["import", "claude", corpus, "--finished", "--store", store], { home }).code).toBe(0);
      // Listed once while writable, so the home has its state (the index) as a used one has.
      expect(runCli(["session", "list", "--store", store], { home }).code).toBe(0);
      if (store === "files") {
        // A journal past the size a writer rotates, and no index file: listed from the journal as
        // it is (rotating it failed, EACCES, and nothing was listed).
        const journal = join(home, "state", "sessions-journal.jsonl");
        const line = readFileSync(journal, "utf8").split("\n")[0]!;
        appendFileSync(journal, `${line}\n`.repeat(Math.ceil((9 * 1024 * 1024) / (line.length + 1))));
        rmSync(join(home, "state", "sessions-index.db"), { force: true });
      }
      readOnly(home);
      const before = snapshot(home);
      const run = (args: string[]) => runOn(bin, home, store, args);
      const list = run(["session", "list", "--json"]);
      expect([store, list.code, list.stderr]).toEqual([store, 0, ""]);
      const ids = (JSON.parse(list.stdout) as { items: { id: string }[] }).items.map((m) => m.id);
      expect(ids.length).toBeGreaterThan(0);
      for (const args of [
        ["session", "show", ids[0]!],
        ["session", "show", ids[0]!, "--turns"],
        ["search", "coverage"],
        ["trace", ids[0]!],
        ["eval", cases],
      ]) {
        const r = run(args);
        expect([store, args[0], r.code, r.stderr]).toEqual([store, args[0], 0, ""]);
      }
      expect(run(["eval", cases]).stdout).toContain("1 passed");
      // A write is refused, naming what could not be written.
      const rename = run(["session", "rename", ids[0]!, "new title"]);
      expect([store, rename.code]).toEqual([store, 74]);
      expect(rename.stderr).toContain(home);
      expect(snapshot(home)).toEqual(before);
      writableAgain(home); // for the test's own clean-up
    }
  },
  120_000,
);

/** Give the write bits back (and, as root, the files to root). */
function writableAgain(p: string): void {
  const st = statSync(p);
  if (root) chownSync(p, 0, 0);
  chmodSync(p, st.isDirectory() ? 0o755 : 0o644);
  if (st.isDirectory()) for (const name of readdirSync(p)) writableAgain(join(p, name));
}

test.skipIf(root && !setpriv)(
  "regression: a read-only sqlite store whose WAL holds writes is read with them, through its -shm file, or refused without one — not read without them (1 session of 4); store verify checks it",
  async () => {
    await using dir = await tempDir();
    const bin = shared(dir.path);
    // Copied while a process has it open: the last three sessions are in store.db-wal only.
    const live = join(dir.path, "live");
    const store = sqlite({ home: live, fsync: "never" });
    const meta = (id: string) => ({
      id,
      title: id,
      projectPath: "/p",
      status: "idle" as const,
      createdAt: 1,
      updatedAt: 1,
      turnCount: 0,
      messageCount: 0,
    });
    await store.createSession(meta("one"), []);
    await store.close();
    const again = sqlite({ home: live, fsync: "never" });
    for (const id of ["two", "three", "four"]) await again.createSession(meta(id), []);
    const home = join(dir.path, "copy");
    cpSync(live, home, { recursive: true });
    await again.close();
    expect(statSync(join(home, "state", "store.db-wal")).size).toBeGreaterThan(0);
    const run = (args: string[]) => runOn(bin, home, "sqlite", args);
    readOnly(home);
    const list = run(["session", "list", "--json"]);
    expect([list.code, list.stderr]).toEqual([0, ""]);
    expect((JSON.parse(list.stdout) as { total: number }).total).toBe(4);
    const verify = run(["store", "verify"]);
    expect([verify.code, verify.stdout]).toEqual([0, expect.stringContaining("4 sessions")]);
    // Without the -shm file the WAL cannot be read: refused, saying why.
    writableAgain(home);
    rmSync(join(home, "state", "store.db-shm"));
    readOnly(home);
    const refused = run(["session", "list"]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("store.db-wal holds writes not yet in the database");
    writableAgain(home);
  },
  120_000,
);
