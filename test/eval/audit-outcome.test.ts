/**
 * Regressions from the outcome/health audit: changedFiles globs matched any trailing part of a path
 * (so writes outside the project passed `only`), token budgets left out cached prompt tokens, and
 * ttft/duration bounds skipped the requests that never got a first token or never ended.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { duration, ttft } from "../../src/eval/assertions/health.ts";
import { changedFiles, tokens } from "../../src/eval/assertions/outcome.ts";
import type { RolloutEvent } from "../../src/rollout/events.ts";
import { buildTrace } from "../../src/rollout/folds/trace.ts";
import type { Trace } from "../../src/rollout/folds/trace-types.ts";
import { loadTrace } from "../../src/rollout/load.ts";
import { CORPUS, ROOT, tempHome } from "../_helpers.ts";
import { importOne } from "../import/_corpus.ts";
import { trace } from "./_trace.ts";

/** A hand-built trace of a session in `projectPath` (undefined: the directory is unknown) that changed `files`. */
const wrote = (files: string[], projectPath?: string) => ({
  ...trace({ changedFiles: files }),
  ...(projectPath === undefined ? {} : { projectPath }),
});

const example = (id: string) =>
  loadTrace({ file: join(ROOT, "examples", "rollouts", id, "events.jsonl"), sessionId: id });

/** The Claude Code corpus session (Windows) that wrote a plan file outside its project, with its meta. */
async function claudeVaultSession(home: string): Promise<{ trace: Trace; projectPath: string }> {
  const dir = join(CORPUS, "claude", "laf-us_idaho-vault", "c--Users-loganf-Documents-IDAHO-VAULT");
  const { adapter } = await importOne(
    home,
    "claude",
    join(dir, "ad723d79-d1aa-4c89-9a82-926c1918e7ee.jsonl"),
  );
  const sessionId = "claude-ad723d79-d1aa-4c89-9a82-926c1918e7ee";
  const meta = (await adapter.listSessions({ all: true, limit: 100 })).items.find((m) => m.id === sessionId)!;
  return { trace: await loadTrace({ adapter, sessionId }), projectPath: meta.projectPath };
}

describe("changedFiles globs are placed in the project, not matched against any trailing part", () => {
  test("a relative glob does not match a path outside the project that merely ends like it", () => {
    for (const outside of ["/etc/src/api/passwd", "../../other/src/api/x.ts", "vendor/evil/src/api/x.ts"]) {
      const r = changedFiles(wrote([outside], "/work/app"), { only: ["src/api/**"] });
      expect(r.verdict).toBe("fail");
    }
    expect(changedFiles(wrote(["/etc/src/api/passwd"], "/work/app"), { only: ["src/api/**"] }).message).toBe(
      "changed file /etc/src/api/passwd is outside the project /work/app (only: src/api/**)",
    );
    const nested = wrote(["node_modules/a/package.json"], "/work/app");
    expect(changedFiles(nested, { include: ["package.json"] }).verdict).toBe("fail");
    expect(changedFiles(nested, { exclude: ["package.json"] }).verdict).toBe("pass");
    expect(
      changedFiles(wrote(["/work/app/package.json"], "/work/app"), { exclude: ["package.json"] }).verdict,
    ).toBe("fail");
  });

  test("absolute paths inside the project match relative globs; absolute globs match paths as written", () => {
    const t = wrote(
      ["/work/app/src/api/x.ts", "./src/api/y.ts", "/work/app/lib/../src/api/z.ts"],
      "/work/app/",
    );
    expect(changedFiles(t, { only: ["src/api/**"] }).verdict).toBe("pass");
    expect(changedFiles(t, { include: ["src/api/y.ts", "src/api/z.ts"] }).verdict).toBe("pass");
    expect(changedFiles(t, { only: ["/work/app/src/**"] }).verdict).toBe("pass");
    expect(changedFiles(wrote(["/etc/passwd"], "/work/app"), { exclude: ["/etc/**"] }).verdict).toBe("fail");
    // A sibling directory sharing the project's name as a prefix is outside it.
    expect(changedFiles(wrote(["/work/app2/src/a.ts"], "/work/app"), { only: ["src/**"] }).verdict).toBe(
      "fail",
    );
  });

  test("project directory unknown: relative paths are decided, absolute ones cannot satisfy only", () => {
    const r = changedFiles(wrote(["/home/u/app/src/a.ts"]), { only: ["src/**"] });
    expect(r.verdict).toBe("error");
    expect(r.message).toBe(
      "cannot place /home/u/app/src/a.ts in the project (the session's project directory is unknown) to check only src/**",
    );
    expect(changedFiles(wrote(["src/a.ts"]), { only: ["src/**"] }).verdict).toBe("pass");
    // No placement of the path could match: a definite failure, not "could not evaluate".
    expect(changedFiles(wrote(["/home/u/app/docs/a.md"]), { only: ["src/**"] }).verdict).toBe("fail");
    // A definite violation wins over a path that cannot be placed.
    const both = wrote(["/home/u/app/src/a.ts", "package.json"]);
    expect(changedFiles(both, { only: ["src/**"] }).verdict).toBe("fail");
    expect(changedFiles(wrote(["/home/u/app/src/a.ts"]), { include: ["src/a.ts"] }).verdict).toBe("error");
    expect(changedFiles(wrote(["/home/u/app/src/a.ts"]), { exclude: ["*.md"] }).verdict).toBe("pass");
    expect(changedFiles(wrote(["src/a.ts"]), { include: ["/abs/src/a.ts"] }).verdict).toBe("error");
  });

  test("Windows paths: backslashes, and drive letters in either case", () => {
    const t = wrote(["c:\\Users\\u\\vault\\notes\\a.md"], "C:\\Users\\u\\vault");
    expect(changedFiles(t, { only: ["notes/**"] }).verdict).toBe("pass");
    expect(
      changedFiles(wrote(["C:\\Users\\u\\.claude\\plans\\p.md"], "C:\\Users\\u\\vault"), { only: ["**"] })
        .verdict,
    ).toBe("fail");
  });

  test("a real Claude Code session: its plan file outside the project does not satisfy only", async () => {
    await using home = await tempHome();
    const { trace: t, projectPath } = await claudeVaultSession(home.path);
    expect(projectPath).toBe("C:\\Users\\loganf\\Documents\\IDAHO-VAULT");
    expect(t.changedFiles).toEqual(["C:\\Users\\loganf\\.claude\\plans\\walk-the-path-of-lovely-lecun.md"]);
    const r = changedFiles({ ...t, projectPath }, { only: ["**/*.md"] });
    expect(r.verdict).toBe("fail");
    expect(r.message).toContain("is outside the project C:\\Users\\loganf\\Documents\\IDAHO-VAULT");
  });
});

