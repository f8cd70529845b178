/**
 * The recorder: how an agent appends to its rollout log. `record(event)` validates the event against
 * the catalogue and checks that JSON can encode it (so one bad event can never block the ones after
 * it), stamps a ULID and the time, and buffers it. One writer hands the buffer to storage in order,
 * one `appendEvents` call per batch (the adapter assigns `seq` under the session lock, so seq is
 * strictly increasing across processes); a batch that fails goes back to the head of the buffer and
 * nothing is written past it until a retry succeeds. Types that must be on disk before something else
 * happens start a write at once: `model.request` (written before the provider call, so an unanswered
 * request is the evidence of a hang), `function.call` (a tool about to run is what a crash or a
 * SIGKILL must not lose) and `session.ended`. Whatever is buffered when the process ends is written
 * too: when the event loop drains, and synchronously on `exit` (process.exit, an uncaught exception,
 * an unhandled rejection) and on SIGINT/SIGTERM. Every refusal goes through `denyToolCall`. No
 * interpretation happens here: folds read the log.
 */
import { writeSync } from "node:fs";
import { badInput, FreecodeError } from "../errors.ts";
import { MAX_DRAFT_BYTES, MAX_EVENT_BYTES } from "../storage/_events.ts";
import { checkSessionId } from "../storage/_validate.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { EventDraft } from "../storage/records.ts";
import { jsonBytesOver, mib } from "../util/json-size.ts";
import { isTimeMs, TIMESTAMP_RULE } from "../util/number-schemas.ts";
import { eventNumberProblem } from "./event-numbers.ts";
import type { DenySource, EventInput, EventOf } from "./events.ts";
import { createIdGenerator, newEventId } from "./ids.ts";
import { draftProblem, isValidDraft } from "./validate.ts";

/**
 * Types written the moment they are recorded. `function.call` costs one append per tool call (~7 µs
 * here; the recorder bench, a tight loop where every 4th event is a call, drops from ~1.0M to ~0.4M
 * events/s), which a tool that runs for milliseconds never notices.
 */
export const URGENT_TYPES: ReadonlySet<string> = new Set(["model.request", "function.call", "session.ended"]);

/**
 * Whether recording is on: `FREECODE_ROLLOUT=off|0|false` turns it off and `on|1|true` on; otherwise
 * it is off under `bun test` (NODE_ENV=test, so a test run never litters the home) and when
 * config.json says `"rollout": false`, and on everywhere else.
 */
export function rolloutEnabled(
  env: Record<string, string | undefined> = process.env,
  config: { rollout?: boolean } = {},
): boolean {
  return rolloutDecision(env, config).on;
}

/** `rolloutEnabled`, with what decided it (`doctor` says so). */
export function rolloutDecision(
  env: Record<string, string | undefined>,
  config: { rollout?: boolean },
): { on: boolean; why: string } {
  const given = env.FREECODE_ROLLOUT;
  const flag = given?.toLowerCase();
  if (flag === "off" || flag === "0" || flag === "false")
    return { on: false, why: `FREECODE_ROLLOUT=${given}` };
  if (flag === "on" || flag === "1" || flag === "true") return { on: true, why: `FREECODE_ROLLOUT=${given}` };
  if (env.NODE_ENV === "test")
    return { on: false, why: "NODE_ENV=test; FREECODE_ROLLOUT=on records all the same" };
  if (config.rollout === false) return { on: false, why: '"rollout": false in config.json' };
  return { on: true, why: "the default" };
}

export interface RecorderOptions {
  adapter: StorageAdapter;
  sessionId: string;
  /** Default: `rolloutEnabled()`. A disabled recorder still validates, then drops. */
  enabled?: boolean;
  /** Flush when this many events are buffered (default 4096). */
  batchSize?: number;
  /** Flush buffered events this long after the first of them (default 100 ms; 0: no timer). */
  flushIntervalMs?: number;
  /**
   * Called with the error of every failed write (the failure is also thrown by `flush`/`close` until
   * a retry succeeds), and with the events lost when the process ends. Without it, events lost at
   * exit are reported on stderr and the exit code becomes 1, as an unhandled error would.
   */
  onError?: (error: unknown) => void;
  /** The clock (tests). Recorders on the same clock share one id generator. */
  now?: () => number;
}

