/**
 * One session's rollout log (`rollout/sessions/<id>/events.jsonl`). `seq` comes from the log itself
 * under the session's event lock: the last seq is cached with the file's size and re-read from the
 * tail only when another process (or a crash) changed the file. A batch is one lock, one write.
 */
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { DIR_MODE } from "../../util/atomic.ts";
import { lastLineMatching } from "../../util/last-line.ts";
import { readLines } from "../../util/lines.ts";
import { badUtf8Message } from "../../util/utf8.ts";
import { stampEvents } from "../_events.ts";
import { firstSeq } from "../_validate.ts";
import { acknowledgedSize } from "../batch-mark.ts";
import type { EventRead } from "../contract.ts";
import type { EventDraft, EventRecord } from "../records.ts";
import { withJsonLines } from "./_files-encode.ts";
import { holdLease, type LeaseOwner } from "./_files-lease.ts";
import { AppendLog, type FsyncMode } from "./_files-log.ts";

const seqOf = (value: unknown) => {
  const seq = (value as { seq?: unknown } | null)?.seq;
  return typeof seq === "number" && Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
};

export class FilesEvents implements LeaseOwner {
  readonly log: AppendLog;
  private lastSeq: number | undefined;
  /** The file size `lastSeq` was true for. */
  private knownSize = -1;

  constructor(
    readonly sessionId: string,
    readonly path: string,
    private readonly lockPath: string,
    fsync: FsyncMode,
  ) {
    this.log = new AppendLog(path, fsync);
  }

  append(drafts: EventDraft[]): EventRecord[] {
    if (holdLease(this.lockPath, this) || this.lastSeq === undefined) {
      // Not made here: a batch refused (or an empty one) leaves no log behind. An empty log was
      // listed as a log, which `store migrate` could not copy (the target had none) and then failed.
      if (!this.log.reload(false)) this.lastSeq = 0;
      else if (this.lastSeq === undefined || this.log.size !== this.knownSize) {
        this.lastSeq = lastLineMatching(this.path, this.log.size, seqOf) ?? 0;
      }
    }
    const records = stampEvents(this.sessionId, this.lastSeq!, drafts);
    if (records.length === 0) return records;
    if (!this.log.isOpen) {
      mkdirSync(dirname(this.path), { recursive: true, mode: DIR_MODE });
      this.log.reload(true);
    }
    withJsonLines(records, (bytes) => this.log.append(bytes));
    this.lastSeq = records.at(-1)!.seq;
    this.knownSize = this.log.size;
    return records;
  }

  flush(): void {}

  forget(): void {
    // lastSeq stays cached: `knownSize` tells on the next lease whether it still holds.
  }

  /** Drop every cache (after a purge). */
  reset(): void {
    this.log.close();
    this.lastSeq = undefined;
    this.knownSize = -1;
  }
}

/** A valid envelope, checked by hand (this runs once per event of every fold: keep it cheap). */
function envelopeProblem(e: Record<string, unknown>): string | undefined {
  if (typeof e.type !== "string" || e.type === "") return "type: must be a non-empty string";
  if (typeof e.id !== "string") return "id: must be a string";
  if (seqOf(e) === undefined) return "seq: must be a positive integer";
  if (typeof e.aggregateID !== "string") return "aggregateID: must be a string";
  if (typeof e.timestamp !== "number") return "timestamp: must be a number";
  return undefined;
}

/**
 * Stream a rollout log: events from `fromSeq`, bad lines as issues (a torn last line as torn). A line
 * with bytes that are not UTF-8 is an issue and, read with U+FFFD in their place, its event too.
 */
export async function* readEventsFile(file: string, fromSeq?: number): AsyncGenerator<EventRead> {
  const from = firstSeq(fromSeq);
  // A large append under way, or cut off by a kill, is not read: it was never acknowledged.
  const toOffset = acknowledgedSize(file);
  if (toOffset === undefined) return;
  for await (const line of readLines(file, { toOffset })) {
    if (line.torn) {
      yield {
        issue: { file, line: line.lineNo, message: "torn last line (no newline): skipped", torn: true },
      };
      continue;
    }
    if (line.badUtf8 !== undefined) {
      const message = badUtf8Message(line.badUtf8);
      yield { issue: { file, line: line.lineNo, message, torn: false, badUtf8: true } };
    }
    let raw: unknown;
    try {
      raw = JSON.parse(line.text);
    } catch (error) {
      yield {
        issue: { file, line: line.lineNo, message: `not JSON: ${(error as Error).message}`, torn: false },
      };
      continue;
    }
    const problem =
      raw === null || typeof raw !== "object" || Array.isArray(raw)
        ? "not an object"
        : envelopeProblem(raw as Record<string, unknown>);
    if (problem) {
      yield { issue: { file, line: line.lineNo, message: problem, torn: false } };
      continue;
    }
    const event = raw as EventRecord;
    if (event.seq >= from) yield { event };
  }
}

/** The rollout log path of a session. */
export const eventsPath = (rolloutDir: string, id: string) => join(rolloutDir, id, "events.jsonl");

/**
 * The change stamp of a rollout log: inode, size and mtime. Appends grow it, a rewrite is a new
 * inode; reading it costs one stat where parsing a 200,000-event log took seconds.
 */
export function eventsStamp(file: string): string | undefined {
  const st = statSync(file, { throwIfNoEntry: false, bigint: true });
  return st ? `${st.ino}:${st.size}:${st.mtimeNs}` : undefined;
}
