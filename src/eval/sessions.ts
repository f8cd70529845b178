/**
 * Which recorded sessions exist, and which of them a case selects. Sessions come from rollout files
 * (`--sessions PATH`: a file, a folder searched for *.jsonl, or a glob; the id is the parent folder of
 * an `events.jsonl`, else the file stem; an optional `meta.json` beside it gives title, project and
 * tags) or from a store (`--home`). Selectors filter with AND; time bounds use the meta's `createdAt`,
 * or the trace's start when there is no meta (decided after the fold). A soft-deleted session is
 * selected only by its id.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import * as v from "valibot";
import { badInput } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import { type SessionMeta, SessionMetaSchema } from "../storage/records.ts";
import { type Selector, titleRegex } from "./case-schema.ts";
import { nameMatches, projectMatches } from "./match/glob.ts";

/**
 * What eval reads of a session's meta: the store's whole meta, or what a `meta.json` beside a log
 * gives — any of title, project, tags, creation time (a hand-written one holds no more), and the
 * status, owner and source a store's copy carries.
 */
export type RefMeta = Partial<
  Pick<SessionMeta, "title" | "projectPath" | "tags" | "createdAt" | "status" | "owner" | "source">
> & { taskId?: string };

export interface SessionRef {
  sessionId: string;
  /** The rollout file; absent for sessions read through the store. */
  file?: string;
  meta?: RefMeta;
  /** A `meta.json` beside the log that cannot be read: the session is set aside, naming it. */
  metaProblem?: string;
}

const MetaBesideSchema = v.looseObject({
  title: v.optional(v.string()),
  projectPath: v.optional(v.string()),
  tags: v.optional(v.array(v.string())),
  createdAt: v.optional(SessionMetaSchema.entries.createdAt),
  status: SessionMetaSchema.entries.previousStatus,
  owner: SessionMetaSchema.entries.owner,
  source: SessionMetaSchema.entries.source,
  taskId: v.optional(v.string()),
});

