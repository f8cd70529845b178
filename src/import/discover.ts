/**
 * Finding transcripts: each agent's default location, walking a folder, and telling formats apart
 * by their first line (so `import auto` works per file). Credential files are recognised by name
 * and never opened — not even to sniff them.
 */
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { mayStillStream } from "./live.ts";
import { type Agent, GEMINI_MESSAGE_TYPES, type ImportWarning } from "./types.ts";

/** How a source is read. */
export type SourceKind = "jsonl" | "document" | "opencode-db" | "opencode-rows";

export interface Candidate {
  agent: Agent;
  kind: SourceKind;
  path: string;
  /** A file's size and mtime when the walk found it (`run.ts` compares them with the last pass's). */
  size?: number;
  mtimeMs?: number;
}

/** Files that hold credentials: skipped by name, never read. */
const CREDENTIAL_FILES = new Set([
  ".credentials.json",
  "credentials.json",
  "auth.json",
  "oauth_creds.json",
  ".env",
  // Claude Code's settings beside `~/.claude`: they hold `primaryApiKey`.
  ".claude.json",
  // MCP server configurations (`~/.mcp.json`, a project's, `~/.cursor/mcp.json`): their `env`
  // holds the servers' tokens.
  "mcp.json",
  ".mcp.json",
]);
/**
 * Credential files known by their folder, where the name alone says nothing: Docker's registry
 * logins, GitHub Copilot's OAuth tokens, the Firebase CLI's login (`~/.config/configstore`), and
 * Claude Code's and Gemini CLI's settings (an `env` with API keys, an `apiKeyHelper`). Transcripts
 * are further down (`~/.claude/projects`, `~/.gemini/tmp`), never beside them.
 */
const CREDENTIAL_IN_FOLDER = new Map([
  [".docker", ["config.json"]],
  ["github-copilot", ["apps.json", "hosts.json"]],
  ["configstore", ["firebase-tools.json"]],
  [".claude", ["settings.json", "settings.local.json"]],
  [".gemini", ["settings.json"]],
]);
/** Folders that never hold transcripts (large, or copies of what transcripts already hold). */
const SKIP_DIRS = new Set([
  ".git",
  "node_modules",
  "tool-results",
  "file-history",
  "snapshot",
  "log",
  "bin",
  "debug",
]);
const ROW_FILES = ["session.jsonl", "message.jsonl", "part.jsonl"];

/**
 * JSON documents whose name says "credentials", whatever the agent: `*secret*`, `*oauth*`, an
 * `auth` word (OpenCode keeps MCP servers' OAuth tokens in `mcp-auth.json` beside its data) or
 * `token(s)`, the word first or after `-`, `_` or `.` (`auth copy.json` is a copy; `fix auth
 * flow.json`, an OpenCode export a user named, is not). Only `.json`: no agent names a transcript
 * so, while a user may well call a `.jsonl` transcript `secret-project.jsonl`.
 */
const CREDENTIAL_JSON = /(secrets?|oauth|(^|[-_.])auth|(^|[-_.])tokens?)([-_. ][^/]*)?\.json$/i;
/**
 * The same words in camelCase, after a word that makes them a credential: Azure CLI's
 * `accessTokens.json`, `mcpAuth.json`. Any camelCase word holding them is not (`maxTokens-sweep`,
 * `designTokens`, `refreshTokenFix`, `jwtAuth`: exports a user named).
 */
const CREDENTIAL_JSON_CAMEL =
  /^(?:access|refresh|id|api|auth|oauth|mcp|bearer)(?:Auth|Tokens?)(?:[-_. ][^/]*)?\.json$/;

/**
 * Google Cloud service-account keys, a private key each: `service-account.json`,
 * `serviceAccountKey.json`, Firebase's `<project>-firebase-adminsdk-<id>.json`.
 */
const SERVICE_ACCOUNT_JSON = /(service[-_ ]?account|firebase-adminsdk)[^/]*\.json$/i;

/**
 * Claude Code's settings in the folder `$CLAUDE_CONFIG_DIR` names, whatever it is called (a `~` in
 * it is the home; both sides are compared by their real paths, links followed).
 */
const inClaudeConfigDir = (path: string, name: string) => {
  const dir = process.env.CLAUDE_CONFIG_DIR;
  if (!dir || (name !== "settings.json" && name !== "settings.local.json")) return false;
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return resolve(p);
    }
  };
  return real(dirname(path)) === real(dir.replace(/^~(?=$|\/)/, homedir()));
};

