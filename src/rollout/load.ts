/**
 * Reading a rollout back: from a storage adapter's `readEvents`, or straight from an `events.jsonl`
 * file. Every event is checked against the catalogue; a type newer than the catalogue is skipped
 * (counted, never fatal); a bad line becomes an issue with its line number and the rest still loads.
 * `foldRollout` drives a sink synchronously per batch (the fast path the folds use); `readRollout`
 * is the same stream as an async iterator, for callers that want `for await`.
 */

import { statSync } from "node:fs";
import { notFound } from "../errors.ts";
import { acknowledgedSize } from "../storage/batch-mark.ts";
import type { ReadIssue, StorageAdapter } from "../storage/contract.ts";
import { namingPath } from "../util/fs-path.ts";
import type { FieldSkip } from "../util/json-skip.ts";
import { createMemoryGuard } from "../util/memory-guard.ts";
import { readJsonl } from "./_jsonl.ts";
import type { RolloutEvent } from "./events.ts";
import { createReplayFold, type Replay, type ReplayOptions } from "./folds/replay.ts";
import { createTraceFold, type TraceOptions } from "./folds/trace.ts";
import type { Trace } from "./folds/trace-types.ts";
import { createUsageFold, type Price, type Usage } from "./folds/usage.ts";
import { checkEvent, isValidEvent } from "./validate.ts";

/** Where a rollout comes from. */
export type RolloutSource =
  | { adapter: StorageAdapter; sessionId: string }
  | { file: string; sessionId?: string };

/** What a fold offers the reader. */
export interface RolloutSink {
  /**
   * One event. From a file source, `offset` is where its line starts in the file: a fold may keep
   * that instead of a copy of a field, and read the line back later (see `util/line-at.ts`).
   */
  push(event: RolloutEvent, offset?: number): void;
  /** A file source's path, told before its first event. */
  file?(path: string): void;
  /**
   * A file source's bytes from `offset`, as the reader read them, before the events they hold
   * (the buffer is reused after the call: copy what is kept). A fold that reads lines back later
   * can keep a small log's bytes rather than read the file again.
   */
  block?(bytes: Uint8Array, offset: number): void;
  issue(issue: ReadIssue): void;
  skip?(type: string): void;
  /**
   * Fields of events this sink never reads: a file reader may leave them unparsed, and they then
   * read as `""`, `{}` or `[]` (see `util/json-skip.ts` and `_unread.ts`).
   */
  unread?: FieldSkip;
}

export interface ReadOptions {
  /** Adapter sources: start at this `seq`. */
  fromSeq?: number;
  /** File sources: start at this byte offset (with `firstLineNo` for line numbers). */
  fromOffset?: number;
  firstLineNo?: number;
  /**
   * Asked every ~1 MiB of a file (every 1,024 events of an adapter): a promise it returns holds the
   * read until it settles, so a consumer slower than the reader is not buried in events.
   */
  pause?: () => Promise<void> | undefined;
  /**
   * Hand on an event of a type this version does not know (its envelope checked) as it is, after
   * telling `skip`: a reader that shows the log (`rollout cat`) must not leave out what a newer
   * version wrote, where a fold, which cannot read it, only counts it.
   */
  keepUnknown?: boolean;
}

/** Where a read stopped, so a follower can continue from there. */
export interface ReadPosition {
  /** File sources: byte offset just past the last complete line. */
  offset?: number;
  /** The line number the next line would have. */
  nextLineNo?: number;
  lastSeq: number;
}

/** Stream a rollout into `sink`; resolves to where the read stopped. */
export function foldRollout(
  source: RolloutSource,
  sink: RolloutSink,
  options: ReadOptions = {},
): Promise<ReadPosition> {
  return readInto(source, sink, options, FOLD_PACE);
}

/** How a file is read: how much between letting others run, and between young collections. */
interface Pace {
  sliceBytes: number;
  /** The memory guard's spacing (see `util/memory-guard.ts`). */
  guardBytes: number;
}

/**
 * A fold's pace. It lets others run every 1 MiB, and collects every 2 MiB rather than the guard's
 * usual 1 MiB: each young collection costs ~0.45 ms here even with nothing alive, and since lines
 * are parsed a run at a time a fold's garbage is little more than the parser's: at 2 MiB the
 * real-shaped 592 MB bench log spent ~250 ms in them instead of ~470, and the peaks moved by 0-2 MB
 * (98-99 MB on the 525 MB synthetic log, 111-115 MB on the real-shaped one, measured alone).
 */
