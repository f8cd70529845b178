/**
 * Checking a rollout log: every line is UTF-8, parses and matches the catalogue, `seq` runs 1, 2, 3… with no
 * gap or repeat, every event names its session, and the file does not end in a torn line. Unknown
 * (newer) types are counted, not problems. Reads the raw values so that a line failing the schema
 * (or read with U+FFFD for bytes that are not UTF-8) still takes part in the seq check.
 */
import { hostname } from "node:os";
import { logEnd, markAtWork } from "../storage/batch-mark.ts";
import type { ReadIssue } from "../storage/contract.ts";
import { readJsonl } from "./_jsonl.ts";
import type { RolloutSource } from "./load.ts";
import { checkEvent } from "./validate.ts";

export type ProblemKind =
  | "torn"
  | "utf8"
  | "json"
  | "schema"
  | "seq_gap"
  | "seq_repeat"
  | "aggregate"
  | "unfinished_batch";

export interface VerifyProblem {
  kind: ProblemKind;
  /** The file, for a line that does not read (`torn`, `utf8`, `json`). */
  file?: string;
  line?: number;
  seq?: number;
  message: string;
}

export interface VerifyReport {
  sessionId: string;
  ok: boolean;
  events: number;
  lastSeq: number;
  unknownTypes: Record<string, number>;
  problems: VerifyProblem[];
}

/** Verify one rollout (a file, or a session through its adapter). */
export async function verifyRollout(source: RolloutSource, sessionId: string): Promise<VerifyReport> {
  const report: VerifyReport = { sessionId, ok: true, events: 0, lastSeq: 0, unknownTypes: {}, problems: [] };
  const issue = (i: ReadIssue) =>
    report.problems.push({
      kind: i.torn ? "torn" : i.badUtf8 ? "utf8" : "json",
      ...(i.file !== undefined && { file: i.file }),
      ...(i.line !== undefined && { line: i.line }),
      message: i.message,
    });
  const value = (raw: unknown, line: number | undefined) => {
    const at = line === undefined ? {} : { line };
    const r = checkEvent(raw);
    const seq = (raw as { seq?: unknown } | null)?.seq;
    if (r.kind === "invalid") {
      const field = r.field ? ` (field ${r.field})` : "";
      report.problems.push({ kind: "schema", ...at, message: `${r.message}${field}` });
    } else {
      report.events++;
      if (r.kind === "unknown") report.unknownTypes[r.type] = (report.unknownTypes[r.type] ?? 0) + 1;
      const agg = (raw as { aggregateID?: unknown }).aggregateID;
      if (agg !== sessionId) {
        report.problems.push({
          kind: "aggregate",
          ...at,
          message: `aggregateID "${String(agg)}" is not the session "${sessionId}"`,
        });
      }
    }
    if (typeof seq !== "number" || !Number.isSafeInteger(seq)) return;
    const expected = report.lastSeq + 1;
    if (seq < expected) {
      report.problems.push({
        kind: "seq_repeat",
        ...at,
        seq,
        message: `seq ${seq} repeats or goes back (after ${report.lastSeq})`,
      });
    } else {
      if (seq > expected) {
        report.problems.push({
          kind: "seq_gap",
          ...at,
          seq,
          message: `seq jumps from ${report.lastSeq} to ${seq}`,
        });
      }
      report.lastSeq = seq;
    }
  };
  if ("file" in source) {
    // As every reader: not past a large append under way or cut off (`storage/batch-mark.ts`), whose
    // lines were never acknowledged. One under way is no problem (its writer is alive); one cut off is.
    const end = logEnd(source.file);
    const toOffset = end?.acknowledged;
    await readJsonl(
      source.file,
      { exact: true, ...(toOffset !== undefined ? { toOffset } : {}) },
      { value, issue },
    );
    if (end?.mark && !markAtWork(end.mark)) {
      const by = end.mark.by;
      // A writer of another host cannot be checked from here (as `store verify` says).
      const fix =
        by && by.host !== hostname()
          ? `by process ${by.pid} on ${by.host}, which cannot be checked from here (once it is gone: \`store unlock --host ${by.host}\`, then \`store verify --repair\`)`
          : "cut off (the next write cuts it off, `store verify --repair` now)";
      report.problems.push({
        kind: "unfinished_batch",
        file: source.file,
        message: `${end.size - end.acknowledged} bytes past byte ${end.acknowledged} are a large append never acknowledged, ${fix}`,
      });
    }
  } else {
    for await (const item of source.adapter.readEvents(source.sessionId)) {
      if (item.issue) issue(item.issue);
      else value(item.event, undefined);
    }
  }
  report.problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  report.ok = report.problems.length === 0;
  return report;
}