export const isCredentialFile = (path: string) => {
  const name = basename(path);
  return (
    CREDENTIAL_FILES.has(name) ||
    /credential/i.test(name) ||
    CREDENTIAL_JSON.test(name) ||
    CREDENTIAL_JSON_CAMEL.test(name) ||
    SERVICE_ACCOUNT_JSON.test(name) ||
    CREDENTIAL_IN_FOLDER.get(basename(dirname(path)))?.includes(name) === true ||
    inClaudeConfigDir(path, name)
  );
};

/**
 * Whether a link, or a link it leads to, points at a credential file under another name
 * (`<uuid>.jsonl -> ../../.credentials.json`, `rollout-….jsonl -> ~/.codex/auth.json`): each hop's
 * target is judged by name, never opened.
 */
function linksToCredential(path: string): boolean {
  let at = path;
  for (let hop = 0; hop < 40 && lstatSync(at).isSymbolicLink(); hop++) {
    at = resolve(dirname(at), readlinkSync(at));
    if (isCredentialFile(at)) return true;
  }
  return false;
}

/** Each agent's own default location (overridable with paths on the command line). */
export function defaultRoots(agent: Agent, env: Record<string, string | undefined> = process.env): string[] {
  const home = env.HOME || homedir();
  switch (agent) {
    case "claude":
      return [join(env.CLAUDE_CONFIG_DIR || join(home, ".claude"), "projects")];
    case "codex": {
      const codex = env.CODEX_HOME || join(home, ".codex");
      return [join(codex, "sessions"), join(codex, "archived_sessions")];
    }
    case "opencode":
      return [join(env.XDG_DATA_HOME || join(home, ".local", "share"), "opencode")];
    case "gemini":
      // Gemini CLI's own override: `$GEMINI_CLI_HOME` replaces the home folder `.gemini` is in.
      return [join(env.GEMINI_CLI_HOME || home, ".gemini", "tmp")];
  }
}

/** The buffer the sniffing reads go to, kept: fresh memory costs a page fault per 4 KiB, and an
 * import over thousands of small transcripts sniffs each one. */
let scratch = Buffer.allocUnsafe(0);

/**
 * The file's text from its start up to its `lines`-th newline (left out), or its first `limit`
 * bytes. It reads 16 KiB, then twice as much each time it needs more: most files tell their agent
 * in their first line, and a look-ahead past it reads only as far as its lines go.
 */
