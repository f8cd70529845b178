import { describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runEval } from "../../src/eval/runner.ts";
import { openStore } from "../../src/storage/select.ts";
import { CORPUS, ROOT, tempDir, tempHome } from "../_helpers.ts";

const EXAMPLES = join(ROOT, "examples");

/** A small rollout: one read, one edit of `file`, then (optionally) session.ended. */
function rollout(id: string, t0: number, opts: { ended?: boolean; file?: string } = {}): string {
  let seq = 0;
  const ev = (type: string, dt: number, f: Record<string, unknown> = {}) =>
    JSON.stringify({ type, id: `e${seq + 1}`, seq: ++seq, aggregateID: id, timestamp: (t0 += dt), ...f });
  const lines = [
    ev("turn.started", 0, { turnId: "t" }),
    ev("function.call", 5, { turnId: "t", tool: "read", args: { path: "a.ts" }, callId: "c1" }),
    ev("function.output", 5, { turnId: "t", tool: "read", callId: "c1", duration_ms: 5 }),
    ev("function.call", 5, {
      turnId: "t",
      tool: "edit",
      args: { path: opts.file ?? "src/a.ts" },
      callId: "c2",
    }),
    ev("function.output", 5, { turnId: "t", tool: "edit", callId: "c2", duration_ms: 5 }),
  ];
  if (opts.ended !== false) lines.push(ev("session.ended", 5, { reason: "exit" }));
  return `${lines.join("\n")}\n`;
}

function writeSession(dir: string, id: string, text: string, meta?: Record<string, unknown>) {
  mkdirSync(join(dir, id), { recursive: true });
  writeFileSync(join(dir, id, "events.jsonl"), text);
  if (meta) {
    const base = {
      id,
      title: id,
      projectPath: "/w/app",
      status: "idle",
      createdAt: 0,
      updatedAt: 0,
      turnCount: 1,
      messageCount: 1,
    };
    writeFileSync(join(dir, id, "meta.json"), JSON.stringify({ ...base, ...meta }));
  }
}

