/**
 * Multi-process conformance: 4 processes × 2,000 appends to one session and to one session each,
 * through the adapter named on their command line. Nothing is lost, nothing interleaves, no seq is
 * used twice, and no lock error surfaces.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openStore } from "../../src/storage/select.ts";
import { BUN, tempHome } from "../_helpers.ts";
import { makeMeta, msg } from "./contract.ts";

const CHILD = join(import.meta.dir, "_append-child.ts");
const WORKERS = 4;
const PER_WORKER = 2_000;

async function runWorkers(store: string, home: string, kind: string, session: (w: number) => string) {
  const procs = Array.from({ length: WORKERS }, (_, w) =>
    Bun.spawn([BUN, CHILD, store, home, kind, session(w), String(PER_WORKER), String(w)], {
      stdout: "pipe",
      stderr: "pipe",
    }),
  );
  const outs = await Promise.all(
    procs.map(async (p) => {
      const [stdout, stderr, code] = await Promise.all([
        new Response(p.stdout).text(),
        new Response(p.stderr).text(),
        p.exited,
      ]);
      if (code !== 0) throw new Error(`worker failed (${code}): ${stderr}`);
      return JSON.parse(stdout) as { worker: string; seqs: number[] };
    }),
  );
  return outs;
}

/** Run the multi-process suite against the adapter `store` (as `--store` would name it). */
export function runConcurrencySuite(store: string, opts: { skip?: string } = {}) {
  describe(`storage concurrency: ${store}`, () => {
    if (opts.skip) {
      test.skip(`multi-process appends (skipped: ${opts.skip})`, () => {});
      return;
    }
    for (const shared of [true, false]) {
      test(`${WORKERS} processes × ${PER_WORKER} message appends to ${shared ? "one session" : "a session each"}`, async () => {
        await using home = await tempHome();
        const { adapter } = await openStore(store, { home: home.path, fsync: "never" });
        const ids = Array.from({ length: WORKERS }, (_, w) => (shared ? "shared" : `own-${w}`));
        for (const id of new Set(ids)) await adapter.createSession(makeMeta({ id }), [msg("first")]);
        await adapter.close();
        await runWorkers(store, home.path, "messages", (w) => ids[w]!);
        const { adapter: check } = await openStore(store, { home: home.path });
        try {
          for (const id of new Set(ids)) {
            const { messages, issues } = await check.readMessages(id);
            expect(issues).toEqual([]);
            const expected = shared ? WORKERS * PER_WORKER + 1 : PER_WORKER + 1;
            expect(messages).toHaveLength(expected);
            expect(new Set(messages.map((m) => m.id)).size).toBe(expected);
            // Each worker's messages keep their order.
            const byWorker = new Map<string, number[]>();
            for (const m of messages.slice(1)) {
              const [w, i] = m.id.slice(1).split("-");
              byWorker.set(w!, [...(byWorker.get(w!) ?? []), Number(i)]);
            }
            for (const seq of byWorker.values()) expect(seq).toEqual([...seq].sort((a, b) => a - b));
            expect((await check.getMeta(id))?.messageCount).toBe(expected);
          }
        } finally {
          await check.close();
        }
      }, 120_000);
    }

    test(`${WORKERS} processes × ${PER_WORKER} event appends to one log: no duplicate seq`, async () => {
      await using home = await tempHome();
      const outs = await runWorkers(store, home.path, "events", () => "ev-shared");
      const all = outs.flatMap((o) => o.seqs);
      expect(new Set(all).size).toBe(WORKERS * PER_WORKER);
      for (const o of outs) expect(o.seqs).toEqual([...o.seqs].sort((a, b) => a - b));
      const { adapter } = await openStore(store, { home: home.path });
      try {
        const seqs: number[] = [];
        for await (const r of adapter.readEvents("ev-shared")) {
          expect(r.issue).toBeUndefined();
          if (r.event) seqs.push(r.event.seq);
        }
        expect(seqs).toEqual(Array.from({ length: WORKERS * PER_WORKER }, (_, i) => i + 1));
      } finally {
        await adapter.close();
      }
    }, 120_000);
  });
}