const FOLD_PACE: Pace = { sliceBytes: 1024 * 1024, guardBytes: 2 * 1024 * 1024 };

/**
 * `foldRollout`, letting others run (and asking `pause`) every `pace.sliceBytes` of a file. A fold drops
 * each event as it takes it; a reader whose events wait in a batch (`readRollout`) reads in small
 * slices, because a young collection (JSC's own, or the memory guard's) while events wait promotes
 * them to the old generation, which then grows with the log until a full collection: with 1 MiB
 * slices `rollout cat` of a 525 MB log peaked at ~920 MB.
 */
async function readInto(
  source: RolloutSource,
  sink: RolloutSink,
  options: ReadOptions,
  pace: Pace,
): Promise<ReadPosition> {
  let lastSeq = 0;
  const take = (value: unknown, where: () => Pick<ReadIssue, "file" | "line">, offset?: number) => {
    const r = checkEvent(value);
    if (r.kind === "event") {
      if (r.event.seq > lastSeq) lastSeq = r.event.seq;
      sink.push(r.event, offset);
    } else if (r.kind === "unknown") {
      sink.skip?.(r.type);
      if (options.keepUnknown) {
        const event = value as RolloutEvent;
        if (event.seq > lastSeq) lastSeq = event.seq;
        sink.push(event, offset);
      }
    } else {
      const field = r.field ? ` (field ${r.field})` : "";
      sink.issue({ ...where(), message: `${r.message}${field}`, torn: false });
    }
  };
  if ("file" in source) {
    const st = statSync(source.file, { throwIfNoEntry: false });
    // A directory at its path is a log that cannot be read (exit 74, as the other readers say), not
    // a missing one.
    if (st?.isDirectory())
      throw namingPath(
        Object.assign(new Error("illegal operation on a directory"), { code: "EISDIR" }),
        source.file,
      );
    if (!st?.isFile()) throw notFound(`no rollout log at ${source.file}`, { file: source.file });
    sink.file?.(source.file);
    const guard = createMemoryGuard({ everyBytes: pace.guardBytes });
    let consumed = options.fromOffset ?? 0;
    const file = source.file;
    const onBlock = sink.block && ((bytes: Buffer, offset: number) => sink.block!(bytes, offset));
    // A large append under way, or cut off by a kill, is not read: it was never acknowledged.
    const toOffset = acknowledgedSize(file);
    const read = await readJsonl(
      file,
      {
        ...options,
        ...(toOffset !== undefined ? { toOffset } : {}),
        sliceBytes: pace.sliceBytes,
        ...(onBlock ? { onBlock } : {}),
        ...(sink.unread ? { skip: sink.unread } : {}),
      },
      {
        value(value, line, offset) {
          // The usual case first, without a closure or a result object per event.
          if (isValidEvent(value)) {
            if (value.seq > lastSeq) lastSeq = value.seq;
            sink.push(value, offset);
          } else take(value, () => ({ file, line }), offset);
        },
        issue: (issue) => sink.issue(issue),
      },
      (offset) => {
        guard.advance(offset - consumed);
        consumed = offset;
        return options.pause?.();
      },
    );
    return { offset: read.endOffset, nextLineNo: read.nextLineNo, lastSeq };
  }
  const readOpts = options.fromSeq === undefined ? undefined : { fromSeq: options.fromSeq };
  let count = 0;
  for await (const item of source.adapter.readEvents(source.sessionId, readOpts)) {
    if (item.issue) sink.issue(item.issue);
    else {
      const seq = item.event.seq;
      take(item.event, () => ({ file: `${source.sessionId} seq ${seq}` }));
    }
    if (++count % 1024 === 0) await options.pause?.();
  }
  return { lastSeq };
}

/** Events a `readRollout` reader gathers before it waits for its consumer, and how much of a file
 * it reads between asking (see `readInto`); it collects young every 1 MiB. */
const READ_BATCH = 64;
const READ_PACE: Pace = { sliceBytes: 16 * 1024, guardBytes: 1024 * 1024 };
/** How a `readRollout` read ends when its consumer leaves early (never seen by the consumer). */
const READ_STOPPED = new Error("the read was stopped: its consumer left");

