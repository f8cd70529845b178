/**
 * End to end: the compiled binary, copied alone into an empty directory, works with every adapter
 * (sqljs needs its embedded WASM, sqlite the linked-in SQLite): create, list, search, store info,
 * then a migration from one adapter to the next with equal hashes.
 */
import { expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { binaryPath, parseJson, type RunResult, tempDir, tempHome } from "../_helpers.ts";

const ADAPTERS = ["files", "sqlite", "sqljs", "json"] as const;

test("the binary alone in an empty directory works with every adapter", async () => {
  await using dir = await tempDir("freecode-alone-");
  await using home = await tempHome();
  const bin = join(dir.path, "freecode");
  copyFileSync(binaryPath(), bin);
  const run = (args: string[], env: Record<string, string> = {}): RunResult => {
    const p = Bun.spawnSync([bin, ...args], {
      cwd: dir.path,
      env: { PATH: "/usr/bin:/bin", HOME: dir.path, NO_COLOR: "1", FREECODE_HOME: home.path, ...env },
      stdout: "pipe",
      stderr: "pipe",
      timeout: 60_000,
    });
    return { code: p.exitCode ?? -1, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
  };
  for (const store of ADAPTERS) {
    const env = { FREECODE_STORE: store };
    const created = run(
      ["session", "create", "--id", `s-${store}`, "--project", "/work/p", "--prompt", `hello from ${store}`],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const list = parseJson<{ items: { id: string }[] }>(run(["session", "list", "--json"], env));
    expect(list.items.map((m) => m.id)).toEqual([`s-${store}`]);
    const info = parseJson<{ adapter: string }>(run(["store", "info", "--json"], env));
    expect(info.adapter).toBe(store);
    const found = parseJson<{ total: number }>(run(["search", store, "--json"], env));
    expect(found.total).toBeGreaterThan(0);
  }
  // Each adapter keeps its own files under the same home: sessions do not leak between them.
  const auto = parseJson<{ adapter: string; reason: string }>(
    run(["store", "info", "--store", "auto", "--json"]),
  );
  expect(auto.reason).toBe("auto: sqlite by --store");
  const migrated = run([
    "store",
    "migrate",
    "--store",
    "sqljs",
    "--to",
    "json",
    "--to-home",
    join(dir.path, "h2"),
    "--json",
  ]);
  expect(migrated.code, migrated.stderr).toBe(0);
  expect(parseJson<{ verified: boolean }>(migrated).verified).toBe(true);
}, 180_000);
