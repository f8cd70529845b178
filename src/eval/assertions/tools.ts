/**
 * Which tools ran: expectTool, forbidTools, expectFirstToolIn, expectParallelTools and the tool-call
 * count. "Ran" means a `function.call` with its `function.output` (`trace.toolSpans`); refused calls
 * live in `deniedSpans` and are asserted on by the denied family. Repeated calls count by position:
 * three identical `read` calls are three calls, never one.
 */
import type { ToolSpan, Trace } from "../../rollout/folds/trace-types.ts";
import { type ArgSpec, type ArgsMode, argsMatch, describeDiffs, diffArgs } from "../match/args.ts";
import { anyNameMatches, nameMatches } from "../match/glob.ts";
import { type CountSpec, checkCount, fail, type Outcome, pass, plural, show } from "../outcome.ts";

export interface ExpectToolSpec {
  /** Tool name or glob (case-insensitive). */
  name: string;
  /** How many matching calls (default: at least 1). */
  count?: CountSpec;
  /** Arguments the call must have; any one matching call satisfies it. */
  args?: ArgSpec;
  argsMode?: ArgsMode;
}

const where = (s: ToolSpan) => `call #${s.index} (seq ${s.callSeq})`;

/** The tool ran (name or glob), as often as `count` says, with matching args when given. */
export function expectTool(trace: Trace, spec: ExpectToolSpec | string): Outcome {
  const s = typeof spec === "string" ? { name: spec } : spec;
  const named = trace.toolSpans.filter((t) => nameMatches(s.name, t.tool));
  const matching = s.args ? named.filter((t) => argsMatch(t.args, s.args!, s.argsMode)) : named;
  const bound = checkCount(matching.length, s.count);
  const what = s.args ? `${s.name} with args ${show(s.args)}` : s.name;
  if (bound.ok) {
    const first = matching[0];
    return pass(`${what} ran ${plural(matching.length, "time")} (expected ${bound.text})`, {
      ...(first ? { seq: first.callSeq, callIndex: first.index } : {}),
    });
  }
  const ran = [...new Set(trace.toolSpans.map((t) => t.tool))];
  if (s.args && matching.length === 0 && named.length > 0) {
    // Explain with the closest call: the one with the fewest differing paths.
    let best = named[0]!;
    let bestDiffs = diffArgs(best.args, s.args, s.argsMode);
    for (const t of named.slice(1)) {
      const d = diffArgs(t.args, s.args, s.argsMode);
      if (d.length < bestDiffs.length) [best, bestDiffs] = [t, d];
    }
    return fail(
      `${what}: expected ${bound.text} matching call, got 0 of ${plural(named.length, `${s.name} call`)}; closest is ${where(best)}: ${describeDiffs(bestDiffs)}`,
      { expected: s.args, actual: best.args, seq: best.callSeq, callIndex: best.index, diffs: bestDiffs },
    );
  }
  const extra = matching[bound.text.startsWith("at least") ? 0 : matching.length - 1];
  return fail(
    `${what}: expected ${bound.text} call${bound.text.endsWith(" 1") ? "" : "s"}, got ${matching.length}` +
      (matching.length === 0 ? ` (tools that ran: ${ran.length ? ran.join(", ") : "none"})` : ""),
    {
      expected: bound.text,
      actual: matching.length,
      ...(extra && matching.length > 0 ? { seq: extra.callSeq, callIndex: extra.index } : {}),
    },
  );
}

/** None of these tools (names or globs) ran; with `includeDenied`, none was even attempted. */
export function forbidTools(
  trace: Trace,
  names: string[],
  options: { includeDenied?: boolean } = {},
): Outcome {
  const ran = trace.toolSpans.find((t) => anyNameMatches(names, t.tool));
  if (ran) {
    return fail(`forbidden tool ${ran.tool} ran at ${where(ran)}`, {
      expected: `none of ${names.join(", ")}`,
      actual: ran.tool,
      seq: ran.callSeq,
      callIndex: ran.index,
    });
  }
  // Started with no output recorded (still running, or the agent died mid-call): it ran as far as
  // anyone knows — a started `rm -rf` passed "none of bash ran".
  const started = trace.pendingCalls.find((c) => anyNameMatches(names, c.tool));
  if (started)
    return fail(`forbidden tool ${started.tool} was started at seq ${started.seq} (no output recorded)`, {
      expected: `none of ${names.join(", ")}`,
      actual: started.tool,
      seq: started.seq,
    });
  const tried = options.includeDenied
    ? trace.deniedSpans.find((d) => anyNameMatches(names, d.tool))
    : undefined;
  if (tried) {
    return fail(
      `forbidden tool ${tried.tool} was attempted (denied by ${tried.source}) at seq ${tried.seq}`,
      {
        expected: `no attempt at ${names.join(", ")}`,
        actual: tried.tool,
        seq: tried.seq,
      },
    );
  }
  return pass(`none of ${names.join(", ")} ran`);
}

