/**
 * Turn keys. freecode restarts turn ids at `turn-0` when a session is resumed, so keying turns by
 * `turnId` merges a resumed session's turns into the old ones. A key is `<turnId>#<epoch>`: the epoch
 * starts at 1 and moves on after every `session.started` that follows activity, and whenever a
 * `turn.started` repeats an id already seen in the current epoch. Events that name a turn nobody
 * started (imported logs, logs from before `turn.started` existed) open an implicit turn.
 */

/** One turn as the keyer saw it. */
export interface TurnInfo {
  turnKey: string;
  turnId: string;
  startedAt: number;
  /** `seq` of the event that opened the turn. */
  seq: number;
  /** Opened by an event other than `turn.started`. */
  implicit?: boolean;
  /** Time of the last event seen for the turn (folds update it). */
  lastAt: number;
}

export interface TurnKeyer {
  /** A `turn.started` event: opens a turn and returns it. */
  start(turnId: string, at: number, seq: number): TurnInfo;
  /** A `session.started` event: later turns belong to a new epoch. */
  sessionStarted(): void;
  /**
   * The key for an event naming `turnId` (or, when it names none, the current turn). `opened` is
   * called with the turn when this lookup had to open an implicit one.
   */
  keyFor(
    turnId: string | undefined,
    at: number,
    seq: number,
    opened?: (turn: TurnInfo) => void,
  ): string | undefined;
  /** Like `keyFor`, returning the turn itself (and moving its `lastAt`). */
  turnFor(
    turnId: string | undefined,
    at: number,
    seq: number,
    opened?: (turn: TurnInfo) => void,
  ): TurnInfo | undefined;
  /** The most recently started turn. */
  current(): TurnInfo | undefined;
}

/** A fresh keyer (state is small: the ids of the current epoch). */
export function createTurnKeyer(): TurnKeyer {
  let epoch = 1;
  let seen = new Map<string, TurnInfo>();
  let last: TurnInfo | undefined;
  const open = (turnId: string, at: number, seq: number, implicit: boolean): TurnInfo => {
    const turn: TurnInfo = { turnKey: `${turnId}#${epoch}`, turnId, startedAt: at, seq, lastAt: at };
    if (implicit) turn.implicit = true;
    seen.set(turnId, turn);
    last = turn;
    return turn;
  };
  const nextEpoch = () => {
    epoch++;
    seen = new Map();
  };
  return {
    start(turnId, at, seq) {
      if (seen.has(turnId)) nextEpoch();
      return open(turnId, at, seq, false);
    },
    sessionStarted() {
      if (seen.size > 0) nextEpoch();
    },
    keyFor(turnId, at, seq, opened) {
      return this.turnFor(turnId, at, seq, opened)?.turnKey;
    },
    turnFor(turnId, at, seq, opened) {
      let turn = turnId === undefined ? last : seen.get(turnId);
      if (turn === undefined && turnId !== undefined) {
        turn = open(turnId, at, seq, true);
        opened?.(turn);
      }
      if (turn !== undefined && at > turn.lastAt) turn.lastAt = at;
      return turn;
    },
    current: () => last,
  };
}
