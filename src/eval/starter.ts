/**
 * `freecode eval add <sessionId>`: a starter case from a recorded session — its tools in order, how
 * often each ran, the files it changed, what was denied, its health. Everything in it holds for that
 * session today, so it passes as written; the user then deletes, loosens and adds.
 */
import type { Trace } from "../rollout/folds/trace-types.ts";
import { deniedNeverRan } from "./assertions/denied.ts";
import { literalName, placePath } from "./match/glob.ts";

/** The starter case as a plain object (valid against CaseSchema). */
export function starterCase(trace: Trace, id = trace.sessionId): Record<string, unknown> {
  const expect: Record<string, unknown>[] = [];
  // Tool names as globs that match only themselves (`mcp__x__*` is a tool's name too), counted as
  // a name matches them: without regard to case (`Read` and `read` are one name to match, and
  // counted apart each failed on its own session).
  // A tool recorded with no name (`"tool": ""`) is left out: no step or count can name it (written,
  // the case did not load).
  const tools = trace.toolSpans.filter((t) => t.tool !== "").map((t) => literalName(t.tool));
  // No tools: a sequence of no steps is refused as a check that cannot fail. No tools and a refused
  // call: `expectNoTools` fails on an attempt too (the case failed on its own session); the
  // `expectDenied` below says what was tried.
  if (tools.length > 0) expect.push({ expectSequence: { mode: "in_order", steps: tools } });
  else if (trace.toolSpans.length === 0 && trace.deniedSpans.length === 0 && trace.pendingCalls.length === 0)
    expect.push({ expectNoTools: true });
  const counts = new Map<string, { name: string; count: number }>();
  for (const name of tools) {
    const c = counts.get(name.toLowerCase()) ?? { name, count: 0 };
    c.count++;
    counts.set(name.toLowerCase(), c);
  }
  for (const { name, count } of counts.values()) expect.push({ expectTool: { name, count } });
  // As globs that match only themselves (`app/todos/[id]/page.tsx` is a glob matching `.../i/...`),
  // of each path as it is compared: placed in the project, `.`, `..` and doubled or trailing
  // slashes resolved, forward slashes (a recorded `src//f.ts`, `/w/src/../e.ts` or `../shared/c.ts`
  // written as it was matched nothing, and the case failed on its own session). A path that can be
  // told from no glob (outside a project that is not known) is left out.
  const changed = trace.changedFiles.flatMap((path) => {
    const placed = placePath(path, trace.projectPath || undefined);
    const shown = placed.inProject && placed.rel ? placed.rel : placed.abs;
    return shown ? [shown.replace(/[*?[\]{}!\\]/g, "\\$&")] : [];
  });
  if (changed.length) expect.push({ changedFiles: { include: [...new Set(changed)] } });
  if (trace.deniedSpans.length === 0) expect.push({ forbidDenied: true });
  else {
    const bySource = new Map<string, { tool: string; source: string; count: number }>();
    for (const d of trace.deniedSpans) {
      if (d.tool === "") continue; // no name to write (see the tools above)
      const tool = literalName(d.tool);
      const key = `${tool.toLowerCase()}\0${d.source}`;
      const e = bySource.get(key) ?? { tool, source: d.source, count: 0 };
      e.count++;
      bySource.set(key, e);
    }
    for (const e of bySource.values()) expect.push({ expectDenied: e });
    // By the assertion's own rule (a refusal without an id is matched by tool and arguments too).
    if (deniedNeverRan(trace).verdict === "pass") expect.push({ deniedNeverRan: true });
  }
  if (!trace.hung) expect.push({ noHung: true });
  if (!trace.hung && !trace.inFlight && trace.pendingCalls.length === 0) expect.push({ noInFlight: true });
  const kinds = [...new Set(trace.modelSpans.flatMap((m) => (m.errorKind ? [m.errorKind] : [])))];
  if (kinds.length === 0) expect.push({ modelErrors: { max: 0 } });
  expect.push({ compactions: { max: trace.compactions.length } });
  expect.push({ expectMaxTurns: trace.modelSpans.length });
  return {
    id,
    description: `starter case from session ${trace.sessionId} (${new Date(trace.startedAt).toISOString()}): edit me`,
    sessions: [trace.sessionId],
    expect,
  };
}

/** The starter case as commented YAML. */
export function starterYaml(trace: Trace, id?: string): string {
  const header = [
    `# Starter case written by \`freecode eval add ${trace.sessionId}\` from the recorded session.`,
    "# Everything below holds for that session today, so the case passes as written. Now edit it:",
    "# delete what you do not care about, loosen what is too strict (e.g. exact counts → {min: 1}),",
    "# point `sessions` at more recordings (ids, title, tags, path, all), and add what matters.",
  ];
  return `${header.join("\n")}\n${Bun.YAML.stringify(starterCase(trace, id), null, 2)}\n`;
}
