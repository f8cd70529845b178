/**
 * A command's argument list (`["mysql", "--password", "…"]`, an MCP server's `command` and
 * `args`), for `--redact` (`redact.ts`): which item is a secret's value by what came before it —
 * the command that runs (sshpass, `docker login`, curl, a mysql client) and the option before it.
 */
import { MASK, MYSQL_WORD, optionValue, SECRET_OPTION_WORD } from "./_redact-options.ts";

/**
 * What an argument list runs, read so far: sshpass (until the command it runs begins: its own
 * options hold the password, not `ssh -p2222`'s), `docker … login`, curl, a mysql client.
 */
export const newCommands = () => ({
  sshpass: false,
  docker: false,
  dockerVerb: false,
  dockerLogin: false,
  curl: false,
  mysql: false,
  /** Items since a word that runs the next command (`sudo`, `exec`, `ssh`, `--`): -1 for none. */
  sinceRunner: -1,
  /** That word (`--` keeps the one before). */
  runner: undefined as string | undefined,
});
export type Commands = ReturnType<typeof newCommands>;
/** sshpass's options that take a value (`-p PASS`, `-f FILE`, `-d FD`, `-P PROMPT`). */
const SSHPASS_VALUE = new Set(["-p", "-f", "-d", "-P"]);
/**
 * Words that run a command after them, options and their values between (`sudo -u pg mysql`,
 * `env A=1 mysql`, `ssh -i key host mysql`, `kubectl exec pod -- mysql`), within `RUNNER_REACH`
 * items, with the short options each takes a value for (`sudo -u mysql cp -pr`: `mysql` is a user;
 * `sudo -i mysql`: a command). `run` and `exec` run one after a container tool only
 * (`docker run --rm mysql:8 mysql`, `docker exec -it db mysql`; not `npm run mysql`), where long
 * options take a value but for a few flags.
 */
const RUNNERS = new Map<string, ReadonlySet<string>>(
  (
    [
      ["sudo", "-u -g -h -C -D -U -p -r -t -T"],
      ["doas", "-u -C"],
      ["su", "-c -s -g -G"],
      ["env", "-u -C -S"],
      ["nice", "-n"],
      ["nohup", ""],
      ["time", "-f -o"],
      ["timeout", "-s -k"],
      ["xargs", "-I -P -n -s -L -E -d -a"],
      ["ionice", "-c -n -p"],
      ["stdbuf", "-i -o -e"],
      ["ssh", "-i -p -l -o -F -J -L -R -D -b -c -E -e -I -m -O -Q -S -W -w"],
      ["watch", "-n -d"],
      ["chroot", ""],
      ["npx", "-p -c"],
      ["uvx", "--from --with"],
      ["parallel", "-j -S"],
      ["strace", "-e -o -p -s -u"],
      ["nsenter", "-t -S -G"],
      ["systemd-run", "-p -u"],
      ["--", ""],
    ] as const
  ).map(([runner, options]) => [runner, new Set(options.split(" "))]),
);
const CONTAINER_TOOLS = new Set(["docker", "podman", "nerdctl", "kubectl", "flatpak", "crictl"]);
/** Container tools whose `login` takes a password with `-p` as docker's does. */
const LOGIN_TOOLS = new Set(["docker", "podman", "nerdctl"]);
const CONTAINER_RUN: ReadonlySet<string> = new Set("-u -e -v -w -p -l -h -m -c --".split(" "));
const RUNNER_REACH = 12;
/** Long options that take no value after a container tool's `run`/`exec` (`--rm`, `--privileged`). */
const LONG_FLAGS = new Set(
  "--rm --preserve-env --login --interactive --tty --init --privileged --detach".split(" "),
);
/** Whether `option`, within what `runner` runs, takes the next item as its value: it is no command. */
function takesValue(option: unknown, runner: string | undefined): boolean {
  if (typeof option !== "string" || !option.startsWith("-") || option === "--" || option.includes("="))
    return false;
  const container = runner === "run" || runner === "exec";
  if (option.startsWith("--")) return container && !LONG_FLAGS.has(option);
  const values = container ? CONTAINER_RUN : runner !== undefined ? RUNNERS.get(runner) : undefined;
  return values?.has(option) === true;
}
/** A command's name as it is run: bare, `./`, or a `bin` folder's (`/usr/bin/mysql`); not a path or a URL. */
const COMMAND_WORD = /^(?:\.\/|(?:\/[\w.-]+)*\/s?bin\/)?([\w.-]+)$/;
/** docker's verbs other than `login` (`docker run --name login` names a container). */
const DOCKER_VERBS = new Set(
  "run exec build create start push pull tag compose network volume container image logs stop rm cp inspect commit kill restart attach".split(
    " ",
  ),
);