describe("runEval", () => {
  test("the bundled examples: one deliberate failure, everything else passes, exit 1", async () => {
    const r = await runEval({ cases: [join(EXAMPLES, "cases")], sessions: join(EXAMPLES, "rollouts") });
    expect(r.exitCode).toBe(1);
    expect(r.cases.filter((c) => c.verdict !== "pass").map((c) => c.id)).toEqual(["demo-deliberate-failure"]);
    expect(r.sessionsFolded).toBe(6); // each session folded once, though several cases select it
  });

  test("worker processes give the same report as one process", async () => {
    const opts = { cases: [join(EXAMPLES, "cases")], sessions: join(EXAMPLES, "rollouts") };
    const [one, two] = [await runEval(opts), await runEval({ ...opts, parallelThreshold: 1, workers: 2 })];
    expect(two.processes).toBe(2);
    expect(JSON.stringify(two.cases)).toBe(JSON.stringify(one.cases));
  });

  test("a memory store is folded in this process even with workers: 2 (a child would find it empty)", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("memory", { home: home.path });
    for (const id of ["a", "b", "c"]) {
      await adapter.appendEvents(id, [
        { type: "turn.started", turnId: "t", timestamp: 1_000 },
        { type: "session.ended", reason: "exit", timestamp: 2_000 },
      ] as never);
    }
    const cases = join(home.path, "c.yaml");
    writeFileSync(cases, "id: few-turns\nsessions: all\nexpect:\n  - turns: { max: 5 }\n");
    const store = { adapter, name: "memory", home: home.path };
    const r = await runEval({ cases: [cases], store, workers: 2, parallelThreshold: 1 });
    await adapter.close();
    expect(r.processes).toBe(1);
    expect(r.sessionsFolded).toBe(3);
    expect(r.cases[0]).toMatchObject({ verdict: "pass", counts: { sessions: 3, passed: 3 } });
  });

  test("regression: workers open the store the adapter is, when no name is given (they opened the default store, and found every log empty)", async () => {
    await using home = await tempHome();
    for (const name of ["sqlite", "memory"] as const) {
      const { adapter } = await openStore(name, { home: home.path });
      for (const id of ["a", "b", "c"]) {
        await adapter.appendEvents(`${name}-${id}`, [
          { type: "turn.started", turnId: "t", timestamp: 1_000 },
          { type: "session.ended", reason: "exit", timestamp: 2_000 },
        ] as never);
      }
      const cases = join(home.path, "c.yaml");
      writeFileSync(cases, "id: few-turns\nsessions: all\nexpect:\n  - turns: { max: 5 }\n");
      const r = await runEval({
        cases: [cases],
        store: { adapter, home: home.path },
        workers: 2,
        parallelThreshold: 1,
      });
      await adapter.close();
      expect([name, r.processes, r.cases[0]?.verdict, r.cases[0]?.counts.passed]).toEqual([
        name,
        name === "memory" ? 1 : 2,
        "pass",
        3,
      ]);
    }
  });

  test('regression: an agent\'s own transcript given as a rollout log says it holds no rollout event and how to import it (it said only "has no events")', async () => {
    await using dir = await tempDir();
    const raw = join(dir.path, "raw");
    mkdirSync(raw);
    cpSync(
      join(CORPUS, "claude", "drmaciver_claude-reliability", "coverage-test-fix.transcript.jsonl"),
      join(raw, "t.jsonl"),
    );
    writeFileSync(join(dir.path, "c.yaml"), "id: x\nsessions: all\nexpect: [{noHung: true}]\n");
    const r = await runEval({ cases: [join(dir.path, "c.yaml")], sessions: raw });
    const error = r.cases[0]!.sessions[0]!.error!;
    expect(error).toStartWith(`the rollout log ${join(raw, "t.jsonl")} holds no rollout event: line 1: `);
    expect(error).toEndWith(
      "(an agent's own transcript? `freecode import auto <path>` makes a session and a rollout log of it)",
    );
    expect(r.exitCode).toBe(2);
  });

  test("missing, corrupt and still-running sessions could not be evaluated (exit 2), apart from failures", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    writeSession(rollouts, "good", rollout("good", 1_000));
    writeSession(rollouts, "corrupt", `${rollout("corrupt", 1_000).trimEnd()}\n{"type": oops}\n`);
    writeSession(rollouts, "running", rollout("running", Date.now() - 1_000, { ended: false }));
    // A writer whose clock runs ahead: as fresh (it was evaluated mid-run).
    writeSession(rollouts, "ahead", rollout("ahead", Date.now() + 10_000, { ended: false }));
    writeFileSync(
      join(dir.path, "c.yaml"),
      "id: ok\nsessions: [good]\nexpect:\n  - expectTool: edit\n---\nid: bad\nsessions: [good, nope, corrupt, running, ahead]\nexpect:\n  - expectTool: edit\n---\nid: failing\nsessions: [good]\nexpect:\n  - forbidTools: [edit]\n",
    );
    const r = await runEval({ cases: [join(dir.path, "c.yaml")], sessions: rollouts });
    const byId = Object.fromEntries(r.cases.map((c) => [c.id, c]));
    expect(byId.ok!.verdict).toBe("pass");
    expect(byId.failing!.verdict).toBe("fail");
    expect(byId.bad!.verdict).toBe("error");
    const errors = Object.fromEntries(byId.bad!.sessions.map((s) => [s.sessionId, s.error]));
    expect(errors.good).toBeUndefined();
    expect(errors.nope).toBe("no rollout log for session nope");
    // Named by its file (regression: "corrupt rollout log: line 7" did not say which of the folder's logs).
    expect(errors.corrupt).toStartWith(
      `corrupt rollout log ${join(rollouts, "corrupt", "events.jsonl")}: line 7: `,
    );
    expect(errors.running).toMatch(/looks still running/);
    expect(errors.ahead).toMatch(/looks still running \(last event \d+ s ahead of this clock/);
    expect(r.exitCode).toBe(2);
    const again = await runEval({
      cases: [join(dir.path, "c.yaml")],
      sessions: rollouts,
      evaluate: { includeRunning: true },
    });
    expect(again.cases[1]!.sessions.find((s) => s.sessionId === "running")!.verdict).toBe("pass");
  });

  test("a store's status decides whether a session runs: idle, crashed and imported sessions", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path });
    const now = Date.now();
    const msg = { id: "m1", role: "user", parts: [{ type: "text", text: "go" }], timestamp: now };
    const meta = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      title: id,
      projectPath: "/w/app",
      status: "idle",
      createdAt: now,
      updatedAt: now,
      turnCount: 0,
      messageCount: 0,
      ...extra,
    });
    const events = (id: string) =>
      adapter.appendEvents(id, [
        { type: "turn.started", turnId: "t", timestamp: now - 1_000 },
        {
          type: "function.call",
          turnId: "t",
          tool: "edit",
          args: { path: "a.ts" },
          callId: "c",
          timestamp: now - 900,
        },
        {
          type: "function.output",
          turnId: "t",
          tool: "edit",
          callId: "c",
          duration_ms: 5,
          timestamp: now - 800,
        },
      ] as never);
    // Idle, no session.ended, last event a second old: the store says it is not running.
    await adapter.createSession(meta("idle") as never, [msg as never]);
    // Left running by a process that is gone (pid 2^31-2 on this host): a crash.
    const dead = { pid: 2 ** 31 - 2, start: 1, host: (await import("node:os")).hostname() };
    await adapter.createSession(meta("crashed", { status: "running", owner: dead }) as never, [msg as never]);
    // Running by this very process: still running.
    const self = (await import("../../src/session/status.ts")).selfOwner();
    await adapter.createSession(meta("live", { status: "running", owner: self }) as never, [msg as never]);
    // An imported transcript: its agent never said; the last event's age decides.
    await adapter.createSession(meta("imported", { source: { agent: "claude", id: "x" } }) as never, [
      msg as never,
    ]);
    for (const id of ["idle", "crashed", "live", "imported"]) await events(id);
    const cases = join(home.path, "c.yaml");
    writeFileSync(cases, "id: edits\nsessions: all\nexpect:\n  - expectTool: edit\n");
    const r = await runEval({ cases: [cases], store: { adapter, name: "files", home: home.path } });
    await adapter.close();
    const byId = Object.fromEntries(r.cases[0]!.sessions.map((s) => [s.sessionId, s]));
    expect(byId.idle).toMatchObject({ verdict: "pass" });
    expect(byId.crashed).toMatchObject({ verdict: "pass" });
    expect(byId.live!.error).toBe("the session is still running (its status is running)");
    expect(byId.imported!.error).toMatch(/looks still running/);
  });

  test("regression: a soft-deleted session is selected only by its id — all, tags and project leave it out, as session list does (sessions: all failed a case on deleted sessions)", async () => {
    await using home = await tempHome();
    const { adapter } = await openStore("files", { home: home.path });
    const { deleteSession } = await import("../../src/session/lifecycle.ts");
    const t0 = Date.now() - 60_000;
    for (const id of ["kept", "gone"]) {
      const meta = { id, title: id, projectPath: "/w/app", status: "idle", tags: ["ci"], createdAt: t0 };
      await adapter.createSession({ ...meta, updatedAt: t0, turnCount: 1, messageCount: 0 } as never, []);
      await adapter.appendEvents(
        id,
        rollout(id, t0)
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l)),
      );
    }
    await deleteSession(adapter, "gone");
    const cases = join(home.path, "c.yaml");
    const selectors = [
      "all",
      "{tags: [ci]}",
      "{project: /w/app}",
      "[gone]",
      "{ids: [gone, kept], tags: [ci]}",
    ];
    writeFileSync(
      cases,
      selectors.map((s, i) => `id: c${i}\nsessions: ${s}\nexpect:\n  - expectTool: edit\n`).join("---\n"),
    );
    const r = await runEval({ cases: [cases], store: { adapter, name: "files", home: home.path } });
    await adapter.close();
    expect(r.cases.map((c) => c.sessions.map((s) => s.sessionId))).toEqual([
      ["kept"],
      ["kept"],
      ["kept"],
      ["gone"],
      ["gone", "kept"],
    ]);
  });

  test("selectors: title, tags, project, time range, path; an empty selection is not a pass", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    writeSession(rollouts, "a", rollout("a", Date.parse("2026-08-01T10:00:00Z")), {
      title: "Fix login",
      tags: ["ci"],
      createdAt: Date.parse("2026-08-01T10:00:00Z"),
    });
    writeSession(rollouts, "b", rollout("b", Date.parse("2026-08-03T10:00:00Z")), {
      title: "Refactor api",
      projectPath: "/w/other",
      createdAt: Date.parse("2026-08-03T10:00:00Z"),
    });
    writeSession(rollouts, "c", rollout("c", Date.parse("2026-08-05T10:00:00Z")));
    // A project path written with a trailing slash is the same project (it was selected by none).
    writeSession(rollouts, "d", rollout("d", Date.parse("2026-07-01T10:00:00Z")), { projectPath: "/w/app/" });
    cpSync(rollouts, join(dir.path, "cases", "own"), { recursive: true });
    const cases = {
      title: { title: "*login*" },
      regex: { title: "/^refactor/i" },
      tags: { tags: ["ci"] },
      project: { project: "/w/app" },
      since: { since: "2026-08-02" },
      window: { since: "2026-08-02", until: "2026-08-04T00:00:00Z" },
      path: { path: "own/c/events.jsonl" },
      nothing: { tags: ["nope"] },
    };
    mkdirSync(join(dir.path, "cases"), { recursive: true });
    writeFileSync(
      join(dir.path, "cases", "s.json"),
      JSON.stringify(
        Object.entries(cases).map(([id, sessions]) => ({ id, sessions, expect: [{ noHung: true }] })),
      ),
    );
    const r = await runEval({ cases: [join(dir.path, "cases", "s.json")], sessions: rollouts });
    const picked = Object.fromEntries(r.cases.map((c) => [c.id, c.sessions.map((s) => s.sessionId)]));
    expect(picked).toEqual({
      title: ["a"],
      regex: ["b"],
      tags: ["a"],
      project: ["a", "d"],
      since: ["b", "c"],
      window: ["b"],
      path: ["c"],
      nothing: [],
    });
    const nothing = r.cases.find((c) => c.id === "nothing")!;
    expect(nothing.verdict).toBe("error");
    expect(nothing.aggregates[0]!.message).toBe("the selector matched no recorded session");
  });

  test("a session that cannot be evaluated is left out when it started outside the time window", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    // A corrupt line mid-log: the fold fails, but it knows when the session started.
    writeSession(rollouts, "old", `${rollout("old", Date.parse("2026-08-01T10:00:00Z"))}{not json\n`);
    writeSession(rollouts, "new", rollout("new", Date.parse("2026-08-03T10:00:00Z")));
    const file = join(dir.path, "w.yaml");
    writeFileSync(file, 'id: recent\nsessions: { since: "2026-08-02" }\nexpect:\n  - noHung: true\n');
    const r = await runEval({ cases: [file], sessions: rollouts });
    expect(r.cases[0]!.sessions.map((s) => s.sessionId)).toEqual(["new"]);
    expect(r.cases[0]!.verdict).toBe("pass");
    // In the window, the same session is named as one that could not be evaluated.
    writeFileSync(file, 'id: all\nsessions: { since: "2026-07-01" }\nexpect:\n  - noHung: true\n');
    const all = await runEval({ cases: [file], sessions: rollouts });
    expect(all.cases[0]!.verdict).toBe("error");
  });

  test("a meta.json gives what it holds; the trace gives the project it omits; an unreadable one is named", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    // No meta: the trace says where it ran (its session.started).
    const events = rollout("traced", 1_000)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const first = {
      type: "session.started",
      id: "s0",
      seq: 1,
      aggregateID: "traced",
      timestamp: 999,
      reason: "new",
      projectPath: "/w/app",
    };
    const lines = [first, ...events.map((e) => ({ ...e, seq: e.seq + 1 }))].map((e) => JSON.stringify(e));
    writeSession(rollouts, "traced", `${lines.join("\n")}\n`);
    // A hand-written meta.json with a title and tags only.
    mkdirSync(join(rollouts, "tagged"), { recursive: true });
    writeFileSync(join(rollouts, "tagged", "events.jsonl"), rollout("tagged", 1_000));
    writeFileSync(
      join(rollouts, "tagged", "meta.json"),
      JSON.stringify({ title: "login fix", tags: ["ci"] }),
    );
    // One that cannot be read.
    mkdirSync(join(rollouts, "garbled"), { recursive: true });
    writeFileSync(join(rollouts, "garbled", "events.jsonl"), rollout("garbled", 1_000));
    writeFileSync(join(rollouts, "garbled", "meta.json"), '{"title": 5}');
    const file = join(dir.path, "m.yaml");
    writeFileSync(
      file,
      [
        "id: by-project\nsessions: { project: /w/app }\nexpect:\n  - noHung: true",
        "id: by-tag\nsessions: { tags: [ci] }\nexpect:\n  - noHung: true",
      ].join("\n---\n"),
    );
    const r = await runEval({ cases: [file], sessions: rollouts });
    const picked = Object.fromEntries(r.cases.map((c) => [c.id, c.sessions.map((s) => s.sessionId)]));
    expect(picked).toEqual({ "by-project": ["garbled", "traced"], "by-tag": ["garbled", "tagged"] });
    const garbled = r.cases[1]!.sessions.find((s) => s.sessionId === "garbled")!;
    expect(garbled.error).toContain("its meta.json cannot be read:");
    expect(garbled.error).toContain("Expected string but received 5 (field title)");
  });

  test("pass rate and pass^k over trials sharing a task id", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    writeSession(rollouts, "task-1", rollout("task-1", 1_000));
    writeSession(rollouts, "task-2", rollout("task-2", 1_000));
    writeSession(rollouts, "task-3", rollout("task-3", 1_000, { file: "package.json" }));
    const file = join(dir.path, "k.yaml");
    const body = "sessions: all\nexpect:\n  - changedFiles: { exclude: [package.json] }\n";
    writeFileSync(
      file,
      `id: strict\n${body}---\nid: rate\npassRate: 0.6\n${body}---\nid: k2\npassRate: 0.5\npassK: {k: 2, min: 0.5}\n${body}`,
    );
    const r = await runEval({ cases: [file], sessions: rollouts });
    const v = Object.fromEntries(r.cases.map((c) => [c.id, c.verdict]));
    expect(v).toEqual({ strict: "fail", rate: "pass", k2: "fail" });
    expect(r.cases[2]!.aggregates.find((a) => a.name === "passK")!.message).toBe(
      "pass^2 = 0.333 over 1 task (task 2/3), need ≥ 0.5",
    );
  });
});

