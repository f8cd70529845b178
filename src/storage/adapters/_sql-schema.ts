/**
 * The SQL schema shared by the sqlite and sqljs adapters, versioned with `PRAGMA user_version` and
 * brought up to date by numbered migrations, each run once in its own transaction. Meta, messages
 * and events are stored as their JSON text (lossless: fields a later version adds survive); the
 * columns beside them exist only to index and count.
 */
import { FreecodeError } from "../../errors.ts";
import type { SqlDriver } from "./_sql-driver.ts";

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/** Version 1: sessions by update time, messages by position, events by seq. */
export const V1_DDL = `
CREATE TABLE sessions (id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, meta TEXT NOT NULL);
CREATE INDEX sessions_updated ON sessions (updated_at DESC, id);
CREATE TABLE messages (
  session_id TEXT NOT NULL, pos INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, pos)
) WITHOUT ROWID;
CREATE TABLE events (
  session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE context_cache (session_id TEXT PRIMARY KEY, body TEXT NOT NULL);
`;

/**
 * Version 2: project/status/pinned columns for filtered listing, per-(project, status) counters kept
 * by triggers so `total` costs the same for 100 or 100,000 sessions, and a per-session event
 * counter so assigning `seq` and listing event logs do not scan the events.
 */
const V2_DDL = `
ALTER TABLE sessions ADD COLUMN project_path TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT 'idle';
ALTER TABLE sessions ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
UPDATE sessions SET project_path = json_extract(meta, '$.projectPath'), status = json_extract(meta, '$.status'),
  pinned = coalesce(json_extract(meta, '$.pinned'), 0);
CREATE INDEX sessions_project_updated ON sessions (project_path, updated_at DESC, id);
CREATE INDEX sessions_pinned_updated ON sessions (pinned DESC, updated_at DESC, id);
CREATE TABLE session_counts (
  project_path TEXT NOT NULL, status TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (project_path, status)
) WITHOUT ROWID;
INSERT INTO session_counts SELECT project_path, status, count(*) FROM sessions GROUP BY project_path, status;
CREATE TRIGGER sessions_count_ins AFTER INSERT ON sessions BEGIN
  INSERT INTO session_counts VALUES (new.project_path, new.status, 1)
    ON CONFLICT (project_path, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sessions_count_del AFTER DELETE ON sessions BEGIN
  UPDATE session_counts SET n = n - 1 WHERE project_path = old.project_path AND status = old.status;
END;
CREATE TRIGGER sessions_count_upd AFTER UPDATE OF project_path, status ON sessions
WHEN old.project_path IS NOT new.project_path OR old.status IS NOT new.status BEGIN
  UPDATE session_counts SET n = n - 1 WHERE project_path = old.project_path AND status = old.status;
  INSERT INTO session_counts VALUES (new.project_path, new.status, 1)
    ON CONFLICT (project_path, status) DO UPDATE SET n = n + 1;
END;
CREATE TABLE event_logs (session_id TEXT PRIMARY KEY, last_seq INTEGER NOT NULL, count INTEGER NOT NULL);
INSERT INTO event_logs SELECT session_id, max(seq), count(*) FROM events GROUP BY session_id;
`;

/**
 * Version 3: each message's own id beside its body, indexed, so an append of ids a caller chose
 * looks for just those (it read every body of the session: building one of 8,000 messages a given
 * id at a time took 58 s). A body that does not read holds no id.
 */
const V3_DDL = `
ALTER TABLE messages ADD COLUMN message_id TEXT;
UPDATE messages SET message_id = CASE WHEN json_valid(body) THEN json_extract(body, '$.id') END;
CREATE INDEX messages_message_id ON messages (session_id, message_id);
`;

export const MIGRATIONS: Migration[] = [
  { version: 1, description: "sessions, messages, events, context cache", sql: V1_DDL },
  { version: 2, description: "listing columns, counters, event log heads", sql: V2_DDL },
  { version: 3, description: "message ids, indexed", sql: V3_DDL },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The schema version of an open database (0 for an empty one). */
export function schemaVersion(d: SqlDriver): number {
  return d.get<{ user_version: number }>("PRAGMA user_version")?.user_version ?? 0;
}

/**
 * Bring the database to `SCHEMA_VERSION`; returns the version it had. A database made by a newer
 * freecode is refused rather than guessed at.
 */
export function migrate(d: SqlDriver, location: string, upTo = SCHEMA_VERSION): number {
  const from = schemaVersion(d);
  if (from > SCHEMA_VERSION) {
    throw new FreecodeError(
      "bad_input",
      `store schema version ${from} is newer than this freecode understands (${SCHEMA_VERSION}); upgrade freecode`,
      { source: { file: location } },
    );
  }
  for (const m of MIGRATIONS) {
    if (m.version <= from || m.version > upTo) continue;
    d.exec("BEGIN IMMEDIATE");
    try {
      // Re-check inside the write lock: another process may have migrated meanwhile.
      if (schemaVersion(d) < m.version) {
        d.exec(m.sql);
        d.exec(`PRAGMA user_version = ${m.version}`);
      }
      d.exec("COMMIT");
    } catch (error) {
      d.exec("ROLLBACK");
      throw new FreecodeError("internal", `migrating ${location} to schema ${m.version} failed`, {
        cause: error,
        source: { file: location },
      });
    }
  }
  return from;
}
