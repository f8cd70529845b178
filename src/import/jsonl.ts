/**
 * Feeding a JSONL transcript to a parser from a byte offset. A malformed line is reported with its
 * file and line number and skipped; a torn last line (no newline yet: the agent is mid-write) is
 * not consumed, so the next read starts at it once it is complete.
 */
import { lines } from "../util/lines.ts";
import { bump, type EntryCounts, type ImportWarning, unreadableEntry } from "./types.ts";

/** A parser fed one JSON object per line. */
export interface LineSink {
  feed(entry: Record<string, unknown>, line: number): void;
}

/** Where a read stopped: the next read starts at `offset` with line number `lineNo + 1`. */
export interface ReadPosition {
  offset: number;
  lineNo: number;
  /** The last line was incomplete and left for the next read. */
  torn: boolean;
}

/** Called between lines after every `everyBytes` read (the importer writes what is ready then). */
export interface Checkpoint {
  everyBytes: number;
  run(): Promise<void>;
}

/** Feed the lines of `path` from `fromOffset` to `sink`; returns where the read stopped. */
export async function feedJsonl(
  path: string,
  sink: LineSink,
  io: { counts: EntryCounts; warnings: ImportWarning[] },
  from: { offset: number; lineNo: number } = { offset: 0, lineNo: 0 },
  checkpoint?: Checkpoint,
): Promise<ReadPosition> {
  let offset = from.offset;
  let lineNo = from.lineNo;
  let next = checkpoint ? offset + checkpoint.everyBytes : Number.POSITIVE_INFINITY;
  for (const line of lines(path, { fromOffset: from.offset, firstLineNo: from.lineNo + 1 })) {
    if (line.torn) return { offset, lineNo, torn: true };
    if (line.start >= next) {
      next = line.start + checkpoint!.everyBytes;
      await checkpoint!.run();
    }
    offset = line.end;
    lineNo = line.lineNo;
    let value: unknown;
    try {
      value = JSON.parse(line.text);
    } catch (error) {
      io.warnings.push({
        file: path,
        line: line.lineNo,
        message: `malformed JSON: ${(error as Error).message}`,
      });
      bump(io.counts.skipped, "(malformed line)");
      continue;
    }
    if (!value || typeof value !== "object" || Array.isArray(value)) {
      io.warnings.push({ file: path, line: line.lineNo, message: "line is not a JSON object" });
      bump(io.counts.skipped, "(malformed line)");
      continue;
    }
    try {
      sink.feed(value as Record<string, unknown>, line.lineNo);
    } catch (error) {
      // A shape we did not expect in one entry must not stop the import of the rest.
      unreadableEntry(io, { file: path, line: line.lineNo }, error);
    }
  }
  return { offset, lineNo, torn: false };
}
