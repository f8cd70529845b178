/** End to end with the compiled binary: the session store works from the executable alone. */
import { describe, expect, test } from "bun:test";
import { parseJson, runBinary, tempHome } from "../_helpers.ts";

describe("freecode session (compiled binary)", () => {
  test("create, append, list, show --turns, resume, compact", async () => {
    await using home = await tempHome();
    const run = (args: string[], stdin?: string) =>
      runBinary([...args, "--json"], { home: home.path, stdin });
    const line = (o: unknown) => `${JSON.stringify(o)}\n`;
    expect(
      parseJson<{ id: string }>(run(["session", "create", "--id", "b1", "--prompt", "first", "--model", "m"]))
        .id,
    ).toBe("b1");
    for (let i = 0; i < 3; i++) {
      const r = run(
        ["session", "append", "b1"],
        line({ role: "assistant", parts: [{ type: "text", content: `answer ${i}` }] }) +
          line({ role: "user", parts: [{ type: "text", content: `next ${i}` }] }),
      );
      expect(r.code).toBe(0);
    }
    expect(
      parseJson<{ items: { id: string; messageCount: number }[] }>(run(["session", "list"])).items,
    ).toMatchObject([{ id: "b1", messageCount: 7 }]);
    expect(parseJson<{ turns: unknown[] }>(run(["session", "show", "b1", "--turns"])).turns).toHaveLength(4);
    expect(parseJson<{ model: string; continued: boolean }>(run(["session", "resume", "b1"]))).toMatchObject({
      model: "m",
      continued: false,
    });
    expect(
      parseJson<{ compacted: boolean; messagesAfter: number }>(run(["session", "compact", "b1"])),
    ).toMatchObject({ compacted: true, messagesAfter: 3 });
    const bad = runBinary(["session", "append", "b1"], { home: home.path, stdin: "{oops\n" });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("<stdin>:1");
  }, 120_000);
});
