/**
 * Titlers: what makes a generated title from a session's first prompts. The HTTP one asks an
 * OpenAI-compatible chat completions endpoint with the guarded request (`title-prompt.ts`) and
 * cleans the answer (`title-clean.ts`); an answer with no usable title is an `unavailable` error,
 * so the caller keeps the title it has.
 */
import { type ChatEndpoint, chatClient } from "./_chat-completion.ts";
import { cleanTitle } from "./title-clean.ts";
import { titleRequest } from "./title-prompt.ts";

/** Makes a title from the text of a session's first user message(s). */
export interface Titler {
  /** `http:<model>` for the HTTP titler. */
  readonly name: string;
  /** A clean title (already post-processed), or a `FreecodeError` (`unavailable` when the service fails). */
  title(prompts: string): Promise<string>;
}

/** Options of `httpTitler`: the endpoint (timeout default 30 s: a title is a few words). */
export type HttpTitlerOptions = ChatEndpoint;

/** A titler that asks the model at `url`. */
export function httpTitler(options: HttpTitlerOptions): Titler {
  const client = chatClient({ ...options, timeoutMs: options.timeoutMs ?? 30_000 }, "titler");
  return {
    name: `http:${options.model}`,
    async title(prompts) {
      const answer = await client.complete(titleRequest(prompts), "a chat completion");
      const title = cleanTitle(answer);
      if (title === undefined) {
        const shown = answer.replace(/\s+/g, " ").trim();
        throw shown
          ? client.fail("the answer holds no usable title", JSON.stringify(shown.slice(0, 80)))
          : client.fail("the answer holds no usable title (it is empty)");
      }
      return title;
    },
  };
}
