/**
 * Telling a model's dated id from another model: a response may name the dated (versioned) id of
 * the model its request named (`claude-sonnet-4-20250514` for `claude-sonnet-4`), or the reverse.
 * The trace pairs them so, and `usage` counts them so.
 */

/**
 * What a provider puts after a model's name in the id of one of its versions: a date (`-20250514`,
 * `-2024-07-18`, `@20250514`, OpenAI's `-0613`), Gemini's `-001`, `-latest`, and Bedrock's `-v1:0`
 * after any of them. Never a word or a one- or two-digit number: `gpt-4o-mini` and `claude-sonnet-4-5`
 * are other models.
 */
const SUFFIX = String.raw`[-@](?:\d{8}|\d{4}-\d{2}-\d{2}|\d{3,4}|latest)(?:-v\d+(?::\d+)?)?`;
const DATE_SUFFIX = new RegExp(`^${SUFFIX}$`);
const ENDS_DATED = new RegExp(`${SUFFIX}$`);

/** Whether `id` is a dated (versioned) id of `model` (`claude-sonnet-4-20250514` of `claude-sonnet-4`). */
function datedIdOf(id: string, model: string): boolean {
  return id.length > model.length && id.startsWith(model) && DATE_SUFFIX.test(id.slice(model.length));
}

/** The model a dated id is a version of (`gpt-4o` of `gpt-4o-2024-08-06`); undefined for an id with no date. */
export function undatedOf(id: string): string | undefined {
  const m = ENDS_DATED.exec(id);
  return m && m.index > 0 ? id.slice(0, m.index) : undefined;
}

/** Whether `a` and `b` name one model, one of them by its dated id. */
export const datedAlike = (a: string, b: string): boolean => datedIdOf(a, b) || datedIdOf(b, a);
