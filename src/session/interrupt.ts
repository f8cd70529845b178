/**
 * Ctrl+C for agent loops. The loop names the assistant message it is writing (`track`) when it
 * starts it, so the mark lands on that message and not on whatever is last in the file. First
 * SIGINT: that message is marked `interrupted` (written with its partial content if it was not
 * stored yet) and the session becomes `interrupted`. A second SIGINT within 1 s exits with code 1.
 */
import { FreecodeError } from "../errors.ts";
import { checkUsageRule, foldMessagesIntoMeta } from "../storage/_meta-fold.ts";
import { checkMessage } from "../storage/_validate.ts";
import type { StorageAdapter } from "../storage/contract.ts";
import type { StoredMessage } from "../storage/records.ts";
import { readForRewrite } from "../storage/rewrite-read.ts";
import { getSession } from "./lifecycle.ts";

export const DOUBLE_PRESS_MS = 1_000;

/** Rewrites of the log tried before giving the mark up to a loop that keeps appending. */
const MARK_ATTEMPTS = 8;

/**
 * Mark message `messageId` interrupted (storing `partial` if it is not in the log yet), and the
 * session `interrupted`. Marking rewrites the log only if it did not move since it was read, so an
 * append racing it means reading again; the session status is set even if the mark finally fails
 * (that error is thrown after it) — but not when the partial itself is one the store refuses (bad
 * input: nothing changes).
 */
export async function markInterrupted(
  store: StorageAdapter,
  sessionId: string,
  messageId: string | undefined,
  partial?: StoredMessage,
): Promise<void> {
  // A partial the store would refuse is the caller's error, said before anything changes (the
  // session was marked interrupted, then the refusal came back: a client took it that nothing had).
  if (partial !== undefined && messageId !== undefined)
    checkMessage({ ...partial, id: messageId, interrupted: true });
  let markError: unknown;
  if (messageId !== undefined) {
    try {
      await markMessage(store, sessionId, messageId, partial);
    } catch (error) {
      markError = error;
    }
  }
  await store.updateMeta(sessionId, (m) => {
    const { owner: _, ...rest } = m;
    return m.status === "archived" || m.status === "deleted" ? m : { ...rest, status: "interrupted" };
  });
  if (markError !== undefined) throw markError;
}

async function markMessage(
  store: StorageAdapter,
  sessionId: string,
  messageId: string,
  partial: StoredMessage | undefined,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const { messages } = await readForRewrite(store, sessionId, "mark an interrupt in");
    const i = messages.findIndex((m) => m.id === messageId);
    if (i === -1 && !partial) return;
    if (i !== -1 && messages[i]!.interrupted) return;
    const adding = i === -1 ? { ...partial!, id: messageId, interrupted: true } : undefined;
    // Stored by a rewrite, which keeps the meta's token totals as history: a partial carrying usage
    // is held to the usage rule now, and its tokens are added once the rewrite is in.
    if (adding?.usage) checkUsageRule(await getSession(store, sessionId), [adding]);
    // Not stored yet: the partial copy goes in only if the log did not move since it was read. An
    // append (the loop writing the finished message under the same id) would otherwise leave it
    // twice, the whole answer and a cut copy; a conflict reads again and marks the stored one.
    const next = adding
      ? [...messages, adding]
      : messages.map((m, j) => (j === i ? { ...m, interrupted: true } : m));
    try {
      await store.replaceMessages(sessionId, next, { ifMessageCount: messages.length });
      if (adding?.usage)
        await store.updateMeta(sessionId, (m) =>
          foldMessagesIntoMeta({ ...m, messageCount: m.messageCount - 1 }, [adding]),
        );
      return;
    } catch (error) {
      if (!(error instanceof FreecodeError && error.code === "conflict") || attempt >= MARK_ATTEMPTS)
        throw error;
      await Bun.sleep(attempt * 5); // let the appending loop's burst end
    }
  }
}

export interface InterruptTarget {
  sessionId: string;
  messageId?: string;
  /** The message as streamed so far, stored if it was not written yet. */
  partial?: () => StoredMessage | undefined;
}

export interface InterruptOptions {
  /** Called on the second press (default `process.exit`). */
  exit?: (code: number) => void;
  /** Called after the first press was recorded (or failed to be). */
  onInterrupted?: (target: InterruptTarget | undefined, error?: unknown) => void;
  now?: () => number;
}

export class InterruptHandler {
  private target: InterruptTarget | undefined;
  private lastPress = Number.NEGATIVE_INFINITY;
  private readonly listener = () => void this.press();
  /** Resolves when the last recorded interrupt is written (for callers that must wait). */
  pending: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: StorageAdapter,
    private readonly options: InterruptOptions = {},
  ) {}

  /** Start handling SIGINT. */
  install(): this {
    process.on("SIGINT", this.listener);
    return this;
  }

  uninstall(): void {
    process.off("SIGINT", this.listener);
  }

  /** The loop is now writing `messageId` of `sessionId`. */
  track(target: InterruptTarget): void {
    this.target = target;
  }

  /** The tracked message was completed: a later Ctrl+C has nothing in flight to mark. */
  clear(): void {
    this.target = this.target ? { sessionId: this.target.sessionId } : undefined;
  }

  /** What a SIGINT does (public so it can be driven without a signal). */
  press(): Promise<void> {
    const now = (this.options.now ?? Date.now)();
    if (now - this.lastPress <= DOUBLE_PRESS_MS) {
      (this.options.exit ?? ((code) => process.exit(code)))(1);
      return this.pending;
    }
    this.lastPress = now;
    const target = this.target;
    if (!target) {
      this.options.onInterrupted?.(undefined);
      return this.pending;
    }
    this.pending = markInterrupted(this.store, target.sessionId, target.messageId, target.partial?.()).then(
      () => this.options.onInterrupted?.(target),
      (error) => this.options.onInterrupted?.(target, error),
    );
    return this.pending;
  }
}
