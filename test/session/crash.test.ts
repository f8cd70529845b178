/** SIGKILL a writer mid-append, again and again: nothing acknowledged is lost, the store stays readable. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openStore } from "../../src/storage/select.ts";
import { BUN, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "../storage/contract.ts";

const ROUNDS = 8;

describe("crash safety (files)", () => {
  test(`SIGKILL a writer ${ROUNDS} times mid-append`, async () => {
    await using home = await tempHome();
    const { adapter: setup } = await openStore("files", { home: home.path });
    await setup.createSession(makeMeta({ id: "crash" }), [msg("first")]);
    await setup.close();
    const acknowledged: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const child = Bun.spawn(
        [BUN, join(import.meta.dir, "_writer-child.ts"), home.path, "files", `r${round}`],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      let text = "";
      const reading = (async () => {
        for await (const chunk of child.stdout) text += new TextDecoder().decode(chunk);
      })();
      // Let it get going, then kill it at an arbitrary point.
      while (!text.includes("\n")) await Bun.sleep(5);
      await Bun.sleep(20 + ((round * 37) % 120));
      child.kill("SIGKILL");
      await child.exited;
      await reading;
      const lines = text.split("\n");
      lines.pop(); // a partly printed id was not acknowledged
      expect(lines.length).toBeGreaterThan(0);
      acknowledged.push(...lines);
    }
    const { adapter } = await openStore("files", { home: home.path });
    const { messages, issues } = await adapter.readMessages("crash");
    const stored = new Set(messages.map((m) => m.id));
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect(lost).toEqual([]);
    // Only lines cut by a kill may be unreadable; everything else parses.
    expect(issues.length).toBeLessThanOrEqual(ROUNDS);
    expect((await adapter.getMeta("crash"))?.messageCount).toBe(messages.length);
    const seqs: number[] = [];
    const turnIds = new Set<string>();
    for await (const r of adapter.readEvents("crash")) {
      if (r.event) {
        seqs.push(r.event.seq);
        turnIds.add(String(r.event.turnId));
      }
    }
    for (const id of acknowledged) expect(turnIds.has(id)).toBe(true);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    await adapter.close();
  }, 60_000);
});
