/**
 * `freecode import claude|codex|opencode|gemini|auto [PATH…]`: turn other agents' transcripts into
 * sessions + rollouts. Paths default to each agent's own location; `--watch` follows live files;
 * `--redact` masks secrets. Thin: the work is in `src/import/`.
 */
import { existsSync } from "node:fs";
import { MAX_TIMER_MS } from "../../config.ts";
import { notFound, usageError } from "../../errors.ts";
import { importSources, rootsFor } from "../../import/import.ts";
import { AGENTS } from "../../import/types.ts";
import { watchSources } from "../../import/watch.ts";
import { openStore } from "../../storage/select.ts";
import { command, wholeNumber } from "../_command.ts";
import { flushStdout, writeStdout } from "../_stdout.ts";
import { formatReport, totals, warningLine } from "./import/format.ts";

const CHOICES = [...AGENTS, "auto"] as const;
type Choice = (typeof CHOICES)[number];

export default command({
  manyPositionals: true,
  meta: { name: "import", description: "Import Claude Code, Codex, OpenCode or Gemini CLI sessions" },
  args: {
    agent: { type: "positional", description: `Which agent: ${CHOICES.join("|")}`, required: true },
    path: {
      type: "positional",
      description: "Transcript files or folders, any number (default: the agent's own location)",
      required: false,
    },
    watch: { type: "boolean", description: "Keep following live transcripts (Ctrl+C stops)" },
    interval: { type: "string", description: "Watch poll interval in ms (default 1000)", valueHint: "ms" },
    redact: { type: "boolean", description: "Mask API keys, bearer tokens and private keys" },
    finished: {
      type: "boolean",
      description: "The agents are done: close now what a transcript still being written would leave open",
    },
  },
  async run(ctx, args) {
    const agent = String(args.agent) as Choice;
    if (!CHOICES.includes(agent))
      throw usageError(`unknown agent "${agent}" (expected ${CHOICES.join(", ")})`);
    const paths = (args._ as string[]).slice(1);
    for (const p of paths) if (!existsSync(p)) throw notFound(`no such file or folder: ${p}`);
    const interval = wholeNumber(args.interval, "interval", 50) ?? 1000;
    // A timer waits at most 2^31-1 ms: past it, it fired every millisecond (a busy loop).
    if (interval > MAX_TIMER_MS)
      throw usageError(`--interval must be at most ${MAX_TIMER_MS} ms, what a timer waits (got ${interval})`);
    if (args.interval !== undefined && args.watch !== true)
      throw usageError("--interval is the --watch poll interval: give --watch too");
    if (args.finished === true && args.watch === true)
      throw usageError(
        "--finished and --watch contradict each other (a watch follows what is still written)",
      );
    const config = ctx.config();
    const { adapter } = await openStore(ctx.storeName(), { home: ctx.home, fsync: config.fsync });
    const base = {
      agent,
      paths,
      adapter,
      home: ctx.home,
      redact: args.redact === true,
      fsync: config.fsync !== "never",
      ...(args.finished === true ? { finished: true } : {}),
    };
    try {
      if (!args.watch) {
        const report = await importSources(base);
        for (const s of report.sources) for (const w of s.warnings) ctx.log.warn(warningLine(w));
        for (const n of report.notes) ctx.log.warn(n);
        if (report.sources.length === 0) {
          const looked = rootsFor(agent, paths).map((r) => r.root);
          ctx.log.info(`nothing to import: no transcripts in ${looked.join(", ")}`);
        }
        ctx.out(ctx.json ? { ...report, totals: totals(report) } : formatReport(report));
        // A path named on the command line that this importer cannot take is the command's mistake
        // (the rest was imported): a script's `import … && eval` must not go on as if it were read.
        const skipped = report.sources.reduce((n, s) => n + s.files.skipped, 0);
        const failed = report.sources.reduce((n, s) => n + s.files.failed, 0);
        const given = (n: number) => `${n} path${n === 1 ? "" : "s"} given ${n === 1 ? "is" : "are"}`;
        if (skipped > 0)
          ctx.log.error(
            agent === "auto"
              ? `${given(skipped)} not a transcript of any agent freecode imports: not imported`
              : `${given(skipped)} not ${agent}'s: not imported (\`freecode import auto\` detects each file's agent)`,
          );
        if (failed > 0) ctx.log.error(`${given(failed)} not readable (see the warning): not imported`);
        return skipped > 0 || failed > 0 ? 2 : 0;
      }
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once("SIGINT", onSignal);
      process.once("SIGTERM", onSignal);
      ctx.log.info(`watching (every ${interval} ms); Ctrl+C stops`);
      // A warning that every pass finds again (a file of another format in the folder) is said once.
      const said = new Set<string>();
      await watchSources({
        ...base,
        intervalMs: interval,
        signal: stop.signal,
        async onPass(report, pass) {
          for (const s of report.sources)
            for (const w of s.warnings) {
              const line = warningLine(w);
              if (said.has(line)) continue;
              said.add(line);
              ctx.log.warn(line);
            }
          const t = totals(report);
          if (pass > 1 && t.created + t.updated === 0) return;
          // Streams are JSONL: one compact line per pass that changed something.
          if (ctx.json) writeStdout(`${JSON.stringify({ pass, ...report, totals: t })}\n`);
          else ctx.out(`pass ${pass}: ${t.created} created, ${t.updated} updated, ${t.imported} entries\n`);
          await flushStdout();
        },
      });
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      return 0;
    } finally {
      await adapter.close();
    }
  },
});
