/**
 * A purge while another process appends to the session's rollout log: that writer's lease on the
 * log let it go on appending, acknowledged, into the file the purge erased (up to 200 ms of batches,
 * then a new log from seq 1). The purge takes the log's lock now: every batch acknowledged after it
 * is in the log that exists.
 */
import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/storage/select.ts";
import { tempHome } from "../_helpers.ts";

test("regression: events acknowledged after a purge are in the log (they went to the erased file)", async () => {
  await using home = await tempHome();
  const { adapter } = await openStore("files", { home: home.path, fsync: "never" });
  await adapter.createSession(
    {
      id: "race",
      title: "race",
      projectPath: "/p",
      status: "idle",
      createdAt: 1,
      updatedAt: 1,
      turnCount: 0,
      messageCount: 1,
    },
    [{ id: "m1", role: "user", parts: [{ type: "text", content: "go" }], timestamp: 1 }],
  );
  const ready = join(home.path, "ready");
  const child = Bun.spawn(
    ["bun", join(import.meta.dir, "_purge-race-child.ts"), home.path, "race", "800", ready],
    { stdout: "pipe", stderr: "inherit" },
  );
  while (!existsSync(ready)) await Bun.sleep(2);
  await adapter.purgeSession("race");
  const purged = Date.now();
  const acks = JSON.parse(await new Response(child.stdout).text()) as [number, number][];
  expect(await child.exited).toBe(0);
  const after = acks.filter(([, at]) => at > purged).map(([b]) => b);
  expect(after.length).toBeGreaterThan(0);
  const held = new Set<string>();
  const seqs: number[] = [];
  for await (const r of adapter.readEvents("race")) {
    held.add(String(r.event?.turnId));
    seqs.push(r.event!.seq);
  }
  const lost = after.filter((b) => !held.has(`b${b}-0`) || !held.has(`b${b}-19`));
  expect(lost).toEqual([]);
  expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  await adapter.close();
}, 30_000);
