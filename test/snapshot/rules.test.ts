/**
 * Regressions: which rules decide what a snapshot holds and how it is written back. Content is byte
 * for byte whatever the project's or the user's attributes say; the user's global excludes are not
 * read; a project inside a repository honours that repository's ignore rules.
 */
import { describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { rebaseRule } from "../../src/snapshot/_ignores.ts";
import { createSnapshots } from "../../src/snapshot/snapshots.ts";
import { tempDir, tempHome } from "../_helpers.ts";
import { readTree, repoFingerprint, snapshotPlace, treePaths, userGit, writeFiles } from "./_project.ts";

describe("regression: restores are byte for byte, global excludes are not read", () => {
  test("`* text=auto` in .gitattributes and the user's global attributes and ignore change nothing", async () => {
    await using home = await tempHome();
    await using project = await tempDir("freecode-project-");
    await using xdg = await tempDir("freecode-xdg-");
    writeFiles(xdg.path, { "git/attributes": "* text eol=crlf\n", "git/ignore": "*.log\n" });
    const root = project.path;
    writeFiles(root, {
      ".gitattributes": "* text=auto\n",
      "crlf.bat": "a\r\nb\r\n",
      "lf.txt": "keep\n",
      "b.log": "1",
    });
    const saved = process.env.XDG_CONFIG_HOME;
    process.env.XDG_CONFIG_HOME = xdg.path;
    try {
      const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
      await snaps.capture();
      writeFiles(root, { "crlf.bat": "a\r\nb\r\nchanged\r\n", "lf.txt": "keep\nmore\n", "new.log": "n" });
      await snaps.capture();
      const { location, snapshots } = snaps.list();
      expect(treePaths(location, snapshots[0]!.snapshot)).toEqual([
        ".gitattributes",
        "b.log",
        "crlf.bat",
        "lf.txt",
      ]);
      const undone = await snaps.undo();
      expect(undone.files.map((f) => f.path).sort()).toEqual(["crlf.bat", "lf.txt", "new.log"]);
      expect(readFileSync(join(root, "crlf.bat"), "latin1")).toBe("a\r\nb\r\n");
      expect(readFileSync(join(root, "lf.txt"), "latin1")).toBe("keep\n");
    } finally {
      if (saved === undefined) delete process.env.XDG_CONFIG_HOME;
      else process.env.XDG_CONFIG_HOME = saved;
    }
  });
});

describe("regression: a project in a subdirectory of a repository", () => {
  test("honours the repository's .gitignore files above it and its .git/info/exclude", async () => {
    await using home = await tempHome();
    await using repo = await tempDir("freecode-repo-");
    userGit(repo.path, ["init", "-q"]);
    writeFiles(repo.path, {
      ".gitignore": "node_modules/\n.env\n/packages/app/dist/\npackages/*/tmp\n/other\n",
      "packages/.gitignore": "*.cache\n!keep.cache\n",
      ".git/info/exclude": "secret.txt\n",
    });
    const app = join(repo.path, "packages", "app");
    mkdirSync(app, { recursive: true });
    writeFiles(app, {
      "main.js": "src",
      ".env": "API_KEY=x",
      "secret.txt": "s",
      "node_modules/dep/index.js": "x",
      "dist/out.js": "o",
      "tmp/t": "t",
      "sub/tmp/t": "kept: the rule is anchored to packages/*/",
      other: "kept: /other is at the repository's root",
      "a.cache": "c",
      "keep.cache": "k",
    });
    const snaps = createSnapshots({ home: home.path, projectPath: app, sessionId: "s" });
    const c = await snaps.capture();
    expect(c.captured).toBe(true);
    const { location, snapshots } = snaps.list();
    expect(treePaths(location, snapshots[0]!.snapshot)).toEqual([
      "keep.cache",
      "main.js",
      "other",
      "sub/tmp/t",
    ]);
    // The rules apply to a restore too: undo leaves the ignored files alone.
    rmSync(join(app, "main.js"));
    await snaps.capture();
    expect((await snaps.undo()).files).toEqual([{ path: "main.js", change: "added" }]);
  });

  test("rebaseRule: rules of a directory above, rewritten for the project", () => {
    const below = ["packages", "app"];
    expect(rebaseRule("node_modules/", below)).toEqual(["node_modules/"]);
    expect(rebaseRule("!*.log", below)).toEqual(["!*.log"]);
    expect(rebaseRule("/packages/app/dist/", below)).toEqual(["/dist/"]);
    expect(rebaseRule("packages/*/tmp", below)).toEqual(["/tmp"]);
    expect(rebaseRule("pack[a-z]ges/ap?/x/y", below)).toEqual(["/x/y"]);
    expect(rebaseRule("**/build", below)).toEqual(["/**/build"]);
    expect(rebaseRule("packages/**", below)).toEqual(["/**"]);
    expect(rebaseRule("/other", below)).toEqual([]);
    expect(rebaseRule("packages/app", below)).toEqual([]); // the project itself: not expressible
    // A name at any depth applies inside the project as it is (whether it ignores the project
    // itself is judged over all the rules: `liesInIgnoredDir`).
    expect(rebaseRule("*", below)).toEqual(["*"]);
    expect(rebaseRule("*.log", below)).toEqual(["*.log"]);
    expect(rebaseRule("# comment", below)).toEqual([]);
    expect(rebaseRule("", below)).toEqual([]);
  });
});

/**
 * A project at `under` inside a fresh git repository that holds `repoFiles` (rules from above), the
 * project's own `files`, and its snapshots (session `s`, in a home of its own).
 */
async function projectInRepo(
  repoFiles: Record<string, string>,
  under: string,
  files: Record<string, string>,
) {
  const home = await tempHome();
  const repo = await tempDir("freecode-repo-");
  userGit(repo.path, ["init", "-q"]);
  writeFiles(repo.path, repoFiles);
  const app = join(repo.path, under);
  writeFiles(app, files);
  return {
    repo: repo.path,
    app,
    snaps: createSnapshots({ home: home.path, projectPath: app, sessionId: "s" }),
    async [Symbol.asyncDispose]() {
      await repo[Symbol.asyncDispose]();
      await home[Symbol.asyncDispose]();
    },
  };
}

test("regression: a project in a repository whose .gitignore is `*` (a home kept as dotfiles) is snapshotted whole, and undo brings back what a tool changed", async () => {
  await using p = await projectInRepo({ ".gitignore": "*\n!.bashrc\n", ".bashrc": "rc\n" }, "code/app", {
    "src/main.ts": "main\n",
    "README.md": "readme\n",
    "debug.log": "kept out? no: * is dropped\n",
  });
  const { app, snaps } = p;
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots[0]!.snapshot)).toEqual(["README.md", "debug.log", "src/main.ts"]);
  writeFiles(app, { "src/main.ts": "tool broke it\n" });
  rmSync(join(app, "README.md"));
  await snaps.capture();
  expect((await snaps.undo()).files.map((f) => f.path).sort()).toEqual(["README.md", "src/main.ts"]);
  expect(readFileSync(join(app, "README.md"), "utf8")).toBe("readme\n");
  expect(readFileSync(join(app, "src/main.ts"), "utf8")).toBe("main\n");
});

