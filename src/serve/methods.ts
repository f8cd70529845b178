/**
 * The JSON-RPC method table: `session.*` and `rollout.*` over one open store, each a thin call
 * into the same library functions the CLI commands use, with its params (by name) declared as a
 * strict valibot object so a typo or a wrong type is -32602 naming the field. What a method
 * returns is what the matching `--json` command prints. Resume, archive, pin, run status and tags
 * are in `_state-methods.ts`.
 */
import * as v from "valibot";
import type { Config } from "../config.ts";
import { notFound } from "../errors.ts";
import { eraseSession } from "../maintenance/erase.ts";
import { eventDrafts } from "../rollout/event-drafts.ts";
import { rolloutEnabled } from "../rollout/recorder.ts";
import { compactSession, DEFAULT_KEEP_USER_TURNS } from "../session/compaction.ts";
import { exportSession, importSessionDocument } from "../session/export.ts";
import {
  appendGivenMessages,
  createSession,
  deleteSession,
  forkSession,
  getSession,
  listSessions,
  renameSession,
  restoreSession,
  toStoredMessages,
} from "../session/lifecycle.ts";
import { MessageInputSchema } from "../session/schema.ts";
import { recoverCrashed } from "../session/status.ts";
import { summarizerFromConfig } from "../session/summarizer-config.ts";
import { normalizeTags } from "../session/tags.ts";
import type { ReadIssue, StorageAdapter } from "../storage/contract.ts";
import { hasEventLog } from "../storage/has-event-log.ts";
import { comparableProjectPath, isAbsoluteProjectPath } from "../storage/project-key.ts";
import type { EventRecord } from "../storage/records.ts";
import { IdSchema, SESSION_STATUSES } from "../storage/records.ts";
import { sessionStateMethods } from "./_state-methods.ts";
import { type RpcMethods, rpcMethod } from "./rpc.ts";

export interface MethodContext {
  store: StorageAdapter;
  /** config.json of the home (summarizer, rollout). */
  config: Config;
  /** Where config.json is, for error messages. */
  configFile?: string;
  /** The environment (the summarizer's API key, FREECODE_ROLLOUT); default `process.env`. */
  env?: Record<string, string | undefined>;
  /** The freecode home: a purge also erases the session's git snapshots there. */
  home?: string;
}

const Id = { id: IdSchema };
const Count = (min: number) => v.pipe(v.number(), v.safeInteger(), v.minValue(min), v.maxValue(2 ** 31 - 1));
const Messages = v.pipe(v.array(MessageInputSchema), v.minLength(1, "give at least one message"));
const Status = v.picklist(SESSION_STATUSES);

/**
 * A project path from a client: absolute. This process's working directory is not the client's
 * (an agent elsewhere sending "." got the server's directory recorded as its project).
 */
const ClientPath = v.pipe(
  v.string(),
  v.minLength(1),
  v.check(
    isAbsoluteProjectPath,
    "projectPath must be an absolute path (the server's directory is not yours)",
  ),
);

