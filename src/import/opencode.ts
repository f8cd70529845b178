/**
 * OpenCode sessions → sessions + rollouts. OpenCode stores messages and their parts (text,
 * reasoning, tool, step-start/step-finish, compaction…); `opencode-source.ts` reads them from the
 * SQLite database, an `opencode export` document or a row dump into the normalised shape below.
 * Each `step-finish` part is one provider response with its own usage; a tool part's `state` says
 * whether the call completed, failed (`error`), or never finished (`pending`/`running`: the process
 * died mid-call, or it is still running).
 */

import type { DenySource } from "../rollout/events.ts";
import { recordedCost } from "../rollout/recorded-cost.ts";
import type { Part, StoredMessage } from "../storage/records.ts";
import { headOf } from "../util/cut-text.ts";
import { count, idleSince, newBuilderState, type ResponseUsage, SessionBuilder } from "./builder.ts";
import { sessionIdFor } from "./ids.ts";
import type { EntryCounts, ImportedSession, ImportWarning } from "./types.ts";
import { bump, unreadableEntry } from "./types.ts";

export interface OcSession {
  id: string;
  title?: string;
  directory?: string;
  parentId?: string;
  created?: number;
  updated?: number;
  version?: string;
  model?: { id?: string; providerID?: string };
}
type Obj = Record<string, unknown>;
export interface OcMessage {
  info: Obj & { id: string; role?: string };
  parts: (Obj & { id: string; type?: string })[];
}

const PLACEHOLDER_TITLE = /^(New session|Child session) - \d{4}-/;
const REJECTED = /^The user (rejected permission|dismissed)/;
const RULE_DENIED = /^The user has specified a rule which prevents/;
/** `state.error` is `error.toString()`: the message follows the class name (`Error: `,
 * `PermissionRejectedError: `…), and a denial is told by its message. */
const ERROR_CLASS = /^\w*Error:\s*/;

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);

type ToolState = Obj & { status?: string; input?: unknown; time?: { start?: number; end?: number } };

/** When a tool part's call started, if it never finished (`pending`, `running`). */
function openSince(part: Obj, at: number): number | undefined {
  const st = (part.state ?? {}) as ToolState;
  if (st.status === "completed" || st.status === "error") return undefined;
  return num(st.time?.start) || at;
}

/** The last change the session's records show. */
function lastActivity(s: OcSession, messages: OcMessage[]): number {
  let last = num(s.updated);
  for (const { info } of messages) {
    const time = (info.time ?? {}) as { created?: number; completed?: number };
    last = Math.max(last, num(time.created), num(time.completed));
  }
  return last;
}

/**
 * A step's cost as OpenCode recorded it, or undefined when it says nothing: OpenCode writes 0 for a
 * model its catalogue has no price for (a local model, a custom provider, a subscription login), so
 * a 0 for a step that used tokens is unknown, not free (`rollout/recorded-cost.ts`).
 */
function stepCost(cost: unknown, u: ResponseUsage | undefined): number | undefined {
  if (typeof cost !== "number" || !Number.isFinite(cost) || cost < 0) return undefined;
  return recordedCost({
    costUsd: cost,
    inputTokens: u?.input,
    outputTokens: u?.output,
    cacheReadTokens: u?.cacheRead,
    cacheWriteTokens: u?.cacheWrite,
  });
}

function usageOf(tokens: unknown): ResponseUsage | undefined {
  if (!tokens || typeof tokens !== "object") return undefined;
  const t = tokens as {
    input?: number;
    output?: number;
    reasoning?: number;
    cache?: { read?: number; write?: number };
  };
  // OpenCode counts reasoning apart from output; freecode's output is everything generated.
  return {
    input: count(t.input),
    output: count(t.output) + count(t.reasoning),
    reasoning: count(t.reasoning),
    cacheRead: count(t.cache?.read),
    cacheWrite: count(t.cache?.write),
  };
}

