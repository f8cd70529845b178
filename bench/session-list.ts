/**
 * Listing: `freecode session list --json --limit 50` over 10,000 sessions, against `freecode
 * --version` (target ≤ 2×: listing adds less than one process start) and against the same listing
 * over 1,000 sessions (target ≤ 1.5×: listing must not scan every session).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import factory from "../src/storage/adapters/files.ts";
import { defineBench, exec } from "./_harness.ts";

const root = resolve(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "freecode-bench-list-"));
const bin = join(work, "freecode");
const home10k = join(work, "home-10k");
const home1k = join(work, "home-1k");

async function fill(home: string, count: number) {
  const store = factory({ home, fsync: "never" });
  const t0 = Date.now() - count * 1000;
  for (let i = 0; i < count; i++) {
    const at = t0 + i * 1000;
    await store.createSession(
      {
        id: `bench-${i}`,
        title: `session number ${i}`,
        projectPath: `/home/bench/project-${i % 20}`,
        status: i % 50 === 0 ? "archived" : "idle",
        createdAt: at,
        updatedAt: at,
        turnCount: 1,
        messageCount: 0,
      },
      [{ id: "m1", role: "user", parts: [{ type: "text", content: `prompt ${i}` }], timestamp: at }],
    );
  }
  await store.listSessions({ limit: 1 }); // build the index once, as the first real listing would
  await store.close();
}

const list = (home: string) => () =>
  exec([bin, "session", "list", "--json", "--limit", "50", "--home", home]);

export default defineBench({
  name: "session-list",
  description: "session list --json --limit 50 over 10k sessions vs --version, and 10k vs 1k",
  rounds: 15,
  async setup() {
    exec([process.execPath, join(root, "build.ts"), "--outfile", bin]);
    await fill(home10k, 10_000);
    await fill(home1k, 1_000);
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: "list --limit 50 (10k sessions) vs --version",
      subject: list(home10k),
      baseline: () => exec([bin, "--version"]),
      target: { max: 2 },
    },
    {
      label: "list (10k sessions) vs list (1k sessions)",
      subject: list(home10k),
      baseline: list(home1k),
      target: { max: 1.5 },
    },
  ],
});
