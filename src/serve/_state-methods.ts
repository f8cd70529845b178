/**
 * The JSON-RPC methods that move a session through its states and labels: resume, archive /
 * unarchive, pin / unpin, run status (running, idle, interrupted) and tags. Each is a thin call into
 * the library function the TypeScript API and the CLI use. `session.markRunning` records the
 * serving process as the owner: over HTTP that is the server (the session stays `running` while the
 * server lives, and is recovered as `interrupted` once it is gone), over `--stdio` the process the
 * agent started.
 */
import * as v from "valibot";
import { badInput } from "../errors.ts";
import { markInterrupted } from "../session/interrupt.ts";
import {
  archiveSession,
  getSession,
  pinSession,
  toStoredMessages,
  unarchiveSession,
} from "../session/lifecycle.ts";
import { resumeResult, resumeSession } from "../session/resume.ts";
import { MessageInputSchema } from "../session/schema.ts";
import { markIdle, markRunning } from "../session/status.ts";
import { tagSession } from "../session/tags.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { IdSchema } from "../storage/records.ts";
import { type RpcMethods, rpcMethod } from "./rpc.ts";

const Id = { id: IdSchema };
const Tags = v.array(v.string());

/** The state and label methods, bound to `store`. */
export function sessionStateMethods(store: StorageAdapter): RpcMethods {
  const byId = (fn: (s: StorageAdapter, id: string) => Promise<unknown>) =>
    rpcMethod(v.strictObject(Id), ({ id }) => fn(store, id));
  return {
    "session.resume": rpcMethod(v.strictObject(Id), async ({ id }) =>
      resumeResult(await resumeSession(store, id)),
    ),
    "session.archive": byId(archiveSession),
    "session.unarchive": byId(unarchiveSession),
    "session.pin": rpcMethod(v.strictObject({ ...Id, pinned: v.optional(v.boolean()) }), ({ id, pinned }) =>
      pinSession(store, id, pinned ?? true),
    ),
    "session.unpin": rpcMethod(v.strictObject(Id), ({ id }) => pinSession(store, id, false)),
    "session.markRunning": byId(async (s, id) => markRunning(s, (await getSession(s, id)).id)),
    "session.markIdle": byId(async (s, id) => markIdle(s, (await getSession(s, id)).id)),
    "session.markInterrupted": rpcMethod(
      v.strictObject({ ...Id, messageId: v.optional(IdSchema), partial: v.optional(MessageInputSchema) }),
      async ({ id, messageId, partial }) => {
        if (partial !== undefined && messageId === undefined)
          throw badInput("partial needs the messageId it is stored under", { field: "partial" });
        const { id: sessionId } = await getSession(store, id);
        const stored = partial === undefined ? undefined : toStoredMessages([partial])[0];
        await markInterrupted(store, sessionId, messageId, stored);
        return getSession(store, sessionId);
      },
    ),
    "session.tag": rpcMethod(
      v.strictObject({ ...Id, add: v.optional(Tags), remove: v.optional(Tags) }),
      async ({ id, add, remove }) => {
        const meta = await tagSession(store, id, { ...(add ? { add } : {}), ...(remove ? { remove } : {}) });
        return { id: meta.id, tags: meta.tags ?? [] };
      },
    ),
  };
}
