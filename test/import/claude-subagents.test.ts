/**
 * Claude Code's three subagent layouts, from the real corpus: inline `isSidechain` entries (≤ 1.0.x:
 * one child per sidechain root), `agent-<id>.jsonl` beside the sessions (2.0.x) and
 * `<sessionId>/subagents/agent-<id>.jsonl` (2.1.x, with its `.meta.json`). Each becomes a child
 * session linked by `parentId` to the session its entries name. The expectations are counted from
 * the raw files here.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CORPUS, tempHome } from "../_helpers.ts";
import { importOne } from "./_corpus.ts";
import { sessionsIn } from "./_store.ts";

type Entry = {
  uuid?: string;
  parentUuid?: string | null;
  isSidechain?: boolean;
  sessionId?: string;
  agentId?: string;
};
const entries = (path: string): Entry[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);

describe("claude subagents", () => {
  test("inline sidechains: one child session per sidechain root, linked to the session", async () => {
    const file = join(
      CORPUS,
      "claude",
      "d-kimuson_claude-code-viewer",
      "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    );
    const raw = entries(file);
    const side = raw.filter((e) => e.isSidechain === true);
    const sideIds = new Set(side.map((e) => e.uuid));
    const roots = side.filter((e) => !e.parentUuid || !sideIds.has(e.parentUuid));
    expect(roots.length).toBe(5);

    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "claude", file);
    const sessions = await sessionsIn(adapter);
    await adapter.close();
    const main = sessions.find((s) => s.meta.source?.id === "fe5e1c67-53e7-4862-81ae-d0e013e3270b")!;
    expect(main.meta.parentId).toBeUndefined();
    const children = sessions.filter((s) => s.meta.parentId === main.meta.id);
    expect(children.length).toBe(roots.length);
    expect(sessions.length).toBe(1 + roots.length);
    for (const c of children) expect(c.messages.length).toBeGreaterThan(0);
  });

  test("2.0.x agent-<id>.jsonl: a child of the session its entries name", async () => {
    const file = join(CORPUS, "claude", "brian-ln_agentic-primer", "agent-a0294d5.jsonl");
    const named = [...new Set(entries(file).map((e) => e.sessionId))];
    expect(named).toEqual(["a6214a01-0396-4893-b5ef-eac084cb9ff6"]);

    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "claude", file);
    const sessions = await sessionsIn(adapter);
    await adapter.close();
    expect(sessions.map((s) => [s.meta.parentId, s.meta.source?.agentId])).toEqual([
      [`claude-${named[0]}`, "a0294d5"],
    ]);
  });

  test("2.1.x <session>/subagents/agent-<id>.jsonl: a child of that session, titled from its meta.json", async () => {
    const project = join(CORPUS, "claude", "laf-us_idaho-vault", "c--Users-loganf-Documents-IDAHO-VAULT");
    const parent = "ad723d79-d1aa-4c89-9a82-926c1918e7ee";
    const meta = JSON.parse(
      readFileSync(join(project, parent, "subagents", "agent-a7ca5b34b59e4a24b.meta.json"), "utf8"),
    ) as { agentType: string; description: string };

    await using home = await tempHome();
    const { adapter } = await importOne(home.path, "claude", project);
    const sessions = await sessionsIn(adapter);
    await adapter.close();
    const parentSession = sessions.find((s) => s.meta.source?.id === parent)!;
    const children = sessions.filter((s) => s.meta.parentId === parentSession.meta.id);
    expect(children.map((c) => [c.meta.source?.agentId, c.meta.title])).toEqual([
      ["a7ca5b34b59e4a24b", `${meta.agentType}: ${meta.description}`],
    ]);
    expect(children[0]!.messages.length).toBeGreaterThan(0);
  });
});
