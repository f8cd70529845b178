/**
 * Codex CLI rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-…-<thread>.jsonl`) → sessions +
 * rollouts. A provider response is everything the model emitted between two `token_count` events
 * whose cumulative total moved (Codex repeats an unchanged `token_count` after tool outputs); its
 * usage is that event's `last_token_usage`. The user's text is taken from `event_msg/user_message`
 * (clean), not the `response_item` copy that also carries injected context. Tool success comes from
 * `exec_command_end` / `mcp_tool_call_end` when present, else from the output text. Turns follow
 * `task_started`; older builds wrote none, and there each typed prompt starts a turn.
 */

import { basename } from "node:path";
import { drop, own, put } from "../util/dict.ts";
import { type BuilderState, newBuilderState, type ResultMeta, SessionBuilder } from "./builder.ts";
import { codexFailure, endFailed, parseArgs, textOfItems } from "./codex-output.ts";
import { sessionIdFor } from "./ids.ts";
import { stillWritten } from "./live.ts";
import type { ImportedSession } from "./types.ts";
import { bump, type ImportWarning, newCounts, type ParseOptions, type ParseResult } from "./types.ts";

type Payload = Record<string, unknown> & { type?: string };

/** Response items the model writes: its output, not what its next request is sent after. */
const MODEL_ITEMS = new Set([
  "reasoning",
  "function_call",
  "custom_tool_call",
  "local_shell_call",
  "web_search_call",
]);

/**
 * Whether a line (one the importer mapped) is something a request to the model is sent after: a
 * prompt, a tool's result, the end of a response (a token count that moved), a turn or a
 * compaction. Not the model's own output, nor what Codex writes while a response streams (copies
 * of its items, token counts that repeat, a thread's new name: those are not mapped).
 */
function sendsRequest(type: string, p: Payload): boolean {
  if (type === "response_item")
    return !(MODEL_ITEMS.has(String(p.type)) || (p.type === "message" && p.role === "assistant"));
  return !(type === "event_msg" && p.type === "thread_name_updated");
}

export interface CodexState {
  b?: BuilderState;
  sourceId?: string;
  cwd?: string;
  provider?: string;
  model?: string;
  meta: Record<string, unknown>;
  /** The response being collected since the last usage boundary. */
  resp?: {
    messageId?: string;
    startAt: number;
    text: number;
    thinking: number;
    tools: string[];
    /** The calls it made (absent in a state saved before they were kept). */
    callIds?: string[];
  };
  lastTotal?: number;
  lastContext?: number;
  prevAt?: number;
  /**
   * The time of the last line a request to the model is sent after (`sendsRequest`). A response
   * was timed from the line before its first item: Codex writes an `agent_reasoning` copy, or a
   * token count that repeats, just before it, so calls took ms instead of seconds (29 s of model
   * time in a rollout whose requests took 219 s).
   */
  inputAt?: number;
  /** Outcomes reported by `*_end` events before the output item arrives. */
  outcome: Record<string, { failed: boolean; durationMs?: number }>;
  compactedAt?: number;
  threadName?: string;
  /** A `task_started` was seen: turns follow those, not prompts (see `event`). */
  taskTurns?: boolean;
  /**
   * The message of a response the end of the last read closed without its usage (the file was not
   * being written): a `token_count` that comes next is that response's, and its usage goes on that
   * message (it went on none, and the session's tokens missed it).
   */
  cut?: string;
}

/** The session id at the end of a Codex transcript's name: `rollout-<time>-<uuid>.jsonl`. */
const FILE_SESSION_ID =
  /^rollout-.*?-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;

const SKIP_EVENTS = new Set(["agent_message", "agent_reasoning", "agent_reasoning_raw_content"]);
const CALLS = new Set(["function_call", "custom_tool_call", "local_shell_call", "web_search_call"]);
const OUTPUTS = new Set(["function_call_output", "custom_tool_call_output"]);

export class CodexParser {
  private readonly st: CodexState;
  private b?: SessionBuilder;
  private readonly counts = newCounts();
  private readonly warnings: ImportWarning[] = [];

  constructor(
    private readonly opts: ParseOptions,
    state?: CodexState,
  ) {
    this.st = state ?? { meta: {}, outcome: {} };
    if (this.st.b) this.b = new SessionBuilder(this.st.b, opts.redact === true);
  }

  get state(): CodexState {
    this.b?.saved();
    return this.st;
  }