describe("token budgets count every prompt token the model processed, cached ones included", () => {
  test("maxInput and maxTotal include cache reads and writes", () => {
    const t = trace({
      inputTokens: 818,
      cacheReadTokens: 3_600_000,
      cacheWriteTokens: 138_000,
      outputTokens: 9000,
    });
    const input = tokens(t, { maxInput: 200_000 });
    expect(input.verdict).toBe("fail");
    expect(input.message).toBe(
      "input tokens 3738818 (818 uncached, 3600000 cache read, 138000 cache write) > budget 200000",
    );
    expect(tokens(t, { maxTotal: 220_000 }).message).toBe(
      "total tokens 3747818 (818 uncached, 3600000 cache read, 138000 cache write, 9000 output) > budget 220000",
    );
    expect(tokens(t, { maxInput: 3_738_818, maxTotal: 3_747_818 }).verdict).toBe("pass");
  });

  test("a real Claude Code session is over a 200k input budget though its uncached input is 134", async () => {
    await using home = await tempHome();
    const { trace: t } = await claudeVaultSession(home.path);
    expect(t.inputTokens).toBe(134);
    expect(tokens(t, { maxInput: 200_000 }).verdict).toBe("fail");
    expect(tokens(t, { maxTotal: 220_000 }).verdict).toBe("fail");
  });
});

describe("ttft and duration bounds count requests with no first token and requests still open", () => {
  test("hung-request: the request open for 421 s fails ttft and model duration bounds", async () => {
    const t = await example("hung-request");
    const first = ttft(t, { max: 5000 });
    expect(first.verdict).toBe("fail");
    expect(first.seq).toBe(8);
    expect(first.message).toBe(
      "ttft ≥ 420500 ms > max 5000 ms for claude-sonnet-5 (no first token, still open) at seq 8",
    );
    const d = duration(t, { of: "model", max: 60_000 });
    expect(d.verdict).toBe("fail");
    expect(d.message).toBe(
      "model duration ≥ 420500 ms > max 60000 ms for claude-sonnet-5 (still open) at seq 8",
    );
  });

  test("long-refactor: the stream that stalled 300 s before its first token fails ttft", async () => {
    const t = await example("long-refactor");
    const r = ttft(t, { max: 5000 });
    expect(r.verdict).toBe("fail");
    expect(r.seq).toBe(29);
    expect(r.message).toContain("(no first token, before a stall error)");
  });

  test("an open request is aged at the fold's as-of time", () => {
    const ev = (type: string, seq: number, timestamp: number, f: Record<string, unknown> = {}) =>
      ({ type, id: `e${seq}`, seq, aggregateID: "s", timestamp, ...f }) as RolloutEvent;
    const events = [
      ev("turn.started", 1, 1000, { turnId: "t" }),
      ev("model.request", 2, 1000, { turnId: "t", provider: "p", model: "m", streamed: true }),
    ];
    expect(ttft(buildTrace("s", events, { now: 4000 }), { max: 5000 }).verdict).toBe("pass");
    expect(ttft(buildTrace("s", events, { now: 9000 }), { max: 5000 }).message).toContain("ttft ≥ 8000 ms");
  });

  test("a non-streamed request is not failed for lacking a first token; its duration still counts", () => {
    const t = trace({ models: [{ streamed: false, status: "in_flight", duration_ms: 90_000 }] });
    expect(ttft(t, { max: 5000 }).verdict).toBe("pass");
    expect(duration(t, { max: 60_000 }).verdict).toBe("fail");
    const failed = trace({
      models: [{ streamed: false, status: "error", errorKind: "provider", duration_ms: 90_000 }],
    });
    expect(ttft(failed, { max: 5000 }).verdict).toBe("pass");
  });

  test("an answered request whose first-token time was not recorded (imported logs) is not counted", () => {
    const t = trace({ models: [{ status: "ok", duration_ms: 90_000 }] });
    expect(ttft(t, { max: 5000 }).verdict).toBe("pass");
    expect(ttft(t, { p95: 5000 }).verdict).toBe("error");
  });
});