describe("regression: pass^k paired sessions with the wrong refs when an id was missing", () => {
  test("regression: pass^k exactly at its bound passes (3 of 30 trials at 0.1 averaged to 0.09999999999999999 and failed)", async () => {
    await using dir = await tempDir();
    const rollouts = join(dir.path, "r");
    // Tasks ta, tb, tc of 10 trials each (task by trailing number); 3 of tc's edit the file asked for.
    for (const task of ["ta", "tb", "tc"])
      for (let i = 1; i <= 10; i++) {
        const id = `${task}-${i}`;
        writeSession(
          rollouts,
          id,
          rollout(id, 1_000, { file: task === "tc" && i <= 3 ? "src/ok.ts" : "src/a.ts" }),
        );
      }
    writeFileSync(
      join(dir.path, "k.yaml"),
      "id: k\npassRate: 0.1\npassK: {k: 1, min: 0.1}\nexpect:\n  - changedFiles: {include: [src/ok.ts]}\n",
    );
    const r = await runEval({ cases: [join(dir.path, "k.yaml")], sessions: rollouts });
    const k = r.cases[0]!.aggregates.find((a) => a.name === "passK")!;
    expect([k.verdict, k.message]).toEqual([
      "pass",
      "pass^1 = 0.100 over 3 tasks (ta 0/10, tb 0/10, tc 3/10), need ≥ 0.1",
    ]);
  });

  test("ids [fix-login-1, nope, fix-login-2, fix-login-3]: fix-login 3/3, and nope reported missing", async () => {
    await using dir = await tempDir();
    const file = join(dir.path, "k.yaml");
    writeFileSync(
      file,
      "id: k\nsessions: [fix-login-1, nope, fix-login-2, fix-login-3]\npassK: {k: 2, min: 0.5}\nexpect:\n  - noHung: true\n",
    );
    const r = await runEval({ cases: [file], sessions: join(EXAMPLES, "rollouts") });
    const c = r.cases[0]!;
    expect(c.aggregates.find((a) => a.name === "passK")!.message).toBe(
      "pass^2 = 1.000 over 1 task (fix-login 3/3), need ≥ 0.5",
    );
    expect(c.sessions.map((s) => [s.sessionId, s.verdict, s.error])).toEqual([
      ["nope", "error", "no rollout log for session nope"],
      ["fix-login-1", "pass", undefined],
      ["fix-login-2", "pass", undefined],
      ["fix-login-3", "pass", undefined],
    ]);
    expect(c.verdict).toBe("error");
  });
});

