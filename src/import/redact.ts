/**
 * `--redact`: mask common secret shapes in imported text and tool arguments. Transcripts hold whole
 * file contents, `.env` reads, API error headers and pasted commands; these patterns catch the
 * usual credentials (provider API keys, cloud, VCS and registry tokens, bearer and basic headers,
 * URL passwords, JWTs, private keys, `password=`-style pairs) without trying to be a full secret
 * scanner. Transcripts are mostly code, so a value next to a secret-sounding name is masked only
 * when it looks like a credential, not like a type, a variable, an environment lookup or a path.
 */

import { argument, newCommands, notice } from "./_redact-argv.ts";
import { MASK, MYSQL_WORD, optionValue, SECRET_OPTION } from "./_redact-options.ts";
import {
  credentialValue,
  envName,
  LABEL,
  PUBLISHABLE_KEY,
  passwordName,
  proseWord,
  REFERENCE,
  SECRET_NAME,
  secretName,
} from "./_secret-name.ts";

/**
 * A value cut at its pattern's bound: `cutAt` notes the rest of it (a sticky regex of the value's own
 * characters) and `replaceCutting` skips that rest right after the match. No mark is written into
 * the text, so no input character can pass for one and no other pattern's characters are taken.
 */
let cutTail: RegExp | undefined;
const cutAt = (value: string, bound: number, rest: RegExp) => {
  if (value.length >= bound) cutTail = rest;
  return MASK;
};
/** What the last replacer noted as its value's rest (read after the call: `cutAt` set it). */
const takeCut = (): RegExp | undefined => cutTail;
const tail = (source: string) => new RegExp(`(?:${source})*`, "y");

/**
 * Key blocks go first, over the whole text: their base64 body must not be mistaken for a blob. A
 * block is its BEGIN marker, lines of base64 or headers (`Proc-Type: 4,ENCRYPTED`, `Version: …`)
 * and its END marker; lines may be escaped (`\n` in JSON-encoded text) or spaces (a key pasted on
 * one line). A BEGIN marker with no END after such lines (cut short, or code that looks for it)
 * masks itself and the base64 lines that follow, not the rest of the text.
 */
const KEY_MARKER = String.raw`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`;
const KEY_END = String.raw`-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`;
/**
 * What a tool puts before each line of a file it shows: Claude's Read numbers them (`     2→`),
 * `grep -n` names the file (`id_rsa:2:`, `id_rsa-2-` for context), and a key kept in a comment,
 * a quote or a diff has its marker. Each line of the block carries its own, so the body is found
 * whatever the prefix (it was stored in clear but for the BEGIN line).
 */
const KEY_PREFIX = String.raw`(?:\d+(?:→|\\{1,8}u2192)|[\w./~+-]{0,200}?[:-]\d+[:-]|#+|\/\/+|>+|\*|;+|--|%|\|)(?:[ \t]|\\{1,8}t){0,16}`;
const KEY_GAP = String.raw`(?:\s|\\{1,8}[rnt]){1,64}(?:${KEY_PREFIX})?`;
/** A header is one short line whole (a bounded, anchored run: a long line is not tried at each space). */
const KEY_LINE = String.raw`(?:[A-Za-z0-9+/=]+|[A-Za-z-]{1,40}: [^\n\\]{0,200}(?![^\n\\]))`;
/**
 * At most this many lines (or words, for a key on one line) between the markers: a 16384-bit RSA
 * key has ~200, and a marker before a long text with no END is given up soon, not after the text.
 */
const KEY_LINES = 500;
const KEY_BLOCK = new RegExp(
  String.raw`${KEY_MARKER}(?:(?:${KEY_GAP}${KEY_LINE}){0,${KEY_LINES}}?(?:${KEY_GAP})?${KEY_END}|(?:${KEY_GAP}[A-Za-z0-9+/=]{16,}(?![A-Za-z0-9+/=])){0,${KEY_LINES}})`,
  "g",
);

/**
 * Binary data, never searched: a data URL's payload, or a whole string that is one long base64 run
 * (an image part). Random base64 contains `AKIA…`/`AIza…` shapes by chance.
 */
const DATA_URL = /data:[\w.+-]+\/[\w.+-]+;base64,[A-Za-z0-9+/]+=*/g;
const BLOB = /^[A-Za-z0-9+/]{256,}=*$/;

/** How often a word changes between lower case, upper case and digits: random keys often do. */
const classChanges = (value: string) =>
  [...value.replace(/[^A-Za-z0-9]/g, "")].reduce(
    (n, c, i, all) => (i > 0 && charClass(c) !== charClass(all[i - 1]!) ? n + 1 : n),
    0,
  );
const charClass = (c: string) => (c >= "0" && c <= "9" ? 0 : c === c.toUpperCase() ? 1 : 2);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A word after `token` that looks like a credential: letters and digits, not a path, not a UUID
 * (`Invalid token 550e8400-…` names a request).
 */
function tokenWord(value: string): boolean {
  return (
    value.length >= 16 &&
    !REFERENCE.test(value) &&
    !PUBLISHABLE_KEY.test(value) &&
    /[A-Za-z]/.test(value) &&
    /\d/.test(value) &&
    !UUID.test(value)
  );
}

/**
 * Basic credentials are base64 of `user:password`, however short, or a key that looks random
 * (`basic configuration2024` is prose: one change from letters to digits).
 */