/** Derive one OpenCode session (the whole of it: OpenCode sources import in `full` mode). */
export function mapOpencodeSession(
  s: OcSession,
  messages: OcMessage[],
  /** `finished`: the agent is done (`import --finished`): the session is taken as idle. */
  opts: {
    path: string;
    redact?: boolean;
    counts: EntryCounts;
    warnings?: ImportWarning[];
    finished?: boolean;
  },
): ImportedSession {
  const state = newBuilderState(sessionIdFor("opencode", s.id));
  if (s.parentId) state.parentId = sessionIdFor("opencode", s.parentId);
  const b = new SessionBuilder(state, opts.redact === true);
  if (s.created) b.touch(s.created);
  let provider = s.model?.providerID;
  let model = s.model?.id;
  let lastContext = 0;
  const all: StoredMessage[] = [];
  // OpenCode runs one response at a time: a call left open is cut off once a later one began, or
  // once the whole session has gone idle.
  const lastResponse = messages.findLastIndex((m) => m.info.role === "assistant");
  const idle = opts.finished === true || idleSince(lastActivity(s, messages));
  for (const [i, { info, parts }] of messages.entries()) {
    try {
      if (userShell(messages[i - 1], info, parts)) {
        // A command the user ran (OpenCode's `!`): not the agent's call, as Codex's `!` is not.
        bump(opts.counts.skipped, "(user shell command)");
        continue;
      }
      // A user message whose parts are not written yet says nothing yet: stored bare, it counted as
      // a prompt for good (the turn count is history), where its parts may make it the injected
      // note of a `!` command. The next import, its parts there, takes it.
      if (info.role !== "assistant" && parts.length === 0) {
        bump(opts.counts.skipped, "(message with no parts yet)");
        continue;
      }
      const time = (info.time ?? {}) as { created?: number; completed?: number };
      const at = num(time.created) || b.s.lastAt || 0;
      const end = num(time.completed) || at;
      const role = info.role === "assistant" ? "assistant" : "user";
      const out: Part[] = [];
      const m: StoredMessage = { id: info.id, role, parts: out, timestamp: at };
      if (role === "user") {
        const texts = parts.filter((p) => p.type === "text" && !p.ignored);
        if (texts.length > 0 && texts.every((p) => p.synthetic === true)) m.synthetic = "injected";
        else if (texts.length > 0) {
          b.turnStart(info.id, at);
          b.title(String(texts.find((p) => !p.synthetic)?.text ?? ""), "prompt");
        } else if (parts.some((p) => p.type === "compaction")) {
          // `/compact`'s request: no prompt (the meta counted it a turn, the rollout did not).
          m.synthetic = "compaction";
        } else if (parts.some((p) => !p.ignored)) {
          // A prompt of an image or a file alone is a prompt: its turn starts here (the rollout
          // folded its reply into the turn before, while the meta counted it).
          b.turnStart(info.id, at);
        }
      } else {
        if (typeof info.providerID === "string") provider = info.providerID;
        if (typeof info.modelID === "string") model = info.modelID;
        if (info.summary === true) m.synthetic = "compact-summary";
      }
      const stored = b.addMessage(m);
      all.push(stored);
      let text = 0;
      let thinking = 0;
      const tools: string[] = [];
      const steps: ResponseUsage[] = [];
      let open: number | undefined;
      const cutOff: string[] = [];
      /** The results of the step's calls, written when it ends, by the time each came (`tool`). */
      const results: ToolOutcome[] = [];
      /** The step's `model.request` was written when it started (`step-start`). */
      let requested = false;
      for (const [k, part] of parts.entries()) {
        if (part.type === "step-start" || part.type === "step-finish") writeResults(results);
        const t = String(part.type);
        opts.counts.imported++;
        if (t === "text") {
          if (part.ignored === true) continue;
          stored.parts.push(b.r({ type: "text", content: String(part.text ?? "") }));
          text += String(part.text ?? "").length;
        } else if (t === "reasoning") thinking += String(part.text ?? "").length;
        else if (t === "tool") {
          const call = tool(b, stored, part, at);
          tools.push(call.name);
          if (call.result) results.push(call.result);
          const since = openSince(part, at);
          if (since !== undefined) {
            open = Math.max(open ?? 0, since);
            cutOff.push(String(part.callID ?? part.id));
          }
        } else if (t === "step-finish") {
          const u = usageOf(part.tokens);
          if (u) steps.push(u);
          lastContext = u ? u.input + u.cacheRead + u.cacheWrite + u.output : lastContext;
          b.modelResponse(part.id, {
            provider: provider ?? "opencode",
            model: model ?? "unknown",
            startAt: at,
            at: end,
            usage: u,
            toolCalls: tools.splice(0),
            textChars: text,
            thinkingChars: thinking,
            costUsd: stepCost(part.cost, u),
            requested,
          });
          text = thinking = 0;
          requested = false;
        } else if (t === "compaction") {
          b.compaction(part.id, at, lastContext, 0, { trigger: part.auto === true ? "auto" : "manual" });
        } else if (t === "retry") {
          const err = (part.error ?? {}) as { data?: { message?: string }; name?: string };
          b.modelError(part.id, {
            provider: provider ?? "opencode",
            model: model ?? "unknown",
            startAt: at,
            at,
            error: String(err.data?.message ?? err.name ?? "retry"),
          });
        } else if (t === "step-start") {
          // A finished step's request goes in as it starts, before the calls it makes; its response
          // when it ends. (Written with its response, the request came after the step's calls and
          // outputs, earlier than them.) An unfinished step's request waits for its end.
          const finish = stepFinish(parts, k);
          if (finish === undefined) continue;
          b.modelRequest(finish, {
            provider: provider ?? "opencode",
            model: model ?? "unknown",
            startAt: at,
            at: end,
          });
          requested = true;
        } else {
          opts.counts.imported--;
          bump(opts.counts.skipped, `part/${t}`);
        }
      }
      writeResults(results);
      if (steps.length > 0) {
        // One usage per message: the sum of its steps (each step is its own model.response).
        const sum = steps.reduce((a, u) => ({
          input: a.input + u.input,
          output: a.output + u.output,
          reasoning: (a.reasoning ?? 0) + (u.reasoning ?? 0),
          cacheRead: a.cacheRead + u.cacheRead,
          cacheWrite: a.cacheWrite + u.cacheWrite,
        }));
        stored.responseId = info.id;
        stored.usage = {
          inputTokens: sum.input,
          outputTokens: sum.output,
          cacheReadInputTokens: sum.cacheRead,
          cacheCreationInputTokens: sum.cacheWrite,
          reasoningTokens: sum.reasoning,
        };
      }
      const error = info.error as { name?: string; data?: { message?: string } } | undefined;
      if (error?.name === "MessageAbortedError") {
        b.writeUnanswered(cutOff);
        b.turnAbort(info.id, end, "aborted");
      } else if (error)
        b.modelError(info.id, {
          provider: provider ?? "opencode",
          model: model ?? "unknown",
          startAt: at,
          at: end,
          error: `${error.name ?? "error"}: ${error.data?.message ?? ""}`,
        });
      // The cut-off call keeps no output (written as a call, before the abort); its turn was
      // interrupted.
      if (open !== undefined && error?.name !== "MessageAbortedError" && (idle || i < lastResponse)) {
        b.writeUnanswered(cutOff);
        b.turnAbort(`${info.id}.interrupted`, Math.max(end, open), "interrupted");
      }
      opts.counts.imported++;
    } catch (error) {
      // A message of a shape we did not expect must not cost the session the others.
      unreadableEntry(opts, { file: opts.path, entry: String(info?.id) }, error);
    }
  }
  // A call of the last response still `pending` (its arguments streaming) in a session at work is
  // not written yet (`live.ts`); the session is read again until it moves on or idles. A `running`
  // call is written: it runs — or waits for permission, which OpenCode marks `running` too, so a
  // refusal after an import still adds a denial to its call.
  const asking = new Set<string>();
  if (!idle && lastResponse >= 0)
    for (const p of messages[lastResponse]!.parts)
      if (p.type === "tool" && (p.state as ToolState | undefined)?.status === "pending")
        asking.add(String(p.callID ?? p.id));
  const open = b.finish(true, (callId) => asking.has(callId));
  if (s.title && !PLACEHOLDER_TITLE.test(s.title)) b.title(s.title, "generated");
  const session = b.result({
    projectPath: s.directory ?? "",
    ...(provider ? { provider } : {}),
    ...(model ? { model } : {}),
    ...(state.parentId ? { parentId: state.parentId } : {}),
    source: { agent: "opencode", id: s.id, path: opts.path, ...(s.version ? { version: s.version } : {}) },
  });
  if (s.updated && s.updated > session.meta.updatedAt) session.meta.updatedAt = s.updated;
  return { ...session, messages: all, changed: [], mode: "full", ...(open ? { open } : {}) };
}

