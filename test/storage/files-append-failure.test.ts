/**
 * A write that fails part way (a full disk; here a file size limit, which fails the same way with
 * EFBIG) must leave nothing of its batch behind: the bytes it did write are cut back. Before, they
 * stayed, the CLI's rejected batch was half stored, and the next acknowledged append was glued onto
 * the partial line: one corrupt line, the message lost.
 */
import { expect, test } from "bun:test";
import { closeSync, existsSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import { AppendLog, MARKED_BYTES } from "../../src/storage/adapters/_files-log.ts";
import factory from "../../src/storage/adapters/files.ts";
import { acknowledgedSize } from "../../src/storage/batch-mark.ts";
import { BUN, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

test("a batch that fails part way is cut back; the next append is whole", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  await store.createSession(makeMeta({ id: "s" }), [msg("first")]);
  await store.close();
  // 64 KiB per file; the big record is 100 KB.
  const child = Bun.spawnSync(
    [
      "bash",
      "-c",
      `trap '' XFSZ; ulimit -f 64; exec "$0" "$@"`,
      BUN,
      join(import.meta.dir, "_fsize-child.ts"),
      home.path,
      "100000",
    ],
    { stdout: "pipe", stderr: "pipe" },
  );
  expect(child.stdout.toString().trim().split("\n")).toEqual([
    "big failed EFBIG",
    "small ok",
    "event failed EFBIG",
    "small event ok",
  ]);
  const again = factory({ home: home.path, fsync: "never" });
  const { messages, issues } = await again.readMessages("s");
  expect(issues).toEqual([]);
  expect(messages.map((m) => m.id)).toEqual(["first", "after"]);
  expect((await again.getMeta("s"))?.messageCount).toBe(2);
  const events = [];
  for await (const r of again.readEvents("s")) {
    expect(r.issue).toBeUndefined();
    if (r.event) events.push(r.event.text);
  }
  expect(events).toEqual(["small"]);
  await again.close();
});

test("a marked batch that fails before its first byte leaves no mark: later appends stay visible", async () => {
  await using home = await tempHome();
  const path = join(home.path, "log.jsonl");
  const log = new AppendLog(path, "never");
  log.append('{"n":1}\n');
  // The descriptor made read-only under the log: its next write fails with nothing written (as
  // on a disk full at the batch's first byte).
  const writable = (log as unknown as { fd: number }).fd;
  (log as unknown as { fd: number }).fd = openSync(path, "r");
  const big = `${JSON.stringify({ x: "y".repeat(MARKED_BYTES) })}\n`;
  expect(() => log.append(big)).toThrow();
  closeSync((log as unknown as { fd: number }).fd);
  (log as unknown as { fd: number }).fd = writable;
  expect(existsSync(`${path}.batch`)).toBe(false);
  // The next append in the same lease is acknowledged, and every reader sees it.
  log.append('{"n":2}\n');
  expect(acknowledgedSize(path)).toBe(statSync(path).size);
  log.close();
});
