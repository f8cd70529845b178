/**
 * Startup: `dist/freecode --version` against a compiled hello-world built with the same flags.
 * Target: ratio ≤ 1.3. The hello-world writes with `process.stdout.write`, which builds Node's
 * stream machinery (~20 ms here); a second hello-world that writes with `Bun.write` does not, and
 * is reported beside it (no target) as the floor a compiled Bun program starts from. Also prints
 * the binary's size.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { defineBench, exec } from "./_harness.ts";

const root = resolve(import.meta.dir, "..");
const work = mkdtempSync(join(tmpdir(), "freecode-bench-startup-"));
const freecode = join(work, "freecode");
const hello = join(work, "hello");
const bare = join(work, "hello-bare");

export default defineBench({
  name: "startup",
  description: "process start: freecode --version vs a compiled hello-world (same build flags)",
  rounds: 30,
  setup() {
    writeFileSync(join(work, "hello.ts"), 'process.stdout.write("hello\\n");\n');
    exec([process.execPath, join(root, "build.ts"), "--outfile", freecode]);
    exec([process.execPath, join(root, "build.ts"), "--entry", join(work, "hello.ts"), "--outfile", hello]);
    writeFileSync(join(work, "hello-bare.ts"), 'await Bun.write(Bun.stdout, "hello\\n");\n');
    exec([
      process.execPath,
      join(root, "build.ts"),
      "--entry",
      join(work, "hello-bare.ts"),
      "--outfile",
      bare,
    ]);
  },
  teardown: () => rmSync(work, { recursive: true, force: true }),
  pairs: () => [
    {
      label: "freecode --version vs hello-world",
      subject: () => exec([freecode, "--version"]),
      baseline: () => exec([hello]),
      target: { max: 1.3 },
    },
    {
      label: "freecode --version vs a hello-world that writes with Bun.write (no Node stream)",
      subject: () => exec([freecode, "--version"]),
      baseline: () => exec([bare]),
    },
  ],
  facts: () => ({
    "binary size": `${(Bun.file(freecode).size / 1024 / 1024).toFixed(1)} MiB (hello-world ${(Bun.file(hello).size / 1024 / 1024).toFixed(1)} MiB)`,
  }),
});
