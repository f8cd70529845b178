/**
 * stdin's line limits are kept while it is read: a line past its limit is refused at once, not
 * after the rest of stdin (a 300 MB line took 6 s and 1.2 GB before the refusal).
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { BUN, ROOT, runCli, tempHome } from "../_helpers.ts";

/** Run the CLI with a line of `bytes` on stdin that never ends (stdin stays open): how it exits. */
async function refusedWhileOpen(home: string, args: string[], head: string, bytes: number) {
  const proc = Bun.spawn([BUN, join(ROOT, "src/cli/main.ts"), ...args], {
    env: { ...process.env, FREECODE_HOME: home, NO_COLOR: "1" },
    stdin: "pipe",
    stderr: "pipe",
    stdout: "ignore",
  });
  // A refusal closes the pipe under the writes (EPIPE): what this test waits for.
  const feeding = (async () => {
    proc.stdin.write(head);
    const chunk = "a".repeat(1024 * 1024);
    for (let i = 0; i < Math.ceil(bytes / chunk.length); i++) {
      proc.stdin.write(chunk);
      await proc.stdin.flush();
    }
  })().catch(() => {});
  // stdin is not closed: only a refusal before its end lets the process exit.
  const exited = await Promise.race([proc.exited, Bun.sleep(20_000).then(() => "still reading")]);
  if (exited === "still reading") proc.kill();
  await feeding;
  await Promise.resolve(proc.stdin.end()).catch(() => {});
  return { exited, stderr: await new Response(proc.stderr).text() };
}

test("regression: a line over its limit is refused before stdin ends (session append: 8 MiB, rollout append: 32 MiB)", async () => {
  await using home = await tempHome();
  expect(runCli(["session", "create", "--id", "s1", "--prompt", "hi"], { home: home.path }).code).toBe(0);
  const message = await refusedWhileOpen(
    home.path,
    ["session", "append", "s1"],
    '{"role":"user","parts":[{"type":"text","content":"ok"}]}\n{"role":"user","parts":[{"type":"text","content":"',
    9 * 1024 * 1024,
  );
  expect(message).toEqual({ exited: 2, stderr: "[error] <stdin>:2: line is longer than 8 MiB\n" });
  const event = await refusedWhileOpen(
    home.path,
    ["rollout", "append", "s1"],
    '{"type":"turn.started","turnId":"',
    33 * 1024 * 1024,
  );
  expect(event).toEqual({ exited: 2, stderr: "[error] <stdin>:1: line is longer than 32 MiB\n" });
  expect(runCli(["session", "show", "s1", "--json"], { home: home.path }).stdout).toContain(
    '"messageCount": 1',
  );
}, 60_000);