/** No tool ran and none was attempted (freecode's `expectTool: null`). */
export function expectNoTools(trace: Trace): Outcome {
  const first = trace.toolSpans[0];
  if (first)
    return fail(`expected no tool call, but ${first.tool} ran at ${where(first)}`, {
      seq: first.callSeq,
      callIndex: 0,
    });
  const denied = trace.deniedSpans[0];
  if (denied)
    return fail(`expected no tool call, but ${denied.tool} was attempted at seq ${denied.seq}`, {
      seq: denied.seq,
    });
  const started = trace.pendingCalls[0];
  if (started)
    return fail(
      `expected no tool call, but ${started.tool} was started at seq ${started.seq} (no output recorded)`,
      { seq: started.seq },
    );
  return pass("no tool was called");
}

/** The first tool that ran is one of `names` (globs allowed). */
export function expectFirstToolIn(trace: Trace, names: string[]): Outcome {
  const first = trace.toolSpans[0];
  if (!first)
    return fail(`expected the first tool to be one of ${names.join(", ")}, but no tool ran`, { step: 0 });
  if (anyNameMatches(names, first.tool))
    return pass(`first tool ${first.tool} is one of ${names.join(", ")}`);
  return fail(
    `expected the first tool to be one of ${names.join(", ")}, got ${first.tool} at ${where(first)}`,
    {
      expected: names,
      actual: first.tool,
      seq: first.callSeq,
      callIndex: 0,
      step: 0,
    },
  );
}

/** Some model response asked for at least `min` (default 2) tools at once. */
export function expectParallelTools(trace: Trace, min = 2): Outcome {
  // A response that records no `toolCalls` (the field is optional) asked for the calls made after
  // its request and before the next one (it counted as none: two calls made at once failed).
  const requests = trace.modelSpans.map((m) => m.seq).sort((a, b) => a - b);
  const calls = [...trace.toolSpans.map((t) => t.callSeq), ...trace.pendingCalls.map((p) => p.seq)].sort(
    (a, b) => a - b,
  );
  const asked = (m: (typeof trace.modelSpans)[number]) => {
    if (m.toolCalls.length > 0) return m.toolCalls.length;
    const next = requests.find((seq) => seq > m.seq) ?? Number.POSITIVE_INFINITY;
    return calls.filter((seq) => seq > m.seq && seq < next).length;
  };
  let best = trace.modelSpans[0];
  let most = best ? asked(best) : 0;
  for (const m of trace.modelSpans) {
    const n = asked(m);
    if (n > most) [best, most] = [m, n];
  }
  if (most >= min)
    return pass(`a response asked for ${most} tools at once (seq ${best!.seq})`, { seq: best!.seq });
  if (trace.modelSpans.length === 0)
    return fail(`expected parallel tool calls (≥ ${min}), but no model call was recorded`);
  return fail(`expected a response with at least ${min} tool calls, the most was ${most}`, {
    expected: min,
    actual: most,
    ...(best ? { seq: best.seq } : {}),
  });
}

/** The number of tools that ran is within bounds (a step count). */
export function toolCallCount(trace: Trace, bound: CountSpec): Outcome {
  const n = trace.toolSpans.length;
  const b = checkCount(n, bound, 0);
  if (b.ok) return pass(`${plural(n, "tool call")} (expected ${b.text})`);
  const at =
    typeof bound === "object" && bound.max !== undefined && n > bound.max
      ? trace.toolSpans[bound.max]
      : undefined;
  return fail(`expected ${b.text} tool calls, got ${n}`, {
    expected: b.text,
    actual: n,
    ...(at ? { seq: at.callSeq, callIndex: at.index } : {}),
  });
}

/**
 * freecode's `expectInArgs`: some call of `tool` has these args. Calls recorded without args fail
 * with "no recorded args" rather than a confusing diff.
 */
export function expectInArgs(trace: Trace, tool: string, args: ArgSpec): Outcome {
  const named = trace.toolSpans.filter((t) => nameMatches(tool, t.tool));
  if (named.length > 0 && named.every((t) => t.args === undefined)) {
    return fail(`no recorded args for ${tool} (${plural(named.length, "call")})`, {
      seq: named[0]!.callSeq,
      callIndex: named[0]!.index,
    });
  }
  return expectTool(trace, { name: tool, args });
}
