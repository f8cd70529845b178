/**
 * Claude Code conformance: every transcript in corpus/claude imports, and the rollout's tool calls,
 * tool errors, denied calls, compactions, total tokens, API errors and interrupted turns equal an
 * independent count over the raw JSON — counted here from the lines, not through the importer's code.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { StorageAdapter } from "../../src/storage/contract.ts";
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

const files = [...new Bun.Glob("**/*.jsonl").scanSync(join(CORPUS, "claude"))].sort();
const DENIAL = /^The user doesn't want to (proceed with this tool use|take this action)/;
const INTERRUPTED = /^\[Request interrupted by user/;

/** The raw count: tool_use ids, error results, refusals, compact boundaries, usage per message.id. */
async function rawTally(path: string): Promise<Tally> {
  const t = zero();
  const calls = new Set<string>();
  const usageByResponse = new Map<string, Record<string, number>>();
  for (const e of await rawLines(path)) {
    const content = e.message?.content;
    if (e.type === "assistant" && Array.isArray(content)) {
      for (const b of content) if (b.type === "tool_use" || b.type === "server_tool_use") calls.add(b.id);
      // One line per content block, each repeating usage: the last line of a response has the final one.
      if (!e.isApiErrorMessage && e.message.usage) usageByResponse.set(e.message.id, e.message.usage);
    }
    if (e.type === "user" && Array.isArray(content)) {
      for (const b of content) {
        if (b.type !== "tool_result") continue;
        const text =
          typeof b.content === "string"
            ? b.content
            : (b.content ?? []).map((c: Raw) => c.text ?? "").join("\n");
        const refused = !!e.toolDenialKind || (b.is_error === true && DENIAL.test(text));
        if (refused) t.denied++;
        else if (b.is_error === true) t.toolErrors++;
        // Esc during a tool: the result says so, and the turn ends there.
        if (!refused && calls.has(b.tool_use_id) && INTERRUPTED.test(text)) t.aborts++;
      }
    }
    if (e.type === "user") {
      // Esc while the model streams: a user line of just that text.
      const typed =
        typeof content === "string"
          ? content
          : Array.isArray(content)
            ? content
                .filter((b: Raw) => b.type === "text")
                .map((b: Raw) => b.text)
                .join("\n")
            : "";
      if (INTERRUPTED.test(typed)) t.aborts++;
    }
    if (e.type === "assistant" && e.isApiErrorMessage === true) t.modelErrors++;
    if (e.type === "system" && e.subtype === "api_error") t.modelErrors++;
    if (e.type === "system" && (e.subtype === "compact_boundary" || e.subtype === "microcompact_boundary"))
      t.compactions++;
  }
  t.toolCalls = calls.size;
  for (const u of usageByResponse.values()) {
    t.tokens +=
      (u.input_tokens ?? 0) +
      (u.output_tokens ?? 0) +
      (u.cache_creation_input_tokens ?? 0) +
      (u.cache_read_input_tokens ?? 0);
  }
  return t;
}

/** The tool_use ids in the order the transcript has them: the order the model made the calls in. */
async function rawCallOrder(path: string): Promise<string[]> {
  const order: string[] = [];
  for (const e of await rawLines(path))
    if (e.type === "assistant" && Array.isArray(e.message?.content))
      for (const b of e.message.content) if (b.type === "tool_use" && !order.includes(b.id)) order.push(b.id);
  return order;
}

/**
 * For each tool_use id, the ordinal (from 1) of the response that made it among the file's
 * responses (distinct `message.id`s of assistant lines, in file order).
 */
async function rawResponseOrdinals(path: string): Promise<Map<string, number>> {
  const responses = new Map<string, number>();
  const calls = new Map<string, number>();
  for (const e of await rawLines(path)) {
    if (e.type !== "assistant" || !Array.isArray(e.message?.content)) continue;
    if (!responses.has(e.message.id)) responses.set(e.message.id, responses.size + 1);
    for (const b of e.message.content)
      if (b.type === "tool_use" && !calls.has(b.id)) calls.set(b.id, responses.get(e.message.id)!);
  }
  return calls;
}

/**
 * A call is logged after the request of the response that made it: at each `function.call`, the
 * log holds at least as many `model.request`s as that response's ordinal. (Claude Code runs a
 * tool while its response still streams; the request used to be written when the response ended,
 * after the calls.) Returns how many calls were checked.
 */
async function checkRequestsFirst(adapter: StorageAdapter, id: string, path: string): Promise<number> {
  const ordinal = await rawResponseOrdinals(path);
  let requests = 0;
  let checked = 0;
  for await (const r of adapter.readEvents(id)) {
    const e = r.event!;
    if (e.type === "model.request") requests++;
    const n = e.type === "function.call" ? ordinal.get(String(e.callId)) : undefined;
    if (n === undefined) continue;
    expect({ call: e.callId, requests }).toEqual({ call: e.callId, requests: Math.max(requests, n) });
    checked++;
  }
  return checked;
}

let compared = 0;
let requestsChecked = 0;

describe("claude corpus conformance", () => {
  test("the corpus has the files this suite expects", () => {
    expect(files.length).toBe(7);
  });

  for (const rel of files) {
    test(rel, async () => {
      await using home = await tempHome();
      const path = join(CORPUS, "claude", rel);
      const { adapter, report } = await importOne(home.path, "claude", path);
      expect(report.sources[0]!.warnings).toEqual([]);
      const ids = await sessionsFrom(adapter, path);
      expect(ids.length).toBeGreaterThan(0);
      const raw = await rawTally(path);
      const got = await tallyRollouts(adapter, ids);
      expect(got).toEqual(raw);
      await checkTraces(adapter, ids, got);
      compared += await checkCallOrder(adapter, ids, await rawCallOrder(path));
      if (ids.length === 1) requestsChecked += await checkRequestsFirst(adapter, ids[0]!, path);
      await checkEval(adapter, home.path, ids.length);
      await adapter.close();
    });
  }

  test("the real corpus exercises denials, errors, compaction, API errors and subagents", async () => {
    const sum = zero();
    for (const rel of files) {
      const r = await rawTally(join(CORPUS, "claude", rel));
      for (const k of Object.keys(sum) as (keyof Tally)[]) sum[k] += r[k];
    }
    expect(sum.denied).toBe(7);
    expect(sum.compactions).toBe(2);
    expect(sum.toolErrors).toBeGreaterThan(20);
    // Two API errors; no interrupt in this corpus (parts.test.ts adds one to a real transcript).
    expect([sum.modelErrors, sum.aborts]).toEqual([2, 0]);
  });

  test("calls are in the order the model made them: results came out of order in 10 responses", () => {
    // Set by the tests above (each file's spans compared with its tool_use order).
    expect(compared).toBeGreaterThan(250);
  });

  test("each call comes after the request of the response that made it", () => {
    // Set by the tests above (files that import as one session).
    expect(requestsChecked).toBeGreaterThan(100);
  });
});
