/**
 * Claude Code conversation entries, one handler per entry type: user (prompts and tool results),
 * assistant (one line per content block, merged by `message.id`), system (compactions, API
 * errors, hooks) and attachment (hook runs). Whatever is not mapped is counted by type.
 */
import type { DenySource } from "../rollout/events.ts";
import type { Part, StoredMessage } from "../storage/records.ts";
import { headOf } from "../util/cut-text.ts";
import { own, put } from "../util/dict.ts";
import { idHash } from "../util/id-hash.ts";
import type { SessionBuilder } from "./builder.ts";
import { resultHeld, writeHeld, writeOrHold } from "./claude-held.ts";
import { type ClaudeContext, flushGroup, promptKey } from "./claude-state.ts";
import { childIdFor } from "./ids.ts";
import { joinedHead } from "./text.ts";
import { bump } from "./types.ts";

/** A transcript line: loosely typed, every field optional (new fields appear every release). */
export type ClaudeEntry = Record<string, unknown> & {
  type?: unknown;
  uuid?: unknown;
  message?: {
    id?: string;
    model?: string;
    content?: unknown;
    usage?: Record<string, unknown>;
    stop_reason?: unknown;
  };
};

type Block = Record<string, unknown> & { type?: string };

const REJECTED = /^The user doesn't want to (proceed with this tool use|take this action)/;
/**
 * A call refused without asking: the tool needs a permission nobody granted (a headless `-p` run,
 * an `ask` rule with no one to answer). Claude Code says so in the result, with no denial kind:
 * "Claude requested permissions to use Bash, but you haven't granted it yet." (or "to write to
 * <path>", "to read from <path>"), and for a shell command "This command requires approval".
 */