  feed(line: Record<string, unknown>, lineNo: number): void {
    const type = String(line.type ?? "(no type)");
    const payload = line.payload ?? {};
    // A payload of another shape is an unreadable entry, reported with its line (feedJsonl).
    if (typeof payload !== "object" || payload === null || Array.isArray(payload))
      throw new Error(`${type} entry: its payload is not an object`);
    const p = payload as Payload;
    const at = Date.parse(String(line.timestamp)) || this.st.prevAt || 0;
    let mapped = false;
    if (type !== "session_meta" && !this.b && !this.fromFileName(lineNo, at)) {
      // Lines before any session_meta (in a file not named by its session): nothing to attach them to.
      bump(this.counts.skipped, `${type}(before session_meta)`);
      return;
    }
    if (type === "session_meta") mapped = this.sessionMeta(p, at);
    else if (!this.b)
      return; // (started just above)
    else if (type === "turn_context") {
      if (typeof p.model === "string") this.st.model = p.model;
      if (typeof p.cwd === "string") this.st.cwd ??= p.cwd;
      mapped = true;
    } else if (type === "event_msg") mapped = this.event(this.b, p, at, lineNo);
    else if (type === "response_item") mapped = this.item(this.b, p, at, lineNo);
    else if (type === "compacted") {
      this.flush(this.b, at, undefined, `L${lineNo}`);
      this.b.compaction(`L${lineNo}`, at, this.st.lastContext ?? 0, 0);
      this.st.compactedAt = at;
      if (typeof p.message === "string" && p.message) {
        const id = `${this.st.sourceId}-L${lineNo}`;
        this.b.addMessage({
          id,
          role: "user",
          parts: [{ type: "text", content: p.message }],
          timestamp: at,
          synthetic: "compact-summary",
        });
      }
      mapped = true;
    }
    if (mapped) this.counts.imported++;
    else
      bump(
        this.counts.skipped,
        type === "event_msg" || type === "response_item"
          ? `${type}/${typeof p.type === "string" ? p.type : "(no type)"}`
          : type,
      );
    this.st.prevAt = at;
    if (mapped && sendsRequest(type, p)) this.st.inputAt = at;
  }

  /**
   * A transcript whose session_meta is missing or damaged (its first line cut short, say): Codex
   * names its files `rollout-<time>-<session id>.jsonl`, so the session is still known. Returns
   * whether it could start the session that way.
   */
  private fromFileName(lineNo: number, at: number): boolean {
    const id = FILE_SESSION_ID.exec(basename(this.opts.path))?.[1];
    if (!id) return false;
    this.sessionMeta({ id }, at);
    this.warnings.push({
      file: this.opts.path,
      line: lineNo,
      message: `no session_meta before this line: session id ${id} taken from the file name`,
    });
    return true;
  }

  private sessionMeta(p: Payload, at: number): boolean {
    if (this.b) return false; // a resumed thread repeats it: the first one names the thread
    const id = String(p.id ?? p.session_id ?? "");
    if (!id) throw new Error("session_meta without id");
    const state = newBuilderState(sessionIdFor("codex", id));
    const spawn = (p.source as { subagent?: { thread_spawn?: { parent_thread_id?: string } } } | undefined)
      ?.subagent?.thread_spawn;
    const parent =
      spawn?.parent_thread_id ?? (typeof p.parent_thread_id === "string" ? p.parent_thread_id : undefined);
    if (parent) state.parentId = sessionIdFor("codex", parent);
    this.st.b = state;
    this.b = new SessionBuilder(state, this.opts.redact === true);
    this.b.touch(Date.parse(String(p.timestamp)) || at);
    this.st.sourceId = id;
    if (typeof p.cwd === "string") this.st.cwd = p.cwd;
    if (typeof p.model_provider === "string") this.st.provider = p.model_provider;
    for (const k of ["originator", "cli_version", "agent_nickname", "agent_role", "forked_from_id"]) {
      if (typeof p[k] === "string") this.st.meta[k] = p[k];
    }
    if (typeof p.agent_nickname === "string") {
      const role = typeof p.agent_role === "string" ? ` (${p.agent_role})` : "";
      this.b.title(`${p.agent_nickname}${role}`, "import");
    }
    return true;
  }

