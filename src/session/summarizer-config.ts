/** The compaction summarizer config.json names (`summarizer`): the built-in one unless it says `http`. */
import type { Config } from "../config.ts";
import { apiKeyFromEnv } from "./_chat-completion.ts";
import { httpSummarizer } from "./http-summarizer.ts";
import { builtinSummarizer, type Summarizer } from "./summarizer.ts";

/**
 * The summarizer `config` asks for; an `http` one reads its API key from `env[apiKeyEnv]`. `file`
 * names the config in errors.
 */
export function summarizerFromConfig(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  file = "config.json",
): Summarizer {
  const s = config.summarizer;
  if (!s || s.type === "builtin") return builtinSummarizer;
  const apiKey = apiKeyFromEnv("summarizer", s.apiKeyEnv, env, file);
  return httpSummarizer({ url: s.url, model: s.model, apiKey, timeoutMs: s.timeoutMs });
}
