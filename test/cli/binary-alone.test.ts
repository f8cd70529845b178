/**
 * The binary stands alone: built from a copy of the tree whose node_modules is then removed (so the
 * build machine's paths no longer exist — the trap in bun-engineering.md §1), copied by itself into an
 * empty directory, and run with a PATH that has no Bun and a cwd holding a `.env` it must ignore.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { BUN, ROOT } from "../_helpers.ts";

let work: string;
let bin: string;
let cwd: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "freecode-alone-"));
  const tree = join(work, "tree");
  mkdirSync(tree);
  for (const entry of ["src", "build.ts", "package.json", "tsconfig.json"]) {
    cpSync(join(ROOT, entry), join(tree, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(tree, "node_modules"));
  const build = Bun.spawnSync([BUN, "build.ts", "--outfile", join(tree, "dist", "freecode")], {
    cwd: tree,
    stderr: "pipe",
  });
  if (build.exitCode !== 0) throw new Error(build.stderr.toString());
  // The paths baked in at build time must not be needed: remove the tree's node_modules.
  unlinkSync(join(tree, "node_modules"));
  cwd = join(work, "empty");
  mkdirSync(cwd);
  bin = join(cwd, "freecode");
  copyFileSync(join(tree, "dist", "freecode"), bin);
  rmSync(tree, { recursive: true, force: true });
  writeFileSync(join(cwd, ".env"), "FREECODE_HOME=/nonexistent/from-dotenv\n");
  writeFileSync(join(cwd, "bunfig.toml"), 'preload = ["./nonexistent-preload.ts"]\n');
});

afterAll(() => rmSync(work, { recursive: true, force: true }));

const run = (args: string[]) => {
  const p = Bun.spawnSync([bin, ...args], {
    cwd,
    env: { PATH: "/usr/bin:/bin", HOME: cwd, NO_COLOR: "1" },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
};

describe("the compiled binary, alone in an empty directory", () => {
  test("--version", () => {
    const r = run(["--version"]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  test("doctor --json: every adapter starts, sql.js included; .env and bunfig.toml are not loaded", () => {
    const r = run(["doctor", "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      home: string;
      adapters: { name: string; ok: boolean; detail?: string }[];
    };
    expect(doc.home).toBe(join(cwd, ".freecode"));
    for (const adapter of doc.adapters) expect(adapter).toMatchObject({ ok: true });
    expect(doc.adapters.find((a) => a.name === "sqljs")?.detail).toContain("sql.js");
  });

  test("serve: JSON-RPC over stdio on the sqljs store (the embedded WASM), and HTTP until SIGTERM", async () => {
    const lines = [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "session.create",
        params: {
          projectPath: "/w",
          id: "alone",
          messages: [{ role: "user", parts: [{ type: "text", content: "hi" }] }],
        },
      },
      { jsonrpc: "2.0", id: 2, method: "session.get", params: { id: "alone" } },
    ];
    const stdio = Bun.spawnSync([bin, "serve", "--stdio", "--store", "sqljs"], {
      cwd,
      env: { PATH: "/usr/bin:/bin", HOME: cwd, NO_COLOR: "1" },
      stdin: new Blob([`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`]),
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(stdio.exitCode, stdio.stderr.toString()).toBe(0);
    const answers = stdio.stdout
      .toString()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[1].result).toMatchObject({ id: "alone", title: "hi" });

    const http = Bun.spawn([bin, "serve", "--port", "0"], {
      cwd,
      env: {
        PATH: "/usr/bin:/bin",
        HOME: cwd,
        NO_COLOR: "1",
        FREECODE_SERVE_TOKEN: "binary-alone-token-0123",
      },
      stderr: "pipe",
    });
    // Read stderr to the end (a reader that stops would make the server's shutdown note fail).
    let said = "";
    const { promise: listening, resolve } = Promise.withResolvers<void>();
    const drained = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of http.stderr) {
        said += decoder.decode(chunk, { stream: true });
        if (said.includes("listening on ")) resolve();
      }
      resolve();
    })();
    await listening;
    const url = /listening on (\S+)/.exec(said)![1]!;
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ ok: true, version: pkg.version });
    http.kill("SIGTERM");
    expect(await http.exited).toBe(0);
    await drained;
  }, 30_000);

  test("an internal error's stack trace names our .ts source lines", () => {
    const r = Bun.spawnSync([bin, "doctor"], {
      cwd,
      env: { PATH: "/usr/bin:/bin", HOME: cwd, FREECODE_DEBUG_CRASH: "1" },
      stderr: "pipe",
    });
    expect(r.exitCode).toBe(70);
    expect(r.stderr.toString()).toMatch(/src\/cli\/main\.ts:\d+/);
  });
});
