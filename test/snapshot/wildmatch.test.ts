/**
 * The matcher for rules from a repository above a project (`_wildmatch.ts`) against git itself:
 * each case is a one-line `.gitignore` in a directory of its own and a name in it, and
 * `git check-ignore` says whether git ignores the name, with `core.ignorecase` off and on.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { wildmatchSegment } from "../../src/snapshot/_wildmatch.ts";
import { tempDir } from "../_helpers.ts";
import { userGit } from "./_project.ts";

/** [rule, name]: rules with no slash, so each matches a name in its own directory. */
const CASES: [string, string][] = [
  ["[[:digit:]]*", "1abc"],
  ["[[:digit:]]*", "abc"],
  ["[[:alpha:]]", "a"],
  ["[[:alpha:]]", "1"],
  ["[[:upper:]]x", "Ax"],
  ["[[:upper:]]x", "ax"],
  ["[[:lower:]]x", "Ax"],
  ["[[:punct:]]", "_"],
  ["[[:xdigit:]]", "F"],
  ["[[:xdigit:]]", "g"],
  ["[[:alnum:]][[:graph:]]", "a~"],
  ["[[:foo:]]", "a"],
  ["[[:digit:][:upper:]]", "Q"],
  ["[a-z]", "A"],
  ["[A-Z]", "a"],
  ["[B-Za]", "A"],
  ["[A]", "a"],
  ["Foo", "foo"],
  ["*.LOG", "x.log"],
  ["?", "é"],
  ["??", "é"],
  ["caf?", "café"],
  ["[!a]", "b"],
  ["[^a]", "a"],
  ["[]]", "]"],
  ["[]a]", "a"],
  ["[a-]", "-"],
  ["[\\]]", "]"],
  ["a[b", "a[b"],
  ["[[]", "["],
  ["[[:]", ":"],
  ["\\*", "*"],
  ["\\*", "a"],
  ["a*b*c", "axxbyyc"],
  ["a*b*c", "acb"],
  ["*[[:digit:]]", "v2"],
];

/** The names git ignores among the cases, with `core.ignorecase` set to `fold`. */
async function gitIgnores(fold: boolean): Promise<Set<number>> {
  await using repo = await tempDir("freecode-wildmatch-");
  userGit(repo.path, ["init", "-q"]);
  const paths: string[] = [];
  for (const [i, [rule, name]] of CASES.entries()) {
    mkdirSync(join(repo.path, `c${i}`));
    writeFileSync(join(repo.path, `c${i}`, ".gitignore"), `${rule}\n`);
    paths.push(`c${i}/${name}`);
  }
  const proc = Bun.spawnSync(
    ["git", "-c", `core.ignorecase=${fold}`, "check-ignore", "--no-index", "--stdin", "-z"],
    { cwd: repo.path, stdin: Buffer.from(`${paths.join("\0")}\0`), stdout: "pipe", stderr: "pipe" },
  );
  expect(proc.exitCode === 0 || proc.exitCode === 1).toBe(true);
  const ignored = new Set(proc.stdout.toString().split("\0").filter(Boolean));
  return new Set(paths.flatMap((p, i) => (ignored.has(p) ? [i] : [])));
}

describe("wildmatchSegment matches a rule's segment as git does", () => {
  for (const fold of [false, true]) {
    test(`core.ignorecase ${fold}`, async () => {
      const git = await gitIgnores(fold);
      const ours = CASES.map(([rule, name], i) => `${rule} ${name}: ${wildmatchSegment(rule, name, fold)}`);
      const theirs = CASES.map(([rule, name], i) => `${rule} ${name}: ${git.has(i)}`);
      expect(ours).toEqual(theirs);
      // Not a table git and we both answer no to: some cases match.
      expect(git.size).toBeGreaterThan(10);
    });
  }
});
