/**
 * Codex CLI conformance: every rollout in corpus/codex imports, and tool calls, tool errors,
 * denied calls, compactions and total tokens match a count over the raw lines written here.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { CORPUS, tempHome } from "../_helpers.ts";
import type { Raw } from "./_corpus.ts";
import {
  checkCallOrder,
  checkEval,
  checkTraces,
  importOne,
  rawLines,
  sessionsFrom,
  type Tally,
  tallyRollouts,
  zero,
} from "./_corpus.ts";

const files = [...new Bun.Glob("*.jsonl").scanSync(join(CORPUS, "codex"))].sort();
const CALL_TYPES = ["function_call", "custom_tool_call", "local_shell_call", "web_search_call"];

/** Did this output fail? Exit status from the *_end event if Raw, else what the text says. */
function rawFailed(output: unknown, end: Raw): boolean {
  if (end?.type === "exec_command_end") return end.exit_code !== 0;
  if (end?.type === "mcp_tool_call_end") return end.result?.Err !== undefined;
  const text = typeof output === "string" ? output : JSON.stringify(output);
  try {
    const code = JSON.parse(text)?.metadata?.exit_code;
    if (typeof code === "number") return code !== 0;
  } catch {}
  const header = text.match(/^Exit code: (-?\d+)/m);
  if (header) return header[1] !== "0";
  return text.split("\n").includes("aborted by user") || text.trim() === "aborted";
}

async function rawTally(path: string): Promise<Tally> {
  const t = zero();
  const lines = await rawLines(path);
  const ends = new Map<string, Raw>();
  for (const l of lines)
    if (l.type === "event_msg" && l.payload.call_id && l.payload.type.endsWith("_end"))
      ends.set(l.payload.call_id, l.payload);
  // Turns that held only a command the user ran (`!ls`): the harness's copies of it and of the
  // abort, and the command's own end. Such a turn is not the agent's, nor is its abort.
  const shellOnly = new Set<string>();
  let turn: { id: string; agents: boolean } | undefined;
  for (const l of lines) {
    const p = l.payload ?? {};
    if (l.type === "event_msg" && (p.type === "task_started" || p.type === "turn_started")) {
      if (turn && !turn.agents) shellOnly.add(turn.id);
      turn = { id: p.turn_id, agents: false };
    } else if (turn && l.type === "event_msg" && p.type === "turn_aborted") {
      if (!turn.agents) shellOnly.add(turn.id);
    } else if (turn) {
      const text = l.type === "response_item" && p.type === "message" ? JSON.stringify(p.content ?? "") : "";
      const harness =
        p.role === "user" &&
        /^\[\{"type":"input_text","text":"<(user_shell_command|turn_aborted)>/.test(text);
      const userShell = l.type === "event_msg" && p.source === "user_shell";
      if (!harness && !userShell && !(l.type === "event_msg" && p.type === "token_count")) turn.agents = true;
    }
  }
  let lastTotal = 0;
  for (const l of lines) {
    const p = l.payload ?? {};
    if (l.type === "response_item" && CALL_TYPES.includes(p.type)) t.toolCalls++;
    if (
      l.type === "response_item" &&
      (p.type === "function_call_output" || p.type === "custom_tool_call_output")
    ) {
      const text = typeof p.output === "string" ? p.output : JSON.stringify(p.output);
      if (/rejected by (the )?user/i.test(text.slice(0, 200))) t.denied++;
      else if (rawFailed(p.output, ends.get(p.call_id))) t.toolErrors++;
    }
    if (l.type === "compacted") t.compactions++;
    if (l.type === "event_msg" && p.type === "error") t.modelErrors++;
    if (l.type === "event_msg" && p.type === "turn_aborted" && !shellOnly.has(p.turn_id)) t.aborts++;
    if (l.type === "event_msg" && p.type === "token_count" && p.info)
      lastTotal = p.info.total_token_usage.total_tokens;
  }
  t.tokens = lastTotal; // cumulative: the last one is the session's total
  return t;
}

/**
 * The raw model time: each response (a token count whose cumulative total moved) timed from the
 * last thing its request was sent after — a prompt, a turn's start, a tool's output, or the end of
 * the response before.
 */
function rawModelMs(lines: Raw[]): number {
  let start: number | undefined;
  let prev: number | undefined;
  let sum = 0;
  for (const l of lines) {
    const p = l.payload ?? {};
    const at = Date.parse(l.timestamp);
    if (["user_message", "task_started", "function_call_output", "custom_tool_call_output"].includes(p.type))
      start = at;
    if (l.type === "event_msg" && p.type === "token_count" && p.info) {
      const total = p.info.total_token_usage.total_tokens;
      if (total !== prev && start !== undefined) {
        sum += at - start;
        start = at;
      }
      prev = total;
    }
  }
  return sum;
}

describe("codex corpus conformance", () => {
  test("the corpus has the files this suite expects", () => expect(files.length).toBe(3));

  test("the corpus exercises provider errors and interrupted turns", async () => {
    let errors = 0;
    let aborts = 0;
    for (const rel of files) {
      const t = await rawTally(join(CORPUS, "codex", rel));
      errors += t.modelErrors;
      aborts += t.aborts;
    }
    // One more abort ends a turn of only a user's `!` command: not the agent's (see `rawTally`).
    expect([errors, aborts]).toEqual([2, 1]);
  });

  for (const rel of files) {
    test(rel, async () => {
      await using home = await tempHome();
      const path = join(CORPUS, "codex", rel);
      const { adapter, report } = await importOne(home.path, "codex", path);
      expect(report.sources[0]!.warnings).toEqual([]);
      const ids = await sessionsFrom(adapter, path);
      expect(ids.length).toBe(1);
      const got = await tallyRollouts(adapter, ids);
      expect(got).toEqual(await rawTally(path));
      await checkTraces(adapter, ids, got);
      const order = (await rawLines(path))
        .filter((l) => l.type === "response_item" && CALL_TYPES.includes(l.payload?.type))
        .map((l) => String(l.payload.call_id));
      expect(await checkCallOrder(adapter, ids, order)).toBeGreaterThan(0);
      // Model time: Codex writes copies of a response's items, and token counts that repeat, while
      // it streams; a response timed from those took milliseconds (29 s of a rollout's 219 s).
      let modelMs = 0;
      const errorMs: number[] = [];
      for await (const r of adapter.readEvents(ids[0]!)) {
        if (r.event?.type === "model.response") modelMs += Number(r.event.duration_ms ?? 0);
        // A request that failed (a 429) took time too: it was timed from its own error line.
        if (r.event?.type === "model.error") errorMs.push(Number(r.event.duration_ms));
      }
      expect(modelMs).toBe(rawModelMs(await rawLines(path)));
      for (const ms of errorMs) expect(ms).toBeGreaterThan(0);
      await checkEval(adapter, home.path, 1);
      await adapter.close();
    });
  }

  test("a thread_spawn subagent links to its parent thread", async () => {
    await using home = await tempHome();
    const path = join(CORPUS, "codex", files.find((f) => f.includes("019d781a"))!);
    const { adapter } = await importOne(home.path, "codex", path);
    const meta = await adapter.getMeta("codex-019d781a-be34-7041-abb1-577f9360b907");
    expect(meta?.parentId).toBe("codex-019d50e7-0024-70b2-ad77-923977703877");
    expect(meta?.projectPath).toBe("C:\\Users\\loganf\\Documents\\IDAHO-VAULT");
    await adapter.close();
  });
});
