/** Ids for sessions and messages: sortable by creation time, safe as file names. */

/** A new session id (`ses_` + time + random, 30 chars). */
export function newSessionId(now = Date.now()): string {
  return `ses_${now.toString(36)}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/** A new message id. */
export function newMessageId(now = Date.now()): string {
  return `msg_${now.toString(36)}${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}
