import { describe, expect, test } from "bun:test";
import {
  formatSessionDirName,
  isSessionDirName,
  parseSessionDirName,
} from "../../src/storage/project-key.ts";

/** A small seeded PRNG so failures reproduce. */
function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

const ALPHABET = [
  "a",
  "B",
  "7",
  "-",
  "_",
  "__",
  "_h_",
  "_u_",
  "_x",
  ".",
  "..",
  " ",
  ":",
  "\\",
  "<",
  ">",
  '"',
  "|",
  "?",
  "*",
  "é",
  "田",
  "😀",
  "\t",
  "%",
  "x2e_",
];

function genPath(r: () => number): string {
  const kind = r();
  const seg = () => {
    let s = "";
    const n = 1 + Math.floor(r() * 6);
    for (let i = 0; i < n; i++) s += ALPHABET[Math.floor(r() * ALPHABET.length)]!;
    return s;
  };
  const segs = Array.from({ length: 1 + Math.floor(r() * 5) }, seg);
  if (kind < 0.6) return `/${segs.join("/")}`;
  if (kind < 0.85) return `${"CDz"[Math.floor(r() * 3)]}:\\${segs.join("\\")}`;
  return segs.join("/");
}

describe("project key", () => {
  test("seed 000 examples", () => {
    expect(formatSessionDirName("/home/ayan/Project/opencode")).toBe("home__ayan__Project__opencode");
    expect(formatSessionDirName("/home/ayan/Project/my-project")).toBe("home__ayan__Project__my_h_project");
    expect(parseSessionDirName("home__ayan__Project__my_h_project")).toBe("/home/ayan/Project/my-project");
  });

  test("the cases seed 000's scheme got wrong round-trip (regression: lossy project dirs)", () => {
    for (const p of [
      "/a/b__c",
      "/a/x_h_y",
      "C:\\Users\\john\\projects\\myapp",
      "/a/b:c",
      "/a/b?c",
      "/",
      "/..",
      "rel/x",
      "C:",
      "/a//b",
      "/a/",
    ]) {
      expect(parseSessionDirName(formatSessionDirName(p))).toBe(p);
    }
    // Paths that differ only by a character the old scheme stripped no longer collide.
    expect(formatSessionDirName("/a/b:c")).not.toBe(formatSessionDirName("/a/bc"));
    expect(formatSessionDirName("C:\\x")).not.toBe(formatSessionDirName("/C/x"));
  });

  test("property: parse(format(p)) == p, names are safe directory names, distinct paths stay distinct", () => {
    const r = rng(42);
    const seen = new Map<string, string>();
    for (let i = 0; i < 20_000; i++) {
      const p = genPath(r);
      const name = formatSessionDirName(p);
      expect(name).not.toMatch(/[/\\<>:"|?*\0]/);
      expect(name === "." || name === "..").toBe(false);
      expect(isSessionDirName(name)).toBe(true);
      if (Buffer.byteLength(name) < 150) expect(parseSessionDirName(name)).toBe(p);
      const other = seen.get(name);
      if (other !== undefined) expect(other).toBe(p);
      seen.set(name, p);
    }
  });

  test("long paths are hashed, stay unique and say they cannot be parsed", () => {
    const a = `/${"x".repeat(300)}/a`;
    const b = `/${"x".repeat(300)}/b`;
    expect(formatSessionDirName(a)).not.toBe(formatSessionDirName(b));
    expect(Buffer.byteLength(formatSessionDirName(a))).toBeLessThanOrEqual(200);
    expect(parseSessionDirName(formatSessionDirName(a))).toBeUndefined();
  });

  test("names that are not keys are rejected", () => {
    expect(parseSessionDirName("a_zz")).toBeUndefined();
    expect(parseSessionDirName("a_x12")).toBeUndefined();
  });
});
