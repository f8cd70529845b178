/**
 * The import state a watch keeps between passes (`StateCache`): taken back while the file is the one
 * this process saved, read again as soon as another process wrote it.
 */
import { describe, expect, test } from "bun:test";
import { loadImports, type StateCache, saveImports } from "../../src/import/state.ts";
import { writeFileAtomic } from "../../src/util/atomic.ts";
import { tempHome } from "../_helpers.ts";

const fileState = (size: number) => ({ agent: "claude" as const, size, mtimeMs: 1, sessions: ["s"] });

describe("import state cache", () => {
  test("kept while the file is ours; another writer's state is read", async () => {
    await using home = await tempHome();
    const cache: StateCache = {};
    const first = loadImports(home.path, cache);
    first.imports.files["/t/a.jsonl"] = fileState(10);
    saveImports(home.path, first.imports, false, first.text, cache);
    const again = loadImports(home.path, cache);
    expect(again.imports).toEqual(first.imports);
    expect(again.text).toBe(cache.text);
    // Another process writes the state (atomically: a new file).
    const theirs = { version: 1, files: { "/t/b.jsonl": fileState(20) } };
    writeFileAtomic(`${home.path}/state/imports.json`, JSON.stringify(theirs), { fsync: false });
    expect(loadImports(home.path, cache).imports.files).toEqual(theirs.files);
    // A pass that changed nothing keeps the file as it is, and the cache with it.
    const same = loadImports(home.path, cache);
    saveImports(home.path, same.imports, false, same.text, cache);
    expect(loadImports(home.path, cache).imports.files).toEqual(theirs.files);
  });
});
