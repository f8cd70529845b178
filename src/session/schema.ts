/**
 * The session schemas (the persisted shapes live in storage/records.ts; re-exported here for the
 * session API) and the shape of messages given from outside (`session append` input): ids and
 * timestamps may be left out and are filled in.
 */
import * as v from "valibot";
import { IdSchema, PartSchema } from "../storage/records.ts";

export {
  MessageSchema,
  type Part,
  PartSchema,
  SESSION_STATUSES,
  type SessionMeta,
  SessionMetaSchema,
  type SessionStatus,
  type StoredMessage,
  type Usage,
  UsageSchema,
} from "../storage/records.ts";

/** The roles a message may have; anything else is rejected. */
export const ROLES = ["user", "assistant", "system"] as const;

/** A message as given by a caller: `id` and `timestamp` optional. */
export const MessageInputSchema = v.looseObject({
  id: v.optional(IdSchema),
  role: v.picklist(ROLES, `role must be one of ${ROLES.join(", ")}`),
  parts: v.array(PartSchema),
  timestamp: v.optional(v.number()),
  interrupted: v.optional(v.boolean()),
  usage: v.optional(v.looseObject({})),
  responseId: v.optional(v.string()),
  synthetic: v.optional(v.string()),
});
export type MessageInput = v.InferOutput<typeof MessageInputSchema>;
