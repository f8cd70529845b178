/**
 * OpenCode conformance: the row dump and every reconstructed export in corpus/opencode import, and
 * tool calls, tool errors, denied calls, compactions and total tokens match a count over the raw
 * rows and parts written here. The row dump's per-session token columns agree too.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CORPUS, tempHome } from "../_helpers.ts";
import type { Raw } from "./_corpus.ts";
import {
  checkEval,
  checkTraces,
  importOne,
  rawLines,
  sessionsFrom,
  type Tally,
  tallyRollouts,
  zero,
} from "./_corpus.ts";

const root = join(CORPUS, "opencode", "richardaiand_aiand-portfolio-web");
const exports = [...new Bun.Glob("*.json").scanSync(join(root, "reconstructed_export"))].sort();
const DENIAL = /^The user (rejected permission|dismissed)|^The user has specified a rule/;

function tallyParts(parts: Raw[]): Tally {
  const t = zero();
  for (const p of parts) {
    if (p.type === "tool") {
      t.toolCalls++;
      const s = p.state ?? {};
      if (s.status === "error" && DENIAL.test(String(s.error))) t.denied++;
      else if (s.status === "error") t.toolErrors++;
      else if (s.status === "completed" && typeof s.metadata?.exit === "number" && s.metadata.exit !== 0)
        t.toolErrors++;
    }
    if (p.type === "compaction") t.compactions++;
    if (p.type === "retry") t.modelErrors++;
    if (p.type === "step-finish") {
      const k = p.tokens ?? {};
      t.tokens +=
        (k.input ?? 0) + (k.output ?? 0) + (k.reasoning ?? 0) + (k.cache?.read ?? 0) + (k.cache?.write ?? 0);
    }
  }
  return t;
}

/** A message's named error: an abort ends the turn, any other is a provider error. */
function withMessageErrors(t: Tally, infos: Raw[]): Tally {
  for (const info of infos) {
    if (!info.error) continue;
    if (info.error.name === "MessageAbortedError") t.aborts++;
    else t.modelErrors++;
  }
  return t;
}

describe("opencode corpus conformance", () => {
  test("row dump", async () => {
    await using home = await tempHome();
    const dir = join(root, "rows");
    const { adapter, report } = await importOne(home.path, "opencode", dir);
    expect(report.sources[0]!.warnings).toEqual([]);
    const ids = await sessionsFrom(adapter, dir);
    expect(ids.length).toBe(3);
    const parts = (await rawLines(join(dir, "part.jsonl"))).map((r) => JSON.parse(r.data));
    const got = await tallyRollouts(adapter, ids);
    const infos = (await rawLines(join(dir, "message.jsonl"))).map((r) => JSON.parse(r.data));
    expect(got).toEqual(withMessageErrors(tallyParts(parts), infos));
    // The database's own per-session counters say the same.
    const sessions = await rawLines(join(dir, "session.jsonl"));
    const columns = sessions.reduce(
      (n, s) =>
        n +
        s.tokens_input +
        s.tokens_output +
        s.tokens_reasoning +
        s.tokens_cache_read +
        s.tokens_cache_write,
      0,
    );
    expect(got.tokens).toBe(columns);
    await checkTraces(adapter, ids, got);
    await checkEval(adapter, home.path, 3);
    await adapter.close();
  });

  for (const rel of exports) {
    test(`export ${rel}`, async () => {
      await using home = await tempHome();
      const path = join(root, "reconstructed_export", rel);
      const { adapter, report } = await importOne(home.path, "opencode", path);
      expect(report.sources[0]!.warnings).toEqual([]);
      const ids = await sessionsFrom(adapter, path);
      expect(ids.length).toBe(1);
      const doc = await Bun.file(path).json();
      const got = await tallyRollouts(adapter, ids);
      const want = tallyParts(doc.messages.flatMap((m: Raw) => m.parts));
      expect(got).toEqual(
        withMessageErrors(
          want,
          doc.messages.map((m: Raw) => m.info),
        ),
      );
      await checkTraces(adapter, ids, got);
      await checkEval(adapter, home.path, 1);
      await adapter.close();
    });
  }

  test("tools left running by a crash are recorded as calls without an output", async () => {
    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "opencode", join(root, "rows"));
    const { loadTrace } = await import("../../src/rollout/load.ts");
    let pending = 0;
    for (const id of await sessionsFrom(adapter, join(root, "rows")))
      pending += (await loadTrace({ adapter, sessionId: id })).pendingCalls.length;
    expect(pending).toBe(2);
    await adapter.close();
  });
});
