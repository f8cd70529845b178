/**
 * From per-session outcomes to a case verdict: the pass rate over the selection (default: every
 * session must pass), pass^k over sessions that share a task id (τ-bench's reliability metric), and
 * bounds over the values of every selected session. An empty selection is "could not evaluate" —
 * a rate over nothing never passes.
 */
import type { CompiledCase } from "./compile.ts";
import type { SessionEval } from "./evaluate.ts";
import type { LoadedCase } from "./load-cases.ts";
import { cannot, fail, type Outcome, pass, plural } from "./outcome.ts";
import type { CaseResult, CheckResult, SessionResult } from "./report.ts";
import { type SessionRef, taskIdOf } from "./sessions.ts";

/** C(n, k). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let r = 1;
  for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
  return r;
}

/** pass^k per task: the chance that k trials drawn from the task's n all pass, C(c,k)/C(n,k). */
export function passHatK(
  byTask: Map<string, { n: number; c: number }>,
  k: number,
): { value?: number; tasks: number } {
  const eligible = [...byTask.values()].filter((t) => t.n >= k);
  if (eligible.length === 0) return { tasks: 0 };
  const sum = eligible.reduce((acc, t) => acc + choose(t.c, k) / choose(t.n, k), 0);
  return { value: sum / eligible.length, tasks: eligible.length };
}

/**
 * `value` with at least `from` decimals, and more while its rounding reads on the wrong side of
 * `bound` (`0.667, need ≥ 0.6667` failed; `0.333, need ≥ 0.3333` passed): up to 12.
 */
export function decimalsAgreeing(value: number, bound: number, from: number, reaches: boolean): string {
  let d = from;
  while (d < 12 && Number(value.toFixed(d)) >= bound !== reaches) d++;
  return value.toFixed(d);
}

/** A pass-rate bound as a percentage, as written (`0.6667` → `66.67`, up to 6 decimals). */
const boundPct = (min: number) => Number((min * 100).toFixed(6));

/**
 * A pass rate as a percentage, with as many decimals as keep it on its side of `bound` (`66.667%,
 * need ≥ 66.67%`: it read 66.7%), trailing zeros dropped.
 */
const ratePct = (rate: number, bound: number, reaches: boolean) =>
  decimalsAgreeing(rate * 100, bound, 1, reaches).replace(/\.?0+$/, "");

/** Missing ids pointed at their own lines, at most this many (each is a walk of the case file). */
const LOCATED_IDS = 20;

/**
 * The line of the `n`th missing id: its own, for the first few, else its selector's (it was the
 * case's first line, though the id stood lines below).
 */
function lineOfId(loaded: LoadedCase, id: string, n: number): { line?: number } {
  const s = loaded.input.sessions;
  const ids = Array.isArray(s) ? s : typeof s === "object" ? s.ids : undefined;
  const at = ids?.indexOf(id) ?? -1;
  if (!loaded.lineOf || at < 0) return {};
  if (n >= LOCATED_IDS) return { line: loaded.lineOf(["sessions"]) };
  return { line: loaded.lineOf(Array.isArray(s) ? ["sessions", at] : ["sessions", "ids", at]) };
}

export interface CaseInputs {
  loaded: LoadedCase;
  compiled: CompiledCase;
  index: number;
  /** The selected sessions (after time filters), in selection order. */
  refs: SessionRef[];
  missing: string[];
  evals: Map<string, SessionEval>;
}

