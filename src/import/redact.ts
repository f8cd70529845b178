/**
 * `--redact`: mask common secret shapes in imported text and tool arguments. Transcripts hold whole
 * file contents, `.env` reads, API error headers and pasted commands; these patterns catch the
 * usual credentials (provider API keys, cloud and VCS tokens, bearer headers, JWTs, private keys,
 * `password=`-style pairs) without trying to be a full secret scanner.
 */

const MASK = "[REDACTED]";

const PATTERNS: [RegExp, string][] = [
  [/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g, MASK],
  [/\b(Bearer|Basic|token)\s+[A-Za-z0-9._~+/=-]{16,}/gi, `$1 ${MASK}`],
  [/\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}\b/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{30,}\b/g, MASK],
  [/\bglpat-[A-Za-z0-9_-]{20,}\b/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}\b/g, MASK],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, MASK],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
  [
    /\b([A-Za-z0-9_]*(?:api[_-]?key|secret|passw(?:or)?d|access[_-]?token|auth[_-]?token)[A-Za-z0-9_]*)(["']?\s*[:=]\s*["']?)([^\s"',;]{6,})/gi,
    `$1$2${MASK}`,
  ],
];

/** Mask secrets in one string. */
export function redactText(text: string): string {
  let out = text;
  for (const [re, replacement] of PATTERNS) out = out.replace(re, replacement);
  return out;
}

/** Mask secrets in every string inside `value` (objects and arrays are copied, never mutated). */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactText(value) as T;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v)) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactDeep(v);
    return out as T;
  }
  return value;
}
