/** The package's own scripts: what the README's quick start runs. */
import { expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { tempDir } from "./_helpers.ts";

test("regression: `npm run demo` fails when the build fails (it said 'exit 1 as expected' and exited 0)", async () => {
  await using dir = await tempDir();
  // A `bun` that fails, first on the PATH, in a directory with no dist/freecode.
  const bun = join(dir.path, "bun");
  writeFileSync(bun, "#!/bin/sh\necho 'build failed' >&2\nexit 1\n");
  chmodSync(bun, 0o755);
  const r = Bun.spawnSync(["sh", "-c", pkg.scripts.demo], {
    cwd: dir.path,
    env: { ...process.env, PATH: `${dir.path}:${process.env.PATH}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(r.exitCode).not.toBe(0);
  expect(r.stdout.toString()).not.toContain("as expected");
});