test("regression: rules from above that ignore everything but directories and .py files (`*`, `!*/`, `!*.py`) apply inside the project: undo never deletes the data file they ignore", async () => {
  await using p = await projectInRepo({ ".gitignore": "*\n!*/\n!*.py\n" }, "code/app", {
    "main.py": "print(1)\n",
  });
  const { app, snaps } = p;
  await snaps.capture();
  // The user's program writes its results (ignored by `*`), the tool edits main.py.
  writeFiles(app, { "results.csv": "a,b\n1,2\n", "main.py": "print(2)\n" });
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots.at(-1)!.snapshot)).toEqual(["main.py"]);
  expect((await snaps.undo()).files).toEqual([{ path: "main.py", change: "modified" }]);
  expect(readFileSync(join(app, "results.csv"), "utf8")).toBe("a,b\n1,2\n");
});

test("regression: `proj/**` with `!proj/keep.txt` above the project ignores what is in it, not the project: undo never touches the ignored data", async () => {
  await using p = await projectInRepo({ ".gitignore": "proj/**\n!proj/keep.txt\n" }, "proj", {
    "keep.txt": "v1\n",
    "data.csv": "v1\n",
  });
  const { app: proj, snaps } = p;
  await snaps.capture();
  writeFiles(proj, { "keep.txt": "v2\n", "data.csv": "v2\n", "new.csv": "new\n" });
  await snaps.capture();
  expect((await snaps.undo()).files).toEqual([{ path: "keep.txt", change: "modified" }]);
  expect(readTree(proj)).toEqual({ "keep.txt": "v1\n", "data.csv": "v2\n", "new.csv": "new\n" });
});

