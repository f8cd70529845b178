/**
 * The listing index as one JSON file (`state/sessions-index.json`), for hosts where SQLite cannot
 * start. Same data as the SQLite index; every change rewrites the file atomically under a lock.
 */
import { readFileSync } from "node:fs";
import { writeFileAtomic } from "../../util/atomic.ts";
import { withLockSync } from "../../util/lock.ts";
import { applyListQuery } from "../_list.ts";
import type { IndexBackend, IndexRow, IndexState } from "./_files-index.ts";

interface Doc {
  state?: IndexState;
  rows: Record<string, IndexRow>;
}

/**
 * Rows keyed by session id, in an object without a prototype: in a plain one, `rows["__proto__"] =`
 * sets its prototype and `rows["toString"]` is a function, so such sessions were never listed.
 */
const rowsOf = (from: Record<string, IndexRow> = {}): Record<string, IndexRow> =>
  Object.assign(Object.create(null), from);

/** Open the JSON index at `path`, locking with `lockPath` while it changes. */
export function openJsonIndex(path: string, lockPath: string): IndexBackend {
  let doc: Doc = { rows: rowsOf() };
  let dirty = false;
  const load = () => {
    try {
      const parsed = JSON.parse(readFileSync(path, "utf8")) as Doc;
      doc =
        parsed && typeof parsed.rows === "object" && parsed.rows !== null
          ? { ...(parsed.state ? { state: parsed.state } : {}), rows: rowsOf(parsed.rows) }
          : { rows: rowsOf() };
    } catch {
      doc = { rows: rowsOf() }; // missing or corrupt: the caller rebuilds
    }
  };
  load();
  return {
    kind: "json",
    exclusive(fn) {
      return withLockSync(lockPath, () => {
        load();
        dirty = false;
        const out = fn();
        if (dirty) writeFileAtomic(path, JSON.stringify(doc));
        return out;
      });
    },
    state: () => doc.state,
    setState(state) {
      doc.state = state;
      dirty = true;
    },
    upsert(rows) {
      for (const row of rows) doc.rows[row.meta.id] = row;
      dirty ||= rows.length > 0;
    },
    remove(ids) {
      for (const id of ids) delete doc.rows[id];
      dirty ||= ids.length > 0;
    },
    idsOf: (key) =>
      Object.values(doc.rows)
        .filter((r) => r.key === key)
        .map((r) => r.meta.id),
    keyOf: (id) => (Object.hasOwn(doc.rows, id) ? doc.rows[id]!.key : undefined),
    clear() {
      doc = { rows: rowsOf() };
      dirty = true;
    },
    query: (query) =>
      applyListQuery(
        Object.values(doc.rows).map((r) => r.meta),
        query,
      ),
    close() {},
  };
}