  private event(b: SessionBuilder, p: Payload, at: number, lineNo: number): boolean {
    const t = String(p.type);
    if (SKIP_EVENTS.has(t)) return false;
    switch (t) {
      case "task_started":
      case "turn_started":
        this.flush(b, at, undefined, `L${lineNo}`);
        // Written once something happens in it: a turn of only a command the user ran (`!ls`),
        // which is skipped, and its abort are no turn of the agent's (`deferTurnStart`).
        b.deferTurnStart(String(p.turn_id ?? `L${lineNo}`), at);
        this.st.taskTurns = true;
        return true;
      case "user_message": {
        this.flush(b, at, undefined, `L${lineNo}`);
        // Builds that write `task_started` open the turn before the prompt (and a prompt typed
        // mid-turn steers that turn). Older builds (0.77, for one) mark no turns at all: the
        // prompt is the only boundary, so each typed one (`kind` plain or absent, not a context
        // block) ends the turn before it.
        const typed = p.kind === undefined || p.kind === "plain";
        if (this.st.taskTurns ? b.s.turnId === undefined : typed) b.turnStart(`L${lineNo}`, at);
        const text = String(p.message ?? "");
        b.title(text, "prompt");
        const id = `${this.st.sourceId}-L${lineNo}`;
        b.addMessage({ id, role: "user", parts: [{ type: "text", content: text }], timestamp: at });
        return true;
      }
      case "token_count":
        return this.tokenCount(b, p, at, lineNo);
      case "exec_command_end":
      case "patch_apply_end":
      case "mcp_tool_call_end": {
        if (p.source === "user_shell") return false; // a `!` command the user ran, not a tool call
        const failed = endFailed(p);
        const d = p.duration as { secs?: number; nanos?: number } | undefined;
        const durationMs = d ? Math.round((d.secs ?? 0) * 1000 + (d.nanos ?? 0) / 1e6) : undefined;
        put(this.st.outcome, String(p.call_id), { failed, durationMs });
        return true;
      }
      case "error":
        this.flush(b, at, undefined, `L${lineNo}`);
        b.modelError(`L${lineNo}`, {
          ...this.model(),
          // A request that failed before any of its output: sent when the last input was.
          startAt: this.st.resp?.startAt ?? this.st.inputAt ?? at,
          at,
          error: String(p.message ?? "error"),
        });
        return true;
      case "turn_aborted":
        this.flush(b, at, undefined, `L${lineNo}`);
        // False for a turn that held nothing of the agent's: skipped with it.
        return b.turnAbort(String(p.turn_id ?? `L${lineNo}`), at, String(p.reason ?? "interrupted"));
      case "task_complete":
      case "turn_complete":
        return true;
      case "context_compacted":
        // Follows a `compacted` line, which already recorded it; alone, it is the only record.
        if (this.st.compactedAt === undefined || at - this.st.compactedAt > 60_000) {
          b.compaction(`L${lineNo}`, at, this.st.lastContext ?? 0, 0);
        }
        this.st.compactedAt = undefined;
        return true;
      case "thread_name_updated":
        b.title(String(p.thread_name ?? p.name ?? ""), "user", true);
        return true;
      default:
        return false;
    }
  }

  private tokenCount(b: SessionBuilder, p: Payload, at: number, lineNo: number): boolean {
    const info = p.info as {
      total_token_usage?: Record<string, number>;
      last_token_usage?: Record<string, number>;
    } | null;
    const total = info?.total_token_usage?.total_tokens;
    if (!info || total === undefined || total === this.st.lastTotal) return false; // a repeat
    this.st.lastTotal = total;
    const last = info.last_token_usage ?? {};
    const cached = last.cached_input_tokens ?? 0;
    this.st.lastContext = last.total_tokens ?? this.st.lastContext;
    this.flush(
      b,
      at,
      {
        input: (last.input_tokens ?? 0) - cached,
        cacheRead: cached,
        cacheWrite: 0,
        output: last.output_tokens ?? 0,
        reasoning: last.reasoning_output_tokens ?? 0,
      },
      `L${lineNo}`,
    );
    return true;
  }

  private model() {
    return { provider: this.st.provider ?? "openai", model: this.st.model ?? "unknown" };
  }

  /** The response collected so far (or the one the usage belongs to). */
  private respond(at: number) {
    if (!this.st.resp) this.letGoOfCut(); // a new response: the cut one is done
    return (this.st.resp ??= {
      startAt: this.st.inputAt ?? this.st.prevAt ?? at,
      text: 0,
      thinking: 0,
      tools: [],
      callIds: [],
    });
  }

  private message(b: SessionBuilder, at: number, lineNo: number) {
    const r = this.respond(at);
    if (r.messageId) return b.find(r.messageId)!;
    const m = b.addMessage({
      id: `${this.st.sourceId}-L${lineNo}`,
      role: "assistant",
      parts: [],
      timestamp: at,
    });
    b.hold(m);
    r.messageId = m.id;
    return m;
  }

  /** The cut response (`CodexState.cut`) is done with: its message is let go of. */
  private letGoOfCut(): void {
    const cut = this.st.cut;
    this.st.cut = undefined;
    if (cut !== undefined) this.b?.release(cut);
  }

