/**
 * One project, one spelling: the corpus's IDAHO-VAULT sessions record their working directory as
 * both `C:\Users\…` and `c:\Users\…` (one session each way, and one that switches mid-file).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { normalizeProjectPath } from "../../src/import/project-path.ts";
import { CORPUS, tempHome } from "../_helpers.ts";
import { imported } from "./_store.ts";

const VAULT = join(CORPUS, "claude", "laf-us_idaho-vault", "c--Users-loganf-Documents-IDAHO-VAULT");

describe("imported project paths", () => {
  test("a Windows drive letter is upper case; everything else is kept as written", () => {
    expect(normalizeProjectPath("c:\\Users\\a\\Repo")).toBe("C:\\Users\\a\\Repo");
    expect(normalizeProjectPath("d:/work/app")).toBe("D:/work/app");
    expect(normalizeProjectPath("c:")).toBe("C:");
    expect(normalizeProjectPath("C:\\Users\\a")).toBe("C:\\Users\\a");
    expect(normalizeProjectPath("/home/c:/x")).toBe("/home/c:/x");
    expect(normalizeProjectPath("ab:/x")).toBe("ab:/x");
    expect(normalizeProjectPath("c:relative")).toBe("c:relative");
    expect(normalizeProjectPath("")).toBe("");
  });

  test("the corpus's sessions of one Windows project import under one project path", async () => {
    const first = readFileSync(join(VAULT, "5be6102c-c895-48ac-84b1-8f176ed80112.jsonl"), "utf8");
    expect(first).toContain('"cwd":"c:\\\\Users\\\\loganf');
    await using home = await tempHome();
    const { sessions } = await imported(home.path, "claude", VAULT);
    expect(sessions.length).toBeGreaterThanOrEqual(4);
    expect(new Set(sessions.map((s) => s.meta.projectPath))).toEqual(
      new Set(["C:\\Users\\loganf\\Documents\\IDAHO-VAULT"]),
    );
  });
});