test("regression: a pass-rate bound reads the same in its label and its message (pass rate ≥ 66.7% stood beside need ≥ 66.67%), and the rate keeps to its side of it", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "rate.yaml");
  const body =
    "sessions: [fix-login-1, fix-login-2, fix-login-3]\nexpect:\n  - expectBashMatches: [npm test]\n";
  writeFileSync(
    file,
    ["0.6667", "0.6", "0.66", "1"].map((min, i) => `id: r${i}\npassRate: ${min}\n${body}`).join("---\n"),
  );
  const r = await runEval({ cases: [file], sessions: join(EXAMPLES, "rollouts") });
  const rates = r.cases.map((c) => c.aggregates.find((a) => a.name === "passRate")!);
  expect(rates.map((a) => [a.verdict, a.label, a.message])).toEqual([
    ["fail", "pass rate ≥ 66.67%", "2/3 sessions passed (66.667%), need ≥ 66.67%"],
    ["pass", "pass rate ≥ 60%", "2/3 sessions passed (66.7%), need ≥ 60%"],
    ["pass", "pass rate ≥ 66%", "2/3 sessions passed (66.7%), need ≥ 66%"],
    ["fail", "pass rate ≥ 100%", "2/3 sessions passed (66.7%), need ≥ 100%"],
  ]);
});

test("regression: a session id no log has is reported on the id's own line (it pointed at the case's first line)", async () => {
  await using dir = await tempDir();
  const file = join(dir.path, "ids.yaml");
  writeFileSync(
    file,
    [
      "id: listed\nsessions: [fix-login-1,\n  nope]\nexpect:\n  - noHung: true",
      "id: block\nsessions:\n  ids:\n    - fix-login-1\n    - gone\nexpect:\n  - noHung: true",
    ].join("\n---\n"),
  );
  const r = await runEval({ cases: [file], sessions: join(EXAMPLES, "rollouts") });
  expect(r.cases.map((c) => c.sessions.filter((s) => s.error).map((s) => [s.sessionId, s.line]))).toEqual([
    [["nope", 3]],
    [["gone", 11]],
  ]);
  const { renderGithub } = await import("../../src/eval/reporters/github.ts");
  expect(renderGithub(r, undefined)).toContain(",line=3,title=listed%3A session (could not evaluate)::");
});