  /** Close the current response; with usage it becomes a `model.response`. */
  private flush(
    b: SessionBuilder,
    at: number,
    usage: Parameters<SessionBuilder["modelResponse"]>[1]["usage"],
    key: string,
  ): void {
    const r = this.st.resp;
    this.st.resp = undefined;
    const cut = usage && !r ? this.st.cut : undefined;
    if (!usage && !r) {
      this.letGoOfCut();
      return;
    }
    if (usage || (r && (r.text > 0 || r.tools.length > 0))) {
      const startAt = r?.startAt ?? this.st.inputAt ?? this.st.prevAt ?? at;
      // The calls it made go in the log between its request and its end, as they were made; their
      // outputs come later.
      const calls = r?.callIds ?? [];
      if (calls.length > 0) {
        b.modelRequest(key, { ...this.model(), startAt, at });
        b.writeUnanswered(calls);
      }
      b.modelResponse(key, {
        ...this.model(),
        startAt,
        requested: calls.length > 0,
        at,
        usage,
        toolCalls: r?.tools ?? [],
        textChars: r?.text ?? 0,
        thinkingChars: r?.thinking ?? 0,
        messageId: r?.messageId ?? cut,
      });
    }
    this.letGoOfCut();
    if (r?.messageId) b.release(r.messageId);
  }

  private item(b: SessionBuilder, p: Payload, at: number, lineNo: number): boolean {
    const t = String(p.type);
    if (t === "message") {
      if (p.role !== "assistant") return false; // user copies carry injected context; developer = harness
      const text = textOfItems(p.content);
      if (!text) return false;
      this.message(b, at, lineNo).parts.push(b.r({ type: "text", content: text }));
      this.respond(at).text += text.length;
      return true;
    }
    if (t === "reasoning") {
      const summary = Array.isArray(p.summary) ? p.summary : [];
      this.respond(at).thinking += summary.reduce(
        (n: number, s: { text?: string }) => n + (s?.text?.length ?? 0),
        0,
      );
      return true;
    }
    if (CALLS.has(t)) {
      const callId = String(p.call_id ?? p.id ?? `L${lineNo}`);
      const name = String(
        p.name ??
          (t === "local_shell_call" ? "local_shell" : t === "web_search_call" ? "web_search" : "unknown"),
      );
      const args = parseArgs(t === "function_call" ? p.arguments : (p.input ?? p.action));
      const m = this.message(b, at, lineNo);
      m.parts.push(b.r({ type: "tool", tool: { name, args }, callId }));
      const r = this.respond(at);
      r.tools.push(name);
      r.callIds?.push(callId);
      b.toolCall(callId, name, args, at, m.id);
      if (t === "web_search_call")
        b.toolResult(callId, { at, output: p.status ?? "completed", failed: p.status === "failed" });
      return true;
    }
    if (OUTPUTS.has(t)) {
      const callId = String(p.call_id ?? "");
      if (!b.isPending(callId)) {
        bump(this.counts.skipped, `${t}(no matching call)`);
        return true;
      }
      const outcome = own(this.st.outcome, callId);
      drop(this.st.outcome, callId);
      const verdict = codexFailure(p.output, outcome?.failed);
      b.toolResult(callId, {
        at,
        output: p.output,
        failed: verdict.failed,
        denied: verdict.denied,
        durationMs: outcome?.durationMs,
      });
      return true;
    }
    return false;
  }

  finish(): ParseResult {
    const final = this.opts.final !== false;
    const sessions = [];
    let open = false;
    if (this.b) {
      // In a transcript still written (`live.ts`), an open response and unanswered calls wait.
      const live = final && stillWritten(this.opts.lastWrite, this.st.prevAt);
      if (final && this.st.resp && live) open = true;
      else if (final && this.st.resp) {
        const messageId = this.st.resp.messageId;
        this.flush(this.b, this.st.prevAt ?? 0, undefined, `end-${this.st.prevAt}`);
        // Kept (held across reads) for the token count that may come next: let go of, a plain
        // answer was no longer found to put its usage on.
        const m = messageId === undefined ? undefined : this.b.find(messageId);
        if (m) {
          this.b.hold(m);
          this.st.cut = m.id;
        }
      }
      if (this.b.finish(final, live ? () => true : undefined)) open = true;
      sessions.push(this.b.result(this.resultMeta(this.b)));
    }
    return { sessions, counts: this.counts, warnings: this.warnings, ...(open ? { open } : {}) };
  }

  /** Mid-read: hand over what can no longer change (see `SessionBuilder.result`). */
  drain(): ImportedSession[] {
    const s = this.b?.result(this.resultMeta(this.b), true);
    return s ? [s] : [];
  }

  private resultMeta(b: SessionBuilder): ResultMeta {
    return {
      projectPath: this.st.cwd ?? "",
      ...this.model(),
      ...(b.s.parentId ? { parentId: b.s.parentId } : {}),
      source: { agent: "codex", id: this.st.sourceId ?? "", path: this.opts.path, ...this.st.meta },
    };
  }
}
