/**
 * A write the disk refuses (here a file size limit, which fails writes as a full disk does) is one
 * line naming the file and the reason, exit 74 — for SQLite's errors too, which were an internal
 * error's stack trace (exit 70) — and the batch is not half stored.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, runCli, tempHome } from "../_helpers.ts";

/** `freecode <args>` with files limited to `kib` KiB each (SIGXFSZ ignored: writes fail instead). */
function limited(kib: number, home: string, args: string[], stdin: string) {
  const p = Bun.spawnSync(
    [
      "bash",
      "-c",
      `trap '' XFSZ; ulimit -f ${kib}; exec "$0" "$@"`,
      BUN,
      join(ROOT, "src/cli/main.ts"),
      ...args,
    ],
    {
      env: { ...process.env, FREECODE_HOME: home, NO_COLOR: "1" },
      stdin: new Blob([stdin]),
      stderr: "pipe",
      stdout: "pipe",
    },
  );
  return { code: p.exitCode, stderr: p.stderr.toString() };
}

const big = `${JSON.stringify({ role: "user", parts: [{ type: "text", content: "x".repeat(400_000) }] })}\n`;

for (const store of ["sqlite", "files"])
  test(`${store}: a write past the limit is exit 74 and one line; nothing of the batch is kept`, async () => {
    await using home = await tempHome();
    expect(
      runCli(["--store", store, "session", "create", "--prompt", "x", "--id", "keep"], { home: home.path })
        .code,
    ).toBe(0);
    const small = `${JSON.stringify({ role: "user", parts: [{ type: "text", content: "small" }] })}\n`;
    const r = limited(300, home.path, ["--store", store, "session", "append", "keep"], small + big);
    expect(r.code).toBe(74);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\[error\] cannot (use|write) \S+(store\.db|messages\.jsonl): .*\((SQLITE_\w+|EFBIG)\)$/,
    );
    const shown = runCli(["--store", store, "session", "show", "keep", "--json"], { home: home.path });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).messages).toHaveLength(1);
  });