/** A refused tool call, as `denyToolCall` takes it. */
export type DeniedCall = Pick<EventOf<"function.denied">, "tool" | "args" | "turnId" | "callId">;

export interface Recorder {
  readonly sessionId: string;
  readonly enabled: boolean;
  /** Events buffered and not yet handed to storage (a failed batch counts again). */
  readonly pending: number;
  /** Validate, stamp and buffer one event (urgent types start a write at once). */
  record(event: EventInput): void;
  /** Record and wait until it is stored: use for `model.request` before calling the provider. */
  recordNow(event: EventInput): Promise<void>;
  /** The one way a refusal is recorded: a `function.denied`, never a failed call. */
  denyToolCall(call: DeniedCall, source: DenySource, reason?: string): void;
  /** Hand everything buffered to storage (retrying a failed batch); throws if a write still fails. */
  flush(): Promise<void>;
  /** Flush and stop (a failed close can be retried; until it succeeds, exit still flushes). */
  close(): Promise<void>;
  /**
   * Record `session.ended` (reason `exit` unless given) and close: the run is over, and a reader
   * (`eval`, `trace`) need not judge by the last event's age whether it still runs. Closing without
   * it leaves the session open to a later run (a resume appends to the same log).
   */
  end(fields?: { reason?: string; status?: string }): Promise<void>;
}

/** Recorders on the same clock share one generator, so ids are monotonic per process. */
const idsByClock = new WeakMap<() => number, () => string>();
function idGenerator(now: () => number): () => string {
  if (now === Date.now) return newEventId; // the process-wide one (`rollout append` uses it too)
  let next = idsByClock.get(now);
  if (!next) idsByClock.set(now, (next = createIdGenerator(now)));
  return next;
}

/**
 * Replace the event's object fields by their JSON round trip (a copy: a caller changing an object
 * after recording it changes nothing in the log); returns the first field JSON cannot encode (a
 * BigInt, a cycle, a throwing `toJSON`) with the reason.
 */
function freezeForJson(event: Record<string, unknown>): { field: string; reason: string } | undefined {
  for (const field in event) {
    const value = event[field];
    if (typeof value === "bigint") return { field, reason: "a BigInt" };
    if (field === "toJSON") return { field, reason: "toJSON would replace the event" };
    // JSON leaves them out; so does the copy (structuredClone, as the memory store uses, throws on them)
    if (typeof value === "function" || typeof value === "symbol") delete event[field];
    if (typeof value === "number" && !Number.isFinite(value))
      return { field, reason: "a number JSON cannot hold (NaN or ±Infinity)" };
    if (typeof value !== "object" || value === null) continue;
    try {
      const text = JSON.stringify(value);
      // JSON writes NaN and ±Infinity as null: looked for only when the text holds a null at all,
      // through a replacer (it sees values as JSON does, after any `toJSON`).
      if (text.includes("null") && hasNonFinite(value))
        return { field, reason: "a number JSON cannot hold (NaN or ±Infinity) inside it" };
      event[field] = JSON.parse(text);
    } catch (error) {
      return { field, reason: (error as Error).message };
    }
  }
  return undefined;
}

/** Whether a value's JSON form holds NaN or ±Infinity anywhere (what `JSON.stringify` writes as null). */
function hasNonFinite(value: unknown): boolean {
  let found = false;
  JSON.stringify(value, (_key, v) => {
    if (typeof v === "number" && !Number.isFinite(v)) found = true;
    return v;
  });
  return found;
}

/** What the process-exit hooks need of a live recorder. */
interface Live {
  /** Start writing what is buffered (unless a write failed: `exit` retries that one). */
  drainSoon(): void;
  /** Write what is buffered now, synchronously as far as the adapter allows; report what is left. */
  flushAtExit(): void;
}
const live = new Set<Live>();
const SIGNALS = ["SIGINT", "SIGTERM"] as const;
let hooked = false;

/**
 * Events the process cannot write any more, with no `onError` to tell: there is no caller left to
 * throw to, and a throw in an `exit` listener would stop the storage's own listeners (which give
 * back locks and sync files) from running.
 */
