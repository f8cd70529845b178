/**
 * The adapters agree with each other on random sequences of operations (seeded; ADAPTERS_SEEDS runs
 * more): sessions created, messages appended (some with usage, some twice on one response, some
 * with bad ids), logs replaced (with and without a stale `ifMessageCount`), metas updated, events
 * appended and read from a seq, context caches, sessions purged, listings by project, status and
 * page. Every operation has the same
 * outcome on every adapter (the same result, or an error with the same code), and after the last
 * one, and again after closing and reopening the persistent adapters, every adapter holds the same
 * sessions, messages and events.
 */
import { describe, expect, test } from "bun:test";
import { FreecodeError } from "../../src/errors.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import type { EventDraft, SessionMeta, StoredMessage } from "../../src/storage/records.ts";
import { openStore } from "../../src/storage/select.ts";
import { tempHome } from "../_helpers.ts";
import { seeded } from "../_random.ts";

const ADAPTERS = ["memory", "files", "sqlite", "sqljs", "json"] as const;
const PERSISTENT = new Set(["files", "sqlite", "sqljs", "json"]);

type Op = { name: string; run: (a: StorageAdapter) => Promise<unknown> };

/** A random operation over a small pool of ids and projects, so operations meet the same sessions. */
function randomOp(r: ReturnType<typeof seeded>, step: number): Op {
  const id = r.pick(["s-a", "s-b", "s-c", "s-d", "bad id", ""]);
  const project = r.pick(["/w/one", "/w/two"]);
  const t = 1_700_000_000_000 + step * 1000;
  const message = (n: number): StoredMessage => {
    const m: StoredMessage = {
      id: r.chance(0.05) ? "bad/id" : `m-${step}-${n}`,
      role: r.pick(["user", "assistant"] as const),
      parts: [{ type: "text", content: `text ${step}.${n}` }],
      timestamp: t + n,
    };
    if (m.role === "assistant" && r.chance(0.5)) {
      m.responseId = `r-${r.int(4)}`; // the same response twice: a second usage is refused
      m.usage = { inputTokens: r.int(100), outputTokens: r.int(100) };
    }
    return m;
  };
  const k = r.int(100);
  if (k < 18) {
    const meta: SessionMeta = {
      id,
      title: `t${step}`,
      projectPath: project,
      status: r.pick(["idle", "running", "archived"] as const),
      createdAt: t,
      updatedAt: t,
      turnCount: 0,
      messageCount: 0,
    };
    const first = Array.from({ length: r.int(3) }, (_, n) => message(n));
    return { name: `create ${id}`, run: (a) => a.createSession(meta, first) };
  }
  if (k < 40) {
    const batch = Array.from({ length: 1 + r.int(3) }, (_, n) => message(n));
    return { name: `append ${id}`, run: (a) => a.appendMessages(id, batch) };
  }
  if (k < 48) {
    const batch = Array.from({ length: r.int(3) }, (_, n) => message(n));
    const expect = r.chance(0.5) ? r.int(5) : undefined;
    return {
      name: `replace ${id} (if ${expect})`,
      run: (a) => a.replaceMessages(id, batch, expect === undefined ? {} : { ifMessageCount: expect }),
    };
  }
  if (k < 56) {
    const title = `renamed ${step}`;
    return { name: `update ${id}`, run: (a) => a.updateMeta(id, (m) => ({ ...m, title, updatedAt: t })) };
  }
  if (k < 72) {
    const drafts: EventDraft[] = Array.from({ length: 1 + r.int(3) }, (_, n) => ({
      type: r.pick(["turn.started", "hook.triggered"]),
      id: `e-${step}-${n}`,
      timestamp: t + n,
      turnId: "turn-0",
      hookName: "h",
    }));
    return { name: `events ${id}`, run: async (a) => (await a.appendEvents(id, drafts)).map((e) => e.seq) };
  }
  if (k < 76) return { name: `purge ${id}`, run: (a) => a.purgeSession(id) };
  if (k < 78) {
    const cache = r.chance(0.5) ? { files: [`f${step}`], n: step } : [step, "x"];
    return {
      name: `cache ${id}`,
      run: async (a) => [await a.putContextCache(id, cache), await a.getContextCache(id)],
    };
  }
  if (k < 80) {
    const from = 1 + r.int(4);
    return {
      name: `events ${id} from ${from}`,
      run: async (a) => {
        const seqs = [];
        for await (const read of a.readEvents(id, { fromSeq: from })) seqs.push(read.event?.seq);
        return seqs;
      },
    };
  }
  if (k < 86) return { name: `meta ${id}`, run: (a) => a.getMeta(id) };
  if (k < 87) return { name: "event logs", run: async (a) => (await a.listEventLogs()).sort() };
  if (k < 92) {
    const offset = r.int(2);
    return {
      name: `list ${project}`,
      run: async (a) => {
        const page = await a.listSessions({ projectPath: project, limit: 2, offset, all: true });
        return { total: page.total, ids: page.items.map((m) => m.id) };
      },
    };
  }
  if (k < 96) {
    const status = r.pick(["idle", "running", "archived"] as const);
    return {
      name: `list ${status}`,
      run: async (a) => (await a.listSessions({ status, all: true })).items.map((m) => m.id),
    };
  }
  return {
    name: `read ${id}`,
    run: async (a) => {
      const { messages, issues } = await a.readMessages(id);
      return { ids: messages.map((m) => m.id), issues: issues.length };
    },
  };
}

