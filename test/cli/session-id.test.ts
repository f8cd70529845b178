/**
 * A session named by the start of its id (`cli/_session-id.ts`): commands that only read take any
 * start no other id shares; a start several ids share is refused with them named; an id that is
 * whole wins over longer ids it starts; commands that change a session take the whole id.
 */
import { expect, test } from "bun:test";
import { completeFrom } from "../../src/cli/_session-id.ts";
import { parseJson, runCli, tempHome } from "../_helpers.ts";

test("completeFrom: whole ids first, a unique start, several refused, none left as typed", () => {
  const ids = ["claude-3f2a-1", "claude-3f2b-2", "codex-9", "codex-9x"];
  expect(completeFrom(ids, "claude-3f2a")).toBe("claude-3f2a-1");
  expect(completeFrom(ids, "codex-9")).toBe("codex-9");
  expect(completeFrom(ids, "gemini")).toBe("gemini");
  expect(() => completeFrom(ids, "claude-3f")).toThrow(
    '"claude-3f" is the start of 2 session ids (claude-3f2a-1, claude-3f2b-2): give more of it',
  );
  const many = Array.from({ length: 8 }, (_, i) => `s-${i}`);
  expect(() => completeFrom(many, "s-")).toThrow("(s-0, s-1, s-2, s-3, s-4, and 3 more)");
});

test("read commands take a unique start of an id; a shared start is exit 2; changes take the whole id", async () => {
  await using home = await tempHome();
  const h = { home: home.path };
  for (const id of ["claude-3f2a0000-aaaa", "claude-3f2b0000-bbbb"])
    runCli(
      [
        "session",
        "create",
        "--id",
        id,
        "--project",
        home.path,
        "--title",
        `title of ${id}`,
        "--prompt",
        "hi",
      ],
      h,
    );
  // A log with no session: the rollout commands find it by its start too.
  runCli(["rollout", "append", "rolled-9c41"], {
    ...h,
    stdin: '{"type":"turn.started","turnId":"t1"}\n{"type":"function.call","tool":"bash","callId":"c1"}\n',
  });
  const meta = parseJson<{ meta: { id: string } }>(runCli(["session", "show", "claude-3f2a", "--json"], h));
  expect(meta.meta.id).toBe("claude-3f2a0000-aaaa");
  expect(runCli(["session", "show", "claude-3f2b", "--turns"], h).stdout).toContain("claude-3f2b0000-bbbb");
  const doc = parseJson<{ meta: { id: string } }>(runCli(["session", "export", "claude-3f2b"], h));
  expect(doc.meta.id).toBe("claude-3f2b0000-bbbb");
  expect(parseJson<{ id: string }>(runCli(["session", "snapshots", "claude-3f2a", "--json"], h)).id).toBe(
    "claude-3f2a0000-aaaa",
  );
  expect(parseJson<{ sessionId: string }>(runCli(["trace", "rolled", "--json"], h)).sessionId).toBe(
    "rolled-9c41",
  );
  expect(parseJson<{ sessionId: string }>(runCli(["replay", "rolled", "--json"], h)).sessionId).toBe(
    "rolled-9c41",
  );
  expect(
    parseJson<{ sessions: { sessionId: string }[] }>(runCli(["usage", "rolled", "--json"], h)).sessions.map(
      (s) => s.sessionId,
    ),
  ).toEqual(["rolled-9c41"]);
  const cat = runCli(["rollout", "cat", "rolled", "--json"], h);
  expect(parseJson<{ sessionId: string; events: unknown[] }>(cat)).toMatchObject({
    sessionId: "rolled-9c41",
  });
  expect(
    parseJson<{ sessionId: string; ok: boolean }>(runCli(["rollout", "verify", "rolled", "--json"], h)),
  ).toMatchObject({
    sessionId: "rolled-9c41",
    ok: true,
  });
  expect(runCli(["eval", "add", "rolled"], h).stdout).toContain("rolled-9c41");
  // Shared by both sessions: refused, both named.
  const shared = runCli(["session", "show", "claude-3f"], h);
  expect(shared.code).toBe(2);
  expect(shared.stderr).toContain(
    '"claude-3f" is the start of 2 session ids (claude-3f2a0000-aaaa, claude-3f2b0000-bbbb): give more of it',
  );
  // No id starts so: not found, as before.
  // Commands that change a session, when they only show it (no flags), read like the others.
  expect(runCli(["session", "title", "claude-3f2a"], h).stdout).toBe(
    "title of claude-3f2a0000-aaaa\t(user)\n",
  );
  expect(parseJson<{ id: string }>(runCli(["session", "tag", "claude-3f2b", "--json"], h)).id).toBe(
    "claude-3f2b0000-bbbb",
  );
  expect(runCli(["session", "tag", "claude-3f2b", "--add", "x"], h).code).toBe(3);
  // A command about sessions completes among sessions: a log alone is none.
  const logStart = runCli(["session", "show", "rolled-9c"], h);
  expect([logStart.code, logStart.stderr.trim()]).toEqual([3, "[error] no session rolled-9c"]);
  runCli(["rollout", "append", "claude-3f2b-log"], { ...h, stdin: '{"type":"turn.started","turnId":"t"}\n' });
  expect(parseJson<{ id: string }>(runCli(["session", "tag", "claude-3f2b", "--json"], h)).id).toBe(
    "claude-3f2b0000-bbbb",
  );
  // A log's whole id, given to a command about sessions: no hint that it "starts" itself, but
  // where its turns are.
  const logOnly = runCli(["session", "show", "rolled-9c41"], h);
  expect([logOnly.code, logOnly.stderr.trim()]).toEqual([
    3,
    "[error] no session rolled-9c41: only its rollout log is stored (`freecode session show rolled-9c41 --turns`, `freecode trace rolled-9c41`)",
  ]);
  const none = runCli(["session", "show", "nothing-like-it"], h);
  expect([none.code, none.stderr.includes("no session nothing-like-it")]).toEqual([3, true]);
  // A change takes the whole id.
  const rename = runCli(["session", "rename", "claude-3f2a", "new title"], h);
  expect([rename.code, rename.stderr.trim()]).toEqual([
    3,
    "[error] no session claude-3f2a (it is the start of claude-3f2a0000-aaaa: a command that changes a session takes its whole id)",
  ]);
  expect(
    parseJson<{ meta: { title: string } }>(runCli(["session", "show", "claude-3f2a", "--json"], h)).meta
      .title,
  ).toBe("title of claude-3f2a0000-aaaa");
});
