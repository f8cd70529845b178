/**
 * A write that fails part way (a full disk; here a file size limit, which fails the same way with
 * EFBIG) must leave nothing of its batch behind: the bytes it did write are cut back. Before, they
 * stayed, the CLI's rejected batch was half stored, and the next acknowledged append was glued onto
 * the partial line: one corrupt line, the message lost.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import factory from "../../src/storage/adapters/files.ts";
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
