/** The InterruptHandler with real SIGINTs sent to a child process. */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { InterruptHandler, markInterrupted } from "../../src/session/interrupt.ts";
import { createSession } from "../../src/session/lifecycle.ts";
import factory from "../../src/storage/adapters/files.ts";
import { BUN, tempHome } from "../_helpers.ts";

/** Wait until the child's stdout contains `text` `times` times. */
async function until(out: { text: string }, text: string, times = 1, ms = 10_000) {
  const end = Date.now() + ms;
  while (out.text.split(text).length - 1 < times) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${text}; got: ${out.text}`);
    await Bun.sleep(10);
  }
}

describe("InterruptHandler (real signals)", () => {
  test("first SIGINT marks the in-flight message and the session interrupted; two within 1 s exit 1", async () => {
    await using home = await tempHome();
    const child = Bun.spawn([BUN, join(import.meta.dir, "_interrupt-child.ts"), home.path], {
      stdout: "pipe",
      stderr: "pipe",
    });
    const out = { text: "" };
    void (async () => {
      for await (const chunk of child.stdout) out.text += new TextDecoder().decode(chunk);
    })();
    await until(out, "READY");
    await Bun.sleep(100);
    child.kill("SIGINT");
    await until(out, "INTERRUPTED");
    expect(child.exitCode).toBeNull(); // one press does not exit

    const store = factory({ home: home.path, fsync: "never" });
    const meta = await store.getMeta("live");
    expect(meta?.status).toBe("interrupted");
    const { messages } = await store.readMessages("live");
    expect(messages.map((m) => m.id)).toEqual(["u1", "a1"]);
    expect(messages[1]?.interrupted).toBe(true);
    expect(messages[1]?.parts[0]?.content).toStartWith("la la");
    await store.close();

    await Bun.sleep(1_200); // the next press is a "first" press again…
    child.kill("SIGINT");
    await Bun.sleep(150);
    expect(child.exitCode).toBeNull();
    child.kill("SIGINT"); // …and this one, within 1 s of it, exits
    expect(await child.exited).toBe(1);
  }, 30_000);

  test("the mark lands on the tracked message, not on the last one in the file", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    const at = Date.now();
    await createSession(store, { projectPath: "/p", id: "s" }, [
      { id: "u1", role: "user", parts: [{ type: "text", content: "go" }], timestamp: at },
      { id: "a1", role: "assistant", parts: [{ type: "text", content: "streaming…" }], timestamp: at },
      { id: "t1", role: "user", parts: [{ type: "text", content: "tool output" }], timestamp: at },
    ]);
    let exited = -1;
    const h = new InterruptHandler(store, { exit: (c) => (exited = c), now: () => 0 });
    h.track({ sessionId: "s", messageId: "a1" });
    await h.press();
    const { messages } = await store.readMessages("s");
    expect(messages.map((m) => Boolean(m.interrupted))).toEqual([false, true, false]);
    await h.press();
    expect(exited).toBe(1);
    await store.close();
  });
});

describe("marking a message that lands while the mark is made", () => {
  test("the loop's own append between the read and the mark: one message, marked, not a cut copy beside it", async () => {
    await using home = await tempHome();
    const store = factory({ home: home.path, fsync: "never" });
    await createSession(store, { projectPath: "/p", id: "s" }, [
      { id: "u1", role: "user", parts: [{ type: "text", content: "explain" }], timestamp: 1 },
    ]);
    const finished = {
      id: "a1",
      role: "assistant" as const,
      parts: [{ type: "text" as const, content: "the whole answer" }],
      timestamp: 2,
    };
    // The loop appends its finished message right after the mark read the log (a real store).
    let raced = false;
    const racing = {
      ...store,
      async readMessages(id: string) {
        const read = await store.readMessages(id);
        if (!raced) {
          raced = true;
          await store.appendMessages(id, [finished]);
        }
        return read;
      },
    };
    await markInterrupted(racing, "s", "a1", { ...finished, parts: [{ type: "text", content: "the who" }] });
    const { messages } = await store.readMessages("s");
    expect(messages.map((m) => [m.id, m.parts[0]!.content, m.interrupted ?? false])).toEqual([
      ["u1", "explain", false],
      ["a1", "the whole answer", true],
    ]);
    expect((await store.getMeta("s"))?.status).toBe("interrupted");
    await store.close();
  });
});

test("a partial copy with usage adds its tokens, once, and is held to the one-usage-per-response rule", async () => {
  await using home = await tempHome();
  const store = factory({ home: home.path, fsync: "never" });
  await createSession(store, { projectPath: "/p", id: "s" }, [
    { id: "u1", role: "user", parts: [{ type: "text", content: "go" }], timestamp: 1 },
    {
      id: "a0",
      role: "assistant",
      parts: [],
      timestamp: 2,
      responseId: "r1",
      usage: { inputTokens: 10, outputTokens: 1 },
    },
  ]);
  const partial = {
    id: "a1",
    role: "assistant" as const,
    parts: [{ type: "text" as const, content: "par" }],
    timestamp: 3,
  };
  await expect(
    markInterrupted(store, "s", "a1", {
      ...partial,
      responseId: "r1",
      usage: { inputTokens: 5, outputTokens: 2 },
    }),
  ).rejects.toMatchObject({ code: "bad_input" });
  expect((await store.readMessages("s")).messages.map((m) => m.id)).toEqual(["u1", "a0"]);
  await markInterrupted(store, "s", "a1", {
    ...partial,
    responseId: "r2",
    usage: { inputTokens: 5, outputTokens: 2 },
  });
  const meta = (await store.getMeta("s"))!;
  expect(meta.tokens).toMatchObject({ input: 15, output: 3 });
  expect(meta.messageCount).toBe(3);
  expect(meta.usageResponseId).toBe("r2");
  await store.close();
});