test("regression: a .gitignore above the project saved with a byte-order mark applies as git applies it (the rule was lost, or `*` taken for every file)", async () => {
  await using p = await projectInRepo(
    { ".gitignore": "node_modules/\n", "a/.gitignore": "\uFEFF*.log\n" },
    "a/app",
    { "main.py": "y\n" },
  );
  const { app, snaps } = p;
  await snaps.capture();
  writeFiles(app, { "server.log": "important output\n", "main.py": "z\n" });
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots.at(-1)!.snapshot)).toEqual(["main.py"]);
  expect((await snaps.undo()).files).toEqual([{ path: "main.py", change: "modified" }]);
  expect(readFileSync(join(app, "server.log"), "utf8")).toBe("important output\n");
});

test("regression: rules from above are matched as git matches them — POSIX classes, bytes, core.ignorecase — so undo never deletes what they ignore", async () => {
  await using p = await projectInRepo(
    {
      // Each ignores a file of packages/app/ only if its directory part is matched as git does.
      ".gitignore": "/packages/[[:alpha:]]*/*.env\n/packages/ap?/*.tmp\n/Packages/App/*.out\n",
    },
    "packages/app",
    { "main.py": "v1\n" },
  );
  const { app, repo, snaps } = p;
  userGit(repo, ["config", "core.ignorecase", "true"]);
  await snaps.capture();
  writeFiles(app, { "main.py": "v2\n", "prod.env": "KEY=1\n", "cache.tmp": "t\n", "run.out": "o\n" });
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots.at(-1)!.snapshot)).toEqual(["main.py"]);
  expect((await snaps.undo()).files).toEqual([{ path: "main.py", change: "modified" }]);
  expect(readTree(app)).toEqual({
    "main.py": "v1\n",
    "prod.env": "KEY=1\n",
    "cache.tmp": "t\n",
    "run.out": "o\n",
  });
  // And what git itself says of them, in the user's repository.
  expect(
    userGit(repo, ["check-ignore", "packages/app/prod.env", "packages/app/run.out"]).trim().split("\n"),
  ).toEqual(["packages/app/prod.env", "packages/app/run.out"]);
});

test("regression: rules from above whose first wildcard is a `**` glued to the text before it span directories, as in git (`/packages/app**/*.env` was made `/*.env`: undo deleted config/prod.env); an escaped slash is a slash — each checked against git check-ignore", async () => {
  const files = [
    "main.py",
    "prod.env",
    "config/prod.env",
    "a.env",
    "x/a.env",
    "x/y/a.env",
    "appx/b.env",
    "dist/bundle.js",
    "b\\/x",
    "b/x",
  ];
  const cases: [string, string][] = [
    ["/packages/app**/*.env", "packages/app"],
    ["/pack**/a.env", "packages/app"],
    ["/packages\\/app/a.env", "packages/app"],
    ["/packages/app/x**", "packages/app"],
    ["/packages/app/**/a.env", "packages/app"],
    ["/pa*ges/app**/a.env", "packages/app"],
    // The double star and its slash matching nothing put the rest on the same segment, no star
    // between (`web*dist` took the project `web-dist` itself for ignored, and every rule was dropped).
    ["/packages/web**/dist/", "packages/web-dist"],
    ["/packages/app**/foo/*.env", "packages/appxfoo"],
    // An escaped backslash before a slash is a backslash, then a slash.
    ["/packages/app/b\\\\/x", "packages/app"],
  ];
  for (const [rule, under] of cases) {
    await using p = await projectInRepo(
      { ".gitignore": `${rule}\n` },
      under,
      Object.fromEntries(files.map((f) => [f, "v1\n"])),
    );
    const { app, repo, snaps } = p;
    const ignored = new Set(
      // NUL-separated: a name with a backslash comes back quoted otherwise.
      Bun.spawnSync(["git", "check-ignore", "--stdin", "-z"], {
        cwd: repo,
        stdin: Buffer.from(files.map((f) => `${under}/${f}\0`).join("")),
      })
        .stdout.toString()
        .split("\0")
        .filter(Boolean)
        .map((f) => f.slice(`${under}/`.length)),
    );
    await snaps.capture();
    const { location, snapshots } = snaps.list();
    expect([rule, treePaths(location, snapshots[0]!.snapshot)]).toEqual([
      rule,
      files.filter((f) => !ignored.has(f)).sort(),
    ]);
    expect(app).toBeTruthy();
  }
});

