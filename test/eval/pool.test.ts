import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionJob } from "../../src/eval/evaluate.ts";
import { planFor, shard } from "../../src/eval/pool.ts";
import { tempDir } from "../_helpers.ts";

/** Real rollout files of the given sizes (bytes), one folder per session. */
function jobsOfSizes(dir: string, sizes: number[]): SessionJob[] {
  return sizes.map((size, i) => {
    const id = `s${i}`;
    mkdirSync(join(dir, id), { recursive: true });
    const file = join(dir, id, "events.jsonl");
    writeFileSync(file, "x".repeat(size));
    return { ref: { sessionId: id, file }, cases: [0] };
  });
}

describe("planFor: where a selection is folded", () => {
  test("a selection with few sessions or few bytes is folded here", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), Array(20).fill(1000));
    expect(planFor(jobs.slice(0, 5), { workers: 2, load: 0 })).toEqual({ processes: 1, children: false });
    // 20 × (1 KB + 16 KiB per session) is far below 256 MiB
    expect(planFor(jobs, { workers: 2, load: 0 })).toEqual({ processes: 1, children: false });
  });

  test("from minBytes on, one child per core (capped by the sessions)", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), Array(20).fill(100_000));
    // 20 × (100 KB + 16 KiB per session) ≈ 2.3 MB
    const idle = { workers: 2, load: 0 };
    expect(planFor(jobs, { ...idle, minBytes: 2_000_000 })).toEqual({ processes: 2, children: true });
    expect(planFor(jobs, { ...idle, minBytes: 3_000_000 })).toEqual({ processes: 1, children: false });
    expect(planFor(jobs.slice(0, 3), { workers: 8, load: 0, minBytes: 1, threshold: 1 })).toEqual({
      processes: 3,
      children: true,
    });
  });

  test("a busy machine (load ≥ cores) needs busyMinBytes before it splits", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), Array(20).fill(100_000));
    const sizes = { workers: 2, minBytes: 1_000_000, busyMinBytes: 3_000_000 };
    expect(planFor(jobs, { ...sizes, load: 0 })).toEqual({ processes: 2, children: true });
    expect(planFor(jobs, { ...sizes, load: 1e6 })).toEqual({ processes: 1, children: false });
    expect(planFor(jobs, { ...sizes, busyMinBytes: 2_000_000, load: 1e6 })).toEqual({
      processes: 2,
      children: true,
    });
  });

  test("--workers N is obeyed whatever the size: 1 folds here, 2 or more in children", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), [10, 10, 10]);
    expect(planFor(jobs, { workers: 1, forced: true })).toEqual({ processes: 1, children: false });
    expect(planFor(jobs, { workers: 2, forced: true, load: 1e6 })).toEqual({ processes: 2, children: true });
    expect(planFor(jobs, { workers: 2, forced: true })).toEqual({ processes: 2, children: true });
    expect(planFor(jobs, { workers: 9, forced: true })).toEqual({ processes: 3, children: true });
  });
});

describe("shard: split by bytes, not by count", () => {
  test("one large session weighs as much as many small ones", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), [4_000_000, ...Array(10).fill(300_000)]);
    const shards = shard(jobs, 2);
    expect(shards).toHaveLength(2);
    const big = shards.find((s) => s.some((j) => j.ref.sessionId === "s0"))!;
    expect(big.map((j) => j.ref.sessionId)).toEqual(["s0"]); // the ten small ones (3 MB) go together
    expect(shards.flat()).toHaveLength(11);
  });

  test("never more shards than sessions, every session exactly once", async () => {
    await using dir = await tempDir();
    const jobs = jobsOfSizes(join(dir.path, "r"), [5, 50, 500]);
    const shards = shard(jobs, 8);
    expect(shards).toHaveLength(3);
    expect(
      shards
        .flat()
        .map((j) => j.ref.sessionId)
        .sort(),
    ).toEqual(["s0", "s1", "s2"]);
  });
});
