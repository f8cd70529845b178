/**
 * Claude Code transcripts (`~/.claude/projects/<slug>/<sessionId>.jsonl`) → sessions + rollouts.
 * Conversation entries are routed to a builder: the session itself, or a child session for a
 * subagent. The three subagent layouts: inline `isSidechain` entries (≤ 1.0.x, one child per
 * sidechain root, matched to its Task call by prompt), `agent-<id>.jsonl` beside the sessions
 * (2.0.x) and `<sessionId>/subagents/agent-<id>.jsonl` (2.1.x); a file of the last two imports as
 * the child of the session named by its entries' `sessionId`.
 *
 * The project path comes from the entries' `cwd`, never from the lossy folder slug.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { own, put } from "../util/dict.ts";
import { idHash } from "../util/id-hash.ts";
import { NumberSet } from "../util/number-set.ts";
import { newBuilderState, type ResultMeta, SessionBuilder } from "./builder.ts";
import { type ClaudeEntry, onAssistant, onAttachment, onSystem, onUser } from "./claude-entries.ts";
import { type ClaudeContext, type ClaudeState, flushGroup, promptKey } from "./claude-state.ts";
import { childIdFor, sessionIdFor } from "./ids.ts";
import { QUIET_MS, stillWritten, within } from "./live.ts";
import type { ImportedSession } from "./types.ts";
import { bump, type ImportWarning, newCounts, type ParseOptions, type ParseResult } from "./types.ts";

const AGENT_FILE = /^agent-(.+)\.jsonl$/;
const CONVERSATION = new Set(["user", "assistant", "system", "attachment"]);
/** Summaries waiting for their leaf entry, at most (a file has a handful; the state is saved). */
const MAX_PENDING_SUMMARIES = 64;

export class ClaudeParser {
  private readonly st: ClaudeState;
  private readonly builders = new Map<string, SessionBuilder>();
  private readonly counts = newCounts();
  private readonly warnings: ImportWarning[] = [];
  private readonly agentFile: RegExpExecArray | null;
  private readonly ctx: ClaudeContext;
  /** The uuids of the entries read, as `idHash` numbers (see `feed`; saved as `ClaudeState.seen`). */
  private readonly seen: NumberSet;

  constructor(
    private readonly opts: ParseOptions,
    state?: ClaudeState,
  ) {
    this.st = state ?? {
      children: {},
      groups: {},
      prevAt: {},
      sidechainOf: {},
      taskPrompts: {},
      titles: {},
    };
    this.agentFile = AGENT_FILE.exec(basename(opts.path));
    this.seen = NumberSet.parse(this.st.seen);
    this.ctx = {
      st: this.st,
      counts: this.counts,
      warnings: this.warnings,
      file: opts.path,
      redact: opts.redact === true,
      builder: (id) => this.builderFor(id),
      closed: NumberSet.parse(this.st.closed),
    };
  }

  get state(): ClaudeState {
    for (const b of this.builders.values()) b.saved();
    this.st.seen = this.seen.pack();
    this.st.closed = this.ctx.closed.pack();
    return this.st;
  }

  private builderFor(id: string): SessionBuilder {
    let b = this.builders.get(id);
    if (b) return b;
    const state = this.st.main?.id === id ? this.st.main : this.st.children[id];
    if (!state) throw new Error(`no builder ${id}`);
    b = new SessionBuilder(state, this.opts.redact === true);
    this.builders.set(id, b);
    return b;
  }

  /** The session this file is: created at its first conversation entry. */
  private mainBuilder(e: ClaudeEntry): SessionBuilder {
    if (!this.st.main) {
      const sid = typeof e.sessionId === "string" ? e.sessionId : basename(this.opts.path, ".jsonl");
      if (this.agentFile) {
        const agentId = typeof e.agentId === "string" ? e.agentId : this.agentFile[1]!;
        const parentSid = this.parentFromPath() ?? sid;
        const parentId = sessionIdFor("claude", parentSid);
        this.st.main = newBuilderState(childIdFor(parentId, "agent", agentId));
        this.st.main.parentId = parentId;
        this.st.sourceId = agentId;
        this.st.agentId = agentId;
      } else {
        this.st.main = newBuilderState(sessionIdFor("claude", sid));
        this.st.sourceId = sid;
      }
    }
    return this.builderFor(this.st.main.id);
  }

  /** 2.1.x layout: `<sessionId>/subagents/agent-<id>.jsonl`. */
  private parentFromPath(): string | undefined {
    const dir = dirname(this.opts.path);
    if (basename(dir) === "subagents") return basename(dirname(dir));
    return undefined;
  }

