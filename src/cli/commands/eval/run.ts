/**
 * `freecode eval <case files or dirs> [--sessions PATH | --home DIR]`: run the cases over recorded
 * sessions and report. Exit 0 every case passed, 1 a case failed, 2 a case could not be evaluated
 * (or bad input). Thin: the work is `runEval` in src/eval/runner.ts. A run that cannot start (a bad
 * case file) is still reported by every reporter with a file, and on stdout by every one but pretty
 * (the stderr line is pretty's there), so no report file is left from an earlier run.
 */

import { appendFileSync } from "node:fs";
import { FreecodeError, usageError } from "../../../errors.ts";
import type { EvalReport } from "../../../eval/report.ts";
import { renderGithub, renderGithubRunError, renderStepSummary } from "../../../eval/reporters/github.ts";
import { renderJunit, renderJunitRunError } from "../../../eval/reporters/junit.ts";
import { renderPretty, renderPrettyRunError } from "../../../eval/reporters/pretty.ts";
import { renderTap, renderTapRunError } from "../../../eval/reporters/tap.ts";
import { type RunError, runErrorOf } from "../../../eval/run-error.ts";
import { runEval } from "../../../eval/runner.ts";
import { openStore } from "../../../storage/select.ts";
import { assertNever } from "../../../util/assert-never.ts";
import { writeOutputFile } from "../../../util/output-file.ts";
import { type CommandContext, command, wholeNumber } from "../../_command.ts";
import { traceOptionsOf } from "./_trace-options.ts";
import { parseReporters, type ReporterChoice } from "./reporters.ts";

export const RUN_ARGS = {
  cases: {
    type: "positional",
    required: false,
    description: "Case files (.yaml .yml .json .jsonl) or directories",
    valueHint: "cases",
  },
  sessions: {
    type: "string",
    description: "Rollout files to evaluate: an events.jsonl, a folder, or a glob (instead of the store)",
    valueHint: "path",
  },
  reporter: {
    type: "string",
    description: "pretty|json|junit|tap|github, optionally :FILE (repeatable)",
    valueHint: "name[:file]",
  },
  out: { type: "string", description: "Write the preceding --reporter's output to FILE", valueHint: "file" },
  "include-running": {
    type: "boolean",
    description: "Evaluate sessions that look still running instead of setting them aside",
  },
  workers: {
    type: "string",
    description:
      "Use N processes: 1 folds in this one, N ≥ 2 in N child processes (default: by the selection's size)",
    valueHint: "n",
  },
} as const;

function render(r: ReporterChoice, report: EvalReport, color: boolean): string {
  switch (r.name) {
    case "pretty":
      return renderPretty(report, { color: color && !r.file });
    case "json":
      return `${JSON.stringify(report, null, 2)}\n`;
    case "junit":
      return renderJunit(report);
    case "tap":
      return renderTap(report);
    case "github":
      return renderGithub(report);
    default:
      return assertNever(r.name, "reporter");
  }
}

/**
 * What a reporter says of an eval that could not run (pretty on stdout: nothing; its stderr line
 * says it on the same terminal).
 */
function renderRunError(r: ReporterChoice, e: RunError): string | undefined {
  switch (r.name) {
    case "pretty":
      return r.file ? renderPrettyRunError(e) : undefined;
    case "json":
      return `${JSON.stringify(e, null, 2)}\n`;
    case "junit":
      return renderJunitRunError(e);
    case "tap":
      return renderTapRunError(e);
    case "github":
      return renderGithubRunError(e);
    default:
      return assertNever(r.name, "reporter");
  }
}

/** Write one reporter's text to its file, or to stdout. */
function emit(ctx: CommandContext, r: ReporterChoice, text: string): void {
  if (r.file) writeOutputFile(r.file, (write) => write(text));
  // The CLI's stdout, written whole before the process ends; appended as written to a file
  // stdout was redirected to with `>>` (Bun.write to Bun.stdout preallocated the file from
  // offset 0 first: NUL bytes went before the report).
  else ctx.out(text);
}

/**
 * Every reporter's word that the eval could not run, then the error itself (its stderr line and
 * exit code). A report that cannot be written is a warning here: the error that stopped the run is
 * the one to print.
 */
function reportRunError(ctx: CommandContext, reporters: ReporterChoice[], error: FreecodeError): never {
  const e = runErrorOf(error);
  for (const r of reporters) {
    const text = renderRunError(r, e);
    if (text === undefined) continue;
    try {
      emit(ctx, r, text);
    } catch (writeError) {
      ctx.log.warn(`cannot write the ${r.name} report: ${(writeError as Error).message}`);
    }
  }
  throw error;
}

/** The run command, closed over the raw arguments (for the repeatable --reporter). */
export function runCommandFor(rawArgs: string[]) {
  return command({
    manyPositionals: true,
    repeatable: ["reporter", "out"],
    meta: { name: "eval", description: "Run eval cases over recorded sessions" },
    args: RUN_ARGS,
    async run(ctx, args) {
      const cases = args._.map(String);
      if (cases.length === 0) throw usageError("give at least one case file or directory");
      const reporters = parseReporters(rawArgs, ctx.json);
      const workers = wholeNumber(args.workers, "workers", 1);
      const config = ctx.config();
      const trace = traceOptionsOf(config);
      let report: EvalReport;
      try {
        const store = args.sessions
          ? undefined
          : {
              adapter: (await openStore(ctx.storeName(), { home: ctx.home, fsync: config.fsync })).adapter,
              name: ctx.storeName(),
              home: ctx.home,
            };
        try {
          report = await runEval({
            cases,
            ...(args.sessions ? { sessions: args.sessions } : {}),
            ...(store ? { store } : {}),
            prices: config.prices ?? {},
            evaluate: { trace, includeRunning: args["include-running"] === true },
            ...(workers ? { workers } : {}),
          });
        } finally {
          await store?.adapter.close();
        }
      } catch (error) {
        // A bad case file or --sessions path: a report file from an earlier run read as this one's.
        if (error instanceof FreecodeError) reportRunError(ctx, reporters, error);
        throw error;
      }
      for (const r of reporters) {
        emit(ctx, r, render(r, report, ctx.color));
        const summary = process.env.GITHUB_STEP_SUMMARY;
        if (r.name === "github" && summary) {
          try {
            appendFileSync(summary, renderStepSummary(report));
          } catch (error) {
            // The verdicts stand (the run's exit code was ENOENT's 3): the summary is said lost.
            ctx.log.warn(`cannot append the step summary to ${summary}: ${(error as Error).message}`);
          }
        }
      }
      return report.exitCode;
    },
  });
}
