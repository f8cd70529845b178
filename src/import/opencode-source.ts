/**
 * Where OpenCode sessions are read from: the SQLite database (`opencode.db`, read-only, and only the
 * project/session/message/part tables — never `account`, `account_state`, `control_account` or
 * `credential`, which hold tokens), an `opencode export` JSON document, or a dump of the same rows
 * as JSONL files (`session.jsonl`, `message.jsonl`, `part.jsonl`).
 */

import { Database } from "bun:sqlite";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { badInput } from "../errors.ts";
import { own, put } from "../util/dict.ts";
import { parseDocument } from "../util/json-document.ts";
import { objectLines } from "./object-lines.ts";
import type { OcMessage, OcSession } from "./opencode.ts";
import { bump, type EntryCounts, type ImportWarning } from "./types.ts";

type Row = Record<string, unknown>;
export interface OcBundle {
  session: OcSession;
  messages: OcMessage[];
}

const parseJson = (v: unknown): Record<string, unknown> => {
  if (typeof v !== "string") return v && typeof v === "object" ? (v as Record<string, unknown>) : {};
  try {
    return JSON.parse(v) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** A `session` row → the normalised session (columns differ across releases: read defensively). */
export function sessionFromRow(r: Row): OcSession {
  return {
    id: String(r.id),
    title: typeof r.title === "string" ? r.title : undefined,
    directory: typeof r.directory === "string" ? r.directory : undefined,
    parentId: typeof r.parent_id === "string" ? r.parent_id : undefined,
    created: typeof r.time_created === "number" ? r.time_created : undefined,
    updated: typeof r.time_updated === "number" ? r.time_updated : undefined,
    version: typeof r.version === "string" ? r.version : undefined,
    model: r.model ? (parseJson(r.model) as OcSession["model"]) : undefined,
  };
}

/** Messages and parts rows of one session → hydrated messages (as `MessageV2.hydrate` orders them). */
export function hydrate(messageRows: Row[], partRows: Row[]): OcMessage[] {
  const byMessage = new Map<string, OcMessage["parts"]>();
  const sortedParts = [...partRows].sort((a, b) => String(a.id).localeCompare(String(b.id)));
  for (const p of sortedParts) {
    const list = byMessage.get(String(p.message_id)) ?? [];
    list.push({ ...parseJson(p.data), id: String(p.id) });
    byMessage.set(String(p.message_id), list);
  }
  return [...messageRows]
    .sort(
      (a, b) => Number(a.time_created) - Number(b.time_created) || String(a.id).localeCompare(String(b.id)),
    )
    .map((m) => ({
      info: { ...parseJson(m.data), id: String(m.id) },
      parts: byMessage.get(String(m.id)) ?? [],
    }));
}

/**
 * The sessions of an `opencode.db`, one bundle at a time (a database of months of sessions is not
 * held in memory at once): `known` (id → time_updated) skips unchanged ones, and `stamps` is filled
 * with every session's time_updated as they are read. Only the `session`, `message` and `part`
 * tables are read (read-only), never `account`/`credential`. The database is closed when the
 * iteration ends, however it ends.
 */
export function* readOpencodeDb(
  path: string,
  known: Record<string, number> = {},
  stamps: Record<string, number> = {},
): Generator<OcBundle> {
  const db = new Database(path, { readonly: true });
  try {
    const sessions = db.query("SELECT * FROM session ORDER BY time_created, id").all() as Row[];
    const msgQuery = db.query("SELECT * FROM message WHERE session_id = ? ORDER BY time_created, id");
    const partQuery = db.query(
      "SELECT p.* FROM part p JOIN message m ON p.message_id = m.id WHERE m.session_id = ? ORDER BY p.id",
    );
    for (const row of sessions) {
      const session = sessionFromRow(row);
      put(stamps, session.id, session.updated ?? 0);
      const was = own(known, session.id);
      if (was !== undefined && was === session.updated) continue;
      yield {
        session,
        messages: hydrate(msgQuery.all(session.id) as Row[], partQuery.all(session.id) as Row[]),
      };
    }
  } finally {
    db.close();
  }
}

/**
 * The rows of one dump file. A line that is not a row (malformed JSON, `null`, `42`) or that
 * `unusable` rejects is reported with its line (and counted as a malformed line, given `counts`)
 * and skipped: one damaged row must not cost the dump the others.
 */
function readRows(
  path: string,
  io: { warnings: ImportWarning[]; counts?: EntryCounts },
  unusable: (row: Row) => string | undefined = () => undefined,
): Row[] {
  if (!existsSync(path)) return [];
  const skip = (line: number, message: string) => {
    io.warnings.push({ file: path, line, message });
    if (io.counts) bump(io.counts.skipped, "(malformed line)");
  };
  const rows: Row[] = [];
  const seen = new Map<string, number>();
  for (const line of objectLines(readFileSync(path, "utf8"))) {
    if ("problem" in line) {
      skip(line.lineNo, line.problem);
      continue;
    }
    const row = line.value;
    const why = unusable(row);
    if (why) {
      skip(line.lineNo, why);
      continue;
    }
    // A row given again (a dump appended to twice, a damaged copy): the later one stands, in the
    // earlier one's place, as a database keeps one row per id. Both kept, a message's calls were
    // logged twice.
    const id = row.id;
    const at = typeof id === "string" ? seen.get(id) : undefined;
    if (at === undefined) {
      if (typeof id === "string") seen.set(id, rows.length);
      rows.push(row);
    } else {
      rows[at] = row;
      io.warnings.push({
        file: path,
        line: line.lineNo,
        message: `row ${id} given again: the later one kept`,
      });
      if (io.counts) bump(io.counts.skipped, "(replayed entry)");
    }
  }
  return rows;
}

/** A session row's id names its messages: without one, they cannot be told from another's. */
const sessionWithoutId = (r: Row) =>
  typeof r.id === "string" && r.id !== "" ? undefined : "session row without an id: skipped";

/**
 * A folder of row dumps (`session.jsonl`, `message.jsonl`, `part.jsonl`). A damaged row is a
 * warning (and, given `counts`, a `(malformed line)`); the rest of the dump is read.
 */
export function readOpencodeRows(dir: string, warnings: ImportWarning[], counts?: EntryCounts): OcBundle[] {
  const io = { warnings, counts };
  const sessions = readRows(join(dir, "session.jsonl"), io, sessionWithoutId);
  const messages = readRows(join(dir, "message.jsonl"), io);
  const parts = readRows(join(dir, "part.jsonl"), io);
  return sessions.map((row) => {
    const session = sessionFromRow(row);
    const mine = messages.filter((m) => m.session_id === session.id);
    const ids = new Set(mine.map((m) => m.id));
    return {
      session,
      messages: hydrate(
        mine,
        parts.filter((p) => ids.has(p.message_id)),
      ),
    };
  });
}

/**
 * The JSON of an export capture. `opencode export` writes a progress line ("Exporting session:
 * ses_…") to stderr and the document to stdout, so a capture of both (`&>`, a script's combined
 * output) starts with that line: lines before the first one that opens an object are left out.
 */
function exportJson(text: string): unknown {
  const at = /^\s*\{/.test(text) ? 0 : text.search(/^\{/m);
  return parseDocument(at > 0 ? text.slice(at) : text);
}

/** An `opencode export` document (`{info, messages}`), or a reconstruction with `session_row`. */
export function readOpencodeExport(
  path: string,
  text: string,
  warnings: ImportWarning[] = [],
  counts?: EntryCounts,
): OcBundle {
  const doc = exportJson(text) as { info?: Row; session_row?: Row; messages?: OcMessage[] };
  if (!Array.isArray(doc.messages))
    throw badInput("not an OpenCode export: no messages array", { file: path, field: "messages" });
  let session: OcSession;
  if (doc.session_row) session = sessionFromRow(doc.session_row);
  else if (doc.info && typeof doc.info.id === "string") {
    const i = doc.info as Row & { time?: { created?: number; updated?: number }; parentID?: string };
    session = {
      id: String(i.id),
      title: typeof i.title === "string" ? i.title : undefined,
      directory: typeof i.directory === "string" ? i.directory : undefined,
      parentId: typeof i.parentID === "string" ? i.parentID : undefined,
      created: i.time?.created,
      updated: i.time?.updated,
      version: typeof i.version === "string" ? i.version : undefined,
    };
  } else throw badInput("not an OpenCode export: no session info", { file: path, field: "info" });
  // A message listed again (an export edited or concatenated) is read once, the later copy in the
  // earlier one's place, as a dump's row given twice is (`readRows`): both kept, its calls were
  // logged twice.
  const byId = new Map<string, OcMessage>();
  for (const m of doc.messages)
    if (m?.info && typeof m.info.id === "string") {
      if (byId.has(m.info.id)) {
        warnings.push({ file: path, message: `message ${m.info.id} given again: the later one kept` });
        if (counts) bump(counts.skipped, "(replayed entry)");
      }
      byId.set(m.info.id, m);
    }
  return {
    session,
    messages: [...byId.values()].map((m) => ({ info: m.info, parts: Array.isArray(m.parts) ? m.parts : [] })),
  };
}
