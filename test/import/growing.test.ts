/**
 * A transcript that grows while it is imported, cut anywhere. Every Claude and Codex source of the
 * corpus is written out in chunks that end at random bytes (mid-line, mid-character), and imported
 * after each chunk the way `--watch` does (not final: open responses and a torn last line wait),
 * written in parts every few KiB; then a final pass. The store must end exactly as one import of the whole file leaves it: the same
 * meta, messages and events. Seeded (GROW_SEEDS runs more).
 */
import { describe, expect, test } from "bun:test";
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { Agent } from "../../src/import/types.ts";
import { CORPUS, tempDir } from "../_helpers.ts";
import { seeded } from "../_random.ts";
import { imported, metasAlike } from "./_store.ts";

function jsonlSources(): { agent: Agent; path: string }[] {
  const out: { agent: Agent; path: string }[] = [];
  const walk = (agent: Agent, dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(agent, p);
      else if (name.endsWith(".jsonl")) out.push({ agent, path: p });
    }
  };
  walk("claude", join(CORPUS, "claude"));
  walk("codex", join(CORPUS, "codex"));
  return out;
}

describe("a growing transcript", () => {
  const seeds = Number(process.env.GROW_SEEDS ?? 1);
  for (const { agent, path } of jsonlSources()) {
    // Subagent files of the 2.1 layout need their folder; the others are imported on their own.
    if (path.includes("/subagents/")) continue;
    test(`${agent} ${basename(path)}: imported as it grows, cut anywhere = imported at once`, async () => {
      const bytes = readFileSync(path);
      for (let seed = 1; seed <= seeds; seed++) {
        await using dir = await tempDir();
        const r = seeded(seed * 7919 + bytes.length);
        const live = join(dir.path, "live", basename(path));
        mkdirSync(join(dir.path, "live"));
        writeFileSync(live, "");
        const cuts = Array.from({ length: 5 }, () => r.int(bytes.length)).sort((a, b) => a - b);
        // Small parts too (a write every few KiB read), so messages are held across parts and passes.
        const every = 1024 + r.int(32 * 1024);
        let at = 0;
        for (const cut of [...cuts, bytes.length]) {
          appendFileSync(live, bytes.subarray(at, cut));
          at = cut;
          await imported(join(dir.path, "grown"), agent, live, every, false);
        }
        const grown = await imported(join(dir.path, "grown"), agent, live, every);
        const once = await imported(join(dir.path, "once"), agent, live);
        const where = `seed ${seed}, cuts ${cuts.join(",")}, parts every ${every} bytes`;
        expect([where, grown.sessions.map((s) => s.meta.id)]).toEqual([
          where,
          once.sessions.map((s) => s.meta.id),
        ]);
        for (let i = 0; i < once.sessions.length; i++) {
          const [a, b] = [grown.sessions[i]!, once.sessions[i]!];
          expect([where, a.meta.id, a.messages]).toEqual([where, b.meta.id, b.messages]);
          expect([where, a.meta.id, a.events]).toEqual([where, b.meta.id, b.events]);
          const [got, want] = metasAlike(a.meta, b.meta);
          expect([where, got]).toEqual([where, want]);
        }
        expect(grown.summary.warnings.filter((w) => !/torn|rewritten/.test(w.message))).toEqual([]);
      }
    }, 60_000);
  }
});
