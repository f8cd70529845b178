/** `freecode doctor`: what this machine has, where data goes, and whether each storage adapter starts. */
import { accessSync, constants, existsSync, statSync } from "node:fs";
import { arch, platform, release } from "node:os";
import { dirname } from "node:path";
import { FreecodeError } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import { rolloutDecision } from "../../rollout/recorder.ts";
import { apiKeyFromEnv } from "../../session/_chat-completion.ts";
import { probeAdapters } from "../../storage/probe.ts";
import { openStore } from "../../storage/select.ts";
import { storeHasData } from "../../storage/store-file.ts";
import { danglingLinkTarget } from "../../util/dangling-link.ts";
import { VERSION } from "../../version.ts";
import { command } from "../_command.ts";

/**
 * Why `home` cannot hold freecode's data, or undefined when it can: it (or, while it does not exist
 * yet, the nearest folder it would be created in) must be a directory we may write into.
 */
export function homeProblem(home: string): string | undefined {
  let dir = home;
  while (!existsSync(dir) && dirname(dir) !== dir) dir = dirname(dir);
  const what = dir === home ? "the home" : `${dir} (where the home would be created)`;
  try {
    if (!statSync(dir).isDirectory()) return `${what} is a file, not a directory`;
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    const code = (error as { code?: string }).code;
    return `${what} is not writable${code ? ` (${code})` : ""}`;
  }
  // The folders freecode writes into, where they exist: a file in one's place failed every write
  // (ENOTDIR) while doctor said the home was fine.
  const paths = homePaths(home);
  const folders = [
    paths.sessions,
    dirname(paths.rollout),
    paths.rollout,
    paths.state,
    paths.remote,
    paths.snapshots,
  ];
  for (const sub of folders) {
    // A link to nowhere is no folder to write in either (lstat sees the link, stat its target).
    const target = danglingLinkTarget(sub);
    if (target !== undefined)
      return `${sub} is a link to ${target}, which leads to no folder (missing, or a loop of links)`;
    const st = statSync(sub, { throwIfNoEntry: false });
    if (st && !st.isDirectory()) return `${sub} is a file, not a directory`;
  }
  return undefined;
}

/**
 * The store that would be used (`--store`, FREECODE_STORE, config.json), or undefined when only a
 * bad config.json hides it (reported as such). An unknown `--store` or FREECODE_STORE is a usage
 * error, exit 2, as for every command.
 */
function storeOf(ctx: { storeName(): string | undefined }): string | undefined {
  try {
    return ctx.storeName() ?? "files";
  } catch (error) {
    if (error instanceof FreecodeError && error.code === "usage") throw error;
    return undefined;
  }
}

/**
 * Why the store in use cannot be read, or undefined when it can (or holds nothing yet: it is not
 * made here). One cheap read through the adapter: a damaged database, an unreadable journal.
 */
async function storeProblem(name: string, home: string): Promise<string | undefined> {
  if (!(await storeHasData(name, home))) return undefined;
  try {
    const { adapter } = await openStore(name, { home });
    try {
      await adapter.listSessions({ limit: 1 });
    } finally {
      await adapter.close();
    }
  } catch (error) {
    return error instanceof FreecodeError ? error.oneLine : (error as Error).message;
  }
  return undefined;
}

export default command({
  meta: { name: "doctor", description: "Check the installation: version, home, store, adapters" },
  loadConfig: false,
  async run(ctx) {
    const homeError = homeProblem(ctx.home);
    const adapters = await probeAdapters();
    let configError: string | undefined;
    try {
      const config = ctx.config();
      // What the schema cannot see: a key variable the summarizer or titler names but is not set
      // (compaction and title generation would fail on it, exit 2).
      for (const service of ["summarizer", "titler"] as const) {
        const entry = config[service] as { apiKeyEnv?: string } | undefined;
        if (entry && typeof entry === "object")
          apiKeyFromEnv(service, entry.apiKeyEnv, process.env, homePaths(ctx.home).config);
      }
    } catch (error) {
      configError = error instanceof FreecodeError ? error.oneLine : (error as Error).message;
    }
    const store = storeOf(ctx);
    // Whether commands record their rollout events here, and why not (NODE_ENV=test, which `bun
    // test` sets, turns recording off: in a CI shell it is easily inherited). The environment is
    // read through a variable: the build replaces `process.env.NODE_ENV` itself with a constant.
    const env = process.env;
    const decided = rolloutDecision(env, configError ? {} : ctx.config());
    const recording = decided.on ? { on: true } : { on: false, why: decided.why };
    const storeError = configError === undefined && store ? await storeProblem(store, ctx.home) : undefined;
    const report = {
      version: VERSION,
      runtime: { bun: Bun.version, platform: platform(), arch: arch(), os: release() },
      home: ctx.home,
      homeCheck: { ok: homeError === undefined, error: homeError },
      config: { path: homePaths(ctx.home).config, ok: configError === undefined, error: configError },
      store,
      storeCheck: { ok: storeError === undefined, error: storeError },
      recording,
      adapters,
      ok:
        homeError === undefined &&
        configError === undefined &&
        storeError === undefined &&
        adapters.every((a) => a.ok),
    };
    if (ctx.json) ctx.out(report);
    else {
      const lines = [
        `freecode ${report.version} (bun ${report.runtime.bun}, ${report.runtime.platform}-${report.runtime.arch})`,
        `home:   ${report.home}${homeError ? `  ERROR ${homeError}` : ""}`,
        `config: ${configError ? `ERROR ${configError}` : "ok"}`,
        `store:  ${report.store ?? "?"}${storeError ? `  ERROR ${storeError}` : ""}`,
        `rollout recording: ${recording.on ? "on" : `off (${recording.why})`}`,
        "adapters:",
        ...adapters.map(
          (a) => `  ${a.ok ? "ok  " : "FAIL"} ${a.name.padEnd(7)} ${a.ok ? a.detail : a.error} (${a.ms} ms)`,
        ),
      ];
      ctx.out(`${lines.join("\n")}\n`);
    }
    return report.ok ? 0 : 1;
  },
});
