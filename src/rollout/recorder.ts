/**
 * The recorder: how an agent appends to its rollout log. `record(event)` validates the event against
 * the catalogue, stamps a monotonic ULID and the time, and buffers it; buffered events go to storage
 * in batches, one `appendEvents` call each (the adapter assigns `seq` under the session lock, so seq
 * is strictly increasing across processes). Types that must be on disk before something else happens
 * flush at once: `model.request` (written before the provider call, so an unanswered request is the
 * evidence of a hang) and `session.ended`. Every refusal goes through `denyToolCall`. No
 * interpretation happens here: folds read the log.
 */
import { badInput } from "../errors.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { EventDraft } from "../storage/records.ts";
import type { DenySource, EventInput, EventOf } from "./events.ts";
import { createIdGenerator } from "./ids.ts";
import { checkEvent, isValidDraft } from "./validate.ts";

/** Types flushed the moment they are recorded. */
export const URGENT_TYPES: ReadonlySet<string> = new Set(["model.request", "session.ended"]);

/**
 * Whether recording is on: `FREECODE_ROLLOUT=off|0|false` turns it off and `on|1|true` on; otherwise
 * it is off under `bun test` (NODE_ENV=test, so a test run never litters the home) and when
 * config.json says `"rollout": false`, and on everywhere else.
 */
export function rolloutEnabled(
  env: Record<string, string | undefined> = process.env,
  config: { rollout?: boolean } = {},
): boolean {
  const flag = env.FREECODE_ROLLOUT?.toLowerCase();
  if (flag === "off" || flag === "0" || flag === "false") return false;
  if (flag === "on" || flag === "1" || flag === "true") return true;
  if (env.NODE_ENV === "test") return false;
  return config.rollout !== false;
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
  /** Called with an error of a background flush (it is also thrown by the next `flush`/`close`). */
  onError?: (error: unknown) => void;
  /** The clock (tests). */
  now?: () => number;
}

/** A refused tool call, as `denyToolCall` takes it. */
export type DeniedCall = Pick<EventOf<"function.denied">, "tool" | "args" | "turnId" | "callId">;

export interface Recorder {
  readonly sessionId: string;
  readonly enabled: boolean;
  /** Events buffered and not yet handed to storage. */
  readonly pending: number;
  /** Validate, stamp and buffer one event (urgent types start a flush at once). */
  record(event: EventInput): void;
  /** Record and wait until it is stored: use for `model.request` before calling the provider. */
  recordNow(event: EventInput): Promise<void>;
  /** The one way a refusal is recorded: a `function.denied`, never a failed call. */
  denyToolCall(call: DeniedCall, source: DenySource, reason?: string): void;
  /** Hand everything buffered to storage; throws a background flush's error if there was one. */
  flush(): Promise<void>;
  /** Flush and stop (no exit hook, no timer). */
  close(): Promise<void>;
}

/** Flushes of live recorders, run by one `beforeExit` hook when the event loop drains. */
const atExit = new Set<() => Promise<void>>();
let exitHooked = false;
function hookExit() {
  if (exitHooked) return;
  exitHooked = true;
  process.on("beforeExit", () => {
    const pending = [...atExit];
    atExit.clear();
    // A failing flush rejects here, unhandled: losing events at exit must not be silent.
    for (const run of pending) void run();
  });
}

/** Create a recorder for one session. */
export function createRecorder(options: RecorderOptions): Recorder {
  const { adapter, sessionId } = options;
  const enabled = options.enabled ?? rolloutEnabled();
  const batchSize = options.batchSize ?? 4096;
  const interval = options.flushIntervalMs ?? 100;
  const now = options.now ?? Date.now;
  const nextId = createIdGenerator(now);
  let buffer: EventDraft[] = [];
  let writing: Promise<void> = Promise.resolve();
  let failure: unknown;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const write = (batch: EventDraft[]): Promise<void> => {
    writing = writing.then(async () => {
      try {
        await adapter.appendEvents(sessionId, batch);
      } catch (error) {
        buffer = batch.concat(buffer); // not written (appends are all-or-nothing): retry next flush
        failure ??= error;
        options.onError?.(error);
      }
    });
    return writing;
  };
  const startFlush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer.length === 0) return writing;
    const batch = buffer;
    buffer = [];
    return write(batch);
  };
  const flush = async () => {
    await startFlush();
    if (failure !== undefined) {
      const error = failure;
      failure = undefined;
      throw error;
    }
  };

  const recorder: Recorder = {
    sessionId,
    enabled,
    get pending() {
      return buffer.length;
    },
    record(event) {
      if (closed) throw badInput(`recorder for ${sessionId} is closed`);
      const stamped = {
        ...event,
        id: event.id ?? nextId(),
        aggregateID: sessionId,
        timestamp: event.timestamp ?? now(),
      };
      if (!isValidDraft(stamped)) {
        const r = checkEvent({ ...stamped, seq: 1 });
        const message = r.kind === "invalid" ? r.message : `unknown event type "${event.type}"`;
        throw badInput(message, { field: r.kind === "invalid" ? r.field : "type" });
      }
      if (!enabled) return;
      buffer.push(stamped as EventDraft);
      if (URGENT_TYPES.has(event.type) || buffer.length >= batchSize) void startFlush();
      else if (!timer && interval > 0) {
        timer = setTimeout(() => void startFlush(), interval);
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
    async close() {
      if (closed) return;
      closed = true;
      atExit.delete(exitFlush);
      await flush();
    },
  };
  const exitFlush = async () => {
    await startFlush();
    if (failure !== undefined && !options.onError) throw failure;
  };
  if (enabled) {
    atExit.add(exitFlush);
    hookExit();
  }
  return recorder;
}