test("rebaseRule: a byte is one `?`, POSIX classes, and case under core.ignorecase", () => {
  expect(rebaseRule("/[[:alpha:]]*/x", ["packages"])).toEqual(["/x"]);
  expect(rebaseRule("/caf?/x", ["café"])).toEqual([]);
  expect(rebaseRule("/caf??/x", ["café"])).toEqual(["/x"]);
  expect(rebaseRule("/Packages/x", ["packages"])).toEqual([]);
  expect(rebaseRule("/Packages/x", ["packages"], true)).toEqual(["/x"]);
});

test("regression: a .gitignore above the project that is a symbolic link is not read, as git does not read one", async () => {
  await using p = await projectInRepo({ "shared-ignore": "*.log\n" }, "app", {
    "main.py": "y\n",
    "notes.log": "kept by git\n",
  });
  symlinkSync("shared-ignore", join(p.repo, ".gitignore"));
  await p.snaps.capture();
  const { snaps } = p;
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots[0]!.snapshot)).toEqual(["main.py", "notes.log"]);
});

describe("regression: a restore never deletes an ignored file", () => {
  test("ignored by today's rules, while the target's .gitignore ignored itself (in no snapshot): kept", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { ".gitignore": ".gitignore\n.env\n", ".env": "SECRET=1\n", "app.js": "code\n" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture("target");
    // The tool drops the .env rule (.env gets captured), then puts it back: .env is ignored again.
    writeFiles(root, { ".gitignore": ".gitignore\n" });
    await snaps.capture("tracked");
    writeFiles(root, { ".gitignore": ".gitignore\n.env\n", "b.js": "b" });
    await snaps.capture();
    await snaps.undo();
    const undone = await snaps.undo();
    expect(undone.entryId).toBe("target");
    expect(undone.files).toEqual([]);
    expect(readFileSync(join(root, ".env"), "utf8")).toBe("SECRET=1\n");
  });

  test("names starting with `:` are paths, not pathspec magic (check-ignore failed, or missed the rule)", async () => {
    await using place = await snapshotPlace();
    const { home, root } = place;
    writeFiles(root, { ".gitignore": ":secret.env\n", ":secret.env": "TOKEN=1\n", "app.js": "code\n" });
    const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
    await snaps.capture();
    writeFiles(root, { ".gitignore": "node_modules\n", ":(attr:x)notes": "n", ":/top": "t" });
    await snaps.capture();
    const undone = await snaps.undo();
    expect(undone.files.map((f) => `${f.change} ${f.path}`).sort()).toEqual([
      "deleted :(attr:x)notes",
      "deleted :/top",
      "modified .gitignore",
    ]);
    expect(readTree(root)).toEqual({
      ".gitignore": ":secret.env\n",
      ":secret.env": "TOKEN=1\n",
      "app.js": "code\n",
    });
    await snaps.redo();
    expect(readTree(root)[":(attr:x)notes"]).toBe("n");
    expect(readTree(root)[":/top"]).toBe("t");
  });
});

