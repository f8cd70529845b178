/**
 * What a migration copied, recorded in its marker (`migrationMarker`) as it goes: before each
 * session and each rollout log, a line saying it starts; after it, a line with what the target
 * held of it once copied — its messages' count and last id and a hash of its meta and context
 * cache (a rename, a tag, a delete move no `updatedAt`), or its events' count and last id. A migration run again after one was killed tells by them whether the
 * target was written to since (an append it acknowledged), whatever the source did meanwhile;
 * comparing with the source could not (a source compacted or rewound since looked like a write in
 * the target, or hid one). What the target holds of a part the migration never started is the
 * target's own.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { canonicalJson } from "../util/canonical-json.ts";
import type { StorageAdapter } from "./contract.ts";

/** What the target held of one id right after the migration copied it. */
export interface CopiedState {
  session?: { messages: number; last: string | null; meta: string };
  log?: { events: number; last: string | null };
}

/** A part of one id: its session (meta, messages, context cache) or its rollout log. */
export type CopyPart = keyof CopiedState;

/** What the marker says of one id: the parts whose copy started, and what each copied one held. */
export interface CopyRecord {
  started: Set<CopyPart>;
  copied: CopiedState;
}

/** What the target holds of session `id`'s messages, meta and context cache now. */
export async function sessionState(target: StorageAdapter, id: string): Promise<CopiedState["session"]> {
  const meta = await target.getMeta(id);
  if (!meta) return undefined;
  const { messages } = await target.readMessages(id);
  const cache = await target.getContextCache(id);
  const hash = new Bun.CryptoHasher("sha256").update(canonicalJson([meta, cache ?? null])).digest("hex");
  return { messages: messages.length, last: messages.at(-1)?.id ?? null, meta: hash };
}

/** What the target holds of the rollout log `id` now. */
export async function logState(target: StorageAdapter, id: string): Promise<CopiedState["log"]> {
  let events = 0;
  let last: string | null = null;
  for await (const r of target.readEvents(id)) {
    events++;
    last = r.event?.id ?? null;
  }
  return { events, last };
}

/** Record that the copy of `id`'s `part` starts. */
export function recordStarted(marker: string, id: string, part: CopyPart): void {
  appendFileSync(marker, `${JSON.stringify({ started: id, part })}\n`);
}

/** Record that `id` was copied and what the target held of it then. */
export function recordCopied(marker: string, id: string, state: CopiedState): void {
  appendFileSync(marker, `${JSON.stringify({ copied: id, ...state })}\n`);
}

/**
 * What the marker says of each id; `undefined` for a marker that records none (an older version's).
 * A line cut short by the kill is left out: a copy it would have recorded counts as started only.
 */
export function readCopies(marker: string): Map<string, CopyRecord> | undefined {
  let text: string;
  try {
    text = readFileSync(marker, "utf8");
  } catch {
    return undefined;
  }
  const [head, ...lines] = text.split("\n");
  let header: { copies?: unknown } | undefined;
  try {
    header = JSON.parse(head ?? "");
  } catch {
    return undefined;
  }
  if (header?.copies !== true) return undefined;
  const records = new Map<string, CopyRecord>();
  const recordOf = (id: string) => {
    let r = records.get(id);
    if (!r) records.set(id, (r = { started: new Set(), copied: {} }));
    return r;
  };
  for (const line of lines) {
    let entry: ({ started?: unknown; part?: unknown; copied?: unknown } & CopiedState) | undefined;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof entry?.started === "string" && (entry.part === "session" || entry.part === "log"))
      recordOf(entry.started).started.add(entry.part);
    if (typeof entry?.copied !== "string") continue;
    const r = recordOf(entry.copied);
    if (entry.session) r.copied.session = entry.session;
    if (entry.log) r.copied.log = entry.log;
  }
  return records;
}

/** Why what the target holds now is not what it held when copied, or undefined. */
export function movedSince(copied: CopiedState, now: CopiedState): string | undefined {
  const [a, b] = [copied.session, now.session];
  if (a && b) {
    if (b.messages !== a.messages || b.last !== a.last)
      return `its messages changed in the target since the copy (${a.messages} then, ${b.messages} now)`;
    if (b.meta !== a.meta) return "its meta or context cache changed in the target since the copy";
  }
  const [x, y] = [copied.log, now.log];
  if (x && y && (y.events !== x.events || y.last !== x.last))
    return `its rollout log changed in the target since the copy (${x.events} events then, ${y.events} now)`;
  return undefined;
}
