/**
 * Telling a secret's name and value from code, for `--redact`: `DB_PASSWORD=hunter22` holds a
 * password where `password: string`, `token = getToken()` and `max_tokens: 100000` do not. Used for
 * `name=value` pairs in text and for the keys of structured tool arguments alike.
 */

/** Names that say "secret" wherever the word is: `clientSecret`, `DB_PASSWORD`, `x-api-key`. */
const SECRET_ANYWHERE =
  /api[_-]?key|secret|passw(?:or)?d|passphrase|access[_-]?token|auth[_-]?token|credential|private[_-]?key/i;
/** Names whose last word says it: `GITHUB_TOKEN`, `refreshToken`, `DB_PASS`, npm's `_auth`. */
const SECRET_LAST = new Set(["token", "pass", "auth"]);
/**
 * Words before `token` that make it a pagination cursor (`nextPageToken`, `continuationToken`,
 * `syncToken`, AWS's `NextToken`): a position in a listing that anyone with access could ask for.
 */
const CURSOR_WORDS = new Set([
  "page",
  "next",
  "prev",
  "previous",
  "continuation",
  "sync",
  "cursor",
  "resume",
]);
/**
 * `…_key` names that are secrets: `AccountKey` (Azure), `SharedAccessKey`, `signing_key`, and
 * WordPress's keys (`AUTH_KEY`, `SECURE_AUTH_KEY`, `NONCE_KEY`; `LOGGED_IN_KEY` below).
 */
const SECRET_KEY_KINDS = new Set([
  "account",
  "access",
  "signing",
  "encryption",
  "master",
  "client",
  "auth",
  "nonce",
]);

/**
 * A name worth asking `secretName` about, captured (group 1): a word of up to 100 characters that
 * holds a hint. Both runs are bounded and the name is taken whole, never given back a character at a
 * time (`(?=(…))\1`): tried from each word start of a long line of `[\w-]` (a base64url blob, a
 * rule of `-`), an unbounded name took seconds a megabyte.
 */
export const SECRET_NAME = String.raw`(?=([A-Za-z_][\w-]{0,99}))(?=[\w-]{0,96}?(?:key|secret|pass|token|auth|credential|salt))\1`;

/** Words before `salt` that make it one of WordPress's salts (`AUTH_SALT`, `NONCE_SALT`). */
const SALT_KINDS = new Set(["auth", "nonce"]);
/** WordPress's `LOGGED_IN_KEY` and `LOGGED_IN_SALT`: `logged in` before the last word. */
const loggedIn = (words: string[]) => words.at(-2) === "in" && words.at(-3) === "logged";
/** Whether a field or variable so named holds a secret. */
const METADATA_LAST = new Set([
  "url",
  "uri",
  "endpoint",
  "expires",
  "expiry",
  "expiration",
  "at",
  "ttl",
  "lifetime",
  "arn",
  "id",
  "name",
  "version",
  "header",
  "path",
  "file",
  "env",
  "var",
  "regex",
  "pattern",
  "length",
  "policy",
  "type",
  "label",
  "hint",
  "placeholder",
  // What is set about a secret, not the secret (`PASSWORD_RESET_TIMEOUT`, `AUTH_PASSWORD_BROKER`).
  "timeout",
  "table",
  "broker",
  "provider",
  "backend",
  "driver",
  "hasher",
  "algorithm",
  "method",
  "prefix",
  "column",
  "seconds",
  "minutes",
  "hours",
  "days",
]);
/** A name's words, lower case: `nextPageToken` and `NEXT_PAGE_TOKEN` are `next page token`. */
const wordsOf = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** A pagination cursor's name (`nextPageToken`, `next_token`): a position, not a secret. */
function cursorName(name: string): boolean {
  const words = wordsOf(name);
  return words.at(-1) === "token" && CURSOR_WORDS.has(words.at(-2) ?? "");
}

export function secretName(name: string): boolean {
  const words = wordsOf(name);
  const last = words.at(-1) ?? "";
  // Vault AppRole's `secret_id` is the credential itself.
  // A plural is what its word is (`PASSWORD_HASHERS`).
  const about = METADATA_LAST.has(last) || (last.endsWith("s") && METADATA_LAST.has(last.slice(0, -1)));
  if (words.length > 1 && about && !(last === "id" && words.at(-2) === "secret")) return false;
  // `ACCESS_TOKEN_EXPIRES_IN`: a duration.
  if (last === "in" && words.at(-2) === "expires") return false;
  if (SECRET_ANYWHERE.test(name)) return true;
  if (cursorName(name)) return false;
  if (last === "key" && loggedIn(words)) return true;
  // WordPress's salts, named for its keys (`AUTH_SALT`, `SECURE_AUTH_SALT`, `LOGGED_IN_SALT`,
  // `NONCE_SALT`).
  if (last === "salt" && (SALT_KINDS.has(words.at(-2) ?? "") || loggedIn(words))) return true;
  return SECRET_LAST.has(last) || (last === "key" && SECRET_KEY_KINDS.has(words.at(-2) ?? ""));
}

