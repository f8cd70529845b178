/**
 * `freecode usage [id]`: tokens and cost per model, for one session or for every session with a log
 * (where a response copied into several sessions, a fork's history, counts once).
 * Prices come from config.json `prices` (USD per million tokens); a model without one is costed at
 * what the agent recorded, "(recorded)", when every response of it has a cost (OpenCode imports), and
 * otherwise shows its tokens and "cost unknown", never $0.
 */

import { type ModelUsage, sumUsage, type Usage } from "../../rollout/folds/usage.ts";
import { loadUsage } from "../../rollout/load.ts";
import { fmtTokens } from "../../rollout/waterfall.ts";
import { fitColumns, padColumns } from "../../util/columns.ts";
import { escapeLine } from "../../util/one-line.ts";
import { command } from "../_command.ts";
import { withRollouts } from "./rollout/_source.ts";

const usd = (c: number | null, from?: ModelUsage["costFrom"]) =>
  c === null ? "cost unknown" : `$${c.toFixed(4)}${from === "recorded" ? " (recorded)" : ""}`;

/** Merge per-session rows into one row per provider/model. */
function mergeModels(sessions: Usage[]): ModelUsage[] {
  const byKey = new Map<string, ModelUsage>();
  for (const s of sessions) {
    for (const m of s.models) {
      const key = `${m.provider}\u0000${m.model}`;
      const acc = byKey.get(key);
      if (!acc) {
        byKey.set(key, { ...m });
        continue;
      }
      // A row with no response counted (only failed requests, or every response a fork's copy)
      // cost nothing: the other side's cost stands, known or not.
      const cost =
        acc.responses === 0 ? costFields(m) : m.responses === 0 ? costFields(acc) : sumCosts(acc, m);
      for (const k of [
        "requests",
        "responses",
        "errors",
        "inputTokens",
        "outputTokens",
        "cacheReadTokens",
        "cacheWriteTokens",
        "reasoningTokens",
      ] as const)
        acc[k] += m[k];
      delete acc.costFrom;
      Object.assign(acc, cost);
    }
  }
  return [...byKey.values()];
}

type Cost = Pick<ModelUsage, "costUsd" | "recordedCostUsd" | "costFrom">;

const costFields = (r: ModelUsage): Cost => ({
  costUsd: r.costUsd,
  recordedCostUsd: r.recordedCostUsd,
  ...(r.costFrom !== undefined ? { costFrom: r.costFrom } : {}),
});

/** Two rows' costs added: unknown when either is (the same model: priced alike, or recorded alike). */
function sumCosts(a: ModelUsage, b: ModelUsage): Cost {
  const add = (x: number | null, y: number | null) => (x === null || y === null ? null : x + y);
  const costUsd = add(a.costUsd, b.costUsd);
  return {
    costUsd,
    recordedCostUsd: add(a.recordedCostUsd, b.recordedCostUsd),
    ...(costUsd !== null && a.costFrom !== undefined ? { costFrom: a.costFrom } : {}),
  };
}

export default command({
  meta: { name: "usage", description: "Tokens and cost per model, for one session or all of them" },
  args: {
    id: {
      type: "positional",
      required: false,
      description: "Session id or a unique start of one (default: every session)",
    },
  },
  async run(ctx, args) {
    const prices = ctx.config().prices ?? {};
    const sessions = await withRollouts(ctx, async (r) => {
      // Over several sessions a response is counted once, in the session that has it and was last
      // active first (its meta's `updatedAt`: an import's is the transcript's last entry): a fork
      // usually goes on after its parent stopped. Ties by id; listed by id.
      let ids = args.id !== undefined ? [await r.resolve(args.id)] : [];
      if (args.id === undefined) {
        const logs = await r.list();
        const at = new Map<string, number>();
        for (const l of logs) at.set(l.id, (await r.adapter.getMeta(l.id))?.updatedAt ?? l.lastAt);
        ids = logs.map((l) => l.id).sort((a, b) => at.get(a)! - at.get(b)! || (a < b ? -1 : a > b ? 1 : 0));
      }
      const counted = ids.length > 1 ? new Map<string, string>() : undefined;
      const out: Usage[] = [];
      for (const id of ids) out.push(await loadUsage(await r.source(id), prices, counted));
      return out.sort((a, b) => (a.sessionId < b.sessionId ? -1 : a.sessionId > b.sessionId ? 1 : 0));
    });
    const models = mergeModels(sessions);
    const totals = sumUsage(models);
    const copies = sessions.reduce((n, s) => n + s.copiedResponses, 0);
    const copiedErrors = sessions.reduce((n, s) => n + s.copiedErrors, 0);
    if (ctx.json) {
      ctx.out({ sessions, models, totals, copiedResponses: copies, copiedErrors });
      return 0;
    }
    // Recorded names, their control characters shown escaped (an imported transcript supplies
    // them), in a column as wide as the longest (up to 80): a longer id pushed its row's columns out.
    const names = models.map((m) => (m.provider ? `${m.provider}/${m.model}` : m.model));
    const nameW = Math.min(80, Math.max(40, ...names.map((n) => fitColumns(n, 80).width)));
    // CALLS are answered requests, ERRORS failed ones (trace counts both as model calls).
    const row = (name: string, u: Omit<ModelUsage, "provider" | "model" | "recordedCostUsd">, cost: string) =>
      `${padColumns(name, nameW)} ${String(u.responses).padStart(6)} ${String(u.errors).padStart(6)} ${fmtTokens(u.inputTokens).padStart(8)} ${fmtTokens(u.outputTokens).padStart(8)} ${fmtTokens(u.cacheReadTokens).padStart(8)} ${fmtTokens(u.cacheWriteTokens).padStart(8)}  ${cost}`;
    const lines = [
      `${"MODEL".padEnd(nameW)} ${"CALLS".padStart(6)} ${"ERRORS".padStart(6)} ${"IN".padStart(8)} ${"OUT".padStart(8)} ${"CACHE R".padStart(8)} ${"CACHE W".padStart(8)}  COST`,
    ];
    for (const [i, m] of models.entries()) lines.push(row(names[i]!, m, usd(m.costUsd, m.costFrom)));
    // A total over some models only says so in the table, not only on stderr.
    const partial = totals.costUsd !== null && totals.unpricedModels.length > 0 ? " (partial)" : "";
    lines.push(
      row(
        `total (${sessions.length} session${sessions.length === 1 ? "" : "s"})`,
        totals,
        `${usd(totals.costUsd)}${partial}`,
      ),
    );
    if (copies > 0)
      lines.push(
        `(${copies} response${copies === 1 ? "" : "s"} found in more than one session — a fork's copied history — counted once)`,
      );
    if (copiedErrors > 0)
      lines.push(
        `(${copiedErrors} API error${copiedErrors === 1 ? "" : "s"} found in more than one session, counted once)`,
      );
    ctx.out(`${lines.join("\n")}\n`);
    if (totals.unpricedModels.length) {
      ctx.log.warn(
        `no price configured for: ${escapeLine(totals.unpricedModels.join(", "))} (config.json "prices")${totals.costUsd !== null ? "; the total covers the others only" : ""}`,
      );
    }
    return 0;
  },
});
