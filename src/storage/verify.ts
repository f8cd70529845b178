/**
 * Store integrity (`freecode store verify [--repair]`). Through the contract, for any adapter:
 * unreadable and torn lines, meta counters that disagree with the log, rollout seq gaps and
 * duplicates, and a derived index that disagrees with the data. For the files adapter, also on disk:
 * torn last lines, orphan session directories, meta files the index does not list.
 *
 * Repairs are only the safe ones: cutting a torn last line (a write that was never acknowledged),
 * re-counting `messageCount`, rebuilding a derived index. A bad line in the middle of a log or a seq
 * gap is reported, never "fixed": that would be guessing at lost data.
 */
import {
  closeSync,
  existsSync,
  ftruncateSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { homePaths } from "../home.ts";
import type { ReadIssue, StorageAdapter } from "./contract.ts";

export interface Problem {
  kind: "torn_line" | "bad_line" | "count_drift" | "seq_gap" | "index_drift" | "orphan_dir" | "engine";
  sessionId?: string;
  file?: string;
  line?: number;
  detail: string;
  repairable: boolean;
  repaired?: boolean;
}

export interface VerifyReport {
  adapter: string;
  location: string;
  sessions: number;
  eventLogs: number;
  problems: Problem[];
  /** No problem is left unrepaired. */
  ok: boolean;
}

/** Cut a file back to its last complete line (the torn tail was never acknowledged). */
function cutTornTail(file: string): boolean {
  const bytes = readFileSync(file);
  if (bytes.length === 0 || bytes[bytes.length - 1] === 10) return false;
  const keep = bytes.lastIndexOf(10) + 1;
  const fd = openSync(file, "r+");
  try {
    ftruncateSync(fd, keep);
  } finally {
    closeSync(fd);
  }
  return true;
}

async function checkSessions(a: StorageAdapter, repair: boolean, problems: Problem[]): Promise<number> {
  const metas = (await a.listSessions({ all: true })).items;
  for (const meta of metas) {
    const { messages, issues } = await a.readMessages(meta.id);
    for (const i of issues) problems.push(lineProblem(i, meta.id, repair));
    if (meta.messageCount !== messages.length) {
      const p: Problem = {
        kind: "count_drift",
        sessionId: meta.id,
        detail: `meta says ${meta.messageCount} messages, the log holds ${messages.length}`,
        repairable: issues.length === 0,
      };
      if (repair && p.repairable) {
        await a.updateMeta(meta.id, (m) => ({ ...m, messageCount: messages.length }));
        p.repaired = true;
      }
      problems.push(p);
    }
  }
  return metas.length;
}

/** A line that could not be read, as a problem; a torn tail is cut off when repairing. */
function lineProblem(i: ReadIssue, sessionId: string, repair: boolean): Problem {
  const p: Problem = {
    kind: i.torn ? "torn_line" : "bad_line",
    sessionId,
    detail: i.message,
    repairable: i.torn && Boolean(i.file),
  };
  if (i.file) p.file = i.file;
  if (i.line) p.line = i.line;
  if (repair && p.repairable && i.file && existsSync(i.file)) p.repaired = cutTornTail(i.file);
  return p;
}

async function checkEvents(a: StorageAdapter, repair: boolean, problems: Problem[]): Promise<number> {
  const logs = await a.listEventLogs();
  for (const id of logs) {
    let expected = 1;
    for await (const r of a.readEvents(id)) {
      if (r.issue) {
        problems.push(lineProblem(r.issue, id, repair));
        continue;
      }
      if (r.event.seq !== expected) {
        problems.push({
          kind: "seq_gap",
          sessionId: id,
          detail: `seq ${r.event.seq} where ${expected} was expected`,
          repairable: false,
        });
      }
      expected = r.event.seq + 1;
    }
  }
  return logs.length;
}

/** Files adapter: session directories on disk against what the adapter lists. */
function checkFilesLayout(home: string, listed: Set<string>, repair: boolean, problems: Problem[]): boolean {
  const root = homePaths(home).sessions;
  if (!existsSync(root)) return false;
  let drift = false;
  for (const project of readdirSync(root)) {
    const pdir = join(root, project);
    if (!statSync(pdir).isDirectory()) continue;
    for (const id of readdirSync(pdir)) {
      const dir = join(pdir, id);
      if (!statSync(dir).isDirectory()) continue;
      const entries = readdirSync(dir);
      if (!entries.includes("meta.json")) {
        const empty = entries.length === 0;
        const p: Problem = {
          kind: "orphan_dir",
          sessionId: id,
          file: dir,
          detail: empty
            ? "empty session directory"
            : `session directory without meta.json (${entries.join(", ")})`,
          repairable: empty,
        };
        if (repair && empty) {
          rmdirSync(dir);
          p.repaired = true;
        }
        problems.push(p);
      } else if (!listed.has(id)) drift = true;
    }
  }
  return drift;
}

/** Check `adapter` (on `home`); with `repair`, fix what is safe to fix. */
export async function verifyStore(
  adapter: StorageAdapter,
  home: string,
  repair = false,
): Promise<VerifyReport> {
  const problems: Problem[] = [];
  if (adapter.name === "sqlite") {
    const { Database } = await import("bun:sqlite");
    const db = new Database(adapter.location, { readonly: true });
    try {
      const rows = db.query("PRAGMA integrity_check").all() as { integrity_check: string }[];
      for (const r of rows)
        if (r.integrity_check !== "ok")
          problems.push({
            kind: "engine",
            file: adapter.location,
            detail: r.integrity_check,
            repairable: false,
          });
    } finally {
      db.close();
    }
  }
  const sessions = await checkSessions(adapter, repair, problems);
  const eventLogs = await checkEvents(adapter, repair, problems);
  const page = await adapter.listSessions({ all: true });
  const listed = new Set(page.items.map((m) => m.id));
  // A total that disagrees with the listed items is a stale counter (sqlite/sqljs keep them).
  let drift = page.total !== page.items.length;
  if (adapter.name === "files") drift = checkFilesLayout(home, listed, repair, problems) || drift;
  if (drift) {
    const p: Problem = {
      kind: "index_drift",
      detail: "the index disagrees with the sessions stored",
      repairable: Boolean(adapter.reindex),
    };
    if (repair && adapter.reindex) {
      await adapter.reindex();
      p.repaired = true;
    }
    problems.push(p);
  }
  return {
    adapter: adapter.name,
    location: adapter.location,
    sessions,
    eventLogs,
    problems,
    ok: problems.every((p) => p.repaired),
  };
}