function basicCredentials(value: string): boolean {
  if (tokenWord(value) && classChanges(value) >= 4) return true;
  if (value.length < 8 || !/^[A-Za-z0-9+/]+=*$/.test(value)) return false;
  const decoded = Buffer.from(value, "base64").toString("latin1");
  return /^[\x20-\x7e]+$/.test(decoded) && /^[^:]+:./.test(decoded);
}

/**
 * A bearer token is any long word but words joined by `_` or `-` (`bearer authentication_scheme`)
 * and a Stripe publishable key (sent so by browsers: public by design).
 */
const bearerToken = (value: string) =>
  !/^[a-z]+(?:[_-][a-z]+)+$/i.test(value) && !PUBLISHABLE_KEY.test(value);

/**
 * An `sk-` key has digits among long random runs; `sk-fading-circle-dot` (a CSS class) has
 * neither.
 */
const skKey = (value: string) => /\d/.test(value) && /[A-Za-z0-9]{12,}/.test(value.slice(3));

type Replacer = string | ((match: string, ...groups: string[]) => string);

/**
 * Where a secret may start: after a non-word character, or right after an escape of text that is
 * itself a JSON string (a Codex output `{"output":"…\nghp_…"}`, an MCP result), where `\b` finds
 * no boundary between the escape's `n` and the secret. Any run of backslashes counts: text encoded
 * twice writes the escape `\n` as `\\n`, which is also an escaped backslash before a word `n…`
 * (`\\npm_…`), so both starts are tried. An even run (up to 16) is one of eight fixed lengths
 * after a non-backslash: a quantified run in a look-behind (`(?<=(?<!\\)(?:\\\\){1,8})`, or an odd
 * one looked for) ran JavaScriptCore's slow path, 0.7-6 s a megabyte of `\\\\n` or `\\\"`.
 */
const EVEN_RUN = [2, 4, 6, 8, 10, 12, 14, 16].map((k) => String.raw`\\{${k}}`).join("|");
const START = String.raw`(?:(?<![\w\\])|(?<=(?:^|[^\\])(?:${EVEN_RUN}))|(?<=\\)(?![nrtbf]|u[0-9A-Fa-f]{4})|(?<=\\(?:[nrtbf]|u[0-9A-Fa-f]{4})))`;
/** No pattern starts at a space or a backslash: a cheap test first, before the look-behinds of START. */
const fromStart = (re: RegExp) => new RegExp(String.raw`(?=[^\s\\])${START}${re.source}`, re.flags);

/** A quote (or a Markdown backtick) around a name or a value, escaped when the text is a JSON string. */
const QUOTE = String.raw`(?:\\{0,16}["'\`])?`;
/**
 * Spaces and tabs, a tab escaped too (`\t` in text that is a JSON string): bounded, as a pattern
 * tried from each start of a name in a long run of them is otherwise slow (seconds a megabyte).
 */
const GAP = String.raw`(?:[ \t]|\\{1,16}t){0,32}`;
/**
 * Between a secret's name and its value: `=` or `:` (not a static call's `::`), after the name's
 * closing quote if it has one.
 */
const NAME_END = String.raw`${QUOTE}${GAP}(?:=|:(?!:))${GAP}`;
/**
 * Between a secret's name and a quoted value that is set to it, in code: `=`, `||=`, `??=` after a
 * subscript (`$config['db_password'] = …`, `os.environ["API_KEY"] = …`, `config[:password] = …`,
 * Perl's `$h{password} = …`, spaces inside the brackets as WordPress writes them), or a hash entry's `=>` (`'db_password' => …`, `:api_key => …`). Only a
 * quoted value is taken there: what else follows is code (`Hash::make($p)`, `(start, end)`).
 */
const SET_TO = String.raw`(?:(?:\\{0,16}["'])?${GAP}[\]}]${GAP}(?:\|\||\?\?)?=|${QUOTE}${GAP}=>)${GAP}`;
/**
 * Not an expression's operand: no operator after the closing quote (a PHP concatenation ` . `, but
 * a method call `.freeze`, a sentence's full stop and a comment may follow).
 */
const NO_OPERATOR = String.raw`(?!(?:[ \t]|\\{1,16}t){1,32}\.[\s$'"]|\.[$'"]|${GAP}(?:[-+*%?|&<>=^]|\/(?![/*])))`;
/** A value up to a quote, a separator or an escape (`\n` ends a line of a JSON string). */
const VALUE = String.raw`((?:[^\s"'\`,;\\]|\\(?![nrtbf"'\\/]|u[0-9A-Fa-f]{4}))+)`;

/**
 * What a shell command holds between its word and an option: any character but a command's end, a
 * `\` line continuation (`\\\n` once JSON-encoded), or a quoted string whole (escaped when the text
 * is a JSON string); not past another mysql word, each of which is tried on its own.
 */
const MYSQL_ARG = String.raw`[^\n|;&"'\\]|\\\r?\n|\\{3,}[rn]|\\(?![\\nrt"'])|\\*"(?:[^"\\\n]|\\+(?![\\"])){0,2000}?\\*"|\\*'(?:[^'\\\n]|\\+(?![\\'])){0,2000}?\\*'`;

/**
 * The secret name a pattern matched at `at` of `text`, or undefined when it is no secret's. After a
 * backslash, in text encoded twice, the escape `\n` is written `\\n`, also an escaped backslash
 * before a word `n…`, and the name is read from the `n` (`ntoken`, `nDB_PASSWORD`): the name
 * without that letter is taken when it is the secret one.
 */
