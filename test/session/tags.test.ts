/**
 * Session tags: `tagSession` on the files and sqlite stores (order kept, duplicates dropped, checks
 * on what is added, nothing written when nothing changes), and `freecode session tag` /
 * `session create --tag` from the command line.
 */
import { describe, expect, test } from "bun:test";
import { createSession, getSession, toStoredMessages } from "../../src/session/lifecycle.ts";
import {
  applyTagChange,
  MAX_TAG_CHARS,
  MAX_TAGS,
  normalizeTags,
  sessionTags,
  splitTagList,
  tagSession,
} from "../../src/session/tags.ts";
import filesFactory from "../../src/storage/adapters/files.ts";
import sqliteFactory from "../../src/storage/adapters/sqlite.ts";
import type { StorageAdapter } from "../../src/storage/contract.ts";
import { openStore } from "../../src/storage/select.ts";
import { parseJson, runCli, tempHome } from "../_helpers.ts";

const first = () => toStoredMessages([{ role: "user", parts: [{ type: "text", content: "hello" }] }]);

describe("tag checks", () => {
  test("trimmed, deduplicated in order; empty, too long, control characters and commas refused", () => {
    expect(normalizeTags([" b", "a ", "b", "a"])).toEqual(["b", "a"]);
    expect(normalizeTags(["x".repeat(MAX_TAG_CHARS)])).toHaveLength(1);
    const refused = (tags: string[], message: RegExp) => expect(() => normalizeTags(tags)).toThrow(message);
    refused(["ok", "  "], /must not be empty/);
    refused(["x".repeat(MAX_TAG_CHARS + 1)], /at most 128 characters/);
    refused(["a\nb"], /control character/);
    refused(["a\u001b[31mb"], /control character/);
    refused(["a\u0085b"], /control character/);
    refused(["a\u2028b"], /control character/);
    refused(["a,b"], /comma/);
    try {
      normalizeTags(["ok", ""]);
    } catch (error) {
      expect((error as { code: string }).code).toBe("bad_input");
      expect((error as { source: { field: string } }).source.field).toBe("tags[1]");
    }
  });

  test("applyTagChange: removed first-come order kept, new appended, add and remove of one tag refused", () => {
    expect(applyTagChange(["a", "b", "c"], { add: ["d", "a"], remove: ["b"] })).toEqual(["a", "c", "d"]);
    expect(applyTagChange(["a", "a"], {})).toEqual(["a"]);
    expect(applyTagChange(["a"], { remove: ["not-there"] })).toEqual(["a"]);
    // A tag stored before the checks (e.g. by an import) can still be removed.
    expect(applyTagChange(["bad\ttag", "ok"], { remove: ["bad\ttag"] })).toEqual(["ok"]);
    expect(() => applyTagChange([], { add: ["x"], remove: [" x "] })).toThrow(/both added and removed/);
    expect(() => applyTagChange([], { remove: [""] })).toThrow(/must not be empty/);
    const full = Array.from({ length: MAX_TAGS }, (_, i) => `t${i}`);
    expect(() => applyTagChange(full, { add: ["one-more"] })).toThrow(/at most 256 tags/);
    expect(applyTagChange(full, { add: ["t0"] })).toHaveLength(MAX_TAGS);
  });

  test("splitTagList: commas and repeated flags; empty items kept so they are refused", () => {
    expect(splitTagList(undefined)).toEqual([]);
    expect(splitTagList(" a, b ")).toEqual(["a", "b"]);
    expect(splitTagList(["a,b", "c"])).toEqual(["a", "b", "c"]);
    expect(splitTagList("a,,b")).toEqual(["a", "", "b"]);
  });
});