  /**
   * Feed one parsed line. An entry whose `uuid` this read has already seen is a replay: resuming a
   * session (a compacted one above all) makes Claude Code write earlier entries into the file again,
   * uuid and timestamp kept, often with other metadata (`gitBranch`, `promptId`, `version`).
   * Imported again, each would be a second turn, call and response, and its usage counted twice;
   * the first copy is kept and the others counted as `(replayed entry)`.
   */
  feed(e: ClaudeEntry, line: number): void {
    const type = typeof e.type === "string" ? e.type : "(no type)";
    if (!CONVERSATION.has(type)) {
      this.metadata(e, type);
      return;
    }
    if (typeof e.uuid === "string") {
      const h = idHash(e.uuid);
      if (this.seen.has(h)) {
        bump(this.counts.skipped, "(replayed entry)");
        return;
      }
      this.seen.add(h);
    }
    const pending = this.st.titles.summaries;
    if (pending && typeof e.uuid === "string") this.summaryLeaf(pending, e.uuid);
    if (typeof e.cwd === "string" && e.cwd && !this.st.cwd) this.st.cwd = e.cwd;
    if (typeof e.version === "string") this.st.version = e.version;
    if (typeof e.gitBranch === "string" && e.gitBranch) this.st.gitBranch = e.gitBranch;
    const main = this.mainBuilder(e);
    const b = this.route(e, main);
    const at = Date.parse(String(e.timestamp)) || this.st.prevAt[b.id] || main.s.lastAt || 0;
    switch (type) {
      case "user":
        onUser(this.ctx, b, e, at, line);
        break;
      case "assistant":
        onAssistant(this.ctx, b, e, at);
        break;
      case "system":
        onSystem(this.ctx, b, e, at);
        break;
      default:
        onAttachment(this.ctx, b, e, at);
    }
    this.st.prevAt[b.id] = at;
  }

  /** Inline sidechains (≤ 1.0.x) go to a child session per sidechain root. */
  private route(e: ClaudeEntry, main: SessionBuilder): SessionBuilder {
    if (e.isSidechain !== true || this.agentFile) return main;
    const uuid = String(e.uuid ?? "");
    const parent = typeof e.parentUuid === "string" ? own(this.st.sidechainOf, e.parentUuid) : undefined;
    let childId = parent;
    if (!childId) {
      const prompt = promptKey(e.message?.content);
      const callId = prompt ? own(this.st.taskPrompts, prompt) : undefined;
      childId = childIdFor(main.id, "task", callId ?? uuid);
      if (!this.st.children[childId]) {
        const state = newBuilderState(childId);
        state.parentId = main.id;
        this.st.children[childId] = state;
        // The Task call's own description ("Setup Next.js project") names the child best.
        const task = callId
          ? (main.pendingCall(callId)?.args as { description?: string } | undefined)
          : undefined;
        if (task?.description) this.builderFor(childId).title(task.description, "generated");
      }
    }
    if (uuid) put(this.st.sidechainOf, uuid, childId);
    return this.builderFor(childId);
  }

  private metadata(e: ClaudeEntry, type: string): void {
    const t = this.st.titles;
    if (type === "custom-title" && typeof e.customTitle === "string") t.user = e.customTitle;
    else if (type === "ai-title" && typeof e.aiTitle === "string") t.generated = e.aiTitle;
    else if (type === "summary" && typeof e.summary === "string") {
      // A leaf read already (Claude Code appends summaries to the file it writes): this session's.
      if (typeof e.leafUuid !== "string" || this.seen.has(idHash(e.leafUuid))) t.summary ??= e.summary;
      else if (t.summary === undefined && (t.summaries?.length ?? 0) < MAX_PENDING_SUMMARIES)
        (t.summaries ??= []).push({ text: e.summary, leaf: e.leafUuid });
    } else {
      bump(this.counts.skipped, type);
      return;
    }
    this.counts.imported++;
  }

  /**
   * A `summary` line (≤ 1.0.x, at the top of the file) titles the branch that ends at its
   * `leafUuid`, and that leaf can be in another session's file (a resumed session's summaries are
   * copied along): a summary titles this session only once its leaf is an entry here.
   */
  private summaryLeaf(pending: { text: string; leaf: string }[], uuid: string): void {
    const hit = pending.find((p) => p.leaf === uuid);
    if (!hit) return;
    this.st.titles.summary ??= hit.text;
    delete this.st.titles.summaries;
  }