function secretKeyAt(name: string, at: number, text: string): string | undefined {
  if (text[at - 1] === "\\" && /^[nrtbf]./.test(name) && secretName(name.slice(1))) return name.slice(1);
  return secretName(name) ? name : undefined;
}

/**
 * A value of several words after a secret name: masked whole when it is an environment variable's
 * (a passphrase may have spaces) or when a word of it looks like a credential; a sentence
 * (`password: "Password must be at least 8 characters"`) stays.
 */
/** A message's placeholder (Laravel's `:attribute`, `%{count}`, `{{ name }}`, `{0}`): prose's. */
const PLACEHOLDER = /^(?::[a-z_]+|%\{\w+\}|\{\{\w+\}\}|\{\w+\})$/;
function credentialWords(value: string, name: string): boolean {
  if (envName(name)) return credentialValue(value.trim(), true, name);
  // A word's closing or opening punctuation is prose's (`letters,`, `(optional)`), not the secret's;
  // among words, one of letters alone is prose's in any script (`caractères`, `You've`).
  return value
    .split(/\s+/)
    .map((word) => word.replace(/^[([¿¡]+|[.,!?:;)\]]+$/g, ""))
    .some((word) => !proseWord(word) && !PLACEHOLDER.test(word) && credentialValue(word, false, name));
}

/** Space in a call's parentheses: its arguments may be on lines of their own (escaped in JSON text). */
const WS = String.raw`(?:[ \t\r\n]|\\{1,16}[nrt]){0,64}`;
/** Calls that read an environment variable (or a setting) by name, with a default after it. */
const LOOKUP = String.raw`\b(?:env(?:\.\w{1,20})?|getenv(?:_docker)?|environ\.(?:get|setdefault)|ENV\.fetch|config)`;
/** What reads an environment variable named right after it: `process.env.`, `ENV['`, `getenv('`. */
const ENV_READ = String.raw`(?:\b(?:process\.env|import\.meta\.env|Bun\.env)\.|\$ENV\{${WS}\\{0,16}["']?|(?:\b(?:process\.env|ENV)|\$_(?:ENV|SERVER))\[${WS}\\{0,16}["']|\b(?:getenv|environ\.get|Deno\.env\.get|ENV\.fetch|env)${WS}\(${WS}\\{0,16}["'])`;

/**
 * A default given in code for a secret's environment variable (`getenv("API_KEY", "…")`, `|| "…"`):
 * the value the program runs with when the variable is not set, judged as an environment file's
 * value (`'postgres'`, `'keyboard cat'` are passwords there) when the variable is named for the
 * secret. What is set about a secret is told by its name (`…_TABLE`, `…_TIMEOUT`: `secretName`;
 * `…_SOURCE`, `…_COOKIE`: `OWN_VALUE`). The match ends with the value.
 */
function envDefault(m: string, name: string, _sep: string, _bs: string, _q: string, value: string): string {
  if (!secretName(name)) return m;
  // Only a variable named for the secret itself holds it (`DB_PASSWORD`, `JWT_SECRET`); one named for
  // something about it (`CREDENTIALS_SOURCE`, `ACCESS_TOKEN_COOKIE`, `TOKEN_AUTH`) holds a setting,
  // judged as code, and a count there is no password (`PASSWORD_HASH_ROUNDS`).
  const own = OWN_VALUE.test(name);
  const secret = own ? credentialWords(value, name.toUpperCase()) : codeSecret(value, "");
  return secret ? `${m.slice(0, m.length - value.length)}${MASK}` : m;
}
/** A name whose last word is the secret it holds (after it, an environment's or a version's: `_DEV`, `_V2`). */
const OWN_VALUE =
  /(?:pass(?:wo?r?d)?|pwd|passphrase|secrets?|tokens?|keys?|apikeys?|salt|pepper|key_base)(?:[_-](?:dev|development|prod|production|test|testing|staging|stage|local|ci|v?\d+))?$/i;

/**
 * A name beside an option in code, not its value: the option's own name (click's `'--password',
 * 'password'`) or a header's (`'x-access-token'`).
 */
const nameOf = (value: string, option: string) =>
  value.toLowerCase().replaceAll("_", "-") === option.toLowerCase().replace(/^-+/, "").replaceAll("_", "-") ||
  /^x-(?:[a-z]+-)*(?:token|key|secret|auth|password)$/i.test(value);
/** A snake-case name (`password_`, `db_password`): a parameter's, beside an option in code. */
const SNAKE = /^[a-z][a-z0-9]*_[a-z0-9_]*$/;
/**
 * The code-style judgement of a value that may be code (a setting's default: `'access_token'`,
 * `'environment'`, `'15 minutes'`): a credential's shape, not any word.
 */
const codeSecret = (value: string, name: string) =>
  /\s/.test(value) ? credentialWords(value, name) : credentialValue(value, false, name);

/** A PHP constant's literal: any value of a credential's length, unless PHP reads a variable in it (`"$pw"`). */
const definedSecret = (value: string, quote: string) =>
  value.length >= 6 && !value.startsWith(MASK) && !(quote === '"' && value.includes("$"));

/** A backslash in a value that is not a JSON escape ending it (`\n`, `\"`, `\u003c`). */
const ESC_OK = String.raw`\\(?![nrtbf"'\\/]|u[0-9A-Fa-f]{4})`;
/**
 * A query parameter's value (after `?` or `&`): up to the next `&`, where the next parameter is
 * judged on its own. Values are bounded (1024 here and for pairs, 256 for words) so a hostile line
 * stays linear — JavaScriptCore also gives up on runs of ~512K, and then matched nothing more in
 * the string; a value past its bound is masked whole (`cutAt`).
 */