/** Note `word`, the item after `before`: a command where one begins (first, or after a runner). */
export function notice(seen: Commands, word: string, before: unknown): void {
  if (seen.sshpass && !word.startsWith("-") && !(typeof before === "string" && SSHPASS_VALUE.has(before)))
    seen.sshpass = false;
  const reach = seen.sinceRunner >= 0 && seen.sinceRunner < RUNNER_REACH;
  const value = takesValue(before, seen.runner);
  const commandAt = before === undefined || (reach && !value);
  if (seen.sinceRunner >= 0) seen.sinceRunner++;
  const name = COMMAND_WORD.exec(word)?.[1];
  const beforeName = typeof before === "string" ? COMMAND_WORD.exec(before)?.[1] : undefined;
  const runs =
    name !== undefined &&
    (before === undefined || !value) &&
    (RUNNERS.has(name) || ((name === "run" || name === "exec") && CONTAINER_TOOLS.has(beforeName ?? "")));
  if (runs || word === "--") {
    seen.sinceRunner = 0;
    if (word !== "--") seen.runner = name;
  }
  if (seen.docker && !word.startsWith("-")) {
    if (word === "login" && !seen.dockerVerb) seen.dockerLogin = true;
    else if (DOCKER_VERBS.has(word)) seen.dockerVerb = true;
  }
  if (!commandAt || name === undefined) return;
  if (name === "sshpass") seen.sshpass = true;
  else if (LOGIN_TOOLS.has(name)) seen.docker = true;
  else if (name === "curl" || name === "curl.exe") seen.curl = true;
  else if (MYSQL_COMMAND.test(name)) seen.mysql = true;
}

/** What `-p…` of find is (`-print`, `-prune`, `-perm`, `-path`): no password. */
const FIND_OPTION = /^-(?:print0?|printf|prune|perm|path)$/;
/** A value that names where a password comes from (`-p"$PW"`, `` -p`cat pw` ``, `-p[password]`). */
const NAMED = /^["'`]?[$%{<`[]/;

/**
 * An item of a command's argument list that is a secret's value by what came before it, as the
 * same words in text are: after a secret's option (`SECRET_OPTION`), after `-p` of `sshpass` and
 * `docker login` (or joined, `-pS3cret`, and mysql's own `-p…`), curl's `-u`/`--user` `name:…`.
 * The item is the whole value (no shell splits it), masked whole. Undefined when it is none: the
 * item is redacted on its own.
 */
export function argument(seen: Commands, before: unknown, item: string): string | undefined {
  if (item.startsWith("-")) {
    const joined = /^-p(.+)$/.exec(item)?.[1];
    if (joined !== undefined && (seen.mysql || seen.sshpass || seen.dockerLogin) && !FIND_OPTION.test(item))
      return NAMED.test(joined) ? undefined : `-p${MASK}`;
    const user = /^(?:-u|--user=)([^:]*:)(.+)$/.exec(item);
    if (user && seen.curl)
      return NAMED.test(user[2]!) ? undefined : `${item.slice(0, item.length - user[2]!.length)}${MASK}`;
    return undefined;
  }
  if (typeof before !== "string") return undefined;
  if (SECRET_OPTION_WORD.test(before) || (before === "-p" && (seen.sshpass || seen.dockerLogin)))
    return optionValue(item, before) ? MASK : undefined;
  if ((before === "-u" || before === "--user") && seen.curl) {
    const colon = item.indexOf(":");
    const pass = colon >= 0 ? item.slice(colon + 1) : "";
    return pass && !NAMED.test(pass) ? `${item.slice(0, colon + 1)}${MASK}` : undefined;
  }
  return undefined;
}

const MYSQL_COMMAND = new RegExp(`^${MYSQL_WORD}$`);
