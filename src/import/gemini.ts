/**
 * Gemini CLI chat recordings (`~/.gemini/tmp/<projectHash>/chats/session-*.json[l]`) → sessions +
 * rollouts. Legacy `.json` files hold one object; current `.jsonl` files hold a metadata line, then
 * messages, `{"$set":{…}}` metadata updates and `{"$rewindTo":id}` records that drop a message and
 * everything after it — so a recording is always re-derived whole (`full` mode). A message is written
 * again, whole, each time it changes (its usage, its tool calls' statuses): the last copy counts. A
 * tool call is `success`, `error` or `cancelled` once done; any other status never finished. The
 * project path is only stored as a SHA-256 hash: we take it from `directories`, a `.project_root`
 * file, or a candidate path whose hash matches, and otherwise use Gemini's per-project folder, with
 * a warning.
 */

import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { badInput } from "../errors.ts";
import { parseDocument } from "../util/json-document.ts";
import { idleSince, newBuilderState, SessionBuilder } from "./builder.ts";
import { sessionIdFor } from "./ids.ts";
import { mayStillStream } from "./live.ts";
import { objectLines } from "./object-lines.ts";
import {
  bump,
  type EntryCounts,
  GEMINI_MESSAGE_TYPES,
  type ImportedSession,
  type ImportWarning,
  unreadableEntry,
} from "./types.ts";

type Obj = Record<string, unknown>;
interface GeminiMessage extends Obj {
  id: string;
  type?: string;
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (p && typeof p.text === "string" ? p.text : "")).join("")
      : "";

const isObj = (v: unknown): v is Obj => v !== null && typeof v === "object" && !Array.isArray(v);
const n = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const time = (v: unknown) => n(Date.parse(String(v)));

/** The last change the recording shows. */
function lastActivity(meta: Obj, messages: GeminiMessage[]): number {
  let last = time(meta.lastUpdated);
  for (const m of messages) {
    last = Math.max(last, time(m.timestamp));
    for (const c of Array.isArray(m.toolCalls) ? (m.toolCalls as Obj[]) : [])
      last = Math.max(last, time(c?.timestamp));
  }
  return last;
}

/**
 * Read a recording (legacy JSON or JSONL) into its metadata and its messages in the order they
 * first came, each in its last form. `rewound`: a `$rewindTo` dropped it from the conversation
 * after it was recorded (the legacy JSON keeps no such record: what a rewind dropped is gone).
 */
export function readGemini(
  path: string,
  text: string,
  warnings: ImportWarning[],
  counts?: EntryCounts,
): { meta: Obj; messages: GeminiMessage[]; rewound: Set<GeminiMessage> } {
  // A message that cannot be told from the others (no id): reported and counted, the rest read.
  const unreadable = (message: string, line?: number) => {
    warnings.push({ file: path, ...(line !== undefined ? { line } : {}), message });
    if (counts) bump(counts.skipped, "(unreadable entry)");
  };
  if (path.endsWith(".json")) {
    const doc = parseDocument(text);
    if (!isObj(doc)) throw badInput("not a Gemini recording: not a JSON object", { file: path });
    const messages = Array.isArray(doc.messages) ? (doc.messages as unknown[]) : [];
    const kept = messages.filter((m, i) => {
      if (isObj(m) && typeof m.id === "string") return true;
      unreadable(`message ${i + 1} of the recording has no id: skipped`);
      return false;
    });
    return { meta: doc, messages: kept as GeminiMessage[], rewound: new Set() };
  }
  let meta: Obj = {};
  // Every message, in the order it first came; `index` maps the ids still in the conversation.
  const messages: GeminiMessage[] = [];
  const rewound = new Set<GeminiMessage>();
  const index = new Map<string, number>();
  const malformed = (lineNo: number, message: string) => {
    warnings.push({ file: path, line: lineNo, message });
    if (counts) bump(counts.skipped, "(malformed line)");
  };
  for (const line of objectLines(text)) {
    if ("problem" in line) {
      // A torn last line is a live write; anything else is reported.
      if (!line.torn) malformed(line.lineNo, line.problem);
      continue;
    }
    const rec = line.value;
    if (rec.$set && typeof rec.$set === "object") meta = { ...meta, ...(rec.$set as Obj) };
    else if (typeof rec.$rewindTo === "string") {
      // The message and everything after it leave the conversation; what they did stays recorded.
      const at = index.get(rec.$rewindTo);
      if (at !== undefined)
        for (const m of messages.slice(at))
          if (!rewound.has(m)) {
            rewound.add(m);
            index.delete(m.id);
          }
    } else if (typeof rec.id === "string" && typeof rec.type === "string") {
      // A message written again (its usage, its tool calls' new statuses) replaces the earlier copy.
      const at = index.get(rec.id);
      if (at === undefined) index.set(rec.id, messages.push(rec as GeminiMessage) - 1);
      else messages[at] = rec as GeminiMessage;
    } else if (typeof rec.sessionId === "string") meta = { ...meta, ...rec };
    else if (typeof rec.type === "string" && GEMINI_MESSAGE_TYPES.has(rec.type))
      unreadable(`${rec.type} message without an id: skipped`, line.lineNo);
  }
  return { meta, messages, rewound };
}

