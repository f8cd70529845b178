/** The compaction summarizer config.json names (`summarizer`): the built-in one unless it says `http`. */
import type { Config } from "../config.ts";
import { badInput } from "../errors.ts";
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
  let apiKey: string | undefined;
  if (s.apiKeyEnv !== undefined) {
    apiKey = env[s.apiKeyEnv];
    if (!apiKey)
      throw badInput(`summarizer: the environment variable ${s.apiKeyEnv} (apiKeyEnv) is not set`, {
        file,
        field: "summarizer.apiKeyEnv",
      });
  }
  return httpSummarizer({ url: s.url, model: s.model, apiKey, timeoutMs: s.timeoutMs });
}