/** The validated events of a rollout, in order; bad lines go to `onIssue`, newer types to `onSkip`. */
export async function* readRollout(
  source: RolloutSource,
  options: ReadOptions & { onIssue?: (issue: ReadIssue) => void; onSkip?: (type: string) => void } = {},
): AsyncGenerator<RolloutEvent> {
  // Batch the sink's events so the async iteration costs one await per batch, not per event. The
  // reader waits while a batch is full: a consumer takes an event per turn of the event loop and the
  // reader a MiB, so without the wait a 525 MB log piled up whole (2.5 GB for `rollout cat`).
  let buffer: RolloutEvent[] = [];
  let wake: (() => void) | undefined;
  /** Lets a waiting reader go on (`true`) or stop (`false`: the consumer left the loop). */
  let release: ((goOn: boolean) => void) | undefined;
  let stopped = false;
  let done = false;
  let failure: unknown;
  const pause = (): Promise<void> | undefined => {
    if (stopped) return Promise.reject(READ_STOPPED);
    if (buffer.length < READ_BATCH) return undefined;
    return new Promise<void>((resolve, reject) => {
      release = (goOn) => (goOn ? resolve() : reject(READ_STOPPED));
    });
  };
  const running = readInto(
    source,
    {
      push: (e) => {
        buffer.push(e);
        wake?.();
      },
      issue: (i) => options.onIssue?.(i),
      skip: (t) => options.onSkip?.(t),
    },
    { ...options, pause },
    READ_PACE,
  ).then(
    () => {
      done = true;
      wake?.();
    },
    (error: unknown) => {
      failure = error;
      done = true;
      wake?.();
    },
  );
  try {
    while (true) {
      if (buffer.length > 0) {
        const out = buffer;
        buffer = [];
        release?.(true);
        release = undefined;
        yield* out;
        continue;
      }
      if (done) break;
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    // A consumer that leaves early (`break`) stops the reader: it would read the rest for nobody,
    // or wait forever with its file open.
    if (!done) {
      stopped = true;
      release?.(false);
      release = undefined;
    }
  }
  await running;
  if (failure !== undefined) throw failure;
}

/** Past this resident size, memory is handed back before a Trace's views are made (see loadTrace). */
const SEAL_COLLECT_RSS = 128 * 1024 * 1024;
const SEAL_COLLECT_LOG_BYTES = 64 * 1024 * 1024;

/** Fold a rollout into its Trace. */
export async function loadTrace(source: RolloutSource, options?: TraceOptions): Promise<Trace> {
  const fold = createTraceFold(sessionIdOf(source), options);
  const read = await foldRollout(source, fold);
  // The Trace's lists make a view object per turn and span.
  collectBeforeViews(read);
  return fold.seal();
}

/**
 * Before a sealed fold makes its views: after a big log, the memory the parser's garbage took is
 * still resident and the views would stack on top of it. `Bun.gc(true)` collects and also hands
 * freed memory back (mimalloc), so the views reuse it (a plain full collection left the 525 MB bench
 * log's trace peak at ~155 MB instead of ~137). It costs 20-130 ms, so only after a big log (eval
 * folds many small ones in one process) read by a process past SEAL_COLLECT_RSS.
 */
function collectBeforeViews(read: ReadPosition): void {
  const big = (read.offset ?? 0) >= SEAL_COLLECT_LOG_BYTES;
  if (big && process.memoryUsage.rss() > SEAL_COLLECT_RSS) Bun.gc(true);
}

/** Fold a rollout into its Replay. */
export async function loadReplay(source: RolloutSource, options?: ReplayOptions): Promise<Replay> {
  const fold = createReplayFold(sessionIdOf(source), options);
  collectBeforeViews(await foldRollout(source, fold));
  return fold.seal();
}

/** Fold a rollout into its token usage and cost. */
export async function loadUsage(
  source: RolloutSource,
  prices?: Record<string, Price>,
  counted?: Map<string, string>,
): Promise<Usage> {
  const fold = createUsageFold(sessionIdOf(source), prices, counted);
  await foldRollout(source, fold);
  return fold.finish();
}

/** The session id of a source (a file's is its parent directory's name, as in the files layout). */
export function sessionIdOf(source: RolloutSource): string {
  if (source.sessionId !== undefined) return source.sessionId;
  if (!("file" in source)) return "";
  const parts = source.file.split(/[\\/]/);
  return parts.length >= 2 && parts.at(-1) === "events.jsonl" ? parts.at(-2)! : (parts.at(-1) ?? source.file);
}