const UNGRANTED =
  /^(Claude requested permissions to [\s\S]*but you haven't granted it yet|This command requires approval)/;
const INTERRUPTED = /^\[Request interrupted by user/;
const SUBAGENT_TOOLS = new Set(["Task", "Agent"]);
/** Harness text in user entries that the human did not type. */
const INJECTED = /^\s*<(local-command-stdout|local-command-caveat|bash-stdout|bash-stderr)>/;
/** A command the user ran in `!` shell mode: no prompt to the model (as Codex's and OpenCode's `!`). */
const SHELL_INPUT = /^\s*<bash-input>/;

const blocksOf = (content: unknown): Block[] =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
      ? (content.filter((b) => b && typeof b === "object") as Block[])
      : [];

const textOf = (content: unknown): string =>
  blocksOf(content)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");

/**
 * Why a tool result is a refusal: permission rule, hook, or the user saying no. `toolDenialKind`
 * (newer builds) names it: `permission-rule`, a hook's, `user-rejected` (the user's no: it was
 * taken for a permission denial), and `interrupted`/`cancelled`, which are no refusal (the call ran
 * and was cut off: a failed output, as without the field). Another kind is a permission denial.
 */
function denial(
  e: ClaudeEntry,
  content: unknown,
  head: string,
  isError: boolean,
): { source: DenySource; reason: string } | undefined {
  const kind = typeof e.toolDenialKind === "string" ? e.toolDenialKind : undefined;
  if (kind === "interrupted" || kind === "cancelled") return undefined;
  if (kind !== undefined && !/user|reject/.test(kind)) {
    const source: DenySource = kind.includes("rule") ? "rule" : kind.includes("hook") ? "hook" : "permission";
    return { source, reason: headOf(head, 500) };
  }
  if (kind !== undefined && !(isError && REJECTED.test(head)))
    return { source: "user", reason: headOf(head, 500) };
  if (isError && REJECTED.test(head)) {
    const said = /the user said:\n([\s\S]*)$/.exec(textOf(content))?.[1];
    return { source: "user", reason: headOf(said ?? "rejected by the user", 500) };
  }
  if (isError && UNGRANTED.test(head)) return { source: "permission", reason: headOf(head, 500) };
  return undefined;
}

/** A `user` entry: tool results pair with their calls; typed text opens a turn. */
export function onUser(
  ctx: ClaudeContext,
  b: SessionBuilder,
  e: ClaudeEntry,
  at: number,
  line: number,
): void {
  const blocks = blocksOf(e.message?.content);
  const uuid = String(e.uuid ?? `line-${line}`);
  let mapped = false;
  const parts: Part[] = [];
  for (const block of blocks) {
    if (block.type === "tool_result") {
      mapped = toolResult(ctx, b, e, block, at) || mapped;
    } else if (block.type === "text" && typeof block.text === "string") {
      parts.push({ type: "text", content: block.text });
    } else if (block.type === "image") {
      const src = (block.source ?? {}) as { data?: string; media_type?: string };
      parts.push({ type: "image", data: src.data, mediaType: src.media_type });
    } else bump(ctx.counts.skipped, `user/${block.type ?? "?"}`);
  }
  if (parts.length > 0) {
    // Text from the user side ends the response; tool results do not (CC runs a tool while the
    // rest of the response is still streaming, so results interleave with its lines).
    flushGroup(ctx, b);
    const text = parts.map((p) => p.content ?? "").join("\n");
    if (INTERRUPTED.test(text)) {
      b.turnAbort(uuid, at, "interrupted");
      mapped = true;
    } else {
      // A task's notice handed to the model (`origin.kind`, newer builds) is no person's prompt.
      const origin = (e.origin as { kind?: unknown } | undefined)?.kind;
      const synthetic =
        e.isCompactSummary === true
          ? "compact-summary"
          : e.isMeta === true
            ? "meta"
            : INJECTED.test(text)
              ? "command-output"
              : SHELL_INPUT.test(text)
                ? "shell-command"
                : typeof origin === "string" && origin !== "human"
                  ? origin
                  : undefined;
      if (!synthetic) {
        b.turnStart(uuid, at);
        b.title(commandTitle(text), "prompt");
      }
      const m: StoredMessage = { id: uuid, role: "user", parts, timestamp: at };
      if (synthetic) m.synthetic = synthetic;
      b.addMessage(m);
      mapped = true;
    }
  }
  if (mapped) ctx.counts.imported++;
  else bump(ctx.counts.skipped, "user(empty)");
}

/** `/cmd args` for slash commands, else the text itself. */
function commandTitle(text: string): string {
  const name = /<command-name>([^<]*)<\/command-name>/.exec(text)?.[1];
  if (!name) return text;
  const args = /<command-args>([^<]*)<\/command-args>/.exec(text)?.[1] ?? "";
  return `${name} ${args}`.trim();
}

function toolResult(
  ctx: ClaudeContext,
  b: SessionBuilder,
  e: ClaudeEntry,
  block: Block,
  at: number,
): boolean {
  const callId = String(block.tool_use_id ?? "");
  const call = b.pendingCall(callId);
  if (!call || resultHeld(ctx.st, b.id, callId)) {
    bump(ctx.counts.skipped, "user/tool_result(no matching call)");
    return false;
  }
  const isError = block.is_error === true;
  // The checks below read the start of the result text (anchored patterns, a 500-character
  // reason): join only that much of a long output.
  const head = typeof block.content === "string" ? block.content : joinedHead(blocksOf(block.content), 500);
  const denied = denial(e, block.content, head, isError);
  let child: { id: string; task?: string } | undefined;
  if (SUBAGENT_TOOLS.has(call.tool)) {
    const agentId = (e.toolUseResult as { agentId?: unknown } | undefined)?.agentId;
    const main = ctx.st.main?.id ?? b.id;
    const id =
      typeof agentId === "string"
        ? childIdFor(main, "agent", agentId)
        : childIdFor(main, "task", callId) in ctx.st.children
          ? childIdFor(main, "task", callId)
          : undefined;
    // A description of another type (a damaged line) is no task: the start is logged without one.
    const task = (call.args as { description?: unknown } | undefined)?.description;
    if (id) child = { id, ...(typeof task === "string" ? { task } : {}) };
  }
  // Claude Code runs a tool while its response still streams: whether this result came after the
  // response's last line is known at the next line (see `claude-held.ts`).
  writeOrHold(ctx.st, b, ctx.st.groups[b.id] !== undefined, {
    kind: "result",
    at,
    callId,
    output: block.content,
    failed: isError && !denied,
    ...(denied ? { denied } : {}),
    ...(child ? { child } : {}),
    ...(!denied && INTERRUPTED.test(head) ? { interrupted: true } : {}),
  });
  return true;
}

/**
 * The message of an `assistant` line, checked before it touches the response it belongs to. A line
 * of another shape (no message, a text, an id that is not a text, content neither a list nor a
 * text) throws: it is an unreadable entry, reported with its line, and the response streaming
 * around it goes on (taken for a response of its own, it closed that one, whose later blocks, tool
 * calls among them, were then dropped as replayed).
 */
function assistantMessage(e: ClaudeEntry): NonNullable<ClaudeEntry["message"]> {
  const msg: unknown = e.message;
  if (msg === null || typeof msg !== "object" || Array.isArray(msg))
    throw new Error(`assistant entry: its message is ${msg === undefined ? "missing" : "not an object"}`);
  const { id, content } = msg as { id?: unknown; content?: unknown };
  if (id !== undefined && typeof id !== "string")
    throw new Error("assistant entry: its message.id is not a text");
  if (content !== undefined && typeof content !== "string" && !Array.isArray(content))
    throw new Error("assistant entry: its message.content is neither a list nor a text");
  return msg as NonNullable<ClaudeEntry["message"]>;
}

/** An `assistant` line: one content block of a streamed response. */
export function onAssistant(ctx: ClaudeContext, b: SessionBuilder, e: ClaudeEntry, at: number): void {
  const msg = assistantMessage(e);
  const uuid = String(e.uuid ?? `${b.id}-${at}`);
  if (e.isApiErrorMessage === true) {
    flushGroup(ctx, b);
    const error = typeof e.error === "string" ? `${e.error}: ${textOf(msg.content)}` : textOf(msg.content);
    const startAt = ctx.st.prevAt[b.id] ?? at;
    b.modelError(uuid, { startAt, at, provider: "anthropic", model: ctx.st.lastModel ?? "unknown", error });
    ctx.counts.imported++;
    return;
  }
  const model = typeof msg.model === "string" ? msg.model : "unknown";
  if (model === "<synthetic>") {
    flushGroup(ctx, b);
    const text = textOf(msg.content);
    const parts: Part[] = text ? [{ type: "text", content: text }] : [];
    b.addMessage({ id: uuid, role: "assistant", parts, timestamp: at, synthetic: "harness" });
    ctx.counts.imported++;
    return;
  }
  ctx.st.lastModel = model;
  b.s.model = model;
  const responseId = String(msg.id ?? e.requestId ?? uuid);
  let g = ctx.st.groups[b.id];
  if (!g || g.responseId !== responseId) {
    // A response closed earlier: a copy written again under a new uuid (resumed sessions), counted
    // once. (Within a read nothing closes a response before its last line: a tool result does not,
    // and what does — a prompt, a compaction, an API error — ends it.) Unless the last read's end
    // closed it and nothing came since but its tool results: then this line goes on with it.
    const continued = ctx.st.cut !== undefined && own(ctx.st.cut, b.id) === responseId;
    if (!continued && ctx.closed.has(idHash(responseId))) {
      bump(ctx.counts.skipped, "(replayed entry)");
      return;
    }
    flushGroup(ctx, b);
    const m = b.addMessage({ id: uuid, role: "assistant", parts: [], timestamp: at });
    b.hold(m);
    g = ctx.st.groups[b.id] = {
      responseId,
      messageId: m.id,
      startAt: ctx.st.prevAt[b.id] ?? at,
      at,
      model,
      tools: [],
      textChars: 0,
      thinkingChars: 0,
    };
    if (!continued) {
      // The request goes in the log now, before the calls this response makes: Claude Code runs a
      // tool while the response still streams, so its results come before the response's end.
      b.modelRequest(responseId, { startAt: g.startAt, at, provider: "anthropic", model });
      g.requested = true;
    } else {
      // Its model call was written with the usage its lines then gave (the same as the last line's
      // since Claude Code 2.1.1xx, which writes them all at the end); the rest is a new message.
      g.noUsage = true;
      ctx.warnings.push({
        file: ctx.file,
        message: `response ${responseId} continued after an import closed it (its usage: what its lines gave then)`,
      });
    }
  }
  // The response goes on: what was held came before its end.
  writeHeld(ctx.st, b);
  const m = b.find(g.messageId)!;
  const blocks = blocksOf(msg.content);
  for (const block of blocks) {
    if (block.type === "text" && typeof block.text === "string") {
      m.parts.push(b.r({ type: "text", content: block.text }));
      g.textChars += block.text.length;
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      g.thinkingChars += typeof block.thinking === "string" ? block.thinking.length : 0;
    } else if (block.type === "tool_use" || block.type === "server_tool_use") {
      const callId = String(block.id ?? `${uuid}.${m.parts.length}`);
      const name = String(block.name ?? "unknown");
      m.parts.push(b.r({ type: "tool", tool: { name, args: block.input ?? {} }, callId }));
      b.toolCall(callId, name, block.input ?? {}, at, m.id);
      g.tools.push(name);
      const prompt = SUBAGENT_TOOLS.has(name)
        ? promptKey((block.input as { prompt?: string })?.prompt)
        : undefined;
      if (prompt) put(ctx.st.taskPrompts, prompt, callId);
    } else if (typeof block.type === "string" && SERVER_RESULT.test(block.type)) {
      serverToolResult(ctx, b, block, at);
    } else bump(ctx.counts.skipped, `assistant/${block.type ?? "?"}`);
  }
  if (msg.usage) g.usage = msg.usage;
  // A response does not end on its thinking: Claude Code 2.1.1xx puts the response's final
  // `stop_reason` on its thinking line too, written seconds before the text (an import between the
  // two closed the response, and its text became a message of its own, outside its model call).
  const last = blocks.at(-1)?.type;
  g.stopped = typeof msg.stop_reason === "string" && last !== "thinking" && last !== "redacted_thinking";
  if (msg.stop_reason === "tool_use") g.awaitsTools = true;
  else delete g.awaitsTools;
  g.at = at;
  ctx.counts.imported++;
}

/** The result of a tool the API ran itself (`web_search_tool_result`, `web_fetch_tool_result`, …). */
const SERVER_RESULT = /^[a-z_]+_tool_result$/;

/**
 * A server tool's result comes in the same response as its `server_tool_use` call, not in a user
 * entry: pair it here. An error result is an object whose type ends in `_error`
 * (`{type: "web_search_tool_result_error", error_code}`).
 */
function serverToolResult(ctx: ClaudeContext, b: SessionBuilder, block: Block, at: number): void {
  const callId = String(block.tool_use_id ?? "");
  if (!b.pendingCall(callId)) {
    bump(ctx.counts.skipped, `assistant/${block.type}(no matching call)`);
    return;
  }
  const content = block.content as { type?: unknown } | undefined;
  const failed = typeof content?.type === "string" && content.type.endsWith("_error");
  b.toolResult(callId, { at, output: block.content, failed });
}

/** A `system` entry: compactions, API errors, stop hooks; the rest is counted by subtype. */
export function onSystem(ctx: ClaudeContext, b: SessionBuilder, e: ClaudeEntry, at: number): void {
  const subtype = typeof e.subtype === "string" ? e.subtype : "(none)";
  const uuid = String(e.uuid ?? `${b.id}-${at}`);
  if (subtype === "compact_boundary" || subtype === "microcompact_boundary") {
    flushGroup(ctx, b);
    const m = (e.compactMetadata ?? e.microcompactMetadata ?? {}) as Record<string, unknown>;
    const pre = Number(m.preTokens ?? 0) || 0;
    const post =
      subtype === "compact_boundary" ? Number(m.postTokens ?? 0) || 0 : pre - (Number(m.tokensSaved) || 0);
    b.compaction(uuid, at, pre, Math.max(0, post), {
      ...(typeof m.trigger === "string" ? { trigger: m.trigger } : {}),
      ...(subtype === "microcompact_boundary" ? { micro: true } : {}),
    });
  } else if (subtype === "api_error") {
    // One of another shape is unreadable: it would end the response streaming around it.
    if (e.error !== undefined && (e.error === null || typeof e.error !== "object"))
      throw new Error("system api_error entry: its error is not an object");
    flushGroup(ctx, b);
    // Only the status: the error's headers can carry cookies and organisation ids.
    const err = (e.error ?? {}) as { status?: number; message?: string };
    const attempt = e.retryAttempt !== undefined ? ` (retry ${e.retryAttempt}/${e.maxRetries ?? "?"})` : "";
    const error = `API error${err.status ? ` ${err.status}` : ""}${attempt}`;
    const startAt = ctx.st.prevAt[b.id] ?? at;
    b.modelError(uuid, { startAt, at, provider: "anthropic", model: ctx.st.lastModel ?? "unknown", error });
  } else if (subtype === "stop_hook_summary" && Array.isArray(e.hookInfos)) {
    const open = ctx.st.groups[b.id] !== undefined;
    e.hookInfos.forEach((h: { command?: string }, i: number) => {
      const name = String(h?.command ?? "stop-hook");
      const blocked = e.preventedContinuation === true;
      writeOrHold(ctx.st, b, open, {
        kind: "hook",
        at,
        key: `${uuid}.${i}`,
        name,
        hookEvent: "Stop",
        blocked,
      });
    });
  } else {
    bump(ctx.counts.skipped, `system/${subtype}`);
    return;
  }
  ctx.counts.imported++;
}

/**
 * An `attachment` entry: hook runs become hook events, a prompt queued while the agent was busy
 * becomes a user message; context attachments are counted.
 */
export function onAttachment(ctx: ClaudeContext, b: SessionBuilder, e: ClaudeEntry, at: number): void {
  const a = (e.attachment ?? {}) as Record<string, unknown>;
  const type = typeof a.type === "string" ? a.type : "?";
  if (type === "queued_command" && queuedPrompt(ctx, b, e, a, at)) {
    ctx.counts.imported++;
  } else if (
    type === "hook_success" ||
    type === "hook_blocking_error" ||
    type === "hook_non_blocking_error"
  ) {
    const name = String(a.hookName ?? a.command ?? "hook");
    writeOrHold(ctx.st, b, ctx.st.groups[b.id] !== undefined, {
      kind: "hook",
      at,
      key: String(e.uuid ?? at),
      name,
      ...(typeof a.hookEvent === "string" ? { hookEvent: a.hookEvent } : {}),
      blocked: type === "hook_blocking_error",
      ...(a.hookEvent === "PreToolUse" && typeof a.toolUseID === "string" ? { callId: a.toolUseID } : {}),
    });
    ctx.counts.imported++;
  } else bump(ctx.counts.skipped, `${String(e.type)}/${type}`);
}

/**
 * `queued_command`: what was typed (or a background task's notice) while the agent worked. Claude
 * Code hands it to the model at its next step, and this attachment is its only record: no user
 * entry repeats it. A person's prompt (`commandMode: "prompt"`, origin `human` or none) is a user
 * message that opens a turn, as a typed prompt does (the messages' turns and the rollout's agree);
 * a task notification is a synthetic one.
 */
function queuedPrompt(
  ctx: ClaudeContext,
  b: SessionBuilder,
  e: ClaudeEntry,
  a: Record<string, unknown>,
  at: number,
): boolean {
  const parts: Part[] = [];
  for (const block of blocksOf(a.prompt)) {
    if (block.type === "text" && typeof block.text === "string" && block.text)
      parts.push({ type: "text", content: block.text });
    else if (block.type === "image") {
      const src = (block.source ?? {}) as { data?: string; media_type?: string };
      parts.push({ type: "image", data: src.data, mediaType: src.media_type });
    }
  }
  if (parts.length === 0) return false;
  const origin = (a.origin as { kind?: unknown } | undefined)?.kind;
  const human = a.commandMode === "prompt" && (origin === undefined || origin === "human");
  const uuid = String(e.uuid ?? `${b.id}-queued-${at}`);
  flushGroup(ctx, b);
  const m: StoredMessage = { id: uuid, role: "user", parts, timestamp: at };
  if (human) {
    b.turnStart(uuid, at);
    b.title(commandTitle(parts.map((p) => p.content ?? "").join("\n")), "prompt");
  } else m.synthetic = typeof a.commandMode === "string" ? a.commandMode : "queued";
  b.addMessage(m);
  return true;
}