/** The id of the `step-finish` that ends the step started at `parts[start]`, if it has ended. */
function stepFinish(parts: Obj[], start: number): string | undefined {
  for (let k = start + 1; k < parts.length; k++) {
    const t = parts[k]!.type;
    if (t === "step-finish") return String(parts[k]!.id);
    if (t === "step-start") return undefined;
  }
  return undefined;
}

/** The notice OpenCode writes as a user message before a command the user ran (`!ls`). */
const USER_RAN = /^The following tool was executed by the user/;

/**
 * Whether a message is a command the user ran: an assistant message of tool parts only, with no
 * model step (no tokens), right after a synthetic user notice that says so.
 */
function userShell(prev: OcMessage | undefined, info: Obj, parts: Obj[]): boolean {
  if (info.role !== "assistant" || prev?.info.role !== "user") return false;
  if (parts.length === 0 || parts.some((p) => p.type !== "tool")) return false;
  const texts = prev.parts.filter((p) => p.type === "text");
  return texts.length > 0 && texts.every((p) => p.synthetic === true && USER_RAN.test(String(p.text ?? "")));
}

/** A finished call's result, to write: when it came, and writing it. */
interface ToolOutcome {
  at: number;
  write(): void;
}

/**
 * Write a step's results by the time each came (stably), and forget them. A step's calls run side
 * by side: written part by part, a call's output went in before a call made while it ran (the
 * log's time went back), and a fast call's output after a slow one's.
 */
