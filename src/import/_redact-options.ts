/**
 * Command-line options that hold a secret, for `--redact` (`redact.ts`, `_redact-argv.ts`): which
 * names take one, whether the word after one is its value, and the mysql clients that take
 * `-pPASSWORD`.
 */
import { credentialValue } from "./_secret-name.ts";

export const MASK = "[REDACTED]";

/** The mysql and MariaDB client commands that take `-pPASSWORD`. */
export const MYSQL_WORD = String.raw`(?:mysql|mariadb)(?:-?(?:dump|admin|import|show|check))?`;

/**
 * What a bare word after `--password`/`--token` is when it is no value: a help page's placeholder
 * (`--api-key API_KEY`, cobra's `--token string`), a word of prose about the option (`--token
 * instead of …`, `--api-key directly`, `the --password should be set`), a version or a date
 * (`--token v1.2.3`). A word outside the list is a value: a letters-only password (`--password
 * raspberry`) must not pass for prose.
 */
const OPTION_PLACEHOLDER = new RegExp(
  `^(?:[A-Z][A-Z0-9_]*|v?\\d+(?:\\.\\d+)+|\\d{4}-\\d{2}-\\d{2}.*|(?:${[
    "strings?|stringArray|int|bool|duration|value|values|option|options|parameter|flag|flags|argument",
    "instead|directly|together|followed|should|must|will|would|can|could|may|is|are|was|were|be|been",
    "when|with|from|and|or|to|for|the|if|as|in|on|at|by|via|here|there|only|also|first|then|set|not",
    "which|that|this|you|your|its|it|to|of|required|optional|missing|header|env|environment|variable",
    "requires|needs|prompt|none|null|true|false|command|respectively",
  ].join("|")}))$`,
);

/**
 * The command-line options that take a secret, by name: a password named for anything it logs in
 * to (`--db-password`, `--key-store-password`, `--new-password`), a key named for its API
 * (`--azure-openai-api-key`), and tokens and secrets named for the services that issue them
 * (`--github-token`, `--session-token`, `--webhook-secret`, `--client-secret`). Not any name ending
 * in `token` or `secret`: most such options hold none (`--lock-token`, `--client-token`,
 * `--idempotency-token` are request ids, `--next-token` a cursor, `--pull-secret` names a
 * Kubernetes secret); nor an option that asks for a secret, makes one or turns it off
 * (`--prompt-for-password`, `--generate-password`, `--disabled-password`, `--password-stdin`).
 */
/** Words joined by `-` in a name (`personal-access`): `-` or `_` in an option. */
const dashed = (words: string) => words.replaceAll("-", "[-_]");
const NOT_HOLDING = String.raw`(?!(?:[A-Za-z0-9]+[-_])*(?:${dashed("no|ask|skip|set|with|without|disabled?|disallow|discard|expired?|prompt|generate|reset|retain|require|random|empty|allow|show|print|read|check|mask|perf-trace|stored|clear|rotate|regenerate|remove|revoke|include|request|fetch")})[-_])`;
const TOKEN_ISSUERS = dashed(
  "session|security|web-identity|id|oidc|access|auth|refresh|bearer|api|bot|personal-access|github|gitlab|bitbucket|npm|hf|huggingface|slack|discord|telegram|registry|pypi|vault|consul|cloudflare|netlify|vercel|sentry|jira|confluence|sonar|circleci|codecov|snyk|tfe|doppler|heroku|digitalocean|linear|notion|openai|anthropic|supabase|fly|railway|render|push-auth|docker",
);
const SECRET_ISSUERS = dashed(
  "client|google-client|oidc-client|jwt|webhook|app|consumer|signing|shared|aws|api|session|hmac|cookie|encryption|master",
);
/** Up to four words before a name's last (`key-store-`, `azure-openai-`). */
const WORDS = String.raw`(?:[A-Za-z0-9]+[-_]){0,4}`;
export const SECRET_OPTION = String.raw`${NOT_HOLDING}(?:${WORDS}(?:password|passwd)|db[-_]?pass|passphrase|token|${WORDS}api[-_]?key|(?!(?:export|import|try|delete|list)[-_]secret)${WORDS}secret[-_]key|(?:[A-Za-z0-9]+[-_]){0,2}(?:${TOKEN_ISSUERS})[-_]token|(?:[A-Za-z0-9]+[-_]){0,2}(?:${SECRET_ISSUERS})[-_]secret|(?:auth|account|master)[-_]key)`;
export const SECRET_OPTION_WORD = new RegExp(String.raw`^--?(?:${SECRET_OPTION})$`, "i");
/**
 * Whether `word`, after a secret's option (`option`: the option, or the words before the value),
 * is its value: not a path or a file URL, a variable, a placeholder or another tool's `key=value`
 * list (`id=npmrc,src=…`).
 */
export function optionValue(word: string, option: string): boolean {
  return (
    !/^(?:[-$%{<~/]|\\f[IBR])/.test(word) &&
    !/^[a-z]+:\/\//.test(word) &&
    !/^[a-z][\w-]*=[^,]*,[a-z][\w-]*=/.test(word) &&
    !OPTION_PLACEHOLDER.test(word) &&
    credentialValue(word, true, /token|key/i.test(option) ? "token" : "password")
  );
}