const GLOB_CHARS = /[*?[{]/;

/**
 * The optional `meta.json` beside a rollout. A missing one is the common case, so it is not read to
 * find out: `withMeta` (the folders a scan saw a `meta.json` in) answers without a system call, else
 * one `existsSync` does (a failed read throws, and an exception cost ~3× the check).
 */
function metaBeside(
  file: string,
  withMeta?: ReadonlySet<string>,
): { meta: RefMeta } | { problem: string } | undefined {
  const dir = dirname(file);
  const path = join(dir, "meta.json");
  if (withMeta ? !withMeta.has(dir) : !existsSync(path)) return undefined;
  // One that cannot be read is not "no meta": selectors on it would skip the session silently.
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    return { problem: `${path}: ${(error as Error).message}` };
  }
  const r = v.safeParse(MetaBesideSchema, raw);
  if (r.success) return { meta: r.output as RefMeta };
  const field = v.getDotPath(r.issues[0]);
  return { problem: `${path}: ${r.issues[0].message}${field ? ` (field ${field})` : ""}` };
}

const idOf = (file: string) =>
  basename(file) === "events.jsonl" ? basename(dirname(file)) : basename(file).replace(/\.jsonl$/i, "");

/** Rollout files under a file, folder or glob (relative paths against `cwd`). */
export function sessionsFromPath(path: string, cwd = process.cwd()): SessionRef[] {
  let files: string[];
  let withMeta: Set<string> | undefined;
  if (GLOB_CHARS.test(path)) {
    const absolute = path.startsWith("/");
    const glob = new Bun.Glob(absolute ? path.slice(1) : path);
    files = [...glob.scanSync({ cwd: absolute ? "/" : cwd, onlyFiles: true, absolute: true })];
  } else {
    const p = resolve(cwd, path);
    if (!existsSync(p)) throw badInput("no such sessions file or folder", { file: path });
    if (statSync(p).isDirectory()) {
      // One scan finds the logs and the folders with a meta.json.
      files = [];
      withMeta = new Set();
      for (const f of new Bun.Glob("**/{*.jsonl,meta.json}").scanSync({
        cwd: p,
        onlyFiles: true,
        absolute: true,
      })) {
        if (basename(f) === "meta.json") withMeta.add(dirname(f));
        else files.push(f);
      }
    } else files = [p];
  }
  const byId = new Map<string, SessionRef>();
  for (const file of files.sort()) {
    const sessionId = idOf(file);
    const prior = byId.get(sessionId);
    if (prior)
      throw badInput(`two rollout files for session "${sessionId}" (${prior.file} and ${file})`, { file });
    const beside = metaBeside(file, withMeta);
    byId.set(sessionId, {
      sessionId,
      file,
      ...(beside && "meta" in beside ? { meta: beside.meta } : {}),
      ...(beside && "problem" in beside ? { metaProblem: beside.problem } : {}),
    });
  }
  return [...byId.values()];
}

/** Every session with a rollout log in the store, with its meta when it has one. */
export async function sessionsFromStore(adapter: StorageAdapter): Promise<SessionRef[]> {
  const ids = await adapter.listEventLogs();
  const metas = new Map((await adapter.listSessions({ all: true })).items.map((m) => [m.id, m]));
  return ids.sort().map((sessionId) => {
    const meta = metas.get(sessionId);
    return meta ? { sessionId, meta } : { sessionId };
  });
}

/** A selector in its object form. */
export type SelectorObject = Exclude<Selector, "all" | string[]>;
export const normalizeSelector = (s: Selector | undefined): SelectorObject =>
  s === undefined || s === "all" ? { all: true } : Array.isArray(s) ? { ids: s } : s;

/** A date bound as epoch ms. */
export const toTime = (t: string | number) => (typeof t === "number" ? t : Date.parse(t));

/** Whether a start time lies in the selector's [since, until) range. */
export function inTimeRange(sel: SelectorObject, at: number): boolean {
  if (sel.since !== undefined && at < toTime(sel.since)) return false;
  if (sel.until !== undefined && at >= toTime(sel.until)) return false;
  return true;
}

export interface Selection {
  refs: SessionRef[];
  /** Ids the selector named that do not exist. */
  missing: string[];
}

function titleMatches(pattern: string, title: string): boolean {
  const re = titleRegex(pattern);
  return re ? new RegExp(re.source, re.flags).test(title) : nameMatches(pattern, title);
}

/**
 * The sessions a selector picks from `base` (or from its own `path`, relative to `caseDir`). Time
 * bounds are applied here only to sessions with meta; the runner applies them to the rest after the fold.
 */
export function select(selector: Selector | undefined, base: SessionRef[], caseDir: string): Selection {
  const sel = normalizeSelector(selector);
  let refs = sel.path ? sessionsFromPath(sel.path, caseDir) : base;
  const missing: string[] = [];
  if (sel.ids) {
    const byId = new Map(refs.map((r) => [r.sessionId, r]));
    refs = sel.ids.flatMap((id) => {
      const r = byId.get(id);
      if (!r) missing.push(id);
      return r ? [r] : [];
    });
  }
  refs = refs.filter((r) => {
    // Set aside later, naming its meta.json: no filter can tell whether it belongs.
    if (r.metaProblem) return true;
    const m = r.meta;
    // Soft-deleted: out of sight, as `session list` keeps it, unless named by its id (`sessions: all`
    // failed a case on sessions the user had deleted).
    if (m?.status === "deleted" && !sel.ids) return false;
    // A project or start the meta does not give is the trace's: decided after the fold.
    if (sel.project && m?.projectPath !== undefined && !projectMatches(sel.project, m.projectPath))
      return false;
    if (sel.title && !(m?.title !== undefined && titleMatches(sel.title, m.title))) return false;
    if (sel.tags && !(m?.tags && sel.tags.every((t) => m.tags!.includes(t)))) return false;
    if (m?.createdAt !== undefined && !inTimeRange(sel, m.createdAt)) return false;
    return true;
  });
  return { refs, missing };
}

/**
 * The task a session is a trial of, for pass^k: meta `taskId`, else a `task:<id>` tag, else the id
 * without a trailing trial number (`fix-login-2` → `fix-login`).
 */
export function taskIdOf(ref: SessionRef): string {
  const m = ref.meta;
  if (typeof m?.taskId === "string") return m.taskId;
  const tag = m?.tags?.find((t) => t.startsWith("task:"));
  if (tag) return tag.slice(5);
  return ref.sessionId.replace(/[-_.#]\d+$/, "");
}
