/**
 * Feeding a JSONL transcript to a parser from a byte offset. Lines are parsed a run at a time
 * (`util/json-lines.ts`: one `JSON.parse` per run of lines where it can, each line on its own
 * where it cannot). A malformed line is reported with its file and line number and skipped; a torn
 * last line (no newline yet: the agent is mid-write) is not consumed, so the next read starts at it
 * once it is complete.
 */
import { type JsonLineSink, parseRun, RUN_BYTES } from "../util/json-lines.ts";
import { lineRuns } from "../util/lines.ts";

const isBlank = (text: string) => text.trim() === "";

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

/**
 * Feed the lines of `path` from `fromOffset` to `sink`; returns where the read stopped. With
 * `lastLine: "take"` (the file is no longer written: `--finished`, or untouched for minutes), a last
 * line without its newline is read like the others when it is a whole JSON value (a tool that saved
 * the file without its final newline: the session's last answer was left out for good), and
 * reported otherwise (cut short: nothing is likely to complete it; if something does, the next
 * read starts at the line, which is not consumed).
 */
export async function feedJsonl(
  path: string,
  sink: LineSink,
  io: { counts: EntryCounts; warnings: ImportWarning[] },
  from: { offset: number; lineNo: number } = { offset: 0, lineNo: 0 },
  checkpoint?: Checkpoint,
  lastLine: "wait" | "take" = "wait",
): Promise<ReadPosition> {
  let offset = from.offset;
  let lineNo = from.lineNo;
  let next = checkpoint ? offset + checkpoint.everyBytes : Number.POSITIVE_INFINITY;
  const lines: JsonLineSink = {
    value(value, line) {
      if (!value || typeof value !== "object" || Array.isArray(value)) {
        io.warnings.push({ file: path, line, message: "line is not a JSON object" });
        bump(io.counts.skipped, "(malformed line)");
        return;
      }
      try {
        sink.feed(value as Record<string, unknown>, line);
      } catch (error) {
        // A shape we did not expect in one entry must not stop the import of the rest.
        unreadableEntry(io, { file: path, line }, error);
      }
    },
    invalid(error, _text, line) {
      io.warnings.push({ file: path, line, message: `malformed JSON: ${error.message}` });
      bump(io.counts.skipped, "(malformed line)");
    },
    // Imported all the same (a transcript is not cut for a few bytes), but never unsaid: the text
    // keeps U+FFFD in their place for good.
    badUtf8(at, line) {
      io.warnings.push({
        file: path,
        line,
        message: `invalid UTF-8 at byte ${at} of the line: imported with U+FFFD in its place`,
      });
    },
  };
  // A checkpoint comes between runs: a run is never longer than the checkpoints' spacing.
  const runBytes = Math.min(RUN_BYTES, checkpoint?.everyBytes ?? RUN_BYTES);
  const runs = lineRuns(path, { fromOffset: from.offset, firstLineNo: from.lineNo + 1, runBytes });
  for (const item of runs) {
    if (item.kind === "line") {
      // Without a length limit, the only single line is a torn last one.
      const { line } = item;
      if (lastLine === "wait" || isBlank(line.text)) return { offset, lineNo, torn: true };
      let value: unknown;
      try {
        value = JSON.parse(line.text);
      } catch {
        io.warnings.push({
          file: path,
          line: line.lineNo,
          message:
            "last line cut short (no newline, not whole JSON) in a file no longer written: not imported (read again if the file grows)",
        });
        bump(io.counts.skipped, "(malformed line)");
        // Not consumed: should its writer come back to it, the next read starts at the line.
        return { offset, lineNo, torn: false };
      }
      lines.value(value, line.lineNo, line.start, line.end);
      // The next read starts at the newline that ends it, should one come: numbered as this line,
      // it ends it (a blank line of its own pushed every later line number one further, and Codex
      // keys its events and messages by line: a read from the start wrote them all again).
      return { offset: line.end, lineNo: line.lineNo - 1, torn: false };
    }
    const start = item.base + item.start;
    if (start >= next) {
      next = start + checkpoint!.everyBytes;
      await checkpoint!.run();
    }
    parseRun(item, lines);
    offset = item.base + item.nls[item.count - 1]! + 1;
    lineNo = item.lineNo + item.count - 1;
  }
  return { offset, lineNo, torn: false };
}