function writeResults(results: ToolOutcome[]): void {
  for (const r of results.sort((x, y) => x.at - y.at)) r.write();
  results.length = 0;
}

/**
 * A tool part: its call, now, and its result when the state has one, to write when its step ends
 * (`writeResults`).
 */
function tool(
  b: SessionBuilder,
  m: StoredMessage,
  part: Obj,
  at: number,
): { name: string; result?: ToolOutcome } {
  const name = String(part.tool ?? "unknown");
  const callId = String(part.callID ?? part.id);
  const st = (part.state ?? {}) as ToolState;
  const args = st.input && typeof st.input === "object" ? st.input : {};
  m.parts.push(b.r({ type: "tool", tool: { name, args }, callId }));
  const start = num(st.time?.start) || at;
  b.toolCall(callId, name, args, start, m.id);
  const endAt = num(st.time?.end) || start;
  const meta = (st.metadata ?? {}) as { exit?: unknown; sessionId?: unknown };
  const child =
    name === "task" && typeof meta.sessionId === "string"
      ? sessionIdFor("opencode", meta.sessionId)
      : undefined;
  if (st.status === "completed") {
    const failed = typeof meta.exit === "number" && meta.exit !== 0;
    return {
      name,
      result: {
        at: endAt,
        write: () => {
          if (child) b.subagent("start", callId, start, child, String((args as Obj).description ?? ""));
          b.toolResult(callId, { at: endAt, output: st.output, failed, durationMs: endAt - start });
          if (child) b.subagent("stop", callId, endAt, child);
        },
      },
    };
  }
  if (st.status === "error") {
    const error = String(st.error ?? "error");
    const said = error.replace(ERROR_CLASS, "");
    const source: DenySource | undefined = REJECTED.test(said)
      ? "user"
      : RULE_DENIED.test(said)
        ? "rule"
        : undefined;
    return {
      name,
      result: {
        at: endAt,
        write: () =>
          b.toolResult(callId, {
            at: endAt,
            output: error,
            failed: true,
            ...(source ? { denied: { source, reason: headOf(said, 500) } } : {}),
          }),
      },
    };
  }
  // pending / running: never finished; `finish` records the call without an output.
  return { name };
}