function projectPathOf(path: string, meta: Obj, warnings: ImportWarning[]): string {
  const dirs = meta.directories;
  if (Array.isArray(dirs) && typeof dirs[0] === "string") return dirs[0];
  const hash = typeof meta.projectHash === "string" ? meta.projectHash : undefined;
  let dir = dirname(path);
  if (basename(dir) !== "chats" && basename(dirname(dir)) === "chats") dir = dirname(dir); // a subagent chat: chats/<parent>/<id>.jsonl
  if (basename(dir) !== "chats") {
    // Not in a Gemini project folder (a copy in Downloads, a backup): its own folder stands in (an
    // ancestor two levels up, taken for the project folder, was unrelated to it).
    warnings.push({
      file: path,
      message: `project path unknown (Gemini keeps only its hash, and the file is not in its project's chats folder): using ${dir}`,
    });
    return dir;
  }
  const marker = join(dirname(dir), ".project_root");
  if (existsSync(marker)) return readFileSync(marker, "utf8").trim();
  const cwd = process.cwd();
  if (hash && Bun.SHA256.hash(cwd, "hex") === hash) return cwd;
  // Gemini keeps only the path's hash: its per-project folder is the one real, stable stand-in.
  warnings.push({
    file: path,
    message: `project path unknown (Gemini keeps only its hash): using ${dirname(dir)}`,
  });
  return dirname(dir);
}

/** Derive one Gemini CLI session. */
export function mapGemini(
  path: string,
  text: string,
  /** `finished`: the agent is done (`import --finished`): the session is taken as idle. */
  opts: { redact?: boolean; counts: EntryCounts; warnings: ImportWarning[]; finished?: boolean },
): ImportedSession | undefined {
  const { meta, messages, rewound } = readGemini(path, text, opts.warnings, opts.counts);
  const sourceId =
    typeof meta.sessionId === "string" ? meta.sessionId : basename(path).replace(/\.jsonl?$/, "");
  const state = newBuilderState(sessionIdFor("gemini", sourceId));
  const parentDir = basename(dirname(path));
  if (parentDir !== "chats" && basename(dirname(dirname(path))) === "chats") {
    state.parentId = sessionIdFor("gemini", parentDir);
  }
  const b = new SessionBuilder(state, opts.redact === true);
  const started = Date.parse(String(meta.startTime));
  if (started) b.touch(started);
  let model = "unknown";
  let prevAt = started || 0;
  // A call left open is cut off once a later response began, or once the session has gone idle.
  const lastResponse = messages.findLastIndex((m) => m.type === "gemini" && !rewound.has(m));
  let waiting = false;
  const idle = opts.finished === true || idleSince(lastActivity(meta, messages));
  for (const [i, m] of messages.entries()) {
    const at = Date.parse(String(m.timestamp)) || prevAt;
    try {
      const content = textOf(m.content);
      if (m.type === "user") {
        b.turnStart(m.id, at);
        b.title(textOf(m.displayContent) || content, "prompt");
        b.addMessage({ id: m.id, role: "user", parts: [{ type: "text", content }], timestamp: at });
      } else if (m.type === "gemini") {
        if (typeof m.model === "string") model = m.model;
        // The last message, still without its tokens, may be written again (Gemini CLI rewrites a
        // message whole as its tokens and tool calls come): its response waits for that, or for a
        // later message, or for the session to go idle. Written now, it stayed without usage (an
        // event is never written twice).
        const settled =
          m.tokens != null || i < messages.length - 1 || rewound.has(m) || idle || !mayStillStream(at);
        if (!settled) waiting = true;
        const open = geminiTurn(b, m, at, prevAt, model, content, settled);
        // The cut-off call keeps no output (written as a call, before the abort: `finish` wrote it
        // at the end of the log, after the turns that followed); its turn was interrupted.
        if (open !== undefined && (idle || i < lastResponse || rewound.has(m))) {
          b.writeUnanswered(open.calls);
          b.turnAbort(`${m.id}.interrupted`, open.at, "interrupted");
        }
      } else if (m.type === "error") {
        b.modelError(m.id, { provider: "google", model, startAt: prevAt, at, error: content });
      } else {
        bump(opts.counts.skipped, `message/${m.type}`);
        prevAt = at;
        continue;
      }
      opts.counts.imported++;
    } catch (error) {
      // A message of a shape we did not expect must not cost the session the others.
      unreadableEntry(opts, { file: path, entry: m.id }, error);
    }
    prevAt = at;
  }
  if (b.s.firstAt === undefined) return undefined;
  // What a rewind dropped leaves the conversation: its events stay (its model calls were made, its
  // tools ran), so the log, `usage` and eval read the same whenever the recording was imported
  // (an import before the rewind had written them, one after left them out).
  const withdrawn = [...rewound].flatMap((m) => b.withdraw(m.id) ?? []);
  // A call of the last response still waiting for its go-ahead in a session at work is not written
  // yet (`live.ts`): refused later, it would be a call and a denial. The recording is read again
  // until it is answered or the session idles. (A call already running is written: it ran.)
  const asking = idle || lastResponse < 0 ? new Set<string>() : askingCalls(messages[lastResponse]!);
  if (b.finish(true, (callId) => asking.has(callId))) waiting = true;
  b.title(typeof meta.summary === "string" ? meta.summary : undefined, "generated");
  const session = b.result({
    projectPath: projectPathOf(path, meta, opts.warnings),
    provider: "google",
    model,
    ...(state.parentId ? { parentId: state.parentId } : {}),
    source: {
      agent: "gemini",
      id: sourceId,
      path,
      ...(typeof meta.projectHash === "string" ? { projectHash: meta.projectHash } : {}),
    },
  });
  const last = Date.parse(String(meta.lastUpdated));
  if (last > session.meta.updatedAt) session.meta.updatedAt = last;
  return {
    ...session,
    mode: "full",
    ...(withdrawn.length > 0 ? { withdrawn } : {}),
    ...(waiting ? { open: true } : {}),
  };
}

