/** Cutting text where a character ends, and counting characters as a person does. */
import { expect, test } from "bun:test";
import { createSession, forkSession, userTitle } from "../../src/session/lifecycle.ts";
import { checkTag } from "../../src/session/tag-rules.ts";
import memoryFactory from "../../src/storage/adapters/memory.ts";
import { charCount, clusterStart, cutText, headOf, headOfChars } from "../../src/util/cut-text.ts";
import { clip } from "../../src/util/one-line.ts";

const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

test("a cut never splits a surrogate pair, a letter from its accents or a ZWJ emoji sequence", () => {
  const emoji = `${"x".repeat(48)}😀😀😀`;
  expect(cutText(emoji, 50)).toBe(`${"x".repeat(48)}…`);
  const accents = "e\u0301".repeat(60);
  expect(cutText(accents, 50)).toBe(`${"e\u0301".repeat(24)}…`);
  const family = "ab👨‍👩‍👧‍👦cd";
  for (let at = 2; at < 2 + "👨‍👩‍👧‍👦".length; at++) expect(clusterStart(family, at)).toBe(2);
  expect(clusterStart(family, 13)).toBe(13);
  // Every cut of a mixed text, at every length: no lone surrogate, never longer than asked.
  const mixed = "a😀é\u0301👨‍👩‍👧‍👦b🇫🇷c";
  for (let n = 1; n <= mixed.length + 1; n++) {
    const cut = cutText(mixed, n);
    expect([n, lone.test(cut), cut.length <= n]).toEqual([n, false, true]);
    expect(lone.test(clip(mixed, n))).toBe(false);
    expect(lone.test(headOf(mixed, n))).toBe(false);
  }
  // A cluster longer than the look-back (hundreds of combining marks) is cut between code points.
  const zalgo = `a${"\u0301".repeat(200)}b`;
  expect(cutText(zalgo, 100).length).toBe(100);
  expect(cutText("short", 10)).toBe("short");
});

test("regression: titles and tags count characters, not UTF-16 units (251 emoji were refused as over 500)", () => {
  expect(charCount("😀😀x")).toBe(3);
  expect(userTitle("😀".repeat(251))).toBe("😀".repeat(251));
  expect(() => userTitle("😀".repeat(501))).toThrow("title must be at most 500 characters (got 501)");
  expect(checkTag("😀".repeat(70))).toBe("😀".repeat(70));
  expect(() => checkTag("😀".repeat(129))).toThrow("a tag must be at most 128 characters (got 129)");
});

test("regression: a title taken from the first prompt, or a fork's, keeps whole characters (half an emoji was stored)", async () => {
  const store = memoryFactory({ home: "/nonexistent" });
  const prompt = `${"x".repeat(48)}😀😀😀`;
  const meta = await createSession(store, { projectPath: "/p", id: "s1" }, [
    { id: "m1", role: "user", parts: [{ type: "text", content: prompt }], timestamp: 1 },
  ]);
  expect(meta.title).toBe(`${"x".repeat(48)}…`);
  // A fork's default title: the parent's, cut where a character ends, and " (fork)".
  const long = await createSession(store, { projectPath: "/p", id: "s2", title: `${"y".repeat(492)}😀😀` }, [
    { id: "m2", role: "user", parts: [{ type: "text", content: "p" }], timestamp: 1 },
  ]);
  expect(long.title.length).toBe(496);
  // Cut to 493 characters (the limit counts characters): one emoji of the two fits.
  const fork = await forkSession(store, "s2");
  expect(fork.title).toBe(`${"y".repeat(492)}😀 (fork)`);
  // Regression: cut by UTF-16 units, 300 emoji (307 characters with " (fork)") lost 54 of them.
  const emoji = await createSession(store, { projectPath: "/p", id: "s3", title: "😀".repeat(300) }, [
    { id: "m3", role: "user", parts: [{ type: "text", content: "p" }], timestamp: 1 },
  ]);
  expect((await forkSession(store, emoji.id)).title).toBe(`${"😀".repeat(300)} (fork)`);
  const full = await createSession(store, { projectPath: "/p", id: "s4", title: "😀".repeat(500) }, [
    { id: "m4", role: "user", parts: [{ type: "text", content: "p" }], timestamp: 1 },
  ]);
  expect((await forkSession(store, full.id)).title).toBe(`${"😀".repeat(493)} (fork)`);
  await store.close();
});

test("headOfChars counts characters, not UTF-16 units, and never splits a cluster", () => {
  expect(headOfChars("😀😀😀", 2)).toBe("😀😀");
  expect(headOfChars("abc", 5)).toBe("abc");
  expect(headOfChars("ab😀", 3)).toBe("ab😀");
  // An accent is a character of its own, but not cut from its letter.
  expect(headOfChars("ae\u0301z", 2)).toBe("a");
});