for (const [name, make] of [
  ["files", (home: string) => filesFactory({ home, fsync: "never" })],
  ["sqlite", (home: string) => sqliteFactory({ home, fsync: "never" })],
] as const) {
  describe(`tagSession (${name})`, () => {
    const withStore = async (fn: (s: StorageAdapter, reopen: () => StorageAdapter) => Promise<void>) => {
      await using home = await tempHome();
      const opened: StorageAdapter[] = [];
      const open = () => {
        const s = make(home.path);
        opened.push(s);
        return s;
      };
      try {
        await fn(open(), open);
      } finally {
        for (const s of opened) await s.close();
      }
    };

    test("adds, removes, keeps order and persists; no tags left means no tags field", () =>
      withStore(async (store, reopen) => {
        await createSession(store, { projectPath: "/p", id: "s1", tags: ["seed"] }, first());
        expect((await tagSession(store, "s1", { add: ["bug", " ui ", "bug"] })).tags).toEqual([
          "seed",
          "bug",
          "ui",
        ]);
        expect((await tagSession(store, "s1", { add: ["perf"], remove: ["seed"] })).tags).toEqual([
          "bug",
          "ui",
          "perf",
        ]);
        // Another handle on the same home reads what was written.
        const again = reopen();
        expect(await sessionTags(again, "s1")).toEqual(["bug", "ui", "perf"]);
        const cleared = await tagSession(store, "s1", { remove: ["bug", "ui", "perf"] });
        expect(cleared.tags).toBeUndefined();
        expect("tags" in (await getSession(store, "s1"))).toBe(false);
        expect(await sessionTags(store, "s1")).toEqual([]);
      }));

    test("a bad tag changes nothing; an unknown session is not_found", () =>
      withStore(async (store) => {
        await createSession(store, { projectPath: "/p", id: "s2", tags: ["keep"] }, first());
        const before = await getSession(store, "s2");
        await expect(tagSession(store, "s2", { add: ["fine", "a\u0000b"] })).rejects.toThrow(
          /control character \(field add\[1\]\)|control character/,
        );
        expect(await getSession(store, "s2")).toEqual(before);
        await expect(tagSession(store, "missing", { add: ["x"] })).rejects.toMatchObject({
          code: "not_found",
        });
      }));

    test("tags are exact: case and inner spaces matter", () =>
      withStore(async (store) => {
        await createSession(store, { projectPath: "/p", id: "s3" }, first());
        const meta = await tagSession(store, "s3", { add: ["Bug", "bug", "two words"] });
        expect(meta.tags).toEqual(["Bug", "bug", "two words"]);
        expect((await tagSession(store, "s3", { remove: ["BUG"] })).tags).toEqual([
          "Bug",
          "bug",
          "two words",
        ]);
      }));
  });
}

// Needs `tag: leaf(() => import("./session/tag.ts"))` in src/cli/commands/session.ts.
describe("freecode session tag", () => {
  test("create --tag, then --add/--remove, --json, no flags prints, errors exit 2 and 3", async () => {
    await using home = await tempHome();
    const cli = (...args: string[]) => runCli(args, { home: home.path });
    const created = parseJson<{ tags: string[] }>(
      cli("session", "create", "--prompt", "hi", "--id", "t1", "--tag", "a, b,a", "--tag", "c", "--json"),
    );
    // Regression: a repeated --tag kept only the last.
    expect(created.tags).toEqual(["a", "b", "c"]);

    const added = cli("session", "tag", "t1", "--add", "c,d", "--remove", "a");
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toBe("b\nc\nd\n");
    // A repeated flag adds each.
    expect(parseJson(cli("session", "tag", "t1", "--add", "e", "--add", "f", "--json"))).toEqual({
      id: "t1",
      tags: ["b", "c", "d", "e", "f"],
    });
    expect(cli("session", "tag", "t1").stdout).toBe("b\nc\nd\ne\nf\n");
    expect(parseJson<{ meta: { tags: string[] } }>(cli("session", "show", "t1", "--json")).meta.tags).toEqual(
      ["b", "c", "d", "e", "f"],
    );

    const bad = cli("session", "tag", "t1", "--add", "x,,y");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("a tag must not be empty (field add[1])");
    expect(bad.stdout).toBe("");
    const missing = cli("session", "tag", "nope", "--add", "x");
    expect(missing.code).toBe(3);

    const emptied = cli("session", "tag", "t1", "--remove", "b,c,d,e,f", "--json");
    expect(parseJson(emptied)).toEqual({ id: "t1", tags: [] });
    const none = cli("session", "tag", "t1");
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain("has no tags");

    const badCreate = cli("session", "create", "--prompt", "hi", "--tag", "ok,bad\u0007tag");
    expect(badCreate.code).toBe(2);
    expect(badCreate.stderr).toContain("control character");
  });
});

describe("regression: tags stored before the rules (an import) could not be removed", () => {
  test("one with spaces around it, and one holding a comma", async () => {
    await using home = await tempHome();
    const cli = (...args: string[]) => runCli(args, { home: home.path });
    expect(cli("session", "create", "--prompt", "hi", "--id", "old").code).toBe(0);
    const { adapter } = await openStore("files", { home: home.path });
    await adapter.updateMeta("old", (m) => ({ ...m, tags: [" spaced ", "x,y", "x", "keep"] }));
    await adapter.close();
    expect(parseJson(cli("session", "tag", "old", "--remove", " spaced ", "--json"))).toEqual({
      id: "old",
      tags: ["x,y", "x", "keep"],
    });
    // A value naming a whole stored tag is that tag, not a list (x stays).
    expect(parseJson(cli("session", "tag", "old", "--remove", "x,y", "--json"))).toEqual({
      id: "old",
      tags: ["x", "keep"],
    });
  });
});

describe("flagValues", () => {
  test("every --name value and --name=value, up to --", async () => {
    const { flagValues } = await import("../../src/cli/_command.ts");
    expect(
      flagValues(["id", "--add", "a,b", "--json", "--add=c", "--remove", "d", "--", "--add", "e"], "add"),
    ).toEqual(["a,b", "c"]);
    expect(flagValues(["id", "--address", "x", "--add="], "add")).toEqual([""]);
  });
});
