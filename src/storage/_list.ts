/** The listing rules every adapter shares: filter, hide deleted, sort, paginate. */
import type { ListPage, ListQuery } from "./contract.ts";
import type { SessionMeta } from "./records.ts";

/** Whether `meta` passes the query's filters (deleted hidden unless `all` or asked by status). */
export function matchesQuery(meta: SessionMeta, query: ListQuery): boolean {
  if (query.projectPath !== undefined && meta.projectPath !== query.projectPath) return false;
  if (query.status !== undefined) {
    const wanted = Array.isArray(query.status) ? query.status : [query.status];
    return wanted.includes(meta.status);
  }
  return query.all === true || meta.status !== "deleted";
}

/** Compare for listing: pinned first when asked, then `updatedAt` descending, then id. */
export function compareForList(pinnedFirst: boolean) {
  return (a: SessionMeta, b: SessionMeta) => {
    if (pinnedFirst && Boolean(a.pinned) !== Boolean(b.pinned)) return a.pinned ? -1 : 1;
    if (a.updatedAt !== b.updatedAt) return b.updatedAt - a.updatedAt;
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  };
}

/** Apply a whole query to an in-memory collection. */
export function applyListQuery(metas: Iterable<SessionMeta>, query: ListQuery): ListPage {
  const matched = [...metas].filter((m) => matchesQuery(m, query));
  matched.sort(compareForList(query.pinnedFirst === true));
  const offset = Math.max(0, query.offset ?? 0);
  const end = query.limit === undefined ? undefined : offset + Math.max(0, query.limit);
  return { items: matched.slice(offset, end), total: matched.length };
}