function readHead(path: string, limit: number, lines: number): string {
  const fd = openSync(path, "r");
  try {
    let have = 0;
    let newlines = 0;
    for (let size = Math.min(limit, 16 * 1024); ; size = Math.min(limit, size * 2)) {
      if (scratch.length < size) {
        const bigger = Buffer.allocUnsafe(size);
        scratch.copy(bigger, 0, 0, have);
        scratch = bigger;
      }
      const n = readSync(fd, scratch, have, size - have, have);
      const read = scratch.subarray(have, have + n);
      for (let nl = read.indexOf(10); nl !== -1; nl = read.indexOf(10, nl + 1))
        if (++newlines === lines) return scratch.toString("utf8", 0, have + nl);
      have += n;
      if (n === 0 || have >= limit) return scratch.toString("utf8", 0, have);
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the file holds a newline in its first 256 KiB (a line written whole). An empty file has
 * none yet while it may still be written (an agent may make it before it writes the first line);
 * one left empty for `STREAM_WAIT_MS` never will.
 */
function hasCompleteLine(path: string): boolean {
  const head = readHead(path, 256 * 1024, 1);
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st || st.size === 0) return !st || !mayStillStream(st.mtimeMs);
  return Buffer.byteLength(head) < st.size;
}

/** A JSONL file's first line (up to 256 KiB of it). */
const firstLine = (path: string) => readHead(path, 256 * 1024, 1);

/** Which agent wrote this file, from its name and first line; undefined when none did. */
export function detectFile(path: string): Candidate | undefined {
  const name = basename(path);
  if (name === "opencode.db") return { agent: "opencode", kind: "opencode-db", path };
  if (!name.endsWith(".jsonl") && !name.endsWith(".json")) return undefined;
  if (name.endsWith(".json")) {
    // Whole documents: peek at the top-level keys without parsing the whole file twice.
    const start = readHead(path, 4096, Number.POSITIVE_INFINITY);
    if (/"sessionId"\s*:/.test(start) && /"projectHash"\s*:/.test(start))
      return { agent: "gemini", kind: "document", path };
    if (/"(session_row|info)"\s*:/.test(start) || /"messages"\s*:\s*\[\s*\{\s*"info"/.test(start)) {
      return { agent: "opencode", kind: "document", path };
    }
    // A legacy Gemini recording that lost its `projectHash` is still one where Gemini keeps them.
    if (inGeminiChats(path) && /"(sessionId|messages)"\s*:/.test(start))
      return { agent: "gemini", kind: "document", path };
    return undefined;
  }
  const first = firstLine(path);
  const found = identify(first, path);
  if (found) return found;
  // A first line that tells nothing (damaged, or of a kind the others are not): the next few.
  const next = readHead(path, LOOK_AHEAD_BYTES, 1 + LOOK_AHEAD_LINES)
    .split("\n")
    .slice(1, 1 + LOOK_AHEAD_LINES);
  for (const line of next) {
    const later = identify(line, path);
    if (later) return later;
  }
  // Only Gemini's metadata line names its agent: without it (torn, lost), its messages and updates
  // do, in the folder Gemini keeps them in.
  if (inGeminiChats(path) && [first, ...next].some((line) => isGeminiRecord(parseLine(line))))
    return { agent: "gemini", kind: "document", path };
  return name.startsWith("rollout-") ? { agent: "codex", kind: "jsonl", path } : undefined;
}

/** How far past an unhelpful first line format detection looks. */
const LOOK_AHEAD_LINES = 8;
const LOOK_AHEAD_BYTES = 1024 * 1024;

/** One JSONL line's object; undefined when it is not one. */
function parseLine(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line.trim()) as unknown;
    return value && typeof value === "object" ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The agent one JSONL line says wrote its file; undefined when it does not say. */
function identify(line: string, path: string): Candidate | undefined {
  const head = parseLine(line);
  if (!head) return undefined;
  if ("payload" in head && typeof head.type === "string") return { agent: "codex", kind: "jsonl", path };
  if (typeof head.sessionId === "string" && "projectHash" in head)
    return { agent: "gemini", kind: "document", path };
  if (
    typeof head.type === "string" &&
    ("uuid" in head || "sessionId" in head || "leafUuid" in head || "messageId" in head)
  ) {
    return { agent: "claude", kind: "jsonl", path };
  }
  return undefined;
}

/**
 * Where Gemini CLI keeps a chat: `chats/session-<time>-<id>.json[l]`, or a subagent's
 * `chats/<parent id>/<id>.jsonl`. No other agent writes there, so a recording found there is
 * told by its records when its metadata does not tell it.
 */
function inGeminiChats(path: string): boolean {
  const dir = dirname(path);
  if (basename(dir) === "chats") return /^session-.+\.jsonl?$/.test(basename(path));
  return basename(dirname(dir)) === "chats" && path.endsWith(".jsonl");
}

/** A line of a Gemini recording: its metadata (even without `projectHash`), a message, an update. */
const isGeminiRecord = (r: Record<string, unknown> | undefined) =>
  r !== undefined &&
  (typeof r.sessionId === "string" ||
    (typeof r.id === "string" && GEMINI_MESSAGE_TYPES.has(String(r.type))) ||
    (typeof r.$set === "object" && r.$set !== null) ||
    typeof r.$rewindTo === "string");

/**
 * What an earlier pass already told of a file that has not changed since (same size and mtime):
 * its candidate, so a watch pass does not read the head of every transcript again to tell its
 * format (~33 ms a pass for 300 files).
 */
export type KnownFiles = (path: string, size: number, mtimeMs: number) => Candidate | undefined;

/** What a walk needs from the file system; tests replace a part to make it fail. */
export interface WalkFs {
  readdir(path: string): string[];
  detect(path: string): Candidate | undefined;
}
const REAL_FS: WalkFs = { readdir: (path) => readdirSync(path), detect: detectFile };

/** An error's reason, with the path it names left out (the warning names the path). */
const reasonOf = (error: unknown) => {
  const e = error as NodeJS.ErrnoException;
  return (e.message ?? String(error)).replace(/^[A-Z]+: /, "").replace(/, \w+( '.*'| [A-Z]+)?$/, "");
};

/**
 * What a walk left out as not the importer's: paths the user named (each with its warning), and, by
 * the agent that wrote them, the files met inside a folder (a hint when the folder had none of the
 * importer's own).
 */
export interface LeftOut {
  named: number;
  /** Paths named on the command line that could not be opened or listed (each with its warning). */
  unreadable: number;
  byAgent: Partial<Record<Agent, number>>;
}

/**
 * Walk `root` (a file or a folder) and return the transcripts in it, for `agent` or any. A folder
 * that cannot be listed or a file that cannot be read (no permission, gone since it was listed) is
 * a warning, and the rest is still found. Symlinked folders are followed, each real folder and
 * file once: a link back up (`x/up -> ..`) would otherwise walk the same tree until ELOOP.
 */
export function discover(
  root: string,
  agent: Agent | "auto",
  warnings: ImportWarning[],
  fs: WalkFs = REAL_FS,
  known?: KnownFiles,
  left: LeftOut = { named: 0, unreadable: 0, byAgent: {} },
): Candidate[] {
  const out: Candidate[] = [];
  const seen = new Set<string>();
  // A path that cannot be opened is a warning; one the user named is also the command's failure
  // (it was a warning alone, and the import exited 0 with nothing read).
  const cannot = (what: "read" | "list", path: string, error: unknown, explicit: boolean) => {
    warnings.push({ file: path, message: `cannot ${what}: ${reasonOf(error)}` });
    if (explicit) left.unreadable++;
  };
  /** `realParent`: the real path of the folder `path` was listed in (none for the root). */
  const visit = (path: string, explicit: boolean, realParent?: string) => {
    let st: ReturnType<typeof statSync>;
    let real: string;
    let credential: boolean;
    try {
      // An entry of a listed folder that is no link is where its folder really is: one `lstat`, not a
      // `stat` and a `realpath` (a watch pass over 3,000 transcripts spent most of its ~90 ms there).
      st = lstatSync(path);
      const link = st.isSymbolicLink();
      if (realParent === undefined || link) {
        st = statSync(path);
        real = realpathSync(path);
      } else real = join(realParent, basename(path));
      // A file is judged by its name, a link by what it points at too, and any file by its real
      // folder (`~/.docker`). A folder is not: a project's called `credential-service` holds
      // transcripts (a Claude project folder of that name was skipped whole). Looked at, a file is
      // not opened.
      credential =
        !st.isDirectory() &&
        (isCredentialFile(path) ||
          (link && linksToCredential(path)) ||
          (real !== path && isCredentialFile(real)));
    } catch (error) {
      cannot("read", path, error, explicit);
      return;
    }
    if (credential) {
      if (explicit) {
        // Named on the command line: the command's mistake, as a path of another agent's is.
        left.named++;
        warnings.push({ file: path, message: "credential file: not read" });
      }
      return;
    }
    if (seen.has(real)) return;
    seen.add(real);
    if (st.isDirectory()) {
      if (ROW_FILES.every((f) => existsSync(join(path, f)))) {
        // An OpenCode row dump is OpenCode's (another agent's import skips it, as it does a file).
        if (agent === "auto" || agent === "opencode")
          out.push({ agent: "opencode", kind: "opencode-rows", path });
        else if (explicit) {
          left.named++;
          warnings.push({ file: path, message: `looks like an opencode row dump, not ${agent}: skipped` });
        } else left.byAgent.opencode = (left.byAgent.opencode ?? 0) + 1;
        return;
      }
      if (!explicit && SKIP_DIRS.has(basename(path))) return;
      let entries: string[];
      try {
        entries = fs.readdir(path);
      } catch (error) {
        cannot("list", path, error, explicit);
        return;
      }
      for (const entry of entries.sort()) visit(join(path, entry), false, real);
      return;
    }
    if (!st.isFile()) {
      // A FIFO, a socket, a device: never a transcript (and opening a FIFO would wait for ever).
      if (explicit) {
        left.named++;
        warnings.push({ file: path, message: "not a file or a folder: not read" });
      }
      return;
    }
    let found: Candidate | undefined = known?.(path, st.size, st.mtimeMs);
    try {
      found ??= fs.detect(path);
    } catch (error) {
      cannot("read", path, error, explicit);
      return;
    }
    if (!found && explicit && path.endsWith(".jsonl") && !hasCompleteLine(path)) {
      // Its first line is still being written, or not yet begun (a subagent's `agent-<id>.jsonl`
      // named as it starts):
      // nothing tells its agent yet. Named for one agent, it is that agent's (the read waits for the
      // line, as for any torn last line); for `auto`, it is read once it tells.
      if (agent !== "auto") found = { agent, kind: "jsonl", path };
      else {
        warnings.push({
          file: path,
          message: "its first line is not written whole yet: not read (import again)",
        });
        return;
      }
    }
    if (!found) {
      if (explicit) {
        left.named++;
        warnings.push({ file: path, message: "not a transcript this importer knows" });
      }
      return;
    }
    if (agent !== "auto" && found.agent !== agent) {
      if (explicit) {
        left.named++;
        warnings.push({
          file: path,
          message: `looks like ${found.agent === "opencode" ? "an" : "a"} ${found.agent} transcript, not ${agent}: skipped`,
        });
      } else left.byAgent[found.agent] = (left.byAgent[found.agent] ?? 0) + 1;
      return;
    }
    out.push({ ...found, size: st.size, mtimeMs: st.mtimeMs });
  };
  visit(root, true);
  return out;
}