function lostAtExit(error: unknown): void {
  if (!process.exitCode) process.exitCode = 1;
  try {
    writeSync(2, `freecode: ${error instanceof Error ? error.message : String(error)}\n`);
  } catch {
    // stderr is closed: the exit code is all that is left to tell
  }
}
const onBeforeExit = () => {
  for (const r of live) r.drainSoon();
};
const onExit = () => {
  for (const r of live) {
    try {
      r.flushAtExit();
    } catch (error) {
      lostAtExit(error);
    }
  }
};
const onSignal = (signal: NodeJS.Signals) => {
  // The program handles this signal itself and goes on: write, and let it decide when to exit.
  if (process.listenerCount(signal) > 1) return onBeforeExit();
  onExit();
  unhook();
  process.kill(process.pid, signal); // no listener left: the signal's default action ends the process
};
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on("beforeExit", onBeforeExit);
  // First: the storage's exit listeners release locks and sync files after our last write.
  process.prependListener("exit", onExit);
  // First too: a program's own handler added with `once` leaves the list before it runs, so after
  // it the count said no one else handles the signal, and the process was killed mid-shutdown.
  for (const signal of SIGNALS) process.prependListener(signal, onSignal);
}
function unhook(): void {
  if (!hooked) return;
  hooked = false;
  process.off("beforeExit", onBeforeExit);
  process.off("exit", onExit);
  for (const signal of SIGNALS) process.off(signal, onSignal);
}

/** One `appendEvents` call: its batch, its promise, and that promise with its outcome handled. */
interface Write {
  batch: EventDraft[];
  promise: Promise<unknown>;
  settled: Promise<void>;
}

