/** Random but valid rollout logs for tests that compare folds (seeded: a failure repeats). */
import type { EventInput, RolloutEvent } from "../../src/rollout/events.ts";
import { seeded } from "../_random.ts";
import { logBuilder } from "./_events.ts";

const TOOLS = ["Bash", "Edit", "Read", "write"] as const;

/** A random but valid log of about `n` events. */
export function randomLog(seed: number, n: number): RolloutEvent[] {
  const r = seeded(seed);
  const log = logBuilder("s");
  let ms = 0;
  let turn = 0;
  let call = 0;
  const open: {
    tool: string;
    callId?: string;
    turnId?: string;
    args?: { file_path: string; command: string };
  }[] = [];
  /** Calls whose output was written first (two processes writing one log): they come later. */
  const late: { tool: string; callId: string }[] = [];
  const turnId = () => (r.chance(0.1) ? undefined : r.chance(0.1) ? `stray-${r.int(3)}` : `turn-${turn}`);
  const add = (e: EventInput) => log.at((ms += 1 + r.int(500))).add(e);
  for (let i = 0; i < n; i++) {
    const k = r.int(100);
    if (k < 4) add({ type: "session.started", reason: r.pick(["new", "resume"]) });
    else if (k < 14) {
      turn = r.chance(0.2) ? 0 : turn + 1; // ids restart, as after a resume
      add({ type: "turn.started", turnId: `turn-${turn}` });
    } else if (k < 26) {
      add({
        type: "model.request",
        turnId: turnId() ?? `turn-${turn}`,
        provider: "p",
        model: r.pick(["m1", "m2"]),
      });
      if (r.chance(0.5)) add({ type: "model.first_token", turnId: `turn-${turn}`, ttft_ms: r.int(900) });
    } else if (k < 36) {
      const tokens = { inputTokens: r.int(5000), outputTokens: r.int(900), cacheReadTokens: r.int(9000) };
      const calls = r.chance(0.5) ? [r.pick(TOOLS)] : undefined;
      add({
        type: "model.response",
        turnId: `turn-${turn}`,
        provider: "p",
        model: "m1",
        ...tokens,
        toolCalls: calls,
      });
    } else if (k < 40) {
      add({
        type: "model.error",
        turnId: `turn-${turn}`,
        provider: "p",
        model: "m2",
        kind: r.pick(["stall", "provider"]),
      });
    } else if (k < 62 && late.length > 0 && r.chance(0.3)) {
      const c = late.splice(r.int(late.length), 1)[0]!;
      add({ type: "function.call", ...c, turnId: turnId(), args: { file_path: `src/f${r.int(5)}.ts` } });
    } else if (k < 62) {
      const c: { tool: string; callId?: string; turnId?: string } = { tool: r.pick(TOOLS), turnId: turnId() };
      // Ids are mostly new; some reuse an open call's (an agent counting its calls from 1 again
      // after a resume, or reusing ids).
      const reused = open.filter((o) => o.callId !== undefined);
      if (reused.length > 0 && r.chance(0.1)) c.callId = r.pick(reused).callId;
      else if (r.chance(0.8)) c.callId = `c${call++}`;
      const args = r.chance(0.9)
        ? { file_path: `src/f${r.int(5)}.ts`, command: "é ✓ ".repeat(r.chance(0.3) ? 150 : r.int(4)) }
        : undefined;
      open.push({ ...c, args });
      add({ type: "function.call", ...c, args });
    } else if (k < 84) {
      // An output: mostly for an open call (not always the oldest), sometimes for none.
      let c: { tool: string; callId?: string } =
        open.length > 0 && r.chance(0.9) ? open.splice(r.int(open.length), 1)[0]! : { tool: r.pick(TOOLS) };
      if (!("callId" in c) && r.chance(0.2)) {
        c = { tool: c.tool, callId: `c${call++}` };
        late.push(c as { tool: string; callId: string });
      }
      const withId = "callId" in c && r.chance(0.9) ? { callId: c.callId } : {};
      // Text with quotes, backslashes and wide characters too: a file read leaves outputs unparsed
      // for the trace and usage folds (util/json-skip.ts), and must find where each one ends.
      // Long ones too: only lines of 512 bytes or more are looked at.
      const text = () =>
        `out ${"x".repeat(r.chance(0.3) ? 500 + r.int(300) : r.int(40))}${r.chance(0.3) ? ' "q" \\ \\" é ✓ 😀 \\' : ""}`;
      const output = r.chance(0.8) ? text() : { code: r.int(3) };
      add({
        type: "function.output",
        tool: c.tool,
        turnId: turnId(),
        ...withId,
        output,
        failed: r.chance(0.2) || undefined,
      });
    } else if (k < 90) {
      const c =
        open.length > 0 && r.chance(0.5) ? open.splice(r.int(open.length), 1)[0]! : { tool: r.pick(TOOLS) };
      const source = r.pick(["user", "mode", "rule", "hook"] as const);
      add({
        type: "function.denied",
        tool: c.tool,
        callId: "callId" in c ? c.callId : undefined,
        turnId: turnId(),
        source,
        // Mostly the call's own arguments (keys in another order): a refusal without an id answers
        // the newest open call of its tool with the same ones.
        args:
          "args" in c && c.args !== undefined && r.chance(0.7)
            ? { command: c.args.command, file_path: c.args.file_path }
            : { n: i },
      });
    } else if (k < 93) add({ type: "compact.occurred", beforeTokens: r.int(9000), afterTokens: r.int(9000) });
    else if (k < 96) add({ type: "turn.aborted", turnId: turnId() ?? `turn-${turn}`, reason: "user" });
    else if (k < 98) add({ type: "hook.triggered", hookName: "h" });
    else add({ type: "parse.error", turnId: turnId(), error: "bad" });
  }
  // JSON round trip: what a file holds (undefined fields dropped).
  return JSON.parse(JSON.stringify(log.events));
}
