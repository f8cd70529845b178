/**
 * Refused tool calls as first-class facts: which were denied and by whom (`hook`, `mode`, `rule`,
 * `permission`, `permission-hook`, `user`, `role`), that a denied call never ran, and that the agent
 * did not loop retrying the same call after a denial.
 */
import type { DenySource } from "../../rollout/events.ts";
import type { DeniedSpan, Trace } from "../../rollout/folds/trace-types.ts";
import { jsonEqual } from "../../util/json-equal.ts";
import { nameMatches } from "../match/glob.ts";
import { type CountSpec, checkCount, fail, type Outcome, pass, plural, show } from "../outcome.ts";

export interface ExpectDeniedSpec {
  tool?: string;
  source?: DenySource | DenySource[];
  count?: CountSpec;
}

const sources = (s: DenySource | DenySource[] | undefined) =>
  s === undefined ? undefined : Array.isArray(s) ? s : [s];
const describe = (d: DeniedSpan) => `${d.tool} (source=${d.source}) at seq ${d.seq}`;

/** Calls to `tool` (glob) denied by `source` happened `count` times (default at least once). */
export function expectDenied(trace: Trace, spec: ExpectDeniedSpec = {}): Outcome {
  const src = sources(spec.source);
  const hits = trace.deniedSpans.filter(
    (d) => (!spec.tool || nameMatches(spec.tool, d.tool)) && (!src || src.includes(d.source)),
  );
  const b = checkCount(hits.length, spec.count);
  const what = `denied ${spec.tool ?? "call"}${src ? ` (source ${src.join("|")})` : ""}`;
  if (b.ok)
    return pass(
      `${plural(hits.length, what, `${what}s`)} (expected ${b.text})`,
      hits[0] ? { seq: hits[0].seq } : {},
    );
  const all = trace.deniedSpans.map(describe);
  return fail(
    `expected ${b.text} ${what}, got ${hits.length}${all.length ? `; denials: ${all.join(", ")}` : "; nothing was denied"}`,
    {
      expected: b.text,
      actual: hits.length,
      ...(hits[0] ? { seq: hits[0].seq } : {}),
    },
  );
}

/** No call was denied, except by the listed sources (and only for `tool` when given). */
export function forbidDenied(trace: Trace, spec: { except?: DenySource[]; tool?: string } = {}): Outcome {
  const bad = trace.deniedSpans.filter(
    (d) => !spec.except?.includes(d.source) && (!spec.tool || nameMatches(spec.tool, d.tool)),
  );
  if (bad.length === 0)
    return pass(`no denied calls${spec.except?.length ? ` outside ${spec.except.join(", ")}` : ""}`);
  return fail(`${plural(bad.length, "denied call")}: ${bad.map(describe).join(", ")}`, {
    expected: spec.except?.length ? `denials only from ${spec.except.join(", ")}` : "no denials",
    actual: bad.map((d) => ({ tool: d.tool, source: d.source, seq: d.seq })),
    seq: bad[0]!.seq,
  });
}

/**
 * A denied call never ran: no tool output belongs to it. With a `callId` the pairing is exact; without
 * one, a same-tool call made before the denial whose output came after it is taken as the denied call
 * having run anyway: the call the fold withdrew for that denial, answered after all (an output that
 * found no open call, `unpaired`, carrying its call's seq), or one with the denial's arguments.
 */
export function deniedNeverRan(trace: Trace, spec: { tool?: string } = {}): Outcome {
  const denials = trace.deniedSpans.filter((d) => !spec.tool || nameMatches(spec.tool, d.tool));
  for (const d of denials) {
    // An output after the refusal, of its tool: by the call id where both have one (a call an
    // agent made earlier under the same id — it counts its ids from 1 again after a resume — is
    // another call, whose output came before the refusal), else by its arguments.
    const ran = trace.toolSpans.find((t) =>
      d.callId !== undefined && t.callId !== undefined
        ? t.callId === d.callId && t.tool === d.tool && t.outputSeq > d.seq
        : t.tool === d.tool &&
          t.callSeq < d.seq &&
          t.outputSeq > d.seq &&
          (t.unpaired === true || jsonEqual(t.args, d.args)),
    );
    if (ran) {
      return fail(`denied ${describe(d)} ran anyway: its output is at seq ${ran.outputSeq}`, {
        expected: "no output for a denied call",
        actual: { tool: ran.tool, outputSeq: ran.outputSeq },
        seq: ran.outputSeq,
        callIndex: ran.index,
      });
    }
  }
  return pass(`${plural(denials.length, "denied call")}, none ran`);
}

/**
 * After a denial, the same call (same tool, equal args) was not tried again more than `maxRetries`
 * times (default 1), counting later runs and later denials alike.
 */
export function noRetryAfterDenial(trace: Trace, spec: { maxRetries?: number; tool?: string } = {}): Outcome {
  const max = spec.maxRetries ?? 1;
  for (const d of trace.deniedSpans) {
    if (spec.tool && !nameMatches(spec.tool, d.tool)) continue;
    const same = (tool: string, args: unknown) => tool === d.tool && jsonEqual(args, d.args);
    const retries = [
      ...trace.toolSpans.filter((t) => t.callSeq > d.seq && same(t.tool, t.args)).map((t) => t.callSeq),
      ...trace.deniedSpans.filter((o) => o.seq > d.seq && same(o.tool, o.args)).map((o) => o.seq),
      ...trace.pendingCalls.filter((p) => p.seq > d.seq && same(p.tool, p.args)).map((p) => p.seq),
    ].sort((a, b) => a - b);
    if (retries.length > max) {
      return fail(
        `${d.tool} ${show(d.args, 60)} was denied at seq ${d.seq} and tried again ${plural(retries.length, "time")} (seq ${retries.join(", ")}); at most ${max} allowed`,
        { expected: `≤ ${max} retries`, actual: retries.length, seq: retries[max]! },
      );
    }
  }
  return pass(`no call retried more than ${plural(max, "time")} after a denial`);
}
