/**
 * What a Claude Code transcript says after a response's last line, held until that response's end
 * is known. Claude Code writes a response one line per content block and runs a tool while the
 * response still streams, so a tool result (or a hook run) read after a block may come before the
 * response's next block or after its end: only the next line tells. Written at once, the outputs
 * that came after a response's last line went in before its `model.response`, earlier than them
 * (245 of the corpus's responses). Held, they are written before the response goes on
 * (`writeHeld`), or after its end (`flushGroup`).
 *
 * Plain data, saved with the import state: a read that ends inside a response holds them until
 * the next read, which then writes them where one read of the whole file would.
 */
import type { DenySource } from "../rollout/events.ts";
import { drop, own, put } from "../util/dict.ts";
import type { SessionBuilder } from "./builder.ts";

export type HeldEntry =
  | {
      kind: "result";
      at: number;
      callId: string;
      /** The result as the transcript gives it (a saved import state is masked whole with `--redact`). */
      output: unknown;
      failed: boolean;
      denied?: { source: DenySource; reason: string };
      /** The subagent session a Task call ran, and its description. */
      child?: { id: string; task?: string };
      /** The tool was interrupted (`[Request interrupted by user for tool use]`): its turn is cut off. */
      interrupted?: boolean;
    }
  | {
      kind: "hook";
      at: number;
      key: string;
      name: string;
      hookEvent?: string;
      blocked: boolean;
      /** The call it ran for (`toolUseID`): it goes in after that call (`hookForCall`). */
      callId?: string;
    };

/** Where held entries are kept, per session: the import state (`ClaudeState.held`). */
export interface HeldStore {
  held?: Record<string, HeldEntry[]>;
}

/** Write `h` now, or hold it while `open` (`b` has a response whose end is not known yet). */
export function writeOrHold(st: HeldStore, b: SessionBuilder, open: boolean, h: HeldEntry): void {
  if (!open) {
    write(b, h);
    return;
  }
  const held = own((st.held ??= {}), b.id);
  if (held) held.push(h);
  else put(st.held, b.id, [h]);
}

/** Whether a result for `callId` is held already (a second one has no call left to answer). */
export function resultHeld(st: HeldStore, id: string, callId: string): boolean {
  const held = st.held && own(st.held, id);
  return held?.some((h) => h.kind === "result" && h.callId === callId) === true;
}

/** Write what is held for `b` from no later than `until` (all by default), in the order it came. */
export function writeHeld(st: HeldStore, b: SessionBuilder, until = Number.POSITIVE_INFINITY): void {
  const held = st.held && own(st.held, b.id);
  if (!held) return;
  const now = held.filter((h) => h.at <= until);
  const later = held.filter((h) => h.at > until);
  if (later.length > 0) put(st.held!, b.id, later);
  else drop(st.held!, b.id);
  if (Object.keys(st.held!).length === 0) delete st.held;
  for (const h of now.sort((x, y) => x.at - y.at)) write(b, h);
}

/**
 * The calls whose results are held (and those of their turns made before them): written now,
 * before the response that made them ends. A refusal's call is not (it never ran).
 */
export function writeHeldCalls(st: HeldStore, b: SessionBuilder): void {
  const results = (st.held ? (own(st.held, b.id) ?? []) : []).flatMap((h) =>
    h.kind === "result" ? [h] : [],
  );
  const refused = new Set(results.flatMap((h) => (h.denied ? [h.callId] : [])));
  for (const h of results) if (!h.denied) b.writeCallsThrough(h.callId, refused);
}

/** Write `h` into `b`'s log now: a hook run, or a result with its subagent's start and stop. */
export function write(b: SessionBuilder, h: HeldEntry): void {
  if (h.kind === "hook") {
    const run = { key: h.key, at: h.at, command: h.name, hookEvent: h.hookEvent, blocked: h.blocked };
    if (!(h.callId !== undefined && b.hookForCall(h.callId, run)))
      b.hook(run.key, run.at, run.command, run.hookEvent, run.blocked);
    return;
  }
  const call = b.pendingCall(h.callId);
  const child = h.denied || !call ? undefined : h.child;
  if (child && call) b.subagent("start", h.callId, call.at, child.id, child.task);
  b.toolResult(h.callId, { at: h.at, output: h.output, failed: h.failed, denied: h.denied });
  if (child) b.subagent("stop", h.callId, h.at, child.id);
  if (!h.denied && h.interrupted) b.turnAbort(`${h.callId}.abort`, h.at, "interrupted");
}
