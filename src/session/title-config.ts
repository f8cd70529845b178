/** The titler config.json names (`titler`): none unless it says `http`. */
import type { Config } from "../config.ts";
import { apiKeyFromEnv } from "./_chat-completion.ts";
import { httpTitler, type Titler } from "./title-http.ts";

/**
 * The titler `config` asks for, or `undefined` when titles are not generated (`titler` absent or
 * `{type: "off"}`). An `http` one reads its API key from `env[apiKeyEnv]`; `file` names the config
 * in errors.
 */
export function titlerFromConfig(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  file = "config.json",
): Titler | undefined {
  const t = config.titler;
  if (!t || t.type === "off") return undefined;
  const apiKey = apiKeyFromEnv("titler", t.apiKeyEnv, env, file);
  return httpTitler({ url: t.url, model: t.model, apiKey, timeoutMs: t.timeoutMs });
}