/** Build a case's result from the evaluated sessions. */
export function aggregateCase({ loaded, compiled, index, refs, missing, evals }: CaseInputs): CaseResult {
  const head = {
    id: loaded.id,
    file: loaded.file,
    line: loaded.line,
    ...(loaded.input.description ? { description: loaded.input.description } : {}),
  };
  const skip = loaded.input.skip;
  if (skip) {
    return {
      ...head,
      verdict: "skip",
      skipReason: typeof skip === "string" ? skip : "skipped",
      sessions: [],
      aggregates: [],
      counts: { sessions: 0, passed: 0, failed: 0, errored: 0 },
    };
  }
  const sessions: SessionResult[] = missing.map((id, i) => ({
    sessionId: id,
    verdict: "error",
    error: `no rollout log for session ${id}`,
    ...lineOfId(loaded, id, i),
    checks: [],
  }));
  const points = compiled.selectionChecks.map(() => [] as { ms: number; seq: number; what: string }[]);
  // pass^k's trials, each with its own ref's task id: `sessions` also holds the missing ids, so
  // its positions are not the refs'.
  const trials: { task: string; passed: boolean }[] = [];
  for (const ref of refs) {
    const ev = evals.get(ref.file ?? ref.sessionId)!;
    const file = ref.file ? { file: ref.file } : {};
    if (ev.error) {
      sessions.push({ sessionId: ref.sessionId, ...file, verdict: "error", error: ev.error, checks: [] });
      continue;
    }
    const mine = ev.results.find((r) => r.caseIndex === index)!;
    const checks: CheckResult[] = mine.outcomes.map((o, i) => {
      const exp = compiled.sessionChecks[i]!.exp;
      return { name: exp.name, label: exp.label, line: exp.line, ...o };
    });
    mine.points.forEach((p, i) => {
      for (const x of p) points[i]!.push({ ...x, what: `${x.what} in ${ref.sessionId}` });
    });
    const verdict = checks.some((c) => c.verdict === "error")
      ? "error"
      : checks.some((c) => c.verdict === "fail")
        ? "fail"
        : "pass";
    sessions.push({ sessionId: ref.sessionId, ...file, verdict, checks });
    if (verdict !== "error") trials.push({ task: taskIdOf(ref), passed: verdict === "pass" });
  }
  const counts = {
    sessions: sessions.length,
    passed: sessions.filter((s) => s.verdict === "pass").length,
    failed: sessions.filter((s) => s.verdict === "fail").length,
    errored: sessions.filter((s) => s.verdict === "error").length,
  };

  const aggregates: CheckResult[] = [];
  const add = (name: string, label: string, o: Outcome, line = loaded.line) =>
    aggregates.push({ name, label, line, ...o });
  if (sessions.length === 0)
    add("selection", "sessions selected", cannot("the selector matched no recorded session"));

  const min = loaded.input.passRate ?? 1;
  const evaluated = counts.passed + counts.failed;
  if (evaluated > 0) {
    const rate = counts.passed / evaluated;
    // The bound reads the same in the label and the message (`pass rate ≥ 66.7%` stood beside
    // `need ≥ 66.67%`).
    const need = boundPct(min);
    const text = `${counts.passed}/${evaluated} sessions passed (${ratePct(rate, need, rate >= min)}%), need ≥ ${need}%`;
    const o = rate >= min ? pass(text) : fail(text, { expected: min, actual: rate });
    if (loaded.input.passRate !== undefined || (o.verdict === "fail" && evaluated > 1))
      add("passRate", `pass rate ≥ ${need}%`, o, loaded.lines?.passRate);
  }

  const pk = loaded.input.passK;
  if (pk) {
    const byTask = new Map<string, { n: number; c: number }>();
    for (const { task, passed } of trials) {
      const t = byTask.get(task) ?? { n: 0, c: 0 };
      t.n++;
      if (passed) t.c++;
      byTask.set(task, t);
    }
    const r = passHatK(byTask, pk.k);
    const detail = [...byTask].map(([id, t]) => `${id} ${t.c}/${t.n}`).join(", ");
    const label = `pass^${pk.k} ≥ ${pk.min}`;
    if (r.value === undefined)
      add(
        "passK",
        label,
        cannot(`no task has ${pk.k} evaluated trials (${detail || "no sessions"})`),
        loaded.lines?.passK,
      );
    else {
      // An average of per-task fractions carries rounding: one exactly at the bound (3 of 30 trials
      // at 0.1) came out 0.09999999999999999 and failed. Within a billionth of it, it reaches it.
      const reaches = r.value >= pk.min - 1e-9;
      const value = decimalsAgreeing(reaches ? Math.max(r.value, pk.min) : r.value, pk.min, 3, reaches);
      const text = `pass^${pk.k} = ${value} over ${plural(r.tasks, "task")} (${detail}), need ≥ ${pk.min}`;
      const o = reaches ? pass(text) : fail(text, { expected: pk.min, actual: r.value });
      add("passK", label, o, loaded.lines?.passK);
    }
  }

  // A case that fails on a check keeps its failure; otherwise a bound that measured nothing checked
  // nothing, and like a selector that matches nothing it is not a pass: a misspelt tool
  // (`duration: {of: tool, tool: bsh}`), or logs that record no first token (imports), passed
  // "over 0 values" — per session, over the selection (`over: selection`), and in a case whose one
  // failed session `passRate` let pass.
  // Selection bounds that measured something are decided first: one that fails is a failure of the
  // case's own, as a session's is (it was not counted, and an empty bound beside it made the case
  // "could not evaluate", exit 2).
  const decided = compiled.selectionChecks.map((check, i) =>
    points[i]!.length > 0 || sessions.length === 0 ? check.decide(points[i]!) : undefined,
  );
  const failsOtherwise =
    aggregates.some((a) => a.verdict === "fail") ||
    decided.some((o) => o?.verdict === "fail") ||
    (evaluated > 0 && counts.passed / evaluated < min);
  const measuredNothing = (label: string, n: number) =>
    cannot(
      `${label}: no measured value in any of the ${plural(n, "session")} (a misspelt tool, or logs that record no first token?)`,
    );
  if (!failsOtherwise)
    compiled.sessionChecks.forEach((check, i) => {
      // A failed bound measured something; a pass says how much it measured (`values`).
      const outcomes = sessions.flatMap((s) => (s.checks[i] ? [s.checks[i]!] : []));
      const bound = outcomes.some((o) => o.values !== undefined);
      if (bound && outcomes.every((o) => o.verdict === "pass" && o.values === 0))
        add(
          check.exp.name,
          check.exp.label,
          measuredNothing(check.exp.label, outcomes.length),
          check.exp.line,
        );
    });
  compiled.selectionChecks.forEach((check, i) => {
    const label = `${check.exp.label} (selection)`;
    const o =
      decided[i] ?? (failsOtherwise ? check.decide(points[i]!) : measuredNothing(label, sessions.length));
    aggregates.push({ name: check.exp.name, label, line: check.exp.line, ...o });
  });

  const any = (v: string) => sessions.some((s) => s.verdict === v) || aggregates.some((a) => a.verdict === v);
  const failed =
    aggregates.some((a) => a.verdict === "fail") || (evaluated > 0 && counts.passed / evaluated < min);
  const verdict = any("error") ? "error" : failed ? "fail" : "pass";
  return { ...head, verdict, sessions, aggregates, counts };
}