/** Tool-call statuses of a call that has not run yet and may still be refused. */
const ASKING = new Set(["awaiting_approval", "scheduled", "validating"]);

/** The ids of a model message's calls waiting for their go-ahead (as `geminiTurn` names them). */
function askingCalls(m: GeminiMessage): Set<string> {
  const calls = Array.isArray(m.toolCalls) ? (m.toolCalls as Obj[]) : [];
  const ids = calls.map((c, i) => (ASKING.has(String(c.status ?? "")) ? String(c.id ?? `${m.id}.${i}`) : ""));
  return new Set(ids.filter(Boolean));
}

/**
 * A model message: its text, its tool calls (each with its result), its token usage. Returns when
 * the last of its calls that never finished was made, and their ids, if one did not.
 */
function geminiTurn(
  b: SessionBuilder,
  m: GeminiMessage,
  at: number,
  prevAt: number,
  model: string,
  content: string,
  settled: boolean,
): { at: number; calls: string[] } | undefined {
  const msg = b.addMessage({
    id: m.id,
    role: "assistant",
    parts: content ? [{ type: "text", content }] : [],
    timestamp: at,
  });
  const calls = Array.isArray(m.toolCalls) ? (m.toolCalls as Obj[]) : [];
  const names = calls.map((c) => String(c.name ?? "unknown"));
  const thoughts = Array.isArray(m.thoughts) ? (m.thoughts as Obj[]) : [];
  const t = (m.tokens ?? undefined) as Obj | undefined;
  const cached = n(t?.cached);
  if (!settled) b.modelRequest(m.id, { provider: "google", model, startAt: prevAt, at });
  else
    b.modelResponse(m.id, {
      provider: "google",
      model,
      startAt: prevAt,
      at,
      // Gemini's input includes the cached part; thoughts and tool-use prompt tokens come apart.
      usage: t
        ? {
            input: n(t.input) - cached + n(t.tool),
            cacheRead: cached,
            cacheWrite: 0,
            output: n(t.output) + n(t.thoughts),
            reasoning: n(t.thoughts),
          }
        : undefined,
      toolCalls: names,
      textChars: content.length,
      thinkingChars: thoughts.reduce((s, x) => s + String(x?.description ?? "").length, 0),
      messageId: msg.id,
    });
  let open: { at: number; calls: string[] } | undefined;
  calls.forEach((c, i) => {
    const callId = String(c.id ?? `${m.id}.${i}`);
    const args = c.args && typeof c.args === "object" ? c.args : {};
    msg.parts.push(b.r({ type: "tool", tool: { name: names[i]!, args }, callId }));
    const callAt = Date.parse(String(c.timestamp)) || at;
    b.toolCall(callId, names[i]!, args, callAt, msg.id);
    const status = String(c.status ?? "");
    if (status === "cancelled")
      b.toolResult(callId, {
        at: callAt,
        output: c.result,
        denied: { source: "user", reason: "cancelled by the user" },
      });
    else if (status === "success" || status === "error")
      b.toolResult(callId, { at: callAt, output: c.resultDisplay ?? c.result, failed: status === "error" });
    // scheduled, awaiting_approval, executing…: no result yet; `finish` writes the call alone.
    else {
      open ??= { at: callAt, calls: [] };
      open.at = Math.max(open.at, callAt);
      open.calls.push(callId);
    }
  });
  return open;
}