/** An environment variable's name (`DB_PASSWORD`): what it holds is a value, never code or text. */
export const envName = (name: string) => /^[A-Z0-9_]+$/.test(name);
/** A password's or a secret's name: a count or a word under it may be the secret itself. */
export const passwordName = (name: string) => /pass|secret/i.test(name);

/** A value that names where a secret comes from rather than holding it. */
export const REFERENCE =
  /^(?:[$%{<]|#\{|\.{0,2}\/|~\/|[\w$.]+[([]|[A-Za-z_$][A-Za-z_$.]*<[A-Za-z_][\w$.]*(?:[,<>[\]]|$))/;
/** A type name, a variable or a member access: `string`, `secretKey`, `config.apiKey`. */
const IDENTIFIER =
  /^[A-Za-z_$][A-Za-z_$]*(?:\??\.[A-Za-z_$][\w$]*)*(?:\??\.(?:[A-Z][A-Z0-9_]*|[a-z_$][\w$]*[A-Z][\w$]*)!)?$/;
/** An upper-case constant with digits (`API_KEY_V2`): code, where `hunter2` is a password. */
const CONSTANT = /^[A-Z][A-Z0-9_]*$/;
/** Lower-case words joined by hyphens: an option (`credentials: "same-origin"`), not a secret. */
const KEBAB = /^[a-z]+(?:-[a-z]+)+$/;

/**
 * Laravel's validation rules (`required|string|min:8`, `regex:/^(?=.*\d)/`): Laravel's own rule
 * names with `|` between them (one may end the string: `'required|' . Password::defaults()`), each
 * rule's arguments after its `:`, as that rule takes them — none for most, numbers for a size rule
 * (or a PHP variable: `min:{$min}`), a pattern for `regex`. Alone, only a size rule or a pattern:
 * `max:hunter22`, `in:s3cr3tpw` and `admin:s3cret` are a user and a password.
 */
const ARGS = /^[\w.*,/:{}$-]+$/;
const NUMBER = String.raw`(?:\d+(?:\.\d+)?|\{?\$\w+(?:->\w+)*\}?)`;
const NUMBERS = new RegExp(`^${NUMBER}(?:,${NUMBER})*$`);
const PATTERN = /^\/.*\/[a-z]*$/;
const RULE_ARGS = new Map<string, RegExp | undefined>();
for (const name of [
  "accepted,active_url,alpha,alpha_dash,alpha_num,ascii,bail,boolean,confirmed,date,declined,distinct",
  "filled,hex_color,image,integer,ip,ipv4,ipv6,json,list,lowercase,mac_address,missing,nullable",
  "numeric,present,prohibited,required,sometimes,string,uppercase,url,uuid,ulid,file",
].flatMap((line) => line.split(",")))
  RULE_ARGS.set(name, undefined);
for (const name of [
  "accepted_if,after,after_or_equal,array,before,before_or_equal,contains,current_password,date_equals",
  "date_format,declined_if,different,dimensions,doesnt_start_with,doesnt_end_with,email,ends_with",
  "enum,exclude,exclude_if,exclude_unless,exclude_with,exclude_without,exists,extensions,gt,gte,in",
  "in_array,lt,lte,mimes,mimetypes,missing_if,missing_unless,missing_with,missing_with_all,not_in",
  "present_if,present_unless,present_with,present_with_all,prohibited_if,prohibited_unless,prohibits",
  "required_array_keys,required_if,required_if_accepted,required_if_declined,required_unless",
  "required_with,required_with_all,required_without,required_without_all,same,starts_with,timezone",
  "unique",
].flatMap((line) => line.split(",")))
  RULE_ARGS.set(name, ARGS);
for (const name of "min,max,size,between,digits,digits_between,min_digits,max_digits,multiple_of,decimal".split(
  ",",
))
  RULE_ARGS.set(name, NUMBERS);
RULE_ARGS.set("regex", PATTERN).set("not_regex", PATTERN);

/**
 * A rule list's rules: split at `|`, but a pattern (`regex:/…/`) may hold `|` of its own and ends at
 * its closing `/` and flags before the next rule's name (or the end).
 */
function rulesOf(rules: string): string[] {
  const parts: string[] = [];
  let from = 0;
  while (from <= rules.length) {
    const pattern = /^(?:not_)?regex:\//.test(rules.slice(from, from + 11));
    const end = pattern ? patternEnd(rules, from) : rules.indexOf("|", from);
    const stop = end < 0 ? rules.length : end;
    parts.push(rules.slice(from, stop));
    from = stop + 1;
  }
  return parts;
}

/** Where the pattern rule at `from` ends: at the `|` after a `/flags` that a rule's name follows. */
function patternEnd(rules: string, from: number): number {
  const close = /\/[a-z]*\|(?=([a-z_]+)(?::|\||$))/g;
  close.lastIndex = rules.indexOf("/", from) + 1;
  for (let m = close.exec(rules); m; m = close.exec(rules))
    if (RULE_ARGS.has(m[1]!)) return m.index + m[0].length - 1;
  return -1;
}

function validationRules(value: string): boolean {
  if (!/[|:]/.test(value)) return false;
  const parts = rulesOf(value.endsWith("|") ? value.slice(0, -1) : value);
  const alone = parts.length === 1;
  return parts.every((rule) => {
    const colon = rule.indexOf(":");
    const name = colon < 0 ? rule : rule.slice(0, colon);
    if (!RULE_ARGS.has(name)) return false;
    const args = RULE_ARGS.get(name);
    if (colon < 0) return !alone;
    if (args === undefined || (alone && args === ARGS)) return false;
    return args.test(rule.slice(colon + 1));
  });
}

/**
 * A word of prose in any script — letters and their marks, an apostrophe within (`You've`,
 * `l’été`) — as `characters` is in English: among the words of a value, not a credential.
 */
const PROSE_WORD = /^[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*$/u;
export const proseWord = (word: string) => PROSE_WORD.test(word);
/**
 * A sentence of a script written without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar): a
 * run of its letters (four at least: digits alone are a password), with brackets and digits among
 * them and its own full stop or not (`パスワードが正しくありません。`). A message, where a password of
 * these letters alone is rare.
 */
const SPACELESS_PROSE =
  /^(?=(?:[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]*[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]){4})[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{M}ー（）「」・0-9０-９]+[。！？、]?$/u;
/**
 * A label: one word of letters, capitalised, in any script with cases (`Contraseña`, `Пароль`,
 * `Palavra-passe`), as `Password` is in English — a language file's translation (`'password' =>
 * 'Contraseña'`), where the hash-entry rule asks. Elsewhere a password may look so (`Frühling`).
 */
export const LABEL = /^\p{Lu}[\p{Ll}\p{M}]+(?:[-'’][\p{Ll}\p{M}]+)*$/u;
/** A sentence of a script with its own full stop (`…होना चाहिए।`, `…؟`): a message, not a password. */
const SCRIPT_SENTENCE = /^[\p{L}\p{M}\s'’,-]+[。！？।॥؟۔]$/u;

/** Stripe's publishable keys: public by design, written into web pages. */
export const PUBLISHABLE_KEY = /^pk_(?:live|test)_[A-Za-z0-9]+$/;
/** An authentication scheme's name (`"auth": "oauth2"`, `auth: basic`), not a credential. */
const AUTH_SCHEME =
  /^(?:o?auth[12]?|oauth2?|basic|bearer|digest|none|jwt|oidc|saml2?|ntlm|kerberos|negotiate|aws4?|sigv4|hmac|mtls|api[_-]?key|token|session|cookie)$/i;
/** A key's id, the algorithm and a name or number (Matrix's `signing_key: "ed25519:1"`). */
const KEY_ID =
  /^(?:ed25519|ed448|x25519|curve25519|rsa|ecdsa|secp256k1|p-?256|hs256|rs256|es256):[\w.-]{1,32}$/i;
/**
 * A file holding the secret, named by a relative path (`certs/client-key.pem`) or with a key or
 * certificate file's extension (`client-key.pem`). Base64 and hex keys have no `.ext` at their end.
 */
const KEY_FILE =
  /^(?:[\w.-]+\/)+[\w.-]*\.[A-Za-z]\w{0,7}$|^[\w.-]+\.(?:pem|key|crt|cer|der|p12|pfx|jks|pub|asc|gpg|json)$/;

/**
 * Whether `value`, after a secret-sounding `name`, looks like the secret itself. `envFile`: the
 * pair is a `.env` or shell line (`DB_PASSWORD=supersecret`), which holds values, not code.
 */
export function credentialValue(value: string, envFile: boolean, name = ""): boolean {
  if (value.length < 6 || REFERENCE.test(value) || /^[=>]/.test(value)) return false;
  // Already masked by a pattern before (`x-access-token:[REDACTED]@github.com`), or by Rails.
  if (value.startsWith("[REDACTED]") || value === "[FILTERED]") return false;
  if (PUBLISHABLE_KEY.test(value) || AUTH_SCHEME.test(value) || KEY_ID.test(value) || KEY_FILE.test(value))
    return false;
  // A count (`auth_token_ttl`, `next_token: 100000`) unless the name is a password's.
  if (/^\d+$/.test(value) && !passwordName(name)) return false;
  if (envFile) return true;
  if (validationRules(value) || SPACELESS_PROSE.test(value) || SCRIPT_SENTENCE.test(value)) return false;
  return !IDENTIFIER.test(value) && !CONSTANT.test(value) && !KEBAB.test(value);
}