/** Every method, bound to `ctx.store`. */
export function sessionMethods(ctx: MethodContext): RpcMethods {
  const { store } = ctx;
  const env = ctx.env ?? process.env;
  return {
    "session.create": rpcMethod(
      v.strictObject({
        messages: Messages,
        projectPath: ClientPath,
        title: v.optional(v.string()),
        model: v.optional(v.string()),
        provider: v.optional(v.string()),
        id: v.optional(IdSchema),
        tags: v.optional(v.array(v.string())),
      }),
      ({ messages, tags, ...init }) =>
        createSession(
          store,
          { ...init, ...(tags !== undefined ? { tags: normalizeTags(tags) } : {}) },
          toStoredMessages(messages),
        ),
    ),
    "session.get": rpcMethod(v.strictObject(Id), ({ id }) => getSession(store, id)),
    "session.messages": rpcMethod(v.strictObject(Id), async ({ id }) => {
      const meta = await getSession(store, id);
      return store.readMessages(meta.id);
    }),
    "session.list": rpcMethod(
      v.pipe(
        v.strictObject({
          projectPath: v.optional(ClientPath),
          /** The CLI's name for `projectPath`. */
          project: v.optional(ClientPath),
          status: v.optional(v.union([Status, v.array(Status)])),
          all: v.optional(v.boolean()),
          limit: v.optional(Count(0)),
          offset: v.optional(Count(0)),
          pinnedFirst: v.optional(v.boolean()),
        }),
        // Two names for one filter: both given and not alike, one was silently dropped.
        v.forward(
          v.check(
            (p) => p.project === undefined || p.projectPath === undefined || p.project === p.projectPath,
            "give project or projectPath, not both with different paths",
          ),
          ["project"],
        ),
      ),
      async ({ project, projectPath, limit, offset, ...rest }) => {
        await recoverCrashed(store);
        const path = projectPath ?? project;
        return listSessions(store, {
          ...rest,
          ...(path !== undefined ? { projectPath: comparableProjectPath(path) } : {}),
          limit: limit ?? 50,
          offset: offset ?? 0,
        });
      },
    ),
    "session.append": rpcMethod(v.strictObject({ ...Id, messages: Messages }), async ({ id, messages }) => {
      const stored = toStoredMessages(messages);
      const chosen = messages.map((m) => m.id !== undefined);
      await appendGivenMessages(store, id, stored, chosen);
      return getSession(store, id);
    }),
    "session.rename": rpcMethod(v.strictObject({ ...Id, title: v.string() }), ({ id, title }) =>
      renameSession(store, id, title),
    ),
    "session.delete": rpcMethod(
      v.strictObject({ ...Id, purge: v.optional(v.boolean()) }),
      async ({ id, purge }) => {
        if (!purge) return deleteSession(store, id);
        await eraseSession(store, ctx.home, id);
        return { id, purged: true };
      },
    ),
    "session.restore": rpcMethod(v.strictObject(Id), ({ id }) => restoreSession(store, id)),
    ...sessionStateMethods(store),
    "session.fork": rpcMethod(
      v.strictObject({ ...Id, at: v.optional(IdSchema), title: v.optional(v.string()) }),
      ({ id, at, title }) =>
        forkSession(store, id, {
          ...(at !== undefined ? { at } : {}),
          ...(title !== undefined ? { title } : {}),
        }),
    ),
    "session.compact": rpcMethod(
      v.strictObject({ ...Id, keep: v.optional(Count(1)) }),
      async ({ id, keep }) => {
        const summarizer = summarizerFromConfig(ctx.config, env, ctx.configFile);
        const result = await compactSession(store, id, {
          keepUserTurns: keep ?? DEFAULT_KEEP_USER_TURNS,
          rollout: rolloutEnabled(env, ctx.config),
          summarizer,
        });
        return { id, ...result };
      },
    ),
    "session.export": rpcMethod(
      v.strictObject({ ...Id, rollout: v.optional(v.boolean()) }),
      ({ id, rollout }) => exportSession(store, id, { rollout: rollout === true }),
    ),
    "session.import": rpcMethod(
      v.strictObject({ document: v.unknown(), id: v.optional(IdSchema) }),
      ({ document, id }) =>
        importSessionDocument(store, document, {
          file: "params.document",
          ...(id !== undefined ? { id } : {}),
        }),
    ),
    "rollout.append": rpcMethod(
      v.strictObject({
        ...Id,
        events: v.pipe(v.array(v.unknown()), v.minLength(1, "give at least one event")),
      }),
      async ({ id, events }) => {
        const stored = await store.appendEvents(
          id,
          eventDrafts(events, id, (i, field) => ({ field: `events[${i}]${field ? `.${field}` : ""}` })),
        );
        return { id, appended: stored.length, firstSeq: stored[0]!.seq, lastSeq: stored.at(-1)!.seq };
      },
    ),
    "rollout.events": rpcMethod(
      v.strictObject({ ...Id, fromSeq: v.optional(Count(1)), limit: v.optional(Count(1)) }),
      async ({ id, fromSeq, limit }) => {
        const events: EventRecord[] = [];
        const issues: ReadIssue[] = [];
        for await (const r of store.readEvents(id, fromSeq !== undefined ? { fromSeq } : {})) {
          if (r.event) events.push(r.event);
          else issues.push(r.issue);
          if (limit !== undefined && events.length >= limit) break;
        }
        // No log yet is an empty list for a session that exists (a poller may ask before the first
        // event), and not_found for an id nothing knows.
        const nothing = events.length === 0 && issues.length === 0;
        if (nothing && !(await store.getMeta(id)) && !(await hasEventLog(store, id)))
          throw notFound(`no session or rollout log ${id}`);
        return { events, issues };
      },
    ),
  };
}