test("regression: files the project's repository tracks although a rule ignores them (git add -f) are snapshotted, and undo brings them back", async () => {
  await using home = await tempHome();
  await using project = await tempDir("freecode-project-");
  const root = project.path;
  userGit(root, ["init", "-q"]);
  writeFiles(root, {
    ".gitignore": "dist/\n*.log\n",
    "dist/index.js": "module.exports = 1\n",
    "expected.log": "fixture\n",
    "src.js": "src\n",
    "other.log": "ignored and untracked: left out\n",
  });
  userGit(root, ["add", ".gitignore", "src.js"]);
  userGit(root, ["add", "-f", "dist/index.js", "expected.log"]);
  userGit(root, ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "init"]);
  const before = repoFingerprint(root);
  const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots[0]!.snapshot)).toEqual([
    ".gitignore",
    "dist/index.js",
    "expected.log",
    "src.js",
  ]);
  writeFiles(root, { "dist/index.js": "BROKEN\n", "src.js": "changed\n" });
  rmSync(join(root, "expected.log"));
  await snaps.capture();
  expect((await snaps.undo()).files.map((f) => f.path).sort()).toEqual([
    "dist/index.js",
    "expected.log",
    "src.js",
  ]);
  expect(readTree(root)).toMatchObject({
    "dist/index.js": "module.exports = 1\n",
    "expected.log": "fixture\n",
    "src.js": "src\n",
    "other.log": "ignored and untracked: left out\n",
  });
  // The user's repository: read, never written (its own `git status` then sees nothing changed).
  expect(repoFingerprint(root)).toEqual(before);
  expect(userGit(root, ["status", "--short"])).toBe("");
  // The tool builds a new file and force-adds it, as the repository does: undo removes it (it was
  // left in place as ignored, "0 files changed").
  writeFiles(root, { "dist/extra.js": "extra\n" });
  userGit(root, ["add", "-f", "dist/extra.js"]);
  await snaps.capture();
  expect((await snaps.undo()).files).toEqual([{ path: "dist/extra.js", change: "deleted" }]);
  expect(readTree(root)["dist/extra.js"]).toBeUndefined();
});

test("regression: undo keeps the permissions of a file it overwrites (a 0600 file came back 0644); the executable bit is the snapshot's", async () => {
  await using place = await snapshotPlace();
  const { home, root } = place;
  writeFiles(root, { "secret.conf": "token=abc\n", "run.sh": "echo 1\n", "plain.txt": "a\n" });
  chmodSync(join(root, "secret.conf"), 0o600);
  chmodSync(join(root, "run.sh"), 0o750);
  const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
  await snaps.capture();
  // The tool edits all three; the script loses its executable bit on the way.
  writeFiles(root, { "secret.conf": "token=changed\n", "run.sh": "echo 2\n", "plain.txt": "b\n" });
  chmodSync(join(root, "run.sh"), 0o640);
  await snaps.capture();
  await snaps.undo();
  const mode = (f: string) => (statSync(join(root, f)).mode & 0o777).toString(8);
  expect([mode("secret.conf"), mode("run.sh"), readFileSync(join(root, "secret.conf"), "utf8")]).toEqual([
    "600",
    "750",
    "token=abc\n",
  ]);
});

test("regression: a file whose name is not UTF-8 is left out of snapshots (listed), never removed or written back by a wrong name", async () => {
  await using place = await snapshotPlace();
  const { home, root } = place;
  const latin1 = (name: string) => Buffer.from(join(root, name), "latin1");
  writeFiles(root, { "keep.txt": "keep\n" });
  writeFileSync(latin1("caf\xe9.txt"), "latin1\n");
  const snaps = createSnapshots({ home: home.path, projectPath: root, sessionId: "s" });
  await snaps.capture();
  const { location, snapshots } = snaps.list();
  expect(treePaths(location, snapshots[0]!.snapshot)).toEqual(["keep.txt"]);
  expect(snapshots[0]!.skippedFiles).toEqual(["caf\\xe9.txt"]);
  // The tool creates another such file and deletes the first: undo touches neither, and says so.
  writeFileSync(latin1("new\xff.txt"), "new\n");
  rmSync(latin1("caf\xe9.txt"));
  writeFiles(root, { "keep.txt": "changed\n" });
  await snaps.capture();
  const undone = await snaps.undo();
  expect(undone.files).toEqual([{ path: "keep.txt", change: "modified" }]);
  expect(readFileSync(join(root, "keep.txt"), "utf8")).toBe("keep\n");
  expect(readFileSync(latin1("new\xff.txt"), "utf8")).toBe("new\n");
  // Nothing else to do: the work tree is the snapshot undo restored.
  expect(await snaps.capture()).toMatchObject({ captured: true, isNew: false });
});