  /**
   * End of this read: flush open responses and write unanswered calls (final), except what may
   * still be written (`live.ts`); return the derived sessions.
   */
  finish(): ParseResult {
    const final = this.opts.final !== false;
    const lastLine = Math.max(...Object.values(this.st.prevAt));
    const live = final && stillWritten(this.opts.lastWrite, lastLine);
    // A watch pass closes a response that said it is complete once the file has been quiet a while:
    // left open, a finished answer showed in flight, then hung, until a final read. (Not at once:
    // Claude Code 2.1.1xx puts the `stop_reason` on every line of a response, written together.)
    const quiet = this.opts.lastWrite !== undefined && !within(this.opts.lastWrite, QUIET_MS);
    const ids = this.sessionIds();
    let open = false;
    let settling = false;
    for (const id of ids) {
      const b = this.builderFor(id);
      const g = own(this.st.groups, id);
      // A final read leaves open, too, a response that stopped for its tool calls while the file is
      // not yet quiet: their results (and, in 2.1.1xx, its other blocks) come after its last line.
      // Closed at once, it was written before them, and the log differed from one read of the
      // whole file. One that ended its turn is closed at once (a CI run imports as the agent exits).
      // What it holds stays held, as in a watch pass: written now, the results would go in before
      // the response's end, which the next read writes (see `claude-held.ts`).
      if (final && g && live && (!g.stopped || (g.awaitsTools && !quiet))) open = true;
      else if (g && (final || (g.stopped && quiet))) {
        flushGroup(this.ctx, b);
        put((this.st.cut ??= {}), id, g.responseId);
      } else if (g?.stopped) settling = true;
      if (b.finish(final, live ? () => true : undefined)) open = true;
    }
    const sessions = ids.map((id) => this.sessionOf(id));
    return {
      sessions,
      counts: this.counts,
      warnings: this.warnings,
      ...(open ? { open } : {}),
      ...(settling ? { settling } : {}),
    };
  }

  /**
   * Mid-read: hand over what can no longer change, per session (see `SessionBuilder.result`), so
   * a long transcript is written in parts. Sessions with nothing ready are left out.
   */
  drain(): ImportedSession[] {
    const ids = this.sessionIds();
    return ids.flatMap((id) => this.sessionOf(id, true) ?? []);
  }

  /** The sessions this file feeds: its own, then its inline subagents. */
  private sessionIds(): string[] {
    return [...(this.st.main ? [this.st.main.id] : []), ...Object.keys(this.st.children)];
  }

  private sessionOf(id: string): ImportedSession;
  private sessionOf(id: string, partial: true): ImportedSession | undefined;
  private sessionOf(id: string, partial?: true) {
    const b = this.builderFor(id);
    const isMain = id === this.st.main?.id;
    const t = this.st.titles;
    if (isMain) {
      b.title(t.summary, "generated");
      b.title(t.generated, "generated", true);
      b.title(t.user, "user", true);
      if (this.agentFile) b.title(this.agentMetaTitle(), "generated");
    }
    const sourceId = isMain ? (this.st.sourceId ?? id) : id;
    const meta: ResultMeta = {
      projectPath: this.st.cwd ?? "",
      provider: "anthropic",
      ...((b.s.model ?? this.st.lastModel) ? { model: b.s.model ?? this.st.lastModel } : {}),
      ...(b.s.parentId ? { parentId: b.s.parentId } : {}),
      source: {
        agent: "claude",
        id: sourceId,
        path: this.opts.path,
        ...(this.st.version ? { version: this.st.version } : {}),
        ...(this.st.gitBranch ? { gitBranch: this.st.gitBranch } : {}),
        ...(isMain && this.st.agentId ? { agentId: this.st.agentId } : {}),
      },
    };
    return partial ? b.result(meta, true) : b.result(meta);
  }

  /** 2.1.x writes `agent-<id>.meta.json` ({agentType, description}) beside a subagent file. */
  private agentMetaTitle(): string | undefined {
    const metaPath = join(dirname(this.opts.path), basename(this.opts.path, ".jsonl") + ".meta.json");
    if (!existsSync(metaPath)) return undefined;
    try {
      const m = JSON.parse(readFileSync(metaPath, "utf8")) as { agentType?: string; description?: string };
      return [m.agentType, m.description].filter(Boolean).join(": ") || undefined;
    } catch {
      this.warnings.push({ file: metaPath, message: "unreadable subagent meta.json (ignored)" });
      return undefined;
    }
  }
}