/** Create a recorder for one session. */
export function createRecorder(options: RecorderOptions): Recorder {
  const { adapter } = options;
  // Refused here, not at every flush (and once more at exit, as events lost).
  const sessionId = checkSessionId(options.sessionId);
  const enabled = options.enabled ?? rolloutEnabled();
  const batchSize = options.batchSize ?? 4096;
  const interval = options.flushIntervalMs ?? 100;
  const now = options.now ?? Date.now;
  const nextId = idGenerator(now);
  let buffer: EventDraft[] = [];
  let current: Write | undefined;
  let failed = false;
  let failure: unknown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  /** End `w` (once: by peeking at it, or when its promise settles). */
  const settle = (w: Write, ok: boolean, error?: unknown): boolean => {
    if (current !== w) return false;
    current = undefined;
    if (ok) {
      failed = false;
      failure = undefined;
    } else {
      buffer = w.batch.concat(buffer); // appends are all-or-nothing: the batch is retried first
      failed = true;
      failure = error;
      options.onError?.(error);
    }
    return true;
  };
  /**
   * The one writer: batches go to storage in order, one at a time, and a failed one stops it. A write
   * that already ended (the files and memory adapters finish theirs within the call) is settled by
   * peeking at its promise, so an urgent event is handed over at once, not a microtask later.
   * `exiting`: no promise settles any more, so a pending write is left as it is (it ran as far as it
   * could: the json and sqlite adapters did all their work synchronously, sqljs none) and the rest
   * is written after it.
   */
  /** Events of writes an exit left unfinished (reported by `flushAtExit`). */
  let unfinishedAtExit = 0;
  const pump = (exiting = false): void => {
    for (;;) {
      if (current) {
        const status = Bun.peek.status(current.promise);
        if (status === "pending") {
          if (!exiting) return; // its `settled` handler goes on
          // An adapter that writes asynchronously (sqljs) cannot finish it in an exit handler.
          if (adapter.capabilities.asyncAppend) unfinishedAtExit += current.batch.length;
          current = undefined;
        } else if (!settle(current, status === "fulfilled", Bun.peek(current.promise)) || failed) return;
      }
      if (buffer.length === 0) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      const batch = buffer;
      buffer = [];
      let promise: Promise<unknown>;
      try {
        promise = adapter.appendEvents(sessionId, batch);
      } catch (error) {
        promise = Promise.reject(error);
      }
      const w: Write = { batch, promise, settled: Promise.resolve() };
      w.settled = promise.then(
        () => void (settle(w, true) && pump()),
        (error) => void settle(w, false, error),
      );
      current = w;
    }
  };
  const flush = async () => {
    pump(); // also the retry of a failed batch
    while (current) await current.settled;
    if (failed) throw failure;
  };
  const self: Live = {
    drainSoon() {
      if (!failed) pump();
    },
    flushAtExit() {
      pump(true);
      // The last batch handed over, if its write could not finish here either.
      if (current && adapter.capabilities.asyncAppend && Bun.peek.status(current.promise) === "pending") {
        unfinishedAtExit += current.batch.length;
        current = undefined;
      }
      if (!failed && unfinishedAtExit === 0) return;
      const why = failed
        ? failure instanceof Error
          ? failure.message
          : String(failure)
        : `the ${adapter.name} store writes asynchronously and cannot finish while the process exits (call close() before it ends)`;
      const error = new FreecodeError(
        "internal",
        `${buffer.length + unfinishedAtExit} rollout event(s) of session ${sessionId} were not written before the process ended: ${why}`,
        failed ? { cause: failure } : {},
      );
      if (options.onError) options.onError(error);
      else lostAtExit(error);
    },
  };

  const recorder: Recorder = {
    sessionId,
    enabled,
    get pending() {
      return buffer.length;
    },
    record(event) {
      if (closed) throw badInput(`recorder for ${sessionId} is closed`);
      const stamped: Record<string, unknown> = {
        ...event,
        id: event.id ?? nextId(),
        aggregateID: sessionId,
        timestamp: event.timestamp ?? now(),
      };
      if (!isValidDraft(stamped)) {
        const problem = draftProblem(stamped) ?? { message: "invalid event" };
        throw badInput(problem.message, { field: problem.field });
      }
      const numbers = eventNumberProblem(stamped);
      if (numbers) throw badInput(`${event.type} event: ${numbers.message}`, { field: numbers.field });
      // Refused here, not by the store: a batch the store refuses would block every later event.
      if (!isTimeMs(stamped.timestamp)) throw badInput(TIMESTAMP_RULE, { field: "timestamp" });
      const bad = freezeForJson(stamped);
      if (bad) {
        throw badInput(`${event.type} event: ${bad.field} cannot be written as JSON (${bad.reason})`, {
          field: bad.field,
        });
      }
      // Refused here too: the store takes no line longer than readers read (`MAX_DRAFT_BYTES`).
      const bytes = jsonBytesOver(stamped, MAX_DRAFT_BYTES);
      if (bytes !== undefined)
        throw badInput(
          `${event.type} event is ${bytes === "too deep" ? "nested too deep" : `${bytes} bytes as a line`}: over the ${mib(MAX_EVENT_BYTES)} a log line may take`,
        );
      if (!enabled) return;
      buffer.push(stamped as EventDraft);
      // While a write is failing, a full buffer waits for the timer: retrying on every record()
      // would make each one wait for the store.
      if (URGENT_TYPES.has(event.type) || (buffer.length >= batchSize && !failed)) pump();
      else if (!timer && interval > 0) {
        timer = setTimeout(() => {
          timer = undefined;
          pump();
        }, interval);
        timer.unref?.();
      }
    },
    async recordNow(event) {
      recorder.record(event);
      await flush();
    },
    denyToolCall(call, source, reason) {
      recorder.record({
        type: "function.denied",
        tool: call.tool,
        source,
        ...(call.args !== undefined && { args: call.args }),
        ...(call.turnId !== undefined && { turnId: call.turnId }),
        ...(call.callId !== undefined && { callId: call.callId }),
        ...(reason !== undefined && { reason }),
      });
    },
    flush,
    async end(fields = {}) {
      if (!closed) recorder.record({ type: "session.ended", reason: fields.reason ?? "exit", ...fields });
      await recorder.close();
    },
    async close() {
      closed = true;
      await flush();
      if (timer) clearTimeout(timer);
      timer = undefined;
      live.delete(self);
      if (live.size === 0) unhook();
    },
  };
  if (enabled) {
    live.add(self);
    hook();
  }
  return recorder;
}