const QUERY_VALUE = String.raw`((?:[^\s"'\`,;\\&]|${ESC_OK}){1,1024})`;
/** Any other pair's value: up to `&&` only (a .env password may hold `&`). */
const PAIR_VALUE = String.raw`((?:[^\s"'\`,;\\&]|&(?!&)|${ESC_OK}){1,1024})`;
const QUERY_TAIL = tail(String.raw`[^\s"'\`,;\\&]|${ESC_OK}`);
const PAIR_TAIL = tail(String.raw`[^\s"'\`,;\\&]|&(?!&)|${ESC_OK}`);
const OPTION_WORD_TAIL = tail(String.raw`[^\s"'\\()<>|;&,\][\`]|\\(?![nrt"'\\])`);
const YAML_TAIL = tail(String.raw`[^\r\n\\]|\r(?!\n)`);
const YAML_ENCODED_TAIL = tail(String.raw`[^\n\\"]`);
const MYSQL_PLAIN_TAIL = tail(String.raw`[^\s'"\\()<>|;&]|\\(?![nrt"'\\\s])`);
/** The rest of a quoted mysql password past its bound: the cut alternative's own class for that quote. */
const mysqlQuotedTail = (obs: string, oq: string) => {
  // `obs` is a run of backslashes (`\\*`): written as counts, not as itself, so a long run (75K
  // backslashes) does not make a regular expression too large to compile.
  const k = obs.length;
  const bs = (n: number) => (n === 0 ? "" : String.raw`\\{${n}}`);
  const escaped =
    oq === '"'
      ? String.raw`(?:${bs(2 * k + 2)}){0,8}${bs(2 * k + 1)}"|(?:${bs(2 * k + 2)}){1,8}(?=${bs(k)}")|'`
      : String.raw`\\{${k + 1},}'`;
  return tail(String.raw`[^\n'"\\]|\\+(?![\\nrt"'])|${escaped}`);
};
const QUERY_RE = new RegExp(String.raw`(?<=[?&])(?<!&&)${SECRET_NAME}(=)${QUERY_VALUE}`, "gi");
const queryPair = (m: string, name: string, sep: string, value: string, at: number, text: string) => {
  const key = secretKeyAt(name, at, text);
  if (key === undefined) return m;
  return credentialValue(value, false, key) ? `${name}${sep}${cutAt(value, 1024, QUERY_TAIL)}` : m;
};
/**
 * A quoted value after a secret's name, masked whole up to its closing quote (the groups: the name,
 * what comes between it and the value — its quote included —, the quote's backslashes, the quote,
 * the value): words judged one by one, a single word as a value.
 */
function quotedValue(
  m: string,
  name: string,
  sep: string,
  _bs: string,
  _q: string,
  value: string,
  at: number,
  text: string,
): string {
  const key = secretKeyAt(name, at, text);
  if (key === undefined) return m;
  const env = envName(key);
  // A language file's translation (`'password' => 'Contraseña'`): a label, not the password.
  if (!env && sep.includes("=>") && LABEL.test(value)) return m;
  const secret = /\s/.test(value) ? credentialWords(value, key) : credentialValue(value, env, key);
  return secret ? `${name}${sep}${MASK}` : m;
}

/** Where a quoted value of the several-words rule stops, by its quote: a newline, an escape, the quote. */
const VALUE_STOP: Record<string, RegExp> = { '"': /[\n\\"]/, "'": /[\n\\']/, "`": /[\n\\`]/ };
/** Where the quoted-value rules do not start: inside a hyphenated name (`a-b-token`, `a--token`). */
const INSIDE_NAME = /[\w-]-$/;
/**
 * Whether the quoted value that `sep` opens, whose first word `word` ends at `end` of `text`, goes
 * on with more words to its closing quote within the several-words rule's bound: that rule judged
 * it whole (a sentence it left stays whole). A value it cannot take (no closing quote on the line,
 * past 256 characters) is not: its first word is judged on its own.
 */
function severalWords(sep: string, word: string, text: string, at: number, end: number): boolean {
  const open = /(\\*)(["'`])$/.exec(sep);
  if (!open || !/[ \t]/.test(text[end] ?? "")) return false;
  if (INSIDE_NAME.test(text.slice(Math.max(0, at - 2), at))) return false;
  const [, bs, q] = open as unknown as [string, string, string];
  const rest = text.slice(end, end + 256 - word.length + bs.length + 1);
  const stop = rest.search(VALUE_STOP[q]!);
  return stop >= 0 && stop <= 256 - word.length && rest.startsWith(bs + q, stop);
}

