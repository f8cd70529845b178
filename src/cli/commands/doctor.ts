/** `freecode doctor`: what this machine has, where data goes, and whether each storage adapter starts. */
import { arch, platform, release } from "node:os";
import { FreecodeError } from "../../errors.ts";
import { homePaths } from "../../home.ts";
import { probeAdapters } from "../../storage/probe.ts";
import { VERSION } from "../../version.ts";
import { command } from "../_command.ts";

export default command({
  meta: { name: "doctor", description: "Check the installation: version, home, store, adapters" },
  loadConfig: false,
  async run(ctx) {
    const adapters = await probeAdapters();
    let configError: string | undefined;
    try {
      ctx.config();
    } catch (error) {
      configError = error instanceof FreecodeError ? error.oneLine : (error as Error).message;
    }
    const report = {
      version: VERSION,
      runtime: { bun: Bun.version, platform: platform(), arch: arch(), os: release() },
      home: ctx.home,
      config: { path: homePaths(ctx.home).config, ok: configError === undefined, error: configError },
      store: configError ? undefined : (ctx.storeName() ?? "files"),
      adapters,
      ok: configError === undefined && adapters.every((a) => a.ok),
    };
    if (ctx.json) ctx.out(report);
    else {
      const lines = [
        `freecode ${report.version} (bun ${report.runtime.bun}, ${report.runtime.platform}-${report.runtime.arch})`,
        `home:   ${report.home}`,
        `config: ${configError ? `ERROR ${configError}` : "ok"}`,
        `store:  ${report.store ?? "?"}`,
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