/** An operation's outcome: its result, or the error's code (a non-freecode error is a bug). */
async function outcome(op: Op, a: StorageAdapter): Promise<unknown> {
  try {
    return { ok: await op.run(a) };
  } catch (error) {
    if (error instanceof FreecodeError) {
      if (process.env.ADAPTERS_DEBUG) console.log(op.name, error.code, error.message);
      return { error: error.code };
    }
    return { bug: String((error as Error).stack) };
  }
}

/** Everything an adapter holds, for comparison (the fields every adapter keeps as given). */
async function contents(a: StorageAdapter) {
  const { items } = await a.listSessions({ all: true });
  const sessions = [];
  for (const m of items.sort((x, y) => x.id.localeCompare(y.id))) {
    const { messages } = await a.readMessages(m.id);
    sessions.push({ meta: m, messages });
  }
  const logs = [];
  for (const id of (await a.listEventLogs()).sort()) {
    const events = [];
    for await (const read of a.readEvents(id))
      events.push(read.event ? [read.event.seq, read.event.id] : read.issue);
    logs.push({ id, events });
  }
  return { sessions, logs };
}

describe("adapters agree", () => {
  const seeds = Number(process.env.ADAPTERS_SEEDS ?? 3);
  for (let seed = 1; seed <= seeds; seed++) {
    test(`seed ${seed}: 80 random operations have the same outcome and leave the same data on every adapter`, async () => {
      const homes = await Promise.all(ADAPTERS.map(() => tempHome()));
      try {
        let stores = await Promise.all(
          ADAPTERS.map(
            async (name, i) => (await openStore(name, { home: homes[i]!.path, fsync: "never" })).adapter,
          ),
        );
        const r = seeded(seed);
        for (let step = 0; step < 80; step++) {
          const op = randomOp(r, step);
          const results = [];
          for (const a of stores) results.push(await outcome(op, a));
          for (let i = 1; i < ADAPTERS.length; i++) {
            expect([step, op.name, ADAPTERS[i], results[i]]).toEqual([
              step,
              op.name,
              ADAPTERS[i],
              results[0],
            ]);
          }
        }
        const want = await contents(stores[0]!);
        for (let i = 1; i < ADAPTERS.length; i++)
          expect([ADAPTERS[i], await contents(stores[i]!)]).toEqual([ADAPTERS[i], want]);
        // Closed and opened again, the persistent ones still hold it all.
        await Promise.all(stores.map((a) => a.close()));
        stores = await Promise.all(
          ADAPTERS.map(
            async (name, i) => (await openStore(name, { home: homes[i]!.path, fsync: "never" })).adapter,
          ),
        );
        for (let i = 0; i < ADAPTERS.length; i++) {
          if (PERSISTENT.has(ADAPTERS[i]!))
            expect([ADAPTERS[i], await contents(stores[i]!)]).toEqual([ADAPTERS[i], want]);
        }
        await Promise.all(stores.map((a) => a.close()));
      } finally {
        for (const h of homes) await h[Symbol.asyncDispose]();
      }
    }, 60_000);
  }
});