const PATTERNS: [RegExp, Replacer][] = (
  [
    [/(Bearer)\s+([A-Za-z0-9._~+/=-]{16,})/gi, (m, word, v) => (bearerToken(v) ? `${word} ${MASK}` : m)],
    [/(Basic)\s+([A-Za-z0-9._~+/=-]+)/gi, (m, word, v) => (basicCredentials(v) ? `${word} ${MASK}` : m)],
    [/(token)\s+([A-Za-z0-9._~+/=-]+)/gi, (m, word, v) => (tokenWord(v) ? `${word} ${MASK}` : m)],
    // The password of `scheme://user:password@host`, however short; the user name (none in
    // `redis://:pw@host`) and the host stay. Up to the last `@` before the host: a password may hold
    // one (`user:p@ssw0rd@db`).
    [
      /([a-z][a-z0-9+.-]{0,40}:\/\/[^\s:@/?#"'\\]{0,256}:)([^\s/?#"'\\]{1,256})@/gi,
      (m, head, pw) => (/^[$%{<]/.test(pw) ? m : `${head}${MASK}@`),
    ],
    // curl's `-u user:password` / `--user user:password` (the user name stays). Only after `curl`:
    // `docker run -u 1000:1000` is a user and a group.
    // Within one command: across `\` line continuations and a URL's `&`, not past `&&`, `|`, `;`.
    [
      /(curl\b(?:(?!curl\b)(?:[^\n|;&]|&(?![&\s])|\\\n)){0,4096}?\s(?:-u\s*|--user[=\s]\s*)(\\*["']|)[^\s:'"\\]{1,256}:)((?:(?!\2)[^\n])+|(?:[^\s'"\\]|\\(?![nrt"]))+)/g,
      (m, head, q, pw) => {
        const value = q ? pw : pw.split(/\s/)[0]!;
        if (/^[$%{<]/.test(value) || value.startsWith("/")) return m;
        return `${head}${MASK}${pw.slice(value.length)}`;
      },
    ],
    [/sk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{16,}/g, (m) => (skKey(m) ? MASK : m)],
    [/[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g, MASK],
    [/hf_[A-Za-z0-9]{30,}\b/g, MASK],
    [/npm_[A-Za-z0-9]{30,}\b/g, MASK],
    [/(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
    [/gh[pousr]_[A-Za-z0-9]{30,}\b/g, MASK],
    [/github_pat_[A-Za-z0-9_]{30,}\b/g, MASK],
    [/glpat-[A-Za-z0-9_-]{20,}\b/g, MASK],
    // Slack bot, user, app and refresh (`xoxe.xoxp-…`, `xoxe-…`) tokens.
    [/(?:xox[abposre]|xapp)[.-](?:xox[a-z]-)?[A-Za-z0-9-]{10,}\b/g, MASK],
    [/(hooks\.slack\.com\/(?:services|workflows|triggers)\/)[A-Za-z0-9/_-]{16,}/g, `$1${MASK}`],
    [/(discord(?:app)?\.com\/api\/webhooks\/\d+\/)[A-Za-z0-9_-]{16,}/g, `$1${MASK}`],
    [/whsec_[A-Za-z0-9+/=]{20,}/g, MASK],
    [/ya29\.[A-Za-z0-9_-]{20,}/g, MASK],
    // `aws configure set aws_secret_access_key <key>`: a name and its value without `=`.
    [/(aws_secret_access_key\s+)[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/gi, `$1${MASK}`],
    // mysql's `-pPASSWORD` (no space: `-p db` asks for the password and names the database), an
    // option of the command itself: after its word, within the command (across `\` line
    // continuations, not past `|`, `;`, `&`, a newline or an escaped one) and not in a quoted `-e`
    // query. `docker run -p3306:3306 mysql`, `mysql db && find . -print` are not mysql's.
    [
      new RegExp(
        String.raw`(${MYSQL_WORD}(?=[ \t])(?:(?!(?<![\w.-])${MYSQL_WORD}[ \t])(?:${MYSQL_ARG})){0,4096}?\s-p)(?:(\\*)(["'])(?![\s,;)}\]])((?:(?!\3)[^\n\\]|\\(?![nrt"'\\])){1,256})(?=\2\3)|((?:[^\s'"\\()<>|;&]|\\(?![nrt"'\\\s])){1,256})|(\\*)(["'])(?![\s,;)}\]+])((?:[^\n'"\\]|\\+(?![\\nrt"'])|(?:\\\6\\\6){0,8}\\\6\6\7(?<=")|(?:\\\6\\\6){1,8}(?=\6")|\6\\+\7(?<=')|(?!\7)'){1,256}))`,
        "g",
      ),
      (m, head, bs, q, quoted, plain, obs, oq, cut) => {
        // Quoted, the password is all up to its closing quote (`-p'S3cret pass'`); bare, it ends
        // where the shell's word does (`$(mysql -phunter22)`, `-phunter22<dump.sql`); quoted with
        // an escaped quote of its own, up to that quote.
        const pw = quoted ?? plain ?? cut;
        if (/^[$%{<]/.test(pw)) return m;
        if (quoted !== undefined) return `${head}${bs}${q}${MASK}`;
        return plain !== undefined
          ? `${head}${cutAt(plain, 256, MYSQL_PLAIN_TAIL)}`
          : `${head}${obs}${oq}${cutAt(cut, 256, mysqlQuotedTail(obs, oq))}`;
      },
    ],
    // A password or token given as a command-line option — `--password hunter22`, `--token=…`,
    // `docker login -u me -p …` (podman's, nerdctl's), `sshpass -p …` — quoted whole or a shell
    // word: a value, not code.
    // Not a `$VAR`, a `<placeholder>`, a path or another option after it (`--password-stdin` is
    // another option's name).
    [
      new RegExp(
        String.raw`((?:(?<![\w-])--(?:${SECRET_OPTION})(?![\w-])(?:=|[ \t]+))|(?:\b(?:docker|podman|nerdctl)[ \t]+login\b(?:[^\n|;&\x60\\]|\\\\\\n|\\\\|\\(?![n\\])|(?<=[ \t])\x60[^\x60\n]{0,64}\x60){0,256}?[ \t]-p(?:[ \t]+|(?!\d+:\d)))|(?:\bsshpass[ \t]+-p[ \t]*))(?:(\\*)(["'])((?:(?!\3)[^\n\\]){1,256})(?=\2\3)|((?:[^\s"'\\()<>|;&,\][\x60]|\\(?![nrt"'\\])){1,256})|(\\*)(["'])(?![\s,;)}\]+])((?:(?!\7)[^\n\\"]){256}))`,
        "g",
      ),
      (
        m: string,
        head: string,
        bs = "",
        q = "",
        quoted?: string,
        word?: string,
        lbs = "",
        lq = "",
        long?: string,
      ) => {
        const name = /token|key/.test(head) ? "token" : "password";
        if (quoted !== undefined) return credentialValue(quoted, true, name) ? `${head}${bs}${q}${MASK}` : m;
        // A quoted value past the bound (not past a `"`, a JSON string's end): masked, and the rest of it.
        if (long !== undefined)
          return credentialValue(long, true, name)
            ? `${head}${lbs}${lq}${cutAt(long, 256, tail(`(?!${lq})[^\\n\\\\"]`))}`
            : m;
        // A sentence's stop after a bare word is prose's (`--token abc123def456.`); a `!` may be the
        // password's own.
        const value = word!.replace(/[.:?,]+$/, "");
        if (!optionValue(value, head)) return m;
        // Cut at the bound, a stop is the value's own: the rest of the value goes with it.
        if (word!.length >= 256) return `${head}${cutAt(word!, 256, OPTION_WORD_TAIL)}`;
        return `${head}${MASK}${word!.slice(value.length)}`;
      },
    ],
    [/AIza[0-9A-Za-z_-]{35}\b/g, MASK],
    [/eyJ[A-Za-z0-9_-]{8,1000}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, MASK],
    // A quoted value of several words (`PASSWORD="correct horse battery staple"`): whole, not its
    // first word.
    [
      new RegExp(
        String.raw`(?<![\w-]-)${SECRET_NAME}((?:${NAME_END}|${SET_TO})(\\*)(["'\`]))(?=(?:(?!\4)[^\n\\]){0,256}?[ \t])(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4)`,
        "gi",
      ),
      quotedValue,
    ],
    // A quoted value set to a secret's name in code (`SET_TO`): a hash entry of Ruby, PHP or Perl
    // (`'db_password' => 'hunter22'`, `:api_key => "…"`) or a subscript (`$c['password'] = '…'`),
    // all up to its closing quote, and not one an operator follows. A bare word, a call or an
    // expression there is code (`password => !x`, `$v['password'] = Hash::make($p)`,
    // `token => "Bearer " + token`). PHP's `define('DB_PASSWORD', '…')` too.
    [
      new RegExp(
        String.raw`(?<![\w-]-)${SECRET_NAME}(${SET_TO}(\\*)(["']))(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4${NO_OPERATOR})`,
        "gi",
      ),
      quotedValue,
    ],
    // PHP's `define('DB_PASSWORD', '…')` (wp-config.php): a constant's literal, masked whatever it
    // holds (WordPress's keys and salts hold `(`, `$`, `/` and spaces; `definedSecret`).
    [
      new RegExp(
        String.raw`(?<=\bdefine${GAP}\(${GAP}\\{0,16}["'])${SECRET_NAME}(\\{0,16}["']${GAP},${GAP}(\\*)(["']))(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4${GAP}\))`,
        "gi",
      ),
      (
        m: string,
        name: string,
        sep: string,
        _bs: string,
        q: string,
        value: string,
        at: number,
        text: string,
      ) =>
        secretKeyAt(name, at, text) !== undefined && definedSecret(value, q) ? `${name}${sep}${MASK}` : m,
    ],
    // An environment lookup's default, a secret kept in code all the same: Laravel's
    // `env('DB_PASSWORD', '…')`, Python's `os.getenv("API_KEY", "…")`, `os.environ.get(…)`,
    // `config("…", default="…")`, django-environ's `env.str(…)`, Ruby's `ENV.fetch("…", "…")`,
    // the WordPress image's `getenv_docker(…)`; over several lines, more arguments after it.
    [
      new RegExp(
        String.raw`${LOOKUP}${WS}\(${WS}\\{0,16}["']${SECRET_NAME}(\\{0,16}["']${WS},${WS}(?:default${GAP}=${GAP})?(\\*)(["']))(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4${WS}[,)])`,
        "gi",
      ),
      envDefault,
    ],
    // A default after reading an environment variable: `process.env.DB_PASSWORD || "…"`, `?? "…"`,
    // `process.env['…']`, `Bun.env.…`, `Deno.env.get('…')`, PHP's `getenv('…') ?: '…'` and
    // `$_ENV['…'] ?? '…'`, Ruby's `ENV['…'] || '…'` and `ENV.fetch('…') { '…' }`, Perl's
    // `$ENV{…} // '…'`, Python's `os.environ.get('…') or '…'`.
    [
      new RegExp(
        String.raw`${ENV_READ}${SECRET_NAME}((?:\\{0,16}["']?${WS}[\])}])?${WS}(?:\|\||\?\?|\?:|\/\/|[ \t]or[ \t]|\{)${WS}(\\*)(["'\`]))(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4)`,
        "gi",
      ),
      envDefault,
    ],
    // A shell's or a compose file's default (`${DB_PASSWORD:-…}`, `-`, `:=`, quoted too, compose's
    // `$$` in it) and Spring's (`${JWT_SECRET:…}`): a value, as in an environment file. A nested
    // expansion is judged alone. A variable's name holds no `-`: `${A-b}` is `A`'s default `b`.
    [
      /(?<=\$\{)([A-Za-z_][A-Za-z0-9_]{0,99})(:[-=]?|[-=])(\\{0,16}["']|)((?:[^\s"'\\}{$]|\$\$){1,256})(?=\3\})/g,
      (m: string, name: string, sep: string, q: string, value: string) =>
        secretName(name) && credentialValue(value, true, name) ? `${name}${sep}${q}${MASK}` : m,
    ],
    // A quoted argument list in text (`["mysql", "--password", "…"]`, `args: ['--api-key', '…']`):
    // the item after a secret's option, a word judged as the option's value; not a parameter's
    // name (click's `option('--password', 'password_')`) nor prose (a help text beside it).
    [
      new RegExp(
        String.raw`(?<=["'])--?(${SECRET_OPTION})(\\*["']${WS},${WS}(\\*)(["']))(?=((?:(?!\4)[^\n\\]){1,256}))\5(?=\3\4)`,
        "gi",
      ),
      (m: string, option: string, _sep: string, _bs: string, _q: string, value: string) =>
        (
          /\s/.test(value)
            ? credentialWords(value, "password")
            : optionValue(value, option) && !SNAKE.test(value) && !nameOf(value, option)
        )
          ? `${m.slice(0, m.length - value.length)}${MASK}`
          : m,
    ],
    // A YAML block scalar (`password: |` and the value on the indented line below): a value, never
    // code.
    [
      new RegExp(
        String.raw`${SECRET_NAME}(${QUOTE}[ \t]*:[ \t]*[|>][-+]?[ \t]*(?:\r?\n|\\{1,16}(?:r\\{1,16})?n)[ \t]{1,64})([^\s\\][^\n\\]{0,255})`,
        "gi",
      ),
      (m: string, name: string, sep: string, whole: string, at: number, text: string) => {
        const key = secretKeyAt(name, at, text);
        if (key === undefined) return m;
        let line = whole;
        if (/\\/.test(sep)) line = line.replace(/\\*".*$/, "");
        const value = line.trimEnd();
        const secret = /\s/.test(value) ? credentialWords(value, key) : credentialValue(value, true, key);
        if (!secret) return m;
        // The whole line is the value and was cut at the bound: the rest of the line goes too.
        if (line === whole && whole.length >= 256)
          return `${name}${sep}${cutAt(whole, 256, /\\/.test(sep) ? YAML_ENCODED_TAIL : YAML_TAIL)}`;
        return `${name}${sep}${MASK}${whole.slice(value.length)}`;
      },
    ],
    // An environment entry as Kubernetes (`- name: DB_PASSWORD` then `value: …`) or an ECS task
    // definition (`{"name": "API_TOKEN", "value": "…"}`) writes it: the name is a value there.
    [
      new RegExp(
        String.raw`(${QUOTE}name${QUOTE}[ \t]*:[ \t]*${QUOTE})([A-Za-z_][\w-]{0,99})(${QUOTE}[ \t]*,?(?:[ \t]|\r?\n|\\{1,16}[rn]){0,40}${QUOTE}value${QUOTE}[ \t]*:[ \t]*)(?:(\\*)(["'])((?:(?!\5)[^\n\\]){1,256})(?=\4\5)|${QUOTE}${VALUE})`,
        "g",
      ),
      (
        m: string,
        head: string,
        key: string,
        mid: string,
        bs = "",
        q = "",
        quoted?: string,
        word?: string,
      ) => {
        if (!secretName(key)) return m;
        // A quoted value is all up to its closing quote (`value: "correct horse battery staple"`).
        const value = quoted ?? word!;
        const secret =
          quoted === undefined ? credentialValue(value, envName(key), key) : credentialWords(value, key);
        if (!secret) return m;
        return quoted === undefined
          ? m.slice(0, m.length - value.length) + MASK
          : `${head}${key}${mid}${bs}${q}${MASK}`;
      },
    ],
    // A list under a secret name (`"passwords": ["…", "…"]`, `'passwords' => [...]`): each quoted
    // item on its terms.
    [
      new RegExp(String.raw`${SECRET_NAME}(${QUOTE}[ \t]*(?:[:=]|=>)[ \t]*\[)([^\]\n]{1,1000})(?=\])`, "gi"),
      (m: string, name: string, sep: string, items: string, at: number, text: string) => {
        const key = secretKeyAt(name, at, text);
        if (key === undefined) return m;
        const env = envName(key);
        const masked = items.replace(/(\\*["'])([^"'\\\n]+)\1/g, (item, q: string, value: string) =>
          credentialValue(value, env, key) ? `${q}${MASK}${q}` : item,
        );
        return `${name}${sep}${masked}`;
      },
    ],
    // `name=value`, `"name": "value"`, `name: value` (YAML, headers) with a secret-sounding name,
    // the value on the name's line: `auth:` over a YAML block or an empty `GITHUB_TOKEN=` keeps
    // the line after it (a VALUE stops at an escaped `\n` already).
    [QUERY_RE, queryPair],
    [
      // Not a query parameter's name, nor a part of one (`?x-api-key=…&page=2`: the query rule's),
      // nor a shell expansion's (`${API_KEY:?must be set}`: its default is the rule above's).
      new RegExp(
        String.raw`(?:(?<![?&][\w-]{0,100})|(?<=&&))(?<!\$\{)${SECRET_NAME}(${NAME_END}${QUOTE})${PAIR_VALUE}`,
        "gi",
      ),
      (m: string, name: string, sep: string, value: string, at: number, text: string) => {
        // The first word of a quoted value of several: the rule for those judged it whole.
        if (severalWords(sep, value, text, at, at + m.length)) return m;
        const key = secretKeyAt(name, at, text);
        // Kept: the query parameters after it (`page_token=x&refresh_token=…`) are judged on their own.
        if (key === undefined) return `${name}${sep}${value.replace(QUERY_RE, queryPair as never)}`;
        const envFile = envName(key) && sep.trim().startsWith("=");
        return credentialValue(value, envFile, key)
          ? `${name}${sep}${cutAt(value, 1024, PAIR_TAIL)}`
          : `${name}${sep}${value.replace(QUERY_RE, queryPair as never)}`;
      },
    ],
  ] as [RegExp, Replacer][]
).map(([re, replacement]) => [fromStart(re), replacement]);
/** `text.replace(re, replacement)`, but a match whose value was cut (`cutAt`) also takes the rest of that value. */
function replaceCutting(text: string, re: RegExp, replacement: Replacer): string {
  if (typeof replacement === "string") return text.replace(re, replacement);
  let out = "";
  let from = 0;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    cutTail = undefined;
    const r = replacement(m[0], ...(m.slice(1) as string[]), m.index as never, text as never);
    let end = m.index + m[0].length;
    const rest = takeCut();
    if (rest) {
      rest.lastIndex = end;
      end += rest.exec(text)?.[0].length ?? 0;
    }
    out += text.slice(from, m.index) + r;
    from = end;
    re.lastIndex = end === m.index ? end + 1 : end;
  }
  cutTail = undefined;
  return out + text.slice(from);
}

function maskPatterns(text: string): string {
  let out = text;
  for (const [re, replacement] of PATTERNS) out = replaceCutting(out, re, replacement);
  return out;
}

/** Mask secrets in one string. */
export function redactText(text: string): string {
  if (BLOB.test(text)) return text;
  const out = text.replace(KEY_BLOCK, MASK);
  let masked = "";
  let from = 0;
  for (const m of out.matchAll(DATA_URL)) {
    masked += maskPatterns(out.slice(from, m.index)) + m[0];
    from = m.index + m[0].length;
  }
  return masked + maskPatterns(out.slice(from));
}

/**
 * Text rather than a credential under a secret-sounding key: words with spaces between them (a
 * validation message under `password`), a model's token after a space (logprobs' `{"token": "
 * world!"}`) or a word with closing punctuation (`"Hello,"`) but under a password's or a secret's
 * name, where `Hunter!` is a password. Under an environment variable's upper-case name it is still
 * a value: a passphrase may have spaces.
 */
const prose = (value: string, key: string) =>
  /^\s|\S\s+\S/.test(value) || (/^[A-Za-z]+[.,!?:;)]+$/.test(value) && !passwordName(key));

/**
 * Mask secrets in every string inside `value` (objects and arrays are copied, never mutated). A
 * string under a secret-sounding key (`{"password": "…"}`, `headers: {"X-Api-Key": "…"}`,
 * `env: {DB_PASSWORD: "…"}`) is masked whole when it looks like a credential, as the same pair
 * written as text would be, and is searched as any string when it is text; so is each string of
 * a list under such a key, and the `value` of an environment entry `{name: "DB_PASSWORD", value}`.
 */
export function redactDeep<T>(value: T): T {
  if (typeof value === "string") return redactText(value) as T;
  if (Array.isArray(value)) return redactList(value) as T;
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // An MCP server's `args`, run by its `command`.
      const command = k === "args" ? (value as { command?: unknown }).command : undefined;
      out[k] = Array.isArray(v)
        ? redactList(v, k, typeof command === "string" ? command : undefined)
        : secretUnder(k, v)
          ? MASK
          : redactDeep(v);
    }
    // An environment entry as Kubernetes and ECS write it: `{name: "DB_PASSWORD", value: "…"}`.
    const { name, value: held } = value as Record<string, unknown>;
    if (typeof name === "string" && secretUnder(name, held)) out.value = MASK;
    return out as T;
  }
  return value;
}

/**
 * A list's items: each masked on the terms of the key it is under (`passwords: [...]`), if any, and
 * as an argument list's (`argument`), `command` before them (an MCP server's `command` and `args`).
 */
function redactList(items: unknown[], key?: string, command?: string): unknown[] {
  const seen = newCommands();
  let before: unknown;
  if (command !== undefined) {
    notice(seen, command, undefined);
    before = command;
  }
  const out: unknown[] = [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const arg = typeof item === "string" ? argument(seen, before, item) : undefined;
    out.push(key !== undefined && secretUnder(key, item) ? MASK : (arg ?? redactDeep(item)));
    if (typeof item === "string") notice(seen, item, before);
    before = item;
  }
  return out;
}

/** Whether `value`, a string under the key `key`, is a credential rather than code or text. */
function secretUnder(key: string, value: unknown): boolean {
  if (typeof value === "number" && passwordName(key) && secretName(key)) return String(value).length >= 6;
  if (typeof value !== "string" || !secretName(key)) return false;
  // An upper-case key is an environment variable's: a value, never code or text.
  const env = envName(key);
  return (env || !prose(value, key)) && credentialValue(value.trim(), env, key);
}
